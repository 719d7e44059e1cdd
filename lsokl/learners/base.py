"""The protocol every online learner follows.

A learner is a scikit-learn-style estimator: the keyword-only constructor only stores
parameters, learned state lives in attributes ending in ``_``. Its hot path is :meth:`run`, which
plays a whole permuted stream with the strict online protocol (predict, count, update) inside
compiled loops and returns a :class:`Trace`. ``partial_fit``/``predict``/``decision_function``
make the same learner usable in one's own code.

A subclass provides:

* ``name``, ``task`` and ``_params`` (the parameter checks);
* ``_allocate(n_features, capacity, source)``: create the state arrays for a fresh model;
* ``_play(stream, y, order, start, stop)``: play steps ``order[start:stop]`` and update the
  counters in ``self.counts_`` / ``self.sq_loss_``;
* ``_scores(stream)``: decision values for every row of ``stream`` (no update);
* ``support_size_``: the number of stored support vectors (FOGD: updates, as the authors count).

scikit-learn contract (issue 8). ``task`` is the one source of truth for what kind of estimator a
learner is: binary and multi-class learners are classifiers (``ClassifierMixin``, which every
learner inherits through :class:`OnlineLearner`), regression learners must put
``RegressorMixin`` before the binary class they reuse (``RegressionTask`` does, or list
``RegressorMixin`` first); a class that says ``task = "regression"`` without it is refused when it
is defined. Because the regression variants reuse the binary classes' code, they also inherit
``ClassifierMixin``: their tags (``is_regressor``), ``score`` (R^2) and every behaviour are a
regressor's; only ``isinstance(est, ClassifierMixin)`` is True, which scikit-learn never consults.

``fit``/``partial_fit``/``predict``/``decision_function`` validate with scikit-learn's own
``validate_data``/``check_is_fitted``/``check_classification_targets``, so messages and exception
types are scikit-learn's, and no array reaches compiled code unless its shapes agree (X 2-d with
at least one row and one feature, finite, real; len(y) == n_samples). :meth:`run`, the hot path
the runner uses, does the same shape checks without copying the (memory-mapped) data.

Kernel width (issue 25). Every kernel is exp(-||x - x'||^2 / (2 sigma^2)). ``sigma="scale"``, the
default of every learner, is scikit-learn's ``gamma='scale'``: sigma = sqrt(n_features * X.var() / 2)
from the data of the first ``fit`` / ``partial_fit`` / ``run`` (:func:`fit_width`, rule in
:mod:`lsokl.compute.params`), kept as ``sigma_``, which is what the compiled loops read; a number is
used as given (every paper config states its sigma). ``fit`` warns (:class:`ConstantPredictorWarning`)
when the model it leaves predicted one class, or one value, on its own training data, naming the
width and the step size as the likely causes.

Documented expected failures of scikit-learn's estimator checks are declared per class in
``expected_failed_checks`` ({check name: reason}), or per parameter setting by a method
``_expected_failed_checks_for_params``; they reach the checks through the estimator's tags
(:class:`LearnerTags`), see ``tests/learners/test_sklearn_contract.py``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils import ClassifierTags, RegressorTags, Tags
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from ..compute.epochs import EpochOrder
from ..compute.params import KernelWidth, OneOf, Seed, check_width_for_data, resolve_sigma
from ..compute.randomness import NumpySource, RandomSource
from ..compute.stream import Stream
from ..compute.validation import check_order, validate, warn_if_not_finite
from ..compute.xp import take_rows, to_numpy

TASKS = ("binary", "multiclass", "regression")
# The authors take a checkpoint every round(n / k) steps: k = 15, 10, 20 by task.
CHECKPOINTS_PER_PASS = {"binary": 15, "multiclass": 10, "regression": 20}

COUNT_SEEN, COUNT_MISTAKES, COUNT_UPDATES = 0, 1, 2


@dataclass
class Trace:
    """What one online pass produced. Checkpoint arrays are aligned with ``checkpoints``."""

    algorithm: str
    task: str
    n_samples: int
    mistakes: int  # sign mistakes (binary), argmax mistakes (multiclass), |y-f| > eps events (regression)
    support_size: int
    elapsed: float  # seconds spent in the online pass, excluding data loading and random draws
    squared_loss: float = float("nan")  # regression: mean over the pass of (y_t - f_t)^2
    checkpoints: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))  # t (1-based)
    ckpt_mistakes: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    ckpt_support: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    ckpt_time: np.ndarray = field(default_factory=lambda: np.empty(0))
    ckpt_squared_loss: np.ndarray = field(default_factory=lambda: np.empty(0))  # mean loss so far

    @property
    def mistake_rate(self) -> float:
        return self.mistakes / self.n_samples if self.n_samples else float("nan")

    @property
    def ckpt_mistake_rate(self) -> np.ndarray:
        return self.ckpt_mistakes / np.maximum(self.checkpoints, 1)


def round_half_up(x: float) -> int:
    """MATLAB's round (half away from zero) for non-negative x."""
    return int(np.floor(x + 0.5))


