"""DSG, doubly stochastic functional gradients (Dai et al., NIPS 2014), spec ``DSG.md`` sections 1-2, 7.

Each step t takes the next mini-batch of ``batch_size`` = b rows, scores it with the current model
f_t = sum_{j<t} Phi_j(x) alpha_j, and appends one block of ``block_features`` = r coefficients::

    G       = l'(F, y)                                  (b,) or softmax(F) - Y (b, K)
    alpha_t = -gamma_t Phi_t(B)^T G / b                 plain (default)
    alpha_t = -gamma_t (C + eps I)^-1 Phi_t(B)^T G / b,  C = Phi_t^T Phi_t / b   (``precond``)
    alpha_j <- (1 - gamma_t nu) alpha_j  for j < t      (after the prediction: step 2 uses the
                                                         coefficients before this decay)

Phi_j is block j of random Fourier features, **regenerated** from (seed, j): the frequencies W_j
(d x r, N(0, sigma^-2)) and phases c_j (U[0, 2 pi)) come from
``Generator(PCG64(SeedSequence(entropy, spawn_key=(..., j))))``, drawn W then c in float64, so a
block never depends on call order, caching or worker count, and the model state is the t blocks
of coefficients only, O(t r) numbers (``cache_features=True`` keeps W_j, c_j instead of redrawing
them: identical predictions, t r (d + 1) more numbers). Three feature forms (spec section 1):

* ``paper`` (P, default): sqrt(2/r) cos(W^T x + c), r features, an unbiased kernel estimate;
* ``matlab`` (M): [cos(W^T x); sin(W^T x)] / sqrt(r), 2r features from r frequencies, no phase;
* ``gpu`` (G): cos(W^T x + c), unscaled (estimates k/2; meant for ``precond``).

Losses: ``hinge`` (K-SVM, l' = -y if y f < 1, strict) and ``logistic`` for binary; softmax
``logistic`` for multiclass; ``squared`` (K-ridge) for regression. Step sizes (spec section 2):
``inv_t`` theta/(t + t0), ``inv_sqrt`` theta/sqrt(t + t0), ``const`` theta, ``matlab``
theta/(1 + eta1 t).

**Precision.** With ``dtype="float32"`` (default, as the authors' GPU floats and MATLAB ``single``)
the rows, the frequencies, W^T x, the cosines/sines and a block's scores Phi_j(X) alpha_j are
float32 GEMMs and SIMD cosines; the coefficients, the gradients, the preconditioner solve and the
sums over blocks (the running and final scores) are float64. ``dtype="float64"`` does everything
in float64.

**Sparse and dense input** train the same model up to rounding, not bit for bit: W^T x of a CSR row
sums its nonzero products only, in another order than the dense GEMM. With ``float32`` the scores
of the two agree to float32 rounding carried through the pass (measured: about 3e-7 of the largest
score on 400 rows, up to 2e-5 on long passes; the contract tested is 1e-4), so a predicted label
differs only for a row scored within that of a tie; with ``float64`` they agree to about 1e-15.
Choose ``dtype="float64"`` where sparse and dense runs must match beyond float32 precision.

**Bounded form** (``max_blocks``, spec section 4, the authors' GPU ``randft`` layer): the model
grows by one block per step until it holds ``max_blocks`` blocks; from then on each step draws a
**uniformly random existing block** j (a seeded generator of its own, the block seeds' entropy
with spawn key (..., 0), never a block index) and refines it with the same gradient step::

    alpha_i <- (1 - gamma_t nu) alpha_i  for every i,   then   alpha_j += Delta_t

where Delta_t is the step's new-block value computed on block j's features (plain or
``precond``), as the GPU code's W_c += Delta - eps wc W_c with every other block decayed. The
model then has at most ``max_blocks`` x r features, their W and c are kept (max_blocks r (d + 1)
numbers), and the training rows are scored by the model directly (at most ``max_blocks`` blocks
per row), so a pass costs n max_blocks r d: **linear in n**. ``max_blocks=None`` is the growing
form of the paper's Alg. 1, a pass of n^2 r d / (2b): quadratic in n.

**Default** ``max_blocks="auto"``: the growing form up to :data:`AUTO_ROWS` training rows (every
shipped reproduction: Adult, cpusmall, ...; the same model and the same numbers as
``max_blocks=None``), the bounded form above it with ``ceil(AUTO_FEATURES / block width)`` blocks
(16,384 random features; the GPU code keeps 5,120 on MNIST8M and 163,840 on CIFAR10), so a pass
over a large file costs n x 16,384 x d, linear in n. The choice is kept in ``max_blocks_`` (None:
growing) and said in ``model_form_``, which the runner writes into the cell's record. ``partial_fit``
does not know the training size: "auto" grows there (set ``max_blocks`` to bound it). ``feature_rows_`` counts the
(row, block) feature evaluations of the last training pass (the work measure of the tests).

Speed: ``fit`` / ``fit_curve`` use the running-score driver of :mod:`minibatch`: every block is
generated once and applied to all the rows that still need it in one GEMM + one cosine call, which
is the n^2 r d / (2b) cost of the spec in large BLAS calls. ``partial_fit`` and ``predict``
regenerate the blocks one by one (or read the cache).
"""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy.special import expit, log_expit, logsumexp
from sklearn.utils.metaestimators import available_if

