"""Multi-class (spec 2.4) and regression (spec 3) Forgetron: hand-checked shrinks (incl. the
faithful A < 0 root), plain-Python reference, exact replay of the authors' runs."""
from __future__ import annotations

import math

import numpy as np
import pytest

from lsokl.learners.online.forgetron import MulticlassForgetron, RegressionForgetron
from reference_impl import forgetron_tasks as reference
from reference_impl.tasks_common import multiclass_stream, regression_stream, replay_authors_runs


@pytest.mark.parametrize("variant, phi", [("faithful", 1.25), ("corrected", 0.75)])
def test_multiclass_shrink_uses_the_true_class_score_by_hand(variant, phi):
    X = np.array([[0.0], [100.0]])  # kappa(0, 100) underflows to exactly 0 at sigma 1
    y = np.array([1, 2])
    model = MulticlassForgetron(sigma=1.0, budget=1, variant=variant)
    model.partial_fit(X, y, classes=[0, 1, 2])
    # t=1: V = 0 -> y_hat = 0, mistake (M=1), s = 0: S = [x0 (-1, +1, 0)], class 1.
    # t=2: V = 0 -> mistake (M=2), s = 0: x1 (-1, 0, +1); over budget, r = x0, c = 1:
    #      mu = f^1'(x0) = +1 (a score, not a margin), delta = |alpha_{1,x0}| = 1:
    #      A = -1, B' = 2, C = -15/16, A + B' + C > 0: faithful root 1.25, corrected 0.75.
    assert model.counts_[1] == 2 and model.support_size_ == 1
    np.testing.assert_allclose(model.alpha_[model.order_[0]], [-phi, 0.0, phi], rtol=1e-12)
    np.testing.assert_allclose(model.q_[0], 15 / 16, rtol=1e-12)


def test_regression_shrink_by_hand():
    X = np.array([[0.0], [0.0]])
    y = np.array([3.0, -3.0])
    model = RegressionForgetron(sigma=1.0, budget=1, eta=3.0, epsilon=0.1)
    trace = model.run(X, y)
    # t=1: +3.  t=2: f = 3, delta = -6: new coefficient -3; r = x0: mu = |3 - 3| = 0,
    #      delta_F = 3: A = 9, B' = 6, C = -15/16 -> phi = (-6 + sqrt(36 + 33.75)) / 18.
    phi = (-6 + math.sqrt(69.75)) / 18
    assert trace.mistakes == 2 and trace.support_size == 1
    np.testing.assert_allclose(model.alpha_[model.order_[0]], -3 * phi, rtol=1e-12)
    np.testing.assert_allclose(model.q_[0], 15 / 16, rtol=1e-12)


@pytest.mark.parametrize("variant", ["faithful", "corrected"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_multiclass_matches_plain_python_reference(seed, variant):
    X, y, order = multiclass_stream(seed)
    model = MulticlassForgetron(sigma=1.0, budget=8, variant=variant)
    trace = model.run(X, y, order)
    ref = reference.run_multiclass(X, y, order, sigma=1.0, n_classes=4, budget=8, variant=variant)
    assert trace.mistakes == ref["mistakes"] and trace.support_size == ref["support_size"] == 8
    np.testing.assert_allclose(model.q_[0], ref["Q"], rtol=1e-9)
    np.testing.assert_allclose(model.decision_function(X), ref["scores"], rtol=0, atol=1e-9)


@pytest.mark.parametrize("variant", ["faithful", "corrected"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_regression_matches_plain_python_reference(seed, variant):
    X, y, order = regression_stream(seed)
    kw = dict(budget=6, eta=0.5, epsilon=0.05)  # large steps so that phi < 1 occurs
    model = RegressionForgetron(sigma=0.5, variant=variant, **kw)
    trace = model.run(X, y, order)
    ref = reference.run_regression(X, y, order, sigma=0.5, variant=variant, **kw)
    assert trace.mistakes == ref["mistakes"] and trace.support_size == ref["support_size"] == 6
    assert trace.squared_loss == pytest.approx(ref["squared_loss"], rel=1e-12)
    np.testing.assert_allclose(model.q_[0], ref["Q"], rtol=1e-9)
    np.testing.assert_allclose(model.predict(X), ref["scores"], rtol=0, atol=1e-9)


def test_defaults_are_the_authors_script_values():
    assert MulticlassForgetron().get_params() == {"sigma": "scale", "budget": 200, "variant": "faithful"}
    assert RegressionForgetron().get_params() == {"sigma": "scale", "budget": 30, "eta": 0.1,
                                                  "epsilon": 0.1, "variant": "faithful"}


# ----------------------------------------------------------------------------- authors' runs
@pytest.mark.shared_data
@pytest.mark.parametrize("dataset", ["dna", "satimage"])
def test_multiclass_replays_the_authors_runs_exactly(shared_data, reference_runs, dataset):
    """The faithful A < 0 root (phi > 1) is exercised in these runs (reference README)."""
    replay_authors_runs(shared_data, reference_runs, "multiclass", dataset, "Forgetron", MulticlassForgetron)


@pytest.mark.shared_data
@pytest.mark.parametrize("dataset", ["housing", "mg"])
def test_regression_replays_the_authors_runs_exactly(shared_data, reference_runs, dataset):
    replay_authors_runs(shared_data, reference_runs, "regression", dataset, "Forgetron", RegressionForgetron)
