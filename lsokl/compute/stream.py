"""A model-independent view of the data that every compiled loop reads.

Dense and CSR inputs share one layout so that each learner has one compiled loop:
``xs = (dense, indptr, indices, values, is_sparse)``. For dense input the CSR arrays are empty;
for CSR input ``dense`` is a 0x0 array. Row access costs O(nnz) for sparse rows.

Sparse input is checked (``lsokl.compute.validation.check_sparse``: indices in range, row pointers
non-decreasing, matching lengths) and made canonical on a copy only when it is not; int32 column
indices are read as they are (no nnz-sized int64 copy).

Values keep their precision when it is float32 or float64 (issue 26 item 2): a float32 dense
memory map stays that memory map, float32 CSR values stay as they are, so one pass over a
2M x 784 float32 cache holds no n x d (or nnz) float64 copy. Other dtypes (integers, float16)
are converted to float64 here. The squared norms are float64, summed from each value converted
to float64 first. A compiled loop that reads float32 values converts each one to float64 before
using it (exact), so with the same operation order it computes what it computed on the float64
copy; learners whose loops are checked for that declare ``reads_float32 = True``
(:class:`lsokl.learners.base.OnlineLearner`), and every other learner gets
:meth:`Stream.as_float64`, the float64 copy of the old behaviour, made in that one place.
"""
from __future__ import annotations

import hashlib
import os
from collections import OrderedDict

import numpy as np
import scipy.sparse as sp

from .validation import check_row_norms, check_sparse

_EMPTY_2D = np.empty((0, 0), dtype=np.float64)
_EMPTY_I = np.empty(0, dtype=np.int64)
_EMPTY_F = np.empty(0, dtype=np.float64)


#: Streams a process keeps for :meth:`Stream.reuse` (the least recently used is dropped first)
REUSE_SIZE = 2
#: small in-memory component arrays (a CSR matrix's row pointers, pickled rather than memory-mapped
#: by joblib) are keyed by a hash of their bytes up to this size
HASHED_BYTES = 1 << 20
_REUSED: "OrderedDict[tuple, Stream]" = OrderedDict()


def _file_key(a):
    """A key naming the content of a read-only array that views a memory-mapped file (its
    path, size and modification time, where the view starts, its shape, strides and dtype), or
    None. Views count (SciPy's CSR constructor turns a memmap into a plain view of it)."""
    if not isinstance(a, np.ndarray) or a.flags.writeable:
        return None
    m = a  # the outermost memmap: the one that owns the mapping (its base is the mmap)
    while isinstance(m, np.ndarray) and isinstance(m.base, np.ndarray):
        m = m.base
    if not isinstance(m, np.memmap) or m.filename is None:
        return None
    try:
        st = os.stat(m.filename)
    except OSError:
        return None
    start = a.__array_interface__["data"][0] - m.__array_interface__["data"][0]
    return ("file", m.filename, st.st_size, st.st_mtime_ns, m.offset + start, a.shape,
            a.strides, a.dtype.str)


def data_key(X) -> tuple | None:
    """A key shared only by inputs with the same content, for read-only memory-mapped data (a
    cached data set, or what joblib hands a worker); None for anything else (in-memory arrays
    can change under a kept Stream). A CSR matrix's row pointers may be a small in-memory array
    (joblib pickles arrays under 1 MiB): they are keyed by a hash of their bytes, and the kept
    Stream holds its own copy of them."""
    if sp.issparse(X):
        if X.format != "csr":
            return None
        keys = [_file_key(X.data), _file_key(X.indices), _file_key(X.indptr)]
        if keys[2] is None and isinstance(X.indptr, np.ndarray) and X.indptr.nbytes <= HASHED_BYTES:
            ptr = np.ascontiguousarray(X.indptr)
            keys[2] = ("bytes", hashlib.blake2b(ptr.view(np.uint8), digest_size=16).hexdigest(),
                       ptr.shape, ptr.dtype.str)
    else:
        keys = [_file_key(X)]
    if any(k is None for k in keys):
        return None
    return (type(X).__name__, X.shape, tuple(keys))


#: value dtypes a Stream keeps as they are; anything else is converted to float64
NATIVE = (np.dtype(np.float32), np.dtype(np.float64))


def _native(dtype) -> np.dtype:
    dtype = np.dtype(dtype)
    return dtype if dtype in NATIVE else np.dtype(np.float64)


def float64_rows(X):
    """Rows of a Stream (a dense array or CSR matrix) in float64: a copy of these rows only when
    they are float32 (exact), for the batched NumPy/BLAS work (scoring blocks) whose results
    must not depend on the input's precision."""
    if X.dtype == np.float64:
        return X
    return X.astype(np.float64)


