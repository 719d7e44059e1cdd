"""Kernel OGD (spec 1.2): hand-checked update rule, plain-Python reference, exact authors' runs."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from lsokl.learners.online.ogd import KernelOGD
from reference_impl import authors_runs as authors
from reference_impl import ogd as reference

# sigma such that kappa(0, 1) = exp(-1 / (2 sigma^2)) = 1/2 for 1-d points at distance 1.
HALF_SIGMA = 1.0 / math.sqrt(2.0 * math.log(2.0))
SETTINGS = authors.BINARY_SETTINGS


def test_update_rule_by_hand():
    X = np.array([[0.0], [0.0], [1.0], [0.0]])
    y = np.array([1.0, -1.0, 1.0, 1.0])
    model = KernelOGD(sigma=HALF_SIGMA, eta=0.5)
    trace = model.run(X, y)
    # t=1: f=0, sign(0)=+1 so no mistake; y f = 0 < 1 -> store x1, alpha 0.5.
    # t=2: f=0.5 -> predicts +1, mistake; y f = -0.5 < 1 -> store x2, alpha -0.5.
    # t=3: f = 0.5*0.5 - 0.5*0.5 = 0 -> +1, correct; y f = 0 < 1 -> store x3, alpha 0.5.
    # t=4: f = 0.5 - 0.5 + 0.5*0.5 = 0.25 -> correct; y f = 0.25 < 1 -> store x4, alpha 0.5.
    assert trace.mistakes == 1
    assert trace.support_size == 4
    np.testing.assert_allclose(model.alpha_[:4], [0.5, -0.5, 0.5, 0.5])
    # f(0) = 0.5 - 0.5 + 0.25 + 0.5 = 0.75; f(1) = 0.25 - 0.25 + 0.5 + 0.25 = 0.75.
    np.testing.assert_allclose(model.decision_function(np.array([[0.0], [1.0]])), [0.75, 0.75],
                               atol=1e-12)


def test_margin_is_strict():
    # y f == 1 exactly is not a margin error (OGD.m uses <), unlike BOGD's <= 1.
    X = np.zeros((3, 1))
    y = np.ones(3)
    trace = KernelOGD(sigma=1.0, eta=0.5).run(X, y)
    # f: 0 (store), 0.5 (store), 1.0 -> y f = 1, not < 1, no update.
    assert trace.support_size == 2


def _random_stream(seed, n=120, d=4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y, rng.permutation(n)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_plain_python_reference(seed):
    X, y, order = _random_stream(seed)
    model = KernelOGD(sigma=1.5, eta=0.3)
    trace = model.run(X, y, order)
    ref = reference.run(X, y, order, sigma=1.5, eta=0.3)
    assert trace.mistakes == ref["mistakes"]
    assert trace.support_size == ref["support_size"]
    np.testing.assert_allclose(model.decision_function(X), ref["scores"], rtol=0, atol=1e-9)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), chunk=st.integers(1, 40))
def test_growth_in_chunks_equals_one_pass(seed, chunk):
    """partial_fit grows the buffer by doubling; the model is the same as one preallocated pass."""
    X, y, _ = _random_stream(seed, n=90)
    whole = KernelOGD(sigma=1.0)
    trace = whole.run(X, y)
    pieces = KernelOGD(sigma=1.0)
    for lo in range(0, len(y), chunk):
        pieces.partial_fit(X[lo:lo + chunk], y[lo:lo + chunk], classes=[-1, 1])
    assert pieces.counts_[1] == trace.mistakes
    assert pieces.support_size_ == trace.support_size == pieces.counts_[2]
    np.testing.assert_array_equal(pieces.decision_function(X), whole.decision_function(X))


@pytest.mark.parametrize("bad", [{"eta": -1}, {"eta": 0.0}, {"sigma": 0}, {"sigma": "wide"}])
def test_invalid_parameters_are_named(bad):
    X, y, _ = _random_stream(0, n=10)
    (name,) = bad
    with pytest.raises(ValueError, match=f"'{name}' parameter of KernelOGD"):
        KernelOGD(**bad).run(X, y)


# ----------------------------------------------------------------------------- authors' runs
@pytest.mark.shared_data
@pytest.mark.parametrize("dataset", ["german", "spambase"])
@pytest.mark.parametrize("setting", ["paper", "script"])
def test_reproduces_the_authors_runs_exactly(shared_data, reference_runs, dataset, setting):
    X, y, perms = authors.load(shared_data, dataset)
    rows = authors.rows(reference_runs, "binary", dataset, "OGD", setting)
    assert len(rows) == 20
    for row in rows.itertuples():
        trace = KernelOGD(sigma=SETTINGS[setting]["sigma"], eta=0.2).run(X, y, perms[row.perm - 1])
        authors.assert_same_binary_run(trace, row)
