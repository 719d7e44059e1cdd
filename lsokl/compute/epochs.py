"""The training order of several passes (``epochs``), generated one epoch at a time.

Concatenating the order of every epoch up front holds ``epochs x n`` int64 row indices (``epochs: 1000000``
on 1,000 rows is 7.5 GiB) although a learner reads one pass at a time. :class:`EpochOrder` is that order as a
sequence of epochs, each made by ``order_of(epoch)`` when it is reached, so what it holds does not grow with the
number of epochs: at most one epoch's order (n indices) at a time.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np


class EpochOrder:
    """``epochs`` passes over ``n`` rows; epoch ``e``'s order is ``order_of(e)`` (a permutation of
    0..n-1, or any 1-d array of n row indices), made when needed and kept until the next epoch is."""

    def __init__(self, order_of: Callable[[int], np.ndarray], n: int, epochs: int):
        if int(epochs) < 1:
            raise ValueError(f"epochs must be >= 1, got {epochs}")
        self.order_of, self.n, self.epochs = order_of, int(n), int(epochs)
        self._held: tuple[int, np.ndarray] | None = None

    def __len__(self) -> int:
        return self.n * self.epochs

    def epoch(self, e: int) -> np.ndarray:
        """Epoch ``e``'s order (made once per epoch, in turn)."""
        if not 0 <= e < self.epochs:
            raise IndexError(f"epoch {e} of {self.epochs}")
        if self._held is None or self._held[0] != e:
            order = np.asarray(self.order_of(e))
            if order.shape != (self.n,):
                raise ValueError(f"the order of epoch {e} has shape {order.shape}, not ({self.n},)")
            self._held = (e, order)
        return self._held[1]

    def segments(self, cuts=()) -> Iterator[tuple[int, int, np.ndarray]]:
        """``(start, stop, rows)`` pieces covering the whole stream in order: cut at every epoch's end
        and at each of ``cuts`` (step counts in (0, len)); ``rows`` is a view of one epoch's order."""
        total = len(self)
        if total == 0:
            return
        cuts = sorted({int(c) for c in cuts if 0 < int(c) < total})
        k = 0
        for e in range(self.epochs):  # epoch by epoch: nothing the size of `epochs` is built
            lo, hi = e * self.n, (e + 1) * self.n
            order, start = self.epoch(e), lo
            while k < len(cuts) and cuts[k] <= lo:
                k += 1
            while k < len(cuts) and cuts[k] < hi:
                yield start, cuts[k], order[start - lo: cuts[k] - lo]
                start = cuts[k]
                k += 1
            yield start, hi, order[start - lo:]

    def materialise(self) -> np.ndarray:
        """Every epoch's order concatenated (``epochs x n`` indices: for learners that need the whole
        stream at once, such as the mini-batch ``fit_curve``)."""
        return np.concatenate([self.epoch(e) for e in range(self.epochs)]) if self.n else np.zeros(0, np.int64)
