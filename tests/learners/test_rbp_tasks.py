"""Multi-class (spec 2.3) and regression (spec 3) RBP: hand-checked removals, plain-Python
reference, exact replay of the authors' runs from their recorded ``randperm`` draws (the j-th
removal of the run with seed = perm uses draws[j], a position in the oldest-first list)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from lsokl.compute.randomness import ReplaySource
from lsokl.learners.online.rbp import MulticlassRBP, RegressionRBP
from reference_impl import rbp_tasks as reference
from reference_impl.tasks_common import multiclass_stream, regression_stream, replay_authors_runs

HALF_SIGMA = 1.0 / math.sqrt(2.0 * math.log(2.0))  # kappa at distance 1 = 1/2, 2 -> 1/16


def _ordered_alpha(model):
    return model.alpha_[model.order_[: model.support_size_]]


def test_multiclass_removal_by_hand():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([1, 2, 0, 1])
    model = MulticlassRBP(sigma=HALF_SIGMA, budget=2)
    trace = model.run(X, y, random_source=ReplaySource(positions=[2, 1], budget=2))
    # t=1: V = 0 -> y_hat = 0, mistake, s = 0: S = [x0 (-1, 1, 0)].
    # t=2: V = (-1/2, 1/2, 0) -> mistake, s = 1: S = [x0, x1 (0, -1, 1)], budget full.
    # t=3: V = (-1/16, 1/16 - 1/2, 1/2) -> y_hat = 2, mistake, s = 2; draw 2 removes x1:
    #      S = [x0, x2 (1, 0, -1)].
    # t=4: V = (1/2 - 2^-9, 2^-9, -1/2) -> y_hat = 0, mistake, s = 0; draw 1 removes x0:
    #      S = [x2, x3 (-1, 1, 0)].
    assert trace.mistakes == 4 and trace.support_size == 2
    np.testing.assert_array_equal(model.support_vectors(), [[2.0], [3.0]])
    np.testing.assert_array_equal(_ordered_alpha(model), [[1, 0, -1], [-1, 1, 0]])


def test_regression_removal_by_hand():
    X = np.array([[0.0], [1.0], [2.0]])
    y = np.array([0.5, -0.5, 0.5])
    model = RegressionRBP(sigma=HALF_SIGMA, budget=2, eta=0.1, epsilon=0.1)
    trace = model.run(X, y, random_source=ReplaySource(positions=[1], budget=2))
    # t=1: +0.1.  t=2: f = .05, delta = -.55: -0.1 (budget full).
    # t=3: f = .1/16 - .05 < 0, delta > eps: draw 1 removes x0, append +0.1.
    assert trace.mistakes == 3 and trace.support_size == 2
    np.testing.assert_array_equal(model.support_vectors(), [[1.0], [2.0]])
    np.testing.assert_allclose(_ordered_alpha(model), [-0.1, 0.1])


def test_running_out_of_recorded_draws_fails_loudly():
    X = np.array([[0.0], [1.0], [2.0]])
    with pytest.raises(ValueError, match="removal draw"):
        MulticlassRBP(sigma=HALF_SIGMA, budget=1).run(
            X, np.array([1, 2, 0]), random_source=ReplaySource(positions=[], budget=1))
    with pytest.raises(ValueError, match="removal draw"):
        RegressionRBP(sigma=HALF_SIGMA, budget=1).run(
            X, np.array([0.5, -0.5, 0.5]), random_source=ReplaySource(positions=[], budget=1))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_multiclass_matches_plain_python_reference(seed):
    X, y, order = multiclass_stream(seed)
    budget = 9
    draws = np.random.default_rng(seed + 100).integers(0, budget, size=len(y))
    model = MulticlassRBP(sigma=1.0, budget=budget)
    trace = model.run(X, y, order, random_source=ReplaySource(positions=draws + 1, budget=budget))
    ref = reference.run_multiclass(X, y, order, sigma=1.0, n_classes=4, budget=budget, draws=draws)
    assert trace.mistakes == ref["mistakes"] and trace.support_size == ref["support_size"] == budget
    np.testing.assert_allclose(model.decision_function(X), ref["scores"], rtol=0, atol=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_regression_matches_plain_python_reference(seed):
    X, y, order = regression_stream(seed)
    budget = 9
    draws = np.random.default_rng(seed + 100).integers(0, budget, size=len(y))
    model = RegressionRBP(sigma=0.5, budget=budget)
    trace = model.run(X, y, order, random_source=ReplaySource(positions=draws + 1, budget=budget))
    ref = reference.run_regression(X, y, order, sigma=0.5, budget=budget, eta=0.1, epsilon=0.1,
                                   draws=draws)
    assert trace.mistakes == ref["mistakes"] and trace.support_size == ref["support_size"] == budget
    assert trace.squared_loss == pytest.approx(ref["squared_loss"], rel=1e-12)
    np.testing.assert_allclose(model.predict(X), ref["scores"], rtol=0, atol=1e-9)


def test_seeded_runs_repeat_and_defaults_are_the_scripts():
    X, y, order = multiclass_stream(4)
    a, b = (MulticlassRBP(sigma=1.0, budget=5, random_state=3).run(X, y, order) for _ in range(2))
    np.testing.assert_array_equal(a.ckpt_mistakes, b.ckpt_mistakes)
    assert MulticlassRBP().budget == 200
    assert RegressionRBP().get_params() == {"sigma": "scale", "budget": 30, "eta": 0.1,
                                            "epsilon": 0.1, "random_state": None}


# ----------------------------------------------------------------------------- authors' runs
@pytest.mark.shared_data
@pytest.mark.parametrize("dataset", ["dna", "satimage"])
def test_multiclass_replays_the_authors_runs_exactly(shared_data, reference_runs, dataset):
    replay_authors_runs(shared_data, reference_runs, "multiclass", dataset, "RBP", MulticlassRBP,
                        draws_budget=200)


@pytest.mark.shared_data
@pytest.mark.parametrize("dataset", ["housing", "mg"])
def test_regression_replays_the_authors_runs_exactly(shared_data, reference_runs, dataset):
    replay_authors_runs(shared_data, reference_runs, "regression", dataset, "RBP", RegressionRBP,
                        draws_budget=30)
