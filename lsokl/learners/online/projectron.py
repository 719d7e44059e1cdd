"""Projectron and Projectron++ for the three tasks, as the authors' ``{binary,multiclass}/
projectron.m``, ``{binary,multiclass}/proplus.m`` and ``regression/projectron.m``.

Spec sections 1.5, 1.6 (binary), 2.5, 2.6 (multi-class) and 3 (regression). The authors'
Projectron has **no** projection threshold: it stores every mistake until the budget is full and
from then on always projects the new instance onto the span of the stored ones. The inverse Gram
matrix ``kinv_`` is kept up to date by the block formula, so a step costs O(B^2) and no O(B^3)
inversion ever happens.

``variant="faithful"`` (default) keeps the authors' unguarded division by the squared projection
residual ``Kid - k' Kinv k``. When rounding drives that residual to <= 0 (the authors' dna,
spambase and mg runs do this, README "Projectron numerical hazard") the inverse turns into garbage
exactly as it does in MATLAB/Octave. ``variant="corrected"`` projects instead of adding whenever
the residual is <= ``RESIDUAL_FLOOR`` (1e-10, i.e. the instance lies within 1e-5 of the span in
RKHS norm, with kappa(x, x) = 1), so ``kinv_`` stays finite and meaningful.

Arithmetic order. Once the inverse is garbage every rounding is amplified, so the kernel rows
(``kernels.kernel_row``), Kinv k (``_matvec``) and the block update ((d_r d_c)/res) follow
Octave's reference-BLAS order term by term. That replays even the garbage runs: multi-class dna
20/20 and the regression loss bit for bit.

Projectron++ additionally updates on margin errors by a projected step, never adding a vector:
binary on 0 < 1 - y f < 1 with P = d*' K d*, K the Gram matrix of the stored vectors as the
authors' binary code computes it (kept incrementally in ``gram_`` here, same numbers at O(B) per
addition); multi-class on hinge loss l > 0 (no l < 1 clause) with P = k' Kinv k, as the authors'
multi-class code does. The two agree in exact arithmetic, not once ``kinv_`` is inaccurate.

The tasks share the storage, the residual and the block update of the inverse (``_residual``,
``_store``); they differ in what triggers a step and which coefficients it changes. Binary and
regression keep one coefficient per vector and share one loop (regression triggers on
|y - f| > epsilon and uses eta sign(y - f) as the label); multi-class has its own loop over the
(slots x m) coefficient matrix.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit
from sklearn.base import RegressorMixin

from ..base import SIGMA, VARIANT
from ...compute.kernels import JIT, append_slot, kernel_row, prefetch_next, store_row
from ...compute.params import BUDGET, NON_NEGATIVE, POSITIVE
from ..support import SupportVectorLearner
from ...compute.tasks import REGRESSION_POOR_SCORE
from ...compute.duplicates import NO_MEMO, memo_for
from ...compute.tasks import (multiclass_hinge, observe_binary_memo, observe_multiclass, observe_regression,
                    refresh_row, store_pair)

RESIDUAL_FLOOR = 1e-10
# IEEE division (x/0 -> inf/nan, as MATLAB) instead of numba's default ZeroDivisionError: the
# faithful variant must run through a zero residual the way the authors' code does.
IEEE = dict(JIT, error_model="numpy")


@njit(**IEEE)
def _matvec(A, m, v, out):
    """out[:m] = A[:m, :m] @ v[:m] for a *symmetric* A, in reference BLAS dgemv's order: each
    out[i] sums A[i, j] v[j] over j = 0, 1, ... one term at a time. Row j of A is column j
    (symmetry), so the inner loop runs over contiguous memory and vectorises across i without
    reordering any sum: the result is bit for bit Octave's. That matters once the inverse is
    garbage (non-positive residuals): then every rounding is amplified, and only Octave's own
    summation order replays the authors' runs (multi-class dna)."""
    for i in range(m):
        out[i] = 0.0
    for j in range(m):
        vj = v[j]
        Aj = A[j]
        for i in range(m):
            out[i] += vj * Aj[i]


