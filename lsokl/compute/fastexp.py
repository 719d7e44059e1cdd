"""Vectorisable exp on (-inf, 0] and the Gaussian kernel values built on it (stage 1 of the blocked
Perceptron/OGD, :mod:`lsokl.compute.blocked`, and of the support window, :mod:`lsokl.compute.window`).

libm's exp is a scalar call that LLVM cannot vectorise; these are polynomial exps with exact
power-of-two scaling whose error is bounded (and tested against libm in
tests/learners/test_blocked.py), so the blocked path's error bound still certifies every decision.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

# exp on (-inf, 0] that LLVM vectorises (libm's exp is a scalar call, ~20 cycles, and was most
# of the per-sample loop's time). Cody-Waite reduction t = k ln2 + r, |r| <= ln2/2, degree-13
# Taylor polynomial (truncation < 2e-16 relative), 2^k by exact power-of-two factors; below -40
# the result is 0 (exp(-40) < u / 20). Absolute error below 4u on (-inf, 0], checked against
# libm in tests/learners/test_blocked.py; the error bound above allows 8u per kernel value.
EXP_JIT = dict(cache=True, nogil=True, fastmath={"contract"}, error_model="numpy")
_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # 32 leading bits: k * _LN2_HI is exact for |k| < 2^20
_LN2_LO = 1.90821492927058770002e-10
_INV_FACT = tuple(1.0 / math.factorial(n) for n in range(14))


@njit(inline="always")  # inlined into EXP_JIT functions, compiled with their flags
def _exp_reduced(t):
    """(p, kf, small) with exp(t) = p 2^kf for -40 <= t <= 0 (``small``: t < -40, where the
    result is 0): Cody-Waite reduction and the degree-13 Taylor polynomial (see above)."""
    small = t < -40.0
    t = max(t, -40.0)
    kf = math.floor(t * _LOG2E + 0.5)
    r = (t - kf * _LN2_HI) - kf * _LN2_LO
    p = _INV_FACT[13]
    p = p * r + _INV_FACT[12]
    p = p * r + _INV_FACT[11]
    p = p * r + _INV_FACT[10]
    p = p * r + _INV_FACT[9]
    p = p * r + _INV_FACT[8]
    p = p * r + _INV_FACT[7]
    p = p * r + _INV_FACT[6]
    p = p * r + _INV_FACT[5]
    p = p * r + _INV_FACT[4]
    p = p * r + _INV_FACT[3]
    p = p * r + _INV_FACT[2]
    p = p * r + 1.0
    p = p * r + 1.0
    return p, kf, small


@njit(**EXP_JIT)
def exp_nonpositive(t):
    """exp(t) for t <= 0 (see above); vectorisable."""
    p, kf, small = _exp_reduced(t)
    n = -kf  # 0..58: 2^-n as a product of exact powers of two
    p *= 2.0**-32 if n >= 32.0 else 1.0
    n -= 32.0 if n >= 32.0 else 0.0
    p *= 2.0**-16 if n >= 16.0 else 1.0
    n -= 16.0 if n >= 16.0 else 0.0
    p *= 2.0**-8 if n >= 8.0 else 1.0
    n -= 8.0 if n >= 8.0 else 0.0
    p *= 2.0**-4 if n >= 4.0 else 1.0
    n -= 4.0 if n >= 4.0 else 0.0
    p *= 2.0**-2 if n >= 2.0 else 1.0
    n -= 2.0 if n >= 2.0 else 0.0
    p *= 0.5 if n >= 1.0 else 1.0
    return 0.0 if small else p


@njit(**EXP_JIT)
def exp_nonpositive_in_place(a, ebits):
    """a[j] <- exp_nonpositive(a[j]) bit for bit, for a row of arguments <= 0, in two passes:
    p and the bit pattern (1023 + k) << 52 of 2^k (int64 scratch ``ebits``, viewed as float64),
    then p 2^k. The scalar function makes 2^k from six conditional power-of-two factors; both
    products are exact (k >= -58: normal floats), so the values agree, and the bit pattern
    saves the factors' compares and selects (1.4-1.75x on a kernel block)."""
    scale = ebits.view(np.float64)
    n = a.shape[0]
    for j in range(n):
        p, kf, small = _exp_reduced(a[j])
        a[j] = 0.0 if small else p
        ebits[j] = (np.int64(kf) + np.int64(1023)) << np.int64(52)
    for j in range(n):
        a[j] = a[j] * scale[j]


@njit(**EXP_JIT)
def gaussian_from_cross(cross, x_sqn, s_sqn, inv2s2):
    """In place: cross[r, j] <- exp(-max(x_sqn[r] + s_sqn[j] - 2 cross[r, j], 0) inv2s2)."""
    ebits = np.empty(cross.shape[1], dtype=np.int64)
    for r in range(cross.shape[0]):
        row = cross[r]
        xr = x_sqn[r]
        for j in range(row.shape[0]):
            d2 = xr + s_sqn[j] - 2.0 * row[j]
            row[j] = -max(d2, 0.0) * inv2s2
        exp_nonpositive_in_place(row, ebits)