from ..base import EPOCH_PARAMS, MAX_ITER, N_ITER_NO_CHANGE, SIGMA, TOL
from ...compute.memory import refuse_if_too_big
from .minibatch import BATCH, BlockModel, Schedule, HeldOutCurve, take_rows, zeros_like_rows
from ...compute.params import NON_NEGATIVE, POSITIVE, Num, OneOf, Seed
from ...compute.xp import asarray, device, float_dtype, is_numpy, namespace, to_numpy

FORMS = ("paper", "matlab", "gpu")
#: ``max_blocks="auto"``: above this many training rows in one fit, the bounded form
AUTO_ROWS = 100_000
#: ``max_blocks="auto"`` above :data:`AUTO_ROWS`: blocks of ``ceil(AUTO_FEATURES / block width)``
AUTO_FEATURES = 16_384
TWO_PI = 2.0 * math.pi


class MaxBlocks:
    """``max_blocks``: ``"auto"``, None or an int >= 1."""

    _num = Num(1, math.inf, "left", integer=True, allow_none=True)

    def check(self, owner: str, name: str, value) -> None:
        if isinstance(value, str) and value == "auto":
            return
        try:
            self._num.check(owner, name, value)
        except ValueError as e:
            raise ValueError(str(e).replace("or None.", "or None or 'auto'.")) from None


def block_seed_sequence(base: np.random.SeedSequence, j: int) -> np.random.SeedSequence:
    """The seed of block j: the base entropy with j appended to its spawn key."""
    return np.random.SeedSequence(entropy=base.entropy, spawn_key=tuple(base.spawn_key) + (int(j),))


def draw_block(base: np.random.SeedSequence, j: int, n_features: int, r: int, sigma: float):
    """Frequencies W (d x r) ~ N(0, sigma^-2 I) and phases c (r,) ~ U[0, 2 pi) of block j, float64.
    k(x, x') = exp(-||x - x'||^2 / (2 sigma^2)) = E[2 cos(w.x + c) cos(w.x' + c)]."""
    rng = np.random.Generator(np.random.PCG64(block_seed_sequence(base, j)))
    W = rng.standard_normal((n_features, r)) / sigma
    c = rng.uniform(0.0, TWO_PI, r)
    return W, c


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract", "nsz"})
def _csr_project(indptr, indices, values, start, stop, W, c, out):
    """out[i - start] = c + X[i] @ W for CSR rows start <= i < stop: a gather-add of W's rows
    (a CSR x dense product; fastmath only reorders the sums)."""
    r = W.shape[1]
    for i in range(start, stop):
        o = out[i - start]
        for k in range(r):
            o[k] = c[k]
        for p in range(indptr[i], indptr[i + 1]):
            v = values[p]
            w = W[indices[p]]
            for k in range(r):
                o[k] += v * w[k]


def project(X, W: np.ndarray, c: np.ndarray, start: int = 0) -> np.ndarray:
    """X[start:] @ W + c in X's dtype, for a dense array or a CSR matrix."""
    if sp.issparse(X):
        n = X.shape[0]
        out = np.empty((n - start, W.shape[1]), dtype=X.dtype)
        _csr_project(X.indptr, X.indices, X.data, start, n, W, c, out)
        return out
    P = X[start:] @ W
    P += c
    return P


def block_features(X, W: np.ndarray, c: np.ndarray, form: str, start: int = 0) -> np.ndarray:
    """Phi(X[start:]) of one block in X's dtype: (n, r) for forms paper/gpu, (n, 2r) for matlab.
    W and c must have X's dtype (and, for an Array API X, its namespace and device)."""
    r = W.shape[1]
    if not is_numpy(X):
        return _block_features_xp(X, W, c, form, start)
    if form == "matlab":
        P = project(X, W, np.zeros(r, X.dtype), start)
        out = np.empty((P.shape[0], 2 * r), dtype=X.dtype)
        np.cos(P, out=out[:, :r])
        np.sin(P, out=out[:, r:])
        out *= X.dtype.type(1.0 / math.sqrt(r))
        return out
    P = project(X, W, c, start)
    np.cos(P, out=P)
    if form == "paper":
        P *= X.dtype.type(math.sqrt(2.0 / r))
    return P