@njit(**IEEE)
def _residual(kinv, m, krow, kid, dstar):
    """d* = Kinv k_t (into ``dstar``); returns (k_t' d*, ||delta||^2 = Kid - k_t' d*)."""
    _matvec(kinv, m, krow, dstar)
    kd = 0.0
    for j in range(m):
        kd += krow[j] * dstar[j]
    return kd, kid[0] - kd


@njit(**IEEE)
def _store(xs, i, sqn_i, m, dstar, res, sv, sv_sqn, sv_order, size, kinv, gram, krow, kid,
           inv2s2):
    """Store x_i as the (m+1)-th vector and grow the inverse Gram matrix by the block formula
    (spec 1.5); returns the slot, whose coefficients the caller sets (they depend on the task)."""
    slot = append_slot(sv_order, m)
    store_row(xs, i, sqn_i, sv, sv_sqn, slot)
    if m == 0:
        # Kid = kappa(x, x), computed once from the first stored vector as the authors do.
        kernel_row(xs, i, sqn_i, sv, sv_sqn, 1, inv2s2, krow)
        kid[0] = krow[0]
        kinv[0, 0] = 1.0 / kid[0]
        gram[0, 0] = kid[0]
    else:
        # The authors' Kinv + (d d')/res, elementwise as written: (d_r d_c) / res. Dividing
        # the product (not multiplying by 1/res) keeps Kinv exactly symmetric, as in Octave,
        # which ``_matvec`` relies on.
        for r in range(m):
            dr = dstar[r]
            for c in range(m):
                kinv[r, c] += (dr * dstar[c]) / res
            kinv[r, m] = -dr / res
            kinv[m, r] = -dr / res
            gram[r, m] = krow[r]
            gram[m, r] = krow[r]
        kinv[m, m] = 1.0 / res
        gram[m, m] = kid[0]
    size[0] = m + 1
    return slot


@njit(**IEEE)
def _play(xs, sqn, y, order, start, stop, sv, sv_sqn, sv_order, alpha, size, counts, sq_loss,
          inv2s2, krow, budget, kinv, gram, kid, dstar, kd, plus, corrected, U, regression, eps,
          eta, memo):
    """Binary (spec 1.5/1.6) and regression (spec 3) Projectron: one scalar coefficient per
    vector. Regression triggers on |y - f| > eps and uses eta sign(y - f) where binary uses y."""
    for t in range(start, stop):
        i = order[t]
        prefetch_next(xs, sqn, y, order, t, stop)
        m = size[0]
        x_sqn = sqn[i]
        f = 0.0
        fresh = True
        if regression:
            delta, mistake = observe_regression(xs, sqn, i, y[i], sv, sv_sqn, sv_order, alpha, m,
                                                inv2s2, krow, eps, counts, sq_loss)
            lab = eta if delta > 0.0 else -eta
        else:
            lab = y[i]
            f, mistake, fresh = observe_binary_memo(xs, sqn, i, lab, sv, sv_sqn, sv_order, alpha,
                                                    m, inv2s2, krow, counts, memo)
        if mistake:
            counts[2] += 1
            if m == 0:
                slot = _store(xs, i, x_sqn, 0, dstar, 0.0, sv, sv_sqn, sv_order, size, kinv,
                              gram, krow, kid, inv2s2)
                alpha[slot] = lab
                continue
            refresh_row(xs, sqn, i, sv, sv_sqn, m, inv2s2, krow, fresh)  # read by the residual
            _, res = _residual(kinv, m, krow, kid, dstar)
            if m == budget or (corrected and res <= RESIDUAL_FLOOR):
                for j in range(m):
                    alpha[j] += lab * dstar[j]
            else:
                slot = _store(xs, i, x_sqn, m, dstar, res, sv, sv_sqn, sv_order, size, kinv,
                              gram, krow, kid, inv2s2)
                alpha[slot] = lab
        elif plus and m > 0:
            loss = 1.0 - lab * f
            if not (loss > 0.0 and loss < 1.0):
                continue
            refresh_row(xs, sqn, i, sv, sv_sqn, m, inv2s2, krow, fresh)  # read by the residual
            _, res = _residual(kinv, m, krow, kid, dstar)
            _matvec(gram, m, dstar, kd)
            P = 0.0
            for j in range(m):
                P += dstar[j] * kd[j]
            tau = min(loss / P, 1.0)
            if _margin_step_accepted(loss, tau, P, res, U, corrected):
                counts[2] += 1
                for j in range(m):
                    alpha[j] += lab * tau * dstar[j]


