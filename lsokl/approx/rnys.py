"""RNys: Nystrom with a randomised SVD of the landmark matrix (Li, Kwok, Lu 2010; Mu Li's
``rnys.m``/``rsvd.m``).

Same landmarks as Nys (m = 2k, uniform). The top-k eigenpairs of M come from a randomised range
finder: Omega (m x (k+p)) standard normal, Y = M Omega (q = 1 in ``rsvd.m``'s convention means no
extra power iteration), Q = qr(Y), B = Q' M Q, and the top k eigenpairs of B lifted by Q.
"""
from __future__ import annotations

import numpy as np

from ..compute.params import Num
from .nystrom import NystromFamily

#: products with M RNys may ask for (``rsvd.m``'s q = 1; a few more sharpen the spectrum, each costs an m x m
#: product and a QR, and a power iteration has no convergence test to stop at): above this, the config is refused
MAX_POWER_ITERATIONS = 100


def randomized_eigenpairs(rng, oversample: int = 10, power_iterations: int = 1):
    """gram -> (lam, V): top-k eigenpairs of a symmetric PSD matrix by a randomised range finder.
    ``power_iterations`` counts products with M as ``rsvd.m`` does (q = 1: Y = M Omega)."""

    def solve(gram: np.ndarray, rank: int):
        m = gram.shape[0]
        width = min(m, rank + oversample)
        Y = gram @ rng.standard_normal((m, width))
        for _ in range(power_iterations - 1):
            Y = gram @ np.linalg.qr(Y)[0]
        Q = np.linalg.qr(Y)[0]
        lam, U = np.linalg.eigh(Q.T @ gram @ Q)
        order = np.argsort(-np.abs(lam))[:rank]
        return np.abs(lam[order]), Q @ U[:, order]

    return solve


class RNystrom(NystromFamily):
    """RNys: Nys with a randomised SVD (oversampling p = 10, q = 1)."""

    name = "rnys"
    display = "RNys"
    _params = {**NystromFamily._params, "oversample": Num(0, np.inf, "left", integer=True),
               "power_iterations": Num(1, MAX_POWER_ITERATIONS, "both", integer=True)}

    def __init__(self, *, rank: int = 128, gamma: float = 1.0, landmark_factor: float = 2.0,
                 oversample: int = 10, power_iterations: int = 1, kernel: str = "gaussian", random_state=None):
        super().__init__(rank=rank, gamma=gamma, landmark_factor=landmark_factor, kernel=kernel,
                         random_state=random_state)
        self.oversample = oversample
        self.power_iterations = power_iterations

    def _eigenpairs(self, rng):
        return randomized_eigenpairs(rng, int(self.oversample), int(self.power_iterations))
