"""Unbudgeted kernel Perceptron and OGD (binary and multi-class) played in blocks, exactly.

The per-sample loop computes one kernel row per step against a growing support set: O(m d) of
cache-unfriendly work plus m scalar ``exp`` calls per sample. Here a block of b samples is
handled in three stages:

1. **Model-independent batch.** The kernel values of the block against the support set *as it
   stood at the block's start* come from one BLAS call per chunk of support vectors (dense rows,
   in single precision, below; CSR rows use an O(nnz m) product; 0/1 rows popcounts), then a
   vectorised exp, then the product with the coefficients: ``g = K_block @ alpha``. The block's
   own kernel, for the samples that join the support set inside the block, is built one column
   per joining sample (``own_kernel_column``).
2. **Sequential recursion, in order.** For each sample of the block, f = g[c] plus the terms of
   the block's samples that joined before it (from the b x b kernel), then predict, count and
   update exactly as the per-sample loop does.
3. **Exactness guard.** BLAS and NumPy's SIMD ``exp`` round differently from the per-sample
   loop (ascending-feature dot products, libm ``exp``, oldest-first sum), so f differs from the
   loop's value by a few units in the last place. Every decision the learner takes is a
   comparison of f (or of class scores) with a threshold, and the update values (y, eta y,
   +-step) do not depend on f. So each decision is checked against a rigorous floating-point
   error bound E on |f_block - f_loop| (below); when f is within E of the threshold, f is
   recomputed by the per-sample loop's own compiled code (``tasks.observe_binary`` /
   ``observe_multiclass``), bit for bit. Every prediction, mistake count, support set and
   coefficient is therefore the per-sample loop's; ``tests/learners/test_blocked.py`` checks it
   on streams built to sit on the thresholds (duplicates, exact cancellations, f = 1).

The error bound, with u = 2^-53, gamma_n = n u / (1 - n u), d features, c = 1/(2 sigma^2), and
for a support vector s with coefficient alpha: both dot products are within gamma_d ||x|| ||s||
<= gamma_d (|x|^2 + |s|^2) / 2 of the true one (any summation order, FMA or not); the squared
distance adds a few roundings of terms bounded by 2(|x|^2 + |s|^2); the clamp at 0 and exp on
(-inf, 0] are 1-Lipschitz; each exp is within 2 ulp (NumPy) or 1 ulp (libm) of the true value,
and kernel values are <= 1. Hence |k_block - k_loop| <= c G (|x|^2 + |s|^2) + 8u with
G = 2.02 gamma_d + 24u, and summing m terms in any order adds at most gamma_{m+1} sum|alpha|
per path:

    E = 2 * ( c G (|x|^2 A + S) + (8u + 2 gamma_{m+1}) A ),  A = sum|alpha_j|, S = sum|alpha_j| |s_j|^2

(the factor 2 is slack). A and S are maintained as the support set grows. On a9a after 12,000
support vectors E is about 1e-8: a recomputation is rare, and exact ties (f = 0 from cancelling
duplicates, the empty model) always take the exact path.

**Single precision.** For dense and CSR rows stage 1 runs in float32 (half the arithmetic and
twice the exp lanes): the support set is kept a second time as float32 (d x capacity), the
block's rows are rounded to float32, one SGEMM (dense) or the O(nnz m) product on float32 copies
of the CSR values gives x.s, and the squared distance and exp are computed in float32
(``exp32_nonpositive``); the sum with alpha stays in float64. The decisions stay the loop's: only
the error bound widens. With u32 = 2^-24: rounding x and s costs (2 u32 + u32^2)|x||s|, the SGEMM
gamma32_d (1 + u32)^2 |x||s| (any order), the float32 norms and the two float32 operations of the
distance 6.03 u32 (|x|^2 + |s|^2); so the distance errs by at most
(1.001 gamma32_d + 6.03 u32 + gamma_d) (|x|^2 + |s|^2), G becomes 1.01 gamma32_d + 8 u32 + G
(``dot_error_factor32``), and the per-value term 8u becomes 4 u32 (exp32 within 1.5 u32, the
rounding of its argument -c d2 within 2.01 u32 |t| e^t <= 0.75 u32, libm's 1 ulp on the loop's
side). Only values of magnitude 0 or in [2^-40, 2^40] take this path (``in_single_range``:
products stay normal floats). E is then ~10^8 times larger (about 0.06 on the 100,000 x 54
covtype-shaped stream), so about 1% of the samples are replayed by the per-sample loop; a block
where more than 1 in 12 are sends the next 8 blocks to double precision, which is then cheaper.
``SINGLE_PRECISION = False`` turns the path off (the decisions are the same either way).
(kddcup99 scaled to [0, 1], CSR: OGD's pass 1.75x faster, 398 of 494,021 samples replayed.)

**Support window.** Binary dense rows with a feature spanning many kernel widths (codrna's raw
first feature, [-1868, 0] against sigma = 8) play stage 1 over each sample's window of the
support set on that feature instead, in double precision (``window.py``: the left-out terms are
each below exp(-c w^2), added to the per-value error of E).

Regression needs more than the same decisions: its prediction is the value f itself (the
squared loss sums it and regression OGD stores eta (y - f)), so f must be the loop's to the last
bit. Its blocks therefore repeat the loop's arithmetic exactly (``exact_block_sums``: the same
cross products, libm exp and oldest-first sum) and no guard is needed; what the block changes is
only the loop nest, a chunk of support vectors read once per block instead of once per sample,
so the gain is smaller than for classification (libm's scalar exp stays). The
budgeted learners are not blocked (yet): their rows hold B = 100-200 values that stay in
cache, so only the scalar exp would be saved, and most of them rescale, shrink or project the
whole support set at every step; RBP (replacement only) is the one candidate left, not done.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .duplicates import BlockRepeats
from .fastexp import (EXP_JIT, exp32_nonpositive, exp_nonpositive, exp_nonpositive_in_place,  # noqa: F401
                      gaussian32_from_cross, gaussian_from_cross)
from .features import REDUCE_JIT
from .kernels import JIT, append_slot, dot, store_row
from .memory import default_learner_estimate
from .tasks import (multiclass_hinge, observe_binary, observe_multiclass, regression_coefficient,
                    regression_event, store_pair, top_two)
from .window import SupportWindow, window_feature

UNIT_ROUNDOFF = 2.0**-53
UNIT_ROUNDOFF_32 = 2.0**-24
PERCEPTRON, OGD = 0, 1
# Samples per block: enough rows for BLAS to run near its peak; the in-block recursion costs
# O(b j) per block for j joining samples, small against the O(b m) kernel values. 256 was
# measured best of 64..512 on covtype-shaped and a9a (benchmarks/RESULTS.md).
BLOCK = 256


def dot_error_factor(n_features: int) -> float:
    """G in the module docstring: the kernel-value error per unit of |x|^2 + |s|^2 (times c)."""
    u = UNIT_ROUNDOFF
    gamma_d = n_features * u / (1.0 - n_features * u)
    return 2.02 * gamma_d + 24.0 * u


def dot_error_factor32(n_features: int) -> float:
    """G for the single-precision stage 1 (see "Single precision" in the module docstring)."""
    u32 = UNIT_ROUNDOFF_32
    gamma_d = n_features * u32 / (1.0 - n_features * u32)
    return 1.01 * gamma_d + 8.0 * u32 + dot_error_factor(n_features)


# Absolute error of one kernel value from exp and the rounding of its argument: 8u in double
# precision (module docstring), 4 u32 in single (module docstring, "Single precision").
KERNEL_ERROR_64 = 8.0 * UNIT_ROUNDOFF
KERNEL_ERROR_32 = 4.0 * UNIT_ROUNDOFF_32


@njit(**JIT)
def error_bound(x_sqn, A, S, m, c_G, e_k):
    """E in the module docstring for a sample of squared norm x_sqn against m support vectors
    (``e_k``: the kernel value's absolute error from exp, KERNEL_ERROR_64 or _32)."""
    u = 1.1102230246251565e-16
    gm = (m + 1) * u / (1.0 - (m + 1) * u)
    return 2.0 * (c_G * (x_sqn * A + S) + (e_k + 2.0 * gm) * A)


# ----------------------------------------------------------------------------- in-block kernel
@njit(**JIT)
def own_kernel_column(xs, sqn, idx, c, inv2s2, K_in, xd, exact=False):
    """K_in[c2, c] = kappa(x_idx[c2], x_idx[c]) for the block's later samples c2 > c: computed
    when sample c joins the support set, so only the joined samples' columns are ever built.
    ``xd`` is a zeroed scratch vector of length d (left zeroed). ``exact``: with the per-sample
    loop's very arithmetic (``kernels.kernel_row``: x_c2's non-zero features in ascending order,
    multiply then add, libm exp), bit for bit its value; otherwise within the error bound."""
    dense, indptr, indices, values, is_sparse = xs
    i = idx[c]
    if is_sparse:
        for p in range(indptr[i], indptr[i + 1]):
            xd[indices[p]] = values[p]
    for c2 in range(c + 1, idx.shape[0]):
        i2 = idx[c2]
        acc = 0.0
        if is_sparse:
            for p in range(indptr[i2], indptr[i2 + 1]):
                acc += values[p] * xd[indices[p]]
        elif exact:
            x2 = dense[i2]
            for k in range(x2.shape[0]):
                v = x2[k]
                if v != 0.0:
                    acc += v * dense[i, k]
        else:
            acc = dot(dense[i2], dense[i])
        d2 = sqn[i2] + sqn[i] - 2.0 * acc
        if d2 < 0.0:
            d2 = 0.0
        K_in[c2, c] = math.exp(-d2 * inv2s2)
    if is_sparse:
        for p in range(indptr[i], indptr[i + 1]):
            xd[indices[p]] = 0.0


# ----------------------------------------------------------------------------- binary
@njit(**JIT)
def play_block_binary(xs, sqn, y, idx, g, K_in, sv, sv_sqn, sv_order, alpha, size, counts, inv2s2,
                      krow, rule, eta, sums, c_G, e_k, joined, recomputed, xd):
    """Stage 2 and 3 for one block of binary samples ``idx`` (module docstring).

    ``g[c]``: the block-start support set's contribution to f for sample c; ``K_in[c, a]``: the
    block's own kernel, its column a filled when sample a joins (``own_kernel_column``). ``rule``: PERCEPTRON (store y on sign(f) != y) or OGD (store eta y on
    y f < 1). ``sums`` = [A, S] of the error bound, updated here."""
    m0 = size[0]
    n_joined = 0
    for c in range(idx.shape[0]):
        i = idx[c]
        yt = y[i]
        m = size[0]
        f = g[c]
        for q in range(n_joined):
            f += alpha[m0 + q] * K_in[c, joined[q]]
        E = error_bound(sqn[i], sums[0], sums[1], m, c_G, e_k)
        near = abs(f) <= E
        if rule == OGD and abs(yt * f - 1.0) <= E:
            near = True
        if near:  # replay this step with the per-sample loop's own arithmetic
            recomputed[0] += 1
            f, mistake = observe_binary(xs, sqn, i, yt, sv, sv_sqn, sv_order, alpha, m, inv2s2,
                                        krow, counts)
        else:
            counts[0] += 1
            mistake = (1.0 if f >= 0.0 else -1.0) != yt
            if mistake:
                counts[1] += 1
        if rule == PERCEPTRON:
            fire = mistake
            coef = yt
        else:
            fire = yt * f < 1.0
            coef = eta * yt
        if fire:
            counts[2] += 1
            slot = append_slot(sv_order, m)
            store_row(xs, i, sqn[i], sv, sv_sqn, slot)
            alpha[slot] = coef
            size[0] = m + 1
            joined[n_joined] = c
            n_joined += 1
            own_kernel_column(xs, sqn, idx, c, inv2s2, K_in, xd)
            sums[0] += abs(coef)
            sums[1] += abs(coef) * sqn[i]


# ----------------------------------------------------------------------------- multi-class
@njit(**JIT)
def scores_are_decided(V, yt, E):
    """True when (y_hat, s) and the hinge sign cannot change under a perturbation of the class
    scores by at most E each: every comparison they rest on is won by more than 2E."""
    y_hat, s = top_two(V, yt)
    for r in range(V.shape[0]):
        if r != y_hat and V[r] >= V[y_hat] - 2.0 * E:
            return False
        if r != yt and r != s and s >= 0 and V[r] >= V[s] - 2.0 * E:
            return False
    if s >= 0 and abs(1.0 - (V[yt] - V[s])) <= 2.0 * E:
        return False
    return True


@njit(**JIT)
def play_block_multiclass(xs, sqn, y, idx, G, K_in, sv, sv_sqn, sv_order, alpha, size, counts,
                          inv2s2, krow, scores, on_margin, step, sums, c_G, e_k, joined, recomputed, xd):
    """Multi-class Perceptron (on_margin False) / OGD (True) over one block: class scores from
    ``G`` (block-start support set) plus the block's joined samples, then the per-sample loop's
    decision rule (``tasks.play_multiclass`` without decay or budget), guarded as in binary."""
    m0 = size[0]
    n_classes = scores.shape[0]
    n_joined = 0
    for c in range(idx.shape[0]):
        i = idx[c]
        yt = y[i]
        m = size[0]
        for r in range(n_classes):
            scores[r] = G[c, r]
        for q in range(n_joined):
            k = K_in[c, joined[q]]
            for r in range(n_classes):
                scores[r] += alpha[m0 + q, r] * k
        E = error_bound(sqn[i], sums[0], sums[1], m, c_G, e_k)
        if scores_are_decided(scores, yt, E):
            y_hat, s = top_two(scores, yt)
            counts[0] += 1
            mistake = y_hat != yt
            if mistake:
                counts[1] += 1
        else:
            recomputed[0] += 1
            mistake, s = observe_multiclass(xs, sqn, i, yt, sv, sv_sqn, sv_order, alpha, m,
                                            inv2s2, krow, scores, counts)
        fire = multiclass_hinge(scores, yt, s) > 0.0 if on_margin else mistake
        if not fire:
            continue
        counts[2] += 1
        slot = append_slot(sv_order, m)
        size[0] = m + 1
        store_row(xs, i, sqn[i], sv, sv_sqn, slot)
        store_pair(alpha, slot, yt, s, step)
        joined[n_joined] = c
        n_joined += 1
        own_kernel_column(xs, sqn, idx, c, inv2s2, K_in, xd)
        weight = step if s < 0 else 2.0 * step
        sums[0] += weight
        sums[1] += weight * sqn[i]


# ----------------------------------------------------------------------------- regression
@njit(**JIT)
def exact_block_sums(xs, sqn, idx, sv, sv_sqn, alpha, m0, inv2s2, chunk, cross, g):
    """g[c] = sum_{j < m0} alpha[j] kappa(x_idx[c], s_j), bit for bit the per-sample loop's
    partial sum over the block-start support set: the same cross products (one axpy over the
    slots per non-zero feature, ascending, multiply then add), the same libm exp, the same
    oldest-first sum. Only the loop nest changes: a chunk of support vectors (``chunk`` slots,
    ``cross`` its scratch row) is read once for the whole block instead of once per sample."""
    dense, indptr, indices, values, is_sparse = xs
    svt = sv.T
    for c in range(idx.shape[0]):
        g[c] = 0.0
    for j0 in range(0, m0, chunk):
        j1 = min(m0, j0 + chunk)
        w = j1 - j0
        o = cross[:w]
        for c in range(idx.shape[0]):
            i = idx[c]
            for j in range(w):
                o[j] = 0.0
            if is_sparse:
                for p in range(indptr[i], indptr[i + 1]):
                    v = values[p]
                    col = svt[indices[p], j0:j1]
                    for j in range(w):
                        o[j] += v * col[j]
            else:
                x = dense[i]
                for k in range(x.shape[0]):
                    v = x[k]
                    if v != 0.0:
                        col = svt[k, j0:j1]
                        for j in range(w):
                            o[j] += v * col[j]
            x_sqn = sqn[i]
            f = g[c]
            for j in range(w):
                d2 = x_sqn + sv_sqn[j0 + j] - 2.0 * o[j]
                if d2 < 0.0:
                    d2 = 0.0
                f += alpha[j0 + j] * math.exp(-d2 * inv2s2)
            g[c] = f


@njit(**JIT)
def play_block_regression(xs, sqn, y, idx, g, K_in, sv, sv_sqn, sv_order, alpha, size, counts,
                          sq_loss, inv2s2, eps, by_sign, eta, joined, xd):
    """Regression Perceptron (by_sign) / OGD over one block: f = g[c] plus the terms of the
    block's samples that joined before c, in joining order, which is exactly the per-sample
    loop's oldest-first sum (``tasks.play_regression`` without decay, budget or epsilon
    changes); then the same event, loss and update."""
    m0 = size[0]
    n_joined = 0
    for c in range(idx.shape[0]):
        i = idx[c]
        m = size[0]
        f = g[c]
        for q in range(n_joined):
            f += alpha[m0 + q] * K_in[c, joined[q]]
        delta, event = regression_event(f, y[i], eps, counts, sq_loss)
        if not event:
            continue
        counts[2] += 1
        slot = append_slot(sv_order, m)
        size[0] = m + 1
        store_row(xs, i, sqn[i], sv, sv_sqn, slot)
        alpha[slot] = regression_coefficient(delta, eta, by_sign)
        joined[n_joined] = c
        n_joined += 1
        own_kernel_column(xs, sqn, idx, c, inv2s2, K_in, xd, True)


# ----------------------------------------------------------------------------- stage 1
# exp and the Gaussian kernel values from cross products: lsokl/compute/fastexp.py

@njit(**REDUCE_JIT)
def add_kernel32_times_alpha(cross, x_sqn, s_sqn, inv2s2, alpha, g):
    """g[r] += sum_j K[r, j] alpha[j] from float32 cross products (kernel values in float32,
    the sum in float64; the error bound holds for any summation order)."""
    gaussian32_from_cross(cross, x_sqn, s_sqn, inv2s2)
    for r in range(cross.shape[0]):
        row = cross[r]
        acc = 0.0
        for j in range(row.shape[0]):
            acc += alpha[j] * np.float64(row[j])
        g[r] += acc


@njit(**JIT)
def add_kernel32_times_alpha_classes(cross, x_sqn, s_sqn, inv2s2, alpha, G):
    gaussian32_from_cross(cross, x_sqn, s_sqn, inv2s2)
    n_classes = alpha.shape[1]
    for r in range(cross.shape[0]):
        row = cross[r]
        for j in range(row.shape[0]):
            k = np.float64(row[j])
            for q in range(n_classes):
                G[r, q] += k * alpha[j, q]


# Single precision is used only when every value is 0 or of magnitude in [2^-40, 2^40]: products
# then stay normal floats and sums far from overflow, so the relative error analysis holds.
F32_MIN, F32_MAX = 2.0**-40, 2.0**40


@njit(**JIT)
def in_single_range(values):
    for v in values:
        a = abs(v)
        if a != 0.0 and not (F32_MIN <= a <= F32_MAX):
            return False
    return True


@njit(**JIT)
def pack_support32(sv, sv_sqn, first, stop, svT32, sqn32):
    """svT32[:, j] = float32(sv[j]), sqn32[j] = float32(sv_sqn[j]) for first <= j < stop; False
    if a stored value is outside the single-precision range (then that path must not be used)."""
    for j in range(first, stop):
        for k in range(sv.shape[1]):
            v = sv[j, k]
            a = abs(v)
            if a != 0.0 and not (F32_MIN <= a <= F32_MAX):
                return False
            svT32[k, j] = np.float32(v)
        sqn32[j] = np.float32(sv_sqn[j])
    return True


@njit(**JIT)
def add_kernel_times_alpha(cross, x_sqn, s_sqn, inv2s2, alpha, g):
    """Turn the cross products of a chunk of support vectors into kernel values (in place) and
    add their contribution g[r] += sum_j K[r, j] alpha[j] (binary: alpha 1-d, g 1-d)."""
    gaussian_from_cross(cross, x_sqn, s_sqn, inv2s2)
    for r in range(cross.shape[0]):
        g[r] += dot(cross[r], alpha)


@njit(**JIT)
def add_kernel_times_alpha_classes(cross, x_sqn, s_sqn, inv2s2, alpha, G):
    """Multi-class version: G[r, q] += sum_j K[r, j] alpha[j, q]."""
    gaussian_from_cross(cross, x_sqn, s_sqn, inv2s2)
    n_classes = alpha.shape[1]
    for r in range(cross.shape[0]):
        row = cross[r]
        for j in range(row.shape[0]):
            k = row[j]
            for q in range(n_classes):
                G[r, q] += k * alpha[j, q]


@njit(**REDUCE_JIT)
def csr_rows_times_columns(indptr, indices, values, idx, svT, j0, j1, out):
    """out[r, j - j0] = X[idx[r]] . S[j] for j0 <= j < j1: CSR rows against the support buffer
    through ``svT``, its d x capacity transpose (each feature's values over the slots
    contiguous), so the cost is O(nnz (j1 - j0)) vectorised axpys, four non-zeros per sweep
    over the output row (1.6x fewer loads and stores of it than one at a time; stage 1 is
    guarded, so its summation order is free)."""
    w = j1 - j0
    for r in range(idx.shape[0]):
        i = idx[r]
        o = out[r, :w]
        o[:] = 0.0
        p, pe = indptr[i], indptr[i + 1]
        while p + 4 <= pe:
            v0, v1, v2, v3 = values[p], values[p + 1], values[p + 2], values[p + 3]
            c0, c1 = svT[indices[p], j0:j1], svT[indices[p + 1], j0:j1]
            c2, c3 = svT[indices[p + 2], j0:j1], svT[indices[p + 3], j0:j1]
            for j in range(w):
                o[j] += (v0 * c0[j] + v1 * c1[j]) + (v2 * c2[j] + v3 * c3[j])
            p += 4
        while p < pe:
            v = values[p]
            col = svT[indices[p], j0:j1]
            for j in range(w):
                o[j] += v * col[j]
            p += 1


# ----------------------------------------------------------------------------- binary inputs
# LIBSVM's a*a and w*a sets (and any 0/1 data) are binary: x.s is then the number of features
# both have, an exact small integer. Packed as bit sets, one 64-bit word per 64 features, it is a
# popcount of ANDed words: 2 words instead of 14 floating-point axpys per kernel value on a9a,
# and exactly the float sum the per-sample loop computes (sums of 1.0 below 2^53 are exact).
_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)
_U1, _U2, _U4, _U56, _U63, _U6 = (np.uint64(v) for v in (1, 2, 4, 56, 63, 6))


