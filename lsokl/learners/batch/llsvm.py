"""LLSVM, the low-rank linearised SVM, as BudgetedSVM's ``llsvm.cpp`` implements it and LSOKL
Table 3 ran it (spec ``BUDGETED_PEGASOS.md`` section 7; binary only, no bias).

The recipe:

1. the training rows are read in file order, in chunks of ``chunk_size`` (50,000) rows;
2. landmarks: k-means on the first chunk (densified), started from ``budget`` distinct random
   rows, exactly ``kmeans_iter`` (10) Lloyd iterations, no convergence test;
3. mapping: K_zz = U Lambda U' over the landmarks; e(x) = k_z(x)' U diag(lambda^{-1/2}), with the
   directions of lambda_i <= 1e-5 lambda_max cut (BudgetedSVM's ``invSquareRoot``); landmarks =
   all points gives e(x).e(y) = kappa(x, y) exactly;
4. solver: LIBLINEAR's dual coordinate descent for the L2-regularised hinge loss without bias,
   box [0, C] (BudgetedSVM's ``-L lambda`` is C = 1/lambda), at most ``max_iter`` (30) outer
   passes over a random permutation with shrinking, stopping at PGmax - PGmin <= ``tol`` (0.01);
5. later chunks are solved in turn: w carries over, the dual variables restart at 0 (a quirk of
   the tool, not a stochastic method); the landmarks come from chunk 1 only;
6. predict: e(x).w > 0 gives the second class.

What the libraries do, and what is written here:

* k-means: written here (:meth:`LLSVM._lloyd`), ``kmeans_iter`` Lloyd steps as ``llsvm.cpp``'s
  ``kMeans``: each row goes to the first nearest centre (lowest index on ties), each centre
  becomes its rows' mean, and an **empty cluster restarts at a uniformly random row** (the tool's
  ``rand() % N``, drawn in cluster order). scikit-learn's :class:`~sklearn.cluster.KMeans`
  cannot do that last step (it moves an empty cluster to the point farthest from its centre),
  and on binary-feature data (w7a, a9a) clusters do go empty: with the tool's own draws injected,
  this reproduces its landmarks exactly (``tests/learners/test_llsvm_reference_runs.py``).
* the mapping: the Nystrom map of NOGD (:class:`lsokl.compute.features.NystromMap`) with the
  eigenvalue-cut matrix of :meth:`NystromMap.eigen_cut_map`; nothing is copied.
* chunk 1: :class:`sklearn.svm.LinearSVC` (``loss="hinge"``, ``dual=True``,
  ``fit_intercept=False``, ``C``, ``tol``, ``max_iter``) *is* LIBLINEAR's solver and starts from
  w = 0 as the tool does; BudgetedSVM's copy of it is the same algorithm (same projected-gradient
  shrinking and stopping rule), with its own random permutations.
* chunks 2.. start from the previous w with alpha = 0, which LIBLINEAR cannot do (it always
  starts from w = 0): :func:`dual_cd_hinge` below is that solver, written from BudgetedSVM's
  ``liblinear_Solve_l2r_l1``; a test checks it reaches LinearSVC's optimum from w = 0.

Only codrna's and KDD99's training sets are longer than one chunk in Table 3 (w7a, w8a, a9a are
single chunks). Training time covers k-means, the mapping and the solver, not loading.
"""
from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.sparse as sp
from numba import njit
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from ..base import SEED, SIGMA, fit_width, warn_if_constant_model
from .common import TIME_LIMIT, BatchClassifier, call_with_time_limit
from ...compute.features import NystromMap
from ...compute.kernels import JIT, gaussian_gram
from ...compute.params import BUDGET, POSITIVE, Num, OneOf
from ...compute.validation import validate
from ...compute.stream import Stream


@njit(**JIT)
def dual_cd_hinge(E, y, w, C, max_iter, eps, seed, alpha):
    """LIBLINEAR's dual coordinate descent for the hinge-loss SVM without bias, started from the
    given ``w`` with every alpha_i = 0, as BudgetedSVM continues on a new chunk: it solves
    min_w 0.5 ||w - w0||^2 + C sum_i max(0, 1 - y_i w.e_i), with w = w0 + sum_i alpha_i y_i e_i
    and 0 <= alpha_i <= C. Updates ``w`` and ``alpha`` (zeros on entry) in place; returns the
    number of outer iterations. Shrinking and the stop PGmax - PGmin <= eps are LIBLINEAR's."""
    np.random.seed(seed)
    n, k = E.shape
    qd = np.empty(n)
    for i in range(n):
        acc = 0.0
        for j in range(k):
            acc += E[i, j] * E[i, j]
        qd[i] = acc
    index = np.arange(n)
    active = n
    pg_max_old, pg_min_old = np.inf, -np.inf
    it = 0
    while it < max_iter:
        pg_max_new, pg_min_new = -np.inf, np.inf
        for i in range(active):
            j = i + np.random.randint(0, active - i)
            index[i], index[j] = index[j], index[i]
        s = 0
        while s < active:
            i = index[s]
            yi = y[i]
            g = 0.0
            for j in range(k):
                g += w[j] * E[i, j]
            g = g * yi - 1.0
            pg = 0.0
            if alpha[i] == 0.0:
                if g > pg_max_old:  # shrink: stays at the lower bound
                    active -= 1
                    index[s], index[active] = index[active], index[s]
                    continue
                elif g < 0.0:
                    pg = g
            elif alpha[i] == C:
                if g < pg_min_old:  # shrink: stays at the upper bound
                    active -= 1
                    index[s], index[active] = index[active], index[s]
                    continue
                elif g > 0.0:
                    pg = g
            else:
                pg = g
            pg_max_new = max(pg_max_new, pg)
            pg_min_new = min(pg_min_new, pg)
            if abs(pg) > 1e-12 and qd[i] > 0.0:
                old = alpha[i]
                alpha[i] = min(max(old - g / qd[i], 0.0), C)
                step = (alpha[i] - old) * yi
                for j in range(k):
                    w[j] += step * E[i, j]
            s += 1
        it += 1
        if pg_max_new - pg_min_new <= eps:
            if active == n:
                break
            active = n  # converged on the active set: check every example once more
            pg_max_old, pg_min_old = np.inf, -np.inf
            continue
        pg_max_old = pg_max_new if pg_max_new > 0.0 else np.inf
        pg_min_old = pg_min_new if pg_min_new < 0.0 else -np.inf
    return it


