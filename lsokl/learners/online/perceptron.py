"""Kernel Perceptron (no budget), as the authors' ``binary/perceptron.m`` (spec 1.1), and its
multi-class (2.1) and regression (3) versions.

On a mistake (sign(f) != y, with sign(0) = +1) the instance is stored with coefficient y.
"""
from __future__ import annotations

from numba import njit

from ..base import SIGMA
from ...compute.blocked import PERCEPTRON, BlockedPlay
from ...compute.kernels import JIT, append_slot, prefetch_next, store_row
from ...compute.params import NON_NEGATIVE, POSITIVE
from ..support import SupportVectorLearner
from ...compute.tasks import MulticlassTask, RegressionTask, observe_binary


@njit(**JIT)
def _play(xs, sqn, y, order, start, stop, sv, sv_sqn, sv_order, alpha, size, counts, inv2s2, krow):
    for t in range(start, stop):
        i = order[t]
        prefetch_next(xs, sqn, y, order, t, stop)
        m = size[0]
        _, mistake = observe_binary(xs, sqn, i, y[i], sv, sv_sqn, sv_order, alpha, m, inv2s2,
                                    krow, counts)
        if mistake:
            counts[2] += 1
            slot = append_slot(sv_order, m)
            store_row(xs, i, sqn[i], sv, sv_sqn, slot)
            alpha[slot] = y[i]
            size[0] = m + 1


class KernelPerceptron(BlockedPlay, SupportVectorLearner):
    """Kernel Perceptron with a Gaussian kernel of width ``sigma`` and no budget."""

    name = "perceptron"
    task = "binary"
    budgeted = False
    _params = {"sigma": SIGMA}

    def __init__(self, *, sigma: float | str = "scale"):
        self.sigma = sigma

    def _allocate(self, n_features, capacity, source):
        self._allocate_support(n_features, capacity)

    def _play(self, stream, y, order, start, stop):
        if self.play_in_blocks:
            self._play_binary_blocks(stream, y, order, start, stop, PERCEPTRON)
            return
        _play(stream.xs, stream.sqnorms, y, order, start, stop, self.sv_, self.sv_sqn_,
              self.order_, self.alpha_, self.size_, self.counts_,
              1.0 / (2.0 * self.sigma_**2), self.krow_)


class MulticlassPerceptron(MulticlassTask, KernelPerceptron):
    """Multi-class kernel Perceptron (spec 2.1, the authors' ``multiclass/perceptron.m``).

    On an argmax mistake the instance is stored with +1 for its class and -1 for the best wrong
    class s_t (ties to the lowest class index); no budget."""

    def _play(self, stream, y, order, start, stop):
        if self.play_in_blocks:
            self._play_multiclass_blocks(stream, y, order, start, stop, False, 1.0)
            return
        self._play_multiclass(stream, y, order, start, stop, on_margin=False, step=1.0)


class RegressionPerceptron(RegressionTask, KernelPerceptron):
    """Regression Perceptron (spec 3, the authors' ``regression/perceptron.m``).

    If |y - f| > ``epsilon`` the instance is appended with eta sign(y - f); no budget. Defaults
    are the authors' regression script (eta_perceptron = 0.1, epsl = 0.1)."""

    _params = {**KernelPerceptron._params, "eta": POSITIVE, "epsilon": NON_NEGATIVE}

    def __init__(self, *, sigma: float | str = "scale", eta: float = 0.1, epsilon: float = 0.1):
        self.sigma = sigma
        self.eta = eta
        self.epsilon = epsilon

    def _play(self, stream, y, order, start, stop):
        if self.play_in_blocks:
            self._play_regression_blocks(stream, y, order, start, stop, True, self.eta)
            return
        self._play_regression(stream, y, order, start, stop, by_sign=True, eta=self.eta)
