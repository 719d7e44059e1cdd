"""Compiled pieces that turn a kernel learner into its multi-class or regression version.

A task changes the loss, the prediction and the update, not the learner's storage: every
learner keeps its support vectors in the same slot buffers (see :mod:`kernels`), and only the
coefficient layout differs, ``alpha[slot]`` (binary, regression) or ``alpha[slot, class]``
(multi-class). This module holds what the tasks share:

* multi-class (spec 2): class scores V, the prediction y_hat = argmax V and the best wrong class
  s_t, both with MATLAB's lowest-index tie rule, the multi-class hinge loss, the "+c to y_t,
  -c to s_t" column of one instance;
* regression (spec 3): delta = y - f, the squared loss taken before the update, the
  |delta| > epsilon event, MATLAB's sign (sign(0) = 0);
* removal of a support vector when the budget is full (uniform draw or oldest);
* two step loops covering every learner whose update is "maybe decay, maybe remove, append one
  instance": multi-class Perceptron/OGD/RBP/BOGD (2.1-2.3, 2.8) and regression
  Perceptron/OGD/NORMA/RBP/BOGD (3). Forgetron and BPA-S keep their own loops because their
  budget step reads the model (shrink, argmin); they reuse the helpers here.

Scores are summed oldest first, the order of the authors' ``alpha * k_t`` over a class row
(entries of a class row are in insertion order, and instances outside the row contribute exact
zeros), which is what keeps near-cancelling sums bit-identical to theirs.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit
from sklearn.base import RegressorMixin

from .duplicates import memo_lookup, memo_store
from .kernels import JIT, append_slot, evict_and_reuse, kernel_row, sign, prefetch_next, store_row

# How a full budget makes room (spec 2.3/3 RBP: uniform; 2.8/3 BOGD: oldest).
NO_REMOVAL, RANDOM_REMOVAL, OLDEST_REMOVAL = 0, 1, 2


# ----------------------------------------------------------------------------- shared
@njit(**JIT)
def predict_oldest_first(alpha, krow, sv_order, m):
    """f = sum_i alpha_i kappa(x_i, x), oldest support vector first."""
    f = 0.0
    for p in range(m):
        j = sv_order[p]
        f += alpha[j] * krow[j]
    return f


@njit(**JIT)
def observe_binary(xs, sqn, i, yt, sv, sv_sqn, sv_order, alpha, m, inv2s2, krow, counts):
    """Test-then-train, first half, binary: kernel row (left in ``krow``), f summed oldest first;
    counts the step and a sign mistake (sign(0) = +1). Returns (f, mistake). Learners whose slot
    order is their age order (no removal, or replacement in place) sum the same terms in the
    same order as a plain slot loop."""
    kernel_row(xs, i, sqn[i], sv, sv_sqn, m, inv2s2, krow)
    f = predict_oldest_first(alpha, krow, sv_order, m)
    counts[0] += 1
    mistake = sign(f) != yt
    if mistake:
        counts[1] += 1
    return f, mistake


@njit(inline="always")  # the memo's branches compiled into each loop (away when memo is None)
def observe_binary_memo(xs, sqn, i, yt, sv, sv_sqn, sv_order, alpha, m, inv2s2, krow, counts,
                        memo):
    """:func:`observe_binary` through the duplicate-row memo (``duplicates.RowMemo.arrays``):
    for a row whose identical copy was predicted since the last counted update (``counts[2]``),
    f is that prediction, bit for bit, and the kernel row is not computed. Returns (f, mistake,
    fresh); ``fresh`` False means ``krow`` was left stale: a caller whose update reads it calls
    :func:`refresh_row` first."""
    hit, f = memo_lookup(memo, i, counts[2])
    if not hit:
        f, mistake = observe_binary(xs, sqn, i, yt, sv, sv_sqn, sv_order, alpha, m, inv2s2,
                                    krow, counts)
        memo_store(memo, i, counts[2], f)
        return f, mistake, True
    counts[0] += 1
    mistake = sign(f) != yt
    if mistake:
        counts[1] += 1
    return f, mistake, False


@njit(**JIT)
def refresh_row(xs, sqn, i, sv, sv_sqn, m, inv2s2, krow, fresh):
    """Compute the kernel row that a memo hit skipped (the same values observe_binary makes)."""
    if not fresh:
        kernel_row(xs, i, sqn[i], sv, sv_sqn, m, inv2s2, krow)


@njit(**JIT)
def scale_coefficients(alpha, m, factor):
    """alpha *= factor on the m occupied slots (slots 0..m-1 are always the occupied ones)."""
    for j in range(m):
        alpha[j] = alpha[j] * factor


@njit(**JIT)
def removal_slot(sv_order, m, removal, draws, cursor, budget):
    """Drop one stored vector to make room and return its slot, re-registered as the newest.

    The j-th random removal uses ``draws[j]``, a 0-based position in the oldest-first list, so
    the authors' ``randperm(B)(1)`` streams replay exactly."""
    if removal == OLDEST_REMOVAL:
        return evict_and_reuse(sv_order, m, 0)
    pos = draws[cursor[0]]
    cursor[0] += 1
    if pos < 0 or pos >= budget:
        raise ValueError("removal draw out of range: the random source ran out or "
                         "was recorded for another budget")
    return evict_and_reuse(sv_order, m, pos)