class Stream:
    """Rows of X (float64 or float32 values) plus their float64 squared norms, ready for the
    numba loops."""

    @classmethod
    def reuse(cls, X) -> "Stream":
        """``Stream(X)``, kept for the next call on the same memory-mapped data (the runner's
        workers play many cells of one data set: kddcup99's Stream and row ids cost ~0.1 s a
        cell). What a Stream caches about its rows (row ids, binary/single-precision checks,
        window features) depends on their content only and is kept; the duplicate-row memos,
        which hold one learner's predictions, are dropped."""
        key = data_key(X)
        if key is None:
            return cls(X)
        stream = _REUSED.get(key)
        if stream is None:
            if sp.issparse(X) and _file_key(X.indptr) is None:
                # in-memory row pointers: the kept Stream gets its own copy of them
                X = sp.csr_matrix((X.data, X.indices, X.indptr.copy()), shape=X.shape)
            stream = cls(X)
            _REUSED[key] = stream
            while len(_REUSED) > REUSE_SIZE:
                _REUSED.popitem(last=False)
        else:
            _REUSED.move_to_end(key)
            stream.__dict__.pop("_row_memos", None)
            f64 = stream.__dict__.get("_float64")
            if f64 is not None:
                f64.__dict__.pop("_row_memos", None)
        return stream

    def __init__(self, X):
        if np.iscomplexobj(X.data if sp.issparse(X) else X):
            raise ValueError("Complex data not supported")
        if sp.issparse(X):
            # checked structure, summed duplicates, sorted indices (on a copy only when needed)
            checked = check_sparse(X)
            csr = sp.csr_matrix(checked, dtype=_native(checked.dtype), copy=False)
            self.n_samples, self.n_features = csr.shape
            self.is_sparse = True
            self.dense = _EMPTY_2D
            self.indptr = np.ascontiguousarray(csr.indptr, dtype=np.int64)  # n + 1 entries
            # int32 column indices (scipy's and the cache's) are read as they are: no nnz-sized
            # int64 copy (issue 26); the loops compile for either index width, same arithmetic
            self.indices = csr.indices if csr.indices.dtype in (np.int32, np.int64) \
                and csr.indices.flags.c_contiguous else np.ascontiguousarray(csr.indices, np.int64)
            self.values = np.ascontiguousarray(csr.data)  # float32 or float64, as given
            self.csr = csr
        else:
            dense = np.asarray(X)
            if dense.ndim != 2:
                raise ValueError(f"X must be 2-dimensional, got shape {dense.shape}")
            # a float32 (memory-mapped) array stays as it is: no n x d float64 copy
            self.dense = np.ascontiguousarray(dense, dtype=_native(dense.dtype))
            self.n_samples, self.n_features = self.dense.shape
            self.is_sparse = False
            self.indptr, self.indices, self.values = _EMPTY_I, _EMPTY_I, _EMPTY_F
            self.csr = None
        from .kernels import sequential_sqnorms  # compiled; imported late to keep this module light

        self.sqnorms = np.empty(self.n_samples, dtype=np.float64)
        sequential_sqnorms(self.dense, self.indptr, self.values, self.is_sparse, self.sqnorms)
        if not np.all(np.isfinite(self.sqnorms)):
            vals = self.values if self.is_sparse else self.dense
            if np.all(np.isfinite(vals)):
                check_row_norms(np.inf)  # finite data whose squares overflow: say so
            raise ValueError("X contains NaN or infinite values")
        check_row_norms(float(self.sqnorms.max()) if self.n_samples else 0.0)

    @property
    def dtype(self) -> np.dtype:
        """The dtype of the values (float64 or float32)."""
        return (self.values if self.is_sparse else self.dense).dtype

    def as_float64(self) -> "Stream":
        """This Stream with float64 values: itself when they are, else a float64 copy of the
        values (n x d dense, or nnz CSR values; the CSR indices and row pointers are shared),
        made once and kept. The one place a learner whose loops are not checked on float32
        input (no ``reads_float32``) gets the copy every learner took before issue 26."""
        if self.dtype == np.float64:
            return self
        f64 = self.__dict__.get("_float64")
        if f64 is None:
            f64 = object.__new__(Stream)
            f64.n_samples, f64.n_features, f64.is_sparse = self.n_samples, self.n_features, self.is_sparse
            f64.indptr, f64.indices = self.indptr, self.indices
            if self.is_sparse:
                f64.values = self.values.astype(np.float64)
                f64.csr = sp.csr_matrix((f64.values, self.indices, self.indptr),
                                        shape=(self.n_samples, self.n_features))
                f64.dense = _EMPTY_2D
            else:
                f64.dense = self.dense.astype(np.float64)
                f64.values, f64.csr = _EMPTY_F, None
            f64.sqnorms = self.sqnorms  # the same float64 sums (each value converted exactly)
            self._float64 = f64
        return f64

    @property
    def xs(self) -> tuple:
        """The tuple the compiled loops take."""
        return (self.dense, self.indptr, self.indices, self.values, self.is_sparse)

    def rows(self, idx: np.ndarray):
        """Rows ``idx`` as a dense array or CSR matrix (for batched, model-independent work)."""
        if self.is_sparse:
            return self.csr[idx]
        return self.dense[idx]
