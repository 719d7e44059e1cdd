"""FOGD, Fourier Online Gradient Descent, as the authors' ``{binary,multiclass,regression}/FouGD.m``
(spec 1.9, 2.9, 3).

The frequencies U = randn(d, D) / sigma are drawn in ``_allocate`` (before the timed pass, as the
authors draw them before ``tic``); with D = ``n_fourier`` or, by default, ``rho_f * budget``
(paper: rho_f = 4, B = 100 -> D = 400). Features are z(x) = [cos(U'x); sin(U'x)], unnormalised.
The model is w in R^{2D}, f = w.z(x); the update is w += eta y z(x) iff y f < 1 (strict).
``support_size_`` is the number of updates, which is what the authors record as "SVs".

Speed: the stream is played in blocks of ``features.BLOCK`` samples inside each segment
[start, stop). For a block, U'x for all its samples is one BLAS call; then one compiled loop does,
per sample and in order, cos/sin (vectorised, ``features.sincos``), f = w.z, count, update. No
sample's features depend on the model, so this is the per-sample algorithm exactly, up to the
summation order inside U'x and w.z (the same perturbation as the authors' column-reversal check).

Binary float64 FOGD on CSR rows instead runs one compiled loop over the segment
(``_play_csr_rows``) that projects a row (the same ``csr_row_times_dense`` arithmetic) only
when its features are needed: a repeated row predicted since the last update costs nothing
(duplicate-row memo; kddcup99: 1.13x), no pass pays a Python round trip per block (a9a, whose
rows rarely repeat: 0.047 -> 0.042 s), and the next row's indices and values are prefetched
while this one is played (the permuted pass reads rows at random: 0.044 -> 0.038 s on a9a). The
pass is the blocked one's bit for bit.

The projection and sin/cos run with 512-bit vectors where the CPU has them
(``cpu_hints.wide_vectors``; a9a 1.2x, the same bits), on arrays that start on a cache line
(``kernels.aligned_empty``: U's rows as NumPy placed them straddled cache lines, which cost a9a's
projection 1.8x).

The tasks share the frequency draw, the blocked projections and sin/cos; each has its own
compiled per-sample loop (``_play_block*``) because the prediction and update differ.
"""
from __future__ import annotations

import numpy as np
from numba import njit
from sklearn.base import RegressorMixin

from ..base import EPOCH_PARAMS, MAX_ITER, ONLINE_N_ITER_NO_CHANGE, SEED, SIGMA, TOL, OnlineLearner
from ...compute.duplicates import NO_MEMO, BlockRepeats, memo_for, memo_lookup, memo_store
from ...compute.cpu_hints import prefetch, prefetch_next_csr_rows
from ...compute.features import (BLOCK, REDUCE_JIT, FourierMap, axpy, csr_row_times_dense, dot,
                       fourier_from_projections, multiclass_linear_step, regression_linear_step,
                       sincos)
from ...compute.kernels import JIT, aligned_zeros
from ...compute.memory import refuse_if_too_big
from ...compute.params import BUDGET, NON_NEGATIVE, POSITIVE, Num, OneOf


# Binary float64 FOGD on CSR rows: project each row inside one compiled loop, when needed
# (False: blocks of projections; the passes are the same bit for bit).
CSR_ROW_LOOP = True


@njit(inline="always")
def _counted_margin_error(f, yi, counts):
    """Count the step and a sign mistake (sign(0) = +1); True on a margin error, y f < 1."""
    counts[0] += 1
    if (1.0 if f >= 0.0 else -1.0) != yi:
        counts[1] += 1
    return yi * f < 1.0


@njit(inline="always")
def _update(w, wc, ws, zc, zs, step, counts, w_sum):
    """w += step z (z = [zc; zs], wc/ws w's halves), counted; KOL's w_sum += w when given."""
    counts[2] += 1
    axpy(step, zc, wc)
    axpy(step, zs, ws)
    if w_sum is not None:
        axpy(1.0, w, w_sum)


