"""The on-disk cache of parsed datasets: ``<root>/<name>/<split>/`` with ``.npy`` arrays and ``meta.json``.

A split directory is built under a temporary name and renamed into place in one step, with ``meta.json`` written
last, so a reader never sees a half-written split: a directory either holds complete arrays or does not exist.
Arrays are opened memory-mapped, so workers share the page cache instead of each holding a copy.

Edits are caught: ``meta.json`` records, for every array file, its size, shape, dtype, a hash of a sample of
its bytes and its full sha256, at write (:data:`FORMAT` 2; a split cached by an older lsokl is not complete,
so the next load or fetch rebuilds it). Every read checks the sizes, shapes, dtypes and sample hashes (a few
dozen 4 KiB reads per file: an edit of a small file such as the labels, or of values all through a large one,
is caught); the full sha256 is checked by ``lsokl fetch NAME --verify`` or on every read with
``LSOKL_VERIFY_CACHE=1``. A file or folder of the cache that is a link leading out of the cache is refused.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..errors import DataError

META = "meta.json"
#: the cache layout version written in meta.json; a split of another version is rebuilt (2: the arrays'
#: sizes, dtypes, sample hashes and sha256 are recorded and checked)
FORMAT = 2
#: the environment variable that makes every read check each array's full sha256
VERIFY_ENV = "LSOKL_VERIFY_CACHE"
#: files up to this size are hashed whole at every read; larger ones in SAMPLE_BLOCKS evenly spaced blocks
SAMPLE_WHOLE = 1 << 20
SAMPLE_BLOCKS, SAMPLE_BLOCK = 64, 4096


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
    return bool(meta) and meta.get("spec_hash") == spec_hash and meta.get("cache_format") == FORMAT


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
        meta = {**meta, "cache_format": FORMAT, "arrays": record_arrays(tmp)}
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


def sample_hash(path: Path, size: int | None = None) -> str:
    """sha256 of a file's size and of a sample of its bytes: the whole file up to :data:`SAMPLE_WHOLE`
    bytes, else :data:`SAMPLE_BLOCKS` blocks of :data:`SAMPLE_BLOCK` bytes evenly spaced from the first
    byte to the last (cheap enough for every read)."""
    size = path.stat().st_size if size is None else size
    h = hashlib.sha256(str(size).encode())
    with open(path, "rb") as fh:
        if size <= SAMPLE_WHOLE:
            h.update(fh.read())
        else:
            last = size - SAMPLE_BLOCK
            for k in range(SAMPLE_BLOCKS):
                fh.seek(last * k // (SAMPLE_BLOCKS - 1))
                h.update(fh.read(SAMPLE_BLOCK))
    return h.hexdigest()


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def record_arrays(folder: Path) -> dict:
    """What :func:`verify_split` checks, for every ``.npy`` file in a split folder being committed."""
    out = {}
    for p in sorted(folder.glob("*.npy")):
        a = np.load(p, mmap_mode="r")
        size = p.stat().st_size
        out[p.name] = {"bytes": size, "shape": list(a.shape), "dtype": a.dtype.str,
                       "sample": sample_hash(p, size), "sha256": file_sha256(p)}
        del a
    return out


def _inside_cache(path: Path) -> bool:
    base = root().resolve()
    try:
        path.resolve().relative_to(base)
        return True
    except ValueError:
        return False


def verify_split(name: str, split: str, meta: dict, *, full: bool | None = None) -> None:
    """Raise :class:`DataError` (one line naming the file and what differs) when the cached split's files
    are not those recorded at write: a link leading out of the cache, a missing, extra-size, other-shape or
    other-dtype array, a changed sample of bytes and, when ``full`` (default: ``$LSOKL_VERIFY_CACHE=1``),
    a changed sha256."""
    if full is None:
        full = os.environ.get(VERIFY_ENV, "").strip() not in ("", "0")
    d = split_dir(name, split)
    redo = f"delete {d} and run `lsokl fetch {name} --force`"
    if meta.get("cache_format") != FORMAT:
        raise DataError(f"the cache of {name!r} split {split!r} in {d} was built by an older lsokl (cache format "
                        f"{meta.get('cache_format', 1)}, this one reads {FORMAT}); run `lsokl fetch {name} --force`")
    arrays = meta.get("arrays")
    if not isinstance(arrays, dict) or not arrays:
        raise DataError(f"the cache of {name!r} split {split!r} in {d} records no arrays in {META}; {redo}")
    for folder in (d.parent, d):
        if not _inside_cache(folder):
            raise DataError(f"{folder} is a link leading out of the cache {root()} (to {folder.resolve()}); "
                            f"refused: {redo}")
    for fname, rec in arrays.items():
        p = d / fname
        if Path(fname).name != fname or not fname.endswith(".npy"):
            raise DataError(f"{d / META} names {fname!r}, not an array of this folder; {redo}")
        if p.is_symlink() and not _inside_cache(p):
            raise DataError(f"{p} is a link leading out of the cache (to {p.resolve()}); refused: {redo}")
        try:
            size = p.stat().st_size
            a = np.load(p, mmap_mode="r")
            shape, dtype = list(a.shape), a.dtype.str
            del a
        except (OSError, ValueError) as exc:
            raise DataError(f"{p} is damaged ({exc}); {redo}") from None
        for what, got, want in (("size", size, rec.get("bytes")), ("shape", shape, rec.get("shape")),
                                ("dtype", dtype, rec.get("dtype"))):
            if got != want:
                raise DataError(f"{p} was changed after it was cached: its {what} is {got}, {want} when written; "
                                f"{redo}")
        if sample_hash(p, size) != rec.get("sample") or (full and file_sha256(p) != rec.get("sha256")):
            raise DataError(f"{p} was changed after it was cached: its bytes differ from those written "
                            f"({'sha256' if full else 'sampled bytes'}); {redo}")


def read_split(name: str, split: str, mmap: bool = True, *, verify: bool | None = None):
    """(X, y, permutations or None, meta) of a cached split; arrays memory-mapped read-only when ``mmap``.
    The files are checked first (:func:`verify_split`; the full sha256 when ``verify`` or
    ``$LSOKL_VERIFY_CACHE=1``)."""
    d = split_dir(name, split)
    meta = read_meta(name, split)
    if meta is None:
        raise DataError(f"dataset {name!r} split {split!r} is not cached in {d}; run `lsokl fetch {name}`")
    verify_split(name, split, meta, full=verify)
    mode = "r" if mmap else None
    try:
        X = open_x(d, meta["storage"], meta["shape"], mmap)
        y = np.load(d / "y.npy", mmap_mode=mode)
        perm_path = d / "permutations.npy"
        perms = np.load(perm_path, mmap_mode=mode) if "permutations.npy" in meta["arrays"] else None
    except (OSError, ValueError, KeyError) as exc:
        raise DataError(f"the cache of {name!r} split {split!r} in {d} is damaged ({exc}); "
                        f"delete that folder and run `lsokl fetch {name}` again") from None
    return X, y, perms, meta


def remove(name: str) -> None:
    shutil.rmtree(root() / name, ignore_errors=True)