@njit(**JIT)
def popcount(v):
    """Bits set in a uint64 (SWAR; LLVM turns it into the popcnt instruction)."""
    v = v - ((v >> _U1) & _M1)
    v = (v & _M2) + ((v >> _U2) & _M2)
    v = (v + (v >> _U4)) & _M4
    return (v * _H01) >> _U56


@njit(**JIT)
def csr_is_binary(values):
    for v in values:
        if v != 0.0 and v != 1.0:
            return False
    return True


@njit(**JIT)
def pack_csr_rows(indptr, indices, values, idx, out):
    """out[r] = bit set of X[idx[r]] (out is b x words, zeroed here)."""
    out[:] = 0
    for r in range(idx.shape[0]):
        i = idx[r]
        for p in range(indptr[i], indptr[i + 1]):
            if values[p] != 0.0:
                k = np.uint64(indices[p])
                out[r, k >> _U6] |= _U1 << (k & _U63)


@njit(**JIT)
def pack_dense_rows(dense, idx, out):
    out[:] = 0
    for r in range(idx.shape[0]):
        x = dense[idx[r]]
        for k in range(x.shape[0]):
            if x[k] != 0.0:
                kk = np.uint64(k)
                out[r, kk >> _U6] |= _U1 << (kk & _U63)


@njit(**JIT)
def pack_support(sv, first, stop, bits):
    """bits[:, j] = bit set of support slot j for first <= j < stop; False if a slot is not
    binary (then the bit-set path must not be used)."""
    for j in range(first, stop):
        for w in range(bits.shape[0]):
            bits[w, j] = 0
        for k in range(sv.shape[1]):
            v = sv[j, k]
            if v == 0.0:
                continue
            if v != 1.0:
                return False
            kk = np.uint64(k)
            bits[kk >> _U6, j] |= _U1 << (kk & _U63)
    return True


