"""Mini-batch learners of the DSG paper (spec ``DSG.md``): the common estimator shell, labels,
step-size schedules and the one-pass driver with running scores.

Every learner here plays the training rows in mini-batches of ``batch_size`` in the given order:
score the batch with the current model, take one step, repeat. Two families share this shell:

* **block models** (:class:`BlockModel`: DSG, kernel NORMA, kernel SDCA): each step appends one
  block of coefficients attached to a *basis* (r random features regenerated from a seed, or the
  kernel columns of the batch's rows) and may decay the older blocks by one factor. For a pass
  over a known finite set the driver keeps **running scores** (spec section 7): after a step it
  adds the new block's contribution, in one GEMM, to the scores of the rows not seen yet and of
  the test rows, decayed like the model. The batch's scores are then read, not recomputed, and a
  test-error curve costs one extra GEMM per step instead of a fresh prediction per checkpoint.
  Same values as the step-by-step path up to rounding (a test checks 1e-9).
* **linear models on a fixed feature map** (r-/n-Pegasos, r-/n-SDCA, ``feature_linear.py``):
  they override :meth:`MinibatchLearner._train` and score the test rows at checkpoints with their
  (cheap) linear model.

``fit_curve`` is what the holdout protocol calls: one pass over ``X[order]`` and the test error
(or MAE/RMSE) at the given checkpoints of "training samples seen".
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from ...errors import UnknownNameError, unknown_name_message
from ...compute.memory import estimate_of, refuse_if_too_big
from ...compute.params import Num
from ...compute.params import check_width_for_data
from ...compute.validation import (check_order, check_row_norms, check_sparse, max_row_sqnorm,
                                   validate, warn_if_not_finite)
from ...compute.xp import (asarray, device, float_dtype, is_numpy, labels_like, namespace, take_rows,  # noqa: F401
                           to_numpy)

SCHEDULES = ("inv_t", "inv_sqrt", "const", "matlab")
BATCH = Num(1, math.inf, "left", integer=True)


class Schedule:
    """A parameter check that names the closest schedule on a typo (a ValueError, as every
    invalid parameter of a scikit-learn estimator)."""

    def check(self, owner: str, name: str, value) -> None:
        if value not in SCHEDULES:
            raise ValueError(unknown_name_message(
                f"step-size schedule (the {name!r} parameter of {owner})", str(value), SCHEDULES))


def step_size(schedule: str, t: int, theta: float, t0: float, eta1: float) -> float:
    """gamma_t of spec section 2 for step t = 1, 2, ...: ``inv_t`` theta/(t + t0), ``inv_sqrt``
    theta/sqrt(t + t0), ``const`` theta, ``matlab`` theta/(1 + eta1 t) (MATLAB: eta1 = 1e-4)."""
    if schedule == "inv_t":
        return theta / (t + t0)
    if schedule == "inv_sqrt":
        return theta / math.sqrt(t + t0)
    if schedule == "const":
        return theta
    if schedule == "matlab":
        return theta / (1.0 + eta1 * t)
    raise UnknownNameError("step-size schedule", schedule, SCHEDULES)


def log_checkpoints(n_samples: int, batch_size: int, count: int = 15) -> np.ndarray:
    """About ``count`` log-spaced "samples seen" in [batch_size, n_samples], each the end of a
    mini-batch (a multiple of ``batch_size``, or n_samples for the last, partial batch)."""
    if n_samples <= 0:
        return np.empty(0, np.int64)
    steps = -(-n_samples // batch_size)
    marks = np.unique(np.round(np.geomspace(1, steps, max(count, 1))).astype(np.int64))
    seen = np.minimum(marks * batch_size, n_samples)
    return np.unique(np.append(seen, n_samples)).astype(np.int64)


@dataclass
class Curve:
    """Test metric after each checkpoint of "training samples seen" (one training pass)."""

    samples_seen: np.ndarray
    test_error: np.ndarray  # classification: error rate; regression: RMSE
    test_mae: np.ndarray = field(default_factory=lambda: np.empty(0))  # regression only
    train_time: np.ndarray = field(default_factory=lambda: np.empty(0))  # s, test scoring excluded
    elapsed: float = 0.0  # training time of the whole pass (s), test scoring excluded
    test_time: float = 0.0  # time spent updating / computing the test scores (s)
    steps: int = 0

    def as_dict(self) -> dict:
        out = {"samples_seen": self.samples_seen.tolist(), "test_error": self.test_error.tolist(),
               "train_time_s": self.train_time.tolist()}
        if self.test_mae.size:
            out["test_mae"] = self.test_mae.tolist()
        return out


def _all_finite(a: np.ndarray, chunk: int = 1 << 20) -> bool:
    """``np.all(np.isfinite(a))`` a million values at a time: no a-sized boolean temporary (a
    2M x 784 float32 memory map would need 1.5 GB of it)."""
    flat = a.reshape(-1)  # a view for the C-contiguous arrays dense_rows makes
    return all(bool(np.isfinite(flat[i:i + chunk]).all()) for i in range(0, flat.shape[0], chunk))


def dense_rows(X, dtype):
    """X as a C-contiguous dense array of ``dtype``, or, for sparse input, a CSR matrix of
    ``dtype`` with sorted indices (the block learners project CSR rows with a compiled gather-add:
    a9a's 14 non-zeros of 123 make that 5x cheaper than a dense float32 GEMM)."""
    if sp.issparse(X):
        X = sp.csr_matrix(check_sparse(X), dtype=dtype)  # checked; canonical (a copy if it was not)
        if not _all_finite(X.data):
            raise ValueError("X contains NaN or infinite values")
        return X
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-dimensional, got shape {X.shape}")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"X must be numeric, got dtype {X.dtype}")
    out = np.ascontiguousarray(X, dtype=dtype)  # a float32 memory map stays as it is
    if not _all_finite(out):
        raise ValueError("X contains NaN or infinite values")
    return out


class MinibatchLearner(BaseEstimator):
    """The estimator shell: labels, fit / partial_fit / predict / decision_function, fit_curve.

    A subclass provides ``_start(n_features, n_outputs, n_total)`` (fresh state), ``_step(t, Xb,
    Yb, Fb)`` (one update given the batch's current scores ``Fb``) and ``_scores(X)``.
    ``Yb`` is +-1 (binary), one-hot (multiclass, (b, K)) or float (regression).
    """

    name: ClassVar[str] = ""
    task: ClassVar[str] = "binary"
    online: ClassVar[bool] = False  # no strict online ``run``: the holdout protocol only
    randomized: ClassVar[bool] = False
    _params: ClassVar[dict] = {}
    _losses: ClassVar[tuple] = ()  # losses this task allows, first = default
    # scikit-learn estimator checks this learner is documented to fail: {check name: reason}
    # (reaches tests/learners/test_sklearn_contract.py through the tags, as in base.py).
    expected_failed_checks: ClassVar[dict] = {}
    # Non-empty = why the learner scores below scikit-learn's bar at its default settings.
    poor_score: ClassVar[str] = ""
    # True: fit/predict compute in the namespace of an Array API input (torch, CuPy) on its
    # device (lsokl.compute.xp); False: such input is copied to numpy first
    array_api_support: ClassVar[bool] = False

    def __sklearn_tags__(self):
        from ..base import task_tags

        return task_tags(self)

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "t_")

    def _validate_X(self, X, y="no_validation", *, reset: bool):
        """scikit-learn's validation (2-d, >= 1 row and feature, finite, real; sets or checks
        n_features_in_), then the layout the passes read: C-ordered dense rows of the learner's
        dtype, or CSR with sorted indices (copied before sorting: the caller's matrix is kept)."""
        if not is_numpy(X):  # torch / CuPy / any Array API array
            if self.array_api_support:  # computes in X's namespace, on its device
                return self._validate_xp(X, y, reset=reset)
            X = to_numpy(X)  # a learner written for numpy: computes on the host
        kw = dict(reset=reset, accept_sparse="csr", dtype=self._dtype(), order="C")
        if isinstance(y, str) and y == "no_validation":  # X only (predict); y=None is refused
            X = validate(self, X, **kw)
        else:
            X, y = validate(self, X, y, y_numeric=self.task == "regression", **kw)
            if self.task != "regression":
                check_classification_targets(y)
        if sp.issparse(X):
            X = sp.csr_matrix(X)  # canonical already (``validate`` ran check_sparse)
        return X if isinstance(y, str) and y == "no_validation" else (X, y)

    def _validate_xp(self, X, y="no_validation", *, reset: bool):
        """The checks of :meth:`_validate_X` for an Array API array (lsokl.compute.xp): 2-d, at
        least one row and feature, finite, real; cast to the learner's dtype on X's device.
        Labels are small and stay on the host (numpy)."""
        xp = namespace(X)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-dimensional, got shape {tuple(X.shape)}")
        if X.shape[0] < 1 or X.shape[1] < 1:
            raise ValueError(f"X has shape {tuple(X.shape)}: at least one row and one feature are needed")
        if not xp.isdtype(X.dtype, ("real floating", "integral")):
            raise ValueError(f"X must be numeric, got dtype {X.dtype}")
        X = xp.astype(X, float_dtype(xp, np.dtype(self._dtype()).name))
        if not bool(xp.all(xp.isfinite(X))):
            raise ValueError("X contains NaN or infinite values")
        if reset:
            self.n_features_in_ = int(X.shape[1])
        elif X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                             f"{self.n_features_in_} features as input.")
        if isinstance(y, str) and y == "no_validation":
            return X
        y = to_numpy(y) if not is_numpy(y) else np.asarray(y)
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise ValueError(f"y must be 1-dimensional with one label per row of X: got shape "
                             f"{y.shape} for {X.shape[0]} rows")
        if self.task != "regression":
            check_classification_targets(y)
        return X, y

    # ------------------------------------------------------------------ checks and labels
    def _validate_params(self) -> None:
        owner = type(self).__name__
        for pname, rule in self._params.items():
            rule.check(owner, pname, getattr(self, pname))
        loss = getattr(self, "loss", None)
        if self._losses and loss not in self._losses:
            other = {"binary": ("hinge", "logistic"), "multiclass": ("logistic", "softmax"),
                     "regression": ("squared",)}
            fits = [t for t, ls in other.items() if loss in ls]
            hint = (f"; {loss!r} needs a {' or '.join(fits)} dataset" if fits else "")
            raise ValueError(f"The 'loss' parameter of {type(self).__name__} ({self.task}) must be one "
                             f"of {', '.join(map(repr, self._losses))}. Got {loss!r} instead{hint}.")

    def _encode(self, y, *, first: bool) -> np.ndarray:
        y = np.asarray(y)
        if y.ndim != 1:
            raise ValueError(f"y must be 1-dimensional, got shape {y.shape}")
        if self.task == "regression":
            if y.dtype.kind not in "biuf":
                raise ValueError(f"{type(self).__name__} is a regression learner; y must be numeric")
            y = y.astype(np.float64)
            if not np.all(np.isfinite(y)):
                raise ValueError("y contains NaN or infinite values")
            if first:  # an intercept taken from the training targets (a preprocessing step)
                self.offset_ = float(y.mean()) if getattr(self, "target_offset", "none") == "mean" \
                    and y.size else 0.0
            return y - getattr(self, "offset_", 0.0)
        if first:
            self.classes_ = np.unique(y)
            if self.task == "binary" and len(self.classes_) > 2:
                raise ValueError(f"Only binary classification is supported. {type(self).__name__} "
                                 f"is a binary learner but y has {len(self.classes_)} classes; "
                                 "use the multiclass task")
        unknown = np.setdiff1d(np.unique(y), self.classes_)
        if unknown.size:
            raise ValueError(f"y has labels {unknown.tolist()} not among the training classes "
                             f"{self.classes_.tolist()}")
        codes = np.searchsorted(self.classes_, y)
        if self.task == "binary":
            return np.where(codes == len(self.classes_) - 1, 1.0, -1.0) if len(self.classes_) == 2 \
                else np.ones(len(y))
        onehot = np.zeros((len(y), len(self.classes_)))
        onehot[np.arange(len(y)), codes] = 1.0
        return onehot

    @property
    def _n_outputs(self) -> int:
        return len(self.classes_) if self.task == "multiclass" else 1

    # ------------------------------------------------------------------ estimator API
    def fit(self, X, y):
        """One pass over the rows of X in the given order, from a fresh model."""
        X, y = self._validate_X(X, y, reset=True)
        self._validate_params()
        self._check_scale(X)
        Y = self._encode(y, first=True)
        self._begin(X.shape[1], X.shape[0], X)
        self._train(X, np.arange(X.shape[0]), Y, None, None, np.empty(0, np.int64))
        from ..base import warn_if_constant_model

        warn_if_constant_model(self, X, y)
        return self

    def partial_fit(self, X, y, classes=None):
        """Continue training on the rows of X in order, in mini-batches (batch scores computed
        from the model, no running scores). Classifiers: ``classes`` (every label the stream will
        show) is required on the first call, which fixes them, as for ``SGDClassifier``."""
        first = not self.__sklearn_is_fitted__()
        if first and classes is None and self.task != "regression":
            # the documented contract, as SGDClassifier's: a stream's first batch need not
            # show every class, so they are never guessed from it
            raise ValueError("classes must be passed on the first call to partial_fit.")
        X, y = self._validate_X(X, y, reset=first)
        if first:
            self._validate_params()
            self._check_scale(X)
            if classes is not None and self.task != "regression":
                self.classes_ = np.unique(classes)
                Y = self._encode(y, first=False)
            else:
                Y = self._encode(y, first=True)
            self._begin(X.shape[1], None, X)
        else:
            Y = self._encode(y, first=False)
        X = self._model_input(X)
        b = int(self.batch_size)
        for a in range(0, X.shape[0], b):
            Xb = X[a:min(a + b, X.shape[0]), ...]
            self.t_ += 1
            self._step(self.t_, Xb, Y[a:a + b], self._scores(Xb))
        self.samples_seen_ += X.shape[0]
        self._last = None
        return self

    def _begin(self, n_features: int, n_total: int | None, X=None) -> None:
        """Fresh state; ``sigma_`` from ``sigma`` (``"scale"``: from the training rows X); the
        namespace and device the model computes in (``_like``: a 1-element array of X's, None for
        numpy)."""
        from ..base import fit_width

        # a size parameter of 10^12 (n_components, block_features, ...) is one line with its estimate, not
        # numpy's MemoryError: what one row and one step need (nothing that grows with n, never a false refusal)
        w = self._step_width()
        refuse_if_too_big(self, {**estimate_of(self, 1, n_features, 1),
                                 f"random features or columns of one step (d x {w:,})": 8.0 * n_features * w})
        if X is not None:
            fit_width(self, X)
        self._like = None if X is None or is_numpy(X) else namespace(X).zeros(
            (1,), dtype=X.dtype, device=device(X))
        self.n_features_in_ = n_features
        self.t_ = 0
        self.samples_seen_ = 0
        self._start(n_features, self._n_outputs, n_total)

    def _model_input(self, X):
        """X in the namespace and on the device the model was fitted in (a numpy X for a model
        fitted on torch arrays goes to its device; a torch X for a numpy model comes to the host)."""
        like = getattr(self, "_like", None)
        if like is None:
            return X if is_numpy(X) else to_numpy(X)
        if is_numpy(X):
            X = X.toarray() if hasattr(X, "toarray") else X
            return asarray(np.asarray(X, dtype=self._dtype()), like)
        return X

    def _check_fitted(self) -> None:
        check_is_fitted(self)

    def _decision(self, X) -> np.ndarray:
        """f(X): (n,) for one output (binary, regression with the target offset), (n, K) else."""
        check_is_fitted(self)
        X = self._model_input(self._validate_X(X, reset=False))
        S = self._scores(X)
        if self.task == "regression":
            S = S + getattr(self, "offset_", 0.0)
        warn_if_not_finite(S, type(self).__name__)
        return S[:, 0] if S.shape[1] == 1 else S

    def _host_decision(self, X) -> np.ndarray:
        """:meth:`_decision` on the host (numpy), for labels: an Array API input's scores are
        copied back (n or n x K numbers)."""
        return to_numpy(self._decision(X))

    @available_if(lambda self: self.task != "regression")  # a regressor's f(x) is predict(X)
    def decision_function(self, X) -> np.ndarray:
        """f(x) for every row: (n,) for binary (and 2-class multi-class: V_1 - V_0, positive
        for ``classes_[1]``, as scikit-learn's classifiers), (n, K) for K >= 3 classes."""
        S = self._decision(X)
        if S.ndim == 2 and S.shape[1] == 2:
            return S[:, 1] - S[:, 0]
        return S

    def predict(self, X) -> np.ndarray:
        """Labels (``classes_``'s dtype) or regression values, in X's namespace and on its device
        (scikit-learn's convention for Array API input; string labels stay numpy)."""
        if self.task == "regression":
            return self._decision(X)
        return labels_like(self._labels(self._host_decision(X)), X)

    def _labels(self, S: np.ndarray) -> np.ndarray:
        """The classes of rows whose host decision values (:meth:`_decision`'s shape) are S."""
        if self.task == "binary":
            return (np.repeat(self.classes_, len(S)) if len(self.classes_) == 1
                    else self.classes_[(S > 0).astype(int)])
        if S.ndim == 1:  # one class seen: every row is that class
            return np.repeat(self.classes_, len(S))
        return self.classes_[np.argmax(S, axis=1)]

    def score(self, X, y) -> float:
        if self.task == "regression":
            from sklearn.metrics import r2_score

            return float(r2_score(to_numpy(y), to_numpy(self.predict(X))))
        return float(np.mean(to_numpy(self.predict(X)) == to_numpy(y)))

    def _dtype(self):
        return np.float32 if getattr(self, "dtype", "float64") == "float32" else np.float64

    def _step_width(self) -> int:
        """Columns one step adds to every row's computation (features, kernel columns)."""
        return int(getattr(self, "block_width", 0) or getattr(self, "n_components", 0)
                   or self.batch_size)

    def memory_estimate(self, n_samples: int, n_features: int, n_outputs: int = 1) -> dict:
        """The big arrays of a pass (bytes, float64 upper bounds; lsokl.runner.resources)."""
        n, d, K, w = float(n_samples), float(n_features), float(max(n_outputs, 1)), float(self._step_width())
        parts = {f"rows re-ordered for the pass (n x d = {n_samples:,} x {n_features:,})": 8.0 * n * d,
                 "running scores (n x outputs)": 8.0 * n * K,
                 f"one step's features / kernel columns on every row (n x {int(w)})": 2 * 8.0 * n * w}
        if getattr(self, "block_features", None) is not None:
            parts["coefficient blocks (n / b x width x outputs)"] = 8.0 * n / float(self.batch_size) * w * K
        if self.name in ("norma", "ksdca"):
            parts[f"support set (n x d = {n_samples:,} x {n_features:,})"] = 8.0 * n * (d + 1)
        return parts

    # ------------------------------------------------------------------ holdout with a curve
    def fit_curve(self, X, y, X_test, y_test, order=None, checkpoints=None) -> Curve:
        """Train one pass over ``X[order]`` from a fresh model and return the test error (RMSE
        and MAE for regression) after each checkpoint of "training samples seen" (default: ~15
        log-spaced). Training time excludes the test scoring, which is timed separately."""
        if is_numpy(X):
            X = dense_rows(X, self._dtype())
            X_test = dense_rows(X_test, self._dtype())
        else:
            X = self._validate_xp(X, reset=True)
            X_test = self._validate_xp(X_test, reset=False)
        if X_test.shape[1] != X.shape[1]:
            raise ValueError(f"the test split has {X_test.shape[1]} features, training has {X.shape[1]}")
        self._validate_params()
        self._check_scale(X)
        n = X.shape[0]
        y = np.asarray(y)
        if y.ndim != 1 or len(y) != n:
            raise ValueError(f"X has {n} rows but y has shape {y.shape}; one label per row")
        order = check_order(order, n)
        Y = self._encode(y[order], first=True)
        y_test = np.asarray(y_test)
        if self.task != "regression":
            extra = np.setdiff1d(np.unique(y_test), self.classes_)
            if extra.size:
                raise ValueError(f"y_test: the test split has classes {extra.tolist()} that the "
                                 f"training split does not have ({self.classes_.tolist()})")
        ckpts = (log_checkpoints(len(order), int(self.batch_size)) if checkpoints is None
                 else np.asarray(checkpoints, dtype=np.int64))
        if order.size and (order.min() < 0 or order.max() >= n):
            raise ValueError("order must hold row indices of X")
        self._begin(X.shape[1], len(order), X)
        curve = self._train(X, order, Y, X_test, y_test, ckpts)
        warn_if_not_finite(curve.test_error, type(self).__name__, "test errors of the curve")
        return curve

    def _check_scale(self, X) -> None:
        """Data whose squared distances overflow, or a sigma for which the kernel is 1 on every
        pair of rows, are refused before training (``lsokl.compute.params``)."""
        if is_numpy(X):
            big = max_row_sqnorm(X)
        else:  # an Array API array: on its device
            xp = namespace(X)
            Xf = xp.astype(X, xp.float64)
            big = float(xp.max(xp.sum(Xf * Xf, axis=1)))
        check_row_norms(big)
        sigma = getattr(self, "sigma", None)
        if isinstance(sigma, (int, float)) and not isinstance(sigma, bool):
            check_width_for_data(type(self).__name__, float(sigma), big)

    def _test_metrics(self, S: np.ndarray, y_test: np.ndarray) -> tuple[float, float]:
        """(error or RMSE, MAE or nan) of test scores S."""
        S = to_numpy(S)
        if self.task == "regression":
            r = S[:, 0] + getattr(self, "offset_", 0.0) - y_test
            return float(np.sqrt(np.mean(r * r))), float(np.mean(np.abs(r)))
        if self.task == "binary":
            pred = self.classes_[(S[:, 0] > 0).astype(int)] if len(self.classes_) == 2 \
                else np.repeat(self.classes_, len(S))
        else:
            pred = self.classes_[np.argmax(S, axis=1)]
        return float(np.mean(pred != y_test)), float("nan")

    def _curve(self, seen, errs, maes, times, elapsed, test_time) -> Curve:
        return Curve(samples_seen=np.asarray(seen, np.int64), test_error=np.asarray(errs),
                     test_mae=np.asarray(maes) if self.task == "regression" else np.empty(0),
                     train_time=np.asarray(times), elapsed=elapsed, test_time=test_time,
                     steps=int(self.t_))


