"""``load(name)``: the entry point every other layer uses.

Registered datasets come from the cache (memory-mapped); when a split is not cached yet, ``load`` fetches it first
(so it works offline with ``LSOKL_DATA_MIRROR`` set). Workers call ``load`` only after the main process fetched,
and a complete cache never triggers network access.
"""
from __future__ import annotations

import inspect

import numpy as np
import scipy.sparse as sp

from ..errors import DataError, UnknownNameError
from . import builtin, cache, registry
from .dataset import Dataset
from .preprocess import scale_dataset, subsample

SPLITS = ("train", "test", "all")


def _from_cache(spec: registry.DatasetSpec, split: str, mirror) -> Dataset:
    if not cache.is_complete(spec.name, split, spec.spec_hash):
        from .fetch import fetch

        fetch(spec.name, mirror=mirror, splits=[split])
    X, y, perms, meta = cache.read_split(spec.name, split)
    return Dataset(spec.name, X, y, spec.task, meta, perms)


def _concat(train: Dataset, test: Dataset) -> Dataset:
    X = sp.vstack([train.X, test.X], format="csr") if sp.issparse(train.X) else np.vstack([train.X, test.X])
    meta = {**train.meta, "split": "all", "n": int(X.shape[0]),
            "sha256": _hash_pair(train.meta.get("sha256"), test.meta.get("sha256")),
            "parts": [{"split": "train", "n": train.n_samples}, {"split": "test", "n": test.n_samples}]}
    # the authors' permutations index the train rows only, so they do not apply to train+test
    return Dataset(train.name, X, np.concatenate([train.y, test.y]), train.task, meta, None)


def _hash_pair(a, b) -> str | None:
    import hashlib

    if not a or not b:
        return None
    return hashlib.sha256(f"{a}{b}".encode()).hexdigest()


def load(name: str, *, scale: str | None = None, max_samples: int | None = None, split: str = "train",
         seed: int | None = None, mirror: str | None = None, labels=None, **options) -> Dataset:
    """A dataset by registered name or alias (see ``lsokl datasets``), or a built-in.

    split        ``train`` (default), ``test`` or ``all`` (train then test, as in the papers' online tables that
                 stream both parts, e.g. a9a n=48842); built-ins have one split.
    scale        None/``none`` | ``minmax`` | ``minmax_pm1`` | ``standard``, fitted on the returned rows (the
                 registry's declared preprocessing, e.g. [0,1] min-max of LSOKL regression sets, is already applied).
    max_samples  keep at most this many rows, drawn without replacement with ``seed`` (default 0), in file order.
    seed         the built-in generators' seed and the subsample's seed.
    mirror       a mirror folder/URL for a fetch that may be needed (default ``$LSOKL_DATA_MIRROR``).
    labels       keep only the rows of these labels, as the file writes them (:func:`labels.select_labels`:
                 two labels are a binary task, the first one +1; more are classes 0..k-1 in this order).
    options      built-in generator options, e.g. ``load("scale", n=581012, d=54, seed=0)``.

    Cached arrays are returned memory-mapped read-only; ``scale``, ``max_samples`` or ``split="all"`` return copies.
    """
    if split not in SPLITS:
        raise DataError(f"split must be one of {SPLITS}, got {split!r}")
    if name in builtin.BUILTINS:
        if split == "test":
            raise DataError(f"built-in dataset {name!r} has no test split")
        if seed is not None and "seed" in inspect.signature(builtin.BUILTINS[name][0]).parameters:
            options["seed"] = seed
        ds = builtin.build(name, **options)
    else:
        if registry.resolve(name) is None:
            raise UnknownNameError("dataset", name, [*registry.specs(), *builtin.BUILTINS])
        if options:
            raise DataError(f"dataset {name!r} is read from files and takes no options {sorted(options)}; "
                            "options are for built-in generators")
        spec = registry.get(name)
        if split == "all":
            if "test" not in spec.splits:
                raise DataError(f"dataset {spec.name!r} has no test split, so split='all' = 'train'")
            ds = _concat(_from_cache(spec, "train", mirror), _from_cache(spec, "test", mirror))
        else:
            if split not in spec.splits:
                raise DataError(f"dataset {spec.name!r} has no {split!r} split (it has {', '.join(spec.splits)})")
            ds = _from_cache(spec, split, mirror)
    if labels:
        from .labels import select_labels

        ds = select_labels(ds, labels)
    ds = subsample(ds, max_samples, seed or 0)
    return scale_dataset(ds, scale)