# ----------------------------------------------------------------------------- multi-class
@njit(**JIT)
def class_scores(alpha, krow, sv_order, m, out):
    """out[r] = V_r = sum_i alpha[i, r] kappa(x_i, x), oldest support vector first."""
    n_classes = out.shape[0]
    for r in range(n_classes):
        out[r] = 0.0
    for p in range(m):
        j = sv_order[p]
        k = krow[j]
        for r in range(n_classes):
            out[r] += alpha[j, r] * k


@njit(**JIT)
def top_two(scores, y):
    """(y_hat, s): argmax over all classes and over the classes other than y, each taking the
    lowest index on ties as MATLAB's ``max`` does. s = -1 when y is the only class."""
    y_hat = 0
    for r in range(1, scores.shape[0]):
        if scores[r] > scores[y_hat]:
            y_hat = r
    s = -1
    for r in range(scores.shape[0]):
        if r != y and (s < 0 or scores[r] > scores[s]):
            s = r
    return y_hat, s


@njit(**JIT)
def multiclass_hinge(scores, y, s):
    """l = max(0, 1 - (V_y - V_s)); 0 with a single class (nothing to separate from)."""
    if s < 0:
        return 0.0
    return max(0.0, 1.0 - (scores[y] - scores[s]))


@njit(**JIT)
def store_pair(alpha, slot, y, s, c):
    """The coefficients of one new instance: +c for class y, -c for class s, 0 elsewhere."""
    for r in range(alpha.shape[1]):
        alpha[slot, r] = 0.0
    alpha[slot, y] = c
    if s >= 0:
        alpha[slot, s] = -c


@njit(**JIT)
def scale_columns(alpha, m, factor):
    for j in range(m):
        for r in range(alpha.shape[1]):
            alpha[j, r] = alpha[j, r] * factor


@njit(**JIT)
def clip_above(alpha, m, cap):
    """alpha = min(alpha, cap) elementwise (multi-class BOGD clips from above only, spec 2.8)."""
    for j in range(m):
        for r in range(alpha.shape[1]):
            if alpha[j, r] > cap:
                alpha[j, r] = cap


@njit(**JIT)
def observe_multiclass(xs, sqn, i, yt, sv, sv_sqn, sv_order, alpha, m, inv2s2, krow, scores,
                       counts):
    """Test-then-train, first half: kernel row, class scores, (y_hat, s); counts the step and
    an argmax mistake. Returns (mistake, s)."""
    kernel_row(xs, i, sqn[i], sv, sv_sqn, m, inv2s2, krow)
    class_scores(alpha, krow, sv_order, m, scores)
    y_hat, s = top_two(scores, yt)
    counts[0] += 1
    mistake = y_hat != yt
    if mistake:
        counts[1] += 1
    return mistake, s


