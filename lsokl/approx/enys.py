"""ENys: ensemble Nystrom (Kumar, Mohri, Talwalkar 2009) with 3 experts and uniform weights.

Each expert is a standard Nystrom (:class:`~lsokl.approx.nystrom.Nystrom`) of rank floor(k/3)
with 2 floor(k/3) landmarks, so the ensemble stores about the same n k floats as Nys (MEKA spec
section 2: rank k per expert gives 0.113 on pendigit, far from the published 0.288). With weights
1/t, G~ = sum_i Z_i Z_i' / t = Z Z' for Z = [Z_1, ..., Z_t] / sqrt(t).
"""
from __future__ import annotations

import numpy as np

from ..compute.params import Num
from .base import LowRankApproximation, timed
from .nystrom import Nystrom


class EnsembleNystrom(LowRankApproximation):
    """ENys: ``experts`` standard Nystrom approximations of rank floor(k / experts), averaged."""

    name = "enys"
    display = "ENys"
    _params = {**LowRankApproximation._params, "experts": Num(1, np.inf, "left", integer=True),
               "landmark_factor": Num(1, np.inf, "left")}

    def __init__(self, *, rank: int = 128, gamma: float = 1.0, experts: int = 3,
                 landmark_factor: float = 2.0, kernel: str = "gaussian", random_state=None):
        self.rank = rank
        self.gamma = gamma
        self.experts = experts
        self.landmark_factor = landmark_factor
        self.kernel = kernel
        self.random_state = random_state

    def _fit(self, X, rng):
        t = int(self.experts)
        per = int(self.rank) // t
        if per < 1:
            raise ValueError(f"EnsembleNystrom: rank={self.rank} gives rank 0 to each of "
                             f"experts={t} experts; choose rank >= experts")
        self._check_rank(X.shape[0], per)
        self.experts_ = []
        with timed(self.timings_, "factor", self.cpu_timings_):
            for child in rng.spawn(t):
                self.experts_.append(Nystrom(rank=per, gamma=self.gamma,
                                             landmark_factor=self.landmark_factor,
                                             kernel=self.kernel).fit(X, seed=child))
            self.Z_ = np.hstack([e.Z_ for e in self.experts_]) / np.sqrt(t)

    def transform(self, X_new) -> np.ndarray:
        return np.hstack([e.transform(X_new) for e in self.experts_]) / np.sqrt(len(self.experts_))