class LLSVM(BatchClassifier):
    """Low-rank linearised SVM (BudgetedSVM's LLSVM recipe; see the module docstring).

    Parameters
    ----------
    budget : number of landmarks B (the rank of the Nystrom map before the eigenvalue cut); a
        first chunk of fewer rows gives one landmark per row, with a warning (``n_landmarks_``).
    sigma : Gaussian kernel width, kappa = exp(-||x-y||^2 / (2 sigma^2)); BudgetedSVM's
        ``-g`` is 1 / sigma^2.
    C : box constraint of the linear SVM; BudgetedSVM's ``-L lambda`` is 1 / C.
    landmarks : ``"kmeans"`` (the tool's ``-m 1``, Table 3's choice) or ``"random"`` (``-m 0``).
    kmeans_iter : Lloyd iterations (the tool's 10).
    chunk_size : rows per chunk, read in file order (the tool's ``-z``, 50,000).
    eigen_cut : eigenvalues at or below this fraction of the largest are cut (the tool's 1e-5).
    max_iter, tol : the solver's outer-iteration cap (30) and stopping tolerance (0.01).
    random_state : seed of the landmark draw and the solver's permutations.
    time_limit : seconds after which the fit is abandoned with ``FitTimeLimitError``; None: none.
    """

    name = "llsvm"
    budgeted = True
    randomized = True
    trains_in_file_order = True  # the holdout protocol gives it the training rows unpermuted
    _params = {"budget": BUDGET, "sigma": SIGMA, "C": POSITIVE,
               "landmarks": OneOf(("kmeans", "random")),
               "kmeans_iter": Num(0, np.inf, "left", integer=True),
               "chunk_size": Num(1, np.inf, "left", integer=True),
               "eigen_cut": Num(0, 1, "left"), "max_iter": Num(1, np.inf, "left", integer=True),
               "tol": POSITIVE, "random_state": SEED, "time_limit": TIME_LIMIT}

    def __init__(self, *, budget: int = 100, sigma: float | str = "scale", C: float = 1.0,
                 landmarks: str = "kmeans", kmeans_iter: int = 10, chunk_size: int = 50_000,
                 eigen_cut: float = 1e-5, max_iter: int = 30, tol: float = 0.01,
                 random_state=None, time_limit: float | None = None):
        self.budget = budget
        self.sigma = sigma
        self.C = C
        self.landmarks = landmarks
        self.kmeans_iter = kmeans_iter
        self.chunk_size = chunk_size
        self.eigen_cut = eigen_cut
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.time_limit = time_limit

    # ------------------------------------------------------------------ fit
    def fit(self, X, y):
        self._validate_params()
        X, y = validate(self, X, y, accept_sparse="csr", dtype=np.float64)
        fit_width(self, X)
        check_classification_targets(y)  # a continuous y is refused as scikit-learn words it
        classes = np.unique(y)
        if len(classes) != 2:
            raise ValueError(("Only binary classification is supported. " if len(classes) > 2 else "")
                             + f"LLSVM is a binary classifier (as BudgetedSVM's), but y has "
                             f"{len(classes)} class(es): {classes.tolist()[:10]}")
        first = min(self.chunk_size, X.shape[0])
        self.n_landmarks_ = int(self.budget)
        if first < self.budget:  # landmarks come from the first chunk: at most one per row
            warnings.warn(f"LLSVM: budget={self.budget} landmarks but the first chunk has {first} "
                          f"rows (n_samples={X.shape[0]}, chunk_size={self.chunk_size}); using "
                          f"{first} landmarks", UserWarning, stacklevel=2)
            self.n_landmarks_ = first
        self.classes_ = classes
        signs = np.where(y == classes[1], 1.0, -1.0)
        fitted = call_with_time_limit(lambda: self._train(X, signs), self.time_limit,
                                      f"llsvm fit (B={self.n_landmarks_}, n={X.shape[0]})")
        (self.initial_rows_, self.landmarks_, self.map_, self.coef_, self.n_iter_,
         self.converged_, self.fit_time_) = fitted
        warn_if_constant_model(self, X, y)
        return self

    def _train(self, X, signs):
        t0 = time.perf_counter()
        rng = np.random.default_rng(self.random_state)
        seeds = rng.integers(0, 2**31 - 1, size=3)
        bounds = list(range(0, X.shape[0], self.chunk_size)) + [X.shape[0]]
        chunk1 = X[bounds[0]:bounds[1]]
        start = rng.choice(chunk1.shape[0], size=self.n_landmarks_, replace=False)
        self._empty_rng = np.random.default_rng(int(seeds[0]))
        landmarks = self._landmarks(chunk1, start, int(seeds[0]))
        sigma = float(self.sigma_)
        M = NystromMap.eigen_cut_map(gaussian_gram(landmarks, landmarks, sigma), self.eigen_cut)
        mapping = NystromMap(landmarks, np.einsum("ij,ij->i", landmarks, landmarks), M, sigma)
        n_iter = []
        converged = True
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            solver = LinearSVC(loss="hinge", dual=True, fit_intercept=False, C=self.C,
                               tol=self.tol, max_iter=self.max_iter, random_state=int(seeds[1]))
            solver.fit(mapping.transform(Stream(chunk1)), signs[bounds[0]:bounds[1]])
        converged &= not any(issubclass(w.category, ConvergenceWarning) for w in caught)
        n_iter.append(int(solver.n_iter_))
        w = np.ascontiguousarray(solver.coef_.ravel(), dtype=np.float64)
        for c, (a, b) in enumerate(zip(bounds[1:-1], bounds[2:]), start=1):
            E = mapping.transform(Stream(X[a:b]))
            it = dual_cd_hinge(E, signs[a:b], w, float(self.C), int(self.max_iter),
                               float(self.tol), int(seeds[2]) + c, np.zeros(b - a))
            n_iter.append(int(it))
            converged &= it < self.max_iter
        return start, landmarks, mapping, w, n_iter, converged, time.perf_counter() - t0

    def _landmarks(self, chunk, start: np.ndarray, seed: int) -> np.ndarray:
        """The random rows ``start`` of the first chunk, moved by ``kmeans_iter`` Lloyd steps."""
        rows = chunk[start]
        rows = rows.toarray() if sp.issparse(rows) else np.array(rows, dtype=np.float64)
        if self.landmarks == "random" or self.kmeans_iter == 0:
            return np.ascontiguousarray(rows)
        return self._lloyd(chunk, np.ascontiguousarray(rows, dtype=np.float64))

    def _empty_cluster_row(self, n: int) -> int:
        """The row an empty cluster restarts at: uniform over the chunk (the tool: rand() % N)."""
        return int(self._empty_rng.integers(n))

    def _lloyd(self, chunk, centers: np.ndarray) -> np.ndarray:
        """``kmeans_iter`` Lloyd steps from ``centers`` (see the module docstring), the distances
        in row blocks so B x n is never held."""
        n = chunk.shape[0]
        sparse = sp.issparse(chunk)
        xsq = (np.asarray(chunk.multiply(chunk).sum(axis=1)).ravel() if sparse
               else np.einsum("ij,ij->i", chunk, chunk))
        block = max(1, int(2 ** 22 // max(centers.shape[0], 1)))
        idx = np.empty(n, dtype=np.int64)
        for _ in range(int(self.kmeans_iter)):
            csq = np.einsum("ij,ij->i", centers, centers)
            for a in range(0, n, block):
                cross = np.asarray(chunk[a:a + block] @ centers.T)
                idx[a:a + block] = np.argmin(csq[None, :] + xsq[a:a + block, None] - 2.0 * cross, axis=1)
            assign = sp.csr_matrix((np.ones(n), (idx, np.arange(n))), shape=(centers.shape[0], n))
            sums = assign @ chunk
            sums = sums.toarray() if sp.issparse(sums) else np.asarray(sums)
            counts = np.bincount(idx, minlength=centers.shape[0])
            for c in range(centers.shape[0]):
                if counts[c] > 0:
                    centers[c] = sums[c] / counts[c]
                else:  # the tool keeps the cluster and restarts it at a random row
                    r = self._empty_cluster_row(n)
                    row = chunk[r]
                    centers[c] = row.toarray().ravel() if sparse else row
        return np.ascontiguousarray(centers)

    # ------------------------------------------------------------------ predict
    @property
    def support_size_(self) -> int:
        """Number of landmarks."""
        check_is_fitted(self, "coef_")
        return int(self.landmarks_.shape[0])

    def features(self, X) -> np.ndarray:
        """The Nystrom features e(x) (rank after the eigenvalue cut)."""
        check_is_fitted(self, "coef_")
        X = validate(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return self.map_.transform(Stream(X))

    def decision_function(self, X) -> np.ndarray:
        return self.features(X) @ self.coef_
