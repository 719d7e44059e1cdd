"""Budget Passive-Aggressive, simple removal (BPA-S), as the authors' ``binary/BPAs.m``
(spec section 1.7).

Every step with hinge loss l = max(0, 1 - y f) > 0 updates. Below the budget the instance is
appended with the PA-I coefficient y min(C, l) (kappa(x, x) = 1). With the budget full, each
stored SV r is tried as the one to replace: the new point takes the coefficient
beta_r = alpha_r k_rt + tau y (projecting alpha_r kappa(x_r, .) onto kappa(x_t, .)), and the
candidate with the smallest 0.5 ||f_new - f_old||^2 + C l(f_new) wins, the first one on ties
(strict <, in list order). The winner is replaced *in place*, so slot order stays list order.
"""
from __future__ import annotations

import math

from numba import njit

from .base import SIGMA
from .kernels import JIT, append_slot, kernel_row, sign, store_row
from .params import BUDGET, POSITIVE
from .support import SupportVectorLearner


@njit(**JIT)
def _play(xs, sqn, y, order, start, stop, sv, sv_sqn, sv_order, alpha, size, counts, inv2s2,
          budget, C, krow):
    for t in range(start, stop):
        i = order[t]
        yt = y[i]
        m = size[0]
        kernel_row(xs, i, sqn[i], sv, sv_sqn, m, inv2s2, krow)
        # Slots are never reordered (replacement is in place), so slot order is list order.
        f = 0.0
        for j in range(m):
            f += alpha[j] * krow[j]
        loss = max(0.0, 1.0 - yt * f)
        counts[0] += 1
        if sign(f) != yt:
            counts[1] += 1
        if not (loss > 0.0):
            continue
        counts[2] += 1
        tau = min(C, loss)
        if m < budget:
            slot = append_slot(sv_order, m)
            size[0] = m + 1
            store_row(xs, i, sqn[i], sv, sv_sqn, slot)
            alpha[slot] = yt * tau
            continue
        best_q = math.inf
        best = -1
        best_beta = 0.0
        for r in range(m):
            k_rt = krow[r]
            a_r = alpha[r]
            beta = a_r * k_rt + tau * yt
            dist = a_r * a_r + beta * beta - 2.0 * a_r * beta * k_rt
            f_r = f - a_r * k_rt + beta
            q = 0.5 * dist + C * max(0.0, 1.0 - yt * f_r)
            if q < best_q:
                best_q = q
                best = r
                best_beta = beta
        if best < 0:  # every candidate NaN: the authors' code would fail here too
            raise FloatingPointError("BPA-S: all removal candidates evaluated to NaN")
        store_row(xs, i, sqn[i], sv, sv_sqn, best)
        alpha[best] = best_beta


class BPAS(SupportVectorLearner):
    """Budget PA-I with the simple (one SV replaced in place) removal strategy."""

    name = "bpas"
    task = "binary"
    budgeted = True
    _params = {"sigma": SIGMA, "budget": BUDGET, "C": POSITIVE}

    def __init__(self, *, sigma: float = 8.0, budget: int = 100, C: float = 1.0):
        self.sigma = sigma
        self.budget = budget
        self.C = C

    def _allocate(self, n_features, capacity, source):
        self._allocate_support(n_features, capacity)

    def _play(self, stream, y, order, start, stop):
        _play(stream.xs, stream.sqnorms, y, order, start, stop, self.sv_, self.sv_sqn_,
              self.order_, self.alpha_, self.size_, self.counts_, 1.0 / (2.0 * self.sigma**2),
              int(self.budget), float(self.C), self.krow_)