@njit(**JIT)
def binary_rows_times_columns(xbits, bits, j0, j1, out):
    """out[r, j - j0] = popcount(x_r AND s_j) = x_r . s_j for binary rows and support vectors."""
    w = j1 - j0
    for r in range(xbits.shape[0]):
        o = out[r, :w]
        o[:] = 0.0
        for wd in range(xbits.shape[1]):
            xv = xbits[r, wd]
            if xv == 0:
                continue
            col = bits[wd, j0:j1]
            for j in range(w):
                o[j] += np.float64(popcount(xv & col[j]))


@njit(**REDUCE_JIT)
def add_binary_kernel_times_alpha(cross, x_sqn, s_sqn, exp_table, alpha, g):
    """g[r] += sum_j alpha[j] kappa(x_r, s_j) for binary rows and support vectors, from their
    popcount cross products: the squared distance |x|^2 + |s|^2 - 2 x.s is an exact small
    integer that indexes ``exp_table`` (libm's exp of -n / (2 sigma^2), the per-sample loop's
    very values). Only the order of the final sum differs from the loop's."""
    for r in range(cross.shape[0]):
        row = cross[r]
        xr = x_sqn[r]
        acc = 0.0
        for j in range(row.shape[0]):
            d2 = xr + s_sqn[j] - 2.0 * row[j]
            acc += alpha[j] * exp_table[np.int64(max(d2, 0.0))]
        g[r] += acc


