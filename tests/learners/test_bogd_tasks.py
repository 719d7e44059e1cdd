"""Multi-class (spec 2.8) and regression (spec 3) BOGD: deterministic oldest removal, decay on
every step, no B/(B-1) factor; multi-class clips from above only. Hand-checked steps,
plain-Python reference, exact replay of the authors' runs (regression in both settings)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from lsokl.learners.online.bogd import MulticlassBOGD, RegressionBOGD
from lsokl.compute.randomness import ReplaySource
from reference_impl import authors_runs
from reference_impl import bogd_tasks as reference
from reference_impl.tasks_common import multiclass_stream, regression_stream, replay_authors_runs

HALF_SIGMA = 1.0 / math.sqrt(2.0 * math.log(2.0))  # kappa at distance 1 = 1/2


def test_multiclass_decay_oldest_removal_and_clip_from_above_by_hand():
    X = np.array([[0.0], [1.0], [1.0]])
    y = np.array([0, 1, 1])
    model = MulticlassBOGD(sigma=HALF_SIGMA, budget=1, eta=0.5, lam=0.2, gamma=0.8)
    model.partial_fit(X, y, classes=[0, 1, 2])
    # decay 1 - eta lam = .9, clip at eta gamma = .4 (from above only).
    # t=1: V = 0, correct, s = 1, l = 1: S = [x0 (.5, -.5, 0)].
    # t=2: V = (.25, -.25, 0), mistake, s = 0, l = 1.5: decay, drop x0, x1 (-.5, .5, 0) -> clip
    #      -> (-.5, .4, 0).
    # t=3: V = (-.5, .4, 0), correct, s = 2, l = .6: decay, drop x1, x2 (0, .5, -.5) -> (0, .4, -.5).
    assert model.counts_[1] == 1 and model.support_size_ == 1
    np.testing.assert_allclose(model.alpha_[0], [0.0, 0.4, -0.5], rtol=1e-15)


def test_regression_decay_and_oldest_removal_by_hand():
    X = np.array([[0.0], [1.0], [1.0]])
    y = np.array([0.4, 0.3, 0.0])
    model = RegressionBOGD(sigma=HALF_SIGMA, budget=1, eta=0.5, lam=0.2, epsilon=0.1)
    trace = model.run(X, y)
    # t=1: delta = .4: append .2.  t=2: f = .1, delta = .2: decay, drop x0, append .1.
    # t=3: f = .1, |delta| = .1 is not > eps: decay only -> .09.
    assert trace.mistakes == 2 and trace.support_size == 1
    np.testing.assert_array_equal(model.support_vectors(), [[1.0]])
    np.testing.assert_allclose(model.alpha_[0], 0.09, rtol=1e-14)
    assert trace.squared_loss == pytest.approx((0.16 + 0.04 + 0.01) / 3, rel=1e-14)


@pytest.mark.parametrize("gamma", [math.inf, 1.2])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_multiclass_matches_plain_python_reference(seed, gamma):
    X, y, order = multiclass_stream(seed)
    kw = dict(budget=9, eta=0.5, lam=0.05, gamma=gamma)
    model = MulticlassBOGD(sigma=1.0, **kw)
    trace = model.run(X, y, order)
    ref = reference.run_multiclass(X, y, order, sigma=1.0, n_classes=4, **kw)
    assert trace.mistakes == ref["mistakes"] and trace.support_size == ref["support_size"] == 9
    np.testing.assert_allclose(model.decision_function(X), ref["scores"], rtol=0, atol=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_regression_matches_plain_python_reference(seed):
    X, y, order = regression_stream(seed)
    kw = dict(budget=9, eta=0.3, lam=0.03, epsilon=0.05)
    model = RegressionBOGD(sigma=0.5, **kw)
    trace = model.run(X, y, order)
    ref = reference.run_regression(X, y, order, sigma=0.5, **kw)
    assert trace.mistakes == ref["mistakes"] and trace.support_size == ref["support_size"] == 9
    assert trace.squared_loss == pytest.approx(ref["squared_loss"], rel=1e-12)
    np.testing.assert_allclose(model.predict(X), ref["scores"], rtol=0, atol=1e-9)


def test_defaults_are_the_authors_script_values_and_deterministic():
    assert MulticlassBOGD().get_params() == {"sigma": "scale", "budget": 200, "eta": 0.5,
                                             "lam": 1e-5, "gamma": math.inf}
    assert RegressionBOGD().get_params() == {"sigma": "scale", "budget": 30, "eta": 0.1,
                                             "lam": 0.03, "epsilon": 0.1, "removal": "oldest",
                                             "random_state": None}
    assert not MulticlassBOGD.randomized


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_regression_uniform_removal_at_the_oldest_position_is_oldest_removal(seed):
    """Uniform removal draws a position in the oldest-first list; drawing position 1 every time
    must give exactly the authors' oldest removal."""
    X, y, order = regression_stream(seed)
    kw = dict(sigma=0.5, budget=9, eta=0.3, lam=0.03, epsilon=0.05)
    old = RegressionBOGD(**kw)
    t_old = old.run(X, y, order)
    uni = RegressionBOGD(removal="uniform", **kw)
    t_uni = uni.run(X, y, order, random_source=ReplaySource(positions=np.ones(len(order), int), budget=9))
    assert t_old.mistakes == t_uni.mistakes and t_old.support_size == t_uni.support_size == 9
    assert t_uni.squared_loss == t_old.squared_loss
    np.testing.assert_array_equal(uni.predict(X), old.predict(X))


