"""Exact-kernel mini-batch baselines of DSG's Fig. 1 (spec ``DSG.md`` section 6): NORMA for
classification and kernel SDCA, both with the hinge loss.

Both attach one coefficient to every row of a mini-batch and predict with
f(x) = sum_n alpha_n k(x_n, x), k the Gaussian kernel of :mod:`kernels` (``gaussian_gram``).
They reuse DSG's driver (:class:`minibatch.BlockModel`), so a pass over a known set keeps running
scores: the new block's kernel columns K(rows, B_t) alpha_t in one GEMM per step. No budget and no
truncation: the support set grows by b rows per step (this is the memory DSG saves).

* :class:`KernelNORMA` = DSG with the exact kernel: alpha_n = -gamma_t l'_n / b for n in B_t, then
  the older coefficients decay by (1 - gamma_t nu); same schedules as DSG. Hinge, batch-averaged;
  the regression NORMA of ``norma.py`` (nu-adaptive epsilon) is a different learner and stays.
* :class:`KernelSDCA`: dual coordinate ascent on (1/n) sum hinge + (lam/2)||f||^2 with the safe
  mini-batch step q = b: beta_n = clip((1 - y_n f(x_n)) lam n / (q k(x_n, x_n)), 0, 1) for the
  batch (one pass, beta starts at 0), f = (1/(lam n)) sum beta_n y_n k(x_n, .). While no clip is
  active lam cancels out of the predictor (spec check 10).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ...compute.features import csr_rows_times_dense, exp_neg_sqdist
from ...compute.kernels import gaussian_gram
from ..base import SIGMA
from .minibatch import BATCH, BlockModel, Schedule, step_size
from ...compute.params import NON_NEGATIVE, POSITIVE


def _dense(Xb) -> np.ndarray:
    return np.asarray(Xb.toarray() if sp.issparse(Xb) else Xb, dtype=np.float64)


def _row_sqnorms(X) -> np.ndarray:
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
    return np.einsum("ij,ij->i", X, X)


class _KernelBlocks(BlockModel):
    """Support rows and their coefficients, grown by one mini-batch per step."""

    def _dtype(self):
        return np.float64

    def _start(self, n_features, n_outputs, n_total):
        cap = 1024 if n_total is None else int(n_total)
        self.support_vectors_ = np.zeros((cap, n_features))
        self.dual_coef_ = np.zeros(cap)
        self.n_support_total_ = 0
        self.n_total_ = n_total
        self._last = None
        self._norms = {}

    def _append(self, Xb, alpha, decay):
        m = self.n_support_total_
        if decay != 1.0:
            self.dual_coef_[:m] *= decay
        need = m + len(alpha)
        if need > len(self.dual_coef_):
            cap = max(need, 2 * len(self.dual_coef_))
            self.support_vectors_ = np.concatenate(
                [self.support_vectors_, np.zeros((cap - len(self.dual_coef_), self.n_features_in_))])
            self.dual_coef_ = np.concatenate([self.dual_coef_, np.zeros(cap - len(self.dual_coef_))])
        Xd = _dense(Xb)
        self.support_vectors_[m:need] = Xd
        self.dual_coef_[m:need] = alpha
        self.n_support_total_ = need
        self._last = (Xd, alpha)

    def _last_block_scores(self, X, start=0):
        """K(X[start:], B_t) alpha_t: one CSR x dense (or dense GEMM) product, then the compiled
        exp(-d^2 / (2 sigma^2)) of :mod:`features`; row norms of X are computed once per X."""
        Xd, alpha = self._last
        norms = self.__dict__.setdefault("_norms", {})  # per array (training rows, test rows)
        if id(X) not in norms or norms[id(X)][0] is not X:
            norms[id(X)] = (X, _row_sqnorms(X))
        x_sqn = norms[id(X)][1][start:]
        n = X.shape[0] - start
        if sp.issparse(X):
            cross = np.empty((n, Xd.shape[0]))
            csr_rows_times_dense(X.indptr, X.indices, X.data, np.arange(start, X.shape[0]),
                                 np.ascontiguousarray(Xd.T), cross)
        else:
            cross = np.ascontiguousarray(X[start:] @ Xd.T)
        K = np.empty_like(cross)
        exp_neg_sqdist(cross, x_sqn, np.einsum("ij,ij->i", Xd, Xd),
                       1.0 / (2.0 * float(self.sigma_) ** 2), K)
        return (K @ alpha)[:, None]

    def _scores(self, X):
        m = self.n_support_total_
        S = np.zeros((X.shape[0], 1))
        for a in range(0, m, 2048):  # kernel blocks of bounded size
            b = min(a + 2048, m)
            S[:, 0] += gaussian_gram(X, self.support_vectors_[a:b], float(self.sigma_)) @ self.dual_coef_[a:b]
        return S

    @property
    def support_size_(self) -> int:
        return int(np.count_nonzero(self.dual_coef_[:self.n_support_total_]))


class KernelNORMA(_KernelBlocks):
    """NORMA (Kivinen, Smola, Williamson 2004) for binary classification, hinge loss,
    batch-averaged, no truncation: DSG with the exact kernel (spec section 6).

    Parameters: ``sigma``, ``nu`` (decay (1 - gamma_t nu)), ``batch_size``, and the step size
    ``schedule``/``theta``/``t0``/``eta1`` exactly as :class:`lsokl.learners.stochastic.dsg.DSG`.
    """

    name = "norma"
    task = "binary"
    _losses = ()
    _params = {"sigma": SIGMA, "nu": NON_NEGATIVE, "batch_size": BATCH, "schedule": Schedule(),
               "theta": POSITIVE, "t0": NON_NEGATIVE, "eta1": NON_NEGATIVE}

    def __init__(self, *, sigma: float | str = "scale", nu: float = 0.0, batch_size: int = 64,
                 schedule: str = "const", theta: float = 10.0, t0: float = 0.0, eta1: float = 1e-4):
        self.sigma = sigma
        self.nu = nu
        self.batch_size = batch_size
        self.schedule = schedule
        self.theta = theta
        self.t0 = t0
        self.eta1 = eta1

    def _step(self, t, Xb, Yb, Fb):
        gamma = step_size(self.schedule, t, float(self.theta), float(self.t0), float(self.eta1))
        f = np.asarray(Fb, dtype=np.float64)[:, 0]
        alpha = gamma * np.where(Yb * f < 1.0, Yb, 0.0) / Xb.shape[0]  # -gamma l'(f, y) / b
        decay = 1.0 - gamma * float(self.nu)
        self._append(Xb, alpha, decay)
        return decay


class KernelSDCA(_KernelBlocks):
    """Kernel SDCA (Shalev-Shwartz & Zhang 2013), hinge loss, one pass, safe mini-batch step
    q = batch_size (spec section 6). ``lam`` is the regulariser of (1/n) sum l + (lam/2)||f||^2;
    n is the length of the training pass (``fit``/``fit_curve``), or the rows seen so far for
    ``partial_fit``. ``dual_coef_`` holds beta_n y_n / (lam n)."""

    name = "ksdca"
    task = "binary"
    _losses = ()
    _params = {"sigma": SIGMA, "lam": POSITIVE, "batch_size": BATCH}

    def __init__(self, *, sigma: float | str = "scale", lam: float = 1e-4, batch_size: int = 64):
        self.sigma = sigma
        self.lam = lam
        self.batch_size = batch_size

    def _step(self, t, Xb, Yb, Fb):
        f = np.asarray(Fb, dtype=np.float64)[:, 0]
        n = self.n_total_ if self.n_total_ is not None else self.samples_seen_ + Xb.shape[0]
        lam_n = float(self.lam) * n
        q = float(self.batch_size)
        beta = np.clip((1.0 - Yb * f) * lam_n / q, 0.0, 1.0)  # k(x, x) = 1 for the Gaussian kernel
        self._append(Xb, beta * Yb / lam_n, 1.0)
        return 1.0
