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
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator

from .params import Num, OneOf, Seed
from .randomness import NumpySource, RandomSource
from .stream import Stream

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


class OnlineLearner(BaseEstimator):
    name: ClassVar[str] = ""
    task: ClassVar[str] = "binary"
    budgeted: ClassVar[bool] = True
    randomized: ClassVar[bool] = False
    # False for learners whose ``support_size_`` counts updates rather than stored vectors (FOGD).
    stores_support_vectors: ClassVar[bool] = True
    _params: ClassVar[dict] = {}

    # ----------------------------------------------------------------- validation
    def _validate_params(self) -> None:
        owner = type(self).__name__
        for pname, rule in self._params.items():
            rule.check(owner, pname, getattr(self, pname))

    def _encode_labels(self, y) -> np.ndarray:
        """Map labels to the compiled loops' convention: +-1 (binary), 0..m-1, or float."""
        y = np.asarray(y)
        if y.ndim != 1:
            raise ValueError(f"y must be 1-dimensional, got shape {y.shape}")
        if self.task == "regression":
            y = y.astype(np.float64)
            if not np.all(np.isfinite(y)):
                raise ValueError("y contains NaN or infinite values")
            return y
        if not hasattr(self, "classes_"):
            self.classes_ = np.unique(y)
        unknown = np.setdiff1d(np.unique(y), self.classes_)
        if unknown.size:
            raise ValueError(f"y has labels {unknown.tolist()} not among classes {self.classes_.tolist()}")
        codes = np.searchsorted(self.classes_, y)
        if self.task == "binary":
            if len(self.classes_) > 2:
                raise ValueError(f"{type(self).__name__} is a binary learner but y has "
                                 f"{len(self.classes_)} classes; use the multiclass variant")
            if len(self.classes_) == 2:
                return np.where(codes == 1, 1.0, -1.0)
            return np.where(self.classes_[0] == -1, -1.0, 1.0) * np.ones(len(y))
        return codes.astype(np.int64)

    def _decode_labels(self, codes: np.ndarray) -> np.ndarray:
        if self.task == "binary":
            classes = self.classes_ if len(self.classes_) == 2 else np.array([-1, 1])
            return classes[(codes > 0).astype(int)]
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
        operation is.
        """
        stream = Stream(X)
        y = np.asarray(y)
        self._check_task_labels(y)
        n = stream.n_samples
        # A private writable copy: a row of a read-only memory-mapped permutation matrix would be
        # a different numba type (readonly array) and trigger a compilation inside the timing.
        order = np.arange(n, dtype=np.int64) if order is None else np.require(order, np.int64, ["C", "W", "O"])
        if order.ndim != 1 or (order.size and (order.min() < 0 or order.max() >= n)):
            raise ValueError("order must be a 1-d array of row indices of X")
        if len(y) != n:
            raise ValueError(f"X has {n} rows but y has {len(y)} labels")
        if self.task == "multiclass":
            self.n_classes_ = int(y.max()) + 1 if y.size else 1
            self.classes_ = np.arange(self.n_classes_)
        elif self.task == "binary":
            self.classes_ = np.array([-1, 1])
        y = y.astype(np.int64 if self.task == "multiclass" else np.float64)
        self._reset(stream.n_features, len(order), random_source)

        per_pass = n_checkpoints or CHECKPOINTS_PER_PASS[self.task]
        ckpts = checkpoint_steps(len(order), per_pass)
        bounds = np.unique(np.concatenate([[0], ckpts, [len(order)]]))
        rec = {k: [] for k in ("mistakes", "support", "time", "loss")}
        start = time.perf_counter()
        for a, b in zip(bounds[:-1], bounds[1:]):
            self._play(stream, y, order, int(a), int(b))
            if b in ckpts:
                rec["time"].append(time.perf_counter() - start)
                rec["mistakes"].append(int(self.counts_[COUNT_MISTAKES]))
                rec["support"].append(int(self.support_size_))
                rec["loss"].append(float(self.sq_loss_[0]) / b)
        elapsed = time.perf_counter() - start
        return Trace(
            algorithm=self.name, task=self.task, n_samples=len(order),
            mistakes=int(self.counts_[COUNT_MISTAKES]), support_size=int(self.support_size_),
            elapsed=elapsed,
            squared_loss=float(self.sq_loss_[0]) / max(len(order), 1) if self.task == "regression" else float("nan"),
            checkpoints=ckpts, ckpt_mistakes=np.array(rec["mistakes"], np.int64),
            ckpt_support=np.array(rec["support"], np.int64), ckpt_time=np.array(rec["time"]),
            ckpt_squared_loss=np.array(rec["loss"]) if self.task == "regression" else np.empty(0),
        )

    def _check_task_labels(self, y: np.ndarray) -> None:
        if self.task == "binary" and y.size and not np.all(np.isin(y, (-1, 1))):
            raise ValueError("binary learners need labels in {-1, +1}; lsokl.data.load returns them so")
        if self.task == "multiclass" and y.size and (y.min() < 0 or not np.all(np.equal(np.mod(y, 1), 0))):
            raise ValueError("multiclass learners need integer labels 0..m-1")

    # ----------------------------------------------------------------- estimator API
    def partial_fit(self, X, y, classes=None):
        """Continue the online pass over the rows of X in order (predict, count, update)."""
        stream = Stream(X)
        if classes is not None and not hasattr(self, "classes_"):
            self.classes_ = np.unique(classes)
        codes = self._encode_labels(y)
        if not hasattr(self, "counts_"):
            self._reset(stream.n_features, max(stream.n_samples, 16), None)
        elif stream.n_features != self.n_features_in_:
            raise ValueError(f"X has {stream.n_features} features, the model was fitted with "
                             f"{self.n_features_in_}")
        self._ensure_capacity(stream.n_samples)
        order = np.arange(stream.n_samples, dtype=np.int64)
        self._play(stream, codes, order, 0, stream.n_samples)
        return self

    def fit(self, X, y):
        """One online pass over X in the given order, from a fresh model."""
        for attr in ("counts_", "classes_", "n_classes_"):
            self.__dict__.pop(attr, None)
        return self.partial_fit(X, y)

    def decision_function(self, X) -> np.ndarray:
        self._check_fitted()
        stream = Stream(X)
        if stream.n_features != self.n_features_in_:
            raise ValueError(f"X has {stream.n_features} features, the model was fitted with "
                             f"{self.n_features_in_}")
        return self._scores(stream)

    def predict(self, X) -> np.ndarray:
        scores = self.decision_function(X)
        if self.task == "regression":
            return scores
        if self.task == "binary":
            return self._decode_labels(np.where(scores >= 0.0, 1, -1))
        return self._decode_labels(np.argmax(scores, axis=1))  # first index on ties, as MATLAB

    def _check_fitted(self) -> None:
        if not hasattr(self, "counts_"):
            raise ValueError(f"This {type(self).__name__} instance is not fitted yet; call "
                             "partial_fit, fit or run first.")

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
SIGMA = Num(0, float("inf"), "neither")
VARIANT = OneOf(("faithful", "corrected"))
SEED = Seed()
