"""Fastfood + linear SVM, the "FastFood" row of MEKA Table 2 (from the authors' DC-SVM paper):
Fastfood random features (:class:`lsokl.approx.fastfood.Fastfood`, the same code as the
approximation-error baseline) and a linear SVM on them solved by dual coordinate descent
(scikit-learn's ``LinearSVC(dual=True, loss="hinge")``, i.e. LIBLINEAR).

"About 3000 features" is read as 1536 frequencies, i.e. 3072 sin/cos columns (``n_frequencies``
is rounded up to a multiple of the padded input dimension).

More than two classes: LIBLINEAR's one-vs-rest (``LinearSVC``'s own multi-class mode), predicting
the class of the largest decision value.
"""
from __future__ import annotations

import time

import numpy as np
from sklearn.svm import LinearSVC
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from ..base import SEED, SIGMA, fit_width, warn_if_constant_model
from .common import TIME_LIMIT, BatchClassifier, call_with_time_limit
from ...compute.params import POSITIVE, Num
from ...compute.validation import validate


class FastfoodSVM(BatchClassifier):
    """Linear SVM on Fastfood features of the Gaussian kernel exp(-||x-y||^2 / (2 sigma^2))."""

    name = "fastfood-svm"
    randomized = True
    multi_class = True  # LinearSVC's one-vs-rest
    _params = {"C": POSITIVE, "sigma": SIGMA, "n_frequencies": Num(1, np.inf, "left", integer=True),
               "max_iter": Num(1, np.inf, "left", integer=True), "random_state": SEED,
               "time_limit": TIME_LIMIT}

    def __init__(self, *, C: float = 1.0, sigma: float | str = "scale", n_frequencies: int = 1536,
                 max_iter: int = 1000, random_state=None, time_limit: float | None = None):
        self.C = C
        self.sigma = sigma
        self.n_frequencies = n_frequencies
        self.max_iter = max_iter
        self.random_state = random_state
        self.time_limit = time_limit

    def memory_estimate(self, n_samples: int, n_features: int, n_outputs: int = 1) -> dict:
        """The Fastfood features of every training row (n x 2 n_frequencies float64) and LIBLINEAR's own copy of
        them (lsokl.runner.resources): ``n_frequencies: 1e9`` is refused before the fit allocates them."""
        cols = 2.0 * float(self.n_frequencies)
        z = 8.0 * n_samples * cols
        return {f"Fastfood features Z (n x 2 n_frequencies = {n_samples:,} x {int(cols):,})": z,
                "LIBLINEAR's copy of Z (value and index per entry)": 1.5 * z,
                f"Fastfood transform (n_frequencies = {int(self.n_frequencies):,}, padded d)": 8.0 * 4 * cols}

    def fit(self, X, y):
        from ...approx.fastfood import Fastfood

        self._validate_params()
        X, y = validate(self, X, y, accept_sparse="csr", dtype=np.float64)
        fit_width(self, X)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        gamma = self.gamma

        rng = np.random.default_rng(self.random_state)
        self.svm_seed_ = int(rng.integers(2**31 - 1))  # LIBLINEAR's coordinate order

        def solve():
            t0 = time.perf_counter()
            ff = Fastfood(rank=int(self.n_frequencies), gamma=gamma).fit(X, seed=rng)
            svm = LinearSVC(C=self.C, loss="hinge", dual=True, max_iter=int(self.max_iter),
                            random_state=self.svm_seed_)
            svm.fit(ff.Z_, y)
            return ff, svm, time.perf_counter() - t0

        self.features_, self.svm_, self.fit_time_ = call_with_time_limit(
            solve, self.time_limit, f"fastfood-svm fit (n={X.shape[0]})")
        self.n_iter_ = self.svm_.n_iter_  # LIBLINEAR's coordinate-descent iterations
        warn_if_constant_model(self, X, y)
        return self

    def decision_function(self, X) -> np.ndarray:
        check_is_fitted(self, "svm_")
        X = validate(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return self.svm_.decision_function(self.features_.transform(X))