class BlockModel(MinibatchLearner):
    """Models that append one coefficient block per step and decay the older ones (DSG, kernel
    NORMA, kernel SDCA). A subclass's ``_step`` stores the block and returns the decay factor
    applied to the older blocks; ``_last_block_scores(X)`` is the new block's contribution to the
    scores of X, (n, K)."""

    def _train(self, X, order, Y, X_test, y_test, ckpts) -> Curve | None:
        """One pass over the stream ``X[order]`` (``Y`` aligned with the stream) with running
        scores (see the module docstring).

        The running scores are kept per distinct row, for the rows the stream still visits: rows
        are sorted by their last position in the stream, so after the step ending at position
        ``stop`` the rows to update are a suffix of that order (one slice, one GEMM). A single
        pass (``order`` a permutation) updates the rows not seen yet; a multi-pass stream (the
        MATLAB script cycles the data) updates every row until its last visit."""
        n_stream, b = len(order), int(self.batch_size)
        K = self._n_outputs
        last = np.full(X.shape[0], -1, dtype=np.int64)
        last[order] = np.arange(n_stream)  # numpy assigns in order: the last write wins
        rows = np.flatnonzero(last >= 0)
        rows = rows[np.argsort(last[rows], kind="stable")]
        Xr = take_rows(X, rows) if not np.array_equal(rows, np.arange(X.shape[0])) else X
        last_sorted = last[rows]
        where = np.empty(X.shape[0], dtype=np.int64)
        where[rows] = np.arange(len(rows))
        on_host = is_numpy(X)
        S = zeros_like_rows(X, len(rows), K)  # running scores, in the order of ``Xr``
        tests = HeldOutCurve(self, X, X_test, y_test, ckpts)
        elapsed = 0.0
        for a in range(0, n_stream, b):
            t0 = time.perf_counter()
            stop = min(a + b, n_stream)
            idx = order[a:stop]
            self.t_ += 1
            decay = self._step(self.t_, take_rows(X, idx), Y[a:stop], take_rows(S, where[idx]))
            k0 = int(np.searchsorted(last_sorted, stop))  # rows visited again at >= stop
            if k0 < len(rows):
                if on_host:
                    rest = S[k0:]
                    if decay != 1.0:
                        rest *= decay
                    rest += self._last_block_scores(Xr, k0)
                else:
                    S[k0:, ...] = S[k0:, ...] * decay + self._last_block_scores(Xr, k0)
            self.samples_seen_ = stop
            elapsed += time.perf_counter() - t0
            tests.after_step(stop, decay, elapsed)
        self.train_time_ = elapsed
        self._last = None  # the last block's scratch (W_t, alpha_t) is not model state
        return tests.curve(elapsed)


