"""LIBSVM as LSOKL Table 3 ran it: a C-SVM with the Gaussian kernel and a bias, solved by libsvm's
SMO (spec ``BUDGETED_PEGASOS.md`` section 7).

lsokl adds no solver here: :class:`sklearn.svm.SVC` wraps libsvm itself. The settings are
libsvm's own command-line defaults, which scikit-learn changes in one place (its cache is
200 MB): tolerance 1e-3 (``-e .001``), shrinking on (``-h 1``), a 100 MB kernel cache
(``-m 100``). Sparse data goes in as CSR, so libsvm's sparse kernel code runs, as the command
line tool does on LIBSVM files.

The width follows lsokl's convention, kappa = exp(-||x-y||^2 / (2 sigma^2)), so scikit-learn's
gamma is 1 / (2 sigma^2).

``time_limit`` (seconds, optional) stops a fit that runs too long (see :mod:`.batch`): libsvm's
C loop cannot be interrupted, so the fit then runs in a forked child that is killed at the
limit, and ``fit`` raises :class:`~lsokl.learners.batch.common.FitTimeLimitError`.
"""
from __future__ import annotations

import time

import numpy as np
from sklearn.svm import SVC
from sklearn.utils.validation import check_is_fitted

from ..base import SIGMA, fit_width, warn_if_constant_model
from .common import TIME_LIMIT, BatchClassifier, call_with_time_limit
from ...compute.params import POSITIVE, Num, OneOf
from ...compute.validation import validate


class LIBSVM(BatchClassifier):
    """C-SVM with a Gaussian kernel (libsvm through scikit-learn's ``SVC``).

    Parameters
    ----------
    C : the box constraint.
    sigma : Gaussian kernel width; libsvm's gamma = 1 / (2 sigma^2).
    tol : stopping tolerance of SMO (libsvm ``-e``; 1e-3 is libsvm's default).
    shrinking : libsvm's shrinking heuristic (``-h``; on by default).
    cache_size : kernel cache in MB (``-m``; libsvm's default 100).
    max_iter : cap on SMO iterations, -1 for none (scikit-learn's option).
    time_limit : seconds after which the fit is abandoned with ``FitTimeLimitError``; None: none.
    """

    name = "libsvm"
    multi_class = True  # SVC's one-vs-one, as LIBSVM's own multi-class mode
    _params = {"C": POSITIVE, "sigma": SIGMA, "tol": POSITIVE, "shrinking": OneOf((True, False)),
               "cache_size": POSITIVE, "max_iter": Num(-1, np.inf, "left", integer=True),
               "time_limit": TIME_LIMIT}

    def __init__(self, *, C: float = 1.0, sigma: float | str = "scale", tol: float = 1e-3,
                 shrinking: bool = True, cache_size: float = 100.0, max_iter: int = -1,
                 time_limit: float | None = None):
        self.C = C
        self.sigma = sigma
        self.tol = tol
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.max_iter = max_iter
        self.time_limit = time_limit

    def fit(self, X, y):
        self._validate_params()
        X, y = validate(self, X, y, accept_sparse="csr", dtype=np.float64)
        fit_width(self, X)
        svc = SVC(kernel="rbf", C=self.C, gamma=self.gamma, tol=self.tol,
                  shrinking=self.shrinking, cache_size=self.cache_size, max_iter=self.max_iter)

        def solve():
            t0 = time.perf_counter()
            svc.fit(X, y)
            return svc, time.perf_counter() - t0

        self.svc_, self.fit_time_ = call_with_time_limit(
            solve, self.time_limit, f"libsvm fit (C={self.C:g}, sigma={self.sigma_:g}, n={X.shape[0]})")
        self.classes_ = self.svc_.classes_
        self.n_iter_ = self.svc_.n_iter_  # SMO iterations (per pair of classes), as SVC reports
        warn_if_constant_model(self, X, y)
        return self

    @property
    def support_size_(self) -> int:
        """Number of support vectors of the fitted model."""
        check_is_fitted(self, "svc_")
        return int(self.svc_.support_.shape[0])

    def decision_function(self, X) -> np.ndarray:
        check_is_fitted(self, "svc_")
        X = validate(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return self.svc_.decision_function(X)

    def predict(self, X) -> np.ndarray:
        check_is_fitted(self, "svc_")
        X = validate(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return self.svc_.predict(X)


class MulticlassLIBSVM(LIBSVM):
    """LIBSVM on m >= 2 classes: SVC's one-vs-one, as LIBSVM's own multi-class mode (the same
    estimator, registered for the multi-class task)."""

    task = "multiclass"
