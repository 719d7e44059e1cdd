"""DSG and the low-rank kernel approximations through the Array API (issue 28).

numpy is checked against ``array_api_strict`` (a namespace with nothing but the standard: any
numpy-only call on the Array API path fails here), and against torch on the CPU where torch is
installed. The random draws are numpy's from the same seed on every backend, so the models agree
to round-off; with array_api_strict (numpy underneath, the same operations) they agree exactly.
"""
from __future__ import annotations

import numpy as np
import pytest

from lsokl.approx import create as create_approx
from lsokl.compute.xp import check_device, is_numpy, to_numpy
from lsokl.learners import create

xps = pytest.importorskip("array_api_strict", reason="array-api-strict is a dev dependency")

RNG = np.random.default_rng(0)
X = RNG.normal(size=(300, 5))
X_TEST = RNG.normal(size=(80, 5))
TARGETS = {
    "binary": np.where(X[:, 0] * X[:, 1] > 0, 1, -1),
    "multiclass": (X[:, 0] > 0).astype(int) + (X[:, 1] > 0),
    "regression": X[:, 0] ** 2 - X[:, 2],
}
DSG_CASES = [
    ("binary", {}),
    ("binary", {"loss": "logistic", "precond": True, "batch_size": 128, "block_features": 32}),
    ("binary", {"max_blocks": 2, "dtype": "float64"}),
    ("binary", {"form": "matlab"}),
    ("multiclass", {"batch_size": 50, "block_features": 16}),
    ("multiclass", {"batch_size": 50, "block_features": 16, "max_blocks": 2}),
    ("regression", {"form": "gpu", "precond": True, "batch_size": 64, "block_features": 16}),
]


def _scores(model, Xe, task):
    return to_numpy(model.predict(Xe) if task == "regression" else model.decision_function(Xe))


def _same_scores(b, a, params):
    """Bit for bit; with ``precond`` to 1e-12: the preconditioner's linear solve goes through
    array-api-strict's ``linalg.solve`` (a stacked LAPACK call) and numpy's, whose last bits differ
    (~1e-15 in the coefficients; the scores sum them in float64, so that shows)."""
    if params.get("precond"):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_array_equal(b, a)


@pytest.mark.parametrize("task,params", DSG_CASES, ids=[f"{t}-{'-'.join(p)}" for t, p in DSG_CASES])
def test_dsg_array_api_strict_equals_numpy(task, params):
    y = TARGETS[task]
    a = create("dsg", task, sigma=1.0, random_state=3, **params).fit(X, y)
    b = create("dsg", task, sigma=1.0, random_state=3, **params).fit(xps.asarray(X), y)
    assert not is_numpy(b.coef_)  # the model lives in the input's namespace
    _same_scores(_scores(b, xps.asarray(X_TEST), task), _scores(a, X_TEST, task), params)
    if task != "regression":
        labels = b.predict(xps.asarray(X_TEST))
        assert not is_numpy(labels) and labels.device == xps.asarray(X_TEST).device  # the input's namespace
        np.testing.assert_array_equal(to_numpy(labels), a.predict(X_TEST))
        assert isinstance(b.predict(X_TEST), np.ndarray)  # a numpy input gets numpy labels
    # a numpy input to the array-API model goes to its device
    _same_scores(_scores(b, X_TEST, task), _scores(a, X_TEST, task), params)


@pytest.mark.parametrize("task,params", DSG_CASES[:3] + DSG_CASES[4:6],
                         ids=[f"{t}-{'-'.join(p)}" for t, p in DSG_CASES[:3] + DSG_CASES[4:6]])
def test_dsg_curve_and_partial_fit_array_api(task, params):
    y = TARGETS[task]
    kw = dict(sigma=1.0, random_state=5, **params)
    ca = create("dsg", task, **kw).fit_curve(X, y, X_TEST, y[:80])
    cb = create("dsg", task, **kw).fit_curve(xps.asarray(X), y, xps.asarray(X_TEST), y[:80])
    np.testing.assert_array_equal(ca.samples_seen, cb.samples_seen)
    np.testing.assert_array_equal(ca.test_error, cb.test_error)
    classes = None if task == "regression" else np.unique(y)
    pa, pb = create("dsg", task, **kw), create("dsg", task, **kw)
    for s in (slice(0, 130), slice(130, 300)):
        pa.partial_fit(X[s], y[s], classes=classes)
        pb.partial_fit(xps.asarray(X[s]), y[s], classes=classes)
    _same_scores(_scores(pb, xps.asarray(X_TEST), task), _scores(pa, X_TEST, task), params)


