"""NOGD, Nystrom Online Gradient Descent, as the authors' ``binary/NysGD.m`` (spec 1.10).

Phase 1 is kernel OGD with a budget: on a margin error (y f < 1, strict) while |S| < B, x_t is
stored with alpha = eta y. Steps with |S| = B and no margin error do nothing. The **first margin
error with |S| = B** triggers the switch (inside the timed loop, as in the authors' code):

1. K = Gram matrix of the B stored vectors; (V, Lambda) = its top-k eigenpairs (LAPACK ``eigh``,
   the authors call ``eigs``: the same eigenspace whenever lambda_k > lambda_{k+1});
2. M = Lambda^{-1/2} V' (k x B), the feature map z(x) = M [kappa(x, s)]_{s in S};
3. w = alpha pinv(M) = alpha V Lambda^{1/2}: the kernel model projected on the eigenspace;
4. the same step then takes w += eta y z(x_t) with the kernel row it already computed.

Phase 2 is linear OGD on z. The map is frozen, so phase 2 is played in blocks: one BLAS call
for the block's kernel rows against the B support vectors, one for Z = K M', then the strict
per-sample recursion on z in a compiled loop.

``variant="corrected"`` floors the eigenvalues at ``EIGEN_FLOOR`` (1e-12, as scikit-learn's
Nystroem does) so that a rank-deficient Gram matrix (duplicate support vectors, very wide
kernels) cannot produce infinite or NaN features; ``"faithful"`` keeps Lambda^{-1/2} as is.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .base import SIGMA, VARIANT, round_half_up
from .features import BLOCK, NystromMap, axpy, dot
from .kernels import JIT, append_slot, gaussian_gram, kernel_row, store_row
from .params import BUDGET, POSITIVE, Num
from .support import SupportVectorLearner

EIGEN_FLOOR = 1e-12


@njit(**JIT)
def _play_kernel(xs, sqn, y, order, start, stop, sv, sv_sqn, sv_order, alpha, size, counts,
                 inv2s2, krow, budget, eta):
    """Phase 1. Returns the step index of the switch (prediction already counted, k_t left in
    ``krow``), or ``stop`` if the segment ends first."""
    for t in range(start, stop):
        i = order[t]
        m = size[0]
        kernel_row(xs, i, sqn[i], sv, sv_sqn, m, inv2s2, krow)
        f = 0.0
        for j in range(m):
            f += alpha[j] * krow[j]
        yi = y[i]
        counts[0] += 1
        if (1.0 if f >= 0.0 else -1.0) != yi:
            counts[1] += 1
        if yi * f < 1.0:
            if m < budget:
                counts[2] += 1
                slot = append_slot(sv_order, m)
                store_row(xs, i, sqn[i], sv, sv_sqn, slot)
                alpha[slot] = eta * yi
                size[0] = m + 1
            else:
                return t
    return stop


@njit(**JIT)
def _play_linear(Z, yb, w, eta, counts):
    """Phase 2 over a block of precomputed features Z[r] = M k(x_r)."""
    for r in range(Z.shape[0]):
        z = Z[r]
        f = dot(w, z)
        yi = yb[r]
        counts[0] += 1
        if (1.0 if f >= 0.0 else -1.0) != yi:
            counts[1] += 1
        if yi * f < 1.0:
            counts[2] += 1
            axpy(eta * yi, z, w)


class NOGD(SupportVectorLearner):
    """Nystrom Online Gradient Descent (spec 1.10).

    Parameters
    ----------
    sigma : Gaussian kernel width.
    budget : number B of support vectors collected before the switch to the Nystrom features.
    rho_n : rank per budget unit (paper and authors' ``options.k``: 0.2, so k = 20 for B = 100).
    rank : the Nystrom rank k; overrides ``round(rho_n * budget)`` when given. The authors' binary
        code needs rho_n * B to be an integer; here it is rounded half up, as their multi-class code
        does.
    eta : step size of both phases (authors' ``eta_nogd``: 0.2).
    variant : ``"faithful"`` (Lambda^{-1/2} as computed) or ``"corrected"`` (eigenvalues floored at
        1e-12 before the inverse square root).
    """

    name = "nogd"
    task = "binary"
    _params = {"sigma": SIGMA, "budget": BUDGET, "rho_n": Num(0, 1, "right"),
               "rank": Num(1, np.inf, "left", integer=True, allow_none=True), "eta": POSITIVE,
               "variant": VARIANT}

    def __init__(self, *, sigma: float = 8.0, budget: int = 100, rho_n: float = 0.2,
                 rank: int | None = None, eta: float = 0.2, variant: str = "faithful"):
        self.sigma = sigma
        self.budget = budget
        self.rho_n = rho_n
        self.rank = rank
        self.eta = eta
        self.variant = variant

    @property
    def rank_(self) -> int:
        """k, the number of Nystrom features."""
        k = int(self.rank) if self.rank is not None else round_half_up(self.rho_n * self.budget)
        if not 1 <= k <= int(self.budget):
            how = f"rank={self.rank}" if self.rank is not None else \
                f"round(rho_n * budget) = round({self.rho_n:g} * {self.budget})"
            raise ValueError(f"NOGD needs 1 <= rank <= budget; {how} = {k} with budget "
                             f"{self.budget}. The Nystrom map has at most budget eigenpairs.")
        return k

    def _allocate(self, n_features, capacity, source):
        self.rank_  # validates rank against budget before any work
        self._allocate_support(n_features, capacity)
        self.switched_ = False
        self.map_ = None
        self.w_ = None
        self.eigenvalues_ = None

    def _switch(self, yi: float) -> None:
        """Build the Nystrom map from the B stored vectors at the switch step (spec 1.10, 1-5)."""
        B = int(self.budget)
        sv = self.sv_[self.order_[:B]]
        gram = gaussian_gram(sv, sv, float(self.sigma))
        floor = EIGEN_FLOOR if self.variant == "corrected" else None
        lam, V = NystromMap.eigen(gram, self.rank_, floor)
        with np.errstate(invalid="ignore", divide="ignore"):  # faithful: as MATLAB computes it
            M = (V / np.sqrt(lam)).T
            self.w_ = self.alpha_[self.order_[:B]] @ (V * np.sqrt(lam))
        self.eigenvalues_ = lam
        self.map_ = NystromMap(sv, self.sv_sqn_[self.order_[:B]], M, float(self.sigma))
        z = M @ self.krow_[self.order_[:B]]
        self.w_ += float(self.eta) * yi * z
        self.counts_[2] += 1
        self.switched_ = True

    def _play(self, stream, y, order, start, stop):
        t = start
        if not self.switched_:
            t = _play_kernel(stream.xs, stream.sqnorms, y, order, start, stop, self.sv_,
                             self.sv_sqn_, self.order_, self.alpha_, self.size_, self.counts_,
                             1.0 / (2.0 * self.sigma**2), self.krow_, int(self.budget),
                             float(self.eta))
            if t < stop:
                self._switch(float(y[order[t]]))
                t += 1
        if self.switched_:
            eta = float(self.eta)
            for a in range(t, stop, BLOCK):
                idx = order[a:min(a + BLOCK, stop)]
                _play_linear(self.map_.features(stream, idx), np.ascontiguousarray(y[idx]),
                             self.w_, eta, self.counts_)

    def features(self, X) -> np.ndarray:
        """z(x) = M k(x) for every row of X (after the switch)."""
        from .stream import Stream

        if not getattr(self, "switched_", False):
            raise ValueError("NOGD has no Nystrom map yet: it is built at the first margin error "
                             "after the budget is full")
        return self.map_.transform(Stream(X))

    def _scores(self, stream) -> np.ndarray:
        if self.switched_:
            return self.map_.transform(stream) @ self.w_
        return super()._scores(stream)
