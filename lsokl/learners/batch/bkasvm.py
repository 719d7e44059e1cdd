"""BKA-SVM: the kernel SVM on MEKA's block-diagonal kernel approximation (Si, Hsieh, Dhillon,
JMLR 2017, sec. 4.1; the authors' DC-SVM package in "early prediction" mode, spec ``MEKA.md``
section 4).

1. k-means (scikit-learn's ``KMeans``: the paper ran MATLAB's ``kmeans``, k-means++ seeding,
   10 iterations) on min(5000, n) training points sampled uniformly, into 64 clusters;
2. every training point goes to its nearest centre: the block-diagonal kernel
   G ~= blockdiag(G_ss) is exactly one independent SVM per block;
3. one LIBSVM per cluster (scikit-learn's ``SVC``, which wraps libsvm) with tolerance 1e-2, the
   DC-SVM package's ``-e 0.01``; libsvm's intercept is kept (the package's libsvm-nobias has none,
   the paper says accuracy is similar);
4. the centres are recomputed as the means of the assigned points, and each test point is
   routed to its nearest centre and scored by that cluster's model only.

A cluster whose points all carry one label predicts that label. The width follows lsokl's batch
learners: kappa = exp(-||x-y||^2 / (2 sigma^2)), i.e. the paper's gamma = 1 / (2 sigma^2).

Binary only, as MEKA Table 2 runs it: a multi-class label set is refused in ``fit`` with
scikit-learn's "Only binary classification is supported." (the per-cluster SVMs could each see a
different subset of the classes, so there is no common multi-class decision function).
"""
from __future__ import annotations

import time

import numpy as np
from sklearn.cluster import KMeans
from sklearn.svm import SVC
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from ..base import SEED, SIGMA, fit_width, warn_if_constant_model
from .common import TIME_LIMIT, BatchClassifier, call_with_time_limit
from ...compute.params import POSITIVE, Num
from ...compute.validation import validate


