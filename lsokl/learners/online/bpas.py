"""Budget Passive-Aggressive, simple removal (BPA-S), as the authors' ``binary/BPAs.m``
(spec section 1.7), and its multi-class version (2.7).

Every step with hinge loss l = max(0, 1 - y f) > 0 updates. Below the budget the instance is
appended with the PA-I coefficient y min(C, l) (kappa(x, x) = 1). With the budget full, each
stored SV r is tried as the one to replace: the new point takes the coefficient
beta_r = alpha_r k_rt + tau y (projecting alpha_r kappa(x_r, .) onto kappa(x_t, .)), and the
candidate with the smallest 0.5 ||f_new - f_old||^2 + C l(f_new) wins, the first one on ties
(strict <, in list order). The winner is replaced *in place*, so slot order stays list order.

Arithmetic order. On the raw spambase file many kernel values are exactly 0 or 1 and the argmin
over Q_r meets near-ties that rounding decides, so this learner computes its kernel row in the
order Octave does: ||x||^2 summed feature by feature (``sum(X.*X, 2)``, ``Stream.sqnorms``) and
every dot product accumulated over ascending features (reference BLAS ``dgemv``), the shared
``kernels.kernel_row`` on the column-major SV buffer. With it, 19/20 (sigma 8, B 100) and 20/20
(sigma 64, B 50) of the authors' spambase runs are reproduced exactly, against 0/20 and 8/20
with a pairwise norm and a reassociated dot.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..base import SIGMA
from ...compute.kernels import JIT, append_slot, kernel_row, prefetch_next, store_row
from ...compute.params import BUDGET, POSITIVE
from ..support import SupportVectorLearner
from ...compute.duplicates import memo_for
from ...compute.tasks import (MulticlassTask, class_scores, multiclass_hinge, observe_binary_memo,
                    refresh_row, store_pair, top_two)


@njit(**JIT)
def _play(xs, sqn, y, order, start, stop, sv, sv_sqn, sv_order, alpha, size, counts,
          inv2s2, budget, C, krow, memo):
    for t in range(start, stop):
        i = order[t]
        prefetch_next(xs, sqn, y, order, t, stop)
        yt = y[i]
        m = size[0]
        x_sqn = sqn[i]
        # Slots are never reordered (replacement is in place), so slot order is list order.
        f, _, fresh = observe_binary_memo(xs, sqn, i, yt, sv, sv_sqn, sv_order, alpha, m, inv2s2,
                                          krow, counts, memo)
        loss = max(0.0, 1.0 - yt * f)
        if not (loss > 0.0):
            continue
        counts[2] += 1
        tau = min(C, loss)
        if m < budget:
            slot = append_slot(sv_order, m)
            size[0] = m + 1
            store_row(xs, i, x_sqn, sv, sv_sqn, slot)
            alpha[slot] = yt * tau
            continue
        refresh_row(xs, sqn, i, sv, sv_sqn, m, inv2s2, krow, fresh)  # every krow[r] is read below
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
        store_row(xs, i, x_sqn, sv, sv_sqn, best)
        alpha[best] = best_beta


class BPAS(SupportVectorLearner):
    """Budget PA-I with the simple (one SV replaced in place) removal strategy."""

    name = "bpas"
    reads_float32 = True  # rows only through kernel_row/store_row (issue 26; base.OnlineLearner)
    task = "binary"
    budgeted = True
    _params = {"sigma": SIGMA, "budget": BUDGET, "C": POSITIVE}

    def __init__(self, *, sigma: float | str = "scale", budget: int = 100, C: float = 1.0):
        self.sigma = sigma
        self.budget = budget
        self.C = C

    def _allocate(self, n_features, capacity, source):
        self._allocate_support(n_features, capacity)

    def _play(self, stream, y, order, start, stop):
        _play(stream.xs, stream.sqnorms, y, order, start, stop, self.sv_, self.sv_sqn_,
              self.order_, self.alpha_, self.size_, self.counts_, 1.0 / (2.0 * self.sigma_**2),
              int(self.budget), float(self.C), self.krow_, memo_for(stream, self).arrays)


@njit(**JIT)
def _candidate_beta(alpha, r, k_rt, yt, s, tau, beta):
    """beta = alpha_{:,r} k_rt + tau (e_y - e_s): the new instance's coefficients if SV r goes."""
    for c in range(beta.shape[0]):
        beta[c] = alpha[r, c] * k_rt
    beta[yt] += tau
    beta[s] = beta[s] - tau


