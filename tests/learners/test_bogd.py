"""BOGD (spec 1.8): hand-checked update, reference, replay of the authors' Octave draws."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lsokl.learners.online.bogd import BOGD
from lsokl.learners.online.ogd import KernelOGD
from lsokl.compute.randomness import ReplaySource
from reference_impl import authors_runs as authors
from reference_impl import bogd as reference
from reference_impl.tasks_common import octave_draws

HALF_SIGMA = 1.0 / math.sqrt(2.0 * math.log(2.0))  # kappa at distance 1 = 1/2, distance 2 = 1/16
SETTINGS = authors.BINARY_SETTINGS


def test_margin_of_exactly_one_updates_and_larger_margins_decay():
    X = np.zeros((3, 1))
    y = np.ones(3)
    model = BOGD(sigma=1.0, budget=5, eta=1.0, lam=0.1)
    trace = model.run(X, y)
    # t=1: f=0 -> store with eta y = 1. t=2: f=1, y f = 1 <= 1 still updates (OGD would not):
    # alpha = [0.9 * 1, 1]. t=3: f = 1.9 > 1: decay only, alpha = [0.81, 0.9].
    assert trace.mistakes == 0 and trace.support_size == 2 and model.counts_[2] == 2
    np.testing.assert_allclose(model.alpha_[model.order_[:2]], [0.81, 0.9], rtol=1e-12)


def test_removal_rescaling_and_clipping_by_hand():
    X = np.array([[0.0], [1.0], [2.0]])
    y = np.array([1.0, -1.0, 1.0])
    model = BOGD(sigma=HALF_SIGMA, budget=2, eta=0.5, lam=0.1, gamma=1.5)
    trace = model.run(X, y, random_source=ReplaySource(positions=[1], budget=2))
    # decay 1 - eta lam = 0.95; unbiasing B (1 - lam eta) / (B - 1) = 1.9; cap eta gamma = 0.75.
    # t=1: f=0, correct; store x0 with 0.5.
    # t=2: f = 0.5/2 = 0.25 -> mistake; alpha = [0.95 * 0.5, -0.5] = [0.475, -0.5].
    # t=3: f = 0.475/16 - 0.5/2 < 0 -> mistake; budget full: alpha * 1.9 = [0.9025, -0.95];
    #      draw 1 removes x0; append 0.5: [-0.95, 0.5]; max |alpha| = 0.95 > 0.75, so the whole
    #      vector is scaled by 0.75/0.95: [-0.75, 0.5 * 0.75 / 0.95].
    assert trace.mistakes == 2 and trace.support_size == 2
    np.testing.assert_array_equal(model.support_vectors(), [[1.0], [2.0]])
    np.testing.assert_allclose(model.alpha_[model.order_[:2]], [-0.75, 0.5 * 0.75 / 0.95], rtol=1e-12)


def _random_stream(seed, n=150, d=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y, rng.permutation(n)


@pytest.mark.parametrize("gamma", [10.0, 1.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_plain_python_reference(seed, gamma):
    X, y, order = _random_stream(seed)
    budget = 9
    draws = np.random.default_rng(seed + 100).integers(0, budget, size=len(y))
    model = BOGD(sigma=1.0, budget=budget, eta=0.3, gamma=gamma)
    trace = model.run(X, y, order, random_source=ReplaySource(positions=draws + 1, budget=budget))
    assert model.lam_ == 1.0 / len(y) ** 2  # lam=None: the authors' 1/n^2
    ref = reference.run(X, y, order, sigma=1.0, budget=budget, eta=0.3, lam=model.lam_,
                        gamma=gamma, draws=draws)
    assert trace.mistakes == ref["mistakes"]
    assert trace.support_size == ref["support_size"] == budget
    np.testing.assert_allclose(model.decision_function(X), ref["scores"], rtol=0, atol=1e-9)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), budget=st.integers(2, 12), gamma=st.floats(0.5, 20.0))
def test_budget_and_clipping_hold_at_every_step(seed, budget, gamma):
    X, y, order = _random_stream(seed, n=80)
    model = BOGD(sigma=1.0, budget=budget, eta=0.5, gamma=gamma, random_state=seed)
    trace = model.run(X, y, order, n_checkpoints=len(y))
    assert trace.ckpt_support.max() <= budget
    if trace.support_size == budget and model.counts_[2] > budget:  # at least one clip applied
        assert np.abs(model.alpha_).max() <= 0.5 * gamma * (1 + 1e-12)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_same_seed_same_trace(seed):
    X, y, order = _random_stream(seed, n=100)
    a, b = (BOGD(sigma=1.0, budget=5, random_state=seed) for _ in range(2))
    ta, tb = a.run(X, y, order), b.run(X, y, order)
    np.testing.assert_array_equal(ta.ckpt_mistakes, tb.ckpt_mistakes)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), eta=st.floats(0.05, 1.0))
def test_a_budget_never_reached_without_decay_is_kernel_ogd(seed, eta):
    """With budget >= n there is no removal, rescaling or clipping, and lam = 0 removes the
    decay: BOGD is kernel OGD except for its y f <= 1 trigger, which differs from OGD's < 1
    only on the measure-zero event y f == 1 (never hit by continuous data)."""
    X, y, order = _random_stream(seed, n=100)
    bogd, ogd = BOGD(sigma=1.0, budget=len(y), eta=eta, lam=0.0), KernelOGD(sigma=1.0, eta=eta)
    tb, to = bogd.run(X, y, order, n_checkpoints=len(y)), ogd.run(X, y, order, n_checkpoints=len(y))
    np.testing.assert_array_equal(tb.ckpt_mistakes, to.ckpt_mistakes)
    np.testing.assert_array_equal(tb.ckpt_support, to.ckpt_support)
    np.testing.assert_allclose(bogd.decision_function(X), ogd.decision_function(X), atol=1e-12)


@pytest.mark.parametrize("bad", [{"budget": 1}, {"eta": -1.0}, {"lam": -0.5}, {"gamma": 0.0},
                                 {"sigma": 0.0}, {"random_state": 1.5}])
def test_invalid_parameters_are_named(bad):
    X, y, _ = _random_stream(0, n=10)
    (name,) = bad
    with pytest.raises(ValueError, match=f"'{name}' parameter of BOGD"):
        BOGD(**bad).run(X, y)


# ----------------------------------------------------------------------------- authors' runs
@pytest.mark.shared_data
@pytest.mark.parametrize("dataset", ["german", "spambase"])
@pytest.mark.parametrize("setting", ["paper", "script"])
def test_replays_the_authors_runs_exactly(shared_data, reference_runs, dataset, setting):
    X, y, perms = authors.load(shared_data, dataset)
    cfg = SETTINGS[setting]
    rows = authors.rows(reference_runs, "binary", dataset, "BOGD", setting)
    assert len(rows) == 20
    for row in rows.itertuples():
        draws = octave_draws(shared_data, cfg["budget"], int(row.seed))
        source = ReplaySource(positions=draws, budget=cfg["budget"])
        trace = BOGD(**cfg, eta=0.2, gamma=10.0).run(X, y, perms[row.perm - 1], random_source=source)
        assert trace.n_samples == len(y)  # lam = 1/n^2 as in the scripts
        authors.assert_same_binary_run(trace, row, checkpoints=False)
