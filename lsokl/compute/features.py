"""Task-independent kernel feature maps: random Fourier features (FOGD) and Nystrom (NOGD).

The binary, multi-class and regression versions of FOGD/NOGD all learn a linear model on one of
these maps, so the maps live here, apart from any loss or update rule.

Both maps are *fixed* once built (FOGD draws its frequencies before the pass, NOGD freezes its
support vectors at the switch), so the features of a block of samples can be computed at once
with one BLAS call, and only the strict predict -> count -> update recursion stays sequential.
That is what makes the blocked loops exact: block features equal per-sample features up to the
summation order of BLAS, and the learner still sees sample t's features only after the update
of sample t-1.

Speed note: NumPy's float64 cos/sin run at ~25-85M values/s on the machines we measured, which
caps FOGD far below its feature-matrix BLAS cost. ``sincos`` below is a branch-free, vectorisable
float64 sine/cosine pair (Cody-Waite reduction by pi/2 in three parts, fdlibm/musl minimax
polynomials on [-pi/4, pi/4]) that LLVM compiles to SIMD code: ~10-30x faster, within 2 ulp of
libm for |x| < 2^19 and falling back to libm beyond that. It and the CSR projection
``csr_row_times_dense`` ask for 512-bit vectors (``cpu_hints.wide_vectors``: element-wise
loops, so the same bits as with 256) and their callers allocate the arrays they stream on cache
lines (``kernels.aligned_empty``).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

# dot: the reassociated dense dot (kernels.FAST_DOT)
from .kernels import JIT, aligned_copy, aligned_empty, dot
from .tasks import multiclass_hinge, regression_event, top_two
from .cpu_hints import wide_vectors

# Contraction only: FMA keeps the reduction exact-ish; reassociation would destroy the
# compensated cosine, so it is not allowed here.
SINCOS_JIT = dict(cache=True, nogil=True, fastmath={"contract"}, error_model="numpy")
# Reassociated reductions vectorise; they only change summation order (see kernels.FAST_DOT).
REDUCE_JIT = dict(cache=True, nogil=True, fastmath={"reassoc", "contract", "nsz"})

_INV_PIO2 = 6.36619772367581382433e-01
_PIO2_1 = 1.57079632673412561417e+00   # first 33 bits of pi/2
_PIO2_2 = 6.07710050630396597660e-11   # next 33 bits
_PIO2_3 = 2.02226624879595063154e-21   # the rest
# Beyond this |x| the quotient needs more than 20 bits and the 3-part reduction loses accuracy.
_REDUCTION_LIMIT = float(2**19)
_S1, _S2, _S3 = -1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04
_S4, _S5, _S6 = 2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10
_C1, _C2, _C3 = 4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05
_C4, _C5, _C6 = -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11


@njit(**SINCOS_JIT)
def _sincos_fast(p, out_cos, out_sin):
    """Vectorised cos/sin of p (float64); returns how many |p| exceed the reduction limit."""
    wide_vectors()
    big = 0
    for j in range(p.shape[0]):
        x = p[j]
        big += abs(x) > _REDUCTION_LIMIT
        fn = math.floor(x * _INV_PIO2 + 0.5)
        r = ((x - fn * _PIO2_1) - fn * _PIO2_2) - fn * _PIO2_3
        z = r * r
        w = z * z
        rs = _S2 + z * (_S3 + z * _S4) + z * w * (_S5 + z * _S6)
        s = r + z * r * (_S1 + z * rs)
        rc = z * (_C1 + z * (_C2 + z * _C3)) + w * w * (_C4 + z * (_C5 + z * _C6))
        hz = 0.5 * z
        one_minus = 1.0 - hz
        c = one_minus + (((1.0 - one_minus) - hz) + z * rc)
        q = np.int64(fn) & 3
        sq = c if (q & 1) else s
        cq = -s if (q & 1) else c
        if q & 2:
            sq = -sq
            cq = -cq
        out_sin[j] = sq
        out_cos[j] = cq
    return big


@njit(**JIT)
def sincos(p, out_cos, out_sin):
    """out_cos[j], out_sin[j] = cos(p[j]), sin(p[j]) for a 1-d float64 array."""
    if _sincos_fast(p, out_cos, out_sin):
        for j in range(p.shape[0]):
            if abs(p[j]) > _REDUCTION_LIMIT:
                out_cos[j] = math.cos(p[j])
                out_sin[j] = math.sin(p[j])


@njit(**JIT)
def fourier_from_projections(P, Z):
    """Z[r] = [cos(P[r]), sin(P[r])] for each row (all cosines, then all sines; spec 1.9)."""
    D = P.shape[1]
    for r in range(P.shape[0]):
        sincos(P[r], Z[r, :D], Z[r, D:])


@njit(**REDUCE_JIT)
def axpy(alpha, x, y):
    """y += alpha * x."""
    for k in range(x.shape[0]):
        y[k] += alpha * x[k]


@njit(**JIT)
def exp_neg_sqdist(cross, x_sqn, sv_sqn, inv_two_sigma2, out):
    """out[r, j] = exp(-max(x_sqn[r] + sv_sqn[j] - 2 cross[r, j], 0) / (2 sigma^2))."""
    for r in range(cross.shape[0]):
        for j in range(cross.shape[1]):
            d2 = x_sqn[r] + sv_sqn[j] - 2.0 * cross[r, j]
            if d2 < 0.0:
                d2 = 0.0
            out[r, j] = math.exp(-d2 * inv_two_sigma2)


# FMA contraction only: the four-term update below must keep its left-to-right order.
SPARSE_JIT = dict(cache=True, nogil=True, fastmath={"contract"})


@njit(**SPARSE_JIT)
def csr_row_times_dense(indptr, indices, values, i, W, o):
    """o = X[i] @ W for one CSR row, O(nnz * W.shape[1]); W row-major.

    The output row is accumulated over the row's non-zeros in ascending order, four non-zeros
    per sweep: o = (((o + v0 w0) + v1 w1) + v2 w2) + v3 w3 is the same chain of rounded
    multiply-adds as four one-at-a-time axpys (bit-identical results), but reads and writes the
    output row once per four non-zeros instead of once per non-zero; the one-at-a-time loop was
    bound by those loads and stores (3 memory operations per multiply-add)."""
    wide_vectors()
    n_out = W.shape[1]
    for c in range(n_out):
        o[c] = 0.0
    p, pe = indptr[i], indptr[i + 1]
    while p + 4 <= pe:
        # float32 values are converted (exactly) before they are used: the same float64 products
        v0, v1 = np.float64(values[p]), np.float64(values[p + 1])
        v2, v3 = np.float64(values[p + 2]), np.float64(values[p + 3])
        w0, w1, w2, w3 = W[indices[p]], W[indices[p + 1]], W[indices[p + 2]], W[indices[p + 3]]
        for c in range(n_out):
            o[c] = (((o[c] + v0 * w0[c]) + v1 * w1[c]) + v2 * w2[c]) + v3 * w3[c]
        p += 4
    while p < pe:
        v = np.float64(values[p])
        wrow = W[indices[p]]
        for c in range(n_out):
            o[c] = o[c] + v * wrow[c]
        p += 1


@njit(**JIT)
def csr_rows_times_dense(indptr, indices, values, idx, W, out):
    """out[r] = X[idx[r]] @ W for CSR X (see :func:`csr_row_times_dense`). Avoids SciPy's row
    gather and sparse product, which cost more than the arithmetic for short rows."""
    for r in range(idx.shape[0]):
        csr_row_times_dense(indptr, indices, values, idx[r], W, out[r])


# ----------------------------------------------------------------------------- linear steps
# Multi-class and regression FOGD/NOGD learn the same linear models on their features; only
# how the features are made differs.

@njit(**JIT)
def multiclass_linear_step(W, z, yi, V, eta, counts):
    """One strict online step of the m x D linear model W on features z (spec 2.9, 2.10):
    V = W z, count an argmax mistake, and on hinge loss l > 0 add eta z to row y and subtract
    it from the best wrong class's row."""
    for c in range(W.shape[0]):
        V[c] = dot(W[c], z)
    yhat, s = top_two(V, yi)
    counts[0] += 1
    if yhat != yi:
        counts[1] += 1
    if multiclass_hinge(V, yi, s) > 0.0:
        counts[2] += 1
        axpy(eta, z, W[yi])
        axpy(-eta, z, W[s])