@njit(**JIT)
def _play_block(P, yb, w, zc, zs, eta, counts, memo, rows, w_sum=None):
    """Strict online pass over a block given its projections P[r] = U' x_r. With ``w_sum``
    (KOL's averaged model, ``w_fogd_sum``) w is also added to it after every update; without it
    the branch is compiled away. ``memo``/``rows``: the duplicate-row memo and the block's row
    indices (``duplicates``): a row predicted since the last update reuses its f, bit for bit."""
    D = zc.shape[0]
    wc = w[:D]
    ws = w[D:]
    for r in range(P.shape[0]):
        hit, f = memo_lookup(memo, rows[r], counts[2])
        if not hit:
            sincos(P[r], zc, zs)
            f = dot(wc, zc) + dot(ws, zs)
            memo_store(memo, rows[r], counts[2], f)
        yi = yb[r]
        if _counted_margin_error(f, yi, counts):
            if hit:
                sincos(P[r], zc, zs)
            _update(w, wc, ws, zc, zs, eta * yi, counts, w_sum)


@njit(**JIT)
def _play_csr_rows(indptr, indices, values, U, y, idx, w, p, zc, zs, eta, counts, memo,
                   w_sum=None):
    """The strict online pass over CSR rows ``idx`` with each row's projection p = U'x made in
    the loop, only when it is needed: a row whose copy was predicted since the last update
    (``memo``) reuses that f and is projected only if it triggers an update. Each projection is
    ``csr_row_times_dense``, the same arithmetic as the blocked projections, so the pass is
    :func:`_play_block`'s bit for bit; it saves the projections of memo hits and the block's
    Python round trip (kddcup99: 1,930 blocks a pass)."""
    D = zc.shape[0]
    wc = w[:D]
    ws = w[D:]
    n = idx.shape[0]
    for r in range(n):
        i = idx[r]
        # the rows come at random: ask for the next ones ahead (and the next label)
        prefetch_next_csr_rows(indptr, indices, values, idx, r, n)
        if r + 1 < n:
            prefetch(y, idx[r + 1])
        hit, f = memo_lookup(memo, i, counts[2])
        if not hit:
            csr_row_times_dense(indptr, indices, values, i, U, p)
            sincos(p, zc, zs)
            f = dot(wc, zc) + dot(ws, zs)
            memo_store(memo, i, counts[2], f)
        yi = y[i]
        if _counted_margin_error(f, yi, counts):
            if hit:
                csr_row_times_dense(indptr, indices, values, i, U, p)
                sincos(p, zc, zs)
            _update(w, wc, ws, zc, zs, eta * yi, counts, w_sum)


@njit(**REDUCE_JIT)
def _round_and_dot32(zc, zs, zc32, zs32, wc, ws):
    """Round the features to float32 (into zc32/zs32) and return w.z accumulated in float64."""
    f = 0.0
    for j in range(zc.shape[0]):
        c = np.float32(zc[j])
        s = np.float32(zs[j])
        zc32[j] = c
        zs32[j] = s
        f += np.float64(wc[j]) * np.float64(c) + np.float64(ws[j]) * np.float64(s)
    return f


@njit(**REDUCE_JIT)
def _axpy32(step, x, y):
    for k in range(x.shape[0]):
        y[k] += step * x[k]


@njit(**JIT)
def _play_block32(P, yb, w, zc, zs, zc32, zs32, eta, counts):
    """float32 model: features rounded to float32, w kept in float32, f accumulated in float64."""
    D = zc.shape[0]
    wc = w[:D]
    ws = w[D:]
    for r in range(P.shape[0]):
        sincos(P[r], zc, zs)
        f = _round_and_dot32(zc, zs, zc32, zs32, wc, ws)
        yi = yb[r]
        counts[0] += 1
        if (1.0 if f >= 0.0 else -1.0) != yi:
            counts[1] += 1
        if yi * f < 1.0:
            counts[2] += 1
            step = np.float32(eta * yi)
            _axpy32(step, zc32, wc)
            _axpy32(step, zs32, ws)