@njit(**IEEE)
def _margin_step_accepted(loss, tau, P, res, U, corrected):
    """Projectron++'s test beta = tau (2 l - tau P - 2 U ||delta||) >= 0 (spec 1.6, 2.6)."""
    if res < 0.0 and not corrected:
        # sqrt of a negative residual is imaginary in Octave, and Octave orders complex
        # numbers by modulus, so the authors' `beta >= 0` holds.
        return True
    beta = tau * (2.0 * loss - tau * P - 2.0 * U * math.sqrt(max(res, 0.0)))
    return beta >= 0.0


@njit(**IEEE)
def _play_multiclass(xs, sqn, y, order, start, stop, sv, sv_sqn, sv_order, alpha, size, counts,
                     inv2s2, krow, budget, kinv, gram, kid, dstar, V, plus, corrected, U):
    """Multi-class Projectron (spec 2.5) and Projectron++ (2.6): shared vectors, alpha is
    (slots, m); every step adds to class y_t and subtracts from the best wrong class s_t."""
    for t in range(start, stop):
        i = order[t]
        prefetch_next(xs, sqn, y, order, t, stop)
        m = size[0]
        x_sqn = sqn[i]
        yi = y[i]
        mistake, s = observe_multiclass(xs, sqn, i, yi, sv, sv_sqn, sv_order, alpha, m, inv2s2,
                                        krow, V, counts)
        if mistake:
            counts[2] += 1
            if m == 0:
                slot = _store(xs, i, x_sqn, 0, dstar, 0.0, sv, sv_sqn, sv_order, size, kinv,
                              gram, krow, kid, inv2s2)
                store_pair(alpha, slot, yi, s, 1.0)
                continue
            _, res = _residual(kinv, m, krow, kid, dstar)
            if m == budget or (corrected and res <= RESIDUAL_FLOOR):
                for j in range(m):
                    alpha[j, yi] += dstar[j]
                    alpha[j, s] -= dstar[j]
            else:
                slot = _store(xs, i, x_sqn, m, dstar, res, sv, sv_sqn, sv_order, size, kinv,
                              gram, krow, kid, inv2s2)
                store_pair(alpha, slot, yi, s, 1.0)
        elif plus and m > 0:
            loss = multiclass_hinge(V, yi, s)
            if not loss > 0.0:
                continue
            # No "l < 1" clause here, and P = k' Kinv k rather than binary's d*' K d* (the
            # authors' multiclass/proplus.m): P is the k' d* the residual already needs.
            P, res = _residual(kinv, m, krow, kid, dstar)
            q = loss / P
            tau = q if q < 1.0 else 1.0  # Octave's min(q, 1), which also maps NaN to 1
            if _margin_step_accepted(loss, tau, P, res, U, corrected):
                counts[2] += 1
                for j in range(m):
                    alpha[j, yi] += tau * dstar[j]
                    alpha[j, s] -= tau * dstar[j]


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
    reads_float32 = True  # rows only through kernel_row/store_row (issue 26; base.OnlineLearner)
    task = "binary"
    _plus = False
    _params = {"sigma": SIGMA, "budget": BUDGET, "variant": VARIANT}

    def __init__(self, *, sigma: float | str = "scale", budget: int = 100, variant: str = "faithful"):
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

    @property
    def _U(self) -> float:
        B = int(self.budget)
        return 0.25 * math.sqrt((B + 1) / math.log(B + 1))

    def _play(self, stream, y, order, start, stop):
        regression = self.task == "regression"
        _play(stream.xs, stream.sqnorms, y, order, start, stop, self.sv_, self.sv_sqn_,
              self.order_, self.alpha_, self.size_, self.counts_, self.sq_loss_,
              1.0 / (2.0 * self.sigma_**2), self.krow_, int(self.budget), self.kinv_, self.gram_,
              self.kid_, self._dstar, self._kd, self._plus, self.variant == "corrected", self._U,
              regression, float(self.epsilon) if regression else 0.0,
              float(self.eta) if regression else 1.0,
              NO_MEMO if regression else memo_for(stream, self).arrays)


