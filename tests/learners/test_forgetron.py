"""Forgetron (spec 1.4): hand-checked shrink (both variants), reference, exact authors' runs."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lsokl.learners.online.forgetron import PHI_FLOOR, Forgetron
from lsokl.learners.online.perceptron import KernelPerceptron
from reference_impl import authors_runs as authors
from reference_impl import forgetron as reference

HALF_SIGMA = 1.0 / math.sqrt(2.0 * math.log(2.0))  # kappa at distance 1 = 1/2, distance 2 = 1/16
SETTINGS = authors.BINARY_SETTINGS


def test_shrink_with_a_zero_leading_coefficient_by_hand():
    X = np.array([[0.0], [1.0]])
    y = np.array([1.0, -1.0])
    model = Forgetron(sigma=HALF_SIGMA, budget=1)
    trace = model.run(X, y)
    # t=1: f=0: sign +1 is right (M=0) but y f = 0 <= 0 still updates: S=[x0:+1].
    # t=2: f=1/2, mistake, M=1, budget full. r = x0, f'(x0) = 1 - 1/2 -> mu = 1/2, delta = 1,
    #      A = 1 - 2*1*1/2 = 0, B' = 2, C = 0 - 15/32 -> phi = 15/64;
    #      Q = phi^2 + 2 phi (1 - phi/2) = 15/32 (the constraint is tight).
    assert trace.mistakes == 1 and trace.support_size == 1
    np.testing.assert_allclose(model.alpha_[model.order_[:1]], [-15 / 64], rtol=1e-12)
    np.testing.assert_allclose(model.q_[0], 15 / 32, rtol=1e-12)


@pytest.mark.parametrize("variant, phi", [("faithful", 1.25), ("corrected", 0.75)])
def test_negative_leading_coefficient_root_choice_by_hand(variant, phi):
    X = np.array([[0.0], [100.0], [100.0]])  # kappa(0, 100) underflows to exactly 0 at sigma 1
    y = np.array([1.0, -1.0, 1.0])
    model = Forgetron(sigma=1.0, budget=2, variant=variant)
    trace = model.run(X, y)
    # t=1: f=0, no mistake, stored. t=2: f=0 -> +1, mistake (M=1), stored; budget full.
    # t=3: f=-1, mistake (M=2). r = x0: f'(x0) = 1 -> mu = 1, delta = 1:
    #      A = 1 - 2 = -1, B' = 2, C = -30/32; A + B' + C = 1/16 > 0, discriminant 4 - 3.75 = 1/4.
    #      faithful: (-2 - 1/2) / -2 = 1.25 (> 1, the authors' root); corrected: (-2 + 1/2) / -2 = 0.75.
    #      Either way Q = (phi)^2 + 2 phi (1 - phi) = 15/16 = 15/32 * M.
    assert trace.mistakes == 2 and trace.support_size == 2
    np.testing.assert_allclose(model.alpha_[model.order_[:2]], [-phi, phi], rtol=1e-12)
    np.testing.assert_allclose(model.q_[0], 15 / 16, rtol=1e-12)
    assert model.phi_range_[0] == model.phi_range_[1] == pytest.approx(phi, rel=1e-12)


@pytest.mark.parametrize("variant, phi", [("faithful", 2.0), ("corrected", PHI_FLOOR)])
def test_no_mistake_yet_leaves_no_room_to_shrink(variant, phi):
    """C = 0 (no sign mistake, because y f = 0 triggers updates): no phi in (0, 1] is feasible."""
    X = np.array([[0.0], [100.0]])
    y = np.array([1.0, 1.0])
    model = Forgetron(sigma=1.0, budget=1, variant=variant)
    trace = model.run(X, y)
    # t=2: f = 0, correct; A = 1 - 2 = -1, B' = 2, C = 0: roots 0 and 2.
    assert trace.mistakes == 0
    assert model.alpha_[model.order_[0]] == pytest.approx(phi, rel=1e-12)


def _random_stream(seed, n=150, d=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y, rng.permutation(n)


@pytest.mark.parametrize("variant", ["faithful", "corrected"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_plain_python_reference(seed, variant):
    X, y, order = _random_stream(seed)
    model = Forgetron(sigma=1.0, budget=8, variant=variant)
    trace = model.run(X, y, order)
    ref = reference.run(X, y, order, sigma=1.0, budget=8, variant=variant, phi_floor=PHI_FLOOR)
    assert trace.mistakes == ref["mistakes"]
    assert trace.support_size == ref["support_size"] == 8
    np.testing.assert_allclose(model.q_[0], ref["Q"], rtol=1e-9)
    np.testing.assert_allclose(model.decision_function(X), ref["scores"], rtol=0, atol=1e-9)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), budget=st.integers(1, 10), sigma=st.floats(0.3, 3.0))
def test_corrected_phi_stays_in_the_unit_interval_and_budget_holds(seed, budget, sigma):
    X, y, order = _random_stream(seed, n=80)
    model = Forgetron(sigma=sigma, budget=budget, variant="corrected")
    trace = model.run(X, y, order, n_checkpoints=len(y))
    assert trace.ckpt_support.max() <= budget
    if np.isfinite(model.phi_range_[0]):  # some shrink happened
        assert 0.0 < model.phi_range_[0] and model.phi_range_[1] <= 1.0
        # The constraint Q <= 15/32 M holds whenever a feasible phi existed (M >= 1 here).
        assert model.q_[0] <= 15 / 32 * trace.mistakes * (1 + 1e-9) or trace.mistakes == 0


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), variant=st.sampled_from(["faithful", "corrected"]))
def test_same_input_same_trace(seed, variant):
    X, y, order = _random_stream(seed, n=100)
    a, b = (Forgetron(sigma=1.0, budget=5, variant=variant) for _ in range(2))
    ta, tb = a.run(X, y, order), b.run(X, y, order)
    np.testing.assert_array_equal(ta.ckpt_mistakes, tb.ckpt_mistakes)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_a_budget_never_reached_is_the_perceptron_up_to_the_f0_trigger(seed):
    """With budget >= n nothing is shrunk or removed. The update fires on y f <= 0 rather than on
    a sign mistake; on continuous data f = 0 only at the empty model, so starting the stream
    with a -1 (a mistake at f = 0) makes the Forgetron the kernel Perceptron step for step."""
    X, y, order = _random_stream(seed, n=100)
    y[order[0]] = -1.0
    fg, perceptron = Forgetron(sigma=1.0, budget=len(y)), KernelPerceptron(sigma=1.0)
    tf, tp = fg.run(X, y, order, n_checkpoints=len(y)), perceptron.run(X, y, order, n_checkpoints=len(y))
    np.testing.assert_array_equal(tf.ckpt_mistakes, tp.ckpt_mistakes)
    np.testing.assert_array_equal(tf.ckpt_support, tp.ckpt_support)
    np.testing.assert_allclose(fg.decision_function(X), perceptron.decision_function(X), atol=1e-12)


@pytest.mark.parametrize("bad", [{"budget": 0}, {"sigma": 0.0}, {"variant": "fixed"}])
def test_invalid_parameters_are_named(bad):
    X, y, _ = _random_stream(0, n=10)
    (name,) = bad
    with pytest.raises(ValueError, match=f"'{name}' parameter of Forgetron"):
        Forgetron(**bad).run(X, y)


# ----------------------------------------------------------------------------- authors' runs
@pytest.mark.shared_data
@pytest.mark.parametrize("dataset", ["german", "spambase"])
@pytest.mark.parametrize("setting", ["paper", "script"])
def test_reproduces_the_authors_runs_exactly(shared_data, reference_runs, dataset, setting):
    """spambase perms 4 (script) and 20 (paper) hinge on near-cancelling sums whose sign depends
    on summation order; they match only because f is summed oldest first, as alpha * k_t is."""
    X, y, perms = authors.load(shared_data, dataset)
    rows = authors.rows(reference_runs, "binary", dataset, "Forgetron", setting)
    assert len(rows) == 20
    for row in rows.itertuples():
        trace = Forgetron(**SETTINGS[setting]).run(X, y, perms[row.perm - 1])
        authors.assert_same_binary_run(trace, row, checkpoints=False)