@njit(**JIT)
def _play_multiclass(xs, sqn, y, order, start, stop, sv, sv_sqn, sv_order, alpha, size, counts,
                     inv2s2, budget, C, krow, scores, beta, f_r):
    n_classes = scores.shape[0]
    for t in range(start, stop):
        i = order[t]
        prefetch_next(xs, sqn, y, order, t, stop)
        yt = y[i]
        m = size[0]
        x_sqn = sqn[i]
        kernel_row(xs, i, x_sqn, sv, sv_sqn, m, inv2s2, krow)
        # V = alpha k_t (dgemv: each class summed over the SVs in slot order, which is list order).
        class_scores(alpha, krow, sv_order, m, scores)
        y_hat, s = top_two(scores, yt)
        counts[0] += 1
        if y_hat != yt:
            counts[1] += 1
        loss = multiclass_hinge(scores, yt, s)
        if not (loss > 0.0):
            continue
        counts[2] += 1
        tau = min(C, loss / 2.0)
        if m < budget:
            slot = append_slot(sv_order, m)
            size[0] = m + 1
            store_row(xs, i, x_sqn, sv, sv_sqn, slot)
            store_pair(alpha, slot, yt, s, tau)
            continue
        best_q = math.inf
        best = -1
        for r in range(m):
            k_rt = krow[r]
            _candidate_beta(alpha, r, k_rt, yt, s, tau, beta)
            aa = 0.0
            bb = 0.0
            ab = 0.0
            for c in range(n_classes):
                a = alpha[r, c]
                aa += a * a
                bb += beta[c] * beta[c]
                ab += (2.0 * a) * beta[c]
            dist = aa + bb - ab * k_rt
            for c in range(n_classes):
                f_r[c] = scores[c] - alpha[r, c] * k_rt + beta[c]
            # The runner-up is recomputed on the candidate model f_r (spec 2.7).
            _, s_r = top_two(f_r, yt)
            q = 0.5 * dist + C * multiclass_hinge(f_r, yt, s_r)
            if q < best_q:
                best_q = q
                best = r
        if best < 0:  # every candidate NaN: the authors' code would fail here too
            raise FloatingPointError("BPA-S: all removal candidates evaluated to NaN")
        _candidate_beta(alpha, best, krow[best], yt, s, tau, beta)
        store_row(xs, i, x_sqn, sv, sv_sqn, best)
        for c in range(n_classes):
            alpha[best, c] = beta[c]


class MulticlassBPAS(MulticlassTask, BPAS):
    """Multi-class BPA-S (spec 2.7, the authors' ``multiclass/BPAs.m``).

    When the multi-class hinge loss l is positive: tau = min(C, l / 2) (2 = the squared norm of
    Phi(x, y) - Phi(x, s) for kappa(x, x) = 1). Below the budget the instance is stored with +tau
    for y_t and -tau for s_t. At the budget every SV r is tried as the one replaced in place:
    beta = alpha_{:,r} k_rt + tau (e_y - e_s), Q_r = 0.5 ||f_new - f_old||^2 + C l(f_r) with the
    runner-up recomputed on f_r; the first minimum wins. The kernel row is computed in Octave's
    arithmetic order, as in the binary version."""

    def __init__(self, *, sigma: float | str = "scale", budget: int = 200, C: float = 1.0):
        super().__init__(sigma=sigma, budget=budget, C=C)

    def _allocate(self, n_features, capacity, source):
        super()._allocate(n_features, capacity, source)
        self.beta_ = np.zeros(self.n_classes_)  # scratch: a candidate's new coefficients
        self.candidate_scores_ = np.zeros(self.n_classes_)  # scratch: f_r

    def _play(self, stream, y, order, start, stop):
        _play_multiclass(stream.xs, stream.sqnorms, y, order, start, stop, self.sv_,
                         self.sv_sqn_, self.order_, self.alpha_, self.size_, self.counts_,
                         1.0 / (2.0 * self.sigma_**2), int(self.budget), float(self.C),
                         self.krow_, self.scores_, self.beta_, self.candidate_scores_)
