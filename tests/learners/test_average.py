"""KOL's "test with the average" option for FOGD and NOGD (spec BUDGETED_PEGASOS.md section 7):
the averaged model is the mean of w over the updates (w summed after each update, divided by the
number of updates; NOGD: over its Nystrom phase, the switch step included)."""
from __future__ import annotations

import numpy as np
import pytest

from lsokl.learners import create


def _stream(n=400, d=4, seed=0):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    X = rng.standard_normal((n, d)) + 0.8 * y[:, None] * np.eye(d)[0]
    return X, y


def _snapshots(name, X, y, phase2_only=False, **params):
    """w after every update, by playing one sample at a time (a slow, independent reference)."""
    learner = create(name, **params)
    snaps = []
    for t in range(len(y)):
        before = learner.counts_[2] if hasattr(learner, "counts_") else 0
        learner.partial_fit(X[t:t + 1], y[t:t + 1], classes=[-1.0, 1.0])
        if learner.counts_[2] > before and (not phase2_only or learner.switched_):
            snaps.append(np.array(learner.w_, dtype=float, copy=True))
    return learner, snaps


def test_fogd_average_is_the_mean_of_w_over_the_updates():
    X, y = _stream()
    params = dict(sigma=1.5, n_fourier=30, eta=0.05, random_state=3)
    ref, snaps = _snapshots("fogd", X, y, **params)
    avg = create("fogd", **params)
    avg.track_average = True
    trace = avg.run(X, y)
    assert trace.mistakes == ref.counts_[1] and len(snaps) == ref.counts_[2] > 10
    np.testing.assert_allclose(avg.w_, ref.w_, rtol=1e-10, atol=1e-10)  # the pass itself unchanged
    avg.use_average()
    np.testing.assert_allclose(avg.w_, np.mean(snaps, axis=0), rtol=1e-9, atol=1e-10)
    assert not np.allclose(avg.w_, ref.w_)


def test_nogd_average_covers_the_nystrom_phase_from_the_switch_step():
    X, y = _stream(n=500, seed=1)
    params = dict(sigma=1.5, budget=20, rank=5, eta=0.2)
    ref, snaps = _snapshots("nogd", X, y, phase2_only=True, **params)
    assert ref.switched_ and len(snaps) > 10
    avg = create("nogd", **params)
    avg.track_average = True
    avg.run(X, y)
    np.testing.assert_allclose(avg.w_, ref.w_, rtol=1e-9, atol=1e-10)
    avg.use_average()
    np.testing.assert_allclose(avg.w_, np.mean(snaps, axis=0), rtol=1e-9, atol=1e-10)


def test_average_needs_tracking_and_is_binary_only():
    X, y = _stream(n=50)
    with pytest.raises(ValueError, match="track_average"):
        create("fogd", sigma=1.0, n_fourier=8, random_state=0).fit(X, y).use_average()
    m = create("fogd", "multiclass", sigma=1.0, n_fourier=8, random_state=0)
    m.track_average = True
    with pytest.raises(ValueError, match="binary"):
        m.run(X, (y > 0).astype(int))


def test_holdout_test_with_average_is_a_config_option(tmp_path):
    import textwrap

    from lsokl.config import load_config
    from lsokl.errors import ConfigError
    from lsokl.results import ResultStore
    from lsokl.runner import run_experiment

    text = """
    seed: 1
    permutations: 1
    protocol: holdout
    test_fraction: 0.25
    scale: zscore
    test_with: average
    datasets: [breast_cancer]
    algorithms: {fogd: {eta: 0.01, n_fourier: 40, sigma: 4}, perceptron: {sigma: 4}}
    """
    p = tmp_path / "c.yaml"
    p.write_text(textwrap.dedent(text))
    exp = load_config(p)
    assert exp.cells[0].spec("x", "v")["test_with"] == "average"
    run_experiment(exp, tmp_path / "res", jobs=1)
    recs = {r["learner"]: r for r in ResultStore(tmp_path / "res").records()}
    assert recs["fogd"]["status"] == "ok" and recs["fogd"]["value"] > 0.85
    assert recs["perceptron"]["status"] == "failed"
    assert "needs a learner that averages" in recs["perceptron"]["error"]["message"]
    p.write_text(textwrap.dedent(text.replace("average", "mean")))
    with pytest.raises(ConfigError, match="test_with: expected one of 'final', 'average'"):
        load_config(p)
    # the default keeps the keys of final-model runs
    p.write_text(textwrap.dedent(text.replace("test_with: average", "test_with: final")))
    assert "test_with" not in load_config(p).cells[0].spec("x", "v")
