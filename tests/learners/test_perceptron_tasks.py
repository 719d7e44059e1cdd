"""Multi-class (spec 2.1) and regression (spec 3) Perceptron: hand-checked steps, plain-Python
reference, exact replay of the authors' dna/satimage and housing/mg runs."""
from __future__ import annotations

import math

import numpy as np
import pytest

from lsokl.learners.online.perceptron import MulticlassPerceptron, RegressionPerceptron
from reference_impl import perceptron_tasks as reference
from reference_impl.tasks_common import multiclass_stream, regression_stream, replay_authors_runs

HALF_SIGMA = 1.0 / math.sqrt(2.0 * math.log(2.0))  # kappa at distance 1 = 1/2


def test_multiclass_steps_and_lowest_index_ties_by_hand():
    X = np.array([[0.0], [1.0], [0.0]])
    y = np.array([1, 2, 0])
    model = MulticlassPerceptron(sigma=HALF_SIGMA)
    trace = model.run(X, y)
    # t=1: V = 0 -> y_hat = 0 (lowest of a 3-way tie), mistake; s = 0 (tie of 0 and 2): x0 (-1, +1, 0).
    # t=2: V = (-1/2, 1/2, 0) -> y_hat = 1, mistake; s = 1: x1 (0, -1, +1).
    # t=3: V = (-1, 1/2, 1/2): classes 1 and 2 tie, y_hat = 1, mistake; s = 1: x2 (+1, -1, 0).
    assert trace.mistakes == 3 and trace.support_size == 3
    np.testing.assert_array_equal(model.alpha_[:3], [[-1, 1, 0], [0, -1, 1], [1, -1, 0]])
    np.testing.assert_allclose(model.decision_function(np.array([[0.0]])), [[0.0, -0.5, 0.5]],
                               atol=1e-15)
    assert model.predict(np.array([[0.0]]))[0] == 2


def test_regression_steps_by_hand():
    X = np.array([[0.0], [1.0], [0.0]])
    y = np.array([0.5, 0.05, -0.5])
    model = RegressionPerceptron(sigma=HALF_SIGMA, eta=0.1, epsilon=0.1)
    trace = model.run(X, y, n_checkpoints=3)
    # t=1: f = 0, delta = 0.5 > eps: append +0.1.  t=2: f = 0.05 = y: no event.
    # t=3: f = 0.1, delta = -0.6: append -0.1.
    assert trace.mistakes == 2 and trace.support_size == 2
    np.testing.assert_allclose(model.alpha_[:2], [0.1, -0.1])
    np.testing.assert_allclose(trace.ckpt_squared_loss, [0.25, 0.125, (0.25 + 0.36) / 3], rtol=1e-14)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_multiclass_matches_plain_python_reference(seed):
    X, y, order = multiclass_stream(seed)
    model = MulticlassPerceptron(sigma=1.0)
    trace = model.run(X, y, order)
    ref = reference.run_multiclass(X, y, order, sigma=1.0, n_classes=4)
    assert trace.mistakes == ref["mistakes"] and trace.support_size == ref["support_size"]
    np.testing.assert_allclose(model.decision_function(X), ref["scores"], rtol=0, atol=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_regression_matches_plain_python_reference(seed):
    X, y, order = regression_stream(seed)
    model = RegressionPerceptron(sigma=0.5, eta=0.1, epsilon=0.1)
    trace = model.run(X, y, order)
    ref = reference.run_regression(X, y, order, sigma=0.5, eta=0.1, epsilon=0.1)
    assert trace.mistakes == ref["mistakes"] and trace.support_size == ref["support_size"]
    assert trace.squared_loss == pytest.approx(ref["squared_loss"], rel=1e-12)
    np.testing.assert_allclose(model.predict(X), ref["scores"], rtol=0, atol=1e-9)


def test_defaults_are_the_authors_script_values():
    assert MulticlassPerceptron().get_params() == {"sigma": "scale"}
    assert RegressionPerceptron().get_params() == {"sigma": "scale", "eta": 0.1, "epsilon": 0.1}


# ----------------------------------------------------------------------------- authors' runs
@pytest.mark.shared_data
@pytest.mark.parametrize("dataset", ["dna", "satimage"])
def test_multiclass_replays_the_authors_runs_exactly(shared_data, reference_runs, dataset):
    replay_authors_runs(shared_data, reference_runs, "multiclass", dataset, "Perceptron", MulticlassPerceptron)


@pytest.mark.shared_data
@pytest.mark.parametrize("dataset", ["housing", "mg"])
def test_regression_replays_the_authors_runs_exactly(shared_data, reference_runs, dataset):
    """The real ``perceptron.m`` row (the script's "OGD" row is a copy of it)."""
    replay_authors_runs(shared_data, reference_runs, "regression", dataset, "Perceptron", RegressionPerceptron)