def checkpoint_steps(n: int, per_pass: int) -> np.ndarray:
    """The t at which the authors record progress: every t with mod(t, round(n/per_pass)) == 0."""
    tick = max(round_half_up(n / per_pass), 1)
    return np.arange(tick, n + 1, tick, dtype=np.int64)


@dataclass(slots=True)
class LearnerTags(Tags):
    """scikit-learn's tags plus the checks a learner is documented to fail, {check: reason}."""

    expected_failed_checks: dict = field(default_factory=dict)


def expected_failed_checks(estimator) -> dict:
    """The documented expected failures of any estimator (empty if its tags declare none)."""
    from sklearn.utils import get_tags

    return dict(getattr(get_tags(estimator), "expected_failed_checks", None) or {})


class OnlineLearner(ClassifierMixin, BaseEstimator):
    name: ClassVar[str] = ""
    task: ClassVar[str] = "binary"
    budgeted: ClassVar[bool] = True
    randomized: ClassVar[bool] = False
    # False for learners whose ``support_size_`` counts updates rather than stored vectors (FOGD).
    stores_support_vectors: ClassVar[bool] = True
    # True: ``run`` hands the compiled loops float32 values as they are (a float32 memory map is
    # read without a float64 copy); the loops convert each value to float64 before using it, so
    # a run on float32 X equals the run on X.astype(float64) (tests/learners/test_float32_stream.py,
    # test_contract). False (the blocked Perceptron/OGD/NORMA, whose block sums and window keys
    # read the rows' float64 bits, and PRJTRN): the learner gets ``Stream.as_float64()``.
    reads_float32: ClassVar[bool] = False
    _params: ClassVar[dict] = {}
    # scikit-learn estimator checks this learner is documented to fail: {check name: reason}.
    expected_failed_checks: ClassVar[dict] = {}
    # Non-empty = why the learner, at its default (paper) settings, scores below scikit-learn's
    # "reasonable" bar in check_classifiers_train / check_regressors_train (the poor_score tag).
    poor_score: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.task not in TASKS:
            raise TypeError(f"{cls.__name__}.task must be one of {TASKS}, got {cls.task!r}")
        mro = cls.__mro__
        if cls.task == "regression" and (RegressorMixin not in mro
                                         or mro.index(RegressorMixin) > mro.index(ClassifierMixin)):
            raise TypeError(f"{cls.__name__} is a regression learner: list RegressorMixin (or "
                            "lsokl.compute.tasks.RegressionTask) before its other bases")
        # The mixins sit before this class in the MRO, so their __sklearn_tags__ would run last
        # and overwrite ours (RegressorMixin resets regressor_tags); ours already sets what they
        # set, from ``task``. A subclass that needs more tags defines __sklearn_tags__ itself.
        if "__sklearn_tags__" not in vars(cls):
            cls.__sklearn_tags__ = OnlineLearner.__sklearn_tags__

    def __sklearn_tags__(self):
        return task_tags(self)

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "counts_")

    # ----------------------------------------------------------------- validation
    def _validate_params(self) -> None:
        owner = type(self).__name__
        for pname, rule in self._params.items():
            rule.check(owner, pname, getattr(self, pname))

    def _set_classes(self, classes) -> None:
        """Fix ``classes_`` (sorted, unique) before the first update; a binary learner refuses
        more than two, with scikit-learn's wording for binary-only classifiers."""
        classes = np.unique(np.asarray(classes))
        if self.task == "binary" and len(classes) > 2:
            raise ValueError(f"Only binary classification is supported. The type of the target "
                             f"is multiclass ({len(classes)} classes); {type(self).__name__} is "
                             "a binary learner, use its multiclass variant.")
        self.classes_ = classes
        if self.task == "multiclass":
            self.n_classes_ = len(classes)

    def _encode_labels(self, y: np.ndarray) -> np.ndarray:
        """Map validated labels to the compiled loops' convention: +-1 (binary), 0..m-1, float."""
        if self.task == "regression":
            return np.ascontiguousarray(y, dtype=np.float64)
        unknown = np.setdiff1d(np.unique(y), self.classes_)
        if unknown.size:
            raise ValueError(f"y has labels {unknown.tolist()} not among classes "
                             f"{self.classes_.tolist()} (fixed by the first partial_fit)")
        codes = np.searchsorted(self.classes_, y)
        if self.task == "binary":
            # With a single class every label is that class: +1 to the loop, decoded back below.
            return np.where(codes == len(self.classes_) - 1, 1.0, -1.0)
        return codes.astype(np.int64)

    def _decode_labels(self, codes: np.ndarray) -> np.ndarray:
        if self.task == "binary":
            if len(self.classes_) == 1:  # never predict a label the learner has not seen
                return np.full(len(codes), self.classes_[0])
            return self.classes_[(codes > 0).astype(int)]
        return self.classes_[codes]

    # ----------------------------------------------------------------- lifecycle
    def _source(self, source: RandomSource | None) -> RandomSource:
        if source is not None:
            return source
        return NumpySource(getattr(self, "random_state", None))

    def _reset(self, n_features: int, capacity: int, source: RandomSource | None) -> None:
        self._validate_params()
        if self.task == "multiclass" and not hasattr(self, "n_classes_"):
            self.n_classes_ = len(self.classes_)
        self.n_features_in_ = n_features
        self.counts_ = np.zeros(3, dtype=np.int64)
        self.sq_loss_ = np.zeros(1, dtype=np.float64)
        self._allocate(n_features, capacity, self._source(source))

    def run(self, X, y, order=None, *, n_checkpoints: int | None = None,
            random_source: RandomSource | None = None) -> Trace:
        """Play one online pass over ``X[order]`` from a fresh model; return its trace.

        ``y`` must already follow the task's convention (+-1, 0..m-1 or float), as
        :func:`lsokl.data.load` returns it. Drawing random features is not timed; every per-step
        operation is. ``order`` may be an :class:`~lsokl.compute.epochs.EpochOrder` (several passes,
        ``t`` counting on across them): each epoch's order is made when it is reached, so memory does
        not grow with the number of epochs. The pass is played in pieces, cut at the checkpoints (and
        then at each epoch's end too); a learner that renormalises or draws its random positions per
        piece (BPegasos, BOGD) can differ in rounding or draws from the same pass cut elsewhere.
        """
        epochs = order if isinstance(order, EpochOrder) else None
        stream, y, order = self._run_inputs(X, y, epochs.epoch(0) if epochs is not None else order)
        if epochs is not None:
            if epochs.n != stream.n_samples:
                raise ValueError(f"the epochs' order has {epochs.n} rows per epoch; X has {stream.n_samples}")
            first, given = order, epochs.order_of
            epochs = EpochOrder(lambda e: first if e == 0 else check_order(given(e), stream.n_samples),
                                epochs.n, epochs.epochs)
        self._prepare_run(X, y, order)
        if self.task == "multiclass":
            self.n_classes_ = int(y.max()) + 1 if y.size else 1
            self.classes_ = np.arange(self.n_classes_)
        elif self.task == "binary":
            self.classes_ = np.array([-1, 1])
        y = y.astype(np.int64 if self.task == "multiclass" else np.float64)
        # the steps the run will take (every epoch): a default that depends on the stream's length
        # (BOGD's lambda = 1/n^2) sees it, while the buffers are sized for one epoch and grow as needed
        self._planned_steps = len(order) if epochs is None else len(epochs)
        try:
            self._reset(stream.n_features, len(order), random_source)
        finally:
            self.__dict__.pop("_planned_steps", None)

        return self._pass(stream, y, order if epochs is None else epochs,
                          n_checkpoints or CHECKPOINTS_PER_PASS[self.task])

    def _pass(self, stream: Stream, y: np.ndarray, order, per_pass: int) -> Trace:
        """Play ``order`` (from the current state) with the authors' checkpoints; the trace. ``order``:
        an array of row indices, or an :class:`EpochOrder` played epoch by epoch."""
        total = len(order)
        ckpts = checkpoint_steps(total, per_pass)
        if isinstance(order, EpochOrder):
            pieces = order.segments(ckpts)
        else:
            bounds = np.unique(np.concatenate([[0], ckpts, [total]]))
            pieces = ((int(a), int(b), None) for a, b in zip(bounds[:-1], bounds[1:]))
        rec = {k: [] for k in ("mistakes", "support", "time", "loss")}
        start = time.perf_counter()
        for a, b, rows in pieces:
            if rows is None:
                self._play(stream, y, order, a, b)
            elif b > a:  # a piece of one epoch: its rows, from the state the earlier pieces left
                self._ensure_capacity(b - a)
                self._play(stream, y, np.ascontiguousarray(rows, dtype=np.int64), 0, b - a)
            if b in ckpts:
                rec["time"].append(time.perf_counter() - start)
                rec["mistakes"].append(int(self.counts_[COUNT_MISTAKES]))
                rec["support"].append(int(self.support_size_))
                rec["loss"].append(float(self.sq_loss_[0]) / b)
        elapsed = time.perf_counter() - start
        if self.task == "regression":
            warn_if_not_finite(self.sq_loss_, type(self).__name__, "squared losses of the pass")
        return Trace(
            algorithm=self.name, task=self.task, n_samples=total,
            mistakes=int(self.counts_[COUNT_MISTAKES]), support_size=int(self.support_size_),
            elapsed=elapsed,
            squared_loss=float(self.sq_loss_[0]) / max(total, 1) if self.task == "regression" else float("nan"),
            checkpoints=ckpts, ckpt_mistakes=np.array(rec["mistakes"], np.int64),
            ckpt_support=np.array(rec["support"], np.int64), ckpt_time=np.array(rec["time"]),
            ckpt_squared_loss=np.array(rec["loss"]) if self.task == "regression" else np.empty(0),
        )

    def _fit_width(self, X, stream: Stream | None = None) -> None:
        """Set ``sigma_``, the kernel width the compiled loops use: ``sigma`` itself, or for
        ``sigma="scale"`` sqrt(n_features * X.var() / 2) of the data of the first fit / run /
        partial_fit (scikit-learn's ``gamma='scale'``), read from the checked ``stream`` when
        given (a CSR matrix with duplicate entries counts them summed, as scipy does)."""
        if stream is not None:
            import scipy.sparse as sp

            # float32 values as they are: data_variance converts them by blocks (dense) or
            # whole (CSR values, a transient copy), the float64 copy's variance bit for bit
            X = sp.csr_matrix((stream.values, stream.indices, stream.indptr),
                              shape=(stream.n_samples, stream.n_features)) if stream.is_sparse else stream.dense
        fit_width(self, X)

    def _run_inputs(self, X, y, order):
        """:meth:`run`'s checks, all before any compiled code: X (its sparse structure, through
        Stream), y (1-d, one label per row, the task's convention, finite) and ``order`` (1-d
        integer row indices of X). Returns (stream, y, order as a private int64 array)."""
        stream = Stream.reuse(X)  # the same memory-mapped data again: its Stream and row ids
        if not self.reads_float32:
            stream = stream.as_float64()  # float32 values: the float64 copy (Stream.as_float64)
        y = np.asarray(y)
        if y.ndim != 1:
            raise ValueError(f"y must be 1-dimensional, got shape {y.shape}")
        if stream.n_samples < 1 or stream.n_features < 1:
            raise ValueError(f"X has shape {(stream.n_samples, stream.n_features)}; a run needs at "
                             "least one sample and one feature")
        n = stream.n_samples
        if len(y) != n:
            raise ValueError(f"X has {n} rows but y has {len(y)} labels")
        if y.dtype.kind not in "biuf":
            raise ValueError(f"y must be numeric (the task's convention), got dtype {y.dtype}")
        self._check_task_labels(y)
        order = check_order(order, n)
        self._fit_width(X, stream)
        self._check_data_scale(stream)
        return stream, y, order

    def _prepare_run(self, X, y, order) -> None:
        """Work a learner does on the checked stream before a run's fresh model (PRJTRN++ searches
        its threshold here); nothing by default."""

    def _check_data_scale(self, stream: Stream) -> None:
        """Refuse a kernel width that makes the Gaussian kernel identically 1 on this data (every
        squared distance, at most 4 max ||x||^2, vanishes against 2 sigma^2 in float64)."""
        self._validate_params()  # the width's own range first
        sigma = getattr(self, "sigma_", getattr(self, "sigma", None))  # the fitted width ("scale" resolved)
        if isinstance(sigma, (int, float)) and not isinstance(sigma, bool) and stream.n_samples:
            check_width_for_data(type(self).__name__, float(sigma), float(stream.sqnorms.max()))

    def _check_task_labels(self, y: np.ndarray) -> None:
        if self.task == "binary" and y.size and not np.all(np.isin(y, (-1, 1))):
            raise ValueError("binary learners need labels in {-1, +1}; lsokl.data.load returns them so")
        if self.task == "multiclass" and y.size and (y.min() < 0 or not np.all(np.equal(np.mod(y, 1), 0))):
            raise ValueError("multiclass learners need integer labels 0..m-1")
        if self.task == "regression" and not np.all(np.isfinite(y)):
            raise ValueError("y contains NaN or infinite targets")

    # ----------------------------------------------------------------- estimator API
    def _validate_X_y(self, X, y, reset: bool):
        """scikit-learn's validation: CSR or C-ordered float64 X (2-d, >= 1 row and feature,
        finite, real), 1-d y of the same length; sets or checks n_features_in_ and
        feature_names_in_."""
        X, y = validate(self, X, y, reset=reset, accept_sparse="csr", dtype=np.float64,
                             order="C", y_numeric=self.task == "regression")
        if self.task != "regression":
            check_classification_targets(y)
        return X, y

    def partial_fit(self, X, y, classes=None):
        """Continue the online pass over the rows of X in order (predict, count, update).

        Classifiers: ``classes`` (every label the stream will show) is required on the first
        call and must not change afterwards, as for ``SGDClassifier.partial_fit``."""
        first = not self.__sklearn_is_fitted__()
        if self.task != "regression":
            if first and classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit.")
            if not first and classes is not None and not np.array_equal(
                    np.unique(np.asarray(classes)), self.classes_):
                raise ValueError(f"`classes={np.unique(np.asarray(classes)).tolist()}` is not the "
                                 f"same as on the first call to partial_fit, was: "
                                 f"{self.classes_.tolist()}")
        X, y = self._validate_X_y(X, y, reset=first)
        if first and self.task != "regression":
            self._set_classes(classes)
        return self._learn(X, y, first)

    def fit(self, X, y):
        """From a fresh model: for a learner with a ``max_iter`` parameter, scikit-learn's SGD
        convention (:meth:`_fit_epochs`: up to ``max_iter`` epochs over shuffled rows, stopping
        when the epoch's loss stops improving by ``tol`` for ``n_iter_no_change`` epochs);
        otherwise one online pass over X in the given order. ``run`` and ``partial_fit`` always
        play the paper's single pass."""
        for attr in ("counts_", "classes_", "n_classes_"):
            self.__dict__.pop(attr, None)
        X, y = self._validate_X_y(X, y, reset=True)
        if self.task != "regression":
            self._set_classes(np.unique(y))
        if "max_iter" in self._get_param_names():
            return self._fit_epochs(X, y)
        self._watch_pass = True  # _learn checks this pass for a constant predictor (issue 25)
        try:
            return self._learn(X, y, True)
        finally:
            self.__dict__.pop("_watch_pass", None)

    #: True: ``fit``'s epoch k (1-based) takes the step ``eta / k`` (:meth:`_eta_now`), a
    #: decreasing schedule for a learner whose constant step has no regulariser to stop it from
    #: fitting noise when the epochs repeat the rows (FOGD). ``run`` and ``partial_fit`` keep
    #: ``eta`` as given.
    fit_step_decay: ClassVar[bool] = False
    #: parameters only ``fit``'s epochs read: ``run`` and ``partial_fit`` (what the runner's cells play)
    #: ignore them, so a config cell's parameters and record key leave them out unless the config sets them
    fit_only_params: ClassVar[tuple] = ("max_iter", "tol", "n_iter_no_change")

    def _eta_now(self) -> float:
        """The step the compiled loops take now: ``eta``, divided by the epoch number inside the
        epochs of ``fit`` for a learner with ``fit_step_decay``."""
        return float(self.eta) * self.__dict__.get("_epoch_step_scale", 1.0)

    def _fit_epochs(self, X, y):
        """scikit-learn's SGD convention over the online updates: epoch k plays every row once in
        an order shuffled by a generator seeded from ``random_state`` (0 when it is None or absent,
        so the shuffles are repeatable), continuing the same model (step counters keep counting). The
        epoch's loss is its online error rate (its mean squared loss for regression), measured
        before each update as the pass predicts; with ``tol`` not None, training stops once
        ``n_iter_no_change`` epochs in a row have not lowered the best loss by ``tol``.
        ``n_iter_`` is the number of epochs played. A learner with ``fit_step_decay`` takes the
        step ``eta / k`` in epoch k. While the model is allocated, ``_fit_rows`` is the number of
        training rows (a default that depends on the training set's size, as BPegasos'
        ``lam="auto"`` = 1/n, reads it)."""
        try:
            return self._fit_epoch_loop(X, y)
        finally:
            self.__dict__.pop("_epoch_step_scale", None)
            self.__dict__.pop("_fit_rows", None)

    def _fit_epoch_loop(self, X, y):
        codes = self._encode_labels(y)
        stream = Stream(X)
        self._fit_width(X, stream)
        self._check_data_scale(stream)
        n = stream.n_samples
        self._fit_rows = n  # read while the model is allocated; _fit_epochs removes it
        self._reset(stream.n_features, max(n, 16), None)
        rs = getattr(self, "random_state", None)
        rng = np.random.default_rng(rs if isinstance(rs, (int, np.integer)) else 0)
        best, stale = np.inf, 0
        tol, patience = getattr(self, "tol", None), int(getattr(self, "n_iter_no_change", 5))
        for epoch in range(int(self.max_iter)):
            if self.fit_step_decay:
                self._epoch_step_scale = 1.0 / (epoch + 1)
            order = rng.permutation(n).astype(np.int64) if getattr(self, "shuffle", True) \
                else np.arange(n, dtype=np.int64)
            self._ensure_capacity(n)
            before = float(self.sq_loss_[0]) if self.task == "regression" else int(self.counts_[COUNT_MISTAKES])
            self._play(stream, codes, order, 0, n)
            after = float(self.sq_loss_[0]) if self.task == "regression" else int(self.counts_[COUNT_MISTAKES])
            loss = (after - before) / n
            self.n_iter_ = epoch + 1
            if tol is None:
                continue
            if loss > best - float(tol):
                stale += 1
            else:
                stale = 0
            best = min(best, loss)
            if stale >= patience:
                break
        warn_if_constant_model(self, X, y)
        return self

    def _learn(self, X, y, first: bool):
        codes = self._encode_labels(y)
        stream = Stream(X)
        if len(codes) != stream.n_samples:  # validate_data guarantees it; compiled code relies on it
            raise ValueError(f"X has {stream.n_samples} rows but y has {len(codes)} labels")
        if first:
            self._fit_width(X, stream)
            self._check_data_scale(stream)
            self._reset(stream.n_features, max(stream.n_samples, 16), None)
        self._ensure_capacity(stream.n_samples)
        order = np.arange(stream.n_samples, dtype=np.int64)
        if first and self.__dict__.pop("_watch_pass", False):  # fit: the same pass, checkpointed
            trace = self._pass(stream, codes, order, CHECKPOINTS_PER_PASS[self.task])
            warn_if_constant_pass(self, trace, codes, order, X)
        else:
            self._play(stream, codes, order, 0, stream.n_samples)
        return self

    def _raw_scores(self, X) -> np.ndarray:
        check_is_fitted(self)
        X = validate(self, X, reset=False, accept_sparse="csr", dtype=np.float64, order="C")
        scores = self._scores(Stream(X))
        warn_if_not_finite(scores, type(self).__name__)
        return scores

    @available_if(lambda self: self.task != "regression")  # a regressor's f(x) is predict(X)
    def decision_function(self, X) -> np.ndarray:
        """f(x) for every row: shape (n,) for binary (and 2-class multi-class: V_1 - V_0, positive
        for ``classes_[1]``), (n, m) for m >= 3 classes. Regressors have none: use predict."""
        scores = self._raw_scores(X)
        if self.task == "multiclass" and scores.ndim == 2 and scores.shape[1] == 2:
            return scores[:, 1] - scores[:, 0]
        return scores

    def predict(self, X) -> np.ndarray:
        scores = self._raw_scores(X)
        if self.task == "regression":
            return scores
        if self.task == "binary":
            return self._decode_labels(np.where(scores >= 0.0, 1, -1))
        return self._decode_labels(np.argmax(scores, axis=1))  # first index on ties, as MATLAB

    def _check_fitted(self) -> None:
        check_is_fitted(self)

    def _ensure_capacity(self, extra: int) -> None:
        """Grow unbounded buffers before ``extra`` more steps (no-op for budget learners)."""

    # ----------------------------------------------------------------- subclass hooks
    def _allocate(self, n_features: int, capacity: int, source: RandomSource) -> None:
        raise NotImplementedError

    def _play(self, stream: Stream, y: np.ndarray, order: np.ndarray, start: int, stop: int) -> None:
        raise NotImplementedError

    def _scores(self, stream: Stream) -> np.ndarray:
        raise NotImplementedError

    @property
    def support_size_(self) -> int:
        raise NotImplementedError


