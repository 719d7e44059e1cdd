"""Compiled building blocks shared by every kernel learner.

Support vectors live in a fixed-capacity buffer ``sv`` (capacity x d, column-major so that each
feature's column over the slots is contiguous) with their squared norms ``sv_sqn``. ``order`` lists the occupied slots oldest first, so "remove the oldest" and
"remove the j-th in age order" (the authors' RBP/BOGD draws index that list) are O(B) integer
shifts, never copies of vectors. Coefficients are kept by each learner in slot coordinates.

The Gaussian kernel is exp(-||x-y||^2 / (2 sigma^2)), computed as the authors do,
exp(-(||x||^2 + ||s||^2 - 2 s.x) / (2 sigma^2)), with negative rounding residue clamped to 0.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .cpu_hints import CACHE_LINE, prefetch, prefetch_next_csr_rows

JIT = dict(cache=True, nogil=True)
# Reassociation lets LLVM vectorise dot products (2.6-6x faster for d = 57..300). It changes the
# summation order only, the same perturbation the authors' robust reference rows are checked
# against (reversed feature columns), so exact mistake counts are unaffected.
FAST_DOT = dict(cache=True, nogil=True, fastmath={"reassoc", "contract", "nsz"})


def aligned_empty(shape, dtype=np.float64) -> np.ndarray:
    """np.empty(shape, dtype), C-contiguous and starting on a cache line (``CACHE_LINE``).

    NumPy guarantees 16 bytes; a large array (taken from mmap) typically starts 16 bytes into
    a page, so every other 32-byte vector load of its rows spans two cache lines. FOGD's CSR
    projection streams the rows of U with such loads: on a9a it ran 0.027 s a pass with U as
    NumPy placed it and 0.015 s with U on a cache line (same bits: alignment changes no
    arithmetic here, the vectorisers do not peel loops for it)."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    buf = np.empty(n + CACHE_LINE, dtype=np.uint8)
    start = (-buf.ctypes.data) % CACHE_LINE
    return buf[start:start + n].view(dtype).reshape(shape)


def aligned_zeros(shape, dtype=np.float64) -> np.ndarray:
    """np.zeros on a cache line (:func:`aligned_empty`)."""
    out = aligned_empty(shape, dtype)
    out[...] = 0
    return out


def aligned_copy(a, dtype=np.float64) -> np.ndarray:
    """A C-contiguous copy of ``a`` starting on a cache line (:func:`aligned_empty`)."""
    a = np.asarray(a, dtype=dtype)
    out = aligned_empty(a.shape, dtype)
    out[...] = a
    return out


@njit(**FAST_DOT)
def dot(a, b):
    """Dense dot product of two equal-length vectors."""
    acc = 0.0
    for k in range(a.shape[0]):
        acc += a[k] * b[k]
    return acc


@njit(**JIT)
def dots_with_svs(xs, i, sv, m, out):
    """out[j] = <sv[j], x_i> for the first m slots.

    Each dot is accumulated over ascending features, one feature at a time: the order of the
    authors' Octave/reference-BLAS products, so exact ties on raw data break the same way. With
    the column-major buffer (see ``support.py``) ``sv.T[k]`` is contiguous, so every feature is one
    vectorised axpy over the slots, and a sparse row costs O(m * nnz).
    """
    dense, indptr, indices, values, is_sparse = xs
    svt = sv.T
    for j in range(m):
        out[j] = 0.0
    if is_sparse:  # skipped zeros would add exact zeros: same sums as the dense order
        for p in range(indptr[i], indptr[i + 1]):
            v = np.float64(values[p])  # float32 data: converted exactly, float64 products
            col = svt[indices[p]]
            for j in range(m):
                out[j] += v * col[j]
    else:
        x = dense[i]
        for k in range(x.shape[0]):
            v = np.float64(x[k])
            if v != 0.0:
                col = svt[k]
                for j in range(m):
                    out[j] += v * col[j]


@njit(**JIT)
def kernel_row(xs, i, x_sqn, sv, sv_sqn, m, inv_two_sigma2, out):
    """out[j] = kappa(x_i, sv[j]) for j < m."""
    dots_with_svs(xs, i, sv, m, out)
    for j in range(m):
        d2 = x_sqn + sv_sqn[j] - 2.0 * out[j]
        if d2 < 0.0:
            d2 = 0.0
        out[j] = math.exp(-d2 * inv_two_sigma2)


