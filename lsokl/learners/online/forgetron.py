"""Self-tuned Forgetron, as the authors' ``binary/forgetron.m`` (spec section 1.4), and its
multi-class (2.4) and regression (3) versions, which share the shrink computation.

Faithful quirks kept by default (``variant="faithful"``):

* the update fires on y f <= 0, not on a sign mistake (they differ when f = 0 and y = +1), while
  the mistake count M used in the budget constraint counts sign mistakes only;
* with the budget full, the shrink phi multiplies every coefficient, the new one included, and
  mu = y_r f'(x_r) is taken with f' already containing the new point;
* for A < 0 the authors pick (-B' - sqrt(D)) / (2A), the *larger* root, which exceeds 1
  whenever A + B' + C > 0 and C <= 0 (spec 1.4 names it a bug);
* a negative discriminant would make MATLAB's phi complex; we keep its real part, -B' / (2A),
  the only representable continuation (no such step occurs in the authors' runs).

``variant="corrected"`` takes the largest phi in (0, 1] with A phi^2 + B' phi + C <= 0 (the
Forgetron paper's rule): phi = 1 if feasible, otherwise the root (-B' + sqrt(D)) / (2A), which is
the correct crossing for both signs of A. When no phi in (0, 1] is feasible (possible only when
C >= 0, i.e. no sign mistake yet, because of the y f <= 0 trigger), phi is floored at
``PHI_FLOOR`` so the model is nearly, but never exactly, erased.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..base import SIGMA, VARIANT
from ...compute.kernels import JIT, append_slot, evict_and_reuse, kernel_between_slots, prefetch_next, store_row
from ...compute.params import BUDGET, NON_NEGATIVE, POSITIVE
from ..support import SupportVectorLearner
from ...compute.duplicates import memo_for
from ...compute.tasks import (MulticlassTask, RegressionTask, observe_binary_memo, observe_multiclass,
                    observe_regression, predict_oldest_first, refresh_row, regression_coefficient,
                    scale_coefficients, scale_columns, store_pair)

PHI_FLOOR = 1e-12
FAITHFUL, CORRECTED = 0, 1


@njit(**JIT)
def _faithful_phi(a, b, c):
    if a == 0.0:
        if b != 0.0:
            ratio = -c / b
        elif c < 0.0:
            ratio = math.inf
        elif c > 0.0:
            ratio = -math.inf
        else:
            ratio = math.nan
        # max(0, min(1, ratio)) with MATLAB's NaN-skipping min/max: NaN (0/0) gives 1.
        if ratio != ratio:
            return 1.0
        return max(0.0, min(1.0, ratio))
    if a + b + c <= 0.0:
        return 1.0
    root = math.sqrt(max(b * b - 4.0 * a * c, 0.0))  # real part of a complex root
    if a > 0.0:
        return (-b + root) / (2.0 * a)
    return (-b - root) / (2.0 * a)


@njit(**JIT)
def _corrected_phi(a, b, c):
    if a + b + c <= 0.0:
        return 1.0
    if a == 0.0:
        phi = -c / b if b > 0.0 else 0.0
    else:
        disc = b * b - 4.0 * a * c
        phi = (-b + math.sqrt(disc)) / (2.0 * a) if disc >= 0.0 else 0.0
    if not (phi >= PHI_FLOOR):
        return PHI_FLOOR
    return min(phi, 1.0)


@njit(**JIT)
def _shrink(delta, mu, mistakes, variant, q, phi_range):
    """The shrink phi for the budget constraint Q + psi <= 15/32 M (A phi^2 + B' phi + C <= 0);
    adds psi to ``q[0]``. All three tasks share it; only delta and mu differ (1.4, 2.4, 3)."""
    qa = delta * delta - 2.0 * delta * mu
    qb = 2.0 * delta
    qc = q[0] - (15.0 / 32.0) * mistakes
    if variant == FAITHFUL:
        phi = _faithful_phi(qa, qb, qc)
    else:
        phi = _corrected_phi(qa, qb, qc)
    phi_range[0] = min(phi_range[0], phi)
    phi_range[1] = max(phi_range[1], phi)
    q[0] += (delta * phi) ** 2 + 2.0 * delta * phi * (1.0 - phi * mu)
    return phi


@njit(**JIT)
def _play(xs, sqn, y, order, start, stop, sv, sv_sqn, sv_order, alpha, labels, size, counts,
          inv2s2, budget, variant, q, phi_range, krow, krow_oldest, memo):
    for t in range(start, stop):
        i = order[t]
        prefetch_next(xs, sqn, y, order, t, stop)
        yt = y[i]
        m = size[0]
        # f summed oldest first, as the authors' alpha * k_t: near-cancelling sums keep their sign.
        f, _, fresh = observe_binary_memo(xs, sqn, i, yt, sv, sv_sqn, sv_order, alpha, m, inv2s2,
                                          krow, counts, memo)
        if yt * f > 0.0:
            continue
        counts[2] += 1
        if m < budget:
            slot = append_slot(sv_order, m)
            size[0] = m + 1
            store_row(xs, i, sqn[i], sv, sv_sqn, slot)
            alpha[slot] = yt
            labels[slot] = yt
            continue
        refresh_row(xs, sqn, i, sv, sv_sqn, m, inv2s2, krow, fresh)  # krow[oldest] is read below
        oldest = sv_order[0]
        # f'(x_r) with f' = f + y_t kappa(x_t, .): the stored SVs' row plus the new point's term.
        kernel_between_slots(sv, sv_sqn, oldest, m, inv2s2, krow_oldest)
        f_oldest = 0.0
        for p in range(m):
            f_oldest += alpha[sv_order[p]] * krow_oldest[sv_order[p]]
        f_oldest += yt * krow[oldest]
        y_oldest = labels[oldest]
        phi = _shrink(alpha[oldest] / y_oldest, y_oldest * f_oldest, counts[1], variant, q,
                      phi_range)
        for j in range(m):
            alpha[j] *= phi
        slot = evict_and_reuse(sv_order, m, 0)
        store_row(xs, i, sqn[i], sv, sv_sqn, slot)
        alpha[slot] = phi * yt
        labels[slot] = yt


class Forgetron(SupportVectorLearner):
    """Self-tuned Forgetron: Perceptron updates, oldest-first removal, shrinking by phi."""

    name = "forgetron"
    reads_float32 = True  # rows only through kernel_row/store_row (issue 26; base.OnlineLearner)
    task = "binary"
    budgeted = True
    _params = {"sigma": SIGMA, "budget": BUDGET, "variant": VARIANT}

    def __init__(self, *, sigma: float | str = "scale", budget: int = 100, variant: str = "faithful"):
        self.sigma = sigma
        self.budget = budget
        self.variant = variant

    def _allocate(self, n_features, capacity, source):
        self._allocate_support(n_features, capacity)
        cap = self.sv_.shape[0]
        self.labels_ = np.zeros(cap)  # y of each stored SV: alpha_r / y_r is the shrink history
        self.krow_oldest_ = np.zeros(cap)  # scratch: kappa(x_oldest, SVs)
        self.q_ = np.zeros(1)  # the accumulated damage Q
        self.phi_range_ = np.array([np.inf, -np.inf])  # smallest and largest phi applied so far

    def _play(self, stream, y, order, start, stop):
        _play(stream.xs, stream.sqnorms, y, order, start, stop, self.sv_, self.sv_sqn_,
              self.order_, self.alpha_, self.labels_, self.size_, self.counts_,
              1.0 / (2.0 * self.sigma_**2), int(self.budget),
              FAITHFUL if self.variant == "faithful" else CORRECTED, self.q_, self.phi_range_,
              self.krow_, self.krow_oldest_, memo_for(stream, self).arrays)


@njit(**JIT)
def _play_multiclass(xs, sqn, y, order, start, stop, sv, sv_sqn, sv_order, alpha, sv_class, size,
                     counts, inv2s2, budget, variant, q, phi_range, krow, krow_oldest, scores):
    for t in range(start, stop):
        i = order[t]
        prefetch_next(xs, sqn, y, order, t, stop)
        yt = y[i]
        m = size[0]
        mistake, s = observe_multiclass(xs, sqn, i, yt, sv, sv_sqn, sv_order, alpha, m, inv2s2,
                                        krow, scores, counts)
        if not mistake:
            continue
        counts[2] += 1
        if m < budget:
            slot = append_slot(sv_order, m)
            size[0] = m + 1
            store_row(xs, i, sqn[i], sv, sv_sqn, slot)
            store_pair(alpha, slot, yt, s, 1.0)
            sv_class[slot] = yt
            continue
        # r = the oldest instance, c its class; mu = f^c'(x_r) with the new point included
        # (its class-c coefficient is +1, -1 or absent), delta = |alpha_{c, r}|.
        oldest = sv_order[0]
        c = sv_class[oldest]
        kernel_between_slots(sv, sv_sqn, oldest, m, inv2s2, krow_oldest)
        mu = 0.0
        for p in range(m):
            j = sv_order[p]
            mu += alpha[j, c] * krow_oldest[j]
        if c == yt:
            mu += krow[oldest]
        elif c == s:
            mu += -1.0 * krow[oldest]
        phi = _shrink(abs(alpha[oldest, c]), mu, counts[1], variant, q, phi_range)
        scale_columns(alpha, m, phi)
        slot = evict_and_reuse(sv_order, m, 0)
        store_row(xs, i, sqn[i], sv, sv_sqn, slot)
        store_pair(alpha, slot, yt, s, phi)
        sv_class[slot] = yt


@njit(**JIT)
def _play_regression(xs, sqn, y, order, start, stop, sv, sv_sqn, sv_order, alpha, size, counts,
                     sq_loss, inv2s2, budget, eta, eps, variant, q, phi_range, krow, krow_oldest):
    for t in range(start, stop):
        i = order[t]
        prefetch_next(xs, sqn, y, order, t, stop)
        m = size[0]
        delta, event = observe_regression(xs, sqn, i, y[i], sv, sv_sqn, sv_order, alpha, m, inv2s2,
                                          krow, eps, counts, sq_loss)
        if not event:
            continue
        counts[2] += 1
        coef = regression_coefficient(delta, eta, True)
        if m < budget:
            slot = append_slot(sv_order, m)
            size[0] = m + 1
            store_row(xs, i, sqn[i], sv, sv_sqn, slot)
            alpha[slot] = coef
            continue
        # mu = |f'(x_r)| with f' including the new point; delta_F = |alpha_r| (spec 3).
        oldest = sv_order[0]
        kernel_between_slots(sv, sv_sqn, oldest, m, inv2s2, krow_oldest)
        f_oldest = predict_oldest_first(alpha, krow_oldest, sv_order, m) + coef * krow[oldest]
        phi = _shrink(abs(alpha[oldest]), abs(f_oldest), counts[1], variant, q, phi_range)
        scale_coefficients(alpha, m, phi)
        slot = evict_and_reuse(sv_order, m, 0)
        store_row(xs, i, sqn[i], sv, sv_sqn, slot)
        alpha[slot] = phi * coef


class MulticlassForgetron(MulticlassTask, Forgetron):
    """Multi-class self-tuned Forgetron (spec 2.4, the authors' ``multiclass/forgetron.m``).

    On an argmax mistake (not "margin <= 0") the instance is stored with +1 for y_t and -1 for
    s_t. Over the budget, with r the oldest instance and c = y_r: mu = f^c'(x_r), the class-c
    *score* (not a margin) of the model with the new point, delta = |alpha_{c,r}|; phi solves the
    binary quadratic (same faithful A < 0 root); every coefficient, the new ones included, is
    multiplied by phi and r is removed from every class."""

    def __init__(self, *, sigma: float | str = "scale", budget: int = 200, variant: str = "faithful"):
        super().__init__(sigma=sigma, budget=budget, variant=variant)

    def _allocate(self, n_features, capacity, source):
        super()._allocate(n_features, capacity, source)
        self.sv_class_ = np.zeros(self.sv_.shape[0], dtype=np.int64)  # y_r of each stored SV

    def _play(self, stream, y, order, start, stop):
        _play_multiclass(stream.xs, stream.sqnorms, y, order, start, stop, self.sv_,
                         self.sv_sqn_, self.order_, self.alpha_, self.sv_class_, self.size_,
                         self.counts_, 1.0 / (2.0 * self.sigma_**2), int(self.budget),
                         FAITHFUL if self.variant == "faithful" else CORRECTED, self.q_,
                         self.phi_range_, self.krow_, self.krow_oldest_, self.scores_)


class RegressionForgetron(RegressionTask, Forgetron):
    """Regression Forgetron (spec 3, the authors' ``regression/forgetron.m``).

    If |y - f| > ``epsilon`` the instance is appended with eta sign(y - f). With the budget full,
    r = the oldest, mu = |f'(x_r)| (f' including the new point), delta = |alpha_r|; phi from the
    binary quadratic with M = the number of |y - f| > epsilon events; all coefficients times
    phi, then r is dropped. Defaults are the regression script's (B = 30, eta_perceptron = 0.1,
    epsl = 0.1)."""

    _params = {**Forgetron._params, "eta": POSITIVE, "epsilon": NON_NEGATIVE}

    def __init__(self, *, sigma: float | str = "scale", budget: int = 30, eta: float = 0.1,
                 epsilon: float = 0.1, variant: str = "faithful"):
        super().__init__(sigma=sigma, budget=budget, variant=variant)
        self.eta = eta
        self.epsilon = epsilon

    def _play(self, stream, y, order, start, stop):
        _play_regression(stream.xs, stream.sqnorms, y, order, start, stop, self.sv_,
                         self.sv_sqn_, self.order_, self.alpha_, self.size_, self.counts_,
                         self.sq_loss_, 1.0 / (2.0 * self.sigma_**2), int(self.budget),
                         float(self.eta), float(self.epsilon_[0]),
                         FAITHFUL if self.variant == "faithful" else CORRECTED, self.q_,
                         self.phi_range_, self.krow_, self.krow_oldest_)
