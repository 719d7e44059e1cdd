"""Any lsokl learner as a river estimator: ``learn_one`` / ``predict_one`` on feature dicts.

Needs the optional ``river`` extra (``pip install "lsokl[river]"``)::

    from river import datasets, evaluate, metrics, preprocessing
    from lsokl.river import RiverClassifier

    model = preprocessing.StandardScaler() | RiverClassifier("fogd", params={"sigma": 4.0})
    evaluate.progressive_val_score(datasets.Phishing(), model, metrics.Accuracy())

What river's dicts need that lsokl's arrays do not have, and how the adapter bridges it:

* Features are named, may appear late or go missing. The column order is fixed by ``features``
  or, by default, by the keys of the first learned ``x`` (sorted, so the order of a dict's keys
  never matters); a missing feature counts as 0 (as in a sparse row) and a key not in that set
  is ignored: a kernel model's input dimension cannot grow mid-stream.
* Labels appear as the stream goes. Binary learners (``task="binary"``, the default) map the
  positive label (``True``, ``classes[1]``, or else the second label seen) to +1. Multi-class
  learners need the number of classes when they are allocated (``classes=`` as for
  ``partial_fit``); without it the model has ``max_classes`` class slots, given to labels in order
  of appearance, and predicts only among labels already seen. Unused slots still take part in
  the multi-class update (as the best wrong class), so pass ``classes`` for the exact algorithm.
* Each ``learn_one`` is one strict online step (predict, count, update) through the learner's
  ``partial_fit``; per call, scikit-learn's validation costs far more than the step itself, so
  for speed on whole data sets use ``learner.run`` or ``lsokl run``.

No lsokl learner models probabilities, so ``predict_proba_one`` raises ``NotImplementedError``
(river's convention for "not available") and ``predict_one`` returns the predicted label; before
any label is seen it returns None (classifier) or 0.0 (regressor).
"""
from __future__ import annotations

import numpy as np

try:
    from river import base as _river_base
except ImportError as exc:  # pragma: no cover - exercised without the extra installed
    raise ImportError("lsokl.river needs river: pip install 'lsokl[river]'") from exc

from .learners import registry

__all__ = ["RiverClassifier", "RiverRegressor"]


class _Adapter:
    """Shared parts: parameters, the lsokl learner, the feature columns."""

    _task = "binary"

    def _learner_params(self) -> dict:
        params = dict(self.params or {})
        cls = registry.get(self.learner, self._task)
        if self.seed is not None and "random_state" in cls._get_param_names():
            params.setdefault("random_state", self.seed)
        return params

    @property
    def _is_stochastic(self) -> bool:
        return registry.get(self.learner, self._task).randomized

    def _unit_test_skips(self) -> set:
        # river's documented way to skip a check: an unbudgeted learner (kernel Perceptron, OGD,
        # NORMA, Pegasos) stores a support vector per mistake by design, so its memory grows
        # with the stream.
        if not getattr(registry.get(self.learner, self._task), "budgeted", True):
            return {"check_bounded_memory_growth"}
        return set()

    def _row(self, x: dict) -> np.ndarray:
        row = np.zeros((1, len(self._columns)))
        for key, value in x.items():
            j = self._columns.get(key)
            if j is not None:
                try:
                    row[0, j] = float(value)
                except (TypeError, ValueError):
                    raise ValueError(f"feature {key!r} = {value!r} is not a number; lsokl learners "
                                     "take numeric features (encode categories first, e.g. "
                                     "river.preprocessing.OneHotEncoder)") from None
        return row

    def _fix_columns(self, x: dict) -> None:
        if getattr(self, "_columns", None) is None:
            names = self.features if self.features is not None else sorted(x, key=repr)
            self._columns = {name: j for j, name in enumerate(names)}
            self._model = registry.create(self.learner, self._task, **self._learner_params())