# Parameter rules most learners share.
#: ``fit``'s epochs (scikit-learn's SGD convention, :meth:`OnlineLearner._fit_epochs`)
EPOCH_PARAMS = {"max_iter": None, "tol": None, "n_iter_no_change": None}  # filled below
SIGMA = KernelWidth("sigma")  # a number in SIGMA_RANGE, or "scale" (resolved from the data at the first fit)
VARIANT = OneOf(("faithful", "corrected"))
SEED = Seed()


def _epoch_rules():
    from ..compute.params import Num

    return {"max_iter": Num(1, np.inf, "left", integer=True), "tol": Num(0, np.inf, "left", allow_none=True),
            "n_iter_no_change": Num(1, np.inf, "left", integer=True)}


EPOCH_PARAMS = _epoch_rules()
#: the defaults of ``fit``'s epochs (as SGDClassifier's tol and n_iter_no_change; fewer epochs at most)
MAX_ITER, TOL, N_ITER_NO_CHANGE = 50, 1e-3, 5
#: ``n_iter_no_change`` of the online learners' ``fit`` (FOGD, NOGD, the Pegasos/BSGD family):
#: their epoch loss is the online 0/1 error rate, a count that moves in steps of 1/n and jumps by
#: a few mistakes from epoch to epoch, not SGDClassifier's smooth hinge loss, so a record low is
#: rarely beaten within 5 epochs although the model still improves (NOGD on digits stopped after
#: 13-21 epochs at 95.7% test accuracy; 21-42 epochs with 10: 96.5%). 10 is MLPClassifier's.
ONLINE_N_ITER_NO_CHANGE = 10


