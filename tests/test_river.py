"""The river adapter passes river's own estimator checks (skipped, saying why, without river)."""
from __future__ import annotations

import pytest

river = pytest.importorskip("river", reason="the optional 'river' extra is not installed")

from river import checks, datasets, evaluate, metrics, preprocessing  # noqa: E402

from lsokl.river import RiverClassifier, RiverRegressor  # noqa: E402

MODELS = [
    RiverClassifier("fogd", params={"sigma": 2.0, "budget": 20}, seed=1),
    RiverClassifier("perceptron", params={"sigma": 2.0}),  # unbudgeted: memory grows by design
    RiverClassifier("bpas", task="multiclass", params={"sigma": 2.0, "budget": 20}),
    RiverRegressor("nogd", params={"sigma": 2.0, "budget": 20}),
    RiverRegressor("fogd", params={"sigma": 2.0, "budget": 20}, seed=1),
]


def _cases():
    for model in MODELS:
        skips = model._unit_test_skips()
        for check in checks.yield_checks(model):
            marks = [pytest.mark.skip(reason="river's _unit_test_skips: unbudgeted learner")] \
                if check.__name__ in skips else []
            yield pytest.param(model, check, id=f"{model!r}-{check.__name__}", marks=marks)


@pytest.mark.parametrize("model, check", list(_cases()))
def test_river_check(model, check):
    check(model.clone())


def test_progressive_val_score_with_fogd_as_in_the_readme():
    model = preprocessing.StandardScaler() | RiverClassifier("fogd", params={"sigma": 4.0}, seed=0)
    metric = evaluate.progressive_val_score(datasets.Phishing(), model, metrics.Accuracy())
    assert metric.get() > 0.8  # majority class is 0.56; one pass of FOGD learns the stream


def test_multiclass_with_declared_classes_matches_partial_fit():
    import numpy as np

    from lsokl.learners import registry

    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0).astype(int)
    adapter = RiverClassifier("perceptron", task="multiclass", classes=(0, 1, 2), params={"sigma": 1.0})
    direct = registry.create("perceptron", "multiclass", sigma=1.0)
    for row, label in zip(X, y):
        x = {f"f{j}": v for j, v in enumerate(row)}
        assert adapter.predict_one(x) in (None, 0, 1, 2)
        adapter.learn_one(x, int(label))
        direct.partial_fit(row[None, :], [label], classes=[0, 1, 2])
    assert adapter._model.counts_.tolist() == direct.counts_.tolist()
    preds = [adapter.predict_one({f"f{j}": v for j, v in enumerate(row)}) for row in X]
    assert preds == direct.predict(X).tolist()


def test_non_numeric_feature_is_named():
    model = RiverClassifier("fogd")
    with pytest.raises(ValueError, match="'colour'"):
        model.learn_one({"colour": "red", "size": 1.0}, True)
