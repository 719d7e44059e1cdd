"""Input checks that must run before any compiled loop reads an array: sparse structure (issue 23).

Compiled loops (numba, scipy's own C++ conversions) trust a sparse matrix's structure: a column
index outside [0, n_features), a decreasing row pointer or arrays of mismatched lengths make them
read or write outside their arrays (a segfault, or a silently wrong answer). scikit-learn's
``check_array``/``validate_data`` check shapes, dtypes and finiteness of ``X.data`` but not the
index structure, and scipy's ``check_format(full_check=True)`` replaces the matrix's own index
arrays (it may change their dtype), which would mutate the caller's matrix. So the structure is
checked here, in one read-only pass (a compiled scan, no index-sized allocation), and
:func:`check_sparse` is called wherever scikit-learn's validation runs (``validate``) and where
:class:`lsokl.compute.stream.Stream` takes a matrix.

Duplicate entries and unsorted indices are legal in scipy (``A[i, j]`` is the *sum* of the
duplicates) but the loops read stored entries one by one (a row's squared norm summed per entry:
0.463 instead of 0.741 in issue 23's example). A non-canonical CSR matrix is therefore summed and
sorted on a copy (``sum_duplicates``); the caller's matrix is never modified, and a canonical one
(every cached data set) is passed through without a copy, keeping its index dtype (int32 stays
int32: issue 26, no nnz-sized int64 copy).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

CANONICAL, NOT_CANONICAL, BAD_INDEX, BAD_INDPTR = 0, 1, 2, 3


@njit(cache=True, nogil=True)
def _scan_csr(indptr, indices, n_minor):  # pragma: no cover - compiled
    """CANONICAL, NOT_CANONICAL (a row with unsorted or duplicate indices), BAD_INDEX (an index
    outside [0, n_minor)) or BAD_INDPTR (a row pointer that decreases or exceeds the entries)."""
    status = CANONICAL
    nnz = indices.shape[0]
    for i in range(indptr.shape[0] - 1):
        a = indptr[i]
        b = indptr[i + 1]
        if b < a or b > nnz:
            return BAD_INDPTR
        prev = -1
        for p in range(a, b):
            j = indices[p]
            if j < 0 or j >= n_minor:
                return BAD_INDEX
            if j <= prev:
                status = NOT_CANONICAL
            prev = j
    return status


def _require_index_array(name: str, a) -> np.ndarray:
    a = np.asarray(a)
    if a.ndim != 1 or a.dtype.kind not in "iu":
        raise ValueError(f"sparse X: {name} must be a 1-d integer array, got {a.dtype} with shape "
                         f"{a.shape}")
    return a


def _compressed_status(what: str, indptr, indices, data, n_major: int, n_minor: int) -> int:
    """Check a CSR/CSC matrix's arrays; ValueError naming the defect, else the canonical status."""
    indptr = _require_index_array("indptr", indptr)
    indices = _require_index_array("indices", indices)
    data = np.asarray(data)
    if data.ndim != 1:
        raise ValueError(f"sparse X: data must be 1-d, got shape {data.shape}")
    if len(indptr) != n_major + 1:
        raise ValueError(f"sparse X ({what}): indptr has {len(indptr)} entries for {n_major} "
                         f"{'rows' if what == 'csr' else 'columns'}; expected {n_major + 1}")
    if len(indices) != len(data):
        raise ValueError(f"sparse X ({what}): indices has {len(indices)} entries but data has "
                         f"{len(data)}; they must have the same length")
    if len(indptr) and (indptr[0] != 0 or indptr[-1] > len(indices)):
        raise ValueError(f"sparse X ({what}): indptr must start at 0 and end at most at the "
                         f"number of stored entries ({len(indices)}); got {int(indptr[0])} .. "
                         f"{int(indptr[-1])}")
    status = _scan_csr(indptr, indices, n_minor)
    if status == BAD_INDPTR:
        raise ValueError(f"sparse X ({what}): indptr must be non-decreasing (a row pointer "
                         "decreases)")
    if status == BAD_INDEX:
        kind = "column" if what == "csr" else "row"
        lo, hi = int(indices.min()), int(indices.max())
        raise ValueError(f"sparse X ({what}): {kind} indices must lie in [0, {n_minor}) for a "
                         f"matrix of shape {(n_major, n_minor) if what == 'csr' else (n_minor, n_major)}; "
                         f"found indices in [{lo}, {hi}]")
    if int(indptr[-1]) != len(indices):
        return NOT_CANONICAL  # trailing unused entries: rebuilt without them
    return int(status)


