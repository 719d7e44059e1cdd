"""A model-independent view of the data that every compiled loop reads.

Dense and CSR inputs share one layout so that each learner has one compiled loop:
``xs = (dense, indptr, indices, values, is_sparse)``. For dense input the CSR arrays are empty;
for CSR input ``dense`` is a 0x0 array. Row access costs O(nnz) for sparse rows.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

_EMPTY_2D = np.empty((0, 0), dtype=np.float64)
_EMPTY_I = np.empty(0, dtype=np.int64)
_EMPTY_F = np.empty(0, dtype=np.float64)


class Stream:
    """Float64 rows of X plus their squared norms, ready for the numba loops."""

    def __init__(self, X):
        if np.iscomplexobj(X.data if sp.issparse(X) else X):
            raise ValueError("Complex data not supported")
        if sp.issparse(X):
            csr = sp.csr_matrix(X, dtype=np.float64, copy=False)
            if not csr.has_sorted_indices:
                csr = csr.copy()
                csr.sort_indices()
            self.n_samples, self.n_features = csr.shape
            self.is_sparse = True
            self.dense = _EMPTY_2D
            self.indptr = np.ascontiguousarray(csr.indptr, dtype=np.int64)
            self.indices = np.ascontiguousarray(csr.indices, dtype=np.int64)
            self.values = np.ascontiguousarray(csr.data, dtype=np.float64)
            self.csr = csr
        else:
            dense = np.asarray(X)
            if dense.ndim != 2:
                raise ValueError(f"X must be 2-dimensional, got shape {dense.shape}")
            self.dense = np.ascontiguousarray(dense, dtype=np.float64)
            self.n_samples, self.n_features = self.dense.shape
            self.is_sparse = False
            self.indptr, self.indices, self.values = _EMPTY_I, _EMPTY_I, _EMPTY_F
            self.csr = None
        from .kernels import sequential_sqnorms  # compiled; imported late to keep this module light

        self.sqnorms = np.empty(self.n_samples, dtype=np.float64)
        sequential_sqnorms(self.dense, self.indptr, self.values, self.is_sparse, self.sqnorms)
        if not np.all(np.isfinite(self.sqnorms)):
            raise ValueError("X contains NaN or infinite values")

    @property
    def xs(self) -> tuple:
        """The tuple the compiled loops take."""
        return (self.dense, self.indptr, self.indices, self.values, self.is_sparse)

    def rows(self, idx: np.ndarray):
        """Rows ``idx`` as a dense array or CSR matrix (for batched, model-independent work)."""
        if self.is_sparse:
            return self.csr[idx]
        return self.dense[idx]
