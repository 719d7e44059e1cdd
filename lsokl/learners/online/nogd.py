"""NOGD, Nystrom Online Gradient Descent, as the authors' ``binary/NysGD.m`` (spec 1.10),
``multiclass/NyGD.m`` (2.10) and ``regression/NysGD.m`` (3).

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

The tasks share storage, the switch (eigendecomposition, M, w = alpha pinv(M)) and the blocked
phase 2; each has its own compiled phase-1 and phase-2 loops (``_play_kernel*``,
``_play_linear*``) and switch-step update (``_switch_step``), because the trigger, prediction
and update differ.
"""
from __future__ import annotations

import numpy as np
from numba import njit
from sklearn.base import RegressorMixin

from ..base import EPOCH_PARAMS, MAX_ITER, ONLINE_N_ITER_NO_CHANGE, SIGMA, TOL, VARIANT, round_half_up
from ...compute.duplicates import BlockRepeats
from ...compute.features import (BLOCK, NystromMap, axpy, dot, multiclass_linear_step,
                       regression_linear_step)
from ...compute.kernels import JIT, append_slot, gaussian_gram, prefetch_next, store_row
from ...compute.params import BUDGET, NON_NEGATIVE, POSITIVE, Num
from ..support import SupportVectorLearner
from ...compute.tasks import REGRESSION_POOR_SCORE
from ...compute.tasks import (multiclass_hinge, observe_binary, observe_multiclass, observe_regression,
                    store_pair)

EIGEN_FLOOR = 1e-12


@njit(**JIT)
def _append(xs, sqn, i, sv, sv_sqn, sv_order, size, counts):
    """Phase 1's update: store x_i as the newest vector (counted); returns its slot."""
    m = size[0]
    counts[2] += 1
    slot = append_slot(sv_order, m)
    store_row(xs, i, sqn[i], sv, sv_sqn, slot)
    size[0] = m + 1
    return slot


@njit(**JIT)
def _play_kernel(xs, sqn, y, order, start, stop, sv, sv_sqn, sv_order, alpha, size, counts,
                 inv2s2, krow, budget, eta):
    """Phase 1. Returns the step index of the switch (prediction already counted, k_t left in
    ``krow``), or ``stop`` if the segment ends first."""
    for t in range(start, stop):
        i = order[t]
        prefetch_next(xs, sqn, y, order, t, stop)
        m = size[0]
        yi = y[i]
        f, _ = observe_binary(xs, sqn, i, yi, sv, sv_sqn, sv_order, alpha, m, inv2s2, krow, counts)
        if yi * f < 1.0:
            if m < budget:
                alpha[_append(xs, sqn, i, sv, sv_sqn, sv_order, size, counts)] = eta * yi
            else:
                return t
    return stop


@njit(**JIT)
def _play_linear(Z, yb, w, eta, counts, w_sum=None, n_sum=None):
    """Phase 2 over a block of precomputed features Z[r] = M k(x_r). With ``w_sum`` (KOL's
    averaged model, ``w_nogd_sum``) w is added to it after every update and ``n_sum[0]`` counts
    them; without it the branch is compiled away."""
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
            if w_sum is not None:
                axpy(1.0, w, w_sum)
                n_sum[0] += 1


@njit(**JIT)
def _play_kernel_multiclass(xs, sqn, y, order, start, stop, sv, sv_sqn, sv_order, alpha, size,
                            counts, inv2s2, krow, budget, eta, V, pending):
    """Multi-class phase 1 (spec 2.10): kernel OGD with the +/- update (+eta for y, -eta for
    the best wrong class s) on hinge loss l > 0 while |S| < B. Returns the switch step (the
    first l > 0 at |S| = B) with its s in ``pending[0]``, or ``stop``."""
    for t in range(start, stop):
        i = order[t]
        prefetch_next(xs, sqn, y, order, t, stop)
        m = size[0]
        yi = y[i]
        _, s = observe_multiclass(xs, sqn, i, yi, sv, sv_sqn, sv_order, alpha, m, inv2s2, krow,
                                  V, counts)
        if multiclass_hinge(V, yi, s) > 0.0:
            if m < budget:
                store_pair(alpha, _append(xs, sqn, i, sv, sv_sqn, sv_order, size, counts), yi, s,
                           eta)
            else:
                pending[0] = s
                return t
    return stop


