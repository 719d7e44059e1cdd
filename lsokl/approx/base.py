"""The protocol every kernel approximation follows: G~ = W L W' for the Gaussian kernel matrix
(or, with ``kernel="laplacian"``, the Laplacian kernel matrix [exp(-gamma ||x_i - x_j||_1)]).

A kernel approximation is not a learner: it is fitted on a data matrix X (n x d) and then answers
questions about the n x n Gaussian kernel matrix G = [exp(-gamma ||x_i - x_j||^2)] without ever
forming it. Every method of :mod:`lsokl.approx` writes its approximation in one shape,

    G~ = W L W'        W: n x K (dense for the low-rank methods, block-diagonal for MEKA),
                       L: K x K (the identity for the low-rank methods, MEKA's link matrix),

so the operations are written once, here:

``fit(X, seed=None)``
    build the approximation (the draws come from ``random_state``, else from ``seed``); sets
    ``n_samples_``, ``memory_`` (floats stored, as the MEKA paper counts them: the factor W and,
    for MEKA, the kept blocks of L) and ``timings_`` (seconds per step, method-specific keys).
``matvec(v)``
    G~ v in O(nK + K^2).
``solve(lam, y)``
    (G~ + lam I)^-1 y by the push-through identity
    lam^-1 [y - W (lam I + L W'W)^-1 L W' y]: a K x K system, never an n x n matrix.
``rows(idx)``
    the approximate rows G~[idx, :] (len(idx) x n), for the chunked relative error.
``cross(X_new)`` / ``cross_matvec(X_new, alpha)``
    the approximate kernel between new points and the training points (m x n), and its product
    with a vector (what kernel ridge regression predicts with), without the m x n matrix.

Subclasses provide ``_fit(X, rng)`` (filling the factor), ``_w_dot(U)`` (W U), ``_wt_dot(V)``
(W' V), ``_w_rows(idx)``, ``_w_gram()`` (W'W), ``_w_new(X_new)`` (the rows of W a new point
would have) and ``memory_``; ``L_`` is None for L = I.
"""
from __future__ import annotations

import time
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from ..compute.memory import estimate_of, refuse_if_too_big
from ..compute.params import KernelName, KernelWidth, Num, Seed
from ..compute.validation import check_row_norms, check_sparse, max_row_sqnorm, warn_if_not_finite
from ..compute.xp import asarray, device, is_numpy, namespace, take_rows, to_numpy

POSITIVE = Num(0, np.inf, "neither")
RANK = Num(1, np.inf, "left", integer=True)