@njit(**JIT)
def _play_block_multiclass(P, yb, W, z, V, eta, counts):
    """Multi-class FOGD over a block (spec 2.9). ``z`` has W's dtype, so a float32 model also
    sees its features rounded to float32."""
    D = P.shape[1]
    for r in range(P.shape[0]):
        sincos(P[r], z[:D], z[D:])
        multiclass_linear_step(W, z, yb[r], V, eta, counts)


@njit(**JIT)
def _play_block_regression(P, yb, w, z, eta, eps, counts, sq_loss):
    """Regression FOGD over a block (spec 3)."""
    D = P.shape[1]
    for r in range(P.shape[0]):
        sincos(P[r], z[:D], z[D:])
        regression_linear_step(w, z, yb[r], eta, eps, counts, sq_loss)


class FOGD(OnlineLearner):
    """Fourier Online Gradient Descent (spec 1.9).

    Parameters
    ----------
    sigma : Gaussian kernel width; frequencies are N(0, sigma^-2 I).
    budget : the budget B the paper matches FOGD against; only sets D = rho_f * B.
    rho_f : frequencies per budget unit (paper and authors' ``options.D``: 4).
    n_fourier : number of random frequencies D; overrides ``rho_f * budget`` when given.
    eta : step size (authors' ``eta_fou``, 0.002). The features are unnormalised, so the effective
        kernel step is eta * D. ``fit``'s epoch k takes eta / k (``fit_step_decay``); ``run`` and
        ``partial_fit`` take eta.
    random_state : seed of the frequency draw (ignored when ``run`` gets a ``random_source``).
    dtype : ``"float64"`` (default, exact) or ``"float32"`` (the weights are stored in float32
        and the features rounded to float32 before the dot product and the update; U'x and
        cos/sin stay float64, so this halves the model's memory but is not faster).
    """

    name = "fogd"
    reads_float32 = True  # float32 rows read as they are (issue 26; base.OnlineLearner)
    task = "binary"
    randomized = True
    stores_support_vectors = False
    # fit's epoch k steps eta / k (base.OnlineLearner._fit_epochs). With a constant step and no
    # regulariser, repeated epochs drive the 2D unnormalised features to fit the noise: german
    # (standardised, 5-fold CV) fell from 74.7% after one epoch to 71.3-72.7% after the 20-50
    # epochs the stopping rule allowed; eta / k (total step ~ eta ln k) ends at 74-76.5%.
    fit_step_decay = True
    _params = {**EPOCH_PARAMS, "sigma": SIGMA, "budget": BUDGET, "rho_f": POSITIVE,
               "n_fourier": Num(1, np.inf, "left", integer=True, allow_none=True),
               "eta": POSITIVE, "random_state": SEED, "dtype": OneOf(("float64", "float32"))}

    def __init__(self, *, sigma: float | str = "scale", budget: int = 100, rho_f: float = 4.0,
                 n_fourier: int | None = None, eta: float = 0.002, random_state=None,
                 dtype: str = "float64", max_iter: int = MAX_ITER, tol: float | None = TOL,
                 n_iter_no_change: int = ONLINE_N_ITER_NO_CHANGE):
        self.max_iter = max_iter
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.sigma = sigma
        self.budget = budget
        self.rho_f = rho_f
        self.n_fourier = n_fourier
        self.eta = eta
        self.random_state = random_state
        self.dtype = dtype

    @property
    def n_components_(self) -> int:
        """D, the number of random frequencies (the model has 2D weights)."""
        if self.n_fourier is not None:
            return int(self.n_fourier)
        D = int(round(self.rho_f * self.budget))
        if D < 1:
            raise ValueError(f"rho_f * budget = {self.rho_f * self.budget:g} gives no frequency; "
                             "raise rho_f or budget, or set n_fourier")
        return D

    def _allocate(self, n_features, capacity, source):
        D = self.n_components_
        refuse_if_too_big(self, {f"random features (d x D = {n_features:,} x {D:,}) and weights":
                                 8.0 * D * (n_features + 8)})
        self.map_ = FourierMap.draw(source, n_features, D, float(self.sigma_))
        dt = np.float32 if self.dtype == "float32" else np.float64
        # the vectorised loops stream these: each starts on a cache line (``aligned_empty``)
        self.w_ = aligned_zeros(2 * D, dtype=dt)
        self._zc, self._zs = aligned_zeros(D), aligned_zeros(D)
        self._p = aligned_zeros(D)  # one row's projection (``_play_csr_rows``)
        self._zc32, self._zs32 = np.zeros(D, np.float32), np.zeros(D, np.float32)
        # [cos; sin] scratch of the multi-class and regression loops, in the model's dtype: a
        # float32 model sees its features rounded to float32, as the binary float32 loop does.
        self._z = np.zeros(2 * D, dtype=dt)
        self.w_sum_ = None
        if self.track_average:
            if self.task != "binary" or dt != np.float64:
                raise ValueError("testing with the averaged model is implemented for binary "
                                 "float64 FOGD (KOL's option) only")
            self.w_sum_ = np.zeros(2 * D)

    @property
    def support_size_(self) -> int:
        return int(self.counts_[2])

    def _play(self, stream, y, order, start, stop):
        # Binary float64 FOGD uses the duplicate-row memo; the other loops do not (yet).
        memo = (memo_for(stream, self) if self.task == "binary" and self.w_.dtype == np.float64
                else None)
        if memo is not None and stream.is_sparse and CSR_ROW_LOOP:
            # CSR rows: one compiled loop projects each row only when needed (``_play_csr_rows``;
            # the memo may be off, when the rows rarely repeat)
            _play_csr_rows(stream.indptr, stream.indices, stream.values, self.map_.U, y,
                           np.ascontiguousarray(order[start:stop], dtype=np.int64), self.w_,
                           self._p, self._zc, self._zs, self._eta_now(), self.counts_,
                           memo.arrays, getattr(self, "w_sum_", None))
            return
        repeats = BlockRepeats(stream)
        for a in range(start, stop, BLOCK):
            idx = order[a:min(a + BLOCK, stop)]
            # a block's repeated rows are projected once (the copies are the same bits)
            P = repeats.map_rows(idx, lambda rows, _: self.map_.project(stream, rows))
            self._play_projected(P, np.ascontiguousarray(y[idx]),
                                 NO_MEMO if memo is None else memo.arrays, idx)

    # KOL's test-with-the-average option (``test_with: average`` in the holdout protocol): set
    # ``track_average = True`` before ``run``; then ``use_average()`` replaces w by the mean of w
    # over the updates (KOL's ``begin_test``: w_sum / num_update). Binary, float64 only.
    track_average = False

    def use_average(self) -> None:
        """Replace w by its average over the updates of the last pass (no update: unchanged)."""
        if getattr(self, "w_sum_", None) is None:
            raise ValueError("set track_average = True before run() to test with the average")
        if self.counts_[2] > 0:
            self.w_ = self.w_sum_ / float(self.counts_[2])

    def _play_projected(self, P, yb, memo=NO_MEMO, rows=None):
        """The strict online loop over one block, given its projections P = X[block] U;
        ``memo``/``rows``: the duplicate-row memo and the block's row indices (binary only)."""
        eta = self._eta_now()
        if rows is None:
            memo, rows = NO_MEMO, np.arange(P.shape[0], dtype=np.int64)
        if getattr(self, "w_sum_", None) is not None:
            _play_block(P, yb, self.w_, self._zc, self._zs, eta, self.counts_, memo, rows,
                        self.w_sum_)
        elif self.w_.dtype == np.float32:
            _play_block32(P, yb, self.w_, self._zc, self._zs, self._zc32, self._zs32, eta,
                          self.counts_)
        else:
            _play_block(P, yb, self.w_, self._zc, self._zs, eta, self.counts_, memo, rows)


    def features(self, X) -> np.ndarray:
        """z(x) for every row of X, (n, 2D): the fitted feature map, for reuse and tests."""
        from ...compute.stream import Stream

        self._check_fitted()
        return self.map_.transform(Stream(X))

    def _scores(self, stream) -> np.ndarray:
        return self.map_.scores(stream, self.w_)