@njit(**JIT)
def _play_kernel_regression(xs, sqn, y, order, start, stop, sv, sv_sqn, sv_order, alpha, size,
                            counts, sq_loss, inv2s2, krow, budget, eta, eps, pending):
    """Regression phase 1 (spec 3): store x_t with eta (y - f) on |y - f| > eps while |S| < B.
    Returns the switch step (the first such event at |S| = B) with its y - f in
    ``pending[0]``, or ``stop``."""
    for t in range(start, stop):
        i = order[t]
        prefetch_next(xs, sqn, y, order, t, stop)
        m = size[0]
        delta, event = observe_regression(xs, sqn, i, y[i], sv, sv_sqn, sv_order, alpha, m, inv2s2,
                                          krow, eps, counts, sq_loss)
        if event:
            if m < budget:
                alpha[_append(xs, sqn, i, sv, sv_sqn, sv_order, size, counts)] = eta * delta
            else:
                pending[0] = delta
                return t
    return stop


@njit(**JIT)
def _play_linear_multiclass(Z, yb, W, V, eta, counts):
    """Multi-class phase 2 over a block of features (spec 2.10)."""
    for r in range(Z.shape[0]):
        multiclass_linear_step(W, Z[r], yb[r], V, eta, counts)


@njit(**JIT)
def _play_linear_regression(Z, yb, w, eta, eps, counts, sq_loss):
    """Regression phase 2 over a block of features (spec 3)."""
    for r in range(Z.shape[0]):
        regression_linear_step(w, Z[r], yb[r], eta, eps, counts, sq_loss)


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
    reads_float32 = True  # float32 rows read as they are (issue 26; base.OnlineLearner)
    task = "binary"
    _params = {**EPOCH_PARAMS, "sigma": SIGMA, "budget": BUDGET, "rho_n": Num(0, 1, "right"),
               "rank": Num(1, np.inf, "left", integer=True, allow_none=True), "eta": POSITIVE,
               "variant": VARIANT}

    def __init__(self, *, sigma: float | str = "scale", budget: int = 100, rho_n: float = 0.2,
                 rank: int | None = None, eta: float = 0.2, variant: str = "faithful", max_iter: int = MAX_ITER, tol: float | None = TOL,
                 n_iter_no_change: int = ONLINE_N_ITER_NO_CHANGE):
        self.max_iter = max_iter
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
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

    def memory_estimate(self, n_samples: int, n_features: int, n_outputs: int = 1) -> dict:
        """The budgeted learner's parts (lsokl.compute.memory) plus the switch's copies of the B
        stored vectors (the Nystrom map keeps them and their transpose)."""
        from ...compute.memory import default_learner_estimate, support_switch_estimate

        return {**default_learner_estimate(self, n_samples, n_features, n_outputs),
                **support_switch_estimate(n_features, int(self.budget))}

    def _allocate(self, n_features, capacity, source):
        self.rank_  # validates rank against budget before any work
        self._allocate_support(n_features, capacity)
        self.switched_ = False
        self.map_ = None
        self.w_ = None
        self.eigenvalues_ = None
        # What the switch step needs besides y_t: s_t (multi-class) or y_t - f_t (regression).
        self._pending = np.zeros(1)
        self.w_sum_ = None
        if self.track_average and self.task != "binary":
            raise ValueError("testing with the averaged model is implemented for binary NOGD "
                             "(KOL's option) only")

    # KOL's test-with-the-average option (``test_with: average`` in the holdout protocol): with
    # ``track_average = True`` before ``run``, w is summed after every update of the Nystrom phase
    # (the switch step included; phase 1 has no w) and ``use_average()`` replaces w by the mean.
    track_average = False

    def use_average(self) -> None:
        """Replace w by its mean over the Nystrom-phase updates (never switched: unchanged)."""
        if not self.track_average:
            raise ValueError("set track_average = True before run() to test with the average")
        if self.w_sum_ is not None and self._n_sum[0] > 0:
            self.w_ = self.w_sum_ / float(self._n_sum[0])

    def _switch(self, yi) -> None:
        """Build the Nystrom map from the B stored vectors at the switch step (spec 1.10, 1-5);
        w = alpha pinv(M) is (k,) for one coefficient per vector, (m, k) for multi-class."""
        B = int(self.budget)
        sv = self.sv_[self.order_[:B]]
        gram = gaussian_gram(sv, sv, float(self.sigma_))
        floor = EIGEN_FLOOR if self.variant == "corrected" else None
        lam, V = NystromMap.eigen(gram, self.rank_, floor)
        with np.errstate(invalid="ignore", divide="ignore"):  # faithful: as MATLAB computes it
            M = (V / np.sqrt(lam)).T
            self.w_ = np.ascontiguousarray(self.alpha_[self.order_[:B]].T @ (V * np.sqrt(lam)))
        self.eigenvalues_ = lam
        self.map_ = NystromMap(sv, self.sv_sqn_[self.order_[:B]], M, float(self.sigma_))
        self._switch_step(M @ self.krow_[self.order_[:B]], yi)
        self.counts_[2] += 1
        self.switched_ = True
        if self.track_average:
            self.w_sum_ = self.w_.copy()
            self._n_sum = np.ones(1, dtype=np.int64)

    def _switch_step(self, z: np.ndarray, yi) -> None:
        """The switch step's own update with z = M k_t (its prediction came from phase 1)."""
        self.w_ += float(self.eta) * float(yi) * z

    def _play(self, stream, y, order, start, stop):
        t = start
        if not self.switched_:
            t = self._play_kernel(stream, y, order, start, stop)
            if t < stop:
                self._switch(y[order[t]])
                t += 1
        if self.switched_:
            repeats = BlockRepeats(stream)
            for a in range(t, stop, BLOCK):
                idx = order[a:min(a + BLOCK, stop)]
                # a block's repeated rows get their features once (copies: the same bits)
                Z = repeats.map_rows(idx, lambda rows, _: self.map_.features(stream, rows))
                self._play_linear(Z, np.ascontiguousarray(y[idx]))

    def _play_kernel(self, stream, y, order, start, stop) -> int:
        """Phase 1 from ``start``; returns the switch step or ``stop``."""
        return _play_kernel(stream.xs, stream.sqnorms, y, order, start, stop, self.sv_,
                            self.sv_sqn_, self.order_, self.alpha_, self.size_, self.counts_,
                            1.0 / (2.0 * self.sigma_**2), self.krow_, int(self.budget),
                            float(self.eta))

    def _play_linear(self, Z, yb) -> None:
        """Phase 2 over one block of Nystrom features."""
        if self.w_sum_ is not None:
            _play_linear(Z, yb, self.w_, float(self.eta), self.counts_, self.w_sum_, self._n_sum)
        else:
            _play_linear(Z, yb, self.w_, float(self.eta), self.counts_)

    def features(self, X) -> np.ndarray:
        """z(x) = M k(x) for every row of X (after the switch)."""
        from ...compute.stream import Stream

        if not getattr(self, "switched_", False):
            raise ValueError("NOGD has no Nystrom map yet: it is built at the first margin error "
                             "after the budget is full")
        return self.map_.transform(Stream(X))

    def _scores(self, stream) -> np.ndarray:
        if self.switched_:
            return self.map_.transform(stream) @ self.w_.T
        return super()._scores(stream)