class ConstantPredictorWarning(UserWarning):
    """A fitted model predicts one value (one class) on its own training data."""


#: fewer training rows than this are too few to call a pass constant (scikit-learn's checks fit
#: 10-300 rows; a checkpoint segment should hold well over the detector's 3-step slack)
MIN_ROWS_CONSTANT_CHECK = 200
#: rows of the training data on which a batch / mini-batch model's predictions are checked
CONSTANT_CHECK_ROWS = 2000


def _likely_causes(est, X) -> str:
    causes = []
    if "sigma" in est._get_param_names() and hasattr(est, "sigma_"):
        from ..compute.params import scale_sigma

        causes.append(f"the kernel width against the feature scale (sigma_={est.sigma_:.4g}; "
                      f"sigma='scale' gives {scale_sigma(X):.4g} on this X; standardising the "
                      "features helps too)")
    steps = [f"{p}={getattr(est, p)!r}" for p in ("eta", "lam", "nu", "C", "theta")
             if p in est._get_param_names()]
    if steps:
        causes.append(f"the step size or regularisation ({', '.join(steps)})")
    return " or ".join(causes) if causes else "the learner's parameters"


def _warn_constant(est, what: str, X) -> None:
    import warnings

    warnings.warn(f"{type(est).__name__} is a constant predictor on its own training data: {what}. "
                  f"Likely cause: {_likely_causes(est, X)}.", ConstantPredictorWarning, stacklevel=4)