class MulticlassFOGD(FOGD):
    """Multi-class FOGD (spec 2.9, the authors' ``multiclass/FouGD.m``).

    W is m x 2D (``w_``), V = W z(x); on hinge loss l_t > 0, W[y_t] += eta z and
    W[s_t] -= eta z, with s_t the best wrong class (lowest index on ties). Defaults are the
    authors' ``Experiment.m``: B = 200, rho_f = 4 (D = round(rho_f B) = 800), eta_fou = 0.005.
    ``support_size_`` counts the updates, as for binary FOGD; the authors record 0 here.
    """

    task = "multiclass"

    def __init__(self, *, sigma: float | str = "scale", budget: int = 200, rho_f: float = 4.0,
                 n_fourier: int | None = None, eta: float = 0.005, random_state=None,
                 dtype: str = "float64", max_iter: int = MAX_ITER, tol: float | None = TOL,
                 n_iter_no_change: int = ONLINE_N_ITER_NO_CHANGE):
        super().__init__(sigma=sigma, budget=budget, rho_f=rho_f, n_fourier=n_fourier, eta=eta,
                         random_state=random_state, dtype=dtype,
                         max_iter=max_iter, tol=tol, n_iter_no_change=n_iter_no_change)

    def _allocate(self, n_features, capacity, source):
        super()._allocate(n_features, capacity, source)
        self.w_ = np.zeros((self.n_classes_, self.w_.shape[0]), dtype=self.w_.dtype)
        self._V = np.zeros(self.n_classes_)

    def _play_projected(self, P, yb, memo=NO_MEMO, rows=None):
        _play_block_multiclass(P, yb, self.w_, self._z, self._V, self._eta_now(),
                               self.counts_)