class MulticlassNOGD(NOGD):
    """Multi-class NOGD (spec 2.10, the authors' ``multiclass/NyGD.m``).

    Phase 1 is multi-class kernel OGD: on hinge loss l_t > 0 while |S| < B, x_t is stored with
    +eta for y_t and -eta for the best wrong class s_t. The first l_t > 0 at |S| = B switches to
    W = alpha pinv(M) (m x k, ``w_``), then W[y_t] += eta z, W[s_t] -= eta z with s_t from that
    step's kernel prediction; phase 2 repeats that update on every l_t > 0. Defaults are the
    authors' ``Experiment.m``: B = 200, k = round(0.2 B) = 40, eta = options.eta = 0.5.
    """

    task = "multiclass"

    def __init__(self, *, sigma: float | str = "scale", budget: int = 200, rho_n: float = 0.2,
                 rank: int | None = None, eta: float = 0.5, variant: str = "faithful", max_iter: int = MAX_ITER, tol: float | None = TOL,
                 n_iter_no_change: int = ONLINE_N_ITER_NO_CHANGE):
        super().__init__(sigma=sigma, budget=budget, rho_n=rho_n, rank=rank, eta=eta,
                         variant=variant,
                         max_iter=max_iter, tol=tol, n_iter_no_change=n_iter_no_change)

    def _allocate(self, n_features, capacity, source):
        super()._allocate(n_features, capacity, source)
        self._V = np.zeros(self.n_classes_)

    def _play_kernel(self, stream, y, order, start, stop) -> int:
        return _play_kernel_multiclass(
            stream.xs, stream.sqnorms, y, order, start, stop, self.sv_, self.sv_sqn_,
            self.order_, self.alpha_, self.size_, self.counts_, 1.0 / (2.0 * self.sigma_**2),
            self.krow_, int(self.budget), float(self.eta), self._V, self._pending)

    def _switch_step(self, z, yi) -> None:
        eta = float(self.eta)
        self.w_[int(yi)] += eta * z
        self.w_[int(self._pending[0])] -= eta * z

    def _play_linear(self, Z, yb) -> None:
        _play_linear_multiclass(Z, yb, self.w_, self._V, float(self.eta), self.counts_)