@njit(**JIT)
def exp_table_for(max_d2, inv2s2):
    """exp(-n / (2 sigma^2)) for n = 0..max_d2, computed as the per-sample loop computes it."""
    out = np.empty(max_d2 + 1)
    for n in range(max_d2 + 1):
        d2 = np.float64(n)
        out[n] = math.exp(-d2 * inv2s2)
    return out


@njit(**JIT)
def copy_joined_bits(xbits, joined, n_joined, first_slot, bits):
    for q in range(n_joined):
        for wd in range(xbits.shape[1]):
            bits[wd, first_slot + q] = xbits[joined[q], wd]


def stream_values32(stream) -> np.ndarray:
    """A CSR stream's values rounded to float32 (cached on the stream object)."""
    cached = getattr(stream, "_lsokl_values32", None)
    if cached is None:
        cached = stream._lsokl_values32 = stream.values.astype(np.float32)
    return cached


def stream_is_binary(stream) -> bool:
    """All values 0 or 1 (cached on the stream object)."""
    cached = getattr(stream, "_lsokl_binary", None)
    if cached is None:
        if stream.is_sparse:
            cached = bool(csr_is_binary(stream.values))
        else:
            cached = bool(csr_is_binary(stream.dense.ravel()))
        stream._lsokl_binary = cached
    return cached


