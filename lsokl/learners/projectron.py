"""Projectron and Projectron++, as the authors' ``binary/projectron.m`` and ``binary/proplus.m``.

Spec sections 1.5 and 1.6. The authors' Projectron has **no** projection threshold: it stores every
mistake until the budget is full and from then on always projects the new instance onto the span
of the stored ones. The inverse Gram matrix ``kinv_`` is kept up to date by the block formula, so a
step costs O(B^2) and no O(B^3) inversion ever happens.

``variant="faithful"`` (default) keeps the authors' unguarded division by the squared projection
residual ``Kid - k' Kinv k``. When rounding drives that residual to <= 0 (the authors' spambase runs
do this, README "Projectron numerical hazard") the inverse turns into garbage exactly as it does in
MATLAB/Octave. ``variant="corrected"`` projects instead of adding whenever the residual is <=
``RESIDUAL_FLOOR`` (1e-10, i.e. the instance lies within 1e-5 of the span in RKHS norm, with
kappa(x, x) = 1), so ``kinv_`` stays finite and meaningful.

Projectron++ additionally updates on margin errors (0 < 1 - y f < 1) by a projected step, never
adding a vector. Its P = d*' K d* uses the Gram matrix K of the stored vectors as the authors do
(they recompute K at every margin error; here it is maintained incrementally in ``gram_``, which
gives the same numbers at O(B) per addition). In exact arithmetic P = k' Kinv k; the two differ
once ``kinv_`` is inaccurate, so the authors' form is kept.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .base import SIGMA, VARIANT
from .kernels import JIT, append_slot, dot, kernel_row, sign, store_row
from .params import BUDGET
from .support import SupportVectorLearner

RESIDUAL_FLOOR = 1e-10
# IEEE division (x/0 -> inf/nan, as MATLAB) instead of numba's default ZeroDivisionError: the
# faithful variant must run through a zero residual the way the authors' code does.
IEEE = dict(JIT, error_model="numpy")


@njit(**IEEE)
def _matvec(A, m, v, out):
    """out[:m] = A[:m, :m] @ v[:m] (rows of A are contiguous; vectorised dot per row)."""
    vm = v[:m]
    for r in range(m):
        out[r] = dot(A[r, :m], vm)


@njit(**IEEE)
def _add(xs, i, sqn_i, yi, m, dstar, res, sv, sv_sqn, sv_order, alpha, size, kinv, gram, krow,
         kid, inv2s2):
    """Store x_i as the (m+1)-th vector; block update of the inverse Gram matrix (spec 1.5)."""
    slot = append_slot(sv_order, m)
    store_row(xs, i, sqn_i, sv, sv_sqn, slot)
    alpha[slot] = yi
    if m == 0:
        # Kid = kappa(x, x), computed once from the first stored vector as the authors do.
        kernel_row(xs, i, sqn_i, sv, sv_sqn, 1, inv2s2, krow)
        kid[0] = krow[0]
        kinv[0, 0] = 1.0 / kid[0]
        gram[0, 0] = kid[0]
    else:
        inv_res = 1.0 / res
        for r in range(m):
            dr = dstar[r] * inv_res
            for c in range(m):
                kinv[r, c] += dr * dstar[c]
            kinv[r, m] = -dr
            kinv[m, r] = -dr
            gram[r, m] = krow[r]
            gram[m, r] = krow[r]
        kinv[m, m] = inv_res
        gram[m, m] = kid[0]
    size[0] = m + 1


@njit(**IEEE)
def _play(xs, sqn, y, order, start, stop, sv, sv_sqn, sv_order, alpha, size, counts, inv2s2,
          krow, budget, kinv, gram, kid, dstar, kd, plus, corrected, U):
    for t in range(start, stop):
        i = order[t]
        m = size[0]
        kernel_row(xs, i, sqn[i], sv, sv_sqn, m, inv2s2, krow)
        f = 0.0
        for j in range(m):
            f += alpha[j] * krow[j]
        yi = y[i]
        counts[0] += 1
        if sign(f) != yi:
            counts[1] += 1
            counts[2] += 1
            if m == 0:
                _add(xs, i, sqn[i], yi, 0, dstar, 0.0, sv, sv_sqn, sv_order, alpha, size, kinv,
                     gram, krow, kid, inv2s2)
                continue
            _matvec(kinv, m, krow, dstar)
            kd_ = 0.0
            for j in range(m):
                kd_ += krow[j] * dstar[j]
            res = kid[0] - kd_
            if m == budget or (corrected and res <= RESIDUAL_FLOOR):
                for j in range(m):
                    alpha[j] += yi * dstar[j]
            else:
                _add(xs, i, sqn[i], yi, m, dstar, res, sv, sv_sqn, sv_order, alpha, size, kinv,
                     gram, krow, kid, inv2s2)
        elif plus and m > 0:
            loss = 1.0 - yi * f
            if not (loss > 0.0 and loss < 1.0):
                continue
            _matvec(kinv, m, krow, dstar)
            kd_ = 0.0
            for j in range(m):
                kd_ += krow[j] * dstar[j]
            res = kid[0] - kd_
            _matvec(gram, m, dstar, kd)
            P = 0.0
            for j in range(m):
                P += dstar[j] * kd[j]
            tau = min(loss / P, 1.0)
            if res < 0.0 and not corrected:
                # sqrt of a negative residual is imaginary in Octave, and Octave orders complex
                # numbers by modulus, so the authors' `beta >= 0` holds (tau > 0 here).
                accept = True
            else:
                delta = math.sqrt(max(res, 0.0))
                beta = tau * (2.0 * loss - tau * P - 2.0 * U * delta)
                accept = beta >= 0.0
            if accept:
                counts[2] += 1
                for j in range(m):
                    alpha[j] += yi * tau * dstar[j]


class Projectron(SupportVectorLearner):
    """Budgeted Projectron (spec 1.5): store mistakes until ``budget`` vectors, then project.

    Parameters
    ----------
    sigma : Gaussian kernel width, kappa = exp(-||x-y||^2 / (2 sigma^2)).
    budget : maximum number of stored support vectors B.
    variant : ``"faithful"`` (the authors' unguarded residual division) or ``"corrected"``
        (project instead of adding when the squared residual is <= 1e-10).
    """

    name = "projectron"
    task = "binary"
    _plus = False
    _params = {"sigma": SIGMA, "budget": BUDGET, "variant": VARIANT}

    def __init__(self, *, sigma: float = 8.0, budget: int = 100, variant: str = "faithful"):
        self.sigma = sigma
        self.budget = budget
        self.variant = variant

    def _allocate(self, n_features, capacity, source):
        self._allocate_support(n_features, capacity)
        B = int(self.budget)
        self.kinv_ = np.zeros((B, B))
        self.gram_ = np.zeros((B, B))
        self.kid_ = np.ones(1)
        self._dstar = np.zeros(B)
        self._kd = np.zeros(B)

    def _play(self, stream, y, order, start, stop):
        B = int(self.budget)
        U = 0.25 * math.sqrt((B + 1) / math.log(B + 1))
        _play(stream.xs, stream.sqnorms, y, order, start, stop, self.sv_, self.sv_sqn_,
              self.order_, self.alpha_, self.size_, self.counts_, 1.0 / (2.0 * self.sigma**2),
              self.krow_, B, self.kinv_, self.gram_, self.kid_, self._dstar, self._kd,
              self._plus, self.variant == "corrected", U)


class ProjectronPP(Projectron):
    """Projectron++ (spec 1.6): Projectron plus projected updates on margin errors 0 < l < 1,
    accepted when beta = tau (2 l - tau P - 2 U ||delta||) >= 0, U = sqrt((B+1)/ln(B+1)) / 4."""

    name = "projectron++"
    _plus = True