class KernelApproximation(BaseEstimator):
    """Base class: parameters are stored by the constructor (scikit-learn style); fitted state
    ends in ``_``. See the module docstring for the protocol."""

    name: ClassVar[str] = ""
    display: ClassVar[str] = ""  # how the MEKA paper's tables print the method
    _params: ClassVar[dict] = {"gamma": KernelWidth("gamma"), "rank": RANK, "random_state": Seed(),
                               "kernel": KernelName()}
    #: ``gaussian`` exp(-gamma ||x-y||^2) or ``laplacian`` exp(-gamma ||x-y||_1) (every method but
    #: Fastfood; a Laplacian fit runs on the host: the Array API path is Gaussian only)
    kernel: str = "gaussian"

    L_: np.ndarray | None = None
    # True: fit/solve/cross compute in the namespace of an Array API input (torch, CuPy) on its
    # device (lsokl.compute.xp); False: such input is copied to numpy first
    array_api_support: ClassVar[bool] = False

    # ------------------------------------------------------------------ parameters
    def _validate_params(self) -> None:
        for key, rule in self._params.items():
            rule.check(type(self).__name__, key, getattr(self, key))

    def _check_rank(self, n: int, rank: int, key: str = "rank", what: str = "samples") -> None:
        if rank > n:
            raise ValueError(f"{type(self).__name__}: {key}={rank} is larger than the number of "
                             f"{what} ({n}); choose {key} <= {n}")

    def memory_estimate(self, n_samples: int, n_features: int, n_outputs: int = 1) -> dict:
        """The big arrays of a fit (bytes, read from the parameters only; lsokl.runner.resources):
        the n x K factor W, a K x K link matrix and the landmark Gram blocks."""
        K = self._columns()
        n = float(n_samples)
        m = 2.0 * float(self.rank)
        return {f"factor W (n x K = {n_samples:,} x {K:,})": 8.0 * n * K,
                f"K x K matrices (K = {K:,})": 3 * 8.0 * K * K,
                f"landmark kernel blocks (n x 2k, 2k x 2k)": 8.0 * (n * m + m * m)}

    def _columns(self) -> int:
        """An upper-ish bound of K, the number of columns of W (sin and cos: 2 per frequency)."""
        return 2 * int(self.rank)

    # ------------------------------------------------------------------ fitting
    def fit(self, X, y=None, seed=None):
        """Build the approximation of the Gaussian kernel matrix of ``X``.

        ``seed``: where the random draws come from when ``random_state`` is None (an int or a
        ``numpy.random.SeedSequence``; the runner passes the cell's seed)."""
        self._validate_params()
        if not is_numpy(X):
            if self._array_api_ok():  # torch / CuPy: computed in X's namespace, on its device
                return self._fit_array_api(X, seed)
            X = to_numpy(X)
        X = as_dense(X)
        if X.shape[0] < 1:
            raise ValueError(f"{type(self).__name__}: X has no rows")
        if not np.all(np.isfinite(X)):
            raise ValueError(f"{type(self).__name__}: X contains NaN or infinite values")
        check_row_norms(max_row_sqnorm(X))
        return self._timed_fit(self._fit, X, seed)

    def _timed_fit(self, fit, X, seed):
        """Run ``fit(X, rng)`` (the draws from ``random_state``, else ``seed``) with the fitted
        sizes set and its total wall and CPU time in ``timings_`` / ``cpu_timings_``."""
        rng = np.random.default_rng(self.random_state if self.random_state is not None else seed)
        # a rank of 10^12 is one line with its estimate, not numpy's MemoryError from inside the fit
        refuse_if_too_big(self, estimate_of(self, int(X.shape[0]), int(X.shape[1])))
        self.n_samples_, self.n_features_ = int(X.shape[0]), int(X.shape[1])
        self.timings_, self.cpu_timings_ = {}, {}
        t0, c0 = time.perf_counter(), time.process_time()
        fit(X, rng)
        self.timings_["total"] = time.perf_counter() - t0
        self.cpu_timings_["total"] = time.process_time() - c0
        return self

    def _array_api_ok(self) -> bool:
        """Whether a torch / CuPy X is computed on its device (else copied to numpy first)."""
        return self.array_api_support and self.kernel == "gaussian"

    def _fit(self, X, rng) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _fit_array_api(self, X, seed):
        """:meth:`fit` for an Array API array (lsokl.compute.xp): the same checks, the same numpy
        draws from the same seed, the factor computed in X's namespace and kept on its device."""
        xp = namespace(X)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-dimensional, got shape {tuple(X.shape)}")
        if X.shape[0] < 1:
            raise ValueError(f"{type(self).__name__}: X has no rows")
        X = xp.astype(X, xp.float64)
        if not bool(xp.all(xp.isfinite(X))):
            raise ValueError(f"{type(self).__name__}: X contains NaN or infinite values")
        return self._timed_fit(self._fit_xp, X, seed)

    def _fit_xp(self, X, rng) -> None:  # pragma: no cover - provided where array_api_support
        raise NotImplementedError

    @property
    def sigma(self) -> float:
        """The LSOKL width of the same kernel: exp(-gamma r^2) = exp(-r^2 / (2 sigma^2))."""
        return 1.0 / np.sqrt(2.0 * float(self.gamma))

    # ------------------------------------------------------------------ operations
    def _l_dot(self, U):
        return U if self.L_ is None else self.L_ @ U

    def _check_fitted(self) -> None:
        """scikit-learn's NotFittedError (not an AttributeError) for an operation before :meth:`fit`."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "n_samples_")

    def matvec(self, v) -> np.ndarray:
        """G~ v."""
        self._check_fitted()
        v = self._vector(v)
        self._check_length(v, "v")
        return self._checked(self._w_dot(self._l_dot(self._wt_dot(v))), "values")

    def solve(self, lam: float, y) -> np.ndarray:
        """alpha = (G~ + lam I)^-1 y by the push-through identity (a K x K system)."""
        self._check_fitted()
        lam = check_positive("lambda", lam)
        y = self._vector(y)
        self._check_length(y, "y")
        wty = self._wt_dot(y)
        K = wty.shape[0]
        system = self._l_dot(self._w_gram())
        if is_numpy(system):
            system[np.diag_indices(K)] += lam
            inner = np.linalg.solve(system, self._l_dot(wty))
        else:
            xp = namespace(system)
            system = system + lam * xp.eye(K, dtype=system.dtype, device=device(system))
            rhs = self._l_dot(wty)
            inner = xp.linalg.solve(system, rhs[:, None] if rhs.ndim == 1 else rhs)
            inner = inner[:, 0] if rhs.ndim == 1 else inner
        return self._checked((y - self._w_dot(inner)) / lam, "solution values")

    def rows(self, idx) -> np.ndarray:
        """The approximate kernel rows G~[idx, :], shape (len(idx), n)."""
        self._check_fitted()
        idx = np.asarray(idx, dtype=np.int64)
        if idx.ndim != 1 or (idx.size and (idx.min() < -self.n_samples_ or idx.max() >= self.n_samples_)):
            raise ValueError(f"idx must be 1-d row indices in [0, {self.n_samples_})")
        left = self._l_dot(self._w_rows(idx).T)  # K x m (L symmetric)
        out = self._w_dot(left).T
        return self._checked(np.ascontiguousarray(out) if is_numpy(out) else out, "kernel values")

    def cross(self, X_new) -> np.ndarray:
        """The approximate kernel between new points and the training points, (m, n)."""
        left = self._l_dot(self._w_new(self._check_new(X_new)).T)
        out = self._w_dot(left).T
        return self._checked(np.ascontiguousarray(out) if is_numpy(out) else out, "cross kernel values")

    def cross_matvec(self, X_new, alpha) -> np.ndarray:
        """cross(X_new) @ alpha without the m x n matrix: W_new (L (W' alpha))."""
        self._check_fitted()
        alpha = self._vector(alpha)
        self._check_length(alpha, "alpha")
        X_new = self._check_new(X_new)
        return self._checked(self._w_new(X_new) @ self._l_dot(self._wt_dot(alpha)), "values")

    def _check_new(self, X_new):
        """New points: checked sparse structure, 2-d, finite, with the training feature count; in
        the factor's namespace and on its device."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "n_samples_")
        if self._factor_like() is not None or not is_numpy(X_new):
            X_new = self._dense_like(X_new)
        else:
            X_new = as_dense(X_new)
        if X_new.ndim != 2 or X_new.shape[1] != self.n_features_:
            raise ValueError(f"X_new has shape {tuple(X_new.shape)}; the approximation was fitted on "
                             f"{self.n_features_} features")
        finite = np.all(np.isfinite(X_new)) if is_numpy(X_new) else \
            bool(namespace(X_new).all(namespace(X_new).isfinite(X_new)))
        if not finite:
            raise ValueError(f"{type(self).__name__}: X_new contains NaN or infinite values")
        return X_new

    def _checked(self, out, what: str):
        if is_numpy(out):
            warn_if_not_finite(out, type(self).__name__, what)
        elif not bool(namespace(out).all(namespace(out).isfinite(out))):  # checked on the device
            warn_if_not_finite(np.array([np.nan]), type(self).__name__, what)
        return out

    def _factor_like(self):
        """An array of the fitted factor (its namespace and device), or None for numpy."""
        Z = getattr(self, "Z_", None)
        return None if Z is None or is_numpy(Z) else Z

    def _vector(self, v):
        """v as float64 in the factor's namespace and on its device."""
        like = self._factor_like()
        if like is None:
            return np.asarray(to_numpy(v) if not is_numpy(v) else v, dtype=np.float64)
        return namespace(like).astype(v, like.dtype) if not is_numpy(v) else asarray(v, like)

    def _dense_like(self, X_new):
        """New rows as the factor's arrays: numpy float64, or X_new moved to the factor's device."""
        like = self._factor_like()
        if like is None and not is_numpy(X_new) and self.array_api_support and \
                getattr(self, "Z_", None) is None:  # fitting: the factor is being built from X_new
            return namespace(X_new).astype(X_new, namespace(X_new).float64)
        if like is None:
            return as_dense(to_numpy(X_new) if not is_numpy(X_new) else X_new)
        if is_numpy(X_new):
            return asarray(as_dense(X_new), like)
        return namespace(like).astype(X_new, like.dtype)

    def to_dense(self) -> np.ndarray:
        """The whole n x n G~ (tests and small n only)."""
        self._check_fitted()
        return self.rows(np.arange(self.n_samples_))

    def _check_length(self, v, name: str) -> None:
        if int(v.shape[0]) != self.n_samples_:
            raise ValueError(f"{name} has {v.shape[0]} rows; the approximation was fitted on "
                             f"{self.n_samples_} samples")


class LowRankApproximation(KernelApproximation):
    """G~ = Z Z' for a dense n x K feature matrix Z (Nystrom family, random features)."""

    def _w_dot(self, U):
        return self.Z_ @ U

    def _wt_dot(self, V):
        return self.Z_.T @ V

    def _w_rows(self, idx):
        return take_rows(self.Z_, idx)

    def _w_gram(self):
        return self.Z_.T @ self.Z_

    def _w_new(self, X_new):
        return self.transform(X_new)

    @property
    def memory_(self) -> int:
        """Floats stored: the n x K factor."""
        return int(self.Z_.size)

    @property
    def n_components_(self) -> int:
        return int(self.Z_.shape[1])


def as_dense(X) -> np.ndarray:
    """C-contiguous float64 rows (CSR input is densified: the approximations here are dense)."""
    if sp.issparse(X):
        X = check_sparse(X).toarray()  # scipy's toarray trusts the indices: checked first
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-dimensional, got shape {X.shape}")
    return np.ascontiguousarray(X)


def check_positive(key: str, value) -> float:
    """A clear error naming the key for a non-positive (or non-numeric) gamma, lambda, ..."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{key} must be a number > 0, got {value!r}") from None
    if not v > 0 or not np.isfinite(v):
        raise ValueError(f"{key} must be a number > 0, got {value!r}")
    return v


def timed(timings: dict, key: str, cpu: dict | None = None):
    """``with timed(self.timings_, "links", self.cpu_timings_): ...`` adds the block's wall-clock
    seconds under ``key`` in ``timings`` and its CPU seconds of this process in ``cpu`` (the
    paper's MATLAB ``cputime``; unlike wall clock it does not grow when other jobs share the cores)."""

    class _Timer:
        def __enter__(self):
            self.t0, self.c0 = time.perf_counter(), time.process_time()

        def __exit__(self, *exc):
            timings[key] = timings.get(key, 0.0) + time.perf_counter() - self.t0
            if cpu is not None:
                cpu[key] = cpu.get(key, 0.0) + time.process_time() - self.c0
            return False

    return _Timer()
