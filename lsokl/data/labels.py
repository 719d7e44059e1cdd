"""Label normalisation per task: binary {-1,+1}, multi-class 0..m-1, regression float.

The mapping is decided on the train split and returned as JSON-able ``info`` so the test split of the same dataset
is mapped identically (a test split may miss a class, but must not add one).
"""
from __future__ import annotations

import numpy as np

from ..errors import DataError


def _as_number_list(values) -> list:
    out = []
    for v in values:
        if isinstance(v, (np.floating, float)) and float(v).is_integer():
            out.append(int(v))
        elif isinstance(v, (np.integer, int, np.floating, float)):
            out.append(float(v) if isinstance(v, (np.floating, float)) else int(v))
        else:
            out.append(str(v))
    return out


def _sorted_unique(y: np.ndarray) -> list:
    try:
        numeric = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        return sorted({str(v) for v in y})
    return _as_number_list(np.unique(numeric))


def _codes(y: np.ndarray, classes: list, where: str) -> np.ndarray:
    if classes and all(isinstance(c, (int, float)) for c in classes):
        values = np.asarray(y, dtype=np.float64)
        table = np.asarray(classes, dtype=np.float64)
    else:
        values = np.asarray([str(v) for v in y], dtype=object)
        table = np.asarray([str(c) for c in classes], dtype=object)
    order = np.argsort(table)
    pos = np.searchsorted(table[order], values)
    pos = np.clip(pos, 0, len(table) - 1)
    found = table[order][pos] == values
    if not np.all(found):
        bad = values[np.flatnonzero(~found)[0]]
        raise DataError(f"{where}: label {bad!r} is not one of the train split's classes {classes}")
    return order[pos].astype(np.int64)


def normalise(y_raw: np.ndarray, task: str, opts: dict, where: str, info: dict | None = None,
              n_classes: int | None = None) -> tuple[np.ndarray, dict]:
    """Labels for ``task`` and the mapping used. Pass the train split's ``info`` when normalising a test split."""
    y_raw = np.asarray(y_raw).reshape(-1)
    if task == "regression":
        try:
            y = np.asarray(y_raw, dtype=np.float64)
        except (TypeError, ValueError):
            raise DataError(f"{where}: regression targets must be numbers") from None
        if not np.all(np.isfinite(y)):
            row = int(np.flatnonzero(~np.isfinite(y))[0])
            raise DataError(f"{where}: non-finite target at row {row + 1}")
        return np.ascontiguousarray(y), {}

    if task == "binary" and (opts.get("positive") or opts.get("negative")):
        text = np.asarray([str(v).strip() for v in y_raw], dtype=object)
        if opts.get("positive"):
            y = np.where(np.isin(text, list(opts["positive"])), 1.0, -1.0)
            rule = {"positive": list(opts["positive"])}
        else:
            y = np.where(np.isin(text, list(opts["negative"])), -1.0, 1.0)
            rule = {"negative": list(opts["negative"])}
        if info is None and np.unique(y).size < 2:
            raise DataError(f"{where}: every label maps to {y[0]:+.0f} with rule {rule}; check the registry")
        return y, rule

    classes = info["classes"] if info else _sorted_unique(y_raw)
    if task == "binary":
        if len(classes) != 2:
            raise DataError(f"{where}: a binary dataset needs exactly 2 labels, found {len(classes)}: {classes[:10]}")
        codes = _codes(y_raw, classes, where)
        # the larger label (+1, 1, '>50K' ...) is the positive class, so {-1,+1} and {0,1} both map as expected
        return np.where(codes == 1, 1.0, -1.0), {"classes": classes}
    if n_classes is not None and len(classes) > n_classes:
        raise DataError(f"{where}: found {len(classes)} classes but the registry declares {n_classes}: {classes[:30]}")
    return _codes(y_raw, classes, where), {"classes": classes}


def select_labels(ds, labels, where: str | None = None):
    """The rows of ``ds`` whose label is one of ``labels`` (as the file writes them, e.g. ``[8, 6]`` for
    MNIST's 8s and 6s), relabelled for the task the filter makes: two labels are a binary task with the
    first one +1 and the second -1 (the papers' "8 vs 6"); more are a multi-class task with classes 0..k-1
    in the order given. A label the dataset does not have is an error naming ``where`` (the config key,
    ``datasets.<name>.labels``) and the labels it has. The authors' permutation matrix indexes the whole
    file, so it is dropped."""
    from dataclasses import replace

    where = where or f"datasets.{ds.name}.labels"
    y = np.asarray(ds.y)
    if ds.task == "regression":
        raise DataError(f"{where}: {ds.name} is a regression dataset; a label filter needs classes")
    # the raw labels in the order of the codes (binary: [-1 label, +1 label]; multi-class: code i)
    raw = list((ds.meta or {}).get("labels", {}).get("classes") or [])
    if ds.task == "binary":
        codes = (y > 0).astype(np.int64)
        if len(raw) != 2:
            raw = [-1, 1]
    else:
        codes = y.astype(np.int64)
        if not raw:
            raw = list(range(int(codes.max()) + 1 if codes.size else 0))
    names = [str(v) for v in _as_number_list(raw)]
    wanted = [str(v) for v in _as_number_list(list(labels))]
    for given, w in zip(labels, wanted):
        if w not in names:
            raise DataError(f"{where}: {ds.name} has no label {given!r}; its labels are {', '.join(names)}")
    new_code = np.full(len(names), -1, dtype=np.int64)
    for k, w in enumerate(wanted):
        new_code[names.index(w)] = k
    mapped = new_code[codes]
    keep = np.flatnonzero(mapped >= 0)
    if keep.size == 0:
        raise DataError(f"{where}: no row of {ds.name} has the labels {list(labels)}")
    mapped = mapped[keep]
    if len(wanted) == 2:
        task, y_new, classes = "binary", np.where(mapped == 0, 1.0, -1.0), [labels[1], labels[0]]
    else:
        task, y_new, classes = "multiclass", mapped, list(labels)
    meta = {**(ds.meta or {}), "labels": {"classes": _as_number_list(classes)}, "label_filter": list(labels),
            "n": int(keep.size)}
    return replace(ds, X=ds.X[keep], y=y_new, task=task, meta=meta, permutations=None)
