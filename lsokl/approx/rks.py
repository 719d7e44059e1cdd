"""RKS: random Fourier features (Rahimi and Recht 2007) in the MEKA paper's "same memory" setting.

k frequencies omega ~ N(0, 2 gamma I) and features [cos(Omega x), sin(Omega x)] / sqrt(k) (2k
columns), so z(x).z(y) ~= exp(-gamma ||x - y||^2). This is FOGD's own
:class:`lsokl.compute.features.FourierMap` (frequencies randn / sigma with sigma = 1/sqrt(2 gamma),
the same vectorised sin/cos) divided by sqrt(k): one implementation of random Fourier features.
scikit-learn's ``RBFSampler`` is the cos(omega x + b) variant, which gives 0.651 instead of the
published 0.440 on pendigit (MEKA spec section 2).

``kernel="laplacian"``: exp(-gamma ||x - y||_1) is the Fourier transform of a product of Cauchy
densities (Rahimi and Recht 2007, their Laplacian example), so every frequency coordinate is drawn
from the Cauchy distribution with scale gamma; the features are the same sin/cos pair.
"""
from __future__ import annotations

import numpy as np

from ..compute.features import FourierMap
from ..compute.randomness import NumpySource
from ..compute.stream import Stream
from ..compute.xp import asarray, is_numpy, namespace
from .base import LowRankApproximation, as_dense, timed


class RandomFourier(LowRankApproximation):
    """RKS: ``rank`` random frequencies, sin and cos features (2 * rank columns)."""

    name = "rks"
    display = "RKS"
    array_api_support = True

    def __init__(self, *, rank: int = 128, gamma: float = 1.0, kernel: str = "gaussian",
                 random_state=None):
        self.rank = rank
        self.gamma = gamma
        self.kernel = kernel
        self.random_state = random_state

    def memory_estimate(self, n_samples: int, n_features: int, n_outputs: int = 1) -> dict:
        """A fit draws the frequencies U (d x k, copied onto an aligned buffer: two at the peak) and maps
        X to Z = [cos(XU), sin(XU)] (n x 2k, with the products XU and their cos/sin as temporaries); no
        landmark blocks and no K x K matrix (those are the Nystrom family's, lsokl.approx.base)."""
        n, k = float(n_samples), float(self.rank)
        return {f"factor Z (n x 2k = {n_samples:,} x {2 * int(self.rank):,})": 8.0 * n * 2 * k,
                "temporaries XU, cos(XU), sin(XU) (n x k each)": 3 * 8.0 * n * k,
                f"frequencies U (d x k = {n_features:,} x {int(self.rank):,}) and its aligned copy":
                    2 * 8.0 * float(n_features) * k}

    def _fit(self, X, rng):
        with timed(self.timings_, "factor", self.cpu_timings_):
            if self.kernel == "laplacian":  # Cauchy(0, gamma) frequencies, coordinate by coordinate
                self.map_ = FourierMap(rng.standard_cauchy((X.shape[1], int(self.rank))) * float(self.gamma))
            else:
                source = NumpySource(rng)  # default_rng(Generator) is that generator
                self.map_ = FourierMap.draw(source, X.shape[1], int(self.rank), self.sigma)
            self.Z_ = self.transform(X)

    def _fit_xp(self, X, rng):
        """The same frequencies (numpy, from the same seed) on X's device; Z = [cos(XU), sin(XU)]
        / sqrt(k) in X's namespace."""
        with timed(self.timings_, "factor", self.cpu_timings_):
            self.map_ = FourierMap.draw(NumpySource(rng), X.shape[1], int(self.rank), self.sigma)
            self.U_ = asarray(self.map_.U, X)
            self.Z_ = None
            self.Z_ = self.transform(X)

    def transform(self, X_new) -> np.ndarray:
        if not is_numpy(X_new) or self._factor_like() is not None:  # the Array API path
            X_new = self._dense_like(X_new)
            xp = namespace(X_new)
            P = X_new @ self.U_
            return xp.concat([xp.cos(P), xp.sin(P)], axis=1) / float(np.sqrt(self.map_.n_components))
        return self.map_.transform(Stream(as_dense(X_new))) / np.sqrt(self.map_.n_components)
