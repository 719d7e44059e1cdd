"""BPA-S (spec 1.7): hand-checked replacement, reference, authors' runs (exact where robust)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lsokl.learners.online.bpas import BPAS
from reference_impl import authors_runs as authors
from reference_impl import bpas as reference

SETTINGS = authors.BINARY_SETTINGS


def test_replacement_by_hand():
    X = np.array([[0.0], [100.0], [0.0]])  # kappa(0, 100) underflows to exactly 0 at sigma 1
    y = np.array([1.0, -1.0, -1.0])
    model = BPAS(sigma=1.0, budget=2, C=1.0)
    trace = model.run(X, y)
    # t=1: f=0, loss 1 -> tau = min(C, 1) = 1: S = [x0: +1].
    # t=2: f=0 -> +1, mistake; loss 1: S = [x0: +1, x100: -1]; budget full.
    # t=3: f = 1 (only x0 sees it), mistake; loss 2, tau = min(1, 2) = 1.
    #   r=x0:   beta = 1*1 - 1 = 0, dist = 1 + 0 - 0 = 1, f_r = 1 - 1 + 0 = 0, loss 1 -> Q = 1.5
    #   r=x100: beta = -1*0 - 1 = -1, dist = 1 + 1 - 0 = 2, f_r = 1 - 0 - 1 = 0, loss 1 -> Q = 2
    #   x0 is replaced in place by x_t = 0 with coefficient 0.
    assert trace.mistakes == 2 and trace.support_size == 2
    np.testing.assert_array_equal(model.sv_[:2], [[0.0], [100.0]])
    np.testing.assert_array_equal(model.alpha_[:2], [0.0, -1.0])


def test_ties_go_to_the_first_candidate():
    X = np.array([[0.0], [100.0], [200.0]])  # all kernel values between distinct points are 0
    y = np.array([1.0, 1.0, -1.0])
    model = BPAS(sigma=1.0, budget=2)
    model.run(X, y)
    # t=3: f=0, loss 1, tau 1; both candidates: beta = -1, dist = 1 + 1 = 2, f_r = -1, loss 0 -> Q = 1.
    # The strict < keeps the first: x0 is replaced.
    np.testing.assert_array_equal(model.sv_[:2], [[200.0], [100.0]])
    np.testing.assert_array_equal(model.alpha_[:2], [-1.0, 1.0])


def _random_stream(seed, n=150, d=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y, rng.permutation(n)


@pytest.mark.parametrize("C", [1.0, 0.3])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_plain_python_reference(seed, C):
    X, y, order = _random_stream(seed)
    model = BPAS(sigma=1.0, budget=8, C=C)
    trace = model.run(X, y, order)
    ref = reference.run(X, y, order, sigma=1.0, budget=8, C=C)
    assert trace.mistakes == ref["mistakes"]
    assert trace.support_size == ref["support_size"] == 8
    np.testing.assert_allclose(model.decision_function(X), ref["scores"], rtol=0, atol=1e-9)


def _kernel_pa1(X, y, order, sigma, C):
    """Unbudgeted kernel PA-I: every loss > 0 stores x with y min(C, loss / kappa(x, x))."""
    svs, alpha, mistakes = [], [], 0
    for i in order:
        f = sum(a * math.exp(-np.sum((s - X[i]) ** 2) / (2 * sigma**2)) for s, a in zip(svs, alpha))
        mistakes += (1.0 if f >= 0 else -1.0) != y[i]
        loss = max(0.0, 1.0 - y[i] * f)
        if loss > 0:
            svs.append(X[i])
            alpha.append(y[i] * min(C, loss))
    return mistakes, len(svs)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), C=st.floats(0.1, 2.0))
def test_a_budget_never_reached_is_kernel_pa1(seed, C):
    """With budget >= n the replacement branch never runs: BPA-S is kernel PA-I."""
    X, y, order = _random_stream(seed, n=60)
    trace = BPAS(sigma=1.0, budget=len(y), C=C).run(X, y, order)
    assert (trace.mistakes, trace.support_size) == _kernel_pa1(X, y, order, 1.0, C)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), budget=st.integers(1, 12))
def test_budget_never_exceeded_at_any_step(seed, budget):
    X, y, order = _random_stream(seed, n=80)
    trace = BPAS(sigma=1.0, budget=budget).run(X, y, order, n_checkpoints=len(y))
    assert trace.ckpt_support.max() <= budget


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_same_input_same_trace(seed):
    X, y, order = _random_stream(seed, n=100)
    a, b = BPAS(sigma=1.0, budget=5), BPAS(sigma=1.0, budget=5)
    ta, tb = a.run(X, y, order), b.run(X, y, order)
    np.testing.assert_array_equal(ta.ckpt_mistakes, tb.ckpt_mistakes)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


@pytest.mark.parametrize("bad", [{"budget": 0}, {"C": 0.0}, {"C": -1}, {"sigma": -2.0}])
def test_invalid_parameters_are_named(bad):
    X, y, _ = _random_stream(0, n=10)
    (name,) = bad
    with pytest.raises(ValueError, match=f"'{name}' parameter of BPAS"):
        BPAS(**bad).run(X, y)


# ----------------------------------------------------------------------------- authors' runs
@pytest.mark.shared_data
@pytest.mark.parametrize("setting", ["paper", "script"])
def test_reproduces_the_authors_german_runs_exactly(shared_data, reference_runs, setting):
    X, y, perms = authors.load(shared_data, "german")
    rows = authors.rows(reference_runs, "binary", "german", "BPA-S", setting)
    assert len(rows) == 20
    for row in rows.itertuples():
        trace = BPAS(**SETTINGS[setting], C=1.0).run(X, y, perms[row.perm - 1])
        authors.assert_same_binary_run(trace, row, checkpoints=False)


# spambase/paper perm 9 first diverges at step t = 1284: 70 of the 100 candidates tie on Q_r
# exactly (kappa ~ 0 for most SVs), we keep the first (list position 1, Q = 0.8626734326162327)
# and Octave took another; forcing position 4 there (kappa = 3.7e-10, equal Q after rounding)
# reproduces Octave's err_count 1393 and all 14 checkpoints. Which last bit differs is unknown.
KNOWN_DIVERGENCES = {("paper", 9)}


@pytest.mark.shared_data
@pytest.mark.parametrize("setting", ["paper", "script"])
def test_reproduces_the_fragile_spambase_runs_exactly_but_one(shared_data, reference_runs, setting):
    """Exact thanks to Octave's arithmetic order in the kernel row (see lsokl.learners.online.bpas)."""
    X, y, perms = authors.load(shared_data, "spambase")
    rows = authors.rows(reference_runs, "binary", "spambase", "BPA-S", setting)
    for row in rows.itertuples():
        trace = BPAS(**SETTINGS[setting], C=1.0).run(X, y, perms[row.perm - 1])
        if (setting, row.perm) in KNOWN_DIVERGENCES:
            assert trace.mistakes != row.err_count, "a known divergence vanished: update the note"
            continue
        authors.assert_same_binary_run(trace, row, checkpoints=False)


@pytest.mark.shared_data
@pytest.mark.parametrize("setting", ["paper", "script"])
def test_fragile_spambase_runs_match_in_distribution(shared_data, reference_runs, setting):
    """spambase is raw: exact 0/1 kernel values make f = 0 and argmin-of-Q ties that rounding
    breaks (the authors' own runs move by up to 53 mistakes under column reversal), so only the
    distribution over the 20 permutations is compared: mean within 3 reference std."""
    X, y, perms = authors.load(shared_data, "spambase")
    rows = authors.rows(reference_runs, "binary", "spambase", "BPA-S", setting)
    ours = np.array([BPAS(**SETTINGS[setting], C=1.0).run(X, y, perms[p - 1]).mistakes
                     for p in rows.perm]) / len(y) * 100
    theirs = rows.err_count.to_numpy() / len(y) * 100
    assert abs(ours.mean() - theirs.mean()) <= 3 * theirs.std(ddof=1)
    assert ours.std(ddof=1) <= 3 * theirs.std(ddof=1)
