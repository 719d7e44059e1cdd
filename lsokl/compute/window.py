"""Stage 1 of the blocked Perceptron/OGD (``blocked.py``) restricted to the support vectors that
can matter: the ones within a window of the sample on one wide feature.

The Gaussian kernel is below exp(-c w^2) (c = 1/(2 sigma^2)) whenever two vectors differ by more
than w on any single feature k, because ||x - s||^2 >= (x_k - s_k)^2. On a data set where some
feature spans many kernel widths (codrna's first feature spans [-1868, 0] with a standard
deviation of 190, against sigma = 8), most support vectors are that far from any given sample,
and their kernel values are all but zero. So the support set is also kept sorted by its values on
that feature, and a sample's block-start sum g = sum_j alpha_j kappa(x, s_j) runs only over the
contiguous run of support vectors with |x_k - s_k| <= w (two binary searches). The terms left out
are each below exp(-c w^2) in the exact kernel, and the per-sample loop's own value of each is
within the error bound's per-term allowance of that (``blocked`` module docstring), so the guard
stays rigorous with ``TAIL`` added to the per-value error: E grows by 2 A TAIL, with
w = sigma sqrt(2 TAIL_EXPONENT) and TAIL = exp(-0.99 TAIL_EXPONENT) (the 0.99 covers the
rounding of the searched bounds). Every decision is still the per-sample loop's. The width
trades pairs summed against decisions replayed: at TAIL_EXPONENT = 20 (w = 6.3 sigma,
TAIL = 2.5e-9, E ~ 1e-5 on codrna) an OGD pass over codrna replays 24 decisions and takes
0.48 s; at 45 (w = 9.5 sigma, TAIL below the rounding term 8u) 19 and 0.69 s; at 16, 63 and
0.45 s.

The window is used when it pays: on a fixed sample of the stream's rows, the fraction of pairs
within w on the best feature must be at most ``MAX_PAIR_FRACTION``
(:func:`window_feature`). Dense rows only (a sparse row's one feature is rarely informative),
binary tasks (the class-score path keeps the chunked product), double precision.

Nothing in SciPy or scikit-learn evaluates a kernel sum over a moving sorted window while the
support set grows (``sklearn.neighbors.KernelDensity``'s trees are built once, for a fixed set,
and take relative/absolute tolerances instead of this exact tail bound), hence the small
compiled pieces here.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .fastexp import EXP_JIT, exp_nonpositive_in_place
from .kernels import JIT, dot

#: the window's half-width w solves c w^2 = TAIL_EXPONENT (module docstring: the trade-off)
TAIL_EXPONENT = 20.0
#: the per-value allowance for a left-out term: its exact kernel is below exp(-c g^2) for a gap g
#: of at least w (1 - 1e-6) once the searched bounds x_k -+ w are rounded (features below
#: MAX_KEY w in magnitude, module docstring), so exp(-0.99 TAIL_EXPONENT) is a safe cover
TAIL = math.exp(-0.99 * TAIL_EXPONENT)
#: a feature is a window key only if its magnitudes stay below MAX_KEY w (rounding of x_k -+ w
#: then moves the window by less than 1e-6 w)
MAX_KEY = 1e9
#: use the window when at most this fraction of sampled pairs fall within w on the best feature
MAX_PAIR_FRACTION = 0.35
SAMPLE_ROWS = 2048
#: below this many support vectors the chunked product is as cheap (and sorting is overhead)
MIN_SUPPORT = 512


def window_width(sigma: float) -> float:
    """w with exp(-w^2 / (2 sigma^2)) = exp(-TAIL_EXPONENT)."""
    return float(sigma) * math.sqrt(2.0 * TAIL_EXPONENT)


def window_feature(stream, sigma: float) -> int | None:
    """The feature whose window excludes the most pairs of a fixed row sample, or None when even
    that one keeps more than MAX_PAIR_FRACTION of them (or the rows are sparse). Cached on the
    stream per sigma."""
    if stream.is_sparse or stream.n_samples < 2:
        return None
    cache = getattr(stream, "_lsokl_window", None)
    if cache is None:
        cache = stream._lsokl_window = {}
    if sigma in cache:
        return cache[sigma]
    n = stream.n_samples
    rows = np.unique(np.linspace(0, n - 1, min(SAMPLE_ROWS, n)).astype(np.int64))
    S = np.sort(stream.dense[rows], axis=0)  # (s, d), each column sorted
    w = window_width(sigma)
    s = S.shape[0]
    best, best_frac = None, MAX_PAIR_FRACTION
    for k in range(S.shape[1]):
        col = S[:, k]
        if max(abs(col[0]), abs(col[-1])) > MAX_KEY * w:
            continue
        # ordered pairs (a, b), a != b, with |col[a] - col[b]| <= w
        within = np.searchsorted(col, col + w, side="right") - np.searchsorted(col, col - w, side="left")
        frac = (within.sum() - s) / float(s * (s - 1))
        if frac <= best_frac:
            best, best_frac = k, frac
    if best is not None and np.abs(stream.dense[:, best]).max() > MAX_KEY * w:
        best = None  # a value outside the sample is too large for the rounding argument
    cache[sigma] = best
    return best


@njit(**JIT)
def insert_sorted(sv, sv_sqn, alpha, first, stop, feature, keys, svT_s, sqn_s, alpha_s, size,
                  new_order):
    """Merge support slots first..stop-1 into the sorted copy (``size[0]`` entries so far, sorted
    by ``keys``): keys, per-feature rows ``svT_s`` (d x capacity), squared norms and
    coefficients, moved from the back so the merge is in place. ``new_order`` is scratch."""
    n_new = stop - first
    if n_new <= 0:
        return
    nk = np.empty(n_new)
    for q in range(n_new):
        nk[q] = sv[first + q, feature]
    perm = np.argsort(nk, kind="mergesort")
    for q in range(n_new):
        new_order[q] = first + perm[q]
    a = size[0] - 1
    b = n_new - 1
    d = svT_s.shape[0]
    for out in range(size[0] + n_new - 1, -1, -1):
        take_new = b >= 0 and (a < 0 or nk[perm[b]] >= keys[a])
        if take_new:
            slot = new_order[b]
            keys[out] = nk[perm[b]]
            for k in range(d):
                svT_s[k, out] = sv[slot, k]
            sqn_s[out] = sv_sqn[slot]
            alpha_s[out] = alpha[slot]
            b -= 1
        else:
            if out == a:  # the rest of the old entries are already in place
                break
            keys[out] = keys[a]
            for k in range(d):
                svT_s[k, out] = svT_s[k, a]
            sqn_s[out] = sqn_s[a]
            alpha_s[out] = alpha_s[a]
            a -= 1
    size[0] += n_new


@njit(**EXP_JIT)
def _kernel_in_place(c, x_sqn, s_sqn, inv2s2, ebits):
    """c[j] <- exp(-max(x_sqn + s_sqn[j] - 2 c[j], 0) inv2s2): element-wise loops, so the exp
    vectorises (a running sum beside it would keep it scalar); ``ebits``: int64 scratch."""
    for j in range(c.shape[0]):
        d2 = x_sqn + s_sqn[j] - 2.0 * c[j]
        c[j] = -max(d2, 0.0) * inv2s2
    exp_nonpositive_in_place(c, ebits)


@njit(**JIT)
def windowed_scores(dense, sqn, idx, feature, w, keys, svT_s, sqn_s, alpha_s, m, inv2s2, cross,
                    ebits, g):
    """g[r] = sum over the sorted support entries j < m with |x_k - s_k| <= w (k = ``feature``)
    of alpha_j kappa(x_r, s_j): the cross products one axpy per non-zero feature over the
    window, then the blocked path's vectorised exp on (-inf, 0] (``exp_nonpositive_in_place``)
    and a reassociated dot with the coefficients (the guard allows any summation order)."""
    d = svT_s.shape[0]
    for r in range(idx.shape[0]):
        i = idx[r]
        x = dense[i]
        lo = np.searchsorted(keys[:m], x[feature] - w, side="left")
        hi = np.searchsorted(keys[:m], x[feature] + w, side="right")
        n = hi - lo
        c = cross[:n]
        for j in range(n):
            c[j] = 0.0
        for k in range(d):
            v = x[k]
            if v != 0.0:
                col = svT_s[k, lo:hi]
                for j in range(n):
                    c[j] += v * col[j]
        _kernel_in_place(c, sqn[i], sqn_s[lo:hi], inv2s2, ebits[:n])
        g[r] = dot(c, alpha_s[lo:hi])


class SupportWindow:
    """The support set sorted by its values on ``feature``, grown block by block."""

    def __init__(self, feature: int, sigma: float, n_features: int, capacity: int):
        self.feature = int(feature)
        self.width = window_width(sigma)
        self.tail = TAIL  # the per-value error allowance the guard adds for left-out terms
        self.keys = np.empty(capacity)
        self.svT = np.empty((n_features, capacity))
        self.sqn = np.empty(capacity)
        self.alpha = np.empty(capacity)
        self.size = np.zeros(1, dtype=np.int64)
        self._order = np.empty(capacity, dtype=np.int64)
        self._cross = np.empty(capacity)
        self._ebits = np.empty(capacity, dtype=np.int64)

    @property
    def capacity(self) -> int:
        return self.keys.shape[0]

    def add(self, sv, sv_sqn, alpha, first: int, stop: int) -> None:
        """Merge slots first..stop-1 (new support vectors, appended in slot order)."""
        insert_sorted(sv, sv_sqn, alpha, first, stop, self.feature, self.keys, self.svT,
                      self.sqn, self.alpha, self.size, self._order)

    def scores(self, stream, idx, inv2s2: float) -> np.ndarray:
        """g[r] = the block-start sum over the window of row idx[r] (``windowed_scores``)."""
        g = np.empty(len(idx))
        windowed_scores(stream.dense, stream.sqnorms, np.ascontiguousarray(idx, dtype=np.int64),
                        self.feature, self.width, self.keys, self.svT, self.sqn, self.alpha,
                        int(self.size[0]), inv2s2, self._cross, self._ebits, g)
        return g
