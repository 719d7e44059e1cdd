"""Kernel OGD (no budget), as the authors' ``binary/OGD.m`` (spec section 1.2), and its
multi-class (2.2) and regression (3) versions.

Every margin error (y f < 1, strict) stores the instance with coefficient eta * y. There is no
regularisation and no decay, so the model only grows: the buffer is preallocated for the whole
stream by :meth:`run` and doubles on demand under ``partial_fit``.
"""
from __future__ import annotations

from numba import njit

from ..base import SIGMA
from ...compute.blocked import OGD, BlockedPlay
from ...compute.kernels import JIT, append_slot, prefetch_next, store_row
from ...compute.params import NON_NEGATIVE, POSITIVE
from ..support import SupportVectorLearner
from ...compute.tasks import MulticlassTask, RegressionTask, observe_binary


@njit(**JIT)
def _play(xs, sqn, y, order, start, stop, sv, sv_sqn, sv_order, alpha, size, counts, inv2s2, eta,
          krow):
    for t in range(start, stop):
        i = order[t]
        prefetch_next(xs, sqn, y, order, t, stop)
        m = size[0]
        f, _ = observe_binary(xs, sqn, i, y[i], sv, sv_sqn, sv_order, alpha, m, inv2s2, krow,
                              counts)
        if y[i] * f < 1.0:
            counts[2] += 1
            slot = append_slot(sv_order, m)
            store_row(xs, i, sqn[i], sv, sv_sqn, slot)
            alpha[slot] = eta * y[i]
            size[0] = m + 1


class KernelOGD(BlockedPlay, SupportVectorLearner):
    """Kernel online gradient descent on the hinge loss, constant step ``eta``, no budget."""

    name = "ogd"
    task = "binary"
    budgeted = False
    _params = {"sigma": SIGMA, "eta": POSITIVE}

    def __init__(self, *, sigma: float | str = "scale", eta: float = 0.2):
        self.sigma = sigma
        self.eta = eta

    def _allocate(self, n_features, capacity, source):
        self._allocate_support(n_features, capacity)

    def _play(self, stream, y, order, start, stop):
        if self.play_in_blocks:
            self._play_binary_blocks(stream, y, order, start, stop, OGD, self.eta)
            return
        _play(stream.xs, stream.sqnorms, y, order, start, stop, self.sv_, self.sv_sqn_,
              self.order_, self.alpha_, self.size_, self.counts_,
              1.0 / (2.0 * self.sigma_**2), float(self.eta), self.krow_)


class MulticlassOGD(MulticlassTask, KernelOGD):
    """Multi-class kernel OGD (spec 2.2, the authors' ``multiclass/ogd.m``).

    Whenever the multi-class hinge loss l = max(0, 1 - (V_y - V_s)) is positive, the instance is
    stored with +eta for its class and -eta for the best wrong class; no budget, no decay.
    Default eta = 0.5, the multi-class script's value."""

    def __init__(self, *, sigma: float | str = "scale", eta: float = 0.5):
        super().__init__(sigma=sigma, eta=eta)

    def _play(self, stream, y, order, start, stop):
        if self.play_in_blocks:
            self._play_multiclass_blocks(stream, y, order, start, stop, True, self.eta)
            return
        self._play_multiclass(stream, y, order, start, stop, on_margin=True, step=self.eta)


class RegressionOGD(RegressionTask, KernelOGD):
    """Regression kernel OGD (spec 3, the authors' ``regression/OGD.m``).

    If |y - f| > ``epsilon`` the instance is appended with eta (y - f), the squared-loss
    gradient step; no budget. Default eta = 0.1 (the script's; the values stored in the
    housing/mg .mat files, 0.3/0.4, reproduce the paper's Table 9)."""

    _params = {**KernelOGD._params, "epsilon": NON_NEGATIVE}

    def __init__(self, *, sigma: float | str = "scale", eta: float = 0.1, epsilon: float = 0.1):
        super().__init__(sigma=sigma, eta=eta)
        self.epsilon = epsilon

    def _play(self, stream, y, order, start, stop):
        if self.play_in_blocks:
            self._play_regression_blocks(stream, y, order, start, stop, False, self.eta)
            return
        self._play_regression(stream, y, order, start, stop, by_sign=False, eta=self.eta)