@njit(**JIT)
def kernel_between_slots(sv, sv_sqn, a, m, inv_two_sigma2, out):
    """out[j] = kappa(sv[a], sv[j]) for j < m (a stored support vector against all others)."""
    svt = sv.T
    for j in range(m):
        out[j] = 0.0
    for k in range(svt.shape[0]):
        v = svt[k, a]
        if v != 0.0:
            col = svt[k]
            for j in range(m):
                out[j] += v * col[j]
    for j in range(m):
        d2 = sv_sqn[a] + sv_sqn[j] - 2.0 * out[j]
        if d2 < 0.0:
            d2 = 0.0
        out[j] = math.exp(-d2 * inv_two_sigma2)


@njit(**JIT)
def sequential_sqnorms(dense, indptr, values, is_sparse, out):
    """Squared row norms summed one feature at a time (Octave's ``sum(x.^2)`` order), in
    float64: a float32 value is converted (exactly) before it is squared."""
    for i in range(out.shape[0]):
        acc = 0.0
        if is_sparse:
            for p in range(indptr[i], indptr[i + 1]):
                v = np.float64(values[p])
                acc += v * v
        else:
            for k in range(dense.shape[1]):
                v = np.float64(dense[i, k])
                acc += v * v
        out[i] = acc


@njit(inline="always")
def prefetch_next(xs, sqn, y, order, t, stop):
    """Ask for what step t + 1 of a pass reads (its row, squared norm and label) and for step
    t + 2's CSR row offsets, while step t is played.

    A pass over a permuted stream reads its rows at random. On kddcup99 (494,021 CSR rows) a
    budgeted learner's step spent about as long waiting for the row as computing with it: BOGD
    ran a pass in 0.84 s in the permuted order and 0.56 s with the rows in file order. The
    hints change no arithmetic (``cpu_hints.prefetch``)."""
    dense, indptr, indices, values, is_sparse = xs
    if is_sparse:
        prefetch_next_csr_rows(indptr, indices, values, order, t, stop)
    if t + 1 < stop:
        j = order[t + 1]
        if not is_sparse:
            row = dense[j]
            for k in range(0, row.shape[0], max(CACHE_LINE // row.itemsize, 1)):
                prefetch(row, k)
            prefetch(row, row.shape[0] - 1)
        prefetch(sqn, j)
        prefetch(y, j)


@njit(**JIT)
def store_row(xs, i, x_sqn, sv, sv_sqn, slot):
    """Write x_i into buffer slot ``slot``."""
    dense, indptr, indices, values, is_sparse = xs
    if is_sparse:
        sv[slot, :] = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            sv[slot, indices[p]] = values[p]
    else:
        # element by element: a slice assignment compiles numba's shape-mismatch error path,
        # 1.7 s of every learner's first compile
        for k in range(sv.shape[1]):
            sv[slot, k] = dense[i, k]
    sv_sqn[slot] = x_sqn


@njit(**JIT)
def append_slot(order, size):
    """Register a new support vector as the newest; returns its slot (slots fill 0, 1, ...)."""
    slot = size
    order[size] = slot
    return slot


@njit(**JIT)
def evict_and_reuse(order, size, pos):
    """Remove the support vector at age position ``pos`` (0 = oldest) and return its slot,
    re-registered as the newest, so the caller can overwrite it with the incoming vector."""
    slot = order[pos]
    for q in range(pos, size - 1):
        order[q] = order[q + 1]
    order[size - 1] = slot
    return slot


@njit(**JIT)
def sign(f):
    """The authors' sign with sign(0) := +1."""
    return 1.0 if f >= 0.0 else -1.0


def row_sqnorms(X) -> np.ndarray:
    """Squared Euclidean norm of every row of a dense array or sparse matrix (BLAS order)."""
    import scipy.sparse as sp

    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
    X = np.asarray(X, dtype=np.float64)
    return np.einsum("ij,ij->i", X, X)


def gaussian_block(A, B, gamma: float | None = None, *, sigma: float | None = None,
                   A_sqn: np.ndarray | None = None, B_sqn: np.ndarray | None = None) -> np.ndarray:
    """The NumPy/BLAS Gaussian kernel block [kappa(a_i, b_j)] (len(A) x len(B), dense float64).

    This is the one batch (non-compiled) Gaussian block of lsokl: NOGD's landmark Gram matrix
    (through :func:`gaussian_gram`), the support-vector predictions, the batch learners and every
    kernel approximation in :mod:`lsokl.approx` (Nystrom landmarks, MEKA's diagonal and link
    blocks, the exact rows of the relative-error metric) call it. Two parameterisations:

    * ``gamma``: exp(-gamma ||a - b||^2) (LIBSVM's ``-g``; the MEKA/DSG papers). The block is
      built in place (one n_A x n_B buffer), so a chunk of rows costs only its own memory;
    * ``sigma``: exp(-||a - b||^2 / (2 sigma^2)) (LSOKL), computed with exactly the operation
      order the online learners were checked with (their traces stay bit-identical).

    Squared distances are ||a||^2 + ||b||^2 - 2 a.b with negative rounding residue clamped to 0,
    as the authors' codes compute them; ``A_sqn``/``B_sqn`` pass precomputed squared norms.
    """
    import scipy.sparse as sp

    if (gamma is None) == (sigma is None):
        raise ValueError("give exactly one of gamma and sigma")
    a2 = row_sqnorms(A) if A_sqn is None else A_sqn
    b2 = row_sqnorms(B) if B_sqn is None else B_sqn
    cross = A @ B.T
    if sp.issparse(cross):
        cross = cross.toarray()
    cross = np.asarray(cross, dtype=np.float64)
    if sigma is not None:
        d2 = np.maximum(a2[:, None] + b2[None, :] - 2.0 * cross, 0.0)
        return np.exp(-d2 / (2.0 * sigma * sigma))
    if not cross.flags.writeable or not cross.flags.c_contiguous:
        cross = np.ascontiguousarray(cross).copy()
    cross *= -2.0
    cross += a2[:, None]
    cross += b2[None, :]
    np.maximum(cross, 0.0, out=cross)
    cross *= -float(gamma)
    return np.exp(cross, out=cross)


def gaussian_gram(A: np.ndarray, B: np.ndarray, sigma: float) -> np.ndarray:
    """Dense kernel matrix [kappa(a_i, b_j)] with the LSOKL width sigma (see :func:`gaussian_block`)."""
    return gaussian_block(A, B, sigma=sigma)


#: the kernels of the batch approximations (lsokl.approx): exp(-gamma ||x-y||_2^2) and exp(-gamma ||x-y||_1)
KERNELS = ("gaussian", "laplacian")


def laplacian_block(A, B, gamma: float) -> np.ndarray:
    """The Laplacian kernel block [exp(-gamma ||a_i - b_j||_1)] (len(A) x len(B), dense float64),
    the kernel of scikit-learn's ``laplacian_kernel`` and of the MEKA paper's Fig. 11. The L1
    distances are SciPy's ``cdist(..., "cityblock")`` (sparse rows are densified first)."""
    import scipy.sparse as sp
    from scipy.spatial.distance import cdist

    A = A.toarray() if sp.issparse(A) else A
    B = B.toarray() if sp.issparse(B) else B
    D = cdist(np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64), "cityblock")
    D *= -float(gamma)
    return np.exp(D, out=D)


def kernel_block(A, B, gamma: float, kernel: str = "gaussian", *, A_sqn=None, B_sqn=None) -> np.ndarray:
    """The ``kernel`` block (one of :data:`KERNELS`) with width ``gamma``: :func:`gaussian_block`
    or :func:`laplacian_block` (``A_sqn``/``B_sqn`` serve the Gaussian only)."""
    if kernel == "gaussian":
        return gaussian_block(A, B, gamma, A_sqn=A_sqn, B_sqn=B_sqn)
    if kernel == "laplacian":
        return laplacian_block(A, B, gamma)
    raise ValueError(f"unknown kernel {kernel!r}; one of {', '.join(KERNELS)}")