class BKASVM(BatchClassifier):
    """Block-diagonal kernel SVM: k-means partition, one SVC per cluster, nearest-centre routing.

    Parameters
    ----------
    C : box constraint of every cluster's SVM.
    sigma : Gaussian width (gamma = 1 / (2 sigma^2)).
    clusters : number of k-means clusters (the paper's 64); a fit on fewer points uses one
        cluster per point, with a warning (``n_clusters_`` is the number used).
    kmeans_sample : points k-means is run on (the paper's 5000).
    kmeans_iter : Lloyd iterations (MATLAB ``kmeans`` with MaxIter 10, as DC-SVM calls it).
    tol : libsvm's stopping tolerance (DC-SVM's 1e-2).
    cache_size : libsvm kernel cache in MB (DC-SVM's ``-m 8000`` is 8 GB; 200 here).
    random_state : seed of the sample and of k-means.
    time_limit : seconds after which the fit is abandoned with ``FitTimeLimitError``.
    """

    name = "bka-svm"
    randomized = True
    _params = {"C": POSITIVE, "sigma": SIGMA, "clusters": Num(1, np.inf, "left", integer=True),
               "kmeans_sample": Num(1, np.inf, "left", integer=True),
               "kmeans_iter": Num(1, np.inf, "left", integer=True), "tol": POSITIVE,
               "cache_size": POSITIVE, "random_state": SEED, "time_limit": TIME_LIMIT}

    def __init__(self, *, C: float = 1.0, sigma: float | str = "scale", clusters: int = 64,
                 kmeans_sample: int = 5000, kmeans_iter: int = 10, tol: float = 1e-2,
                 cache_size: float = 200.0, random_state=None, time_limit: float | None = None):
        self.C = C
        self.sigma = sigma
        self.clusters = clusters
        self.kmeans_sample = kmeans_sample
        self.kmeans_iter = kmeans_iter
        self.tol = tol
        self.cache_size = cache_size
        self.random_state = random_state
        self.time_limit = time_limit

    def fit(self, X, y):
        self._validate_params()
        X, y = validate(self, X, y, accept_sparse="csr", dtype=np.float64)
        fit_width(self, X)
        check_classification_targets(y)
        n, c = X.shape[0], int(self.clusters)
        m = min(n, int(self.kmeans_sample))  # the points k-means runs on
        if c > m:  # fewer points than clusters: as many clusters as points, and say so
            import warnings

            warnings.warn(f"BKASVM: clusters={c} is larger than the {m} points k-means runs on "
                          f"(n_samples={n}, kmeans_sample={self.kmeans_sample}); using {m} "
                          "clusters", UserWarning, stacklevel=2)
            c = m
        self.n_clusters_ = c
        classes = np.unique(y)
        if len(classes) > 2:
            raise ValueError("Only binary classification is supported. BKASVM got "
                             f"{len(classes)} classes.")
        self.classes_ = classes
        rng = np.random.default_rng(self.random_state)

        def solve():
            t0 = time.perf_counter()
            sample = np.sort(rng.choice(n, m, replace=False))
            km = KMeans(n_clusters=c, n_init=1, max_iter=int(self.kmeans_iter),
                        random_state=int(rng.integers(2**31 - 1))).fit(X[sample])
            labels = km.predict(X)
            t1 = time.perf_counter()
            centres, models = [], []
            for s in range(c):
                idx = np.flatnonzero(labels == s)
                if len(idx) == 0:  # no training point: route nobody here
                    continue
                centres.append(np.asarray(X[idx].mean(axis=0)).ravel())
                ys = y[idx]
                if np.unique(ys).size == 1:
                    models.append(ys[0])
                else:
                    models.append(SVC(kernel="rbf", C=self.C, gamma=self.gamma, tol=self.tol,
                                      cache_size=self.cache_size).fit(X[idx], ys))
            return np.vstack(centres), models, t1 - t0, time.perf_counter() - t1

        self.centres_, self.models_, self.cluster_time_, self.svm_time_ = call_with_time_limit(
            solve, self.time_limit, f"bka-svm fit (C={self.C:g}, sigma={self.sigma_:g}, n={n})")
        warn_if_constant_model(self, X, y)
        return self

    def route(self, X) -> np.ndarray:
        """Index of the nearest (recomputed) centre of every row."""
        c2 = np.einsum("ij,ij->i", self.centres_, self.centres_)
        return np.argmin(c2[None, :] - 2.0 * np.asarray(X @ self.centres_.T), axis=1)

    @property
    def support_size_(self) -> int:
        check_is_fitted(self, "models_")
        return int(sum(m.support_.shape[0] for m in self.models_ if isinstance(m, SVC)))

    def _per_cluster(self, X, method: str, constant):
        check_is_fitted(self, "models_")
        X = validate(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        where = self.route(X)
        out = None
        for s in np.unique(where):
            sel = np.flatnonzero(where == s)
            model = self.models_[s]
            vals = getattr(model, method)(X[sel]) if isinstance(model, SVC) else constant(model, len(sel))
            if out is None:  # labels keep the dtype of classes_ (a constant cluster's label
                # alone could be a shorter string than the others)
                out = np.empty(X.shape[0], dtype=self.classes_.dtype if method == "predict"
                               else np.asarray(vals).dtype)
            out[sel] = vals
        return out

    def decision_function(self, X) -> np.ndarray:
        check_is_fitted(self, "models_")
        if len(self.classes_) != 2:
            raise ValueError(f"BKASVM was fitted on one class ({self.classes_[0]!r}) only, so it has no "
                             "decision values; fit it on two classes (predict() returns that class)")
        return self._per_cluster(X, "decision_function",
                                 lambda label, m: np.full(m, 1.0 if label == self.classes_[1] else -1.0))

    def predict(self, X) -> np.ndarray:
        return self._per_cluster(X, "predict", lambda label, m: np.full(m, label))