@njit(**JIT)
def regression_linear_step(w, z, yt, eta, eps, counts, sq_loss):
    """One strict online step of the linear regressor w (spec 3): the squared loss of
    f = w.z, then w += eta (y - f) z iff |y - f| > eps."""
    delta, event = regression_event(dot(w, z), yt, eps, counts, sq_loss)
    if event:
        counts[2] += 1
        axpy(eta * delta, z, w)


# Samples per BLAS call: big enough to amortise the call and the gather of rows, small enough
# that the block's projections (block x D doubles) stay in L2.
BLOCK = 256


def rows_times(stream, idx, W: np.ndarray) -> np.ndarray:
    """X[idx] @ W for a Stream (dense: one BLAS call on the gathered rows), C-contiguous and on
    a cache line (sin/cos and the linear steps stream its rows)."""
    out = aligned_empty((len(idx), W.shape[1]))
    if stream.is_sparse:
        csr_rows_times_dense(stream.indptr, stream.indices, stream.values,
                             np.ascontiguousarray(idx, dtype=np.int64), W, out)
    else:
        np.matmul(stream.dense[idx], W, out=out)
    return out


class FourierMap:
    """z(x) = [cos(U'x); sin(U'x)] with U = randn(d, D) / sigma (spec 1.9): unnormalised, so
    z(x).z(y) ~= D kappa(x, y) and ||z(x)||^2 = D exactly."""

    def __init__(self, U: np.ndarray):
        self.U = aligned_copy(U)  # its rows are streamed by the projections

    @classmethod
    def draw(cls, source, n_features: int, n_components: int, sigma: float) -> "FourierMap":
        U = source.normal(n_features, n_components)
        U /= sigma  # in place: the same numbers, one d x D array less at the peak
        return cls(U)

    @property
    def n_components(self) -> int:
        return self.U.shape[1]

    def project(self, stream, idx) -> np.ndarray:
        """U' x for the rows ``idx`` of a Stream, one BLAS call (O(nnz D) for CSR)."""
        return rows_times(stream, idx, self.U)

    def transform(self, stream) -> np.ndarray:
        """Features of every row of a Stream, (n, 2D)."""
        n, D = stream.n_samples, self.n_components
        Z = np.empty((n, 2 * D))
        for a in range(0, n, BLOCK):
            idx = np.arange(a, min(a + BLOCK, n))
            fourier_from_projections(self.project(stream, idx), Z[a:a + len(idx)])
        return Z

    def scores(self, stream, W: np.ndarray) -> np.ndarray:
        """z(x) @ W' for every row, block by block: never holds the (n, 2D) feature matrix
        (16k test rows at D = 4000 would be 1 GB), so scoring a test set costs its arithmetic."""
        n, D = stream.n_samples, self.n_components
        W = np.asarray(W, dtype=np.float64)
        out = np.empty((n,) + W.shape[:-1])
        block = max(BLOCK, (1 << 22) // (2 * D))  # ~32 MB of features per block
        Z = np.empty((min(block, n), 2 * D))
        for a in range(0, n, block):
            idx = np.arange(a, min(a + block, n))
            fourier_from_projections(self.project(stream, idx), Z[:len(idx)])
            out[a:a + len(idx)] = Z[:len(idx)] @ W.T
        return out


class NystromMap:
    """z(x) = M [kappa(x, s)]_{s in S} with M = Lambda^{-1/2} V' from the top-k eigenpairs of
    the Gram matrix of the frozen support vectors S (spec 1.10)."""

    def __init__(self, sv: np.ndarray, sv_sqn: np.ndarray, M: np.ndarray, sigma: float):
        self.sv = np.ascontiguousarray(sv, dtype=np.float64)
        self.svT = np.ascontiguousarray(self.sv.T)
        self.sv_sqn = np.ascontiguousarray(sv_sqn, dtype=np.float64)
        self.MT = np.ascontiguousarray(M.T, dtype=np.float64)  # (B, k): Z = K @ M'
        self.inv_two_sigma2 = 1.0 / (2.0 * sigma * sigma)

    @staticmethod
    def eigen(gram: np.ndarray, rank: int, floor: float | None = None):
        """Top-``rank`` eigenpairs (descending) of a symmetric Gram matrix, via LAPACK ``eigh``.
        ``floor``: raise eigenvalues below it to it (None keeps them as they are)."""
        lam, V = np.linalg.eigh(gram)
        lam, V = lam[::-1][:rank], V[:, ::-1][:, :rank]
        if floor is not None:
            lam = np.maximum(lam, floor)
        return lam, V

    @staticmethod
    def eigen_cut_map(gram: np.ndarray, relative_cut: float) -> np.ndarray:
        """M = diag(lambda_i^{-1/2}) U' over the eigenpairs with lambda_i > relative_cut *
        lambda_max (BudgetedSVM's ``invSquareRoot``, LLSVM): M'M is the pseudo-inverse of the
        Gram matrix with that cut, so z(x).z(y) = k_x' pinv(K) k_y, the Nystrom kernel.
        BudgetedSVM keeps the cut directions as zero columns; they add nothing to any product,
        so they are dropped here (rank <= B rows)."""
        lam, U = np.linalg.eigh(gram)
        keep = lam > relative_cut * lam.max()
        return np.ascontiguousarray((U[:, keep] / np.sqrt(lam[keep])).T)

    def kernel_block(self, stream, idx) -> np.ndarray:
        cross = rows_times(stream, idx, self.svT)
        out = np.empty_like(cross)
        exp_neg_sqdist(cross, stream.sqnorms[idx], self.sv_sqn, self.inv_two_sigma2, out)
        return out

    def features(self, stream, idx) -> np.ndarray:
        """z(x) for the rows ``idx``, (len(idx), k)."""
        return np.ascontiguousarray(self.kernel_block(stream, idx) @ self.MT)

    def transform(self, stream) -> np.ndarray:
        n = stream.n_samples
        Z = np.empty((n, self.MT.shape[1]))
        for a in range(0, n, BLOCK):
            idx = np.arange(a, min(a + BLOCK, n))
            Z[a:a + len(idx)] = self.features(stream, idx)
        return Z