def _block_features_xp(X, W, c, form: str, start: int = 0):
    """:func:`block_features` in X's namespace (torch, CuPy, ...): the same operations, one GEMM
    and one cosine call, on X's device."""
    xp = namespace(X)
    r = W.shape[1]
    Xs = X[start:, ...] if start else X
    if form == "matlab":
        P = Xs @ W
        return xp.concat([xp.cos(P), xp.sin(P)], axis=1) * (1.0 / math.sqrt(r))
    P = xp.cos(Xs @ W + c)
    return P * math.sqrt(2.0 / r) if form == "paper" else P


class DSG(BlockModel):
    """Doubly stochastic gradient kernel machine, binary task (K-SVM or K-logistic).

    Parameters
    ----------
    loss : ``"hinge"`` (K-SVM, default) or ``"logistic"``.
    sigma : Gaussian width, k = exp(-||x - x'||^2 / (2 sigma^2)) (the code's s = 1/(2 sigma^2)).
    nu : regularisation nu of (nu/2)||f||^2; old blocks decay by (1 - gamma_t nu) each step.
    batch_size : b, data points per step.
    block_features : r, random frequencies per step (form ``matlab``: 2r features).
    schedule, theta, t0, eta1 : the step size gamma_t (see the module docstring).
    form : ``"paper"`` (default), ``"matlab"`` or ``"gpu"``.
    precond : the preconditioned block step both reference codes run; needs b >= 2 x block width.
    precond_eps : ridge eps of (C + eps I); None = nu + 1e-7 (MATLAB).
    cache_features : keep each block's W and c instead of regenerating them (same predictions).
    dtype : ``"float32"`` (default; see the module docstring for what is float32) or ``"float64"``.
    random_state : base seed of the blocks (None: drawn once at fit time and kept in ``seed_``).
    max_blocks : ``"auto"`` (default: the growing form up to ``AUTO_ROWS`` = 100,000 training
        rows, the bounded form with 16,384 features above), None (one new block per step, the
        paper's growing model, at any size) or the most blocks kept; after that each step refines
        a uniformly random existing block (the GPU code, spec section 4; a pass is then linear in n).
    max_iter, tol, n_iter_no_change, shuffle : ``fit``'s epochs (scikit-learn's SGD convention, see
        :meth:`fit`); ``max_iter=1, shuffle=False`` is the paper's single pass. ``partial_fit`` and
        ``fit_curve`` (the reproductions) always play one pass.

    Defaults (binary: nu = 1e-3, b = r = 64, theta / sqrt(t) with theta = 30; multi-class: nu = 0,
    b = r = 64, constant step 20) are chosen for ``fit`` on standardised data (benchmarks/defaults.py:
    within 2 points of ``SVC()`` on german, breast_cancer, digits and make_moons; log-loss 0.10 on
    digits); every paper config sets its own values.
    """

    name = "dsg"
    task = "binary"
    #: only ``fit``'s epochs read these; ``fit_curve`` / ``partial_fit`` (the runner's cells) do not, so a
    #: config cell's parameters and record key leave them out unless the config sets them
    fit_only_params = ("max_iter", "tol", "n_iter_no_change", "shuffle")
    randomized = True
    array_api_support = True
    _losses = ("hinge", "logistic")
    _params = {"sigma": SIGMA, "nu": NON_NEGATIVE, "batch_size": BATCH, "block_features": BATCH,
               "schedule": Schedule(), "theta": POSITIVE, "t0": NON_NEGATIVE, "eta1": NON_NEGATIVE,
               "form": OneOf(FORMS), "precond": OneOf((False, True)),
               "precond_eps": Num(0, math.inf, "left", allow_none=True),
               "cache_features": OneOf((False, True)), "dtype": OneOf(("float32", "float64")),
               "random_state": Seed(), "max_blocks": MaxBlocks(), **EPOCH_PARAMS,
               "shuffle": OneOf((False, True))}

    def __init__(self, *, loss: str = "hinge", sigma: float | str = "scale", nu: float = 1e-3,
                 batch_size: int = 64, block_features: int = 64, schedule: str = "inv_sqrt",
                 theta: float = 30.0, t0: float = 0.0, eta1: float = 1e-4, form: str = "paper",
                 precond: bool = False, precond_eps: float | None = None,
                 cache_features: bool = False, dtype: str = "float32", random_state=None,
                 max_blocks: int | str | None = "auto", max_iter: int = MAX_ITER,
                 tol: float | None = TOL, n_iter_no_change: int = N_ITER_NO_CHANGE, shuffle: bool = True):
        self.loss = loss
        self.sigma = sigma
        self.nu = nu
        self.batch_size = batch_size
        self.block_features = block_features
        self.schedule = schedule
        self.theta = theta
        self.t0 = t0
        self.eta1 = eta1
        self.form = form
        self.precond = precond
        self.precond_eps = precond_eps
        self.cache_features = cache_features
        self.dtype = dtype
        self.random_state = random_state
        self.max_blocks = max_blocks
        self.max_iter = max_iter
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.shuffle = shuffle

    # ------------------------------------------------------------------ checks
    @property
    def block_width(self) -> int:
        """Features per block: r, or 2r for the MATLAB form."""
        return 2 * int(self.block_features) if self.form == "matlab" else int(self.block_features)

    def _validate_params(self) -> None:
        super()._validate_params()
        if self.precond and int(self.batch_size) < 2 * self.block_width:
            raise ValueError(f"precond: true needs batch_size >= 2 x the block width "
                             f"({2 * self.block_width} for block_features={self.block_features}, "
                             f"form={self.form!r}) so the block covariance is well estimated; got "
                             f"batch_size={self.batch_size}")

    # ------------------------------------------------------------------ fit: epochs
    def fit(self, X, y):
        """scikit-learn's SGD convention, as the online learners' ``fit``: up to ``max_iter`` epochs,
        each over the rows in an order shuffled by a generator of the model's seed (``shuffle``),
        continuing the same model (the step counter keeps counting); with ``tol`` not None, training
        stops once ``n_iter_no_change`` epochs in a row have not lowered the best epoch loss by
        ``tol``. An epoch's loss is the mean training loss (hinge, logistic, softmax or squared, as
        ``loss``) of its batches at the scores they had before their step. ``n_iter_`` is the
        number of epochs played. The model form follows ``max_blocks`` for the whole stream
        (``"auto"``: growing up to :data:`AUTO_ROWS` rows x epochs, bounded above).

        ``max_iter=1, shuffle=False`` is the paper's single pass over X in the given order (what
        ``fit_curve`` and ``partial_fit`` play; the reproductions use those)."""
        self._validate_params()
        if int(self.max_iter) == 1 and not self.shuffle:
            out = super().fit(X, y)
            self.n_iter_ = 1
            return out
        X, y = self._validate_X(X, y, reset=True)
        self._check_scale(X)
        Y = self._encode(y, first=True)
        n, epochs = X.shape[0], int(self.max_iter)
        outputs = len(self.classes_) if self.task == "multiclass" else 1
        refuse_if_too_big(self, self.memory_estimate(n, X.shape[1], outputs, stream_rows=n * epochs))
        self._fit_epochs = epochs
        try:
            self._begin(X.shape[1], n * epochs, X)
        finally:
            del self._fit_epochs
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(
            entropy=self.seed_.entropy, spawn_key=tuple(self.seed_.spawn_key) + (0, 1))))
        S = self._play_epochs(X, Y, epochs, rng)
        from ..base import constant_check_rows, warn_if_constant_model

        # the growing form's running scores are the model's scores of every training row: the
        # constant-model check reads them instead of predicting its rows again
        rows = constant_check_rows(n)
        warn_if_constant_model(self, X, y, None if S is None or not rows.size else
                               self._predicted_from_scores(to_numpy(take_rows(S, rows))))
        return self

    def _predicted_from_scores(self, S) -> np.ndarray:
        """What :meth:`predict` returns for rows whose raw (n, K) scores are S (host numpy)."""
        if self.task == "regression":
            return S[:, 0] + getattr(self, "offset_", 0.0)
        return self._labels(S[:, 0] if S.shape[1] == 1 else S)  # _decision's shape

    def _play_epochs(self, X, Y, epochs: int, rng):
        """The epochs of :meth:`fit`. The growing form keeps every training row's running score
        (each step adds its new block's contribution to all n rows in one GEMM, decayed like the
        model), so a batch's scores are read, not recomputed; the bounded form scores each batch
        with its (at most ``max_blocks``) blocks, as :meth:`_train`. Returns the running scores (None
        for the bounded form)."""
        import time

        n, b = X.shape[0], int(self.batch_size)
        running = self.max_blocks_ is None
        on_host = is_numpy(X)
        S = zeros_like_rows(X, n, self._n_outputs) if running else None
        tol, patience = self.tol, int(self.n_iter_no_change)
        best, stale, elapsed = math.inf, 0, 0.0
        self.epoch_loss_ = []
        for epoch in range(epochs):
            t0 = time.perf_counter()
            order = rng.permutation(n) if self.shuffle else np.arange(n)
            total = 0.0
            for a in range(0, n, b):
                idx = order[a:a + b]
                Xb = take_rows(X, idx)
                if running:
                    Fb = take_rows(S, idx)
                else:
                    self.feature_rows_ += Xb.shape[0] * self.n_blocks_
                    Fb = self._scores(Xb)
                total += self._loss_sum(Fb, Y[idx])
                self.t_ += 1
                decay = self._step(self.t_, Xb, Y[idx], Fb)
                if running:
                    self.feature_rows_ += n
                    if on_host:
                        if decay != 1.0:
                            S *= decay
                        S += self._last_block_scores(X)
                    else:
                        S = S * decay + self._last_block_scores(X)
            self.samples_seen_ += n
            elapsed += time.perf_counter() - t0
            loss = total / n
            self.epoch_loss_.append(loss)
            self.n_iter_ = epoch + 1
            if not math.isfinite(loss):
                break  # diverged: the non-finite check of the scores says so
            if tol is None:
                continue
            stale = stale + 1 if loss > best - float(tol) else 0
            best = min(best, loss)
            if stale >= patience:
                break
        self.train_time_ = elapsed
        self._last = None
        return S

    def _loss_sum(self, F, Y) -> float:
        """The summed training loss of a batch at scores F (its rows' contribution to the epoch loss)."""
        F = np.asarray(to_numpy(F), dtype=np.float64)
        if self.task == "regression":
            r = F[:, 0] - Y
            return float(0.5 * np.dot(r, r))
        if self.task == "multiclass":
            return float(np.sum(logsumexp(F, axis=1) - np.sum(F * Y, axis=1)))
        m = Y * F[:, 0]
        if self.loss == "hinge":
            return float(np.sum(np.maximum(0.0, 1.0 - m)))
        return float(-np.sum(log_expit(m)))

    # ------------------------------------------------------------------ state
    def _start(self, n_features, n_outputs, n_total):
        rs = self.random_state
        if isinstance(rs, np.random.SeedSequence):
            self.seed_ = rs
        else:
            self.seed_ = np.random.SeedSequence(rs)
        self.max_blocks_, self.model_form_ = self._resolve_max_blocks(n_total)
        capacity = 16 if n_total is None else -(-int(n_total) // int(self.batch_size))
        if self.max_blocks_ is not None:
            capacity = min(capacity, int(self.max_blocks_))
        like = getattr(self, "_like", None)
        shape = (max(capacity, 1), self.block_width, n_outputs)
        self.coef_ = np.zeros(shape) if like is None else \
            namespace(like).zeros(shape, dtype=namespace(like).float64, device=device(like))
        self.n_blocks_ = 0
        # the bounded form keeps its (at most max_blocks) blocks' W and c: it scores every batch
        self.cache_ = {} if self.cache_features or self.max_blocks_ is not None else None
        # which block a refining step picks: its own stream, spawn key (..., 0) (blocks are 1-based)
        self.refine_rng_ = np.random.Generator(np.random.PCG64(block_seed_sequence(self.seed_, 0)))
        self.feature_rows_ = 0
        self._last = None

    def _resolve_max_blocks(self, n_total):
        """(max_blocks_, model_form_): the blocks kept (None: the growing form) and a sentence
        saying which form this fit runs and why."""
        mb = self.max_blocks
        if mb is None:
            return None, "growing (max_blocks: null, quadratic in n)"
        if not isinstance(mb, str):
            return int(mb), f"bounded (max_blocks: {int(mb)}, linear in n)"
        epochs = getattr(self, "_fit_epochs", None)  # fit's epochs: the stream is rows x max_iter
        rows = "unknown training rows" if n_total is None else (
            f"{int(n_total) // epochs} training rows x {epochs} epochs = {int(n_total)} rows streamed"
            if epochs and epochs > 1 else f"{int(n_total)} training rows")
        if n_total is None or int(n_total) <= AUTO_ROWS:
            return None, f"growing (max_blocks: auto, {rows} <= {AUTO_ROWS})"
        blocks = max(1, -(-AUTO_FEATURES // self.block_width))
        return blocks, (f"bounded (max_blocks: auto, {rows} > {AUTO_ROWS}: "
                        f"{blocks} blocks = {blocks * self.block_width} features, linear in n)")

    def memory_estimate(self, n_samples: int, n_features: int, n_outputs: int = 1, *,
                        stream_rows: int | None = None) -> dict:
        """The mini-batch parts (lsokl.learners.stochastic.minibatch) plus the frequencies the bounded form
        (``max_blocks``, or "auto" above AUTO_ROWS) or ``cache_features`` keeps: blocks x r x (d + 1) numbers.
        ``stream_rows``: the rows the training stream plays, which choose the form and count the coefficient
        blocks: n_samples (default) for one pass (``fit_curve``, the runner's cells), n x ``max_iter`` for
        ``fit``'s epochs (which refuses a fit above the memory available on this estimate)."""
        parts = super().memory_estimate(n_samples, n_features, n_outputs)
        stream = int(n_samples) if stream_rows is None else int(stream_rows)
        kept, _ = self._resolve_max_blocks(stream)
        steps = -(-stream // int(self.batch_size))
        parts["coefficient blocks (n / b x width x outputs)"] = \
            8.0 * (steps if kept is None else kept) * float(self._step_width()) * float(max(n_outputs, 1))
        if self.cache_features:
            kept = steps if kept is None else kept
        if kept is not None:
            size = 4.0 if self.dtype == "float32" else 8.0
            parts[f"kept frequencies W, c ({kept:,} blocks x {int(self.block_features):,} x (d + 1))"] = \
                size * kept * float(self.block_features) * (float(n_features) + 1)
        return parts

    def _block(self, j: int):
        """(W, c) of block j (1-based), from the cache or regenerated."""
        if self.cache_ is not None and j in self.cache_:
            return self.cache_[j]
        W, c = draw_block(self.seed_, j, self.n_features_in_, int(self.block_features),
                          float(self.sigma_))
        dt = self._dtype()
        W, c = np.ascontiguousarray(W, dtype=dt), c.astype(dt)
        like = getattr(self, "_like", None)
        if like is not None:  # drawn by numpy from the same seed, then moved to the device
            xdt = float_dtype(namespace(like), np.dtype(dt).name)
            W, c = asarray(W, like, xdt), asarray(c, like, xdt)
        if self.cache_ is not None:
            self.cache_[j] = (W, c)
        return W, c

    def features(self, X, j: int) -> np.ndarray:
        """Phi_j(X), block j's features of the rows of X (1-based j, any j >= 1)."""
        from .minibatch import dense_rows

        X = dense_rows(X, self._dtype()) if is_numpy(X) else X
        W, c = self._block(j)
        return block_features(X, W, c, self.form)

    # ------------------------------------------------------------------ one step
    def _gradient(self, F: np.ndarray, Y: np.ndarray) -> np.ndarray:
        """dl/df at the batch's scores, (b, K)."""
        if not is_numpy(F):
            return self._gradient_xp(F, Y)
        if self.task == "regression":
            return F - Y[:, None]
        if self.task == "multiclass":
            Z = F - F.max(axis=1, keepdims=True)  # stable softmax
            np.exp(Z, out=Z)
            Z /= Z.sum(axis=1, keepdims=True)
            return Z - Y
        y, f = Y, F[:, 0]
        if self.loss == "hinge":
            return (np.where(y * f < 1.0, -y, 0.0))[:, None]
        return (-y * expit(-y * f))[:, None]

    def _gradient_xp(self, F, Y):
        """:meth:`_gradient` in F's namespace (Y, host numpy, is moved to F's device)."""
        xp = namespace(F)
        Y = asarray(Y, F, xp.float64)
        if self.task == "regression":
            return F - Y[:, None]
        if self.task == "multiclass":
            Z = xp.exp(F - xp.max(F, axis=1, keepdims=True))
            return Z / xp.sum(Z, axis=1, keepdims=True) - Y
        f = F[:, 0]
        if self.loss == "hinge":
            return xp.where(Y * f < 1.0, -Y, xp.zeros_like(Y))[:, None]
        return (-Y / (1.0 + xp.exp(Y * f)))[:, None]  # -y expit(-y f)

    def step_size(self, t: int) -> float:
        from .minibatch import step_size

        return step_size(self.schedule, t, float(self.theta), float(self.t0), float(self.eta1))

    def _target_block(self, t: int) -> int:
        """The block step t writes (1-based): a new block t while the model grows, else a uniformly
        random existing one (bounded form, after ``max_blocks`` blocks)."""
        if self.max_blocks_ is None or self.n_blocks_ < int(self.max_blocks_):
            return self.n_blocks_ + 1
        return int(self.refine_rng_.integers(1, self.n_blocks_ + 1))

    def _step(self, t, Xb, Yb, Fb):
        if not is_numpy(Xb):
            return self._step_xp(t, Xb, Yb, Fb)
        G = self._gradient(np.asarray(Fb, dtype=np.float64), Yb)
        gamma = self.step_size(t)
        j = self._target_block(t)
        W, c = self._block(j)
        Phi = block_features(Xb, W, c, self.form).astype(np.float64)
        self.feature_rows_ += Xb.shape[0]
        b = Xb.shape[0]
        grad = Phi.T @ G / b  # (width, K)
        if self.precond:
            eps = float(self.nu) + 1e-7 if self.precond_eps is None else float(self.precond_eps)
            C = Phi.T @ Phi / b
            C[np.diag_indices_from(C)] += eps
            alpha = -gamma * np.linalg.solve(C, grad)
        else:
            alpha = -gamma * grad
        decay = 1.0 - gamma * float(self.nu)
        m = self.n_blocks_
        if decay != 1.0:
            self.coef_[:m] *= decay
        if j <= m:  # bounded form: refine block j (already decayed with the others)
            self.coef_[j - 1] += alpha
        else:
            if m == self.coef_.shape[0]:
                self.coef_ = np.concatenate([self.coef_, np.zeros_like(self.coef_)])
            self.coef_[m] = alpha
            self.n_blocks_ = m + 1
        self._last = (W, c, alpha)
        return decay

    # ------------------------------------------------------------------ probabilities
    def _probabilistic(self) -> bool:
        return self.task != "regression" and self.loss in ("logistic", "softmax")

    @available_if(_probabilistic)
    def predict_proba(self, X) -> np.ndarray:
        """P(class | x), columns in ``classes_`` order: the model the logistic loss fits,
        sigmoid(f) for binary (f > 0 favours ``classes_[1]``) and softmax(f) for multi-class, so
        the argmax is ``predict``'s class. Only with ``loss="logistic"`` (``"softmax"``, its
        multi-class name, too): a hinge-loss (K-SVM)
        model has no probabilities (no attribute, as scikit-learn's SVC without probability=True)."""
        S = np.asarray(to_numpy(self._decision(X)), dtype=np.float64)
        if S.ndim == 1 and len(self.classes_) == 1:  # one class seen: it has probability 1
            return np.ones((len(S), 1))
        if self.task == "binary":
            p = expit(S)
            return np.column_stack([1.0 - p, p])
        Z = S - S.max(axis=1, keepdims=True)  # stable softmax
        np.exp(Z, out=Z)
        Z /= Z.sum(axis=1, keepdims=True)
        return Z

    @available_if(_probabilistic)
    def predict_log_proba(self, X) -> np.ndarray:
        """log P(class | x), columns in ``classes_`` order (see :meth:`predict_proba`)."""
        S = np.asarray(to_numpy(self._decision(X)), dtype=np.float64)
        if S.ndim == 1 and len(self.classes_) == 1:
            return np.zeros((len(S), 1))
        if self.task == "binary":
            return np.column_stack([log_expit(-S), log_expit(S)])
        return S - logsumexp(S, axis=1, keepdims=True)

    def _step_xp(self, t, Xb, Yb, Fb):
        """:meth:`_step` in Xb's namespace, on its device (the same arithmetic; the block's
        features in the learner's dtype, the gradient step and the coefficients in float64)."""
        xp = namespace(Xb)
        G = self._gradient(xp.astype(Fb, xp.float64), Yb)
        gamma = self.step_size(t)
        j = self._target_block(t)
        W, c = self._block(j)
        Phi = xp.astype(block_features(Xb, W, c, self.form), xp.float64)
        self.feature_rows_ += Xb.shape[0]
        b = Xb.shape[0]
        grad = Phi.T @ G / b
        if self.precond:
            eps = float(self.nu) + 1e-7 if self.precond_eps is None else float(self.precond_eps)
            C = Phi.T @ Phi / b + eps * xp.eye(Phi.shape[1], dtype=xp.float64, device=device(Xb))
            alpha = -gamma * xp.linalg.solve(C, grad)
        else:
            alpha = -gamma * grad
        decay = 1.0 - gamma * float(self.nu)
        m = self.n_blocks_
        if decay != 1.0:
            self.coef_ = self.coef_ * decay  # the zero blocks beyond m stay zero
        if j <= m:
            self.coef_[j - 1, ...] = self.coef_[j - 1, ...] + alpha
        else:
            if m == self.coef_.shape[0]:
                self.coef_ = xp.concat([self.coef_, xp.zeros_like(self.coef_)], axis=0)
            self.coef_[m, ...] = alpha
            self.n_blocks_ = m + 1
        self._last = (W, c, alpha)
        return decay

    def _train(self, X, order, Y, X_test, y_test, ckpts):
        """The growing form: the running-score driver of :class:`BlockModel` (quadratic in n, in
        large GEMMs). The bounded form: every batch is scored by the model (at most
        ``max_blocks`` blocks), the test rows by running scores; linear in n."""
        if self.max_blocks_ is None:
            n_stream = len(order)
            out = super()._train(X, order, Y, X_test, y_test, ckpts)
            # (row, block) evaluations of the running-score driver: each step's block on its
            # batch and on every row still to come
            b = int(self.batch_size)
            self.feature_rows_ = sum(n_stream - a for a in range(0, n_stream, b))
            return out
        import time

        n_stream, b = len(order), int(self.batch_size)
        tests = HeldOutCurve(self, X, X_test, y_test, ckpts)
        elapsed = 0.0
        for a in range(0, n_stream, b):
            t0 = time.perf_counter()
            stop = min(a + b, n_stream)
            Xb = take_rows(X, order[a:stop])
            self.t_ += 1
            self.feature_rows_ += Xb.shape[0] * self.n_blocks_
            decay = self._step(self.t_, Xb, Y[a:stop], self._scores(Xb))
            self.samples_seen_ = stop
            elapsed += time.perf_counter() - t0
            tests.after_step(stop, decay, elapsed)
        self.train_time_ = elapsed
        self._last = None
        return tests.curve(elapsed)

    def _last_block_scores(self, X, start=0) -> np.ndarray:
        W, c, alpha = self._last
        Phi = block_features(X, W, c, self.form, start)
        if not is_numpy(X):
            xp = namespace(X)
            return xp.astype(Phi @ xp.astype(alpha, Phi.dtype), xp.float64)
        return Phi @ alpha.astype(Phi.dtype) if Phi.dtype == np.float64 else \
            (Phi @ alpha.astype(np.float32)).astype(np.float64)

    # ------------------------------------------------------------------ prediction
    def _scores(self, X) -> np.ndarray:
        """f(X) = sum_j Phi_j(X) alpha_j, block by block (each regenerated or read from the cache)."""
        if not is_numpy(X):
            xp = namespace(X)
            S = zeros_like_rows(X, X.shape[0], self.coef_.shape[2])
            for j in range(1, self.n_blocks_ + 1):
                W, c = self._block(j)
                Phi = block_features(X, W, c, self.form)
                # float64 product, as the numpy path below (its comment says why)
                S = S + xp.astype(Phi, xp.float64) @ xp.astype(self.coef_[j - 1, ...], xp.float64)
            return S
        # The features are float32 (dtype="float32"), their product with the coefficients is
        # float64: a float32 GEMM sums a row's products in an order that depends on how many rows
        # BLAS gets, so a row's score would change with the other rows predicted with it
        # (scikit-learn's check_methods_subset_invariance); in float64 that round-off is ~1e-16.
        S = np.zeros((X.shape[0], self.coef_.shape[2]))
        for j in range(1, self.n_blocks_ + 1):
            W, c = self._block(j)
            Phi = block_features(X, W, c, self.form)
            S += Phi.astype(np.float64, copy=False) @ self.coef_[j - 1]
        return S

    @property
    def state_size_(self) -> int:
        """Numbers the model keeps besides the cache: the t blocks of coefficients."""
        return int(self.n_blocks_ * self.coef_.shape[1] * self.coef_.shape[2])


class MulticlassDSG(DSG):
    """DSG for K classes: softmax K-logistic (spec section 1), blocks of shape (width, K); one set
    of frequencies per block serves all K outputs."""

    task = "multiclass"
    _losses = ("logistic", "softmax")  # the same loss: "softmax" is its usual multi-class name

    def __init__(self, *, loss: str = "logistic", sigma: float | str = "scale", nu: float = 0.0,
                 batch_size: int = 64, block_features: int = 64, schedule: str = "const",
                 theta: float = 20.0, t0: float = 0.0, eta1: float = 1e-4, form: str = "paper",
                 precond: bool = False, precond_eps: float | None = None,
                 cache_features: bool = False, dtype: str = "float32", random_state=None,
                 max_blocks: int | str | None = "auto", max_iter: int = MAX_ITER,
                 tol: float | None = TOL, n_iter_no_change: int = N_ITER_NO_CHANGE, shuffle: bool = True):
        super().__init__(loss=loss, sigma=sigma, nu=nu, batch_size=batch_size,
                         block_features=block_features, schedule=schedule, theta=theta, t0=t0,
                         eta1=eta1, form=form, precond=precond, precond_eps=precond_eps,
                         cache_features=cache_features, dtype=dtype, random_state=random_state,
                         max_blocks=max_blocks, max_iter=max_iter, tol=tol,
                         n_iter_no_change=n_iter_no_change, shuffle=shuffle)


class RegressionDSG(DSG):
    """DSG K-ridge: squared loss l = (f - y)^2 / 2, l' = f - y (the paper reports MAE).

    ``target_offset="mean"`` subtracts the training targets' mean before training and adds it
    back to every prediction (a preprocessing step, as standardising the target; the model has no
    bias term). ``"none"`` (default) learns the raw targets."""

    task = "regression"
    _losses = ("squared",)
    # check_regressors_train passes at defaults (fit's epochs); one pass over its 200 rows, 4 steps
    # of b=64 at theta=1, gave R^2 0.02: DSG needs many steps (the paper's sets have >= 1e5 rows).
    poor_score = ""
    _params = {**DSG._params, "target_offset": OneOf(("none", "mean"))}

    def __init__(self, *, loss: str = "squared", sigma: float | str = "scale", nu: float = 1e-5,
                 batch_size: int = 64, block_features: int = 64, schedule: str = "inv_sqrt",
                 theta: float = 1.0, t0: float = 0.0, eta1: float = 1e-4, form: str = "paper",
                 precond: bool = False, precond_eps: float | None = None,
                 cache_features: bool = False, dtype: str = "float32", random_state=None,
                 target_offset: str = "none", max_blocks: int | str | None = "auto",
                 max_iter: int = MAX_ITER, tol: float | None = TOL,
                 n_iter_no_change: int = N_ITER_NO_CHANGE, shuffle: bool = True):
        super().__init__(loss=loss, sigma=sigma, nu=nu, batch_size=batch_size,
                         block_features=block_features, schedule=schedule, theta=theta, t0=t0,
                         eta1=eta1, form=form, precond=precond, precond_eps=precond_eps,
                         cache_features=cache_features, dtype=dtype, random_state=random_state,
                         max_blocks=max_blocks, max_iter=max_iter, tol=tol,
                         n_iter_no_change=n_iter_no_change, shuffle=shuffle)
        self.target_offset = target_offset
