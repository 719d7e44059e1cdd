"""Probabilities a user can work with: softmax DSG under its usual name, and calibrated
probabilities for the margin learners through scikit-learn's CalibratedClassifierCV."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV

from lsokl.learners import create


def _blobs(k, n=240, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    X = rng.standard_normal((n, 2)) * 0.4 + np.stack([np.cos(y), np.sin(y)], axis=1) * 2
    return X, y


def test_softmax_is_the_multiclass_logistic_loss():
    X, y = _blobs(3)
    params = dict(batch_size=16, block_features=16, random_state=0)
    soft = create("dsg", "multiclass", loss="softmax", **params).fit(X, y)
    logi = create("dsg", "multiclass", loss="logistic", **params).fit(X, y)
    P = soft.predict_proba(X)
    assert P.shape == (len(X), 3) and np.allclose(P.sum(axis=1), 1.0)
    np.testing.assert_array_equal(P, logi.predict_proba(X))
    np.testing.assert_array_equal(soft.predict(X), soft.classes_[P.argmax(axis=1)])


def test_softmax_is_refused_for_binary_naming_the_task_that_has_it():
    X, y = _blobs(2)
    with pytest.raises(ValueError, match="'softmax' needs a multiclass dataset"):
        create("dsg", "binary", loss="softmax").fit(X, np.where(y == 1, 1, -1))


@pytest.mark.parametrize("name", ["fogd", "nogd", "bsgd-m"])
def test_margin_learners_give_probabilities_through_calibration(name):
    X, y = _blobs(2, n=300)
    model = CalibratedClassifierCV(create(name, "binary"), cv=3).fit(X, y)
    P = model.predict_proba(X)
    assert P.shape == (len(X), 2) and np.allclose(P.sum(axis=1), 1.0)
    assert np.all((P >= 0) & (P <= 1))
    # the probabilities order the rows as the margins do: class 1's rows get the higher ones
    assert P[y == 1, 1].mean() > P[y == 0, 1].mean() + 0.3