# Support vectors per chunk: the block's b x CHUNK cross products (1 MiB in float32, 2 in double
# at b = 256) stay in L2/L3 between the BLAS call, the exp pass and the product with alpha.
CHUNK = 1024
# Dense and CSR rows play stage 1 in single precision (False: always double; the decisions are
# the same).
SINGLE_PRECISION = True
# Binary dense rows whose window feature excludes most pairs (``window.py``) sum over each sample's
# window of the support set only (False: never; the decisions are the same).
WINDOW = True
# A single-precision block that replays more than 1 in SINGLE_RECOMPUTE_LIMIT of its samples
# through the per-sample loop sends the next blocks to double precision: SINGLE_HOLD_BLOCKS
# after a first such block, twice as many after each further one in a row (up to
# SINGLE_HOLD_MAX). Where single precision fails for good (codrna: raw features up to 1,868,
# so its error bound passes 1 and every sample of the block is replayed), the retries then
# cost a few blocks per pass instead of one block in nine (1 in 8 of codrna's samples).
SINGLE_RECOMPUTE_LIMIT = 12
SINGLE_HOLD_BLOCKS = 8
SINGLE_HOLD_MAX = 1024


def block_scores(stream, idx, sv, sv_sqn, alpha, m0, inv2s2, scratch, xbits=None, bits=None,
                 exp_table=None, single=None):
    """g = K(X[idx], S[:m0]) @ alpha[:m0] (b, or b x classes), chunk by chunk over the support
    set: dense rows one BLAS call per chunk, CSR rows O(nnz) axpys, binary rows and support
    (``xbits``/``bits`` given) popcounts; then the vectorised exp. ``single`` = (svT32, sqn32):
    stage 1 in single precision (one SGEMM or float32 CSR product per chunk, exp in float32)."""
    b = len(idx)
    g = np.zeros((b,) + alpha.shape[1:])
    if m0 == 0:
        return g
    if single is not None:
        svT32, sqn32 = single
        # CSR rows: the same O(nnz m) product as in double, on float32 copies of the values
        rows32 = None if stream.is_sparse else stream.dense[idx].astype(np.float32)
        values32 = stream_values32(stream) if stream.is_sparse else None
        x_sqn32 = stream.sqnorms[idx].astype(np.float32)
        c32 = np.float32(inv2s2)
        add32 = add_kernel32_times_alpha if alpha.ndim == 1 else add_kernel32_times_alpha_classes
        scratch32 = scratch.view(np.float32)
        for j0 in range(0, m0, CHUNK):
            j1 = min(m0, j0 + CHUNK)
            C = scratch32[:b * (j1 - j0)].reshape(b, j1 - j0)
            if rows32 is None:
                csr_rows_times_columns(stream.indptr, stream.indices, values32, idx, svT32, j0, j1, C)
            else:
                np.matmul(rows32, svT32[:, j0:j1], out=C)
            add32(C, x_sqn32, sqn32[j0:j1], c32, alpha[j0:j1], g)
        return g
    x_sqn = stream.sqnorms[idx]
    svT = sv.T
    rows = None if stream.is_sparse else stream.dense[idx]
    add = add_kernel_times_alpha if alpha.ndim == 1 else add_kernel_times_alpha_classes
    for j0 in range(0, m0, CHUNK):
        j1 = min(m0, j0 + CHUNK)
        C = scratch[:b * (j1 - j0)].reshape(b, j1 - j0)  # C-contiguous: one compiled variant
        if xbits is not None:
            binary_rows_times_columns(xbits, bits, j0, j1, C)
        elif rows is None:
            csr_rows_times_columns(stream.indptr, stream.indices, stream.values, idx, svT, j0, j1, C)
        else:
            np.matmul(rows, svT[:, j0:j1], out=C)
        if xbits is not None and alpha.ndim == 1:
            add_binary_kernel_times_alpha(C, x_sqn, sv_sqn[j0:j1], exp_table, alpha[j0:j1], g)
        else:
            add(C, x_sqn, sv_sqn[j0:j1], inv2s2, alpha[j0:j1], g)
    return g