def zeros_like_rows(X, n: int, k: int):
    """An (n, k) float64 zero array in X's namespace, on X's device."""
    if is_numpy(X):
        return np.zeros((n, k))
    xp = namespace(X)
    return xp.zeros((n, k), dtype=xp.float64, device=device(X))


def decay_and_add(S, decay: float, add):
    """S * decay + add, in place for numpy (the numpy path's exact operations)."""
    if is_numpy(S):
        if decay != 1.0:
            S *= decay
        S += add
        return S
    return (S * decay if decay != 1.0 else S) + add


class HeldOutCurve:
    """The running test scores of a block model's pass and its curve (test error at the
    checkpoints of samples seen): after each step the test scores decay like the model and gain
    the new block's contribution; the time spent here is the pass's test time, not its training
    time. Shared by :class:`BlockModel`'s running-score driver and bounded DSG."""

    def __init__(self, learner, X, X_test, y_test, ckpts):
        self.learner, self.X_test, self.y_test, self.ckpts = learner, X_test, y_test, ckpts
        self.S = None if X_test is None else zeros_like_rows(X, X_test.shape[0], learner._n_outputs)
        self.seen, self.errs, self.maes, self.times = [], [], [], []
        self.test_time = 0.0
        self.k = 0

    def after_step(self, stop: int, decay: float, elapsed: float) -> None:
        if self.S is None:
            return
        t1 = time.perf_counter()
        self.S = decay_and_add(self.S, decay, self.learner._last_block_scores(self.X_test))
        while self.k < len(self.ckpts) and self.ckpts[self.k] <= stop:
            e, m = self.learner._test_metrics(self.S, self.y_test)
            self.seen.append(stop), self.errs.append(e), self.maes.append(m), self.times.append(elapsed)
            self.k += 1
        self.test_time += time.perf_counter() - t1

    def curve(self, elapsed: float):
        if self.S is None:
            return None
        return self.learner._curve(self.seen, self.errs, self.maes, self.times, elapsed, self.test_time)