def warn_if_constant_pass(est, trace: "Trace", codes: np.ndarray, order: np.ndarray, X) -> None:
    """Warn when an online learner's training pass was degenerate (lsokl.compute.degenerate:
    one class, or one value, predicted at every step; or no update at all)."""
    from ..compute.degenerate import check

    if trace.n_samples < MIN_ROWS_CONSTANT_CHECK:
        return
    if est.task != "regression" and len(np.unique(codes)) < 2:
        return  # one class in y: predicting it is right, not degenerate
    if est.task == "regression" and np.ptp(codes) == 0:
        return
    flag = check(trace, codes, order)
    if flag is not None:
        _warn_constant(est, flag["reason"], X)


def constant_check_rows(n: int) -> np.ndarray:
    """The training rows :func:`warn_if_constant_model` checks: up to ``CONSTANT_CHECK_ROWS``
    evenly spaced ones (none below ``MIN_ROWS_CONSTANT_CHECK`` rows)."""
    if n < MIN_ROWS_CONSTANT_CHECK:
        return np.zeros(0, np.int64)
    return np.unique(np.linspace(0, n - 1, min(n, CONSTANT_CHECK_ROWS)).astype(np.int64))


def warn_if_constant_model(est, X, y, predicted=None) -> None:
    """Warn when a fitted batch / mini-batch model predicts one class (one value) on (up to
    ``CONSTANT_CHECK_ROWS`` evenly spaced rows of) its own training data while y varies.
    ``predicted``: the model's predictions of the rows :func:`constant_check_rows` names, when the
    learner already has them (DSG's running scores), instead of predicting them again."""
    n = X.shape[0]
    rows = constant_check_rows(n)
    if not rows.size:
        return
    yr = np.asarray(y)[rows]
    # an Array API X: rows taken on its device
    pred = to_numpy(est.predict(take_rows(X, rows))) if predicted is None else np.asarray(predicted)
    if est.task == "regression":
        spread = float(np.ptp(yr))
        if spread > 0 and float(np.ptp(pred)) <= 1e-9 * max(spread, 1e-300):
            _warn_constant(est, f"it predicts {float(pred[0]):.6g} for every training row", X)
    elif len(np.unique(yr)) > 1 and len(np.unique(pred)) == 1:
        _warn_constant(est, f"it predicts class {pred[0]!r} for every training row checked "
                            f"({len(rows)} of {n})", X)