class RegressionNOGD(RegressorMixin, NOGD):
    """Regression NOGD (spec 3, the authors' ``regression/NysGD.m``).

    Phase 1 stores x_t with eta (y - f) on |y - f| > ``epsilon`` while |S| < B; the first such
    event at |S| = B switches (w = alpha pinv(M), then w += eta (y - f) z); phase 2 is
    w += eta (y - f) z on every event. The squared loss is taken before each update. Defaults are
    the authors' regression ``Experiment.m``: B = 30, k = 0.2 B = 6, eta = 0.1, epsl = 0.1 (their
    paper Table 9 used the eta stored in the .mat files: 0.3 housing, 0.4 mg). ``counts_[1]``
    counts the |y - f| > epsilon events; the authors' file never increments its counter.
    """

    poor_score = REGRESSION_POOR_SCORE  # R^2 0.18 in check_regressors_train, see tasks.py

    task = "regression"
    _params = {**NOGD._params, "epsilon": NON_NEGATIVE}

    def __init__(self, *, sigma: float | str = "scale", budget: int = 30, rho_n: float = 0.2,
                 rank: int | None = None, eta: float = 0.1, epsilon: float = 0.1,
                 variant: str = "faithful", max_iter: int = MAX_ITER, tol: float | None = TOL,
                 n_iter_no_change: int = ONLINE_N_ITER_NO_CHANGE):
        super().__init__(sigma=sigma, budget=budget, rho_n=rho_n, rank=rank, eta=eta,
                         variant=variant,
                         max_iter=max_iter, tol=tol, n_iter_no_change=n_iter_no_change)
        self.epsilon = epsilon

    def _play_kernel(self, stream, y, order, start, stop) -> int:
        return _play_kernel_regression(
            stream.xs, stream.sqnorms, y, order, start, stop, self.sv_, self.sv_sqn_,
            self.order_, self.alpha_, self.size_, self.counts_, self.sq_loss_,
            1.0 / (2.0 * self.sigma_**2), self.krow_, int(self.budget), float(self.eta),
            float(self.epsilon), self._pending)

    def _switch_step(self, z, yi) -> None:
        self.w_ += float(self.eta) * float(self._pending[0]) * z

    def _play_linear(self, Z, yb) -> None:
        _play_linear_regression(Z, yb, self.w_, float(self.eta), float(self.epsilon),
                                self.counts_, self.sq_loss_)