class ProjectronPP(Projectron):
    """Projectron++ (spec 1.6): Projectron plus projected updates on margin errors 0 < l < 1,
    accepted when beta = tau (2 l - tau P - 2 U ||delta||) >= 0, U = sqrt((B+1)/ln(B+1)) / 4."""

    name = "projectron++"
    _plus = True


class MulticlassProjectron(Projectron):
    """Multi-class Projectron (spec 2.5, the authors' ``multiclass/projectron.m``).

    One shared vector set, one coefficient per (vector, class) in ``alpha_`` (slots x m). On an
    argmax mistake (ties to the lowest class), x_t is stored with +1 for y_t and -1 for the best
    wrong class s_t while |S| < B; at the budget, d* = Kinv k_t is added to class y_t's
    coefficients and subtracted from s_t's. Defaults are the authors' ``Experiment.m`` (B = 200).
    On dna the faithful residual goes <= 0 in some permutations and the inverse turns to garbage,
    exactly as in the authors' runs (README "Projectron numerical hazard"); ``"corrected"``
    projects instead.
    """

    task = "multiclass"

    def __init__(self, *, sigma: float | str = "scale", budget: int = 200, variant: str = "faithful"):
        super().__init__(sigma=sigma, budget=budget, variant=variant)

    def _allocate(self, n_features, capacity, source):
        super()._allocate(n_features, capacity, source)
        self._V = np.zeros(self.n_classes_)

    def _play(self, stream, y, order, start, stop):
        _play_multiclass(stream.xs, stream.sqnorms, y, order, start, stop, self.sv_,
                         self.sv_sqn_, self.order_, self.alpha_, self.size_, self.counts_,
                         1.0 / (2.0 * self.sigma_**2), self.krow_, int(self.budget), self.kinv_,
                         self.gram_, self.kid_, self._dstar, self._V, self._plus,
                         self.variant == "corrected", self._U)


class MulticlassProjectronPP(MulticlassProjectron):
    """Multi-class Projectron++ (spec 2.6): also a projected +/- step of size
    tau = min(l / P, 1), P = k' Kinv k, on every correct prediction with hinge loss l > 0 (no
    "l < 1" clause, unlike binary), accepted when tau (2 l - tau P - 2 U ||delta||) >= 0."""

    name = "projectron++"
    _plus = True


class RegressionProjectron(RegressorMixin, Projectron):
    """Regression Projectron (spec 3, the authors' ``regression/projectron.m``).

    Update iff |y - f| > ``epsilon``, with the binary mechanics and the label replaced by
    ``eta`` sign(y - f): store x_t with that coefficient while |S| < B, else add
    eta sign(y - f) d*. The squared loss (y - f)^2 is taken before the update. Defaults are the
    authors' regression ``Experiment.m`` (B = 30, eta_perceptron = 0.1, epsl = 0.1).
    ``counts_[1]`` counts the |y - f| > epsilon events, as the authors' file does.
    """

    poor_score = REGRESSION_POOR_SCORE  # R^2 0.27 in check_regressors_train, see tasks.py

    task = "regression"
    _params = {**Projectron._params, "eta": POSITIVE, "epsilon": NON_NEGATIVE}

    def __init__(self, *, sigma: float | str = "scale", budget: int = 30, eta: float = 0.1,
                 epsilon: float = 0.1, variant: str = "faithful"):
        super().__init__(sigma=sigma, budget=budget, variant=variant)
        self.eta = eta
        self.epsilon = epsilon
