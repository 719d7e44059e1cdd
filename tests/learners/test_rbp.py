"""RBP (spec 1.3): hand-checked removal, plain-Python reference, replay of the authors' draws."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lsokl.learners.online.perceptron import KernelPerceptron
from lsokl.compute.randomness import ReplaySource
from lsokl.learners.online.rbp import RBP
from reference_impl import authors_runs as authors
from reference_impl import rbp as reference
from reference_impl.tasks_common import octave_draws

HALF_SIGMA = 1.0 / math.sqrt(2.0 * math.log(2.0))  # kappa at distance 1 = 1/2, distance 2 = 1/16
SETTINGS = authors.BINARY_SETTINGS


def test_removal_by_hand():
    X = np.array([[0.0], [1.0], [2.0], [1.0]])
    y = np.array([-1.0, 1.0, -1.0, 1.0])
    model = RBP(sigma=HALF_SIGMA, budget=2)
    trace = model.run(X, y, random_source=ReplaySource(positions=[2, 1], budget=2))
    # t=1: f=0 -> +1, mistake; S = [x0:-1].
    # t=2: f=-1/2 -> mistake; S = [x0:-1, x1:+1] (budget now full).
    # t=3: f = -1/16 + 1/2 > 0 -> mistake; draw 2 removes x1 (1-based, oldest first); S = [x0:-1, x2:-1].
    # t=4: f = -1/2 - 1/2 = -1 -> mistake; draw 1 removes x0; S = [x2:-1, x1:+1].
    assert trace.mistakes == 4 and trace.support_size == 2
    np.testing.assert_array_equal(model.support_vectors(), [[2.0], [1.0]])
    # f(0) = -1/16 + 1/2; f(2) = -1 + 1/2.
    np.testing.assert_allclose(model.decision_function(np.array([[0.0], [2.0]])), [0.4375, -0.5],
                               atol=1e-12)


def test_running_out_of_recorded_draws_fails_loudly():
    X = np.array([[0.0], [1.0], [2.0]])
    y = np.array([-1.0, 1.0, -1.0])
    with pytest.raises(ValueError, match="removal draw"):
        RBP(sigma=HALF_SIGMA, budget=2).run(X, y, random_source=ReplaySource(positions=[], budget=2))


def _random_stream(seed, n=150, d=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y, rng.permutation(n)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_plain_python_reference(seed):
    X, y, order = _random_stream(seed)
    budget = 7
    draws = np.random.default_rng(seed + 100).integers(0, budget, size=len(y))
    model = RBP(sigma=1.0, budget=budget)
    trace = model.run(X, y, order, random_source=ReplaySource(positions=draws + 1, budget=budget))
    ref = reference.run(X, y, order, sigma=1.0, budget=budget, draws=draws)
    assert trace.mistakes == ref["mistakes"]
    assert trace.support_size == ref["support_size"] == budget
    np.testing.assert_allclose(model.decision_function(X), ref["scores"], rtol=0, atol=1e-9)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), budget=st.integers(1, 12))
def test_budget_never_exceeded_at_any_step(seed, budget):
    X, y, order = _random_stream(seed, n=80)
    trace = RBP(sigma=1.0, budget=budget, random_state=seed).run(X, y, order, n_checkpoints=len(y))
    assert trace.ckpt_support.max() <= budget
    assert np.all(np.diff(trace.ckpt_support) >= 0)  # RBP never shrinks below the budget


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_same_seed_same_trace(seed):
    X, y, order = _random_stream(seed, n=100)
    a, b = (RBP(sigma=1.0, budget=5, random_state=seed) for _ in range(2))
    ta, tb = a.run(X, y, order), b.run(X, y, order)
    assert ta.mistakes == tb.mistakes
    np.testing.assert_array_equal(ta.ckpt_mistakes, tb.ckpt_mistakes)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_a_budget_never_reached_is_the_perceptron(seed):
    """With budget >= n no removal ever happens: RBP is the kernel Perceptron step for step."""
    X, y, order = _random_stream(seed, n=100)
    rbp, perceptron = RBP(sigma=1.0, budget=len(y), random_state=seed), KernelPerceptron(sigma=1.0)
    tr, tp = rbp.run(X, y, order, n_checkpoints=len(y)), perceptron.run(X, y, order, n_checkpoints=len(y))
    np.testing.assert_array_equal(tr.ckpt_mistakes, tp.ckpt_mistakes)
    np.testing.assert_array_equal(tr.ckpt_support, tp.ckpt_support)
    np.testing.assert_array_equal(rbp.decision_function(X), perceptron.decision_function(X))


@pytest.mark.parametrize("bad", [{"budget": 0}, {"budget": 2.5}, {"sigma": -1.0},
                                 {"random_state": -3}])
def test_invalid_parameters_are_named(bad):
    X, y, _ = _random_stream(0, n=10)
    (name,) = bad
    with pytest.raises(ValueError, match=f"'{name}' parameter of RBP"):
        RBP(**bad).run(X, y)


# ----------------------------------------------------------------------------- authors' runs
@pytest.mark.shared_data
@pytest.mark.parametrize("dataset", ["german", "spambase"])
@pytest.mark.parametrize("setting", ["paper", "script"])
def test_replays_the_authors_runs_exactly(shared_data, reference_runs, dataset, setting):
    """spambase/paper perms 4 and 20 hinge on near-cancelling sums whose sign depends on
    summation order; they match only because f is summed oldest first, as alpha * k_t is."""
    X, y, perms = authors.load(shared_data, dataset)
    cfg = SETTINGS[setting]
    rows = authors.rows(reference_runs, "binary", dataset, "RBP", setting)
    assert len(rows) == 20
    for row in rows.itertuples():
        draws = octave_draws(shared_data, cfg["budget"], int(row.seed))
        source = ReplaySource(positions=draws, budget=cfg["budget"])
        trace = RBP(**cfg).run(X, y, perms[row.perm - 1], random_source=source)
        authors.assert_same_binary_run(trace, row, checkpoints=False)
