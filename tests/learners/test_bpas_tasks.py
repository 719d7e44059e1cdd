"""Multi-class BPA-S (spec 2.7): hand-checked steps (tau = min(C, l/2), first minimum on ties),
plain-Python reference, exact replay of the authors' dna/satimage runs."""
from __future__ import annotations

import math

import numpy as np
import pytest

from lsokl.learners.online.bpas import MulticlassBPAS
from reference_impl import bpas_tasks as reference
from reference_impl.tasks_common import multiclass_stream, replay_authors_runs

HALF_SIGMA = 1.0 / math.sqrt(2.0 * math.log(2.0))  # kappa at distance 1 = 1/2


def test_projection_onto_the_new_instance_by_hand():
    X = np.array([[0.0], [1.0]])
    y = np.array([0, 1])
    model = MulticlassBPAS(sigma=HALF_SIGMA, budget=1, C=1.0).partial_fit(X, y, classes=[0, 1, 2])
    # t=1: V = 0, correct, s = 1, l = 1, tau = 1/2: x0 (.5, -.5, 0).
    # t=2: V = (.25, -.25, 0), mistake, s = 0, l = 1.5, tau = .75; the only candidate r = x0:
    #      beta = alpha_r k + tau (e_1 - e_0) = (.25 - .75, -.25 + .75, 0).
    assert model.counts_[1] == 1 and model.support_size_ == 1
    np.testing.assert_array_equal(model.support_vectors(), [[1.0]])
    np.testing.assert_allclose(model.alpha_[0], [-0.5, 0.5, 0.0], rtol=1e-15)


def test_equal_candidates_replace_the_first_in_place():
    X = np.array([[0.0], [100.0], [50.0]])  # all kernel values between them are exactly 0
    y = np.array([0, 1, 2])
    model = MulticlassBPAS(sigma=1.0, budget=2, C=1.0)
    trace = model.run(X, y)
    # t=1: x0 (.5, -.5, 0).  t=2: V = 0, mistake, s = 0: x1 (-.5, .5, 0).
    # t=3: V = 0, mistake, s = 0 (lowest of the tie), tau = .5. Both candidates: beta = (-.5, 0, .5),
    #      dist = .5 + .5, l_r = .5 -> Q = 1: the first (slot 0) is replaced in place.
    assert trace.mistakes == 2
    np.testing.assert_array_equal(model.sv_[:2, 0], [50.0, 100.0])
    np.testing.assert_allclose(model.alpha_[:2], [[-0.5, 0.0, 0.5], [-0.5, 0.5, 0.0]])


@pytest.mark.parametrize("C", [1.0, 0.2])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_plain_python_reference(seed, C):
    X, y, order = multiclass_stream(seed)
    model = MulticlassBPAS(sigma=1.0, budget=8, C=C)
    trace = model.run(X, y, order)
    ref = reference.run_multiclass(X, y, order, sigma=1.0, n_classes=4, budget=8, C=C)
    assert trace.mistakes == ref["mistakes"] and trace.support_size == ref["support_size"] == 8
    np.testing.assert_allclose(model.decision_function(X), ref["scores"], rtol=0, atol=1e-9)


def test_defaults_are_the_authors_script_values():
    assert MulticlassBPAS().get_params() == {"sigma": "scale", "budget": 200, "C": 1.0}


# ----------------------------------------------------------------------------- authors' runs
@pytest.mark.shared_data
@pytest.mark.parametrize("dataset", ["dna", "satimage"])
def test_replays_the_authors_runs_exactly(shared_data, reference_runs, dataset):
    replay_authors_runs(shared_data, reference_runs, "multiclass", dataset, "BPA-S", MulticlassBPAS)