@pytest.mark.parametrize("name", ["rks", "nystrom", "knys"])
def test_approximation_array_api_strict_matches_numpy(name):
    y = TARGETS["regression"]
    a = create_approx(name, rank=12, gamma=0.3, random_state=1).fit(X)
    b = create_approx(name, rank=12, gamma=0.3, random_state=1).fit(xps.asarray(X))
    assert not is_numpy(b.Z_) and b.memory_ == a.memory_
    np.testing.assert_allclose(to_numpy(b.matvec(xps.asarray(y))), a.matvec(y), rtol=1e-10, atol=1e-12)
    alpha_a, alpha_b = a.solve(0.125, y), b.solve(0.125, xps.asarray(y))
    np.testing.assert_allclose(to_numpy(alpha_b), alpha_a, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(to_numpy(b.cross_matvec(xps.asarray(X_TEST), alpha_b)),
                               a.cross_matvec(X_TEST, alpha_a), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(to_numpy(b.rows(np.arange(5))), a.rows(np.arange(5)), rtol=1e-10, atol=1e-12)


def test_learners_without_array_api_support_compute_on_the_host():
    y = TARGETS["binary"]
    a = create("rpegasos", "binary", sigma=1.0, random_state=0).fit(X, y)
    b = create("rpegasos", "binary", sigma=1.0, random_state=0).fit(xps.asarray(X), y)
    np.testing.assert_array_equal(b.decision_function(X_TEST), a.decision_function(X_TEST))


def test_an_absent_device_is_one_line():
    torch = pytest.importorskip("torch", reason="torch is optional (lsokl[gpu])")
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    with pytest.raises(ValueError, match="no CUDA device") as err:
        check_device("cuda")
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="unknown device"):
        check_device("tpu")


def test_torch_cpu_agrees_to_round_off():
    torch = pytest.importorskip("torch", reason="torch is optional (lsokl[gpu])")
    y = TARGETS["binary"]
    a = create("dsg", "binary", sigma=1.0, random_state=3, dtype="float64").fit(X, y)
    b = create("dsg", "binary", sigma=1.0, random_state=3, dtype="float64").fit(torch.as_tensor(X), y)
    assert isinstance(b.coef_, torch.Tensor)
    np.testing.assert_allclose(to_numpy(b.decision_function(torch.as_tensor(X_TEST))),
                               a.decision_function(X_TEST), rtol=1e-9, atol=1e-9)
    f32a = create("dsg", "binary", sigma=1.0, random_state=3).fit(X, y)
    f32b = create("dsg", "binary", sigma=1.0, random_state=3).fit(torch.as_tensor(X), y)
    np.testing.assert_allclose(to_numpy(f32b.decision_function(torch.as_tensor(X_TEST))),
                               f32a.decision_function(X_TEST), rtol=1e-4, atol=1e-4)
    r = create_approx("rks", rank=12, gamma=0.3, random_state=1)
    ra, rb = r.fit(X), create_approx("rks", rank=12, gamma=0.3, random_state=1).fit(torch.as_tensor(X))
    np.testing.assert_allclose(to_numpy(rb.solve(0.125, torch.as_tensor(TARGETS["regression"]))),
                               ra.solve(0.125, TARGETS["regression"]), rtol=1e-8, atol=1e-9)


def test_a_config_device_reaches_the_cell_and_an_absent_one_fails_in_one_line(tmp_path):
    from lsokl.config import load_config
    from lsokl.errors import ConfigError
    from lsokl.runner.run import run_experiment

    text = ("name: dev\nprotocol: holdout\ntest_fraction: 0.25\npermutations: 1\ndevice: {dev}\n"
            "datasets: {{breast_cancer: {{scale: standard}}}}\n"
            "algorithms: {{dsg: {{sigma: 4.0, batch_size: 32, block_features: 16}}}}\n")
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.format(dev="gpu0"))
    with pytest.raises(ConfigError, match="device"):
        load_config(bad)
    cfg = tmp_path / "cuda.yaml"
    cfg.write_text(text.format(dev="cuda"))
    exp = load_config(cfg)
    assert exp.cells and all(dict(c.protocol_options).get("device") == "cuda" for c in exp.cells)
    try:
        import torch
        if torch.cuda.is_available():
            pytest.skip("a CUDA device is present: the cell would run")
    except ImportError:
        pass
    run_experiment(exp, tmp_path / "out", jobs=1)
    records = list((tmp_path / "out" / "records").glob("*.json"))
    import json
    rec = json.loads(records[0].read_text())
    assert rec["status"] == "failed"
    message = rec["error"]["message"]
    assert message.startswith("device 'cuda'") and "\n" not in message


