"""The on-disk cache of parsed datasets: ``<root>/<name>/<split>/`` with ``.npy`` arrays and ``meta.json``.

A split directory is built under a temporary name and renamed into place in one step, with ``meta.json`` written
last, so a reader never sees a half-written split: a directory either holds complete arrays or does not exist.
Arrays are opened memory-mapped, so workers share the page cache instead of each holding a copy.
"""
from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..errors import DataError

META = "meta.json"


def root() -> Path:
    """``$LSOKL_DATA_DIR``, else the platform's user cache folder (e.g. ~/.cache/lsokl)."""
    env = os.environ.get("LSOKL_DATA_DIR")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("lsokl"))


def split_dir(name: str, split: str) -> Path:
    return root() / name / split


def read_meta(name: str, split: str) -> dict | None:
    path = split_dir(name, split) / META
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return None  # unreadable meta = not cached; a fetch rebuilds it


def is_complete(name: str, split: str, spec_hash: str) -> bool:
    """True when the split is cached and was built from the current registry entry and parser."""
    meta = read_meta(name, split)
    return bool(meta) and meta.get("spec_hash") == spec_hash


def begin_split(name: str, split: str) -> Path:
    """A fresh temporary folder next to the split's final place, to be filled and then :func:`commit_split`-ed
    (or removed with :func:`abort_split`); a killed process leaves only this ``.tmp-*`` folder, which the next
    fetch removes."""
    final = split_dir(name, split)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.parent / f".tmp-{split}-{uuid.uuid4().hex}"
    tmp.mkdir()
    return tmp


def abort_split(tmp: Path) -> None:
    shutil.rmtree(tmp, ignore_errors=True)


def commit_split(name: str, split: str, tmp: Path, y: np.ndarray, permutations: np.ndarray | None,
                 meta: dict) -> Path:
    """Write labels, permutations and ``meta.json`` (last) into ``tmp`` and rename it into place in one step."""
    final = split_dir(name, split)
    try:
        np.save(tmp / "y.npy", np.ascontiguousarray(y))
        if permutations is not None:
            np.save(tmp / "permutations.npy", np.ascontiguousarray(permutations, dtype=np.int64))
        (tmp / META).write_text(json.dumps(meta, indent=1, sort_keys=True, default=_json_default))
        old = None
        if final.exists():
            old = final.parent / f".old-{split}-{uuid.uuid4().hex}"
            os.replace(final, old)
        os.replace(tmp, final)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        abort_split(tmp)
        raise
    return final


def write_x(tmp: Path, X) -> dict:
    """Save an in-memory feature matrix into a split folder being built; returns its ``storage``/``shape`` meta."""
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        np.save(tmp / "X.data.npy", np.ascontiguousarray(X.data, dtype=np.float64))
        # int32 indices whenever they fit, as scipy itself would choose: scipy converts other index dtypes on
        # construction, which would copy the memory-mapped arrays into RAM in every worker
        idx = np.int32 if max(X.nnz, *X.shape) < np.iinfo(np.int32).max else np.int64
        np.save(tmp / "X.indices.npy", np.ascontiguousarray(X.indices, dtype=idx))
        np.save(tmp / "X.indptr.npy", np.ascontiguousarray(X.indptr, dtype=idx))
        return {"storage": "csr", "shape": list(X.shape)}
    np.save(tmp / "X.npy", np.ascontiguousarray(X, dtype=np.float64))
    return {"storage": "dense", "shape": list(X.shape)}


def write_split(name: str, split: str, X, y: np.ndarray, permutations: np.ndarray | None, meta: dict) -> Path:
    """Cache arrays held in memory; all or nothing."""
    tmp = begin_split(name, split)
    try:
        meta = {**meta, **write_x(tmp, X)}
    except BaseException:
        abort_split(tmp)
        raise
    return commit_split(name, split, tmp, y, permutations, meta)


def open_x(folder: Path, storage: str, shape, mmap: bool = True):
    """The feature matrix cached in ``folder`` (memory-mapped read-only when ``mmap``), in its cached dtype."""
    mode = "r" if mmap else None
    if storage == "csr":
        parts = [np.load(folder / f"X.{k}.npy", mmap_mode=mode) for k in ("data", "indices", "indptr")]
        # scipy keeps data and indices as given (no copy) when the index dtypes agree with what it chooses;
        # an int64 indptr of a matrix with int32 indices is narrowed (a copy of n+1 integers only)
        return sp.csr_matrix(tuple(parts), shape=tuple(shape), copy=False)
    return np.load(folder / "X.npy", mmap_mode=mode)


def _json_default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON-serialisable: {type(obj)}")


def read_split(name: str, split: str, mmap: bool = True):
    """(X, y, permutations or None, meta) of a cached split; arrays memory-mapped read-only when ``mmap``."""
    d = split_dir(name, split)
    meta = read_meta(name, split)
    if meta is None:
        raise DataError(f"dataset {name!r} split {split!r} is not cached in {d}; run `lsokl fetch {name}`")
    mode = "r" if mmap else None
    try:
        X = open_x(d, meta["storage"], meta["shape"], mmap)
        y = np.load(d / "y.npy", mmap_mode=mode)
        perm_path = d / "permutations.npy"
        perms = np.load(perm_path, mmap_mode=mode) if perm_path.exists() else None
    except (OSError, ValueError, KeyError) as exc:
        raise DataError(f"the cache of {name!r} split {split!r} in {d} is damaged ({exc}); "
                        f"delete that folder and run `lsokl fetch {name}` again") from None
    return X, y, perms, meta


def remove(name: str) -> None:
    shutil.rmtree(root() / name, ignore_errors=True)
