"""Sizes of the splits a config asks for, checked before anything runs (issue 23 item 10).

A ``test_fraction`` of 1e-4 (or 0.9999), a ``validation_fraction`` likewise, CV ``folds`` above the rows or a
KRR ``test_fraction`` that rounds to no test point used to reach scikit-learn (a 50-line traceback, nothing
recorded) or record an empty test set as "diverged". The arithmetic here mirrors the splitters that run later
(scikit-learn's ``train_test_split`` takes ``ceil(fraction * n)`` test rows; the KRR split of the approximation
protocol rounds), so the config layer can refuse such a split naming the key and the sizes, and the runner can
say the same in one line for a dataset whose size is only known once loaded (a generator's ``draws``).

:func:`train_rows` reads the rows of a dataset's train split from the data registry (or a built-in's signature)
without loading it; None when the registry cannot tell.
"""
from __future__ import annotations

import math


def holdout_parts(n: int, fraction: float) -> tuple[int, int]:
    """(training rows, test rows) of ``train_test_split(test_size=fraction)`` on n rows."""
    n_test = math.ceil(fraction * n)
    return n - n_test, n_test


def rounded_parts(n: int, fraction: float) -> tuple[int, int]:
    """(training rows, test rows) of the approximation protocol's KRR split (``round(fraction * n)`` test rows)."""
    n_test = int(round(fraction * n))
    return n - n_test, n_test


def split_problem(n: int, fraction: float, need: int, *, what: str = "test", rounding=holdout_parts) -> str | None:
    """Why cutting ``fraction`` of n rows into a ``what`` part is hopeless (None when it is fine). ``need``: the
    rows each part must hold (the classes, for a stratified split; 1 for regression)."""
    train, held = rounding(n, fraction)
    if held >= need and train >= need:
        return None
    each = f"at least {need} (one per class)" if need > 1 else "at least 1"
    return (f"{fraction:g} of {n:,} rows leaves {train:,} training and {held:,} {what} rows; each part needs "
            f"{each}")


def folds_problem(rows: int, folds: int) -> str | None:
    if folds <= rows:
        return None
    return f"{folds:,} folds of {rows:,} training rows: at most {rows:,} folds (each needs a row)"


def train_rows(name: str) -> tuple[int, int | None] | None:
    """(rows of the train split, number of classes or None) of a dataset, without loading it; None if unknown.
    Built-in generators: their default ``n``; scikit-learn's shipped sets are small and loaded."""
    try:
        from .data import builtin, registry

        if name in builtin.BUILTINS:
            import inspect

            fn = builtin.BUILTINS[name][0]
            default = inspect.signature(fn).parameters.get("n")
            if default is not None and isinstance(default.default, int):
                return default.default, None
            ds = fn()
            y = ds.y
            import numpy as np

            classes = None if ds.task == "regression" else int(len(np.unique(y)))
            return int(len(y)), classes
        if registry.resolve(name) is None:
            return None
        spec = registry.get(name)
        split = spec.splits.get("train")
        if split is None or split.n is None:
            return None
        return int(split.n), spec.classes
    except Exception:  # noqa: BLE001 - the registry cannot tell: the run checks once the data is loaded
        return None


def classes_needed(task: str, classes: int | None) -> int:
    """The rows each part of a stratified split needs: one per class (binary: 2), 1 for regression."""
    if task == "regression":
        return 1
    if task == "binary":
        return 2
    return max(int(classes or 2), 2)
