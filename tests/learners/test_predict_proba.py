"""Probabilities for the learners trained on a probabilistic loss (issue 25, item 3): DSG with the
logistic (binary) or softmax (multi-class) loss. Every other learner has no ``predict_proba``
attribute at all, as scikit-learn's SVC without ``probability=True``."""
from __future__ import annotations

import numpy as np
import pytest

from lsokl.learners import registry


@pytest.fixture(scope="module")
def blobs():
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]])
    y = np.repeat(np.array(["c", "a", "b"]), 120)  # string labels, not in sorted order
    X = centres[np.searchsorted(["a", "b", "c"], y)] + rng.standard_normal((len(y), 2))
    perm = rng.permutation(len(y))
    return X[perm], y[perm]


def test_binary_logistic_dsg_probabilities(blobs):
    X, y = blobs
    keep = y != "b"
    X, y = X[keep], y[keep]
    model = registry.create("dsg", "binary", loss="logistic", random_state=0).fit(X, y)
    P = model.predict_proba(X)
    assert P.shape == (len(X), 2) and model.classes_.tolist() == ["a", "c"]
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert np.all((P >= 0) & (P <= 1))
    np.testing.assert_array_equal(model.classes_[np.argmax(P, axis=1)], model.predict(X))
    # column 1 is classes_[1], the class a positive decision value means
    np.testing.assert_array_equal(P[:, 1] > 0.5, model.decision_function(X) > 0)
    np.testing.assert_allclose(model.predict_log_proba(X), np.log(P), rtol=1e-10, atol=1e-12)
    assert np.mean(model.predict(X) == y) > 0.9


def test_softmax_dsg_probabilities_follow_classes_order(blobs):
    X, y = blobs
    model = registry.create("dsg", "multiclass", random_state=0, batch_size=32,
                            block_features=32).fit(X, y)
    P = model.predict_proba(X)
    assert P.shape == (len(X), 3) and model.classes_.tolist() == ["a", "b", "c"]
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert np.array_equal(np.argmax(P, axis=1), np.argmax(model.decision_function(X), axis=1))
    np.testing.assert_array_equal(model.classes_[np.argmax(P, axis=1)], model.predict(X))
    np.testing.assert_allclose(model.predict_log_proba(X), np.log(P), rtol=1e-10, atol=1e-12)
    # each class's column is highest on that class's own points
    for k, label in enumerate(model.classes_):
        assert P[y == label, k].mean() > 0.6


@pytest.mark.parametrize("task, name, params", [
    ("binary", "dsg", {}),  # hinge (K-SVM), the binary default
    ("binary", "fogd", {}),
    ("multiclass", "bpas", {}),
    ("binary", "libsvm", {}),
    ("regression", "dsg", {}),
])
def test_learners_without_a_probabilistic_loss_have_no_predict_proba(task, name, params, blobs):
    model = registry.create(name, task, **params)
    assert not hasattr(model, "predict_proba") and not hasattr(model, "predict_log_proba")
