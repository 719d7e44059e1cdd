"""A fitted model that is a constant predictor on its own training data warns, naming the likely
cause (issue 25, item 2): the online learners through the degenerate-pass detector on their
training pass, the batch and mini-batch ones from their predictions on the training rows."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from lsokl.learners import registry
from lsokl.learners.base import ConstantPredictorWarning


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 3))
    return X, np.where(X[:, 0] + 0.3 * X[:, 1] > 0, 1, -1)


def test_online_pass_with_a_too_narrow_kernel_warns_about_the_width(data):
    """sigma = 1e-3 on unit-variance data: every kernel value between distinct points is 0, so
    f(x) = 0 and the learner predicts +1 at every step of its pass."""
    X, y = data
    with pytest.warns(ConstantPredictorWarning, match=r"constant predictor.*kernel width.*sigma_=0\.001"
                                                      r".*sigma='scale' gives"):
        registry.create("ogd", "binary", sigma=1e-3).fit(X, y)


def test_online_regression_constant_pass_warns(data):
    X, y = data
    with pytest.warns(ConstantPredictorWarning, match=r"constant prediction 0.*step size.*eta="):
        registry.create("ogd", "regression", sigma=1e-3).fit(X, X[:, 0] + 0.1 * X[:, 1])


def test_minibatch_model_predicting_one_class_warns(data):
    """DSG with a vanishing step size: every coefficient underflows to 0, so f = 0 and every
    training row gets the same class (the smallest positive float: the scores sum in float64,
    where a step of 1e-300 would still leave f's sign varying)."""
    X, y = data
    with pytest.warns(ConstantPredictorWarning, match=r"predicts class .* for every training row"):
        registry.create("dsg", "binary", theta=5e-324, random_state=0).fit(X, y)


def test_a_learner_that_learns_does_not_warn_and_neither_does_one_class(data):
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConstantPredictorWarning)
        registry.create("ogd", "binary").fit(X, y)
        registry.create("dsg", "binary", random_state=0).fit(X, y)
        registry.create("ogd", "binary", sigma=1e-3).fit(X, np.ones(len(X)))  # one class: right
        registry.create("ogd", "binary", sigma=1e-3).fit(X[:50], y[:50])  # too few rows to judge
