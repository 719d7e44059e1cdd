"""Random Budget Perceptron, as the authors' ``binary/RBP.m`` (spec section 1.3), and its
multi-class (2.3) and regression (3) versions.

Perceptron updates (on sign mistakes, sign(0) = +1). With the budget full, one stored vector
chosen uniformly among the B current ones is removed first (``randperm(B)(1)`` in the authors'
code indexes the oldest-first list), then the new one is appended as the newest, so the new
point is never the one removed. Draws come from a :class:`PositionBuffer`: the j-th removal uses
the j-th draw, which is what lets a recorded Octave stream be replayed exactly.
"""
from __future__ import annotations

from numba import njit

from ..base import SEED, SIGMA
from ...compute.kernels import JIT, append_slot, evict_and_reuse, prefetch_next, store_row
from ...compute.params import BUDGET, NON_NEGATIVE, POSITIVE
from ...compute.randomness import PositionBuffer
from ..support import SupportVectorLearner
from ...compute.duplicates import memo_for
from ...compute.tasks import RANDOM_REMOVAL, MulticlassTask, RegressionTask, observe_binary_memo


@njit(**JIT)
def _play(xs, sqn, y, order, start, stop, sv, sv_sqn, sv_order, alpha, size, counts, inv2s2,
          budget, draws, cursor, krow, memo):
    for t in range(start, stop):
        i = order[t]
        prefetch_next(xs, sqn, y, order, t, stop)
        m = size[0]
        # f summed oldest first, as the authors' alpha * k_t: near-cancelling sums keep their sign.
        # (the update below does not read the kernel row, so a memo hit needs no refresh)
        _, mistake, _ = observe_binary_memo(xs, sqn, i, y[i], sv, sv_sqn, sv_order, alpha, m,
                                            inv2s2, krow, counts, memo)
        if mistake:
            counts[2] += 1
            if m < budget:
                slot = append_slot(sv_order, m)
                size[0] = m + 1
            else:
                pos = draws[cursor[0]]
                cursor[0] += 1
                if pos < 0 or pos >= budget:
                    raise ValueError("removal draw out of range: the random source ran out or "
                                     "was recorded for another budget")
                slot = evict_and_reuse(sv_order, m, pos)
            store_row(xs, i, sqn[i], sv, sv_sqn, slot)
            alpha[slot] = y[i]


class RBP(SupportVectorLearner):
    """Kernel Perceptron with at most ``budget`` support vectors and uniform random removal."""

    name = "rbp"
    reads_float32 = True  # rows only through kernel_row/store_row (issue 26; base.OnlineLearner)
    task = "binary"
    budgeted = True
    randomized = True
    _params = {"sigma": SIGMA, "budget": BUDGET, "random_state": SEED}

    def __init__(self, *, sigma: float | str = "scale", budget: int = 100, random_state=None):
        self.sigma = sigma
        self.budget = budget
        self.random_state = random_state

    def _allocate(self, n_features, capacity, source):
        self._allocate_support(n_features, capacity)
        self.positions_ = PositionBuffer(source, int(self.budget))

    def _play(self, stream, y, order, start, stop):
        # At most one removal per step, so this many draws always suffice for the segment.
        self.positions_.ensure(stop - start)
        _play(stream.xs, stream.sqnorms, y, order, start, stop, self.sv_, self.sv_sqn_,
              self.order_, self.alpha_, self.size_, self.counts_, 1.0 / (2.0 * self.sigma_**2),
              int(self.budget), self.positions_.draws, self.positions_.cursor, self.krow_,
              memo_for(stream, self).arrays)


class MulticlassRBP(MulticlassTask, RBP):
    """Multi-class RBP (spec 2.3, the authors' ``multiclass/RBP.m``).

    Multi-class Perceptron updates (+1 for y_t, -1 for s_t on an argmax mistake). With
    ``budget`` instances stored, the instance at a uniformly drawn position of the oldest-first
    instance list (the authors' ``SV_list``) is removed with both its coefficients first."""

    def __init__(self, *, sigma: float | str = "scale", budget: int = 200, random_state=None):
        super().__init__(sigma=sigma, budget=budget, random_state=random_state)

    def _play(self, stream, y, order, start, stop):
        self._play_multiclass(stream, y, order, start, stop, on_margin=False, step=1.0,
                              removal=RANDOM_REMOVAL, positions=self.positions_)


class RegressionRBP(RegressionTask, RBP):
    """Regression RBP (spec 3, the authors' ``regression/RBP.m``).

    If |y - f| > ``epsilon``: with the budget full, remove the SV at a uniformly drawn position of
    the oldest-first list, then append the instance with eta sign(y - f). Defaults are the
    regression script's (B = 30, eta_perceptron = 0.1, epsl = 0.1)."""

    _params = {**RBP._params, "eta": POSITIVE, "epsilon": NON_NEGATIVE}

    def __init__(self, *, sigma: float | str = "scale", budget: int = 30, eta: float = 0.1,
                 epsilon: float = 0.1, random_state=None):
        super().__init__(sigma=sigma, budget=budget, random_state=random_state)
        self.eta = eta
        self.epsilon = epsilon

    def _play(self, stream, y, order, start, stop):
        self._play_regression(stream, y, order, start, stop, by_sign=True, eta=self.eta,
                              removal=RANDOM_REMOVAL, positions=self.positions_)