class BlockedPlay:
    """Mixin for the unbudgeted Perceptron/OGD learners (binary and multi-class).

    ``play_in_blocks`` (default True) selects this path; False plays the per-sample loop, kept as
    the reference the block path is tested against and as the benchmarks' "before"."""

    play_in_blocks = True

    def memory_estimate(self, n_samples, n_features, n_outputs=1):
        """The runner's default for an unbudgeted support set, plus what the block path keeps:
        the support set again in float32 (dense rows) or as bit sets (0/1 rows), and its
        block-sized scratch arrays."""
        parts = default_learner_estimate(self, n_samples, n_features, n_outputs)
        if self.play_in_blocks:
            # one more copy of the support set: in float32, or (binary task, dense rows, one
            # wide feature) in double sorted on that feature with its keys, norms, coefficients
            # and three scratch rows (``window.SupportWindow``), never both
            parts[f"float32 or sorted support copy (up to n x d = {n_samples:,} x {n_features:,})"] = (
                8.0 * n_samples * (n_features + 6) if n_outputs == 1 else 4.0 * n_samples * n_features)
            parts[f"block scratch ({BLOCK} x {CHUNK} cross products, {BLOCK} x {BLOCK} kernel)"] = (
                8.0 * BLOCK * (CHUNK + BLOCK))
        return parts

    def _allocate_support(self, n_features, n_steps):
        super()._allocate_support(n_features, n_steps)
        self.sv_bits_ = None  # the support set as bit sets, built on demand for binary inputs
        self.sv_bits_packed_ = 0
        self.sv32T_ = None  # the support set in float32, built on demand for dense inputs
        self.sv32_packed_ = 0
        self.single_hold_ = (0, 0)  # see _play_blocks
        self.sv_window_ = None  # the support set sorted on one wide feature (``window.py``)

    def _block_sums(self):
        m = int(self.size_[0])
        a = np.abs(self.alpha_[:m])
        if a.ndim == 2:
            a = a.sum(axis=1)
        return np.array([a.sum(), float(a @ self.sv_sqn_[:m])])

    def _play_blocks(self, stream, y, order, start, stop, step_fn):
        sums = self._block_sums()
        inv2s2 = 1.0 / (2.0 * self.sigma_**2)
        c_G64 = dot_error_factor(stream.n_features) * inv2s2
        c_G32 = dot_error_factor32(stream.n_features) * inv2s2
        joined = np.empty(BLOCK, dtype=np.int64)
        scratch = np.empty(BLOCK * CHUNK)
        K_in = np.empty((BLOCK, BLOCK))  # the block's own kernel, a column per joined sample
        recomputed = getattr(self, "recomputed_", None)
        if recomputed is None:
            recomputed = self.recomputed_ = np.zeros(1, dtype=np.int64)
        bits = self._support_bits(stream)
        xbits = exp_table = None
        if bits is not None:
            xbits = np.zeros((BLOCK, bits.shape[0]), dtype=np.uint64)
            # Binary rows: squared norms are feature counts, squared distances integers below this.
            m = int(self.size_[0])
            top = max(stream.sqnorms.max(initial=0.0), self.sv_sqn_[:m].max(initial=0.0))
            exp_table = exp_table_for(int(2 * top) + 1, inv2s2)
        # Binary dense rows with a feature spanning many kernel widths (codrna): stage 1 sums
        # over each sample's window of the support set only, in double precision (``window``).
        window = (self._support_window(stream) if bits is None and self.alpha_.ndim == 1
                  else None)
        single = None if bits is not None or window is not None else self._support_single(stream)
        e_k64 = KERNEL_ERROR_64 + (window.tail if window is not None else 0.0)
        repeats = BlockRepeats(stream)
        # blocks to play in double precision before trying single again, and single-precision
        # blocks in a row that replayed too much: kept across the pass's checkpoint segments
        hold_single, single_failures = self.single_hold_
        t = start
        while t < stop:
            m0 = int(self.size_[0])
            # While the support set is empty, one sample at a time: costs nothing, and a short
            # stream (the runner's warm-up) then reaches the chunk code with m0 > 0 and compiles it.
            idx = order[t:min(t + (BLOCK if m0 else 1), stop)]
            t += len(idx)
            xb = None
            if bits is not None:
                xb = xbits[:len(idx)]
                if stream.is_sparse:
                    pack_csr_rows(stream.indptr, stream.indices, stream.values, idx, xb)
                else:
                    pack_dense_rows(stream.dense, idx, xb)
            use_single = single is not None and hold_single == 0
            hold_single = max(hold_single - 1, 0)
            # A block's repeated rows share their block-start sums: computed once per distinct
            # row (``duplicates``), then copied; the guard bounds them as before.
            if window is not None:
                g = repeats.map_rows(idx, lambda rows, _: window.scores(stream, rows, inv2s2))
            else:
                g = repeats.map_rows(idx, lambda rows, pos: block_scores(
                    stream, rows, self.sv_, self.sv_sqn_, self.alpha_, m0, inv2s2, scratch,
                    xb if pos is None or xb is None else xb[pos], bits, exp_table,
                    single if use_single else None))
            before = int(recomputed[0])
            step_fn(idx, g, K_in, sums, c_G32 if use_single else c_G64,
                    KERNEL_ERROR_32 if use_single else e_k64, joined, recomputed)
            n_joined = int(self.size_[0]) - m0
            if window is not None:
                window.add(self.sv_, self.sv_sqn_, self.alpha_, m0, m0 + n_joined)
            if bits is not None:
                copy_joined_bits(xb, joined, n_joined, m0, bits)
                self.sv_bits_packed_ = m0 + n_joined
            if single is not None:
                pack_support32(self.sv_, self.sv_sqn_, m0, m0 + n_joined, *single)
                self.sv32_packed_ = m0 + n_joined
                # Single precision widens the error bound; where many decisions fall inside it
                # (each one replayed by the per-sample loop), double precision is cheaper.
                if use_single and (int(recomputed[0]) - before) * SINGLE_RECOMPUTE_LIMIT > len(idx):
                    hold_single = min(SINGLE_HOLD_BLOCKS << single_failures, SINGLE_HOLD_MAX)
                    single_failures += 1
                elif use_single:
                    single_failures = 0
        self.single_hold_ = (hold_single, single_failures)

    def _support_window(self, stream):
        """The support set sorted on the stream's window feature (``window.window_feature``),
        brought up to date with every stored slot; None when the window does not pay here.
        Rebuilt when the buffer grew (``partial_fit``) or the feature changed."""
        if not WINDOW:
            return None
        feature = window_feature(stream, float(self.sigma_))
        if feature is None:
            return None
        win = getattr(self, "sv_window_", None)
        m = int(self.size_[0])
        # (a window holding more vectors than the buffer cannot happen in one pass: start over)
        if (win is None or win.feature != feature or win.capacity != self.sv_.shape[0]
                or win.svT.shape[0] != self.sv_.shape[1] or int(win.size[0]) > m):
            win = SupportWindow(feature, float(self.sigma_), self.sv_.shape[1], self.sv_.shape[0])
        win.add(self.sv_, self.sv_sqn_, self.alpha_, int(win.size[0]), m)
        self.sv_window_ = win
        return win

    def _support_single(self, stream):
        """(svT32, sqn32): the support set in float32 (d x capacity) when every value of the
        stream (dense, or CSR through an O(nnz m) float32 product) and of the stored vectors is
        in the single-precision range (F32_MIN..F32_MAX), else None. Kept across calls like the
        bit sets."""
        if not SINGLE_PRECISION:
            return None
        ok = getattr(stream, "_lsokl_single", None)
        if ok is None:
            ok = stream._lsokl_single = bool(in_single_range(
                stream.values if stream.is_sparse else stream.dense.ravel()))
        if not ok:
            return None
        cap, m = self.sv_.shape[0], int(self.size_[0])
        svT32 = getattr(self, "sv32T_", None)
        packed = getattr(self, "sv32_packed_", 0)
        if svT32 is None or svT32.shape != (self.sv_.shape[1], cap):
            grown = np.zeros((self.sv_.shape[1], cap), dtype=np.float32)
            sqn32 = np.zeros(cap, dtype=np.float32)
            if svT32 is not None and svT32.shape[0] == grown.shape[0]:
                grown[:, :svT32.shape[1]] = svT32
                sqn32[:svT32.shape[1]] = self.sv_sqn32_
            else:
                packed = 0
            svT32 = grown
        else:
            sqn32 = self.sv_sqn32_
        if packed > m or packed < 0:
            packed = 0
        if not pack_support32(self.sv_, self.sv_sqn_, packed, m, svT32, sqn32):
            self.sv32T_ = None
            self.sv32_packed_ = 0
            return None
        self.sv32T_, self.sv_sqn32_, self.sv32_packed_ = svT32, sqn32, m
        return svT32, sqn32

    def _support_bits(self, stream):
        """The support set as bit sets (words x capacity) when the stream and every stored
        vector are binary, else None. Kept across calls; slots not yet packed are packed here."""
        if not stream_is_binary(stream):
            return None
        cap, m = self.sv_.shape[0], int(self.size_[0])
        words = (stream.n_features + 63) // 64
        bits = getattr(self, "sv_bits_", None)
        packed = getattr(self, "sv_bits_packed_", 0)
        if bits is None or bits.shape != (words, cap):
            grown = np.zeros((words, cap), dtype=np.uint64)
            if bits is not None and bits.shape[0] == words:
                grown[:, :bits.shape[1]] = bits
            else:
                packed = 0
            bits = grown
        if packed > m or packed < 0:
            packed = 0
        if not pack_support(self.sv_, packed, m, bits):
            self.sv_bits_ = None
            self.sv_bits_packed_ = 0
            return None
        self.sv_bits_ = bits
        self.sv_bits_packed_ = m
        return bits

    def _play_regression_blocks(self, stream, y, order, start, stop, by_sign, eta):
        """Regression Perceptron/OGD in blocks, bit for bit the per-sample loop (no guard needed:
        ``exact_block_sums`` and ``own_kernel_column(exact=True)`` repeat its arithmetic)."""
        inv2s2 = 1.0 / (2.0 * self.sigma_**2)
        joined = np.empty(BLOCK, dtype=np.int64)
        K_in = np.empty((BLOCK, BLOCK))
        cross = np.empty(CHUNK)
        g = np.empty(BLOCK)
        xd = np.zeros(stream.n_features)
        eps = float(self.epsilon_[0])
        t = start
        while t < stop:
            m0 = int(self.size_[0])
            idx = order[t:min(t + (BLOCK if m0 else 1), stop)]
            t += len(idx)
            gb = g[:len(idx)]
            exact_block_sums(stream.xs, stream.sqnorms, idx, self.sv_, self.sv_sqn_, self.alpha_, m0,
                             inv2s2, CHUNK, cross, gb)
            play_block_regression(stream.xs, stream.sqnorms, y, idx, gb, K_in, self.sv_,
                                  self.sv_sqn_, self.order_, self.alpha_, self.size_, self.counts_,
                                  self.sq_loss_, inv2s2, eps, by_sign, float(eta), joined, xd)

    def _play_binary_blocks(self, stream, y, order, start, stop, rule, eta=1.0):
        inv2s2 = 1.0 / (2.0 * self.sigma_**2)
        xd = np.zeros(stream.n_features)

        def step(idx, g, K_in, sums, c_G, e_k, joined, recomputed):
            play_block_binary(stream.xs, stream.sqnorms, y, idx, g, K_in, self.sv_, self.sv_sqn_,
                              self.order_, self.alpha_, self.size_, self.counts_, inv2s2,
                              self.krow_, rule, float(eta), sums, c_G, e_k, joined, recomputed,
                              xd)

        self._play_blocks(stream, y, order, start, stop, step)

    def _play_multiclass_blocks(self, stream, y, order, start, stop, on_margin, step_size):
        inv2s2 = 1.0 / (2.0 * self.sigma_**2)
        xd = np.zeros(stream.n_features)

        def step(idx, G, K_in, sums, c_G, e_k, joined, recomputed):
            play_block_multiclass(stream.xs, stream.sqnorms, y, idx, np.ascontiguousarray(G),
                                  K_in, self.sv_, self.sv_sqn_, self.order_, self.alpha_,
                                  self.size_, self.counts_, inv2s2, self.krow_, self.scores_,
                                  on_margin, float(step_size), sums, c_G, e_k, joined, recomputed,
                                  xd)

        self._play_blocks(stream, y, order, start, stop, step)