class RiverClassifier(_Adapter, _river_base.Classifier):
    """A registered lsokl learner (binary or multi-class) as a river classifier.

    Parameters
    ----------
    learner
        Registered name, e.g. ``"fogd"``, ``"nogd"``, ``"projectron++"`` (``lsokl algorithms``).
    params
        Its parameters, e.g. ``{"sigma": 4.0, "budget": 100}``; the paper's defaults otherwise.
    task
        ``"binary"`` or ``"multiclass"``.
    classes
        Every label the stream will show (as for ``partial_fit``); required for the exact
        multi-class algorithm, else labels get class slots in order of appearance.
    max_classes
        Class slots of a multi-class learner when ``classes`` is not given.
    features
        Feature names, in the column order the learner sees; default: the first learned x's keys.
    seed
        ``random_state`` of randomized learners (FOGD's frequencies, RBP's removals).
    """

    def __init__(self, learner: str = "fogd", params: dict | None = None, task: str = "binary",
                 classes: tuple | None = None, max_classes: int = 16,
                 features: tuple | None = None, seed: int | None = None):
        self.learner = learner
        self.params = params
        self.task = task
        self.classes = classes
        self.max_classes = max_classes
        self.features = features
        self.seed = seed
        self._columns = None
        self._model = None
        self._labels: list = list(classes) if classes is not None else []

    @property
    def _task(self) -> str:
        return self.task

    @property
    def _multiclass(self) -> bool:
        return self.task == "multiclass"

    @classmethod
    def _unit_test_params(cls):
        yield {"learner": "fogd", "params": {"sigma": 2.0, "budget": 20}}
        yield {"learner": "bpas", "task": "multiclass", "params": {"sigma": 2.0, "budget": 20}}

    # --------------------------------------------------------------- labels
    def _positive(self):
        if self.classes is not None:
            return self.classes[1]
        if any(isinstance(label, (bool, np.bool_)) for label in self._labels):
            return True
        return self._labels[1] if len(self._labels) > 1 else None

    def _code(self, y):
        if y not in self._labels:
            if self.classes is not None:
                raise ValueError(f"label {y!r} is not among classes={self.classes!r}")
            limit = 2 if self.task == "binary" else self.max_classes
            if len(self._labels) >= limit:
                raise ValueError(f"more than {limit} labels in the stream; "
                                 + ("use task='multiclass'" if self.task == "binary" else
                                    "raise max_classes or pass classes"))
            self._labels.append(y)
        if self.task == "binary":
            return 1 if y == self._positive() else -1
        return self._labels.index(y)

    def _all_codes(self) -> list:
        if self.task == "binary":
            return [-1, 1]
        return list(range(len(self.classes) if self.classes is not None else self.max_classes))

    # --------------------------------------------------------------- river API
    def learn_one(self, x: dict, y) -> None:
        self._fix_columns(x)
        code = self._code(y)
        self._model.partial_fit(self._row(x), [code], classes=self._all_codes())

    def predict_one(self, x: dict):
        if self._model is None or not self._labels:
            return None
        if getattr(self._model, "counts_", None) is None:
            return self._labels[0]
        scores = self._model.decision_function(self._row(x))
        if self.task == "binary":
            positive = self._positive()
            if float(scores[0]) >= 0.0:  # sign(0) = +1, as the learners predict
                return positive if positive is not None else self._labels[0]
            negatives = [label for label in self._labels if label != positive]
            return negatives[0] if negatives else positive
        scores = np.atleast_1d(scores[0])
        if scores.shape[0] == 1:  # two class slots: the learner returns V_1 - V_0
            scores = np.array([0.0, scores[0]])
        seen = scores[: len(self._labels)]  # slots of labels seen so far
        return self._labels[int(np.argmax(seen))]


class RiverRegressor(_Adapter, _river_base.Regressor):
    """A registered lsokl regression learner as a river regressor.

    Parameters are those of :class:`RiverClassifier` without the label ones.
    """

    _task = "regression"

    def __init__(self, learner: str = "fogd", params: dict | None = None,
                 features: tuple | None = None, seed: int | None = None):
        self.learner = learner
        self.params = params
        self.features = features
        self.seed = seed
        self._columns = None
        self._model = None

    @classmethod
    def _unit_test_params(cls):
        yield {"learner": "fogd", "params": {"sigma": 2.0, "budget": 20}}

    def learn_one(self, x: dict, y) -> None:
        self._fix_columns(x)
        self._model.partial_fit(self._row(x), [float(y)])

    def predict_one(self, x: dict) -> float:
        if self._model is None or getattr(self._model, "counts_", None) is None:
            return 0.0
        return float(self._model.predict(self._row(x))[0])
