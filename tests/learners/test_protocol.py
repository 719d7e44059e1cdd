"""The learner protocol itself (lsokl/learners/base.py), independent of any algorithm."""
from __future__ import annotations

import numpy as np
import pytest

from lsokl.learners import create
from lsokl.learners.online import perceptron as perceptron_module
from lsokl.learners.base import checkpoint_steps


def _stream(n=300, seed=0):
    X = np.random.default_rng(seed).standard_normal((n, 4))
    return X, np.where(X[:, 0] > 0, 1.0, -1.0)


def test_read_only_order_does_not_compile_a_new_specialisation():
    """Authors' permutations arrive as rows of a read-only memory map; numba would type them as
    readonly arrays and compile inside the timed pass unless run() takes a writable copy."""
    X, y = _stream()
    create("perceptron", sigma=1.0).run(X, y, np.arange(len(y)))
    before = len(perceptron_module._play.signatures)
    order = np.random.default_rng(1).permutation(len(y)).astype(np.int64)
    order.flags.writeable = False
    create("perceptron", sigma=1.0).run(X, y, order)
    assert len(perceptron_module._play.signatures) == before


def test_checkpoints_follow_the_authors_rounding():
    # german: n = 1000, round(1000/15) = 67 -> 14 checkpoints, the last at 938 (reference README)
    steps = checkpoint_steps(1000, 15)
    assert steps[0] == 67 and steps[-1] == 938 and len(steps) == 14
    assert checkpoint_steps(506, 20)[0] == 25  # round(25.3) = 25 (housing)
    assert checkpoint_steps(30, 20)[0] == 2    # round(1.5) = 2: half away from zero, not to even


def test_trace_counts_and_checkpoint_curve_agree():
    X, y = _stream()
    trace = create("perceptron", sigma=1.0).run(X, y)
    assert trace.n_samples == len(y)
    assert trace.ckpt_mistakes[-1] <= trace.mistakes
    assert np.all(np.diff(trace.ckpt_mistakes) >= 0) and np.all(np.diff(trace.ckpt_time) >= 0)
    assert trace.elapsed >= trace.ckpt_time[-1]


def test_run_rejects_bad_inputs():
    X, y = _stream()
    learner = create("perceptron", sigma=1.0)
    with pytest.raises(ValueError, match="order"):
        learner.run(X, y, np.array([0, len(y)]))
    with pytest.raises(ValueError, match="labels"):
        learner.run(X, y[:-1])
    with pytest.raises(ValueError, match=r"\{-1, \+1\}"):
        learner.run(X, np.where(y > 0, 1.0, 0.0))
    with pytest.raises(ValueError, match="NaN"):
        learner.run(np.full_like(X, np.nan), y)
    with pytest.raises(ValueError, match="not fitted"):
        create("perceptron").predict(X)