MEKA_CASES = [
    {},
    {"psd": True, "eta": 0.3},
    {"partition": "random", "clusters": 3},
    {"kmeans": "kmeans++", "k_alloc": "equal", "kmeans_sample": 120},
    {"clusters": 1},
]


@pytest.mark.parametrize("params", MEKA_CASES, ids=["-".join(map(str, p.items())) or "default" for p in MEKA_CASES])
def test_meka_array_api_strict_matches_numpy(params):
    """MEKA on array_api_strict: the same draws, W_s and L on the input's device, and every
    operation (matvec, solve, rows, cross, cross_matvec) agrees with the numpy path."""
    y = TARGETS["regression"]
    kw = dict(rank=6, gamma=0.3, clusters=4, random_state=2)
    kw.update(params)
    a = create_approx("meka", **kw).fit(X)
    b = create_approx("meka", **kw).fit(xps.asarray(X))
    assert not is_numpy(b.L_) and all(not is_numpy(W) for W in b.blocks_)
    np.testing.assert_array_equal(b.labels_, a.labels_)
    assert b.memory_ == a.memory_ and np.array_equal(b.dropped_, a.dropped_)
    for Wa, Wb in zip(a.blocks_, b.blocks_):
        np.testing.assert_allclose(to_numpy(Wb), Wa, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(to_numpy(b.L_), a.L_, rtol=1e-9, atol=1e-10)
    mv = b.matvec(xps.asarray(y))
    assert not is_numpy(mv)
    np.testing.assert_allclose(to_numpy(mv), a.matvec(y), rtol=1e-9, atol=1e-10)
    Y2 = np.stack([y, X[:, 1]], axis=1)  # several right-hand sides at once
    np.testing.assert_allclose(to_numpy(b.matvec(xps.asarray(Y2))), a.matvec(Y2), rtol=1e-9, atol=1e-10)
    alpha_a, alpha_b = a.solve(0.125, y), b.solve(0.125, xps.asarray(y))
    np.testing.assert_allclose(to_numpy(alpha_b), alpha_a, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(to_numpy(b.cross_matvec(xps.asarray(X_TEST), alpha_b)),
                               a.cross_matvec(X_TEST, alpha_a), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(to_numpy(b.cross_matvec(X_TEST, alpha_b)),  # numpy X_new: moved over
                               a.cross_matvec(X_TEST, alpha_a), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(to_numpy(b.cross(xps.asarray(X_TEST[:7]))), a.cross(X_TEST[:7]),
                               rtol=1e-9, atol=1e-12)
    idx = np.array([5, 0, 299, 17, -1, 5])  # unsorted, repeated, negative: clusters interleaved
    np.testing.assert_allclose(to_numpy(b.rows(idx)), a.rows(idx), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(to_numpy(b.to_dense()), a.to_dense(), rtol=1e-9, atol=1e-12)


def test_meka_torch_cpu_agrees_to_round_off():
    torch = pytest.importorskip("torch", reason="torch is optional (lsokl[gpu])")
    y = TARGETS["regression"]
    a = create_approx("meka", rank=6, gamma=0.3, clusters=4, random_state=2).fit(X)
    b = create_approx("meka", rank=6, gamma=0.3, clusters=4, random_state=2).fit(torch.as_tensor(X))
    assert isinstance(b.L_, torch.Tensor) and all(isinstance(W, torch.Tensor) for W in b.blocks_)
    alpha_b = b.solve(0.125, torch.as_tensor(y))
    assert isinstance(alpha_b, torch.Tensor)
    alpha_a = a.solve(0.125, y)
    np.testing.assert_allclose(to_numpy(alpha_b), alpha_a, rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(to_numpy(b.matvec(torch.as_tensor(y))), a.matvec(y), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(to_numpy(b.cross_matvec(torch.as_tensor(X_TEST), alpha_b)),
                               a.cross_matvec(X_TEST, alpha_a), rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(to_numpy(b.rows(np.arange(5))), a.rows(np.arange(5)), rtol=1e-9, atol=1e-12)