def test_regression_uniform_removal_drops_the_drawn_position():
    """Drawing the newest position (B) every time keeps the first B-1 stored instances forever."""
    X, y, order = regression_stream(0)
    kw = dict(sigma=0.5, budget=4, eta=0.3, lam=0.03, epsilon=0.05)
    model = RegressionBOGD(removal="uniform", **kw)
    trace = model.run(X, y, order, random_source=ReplaySource(positions=np.full(len(order), 4), budget=4))
    # the stored instances, in order: replay the update condition with the oldest-removal learner's
    # own first steps (identical until the budget is first full)
    first = RegressionBOGD(**kw)
    stored = []
    for t in range(len(order)):
        before = first.support_size_ if t else 0
        first.partial_fit(X[order[t] : order[t] + 1], y[order[t] : order[t] + 1])
        if first.support_size_ > before:
            stored.append(order[t])
        if len(stored) == 3:
            break
    sv = model.support_vectors()
    assert trace.support_size == 4 and trace.mistakes > 4  # removals happened
    np.testing.assert_array_equal(sv[:3], X[stored])
    assert not np.array_equal(sv, first.support_vectors())


def test_regression_uniform_removal_is_seeded():
    """A seeded uniform-removal learner replays itself; another seed removes other SVs."""
    X, y, order = regression_stream(1)
    kw = dict(sigma=0.5, budget=5, eta=0.3, lam=0.03, epsilon=0.05, removal="uniform")
    a = RegressionBOGD(random_state=3, **kw).run(X, y, order).squared_loss
    b = RegressionBOGD(random_state=3, **kw).run(X, y, order).squared_loss
    c = RegressionBOGD(random_state=4, **kw).run(X, y, order).squared_loss
    assert a == b and a != c


# ----------------------------------------------------------------------------- authors' runs
@pytest.mark.shared_data
@pytest.mark.parametrize("dataset", ["dna", "satimage"])
def test_multiclass_replays_the_authors_runs_exactly(shared_data, reference_runs, dataset):
    replay_authors_runs(shared_data, reference_runs, "multiclass", dataset, "BOGD", MulticlassBOGD)


@pytest.mark.shared_data
@pytest.mark.parametrize("setting", ["script", "mat-eta"])
@pytest.mark.parametrize("dataset", ["housing", "mg"])
def test_regression_replays_the_authors_runs_exactly(shared_data, reference_runs, dataset, setting):
    """``mat-eta``: eta as stored in the .mat file (0.3 housing, 0.4 mg)."""
    eta = authors_runs.MAT_ETA[dataset] if setting == "mat-eta" else 0.1
    replay_authors_runs(shared_data, reference_runs, "regression", dataset, "BOGD",
                        lambda: RegressionBOGD(eta=eta), setting=setting)