@njit(**JIT)
def play_multiclass(xs, sqn, y, order, start, stop, sv, sv_sqn, sv_order, alpha, size, counts,
                    inv2s2, budget, on_margin, step, decay, removal, draws, cursor, cap, krow,
                    scores):
    """Multi-class Perceptron (2.1: on a mistake, step 1), OGD (2.2: on l > 0, step eta),
    RBP (2.3: Perceptron + uniform removal) and BOGD (2.8: decay every step, l > 0, oldest
    removal, then clip from above when the budget was full).

    ``budget`` is the buffer capacity for the unbudgeted learners (never reached)."""
    for t in range(start, stop):
        i = order[t]
        prefetch_next(xs, sqn, y, order, t, stop)
        yt = y[i]
        m = size[0]
        mistake, s = observe_multiclass(xs, sqn, i, yt, sv, sv_sqn, sv_order, alpha, m, inv2s2,
                                        krow, scores, counts)
        fire = multiclass_hinge(scores, yt, s) > 0.0 if on_margin else mistake
        if decay != 1.0:
            scale_columns(alpha, m, decay)
        if not fire:
            continue
        counts[2] += 1
        if m < budget:
            slot = append_slot(sv_order, m)
            size[0] = m + 1
            full = False
        else:
            slot = removal_slot(sv_order, m, removal, draws, cursor, budget)
            full = True
        store_row(xs, i, sqn[i], sv, sv_sqn, slot)
        store_pair(alpha, slot, yt, s, step)
        if full and cap < math.inf:
            clip_above(alpha, m, cap)


# ----------------------------------------------------------------------------- regression
@njit(**JIT)
def regression_event(f, yt, eps, counts, sq_loss):
    """delta = y - f; adds delta^2 to the running loss (before any update) and counts the step.
    Returns (delta, |delta| > eps); events are the task's "mistakes" (``counts[1]``)."""
    delta = yt - f
    sq_loss[0] += delta * delta
    counts[0] += 1
    if abs(delta) > eps:
        counts[1] += 1
        return delta, True
    return delta, False


@njit(**JIT)
def matlab_sign(v):
    """MATLAB's sign: sign(0) = 0 (reachable only when NORMA's epsilon has gone negative)."""
    if v > 0.0:
        return 1.0
    if v < 0.0:
        return -1.0
    return 0.0


@njit(**JIT)
def regression_coefficient(delta, eta, by_sign):
    """eta sign(delta) (Perceptron-type steps) or eta delta (gradient steps), spec 3's table."""
    if by_sign:
        return eta * matlab_sign(delta)
    return eta * delta


@njit(**JIT)
def observe_regression(xs, sqn, i, yt, sv, sv_sqn, sv_order, alpha, m, inv2s2, krow, eps,
                       counts, sq_loss):
    """Test-then-train, first half: kernel row, f, then :func:`regression_event`."""
    kernel_row(xs, i, sqn[i], sv, sv_sqn, m, inv2s2, krow)
    f = predict_oldest_first(alpha, krow, sv_order, m)
    return regression_event(f, yt, eps, counts, sq_loss)


@njit(**JIT)
def play_regression(xs, sqn, y, order, start, stop, sv, sv_sqn, sv_order, alpha, size, counts,
                    sq_loss, inv2s2, budget, by_sign, eta, decay, eps, eps_up, eps_down, removal,
                    draws, cursor, krow):
    """Regression Perceptron/OGD (append on |delta| > eps), NORMA (decay every step, epsilon
    raised by ``eps_up`` after an event and lowered by ``eps_down`` otherwise), RBP (uniform
    removal) and BOGD (decay every step, oldest removal). ``eps`` is a 1-element array, the
    current threshold; fixed-epsilon learners pass eps_up = eps_down = 0."""
    for t in range(start, stop):
        i = order[t]
        prefetch_next(xs, sqn, y, order, t, stop)
        m = size[0]
        delta, event = observe_regression(xs, sqn, i, y[i], sv, sv_sqn, sv_order, alpha, m, inv2s2,
                                          krow, eps[0], counts, sq_loss)
        if decay != 1.0:
            scale_coefficients(alpha, m, decay)
        if not event:
            eps[0] = eps[0] - eps_down
            continue
        eps[0] = eps[0] + eps_up
        counts[2] += 1
        if m < budget:
            slot = append_slot(sv_order, m)
            size[0] = m + 1
        else:
            slot = removal_slot(sv_order, m, removal, draws, cursor, budget)
        store_row(xs, i, sqn[i], sv, sv_sqn, slot)
        alpha[slot] = regression_coefficient(delta, eta, by_sign)


