"""What the batch learners (``libsvm``, ``llsvm``) share: a scikit-learn classifier that fits on a
whole training set at once, with the parameter checks of the online learners and a hard time
limit.

Batch learners have no online pass (no ``run``/``partial_fit``), so they only serve the holdout
protocol; ``online = False`` is what the config layer and the protocols read to refuse them
elsewhere with a clear message.

Why a fork for the time limit: libsvm and LIBLINEAR spend their whole fit inside one C call that
never returns to the interpreter, so neither SIGALRM nor a thread can stop it. With
``time_limit`` set, ``fit`` runs the solver in a forked child (the data is shared copy-on-write,
nothing is pickled on the way in), receives the fitted model through a pipe, and kills the child
when the limit passes, raising :class:`FitTimeLimitError`, which the runner records as a failed
cell with that reason while the grid goes on.
"""
from __future__ import annotations

import os
import pickle
import select
import signal
import time
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from ...compute.params import Num

TIME_LIMIT = Num(0, np.inf, "neither", allow_none=True)


class FitTimeLimitError(TimeoutError):
    """A batch solver did not finish within its ``time_limit``."""


def call_with_time_limit(fn, seconds: float | None, what: str = "fit"):
    """``fn()`` in a forked child, its (picklable) result returned here; kill the child and raise
    :class:`FitTimeLimitError` after ``seconds``. ``None`` (or no ``fork``) calls ``fn()`` in
    this process."""
    if seconds is None or not hasattr(os, "fork"):
        return fn()
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run, send (ok, value) back, leave without running any cleanup
        code = 0
        try:
            os.close(read_fd)
            try:
                payload = pickle.dumps((True, fn()), protocol=pickle.HIGHEST_PROTOCOL)
            except BaseException as exc:  # noqa: BLE001 - the parent re-raises it
                code = 1
                try:
                    payload = pickle.dumps((False, exc))
                except Exception:  # an exception that does not pickle: send its text
                    payload = pickle.dumps((False, RuntimeError(f"{type(exc).__name__}: {exc}")))
            view = memoryview(payload)
            while view:
                view = view[os.write(write_fd, view):]
        finally:
            os._exit(code)
    os.close(write_fd)
    deadline = time.monotonic() + seconds
    chunks, finished = [], False
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            ready, _, _ = select.select([read_fd], [], [], left)
            if not ready:
                break
            data = os.read(read_fd, 1 << 20)
            if not data:  # EOF: the child wrote everything and exited
                finished = True
                break
            chunks.append(data)
    finally:
        os.close(read_fd)
        if not finished:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        os.waitpid(pid, 0)
    if not finished:
        raise FitTimeLimitError(f"{what} did not finish within the {seconds:g} s time limit")
    if not chunks:
        raise RuntimeError(f"{what}: the child process died without a result")
    ok, value = pickle.loads(b"".join(chunks))
    if not ok:
        raise value
    return value


class BatchClassifier(ClassifierMixin, BaseEstimator):
    """Base of the batch learners. A subclass sets ``name``, ``_params`` (parameter checks, as
    the online learners declare them) and implements ``fit``/``decision_function``."""

    name: ClassVar[str] = ""
    task: ClassVar[str] = "binary"
    online: ClassVar[bool] = False  # no online pass: holdout protocol only
    budgeted: ClassVar[bool] = False
    randomized: ClassVar[bool] = False
    _params: ClassVar[dict] = {}

    # scikit-learn estimator checks this learner is documented to fail: {check name: reason}.
    expected_failed_checks: ClassVar[dict] = {}
    multi_class: ClassVar[bool] = False  # False: fit refuses > 2 classes, with sklearn's wording
    # Non-empty = why the learner, at its default (paper) settings, scores below scikit-learn's
    # 0.83 bar in check_classifiers_train (the poor_score tag), as on the online learners.
    poor_score: ClassVar[str] = ""

    @property
    def gamma(self) -> float:
        """The fitted width as LIBSVM's gamma: exp(-gamma ||x - x'||^2), gamma = 1 / (2 sigma_^2)."""
        return 1.0 / (2.0 * float(self.sigma_) ** 2)

    def __sklearn_tags__(self):
        from ..base import LearnerTags

        base = super().__sklearn_tags__()
        tags = LearnerTags(**{f: getattr(base, f) for f in type(base).__dataclass_fields__})
        tags.input_tags.sparse = True  # validate_data(accept_sparse="csr") in fit and predict
        tags.classifier_tags.multi_class = self.multi_class
        tags.classifier_tags.poor_score = bool(self.poor_score)
        from ..base import expected_failures

        tags.expected_failed_checks = expected_failures(self)
        return tags

    def _validate_params(self) -> None:
        owner = type(self).__name__
        for pname, rule in self._params.items():
            rule.check(owner, pname, getattr(self, pname))

    def predict(self, X) -> np.ndarray:
        scores = self.decision_function(X)
        if scores.ndim == 1:  # the authors' tools: score > 0 gives the second label
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]