def check_sparse(X):
    """A sparse X as a canonical CSR matrix (sorted indices, no duplicates), after checking its
    structure (ValueError naming the defect); anything else is returned unchanged.

    A canonical CSR matrix is returned as is (same arrays, same index dtype); otherwise the
    result is a new matrix and ``X`` is left untouched."""
    if not sp.issparse(X):
        return X
    if X.ndim != 2:
        raise ValueError(f"sparse X must be 2-dimensional, got shape {X.shape}")
    n, d = X.shape
    fmt = X.format
    if fmt == "csr":
        if _compressed_status("csr", X.indptr, X.indices, X.data, n, d) == CANONICAL:
            return X
        nnz = int(X.indptr[-1])
        out = sp.csr_matrix((np.array(X.data[:nnz]), np.array(X.indices[:nnz]), np.array(X.indptr)),
                            shape=X.shape)
        out.sum_duplicates()  # sorts the indices too
        return out
    if fmt == "csc":
        _compressed_status("csc", X.indptr, X.indices, X.data, d, n)
    elif fmt == "coo":
        rows = _require_index_array("row", X.row if hasattr(X, "row") else X.coords[0])
        cols = _require_index_array("col", X.col if hasattr(X, "col") else X.coords[1])
        if not (len(rows) == len(cols) == len(np.asarray(X.data))):
            raise ValueError(f"sparse X (coo): row, col and data have {len(rows)}, {len(cols)} and "
                             f"{len(np.asarray(X.data))} entries; they must have the same length")
        for name, a, m in (("row", rows, n), ("column", cols, d)):
            if len(a) and (int(a.min()) < 0 or int(a.max()) >= m):
                raise ValueError(f"sparse X (coo): {name} indices must lie in [0, {m}) for a matrix "
                                 f"of shape {X.shape}; found [{int(a.min())}, {int(a.max())}]")
    elif fmt == "bsr":
        X = X.tocoo()  # scipy checks a BSR matrix's block structure when converting
        return check_sparse(X)
    # a converted matrix is ours: canonicalise in place
    out = sp.csr_matrix(X.tocsr(copy=True))
    out.sum_duplicates()
    return out


def validate(estimator, X="no_validation", y="no_validation", **kwargs):
    """scikit-learn's ``validate_data`` with the sparse structure checked first (``check_sparse``):
    the one entry every learner's fit/partial_fit/predict/decision_function goes through."""
    from sklearn.utils.validation import validate_data

    if not (isinstance(X, str) and X == "no_validation"):
        X = check_sparse(X)
    return validate_data(estimator, X, y, **kwargs)


class NonFiniteWarning(RuntimeWarning):
    """A learner or approximation produced NaN or infinite values from finite input (a diverged
    model: a step size or kernel width too large or too small for the data)."""


def warn_if_not_finite(values, owner: str, what: str = "decision values") -> None:
    """Warn (NonFiniteWarning, never silently) when ``values`` holds NaN or inf."""
    import warnings

    values = np.asarray(values)
    if values.dtype.kind in "fc" and not np.all(np.isfinite(values)):
        bad = int(np.size(values) - np.count_nonzero(np.isfinite(values)))
        warnings.warn(f"{owner}: {bad} of {values.size} {what} are NaN or infinite: the model "
                      "diverged (its step size or kernel width does not suit this data's scale)",
                      NonFiniteWarning, stacklevel=3)


def max_row_sqnorm(X) -> float:
    """The largest squared row norm of a dense array or CSR matrix (no n x d or nnz-sized
    temporary: rows are summed 4,096 at a time, in float64)."""
    if sp.issparse(X):
        if X.nnz == 0:
            return 0.0
        n, ptr, best = X.shape[0], X.indptr, 0.0
        for a in range(0, n, 4096):
            rows = ptr[a:min(a + 4096, n) + 1]
            p0, p1 = int(rows[0]), int(rows[-1])
            if p1 > p0:
                sq = np.square(X.data[p0:p1], dtype=np.float64)
                best = max(best, float(np.add.reduceat(sq, rows[:-1][np.diff(rows) > 0] - p0).max()))
        return best
    X = np.asarray(X)
    if X.size == 0:
        return 0.0
    return float(max(np.einsum("ij,ij->i", X[a:a + 4096], X[a:a + 4096], dtype=np.float64).max()
                     for a in range(0, X.shape[0], 4096)))


def check_row_norms(max_sqnorm: float) -> None:
    """Refuse finite data whose squared distances (up to 4 max ||x||^2) overflow float64."""
    if not np.isfinite(4.0 * max_sqnorm):
        raise ValueError(f"X has values so large that squared distances between rows overflow "
                         f"float64 (largest squared row norm {max_sqnorm:.3g}); rescale X (e.g. "
                         "standardise its columns)")


def check_order(order, n: int) -> np.ndarray:
    """The row order of a pass, checked before any compiled code: ``None`` is 0..n-1, else a 1-d
    integer array of row indices in [0, n). Returns a private, writable, C-contiguous int64 copy
    (a row of a read-only memory-mapped permutation matrix would be another numba type and
    compile again)."""
    if order is None:
        return np.arange(n, dtype=np.int64)
    given = np.asarray(order)
    if given.ndim != 1 or given.dtype.kind not in "iu":
        raise ValueError(f"order must be a 1-d array of integer row indices of X, got "
                         f"dtype {given.dtype} with shape {given.shape}")
    if given.size and (given.min() < 0 or given.max() >= n):
        raise ValueError(f"order holds row indices in [{int(given.min())}, "
                         f"{int(given.max())}]; X has rows 0..{n - 1}")
    return np.require(given, np.int64, ["C", "W", "O"])
