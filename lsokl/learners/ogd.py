"""Kernel OGD (no budget), as the authors' ``binary/OGD.m`` (spec section 1.2).

Every margin error (y f < 1, strict) stores the instance with coefficient eta * y. There is no
regularisation and no decay, so the model only grows: the buffer is preallocated for the whole
stream by :meth:`run` and doubles on demand under ``partial_fit``.
"""
from __future__ import annotations

from numba import njit

from .base import SIGMA
from .kernels import JIT, append_slot, kernel_row, sign, store_row
from .params import POSITIVE
from .support import SupportVectorLearner


@njit(**JIT)
def _play(xs, sqn, y, order, start, stop, sv, sv_sqn, sv_order, alpha, size, counts, inv2s2, eta,
          krow):
    for t in range(start, stop):
        i = order[t]
        m = size[0]
        kernel_row(xs, i, sqn[i], sv, sv_sqn, m, inv2s2, krow)
        f = 0.0
        for j in range(m):
            f += alpha[j] * krow[j]
        counts[0] += 1
        if sign(f) != y[i]:
            counts[1] += 1
        if y[i] * f < 1.0:
            counts[2] += 1
            slot = append_slot(sv_order, m)
            store_row(xs, i, sqn[i], sv, sv_sqn, slot)
            alpha[slot] = eta * y[i]
            size[0] = m + 1


class KernelOGD(SupportVectorLearner):
    """Kernel online gradient descent on the hinge loss, constant step ``eta``, no budget."""

    name = "ogd"
    task = "binary"
    budgeted = False
    _params = {"sigma": SIGMA, "eta": POSITIVE}

    def __init__(self, *, sigma: float = 8.0, eta: float = 0.2):
        self.sigma = sigma
        self.eta = eta

    def _allocate(self, n_features, capacity, source):
        self._allocate_support(n_features, capacity)

    def _play(self, stream, y, order, start, stop):
        _play(stream.xs, stream.sqnorms, y, order, start, stop, self.sv_, self.sv_sqn_,
              self.order_, self.alpha_, self.size_, self.counts_,
              1.0 / (2.0 * self.sigma**2), float(self.eta), self.krow_)