# ----------------------------------------------------------------------------- Python glue
_NO_DRAWS = np.zeros(0, dtype=np.int64)


def _draws(positions, steps):
    """The removal draws and cursor a loop consumes (none for deterministic learners)."""
    if positions is None:
        return _NO_DRAWS, np.zeros(1, dtype=np.int64)
    positions.ensure(steps)  # at most one removal per step
    return positions.draws, positions.cursor


class MulticlassTask:
    """Mixin placed before a binary learner class: same storage, alpha of shape (slots, m)
    (``SupportVectorLearner._alpha_shape``), plus a scratch vector for the class scores."""

    task = "multiclass"

    def _allocate(self, n_features, capacity, source):
        super()._allocate(n_features, capacity, source)
        self.scores_ = np.zeros(self.n_classes_)

    def _capacity_limit(self):
        return int(self.budget) if self.budgeted else self.sv_.shape[0]

    def _play_multiclass(self, stream, y, order, start, stop, *, on_margin, step, decay=1.0,
                         removal=NO_REMOVAL, positions=None, cap=math.inf):
        draws, cursor = _draws(positions, stop - start)
        play_multiclass(stream.xs, stream.sqnorms, y, order, start, stop, self.sv_, self.sv_sqn_,
                        self.order_, self.alpha_, self.size_, self.counts_,
                        1.0 / (2.0 * self.sigma_**2), self._capacity_limit(), on_margin,
                        float(step), float(decay), removal, draws, cursor, float(cap), self.krow_,
                        self.scores_)


# Why the epsilon-insensitive regressors score R^2 < 0.5 in scikit-learn's check_regressors_train
# (measured 0.0-0.3; regression FOGD reaches 0.6): one online pass over its 200 samples at the
# authors' regression defaults (sigma = 8, small eta, no update inside the epsilon = 0.1 band);
# the check's bar is set for batch regressors.
REGRESSION_POOR_SCORE = ("one online pass over 200 samples at the authors' regression defaults "
                         "(sigma 8, small eta, epsilon-insensitive updates)")


class RegressionTask(RegressorMixin):
    """Mixin placed before a binary learner class: update iff |y - f| > epsilon, squared loss
    accumulated in ``sq_loss_``. ``epsilon_`` holds the current threshold (NORMA adapts it)."""

    task = "regression"
    poor_score = REGRESSION_POOR_SCORE

    def _allocate(self, n_features, capacity, source):
        super()._allocate(n_features, capacity, source)
        self.epsilon_ = np.array([float(self.epsilon)])

    def _capacity_limit(self):
        return int(self.budget) if self.budgeted else self.sv_.shape[0]

    def _play_regression(self, stream, y, order, start, stop, *, by_sign, eta, decay=1.0,
                         eps_up=0.0, eps_down=0.0, removal=NO_REMOVAL, positions=None):
        draws, cursor = _draws(positions, stop - start)
        play_regression(stream.xs, stream.sqnorms, y, order, start, stop, self.sv_, self.sv_sqn_,
                        self.order_, self.alpha_, self.size_, self.counts_, self.sq_loss_,
                        1.0 / (2.0 * self.sigma_**2), self._capacity_limit(), by_sign, float(eta),
                        float(decay), self.epsilon_, float(eps_up), float(eps_down), removal,
                        draws, cursor, self.krow_)
