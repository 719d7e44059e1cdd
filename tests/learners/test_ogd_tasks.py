"""Multi-class (spec 2.2) and regression (spec 3) kernel OGD: hand-checked steps, plain-Python
reference, exact replay of the authors' dna/satimage and housing/mg runs (both regression
settings: the script's eta = 0.1 and the .mat files' eta, which reproduces the paper)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from lsokl.learners.online.ogd import MulticlassOGD, RegressionOGD
from reference_impl import authors_runs
from reference_impl import ogd_tasks as reference
from reference_impl.tasks_common import multiclass_stream, regression_stream, replay_authors_runs

HALF_SIGMA = 1.0 / math.sqrt(2.0 * math.log(2.0))  # kappa at distance 1 = 1/2


def test_multiclass_margin_updates_by_hand():
    X = np.array([[0.0], [1.0], [0.0], [0.0]])
    y = np.array([0, 1, 0, 0])
    model = MulticlassOGD(sigma=HALF_SIGMA, eta=0.5).partial_fit(X, y, classes=[0, 1, 2])
    # t=1: V = 0, correct (lowest-index tie), s = 1 (tie of 1, 2), l = 1: x0 (+.5, -.5, 0).
    # t=2: V = (.25, -.25, 0), mistake, s = 0, l = 1.5: x1 (-.5, +.5, 0).
    # t=3: V = (.25, -.25, 0), correct, s = 2, l = .75 (margin error): x2 (+.5, 0, -.5).
    # t=4: V = (.75, -.25, -.5), l = 1 - (.75 + .25) = 0: no update.
    assert model.counts_[1] == 1 and model.support_size_ == 3
    np.testing.assert_array_equal(model.alpha_[:3], [[.5, -.5, 0], [-.5, .5, 0], [.5, 0, -.5]])


def test_regression_gradient_steps_by_hand():
    X = np.array([[0.0], [1.0], [0.0]])
    y = np.array([0.5, 0.1, -0.5])
    model = RegressionOGD(sigma=HALF_SIGMA, eta=0.1, epsilon=0.1)
    trace = model.run(X, y, n_checkpoints=3)
    # t=1: delta = .5: append .05.  t=2: f = .025, delta = .075 <= eps.  t=3: f = .05, delta = -.55.
    assert trace.mistakes == 2 and trace.support_size == 2
    np.testing.assert_allclose(model.alpha_[:2], [0.05, -0.055], rtol=1e-14)
    np.testing.assert_allclose(trace.ckpt_squared_loss,
                               [0.25, (0.25 + 0.075**2) / 2, (0.25 + 0.075**2 + 0.55**2) / 3],
                               rtol=1e-13)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_multiclass_matches_plain_python_reference(seed):
    X, y, order = multiclass_stream(seed)
    model = MulticlassOGD(sigma=1.0, eta=0.3)
    trace = model.run(X, y, order)
    ref = reference.run_multiclass(X, y, order, sigma=1.0, n_classes=4, eta=0.3)
    assert trace.mistakes == ref["mistakes"] and trace.support_size == ref["support_size"]
    np.testing.assert_allclose(model.decision_function(X), ref["scores"], rtol=0, atol=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_regression_matches_plain_python_reference(seed):
    X, y, order = regression_stream(seed)
    model = RegressionOGD(sigma=0.5, eta=0.3, epsilon=0.05)
    trace = model.run(X, y, order)
    ref = reference.run_regression(X, y, order, sigma=0.5, eta=0.3, epsilon=0.05)
    assert trace.mistakes == ref["mistakes"] and trace.support_size == ref["support_size"]
    assert trace.squared_loss == pytest.approx(ref["squared_loss"], rel=1e-12)
    np.testing.assert_allclose(model.predict(X), ref["scores"], rtol=0, atol=1e-9)


def test_defaults_are_the_authors_script_values():
    assert MulticlassOGD().get_params() == {"sigma": "scale", "eta": 0.5}
    assert RegressionOGD().get_params() == {"sigma": "scale", "eta": 0.1, "epsilon": 0.1}


# ----------------------------------------------------------------------------- authors' runs
@pytest.mark.shared_data
@pytest.mark.parametrize("dataset", ["dna", "satimage"])
def test_multiclass_replays_the_authors_runs_exactly(shared_data, reference_runs, dataset):
    replay_authors_runs(shared_data, reference_runs, "multiclass", dataset, "OGD", MulticlassOGD)


@pytest.mark.shared_data
@pytest.mark.parametrize("setting", ["script", "mat-eta"])
@pytest.mark.parametrize("dataset", ["housing", "mg"])
def test_regression_replays_the_authors_runs_exactly(shared_data, reference_runs, dataset, setting):
    """``mat-eta``: eta as stored in the .mat file (0.3 housing, 0.4 mg)."""
    eta = authors_runs.MAT_ETA[dataset] if setting == "mat-eta" else 0.1
    replay_authors_runs(shared_data, reference_runs, "regression", dataset, "OGD",
                        lambda: RegressionOGD(eta=eta), setting=setting)
