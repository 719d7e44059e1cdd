"""Pluggable sources of randomness, so a learner can be replayed draw for draw.

Randomized learners consume two kinds of draws: removal positions (RBP and binary BOGD remove
the support vector at a uniformly drawn age position) and standard normals (FOGD's frequency
matrix). ``NumpySource`` draws them from a seeded NumPy generator; ``ReplaySource`` plays back a
recorded stream, such as the ones exported from the authors' Octave runs.
"""
from __future__ import annotations

from typing import Protocol

import numpy as np


class RandomSource(Protocol):
    def positions(self, count: int, budget: int) -> np.ndarray:
        """``count`` uniform 0-based positions in [0, budget), consumed in order."""

    def normal(self, n_rows: int, n_cols: int) -> np.ndarray:
        """An (n_rows, n_cols) matrix of standard normal draws."""


class NumpySource:
    """Draws from ``numpy.random.Generator`` seeded by ``seed`` (an int or a SeedSequence)."""

    def __init__(self, seed=None):
        self.rng = np.random.default_rng(seed)

    def positions(self, count: int, budget: int) -> np.ndarray:
        return self.rng.integers(0, budget, size=count, dtype=np.int64)

    def normal(self, n_rows: int, n_cols: int) -> np.ndarray:
        return self.rng.standard_normal((n_rows, n_cols))


class ReplaySource:
    """Plays back recorded draws.

    ``positions``: 1-based removal positions as MATLAB/Octave drew them (``randperm(B)(1)``).
    ``normals``: a flat sequence of standard normals in the order ``randn(d, D)`` consumed them
    (column-major fill, as Octave does).
    """

    def __init__(self, positions=None, normals=None, budget: int | None = None):
        self._positions = None if positions is None else np.asarray(positions, dtype=np.int64) - 1
        self._normals = None if normals is None else np.asarray(normals, dtype=np.float64).ravel()
        self.budget = budget
        self._used = 0

    def positions(self, count: int, budget: int) -> np.ndarray:
        if self._positions is None:
            raise ValueError("this replay source has no recorded removal positions")
        if self.budget is not None and budget != self.budget:
            raise ValueError(f"recorded positions are for budget {self.budget}, not {budget}")
        out = self._positions[self._used : self._used + count]
        self._used += len(out)
        if len(out) < count:  # past the recording: pad with an impossible value; using it fails loudly
            out = np.concatenate([out, np.full(count - len(out), -1, dtype=np.int64)])
        return out

    def normal(self, n_rows: int, n_cols: int) -> np.ndarray:
        if self._normals is None:
            raise ValueError("this replay source has no recorded normal draws")
        need = n_rows * n_cols
        if need > self._normals.size:
            raise ValueError(f"replay source holds {self._normals.size} normals, {need} needed")
        return self._normals[:need].reshape((n_rows, n_cols), order="F").copy()


class PositionBuffer:
    """A run's supply of removal positions, drawn in fixed-size chunks.

    Chunks make the consumed sequence independent of how the stream is split into
    ``partial_fit`` calls: the j-th removal always uses the j-th draw.
    """

    CHUNK = 4096

    def __init__(self, source: RandomSource, budget: int):
        self.source, self.budget = source, budget
        self.draws = np.empty(0, dtype=np.int64)
        self.cursor = np.zeros(1, dtype=np.int64)  # mutated by the compiled loops

    def ensure(self, needed: int) -> None:
        """Make at least ``needed`` unused draws available."""
        left = self.draws.size - int(self.cursor[0])
        if left >= needed:
            return
        chunks = -(-(needed - left) // self.CHUNK)
        fresh = [self.source.positions(self.CHUNK, self.budget) for _ in range(chunks)]
        self.draws = np.concatenate([self.draws[int(self.cursor[0]) :], *fresh])
        self.cursor[0] = 0