def fit_width(est, X) -> None:
    """``est.sigma_`` from ``est.sigma`` and the training data X (every learner family calls
    this once at the start of a fit; learners without a ``sigma`` parameter are left alone)."""
    if "sigma" not in est._get_param_names():
        return
    SIGMA.check(type(est).__name__, "sigma", est.sigma)
    est.sigma_ = resolve_sigma(est.sigma, X)


def task_tags(est) -> "LearnerTags":
    """scikit-learn tags from a learner's ``task``, ``randomized``, ``poor_score`` and
    ``expected_failed_checks`` (shared by the online learners and the mini-batch ones)."""
    base = BaseEstimator.__sklearn_tags__(est)
    tags = LearnerTags(**{f: getattr(base, f) for f in Tags.__dataclass_fields__})
    tags.input_tags.sparse = True  # every learner reads CSR rows (Stream, feature maps, DSG's gather-add)
    # A seeded learner replays the same draws, so only an unseedable randomized one is not
    # deterministic; none is today.
    tags.non_deterministic = est.randomized and "random_state" not in est._get_param_names()
    if est.task == "regression":
        tags.estimator_type = "regressor"
        tags.classifier_tags = None
        tags.regressor_tags = RegressorTags(poor_score=bool(est.poor_score))
    else:
        tags.estimator_type = "classifier"
        tags.regressor_tags = None
        tags.classifier_tags = ClassifierTags(multi_class=est.task == "multiclass",
                                              poor_score=bool(est.poor_score))
    tags.target_tags.required = True
    tags.expected_failed_checks = expected_failures(est)
    return tags


def expected_failures(est) -> dict:
    """The checks this estimator, with its parameters, is documented to fail: the class's
    ``expected_failed_checks`` plus, for a class that defines
    ``_expected_failed_checks_for_params(self) -> dict``, those that depend on the parameters
    (e.g. an accuracy check at a small budget)."""
    out = dict(type(est).expected_failed_checks)
    more = getattr(est, "_expected_failed_checks_for_params", None)
    if more is not None:
        out.update(more())
    return out
