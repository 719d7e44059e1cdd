"""NORMA with nu-adaptive epsilon (spec 3, the authors' ``regression/Epsilon.m``): hand-checked
steps, plain-Python reference, exact replay of the authors' housing/mg runs."""
from __future__ import annotations

import math

import numpy as np
import pytest

from lsokl.learners.online.norma import NORMA
from reference_impl import norma as reference
from reference_impl.tasks_common import regression_stream, replay_authors_runs

HALF_SIGMA = 1.0 / math.sqrt(2.0 * math.log(2.0))  # kappa at distance 1 = 1/2


def test_decay_and_adaptive_epsilon_by_hand():
    X = np.array([[0.0], [1.0], [0.0], [0.0]])
    y = np.array([0.5, 0.05, 0.5, 0.5])
    model = NORMA(sigma=HALF_SIGMA, eta=0.5, lam=0.2, nu=0.4, epsilon=0.1)
    trace = model.run(X, y)
    # decay 1 - lam eta = .9 every step; eps += (1 - nu) eta = .3 on an event, else -= nu eta = .2.
    # t=1: delta = .5 > .1: append +.5, eps = .4.   t=2: f = .25, |delta| = .2 <= .4: eps = .2.
    # t=3: f = .45, delta = .05 <= .2: eps = 0.     t=4: f = .405, delta = .095 > 0: append +.5.
    assert trace.mistakes == 2 and trace.support_size == 2
    np.testing.assert_allclose(model.alpha_[:2], [0.5 * 0.9**3, 0.5], rtol=1e-14)
    assert model.epsilon_[0] == pytest.approx(0.3, abs=1e-15)


def test_epsilon_is_not_bounded_below_and_sign_of_zero_is_zero():
    X = 100.0 * np.arange(5.0)[:, None]  # every kernel value between them is exactly 0
    y = np.zeros(5)
    model = NORMA(sigma=1.0, eta=0.5, nu=0.5, epsilon=0.125)  # exact binary fractions
    trace = model.run(X, y, n_checkpoints=5)
    # f = 0 = y always; eps moves by +-.25. t=1: 0 > .125? no, eps = -.125. t=2: 0 > -.125: an
    # event, eps = .125. t=3: no, eps = -.125. t=4: event. t=5: no.
    np.testing.assert_array_equal(trace.ckpt_mistakes, [0, 1, 1, 2, 2])
    assert trace.support_size == 2
    np.testing.assert_array_equal(model.alpha_[:2], [0.0, 0.0])  # eta * sign(0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_plain_python_reference(seed):
    X, y, order = regression_stream(seed)
    kw = dict(eta=0.2, lam=0.1, nu=0.4, epsilon=0.1)
    model = NORMA(sigma=0.5, **kw)
    trace = model.run(X, y, order)
    ref = reference.run(X, y, order, sigma=0.5, **kw)
    assert trace.mistakes == ref["mistakes"] and trace.support_size == ref["support_size"]
    assert trace.squared_loss == pytest.approx(ref["squared_loss"], rel=1e-12)
    assert model.epsilon_[0] == pytest.approx(ref["epsilon"], abs=1e-12)
    np.testing.assert_allclose(model.predict(X), ref["scores"], rtol=0, atol=1e-9)


def test_defaults_are_the_authors_script_values():
    assert NORMA().get_params() == {"sigma": "scale", "eta": 0.03, "lam": 0.03, "nu": 0.4,
                                    "epsilon": 0.1}


# ----------------------------------------------------------------------------- authors' runs
@pytest.mark.shared_data
@pytest.mark.parametrize("dataset", ["housing", "mg"])
def test_replays_the_authors_runs_exactly(shared_data, reference_runs, dataset):
    replay_authors_runs(shared_data, reference_runs, "regression", dataset, "NORMA", NORMA)