# ----------------------------------------------------------------------------- single precision
# Dense rows against the support set in float32 (module docstring, "Single precision"): the
# product from one SGEMM, then the squared distance and exp in float32, 16 lanes per vector.
_F32 = np.float32
_LOG2E_32 = _F32(1.4426950408889634)
_LN2_HI_32 = _F32(0.693145751953125)  # 16 leading bits: k * _LN2_HI_32 is exact for |k| < 2^8
_LN2_LO_32 = _F32(0.6931471805599453 - 0.693145751953125)
_INV_FACT_32 = tuple(_F32(1.0 / math.factorial(n)) for n in range(8))
_ZERO_32, _ONE_32, _TWO_32 = _F32(0.0), _F32(1.0), _F32(2.0)
_FLUSH_32 = _F32(-87.0)  # exp(-87) = 1.6e-38: below it the result is 0 (error < 2^-125)


@njit(inline="always")  # inlined into EXP_JIT functions, compiled with their flags
def _exp32_reduced(t):
    """(p, kf, small) with exp(t) = p 2^kf in float32 for -87 <= t <= 0 (``small``: t < -87,
    where the result is 0): Cody-Waite reduction, degree-7 Taylor polynomial."""
    small = t < _FLUSH_32
    t = max(t, _FLUSH_32)
    kf = np.floor(t * _LOG2E_32 + _F32(0.5))
    r = (t - kf * _LN2_HI_32) - kf * _LN2_LO_32
    p = _INV_FACT_32[7]
    p = p * r + _INV_FACT_32[6]
    p = p * r + _INV_FACT_32[5]
    p = p * r + _INV_FACT_32[4]
    p = p * r + _INV_FACT_32[3]
    p = p * r + _INV_FACT_32[2]
    p = p * r + _ONE_32
    p = p * r + _ONE_32
    return p, kf, small


@njit(**EXP_JIT)
def exp32_nonpositive(t):
    """exp(t) in float32 for float32 t <= 0; vectorisable. Cody-Waite reduction to
    |r| <= ln2/2, degree-7 Taylor polynomial (truncation < 4e-9 relative), 2^k by exact
    power-of-two factors. Absolute error below 1.5 u32 (u32 = 2^-24) on (-inf, 0], checked in
    tests/learners/test_blocked.py."""
    p, kf, small = _exp32_reduced(t)
    n = -kf  # 0..126
    p *= _F32(2.0**-64) if n >= _F32(64.0) else _ONE_32
    n -= _F32(64.0) if n >= _F32(64.0) else _ZERO_32
    p *= _F32(2.0**-32) if n >= _F32(32.0) else _ONE_32
    n -= _F32(32.0) if n >= _F32(32.0) else _ZERO_32
    p *= _F32(2.0**-16) if n >= _F32(16.0) else _ONE_32
    n -= _F32(16.0) if n >= _F32(16.0) else _ZERO_32
    p *= _F32(2.0**-8) if n >= _F32(8.0) else _ONE_32
    n -= _F32(8.0) if n >= _F32(8.0) else _ZERO_32
    p *= _F32(2.0**-4) if n >= _F32(4.0) else _ONE_32
    n -= _F32(4.0) if n >= _F32(4.0) else _ZERO_32
    p *= _F32(0.25) if n >= _TWO_32 else _ONE_32
    n -= _TWO_32 if n >= _TWO_32 else _ZERO_32
    p *= _F32(0.5) if n >= _ONE_32 else _ONE_32
    return _ZERO_32 if small else p


@njit(**EXP_JIT)
def gaussian32_from_cross(cross, x_sqn, s_sqn, inv2s2):
    """In place, float32: cross[r, j] <- exp(-max(x_sqn[r] + s_sqn[j] - 2 cross[r, j], 0) inv2s2).

    Bit for bit ``exp32_nonpositive`` of each argument, in two passes per row: the reduced
    polynomial p, and 2^k made directly as the float32 bit pattern (127 + k) << 23 in an int32
    scratch viewed as float32, then p 2^k. The scalar function builds 2^k from seven
    conditional power-of-two factors instead; either way p 2^k is exact (t >= -87 keeps k >=
    -126 and the result a normal float), so the values are the same, at 1.75x the speed."""
    ebits = np.empty(cross.shape[1], dtype=np.int32)
    scale = ebits.view(np.float32)
    for r in range(cross.shape[0]):
        row = cross[r]
        xr = x_sqn[r]
        n = row.shape[0]
        for j in range(n):
            d2 = xr + s_sqn[j] - _TWO_32 * row[j]
            p, kf, small = _exp32_reduced(-max(d2, _ZERO_32) * inv2s2)
            row[j] = _ZERO_32 if small else p
            ebits[j] = (np.int32(kf) + np.int32(127)) << np.int32(23)
        for j in range(n):
            row[j] = row[j] * scale[j]
