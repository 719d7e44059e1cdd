"""Fastfood (Le, Sarlos, Smola 2013), as Ji Zhao's ``FastfoodPara.m``/``FastfoodForKernel.m``.

Frequencies V = (1 / (sigma sqrt(d'))) S H G Pi H B stacked in n/d' blocks of d' rows, where
d' = 2^ceil(log2 d) (inputs zero-padded), n = k rounded up to a multiple of d', H the
unnormalised Walsh-Hadamard matrix, B random signs, Pi a random permutation, G standard normal
and S = s / ||G||_F with s ~ chi(d'), so every row of V has the length of a N(0, I / sigma^2)
vector. Features [cos(V x), sin(V x)] / sqrt(n) (2n columns), the sin/cos pair of
:mod:`lsokl.compute.features`. Impossible when d' > k (MEKA Table 8's mnist2m "na").

Why a hand-written transform: scikit-learn-extra's ``Fastfood`` (0.3.0) builds its FWHT with
Cython against numpy 1 and fails to import under numpy >= 2, and SciPy has no fast
Walsh-Hadamard transform (``scipy.linalg.hadamard`` is a dense O(d'^2) matrix). The numba
butterfly below is O(d' log d') per row.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..compute.features import fourier_from_projections
from ..compute.kernels import JIT
from ..compute.params import KernelName
from .base import LowRankApproximation, as_dense, timed


@njit(**JIT)
def fwht_rows(A):
    """In-place unnormalised Walsh-Hadamard transform of every row of A (row length 2^p)."""
    n, d = A.shape
    for r in range(n):
        row = A[r]
        h = 1
        while h < d:
            for i in range(0, d, 2 * h):
                for j in range(i, i + h):
                    a = row[j]
                    b = row[j + h]
                    row[j] = a + b
                    row[j + h] = a - b
            h *= 2


class Fastfood(LowRankApproximation):
    """Fastfood: about ``rank`` frequencies (rounded up to a multiple of d'), sin and cos features."""

    name = "fastfood"
    display = "Fastfood"

    _params = {**LowRankApproximation._params,
               "kernel": KernelName(("gaussian",), "Fastfood approximates the Gaussian kernel only; "
                                                   "rks draws Cauchy frequencies for the Laplacian")}

    def __init__(self, *, rank: int = 128, gamma: float = 1.0, kernel: str = "gaussian", random_state=None):
        self.rank = rank
        self.gamma = gamma
        self.kernel = kernel
        self.random_state = random_state

    def _fit(self, X, rng):
        d = X.shape[1]
        dp = 1 << max(0, int(np.ceil(np.log2(max(d, 1)))))
        if dp > int(self.rank):
            raise ValueError(f"Fastfood: rank={self.rank} is smaller than the padded dimension "
                             f"d'={dp} (d={d}); Fastfood needs rank >= d' (the paper's 'na')")
        blocks = -(-int(self.rank) // dp)
        with timed(self.timings_, "factor", self.cpu_timings_):
            self.dim_ = dp
            self.B_ = rng.choice([-1.0, 1.0], size=(blocks, dp))
            self.Pi_ = np.stack([rng.permutation(dp) for _ in range(blocks)])
            self.G_ = rng.standard_normal((blocks, dp))
            s = np.sqrt(rng.chisquare(dp, size=(blocks, dp)))
            self.S_ = s / np.linalg.norm(self.G_, axis=1, keepdims=True)
            self.Z_ = self.transform(X)

    @property
    def n_frequencies_(self) -> int:
        return int(self.B_.size)

    def project(self, X) -> np.ndarray:
        """V x for every row: (m, blocks * d')."""
        X = as_dense(X)
        m, d = X.shape
        blocks, dp = self.B_.shape
        P = np.empty((m, blocks * dp))
        scale = np.sqrt(2.0 * float(self.gamma)) / np.sqrt(dp)  # 1 / (sigma sqrt(d'))
        for b in range(blocks):
            T = np.zeros((m, dp))
            T[:, :d] = X * self.B_[b, :d]
            fwht_rows(T)
            T = T[:, self.Pi_[b]] * self.G_[b]
            T = np.ascontiguousarray(T)
            fwht_rows(T)
            P[:, b * dp:(b + 1) * dp] = T * (self.S_[b] * scale)
        return P

    def transform(self, X_new) -> np.ndarray:
        P = np.ascontiguousarray(self.project(X_new))
        Z = np.empty((P.shape[0], 2 * P.shape[1]))
        fourier_from_projections(P, Z)
        return Z / np.sqrt(P.shape[1])