class RegressionFOGD(RegressorMixin, FOGD):
    """Regression FOGD (spec 3, the authors' ``regression/FouGD.m``).

    f = w.z(x); w += eta (y - f) z iff |y - f| > ``epsilon``. Defaults are the authors'
    regression ``Experiment.m``: B = 30, k_f = rho_f = 15 (D = 450), Fou_eta = 6e-4, epsl = 0.1.
    ``counts_[1]`` counts the |y - f| > epsilon events; the authors' file never increments its
    counter (their err_events are 0).
    """

    task = "regression"
    _params = {**FOGD._params, "epsilon": NON_NEGATIVE}

    def __init__(self, *, sigma: float | str = "scale", budget: int = 30, rho_f: float = 15.0,
                 n_fourier: int | None = None, eta: float = 6e-4, epsilon: float = 0.1,
                 random_state=None, dtype: str = "float64",
                 max_iter: int = MAX_ITER, tol: float | None = TOL,
                 n_iter_no_change: int = ONLINE_N_ITER_NO_CHANGE):
        super().__init__(sigma=sigma, budget=budget, rho_f=rho_f, n_fourier=n_fourier, eta=eta,
                         random_state=random_state, dtype=dtype,
                         max_iter=max_iter, tol=tol, n_iter_no_change=n_iter_no_change)
        self.epsilon = epsilon

    def _play_projected(self, P, yb, memo=NO_MEMO, rows=None):
        _play_block_regression(P, yb, self.w_, self._z, self._eta_now(),
                               float(self.epsilon), self.counts_, self.sq_loss_)


__all__ = ["FOGD", "MulticlassFOGD", "RegressionFOGD", "fourier_from_projections"]
