"""LIBSVM on a random subsample of the training set: the "LIBSVM (subsample)" row of MEKA Table 2
(a random 1/5 of the training points, then the exact solver). Everything else is
:class:`lsokl.learners.libsvm.LIBSVM`."""
from __future__ import annotations

import numpy as np
from sklearn.utils.validation import validate_data

from .base import SEED
from .libsvm import LIBSVM
from .params import Num


class LIBSVMSubsample(LIBSVM):
    """:class:`~lsokl.learners.libsvm.LIBSVM` trained on ``fraction`` of the rows, drawn
    uniformly without replacement with ``random_state``."""

    name = "libsvm-subsample"
    randomized = True
    _params = {**LIBSVM._params, "fraction": Num(0, 1, "right"), "random_state": SEED}

    def __init__(self, *, C: float = 1.0, sigma: float = 8.0, tol: float = 1e-3,
                 shrinking: bool = True, cache_size: float = 100.0, max_iter: int = -1,
                 time_limit: float | None = None, fraction: float = 0.2, random_state=None):
        super().__init__(C=C, sigma=sigma, tol=tol, shrinking=shrinking, cache_size=cache_size,
                         max_iter=max_iter, time_limit=time_limit)
        self.fraction = fraction
        self.random_state = random_state

    def fit(self, X, y):
        self._validate_params()
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64)
        n = X.shape[0]
        m = max(2, int(round(self.fraction * n)))
        self.subsample_ = np.sort(np.random.default_rng(self.random_state).choice(n, min(m, n), replace=False))
        return super().fit(X[self.subsample_], np.asarray(y)[self.subsample_])
