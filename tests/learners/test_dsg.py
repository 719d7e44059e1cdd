"""DSG (spec DSG.md): the section-9 unit checks, memory, and the bad-input cases."""
from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from lsokl.learners import registry
from lsokl.learners.stochastic.dsg import DSG, MulticlassDSG, RegressionDSG, block_features, draw_block
from lsokl.compute.kernels import gaussian_gram
from lsokl.learners.stochastic.minibatch import log_checkpoints, step_size

def scores(model, X):
    """f(X): decision_function of a classifier, predict of a regressor (which has none)."""
    return model.predict(X) if model.task == "regression" else model.decision_function(X)



def toy(n=200, d=5, seed=0, task="binary"):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if task == "binary":
        y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 > 0.3, 1.0, -1.0)
    elif task == "multiclass":
        y = (np.digitize(X[:, 0], [-0.5, 0.5])).astype(int)
    else:
        y = np.sin(X[:, 0]) + 0.1 * X[:, 1]
    return X, y


# ---------------------------------------------------------------- 1. seed determinism
def test_block_is_a_pure_function_of_seed_and_index():
    base = np.random.SeedSequence(7)
    W1, c1 = draw_block(base, 3, 4, 5, 2.0)
    draw_block(base, 9, 4, 5, 2.0)  # other draws in between change nothing
    W2, c2 = draw_block(np.random.SeedSequence(7), 3, 4, 5, 2.0)
    assert np.array_equal(W1, W2) and np.array_equal(c1, c2)
    W3, _ = draw_block(base, 4, 4, 5, 2.0)
    assert not np.allclose(W1, W3)


def test_blocks_identical_across_processes():
    code = ("import numpy as np; from lsokl.learners.stochastic.dsg import draw_block;"
            "W, c = draw_block(np.random.SeedSequence(11), 5, 3, 4, 1.5); print(repr(float(W.sum() + c.sum())))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    W, c = draw_block(np.random.SeedSequence(11), 5, 3, 4, 1.5)
    assert float(out.stdout) == W.sum() + c.sum()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cache_on_off_identical_predictions(dtype):
    X, y = toy()
    a = DSG(sigma=2.0, batch_size=8, block_features=4, random_state=3, dtype=dtype).fit(X, y)
    b = DSG(sigma=2.0, batch_size=8, block_features=4, random_state=3, dtype=dtype,
            cache_features=True).fit(X, y)
    assert np.array_equal(a.coef_, b.coef_)
    assert np.array_equal(scores(a, X), scores(b, X))  # bitwise


# ---------------------------------------------------------------- 2. predictor = explicit sum
def test_predictor_equals_explicit_double_loop_float64():
    X, y = toy(n=160)
    m = DSG(sigma=1.5, batch_size=8, block_features=3, random_state=1, dtype="float64", max_iter=1).fit(X, y)
    assert m.n_blocks_ == 20  # one epoch of 160 rows in batches of 8
    Xt = toy(n=15, seed=5)[0]
    ref = np.zeros(len(Xt))
    for j in range(1, m.n_blocks_ + 1):
        W, c = draw_block(m.seed_, j, X.shape[1], 3, 1.5)
        for k in range(3):  # one feature at a time, each regenerated from (seed, j)
            for i in range(len(Xt)):
                ref[i] += math.sqrt(2 / 3) * math.cos(Xt[i] @ W[:, k] + c[k]) * m.coef_[j - 1, k, 0]
    np.testing.assert_allclose(scores(m, Xt), ref, rtol=0, atol=1e-12)


def test_predictor_float32_features_within_1e5_relative():
    X, y = toy(n=160)
    m32 = DSG(sigma=1.5, batch_size=8, block_features=3, random_state=1).fit(X, y)
    S32 = scores(m32, X)
    m64 = DSG(sigma=1.5, batch_size=8, block_features=3, random_state=1, dtype="float64")
    m64.n_features_in_, m64.seed_, m64.form, m64.cache_ = X.shape[1], m32.seed_, "paper", None
    m64.coef_, m64.n_blocks_, m64.t_, m64.classes_ = m32.coef_, m32.n_blocks_, m32.t_, m32.classes_
    m64.sigma_ = m32.sigma_
    S64 = scores(m64, X)  # the same coefficients with float64 features
    assert np.max(np.abs(S32 - S64)) <= 1e-5 * np.max(np.abs(S64))


# ---------------------------------------------------------------- 3. hand-checked updates
class _Injected(DSG):
    """Test hook: the frequencies and phases of block j are given, not drawn."""

    blocks: dict = {}

    def _block(self, j):
        return self.blocks[j]


def test_two_step_hinge_update_by_hand():
    x1, x2 = np.array([[0.3, -0.2]]), np.array([[-0.4, 0.5]])
    W1, c1 = np.array([[1.0], [2.0]]), np.array([0.1])
    W2, c2 = np.array([[-0.5], [0.7]]), np.array([1.3])
    _Injected.blocks = {1: (W1, c1), 2: (W2, c2)}
    phi = lambda x, W, c: math.sqrt(2.0) * math.cos(float(x @ W[:, 0]) + c[0])  # noqa: E731
    m = _Injected(sigma=1.0, nu=0.5, batch_size=1, block_features=1, schedule="inv_t", theta=1.0,
                  dtype="float64", random_state=0)
    m.partial_fit(x1, [1.0], classes=[-1.0, 1.0])
    p1 = phi(x1[0], W1, c1)
    assert m.coef_[0, 0, 0] == pytest.approx(p1, abs=1e-15)  # f = 0 < 1, gamma_1 = 1
    y2 = -1.0
    f2 = p1 * phi(x2[0], W1, c1)  # alpha_1 before its decay
    m.partial_fit(x2, [y2])
    expect2 = 0.5 * y2 * phi(x2[0], W2, c2) * (y2 * f2 < 1)
    assert m.coef_[1, 0, 0] == pytest.approx(expect2, abs=1e-15)
    assert m.coef_[0, 0, 0] == pytest.approx(0.75 * p1, abs=1e-15)  # (1 - gamma_2 nu) = 0.75


def test_no_step_when_margin_met_and_theta_nu_one_averages():
    X, y = toy(n=40, d=2)
    # make y f(x_0) = 10 >= 1, then step on x_0 again: the new block must be exactly zero
    m = DSG(sigma=1.0, nu=0.0, batch_size=1, block_features=1, schedule="const", theta=1.0,
            dtype="float64", random_state=0)
    m.partial_fit(X[:1], y[:1], classes=[-1.0, 1.0])
    m.coef_[0] *= 10.0 * y[0] / scores(m, X[:1])[0]
    assert y[0] * scores(m, X[:1])[0] == pytest.approx(10.0)
    m.partial_fit(X[:1], y[:1])
    assert m.n_blocks_ == 2 and m.coef_[1, 0, 0] == 0.0
    # theta nu = 1, gamma = theta / t: every a_t^i = -theta / t, i.e. alpha_i^(t) = alpha_i^(i) i / t
    nu = 0.25
    m = DSG(sigma=1.0, nu=nu, batch_size=1, block_features=1, schedule="inv_t", theta=1 / nu,
            dtype="float64", random_state=0)
    m.partial_fit(X[:1], y[:1], classes=[-1.0, 1.0])
    first = m.coef_[0, 0, 0]
    m.partial_fit(X[1:10], y[1:10])
    assert m.coef_[0, 0, 0] == pytest.approx(first * 1 / 10, rel=1e-12)


# ---------------------------------------------------------------- 4. kernel estimate 1/sqrt(D)
@pytest.mark.parametrize("form", ["paper", "matlab"])
def test_kernel_estimate_error_falls_as_inverse_sqrt_D(form):
    rng = np.random.default_rng(0)
    x, xp = rng.normal(size=(1, 3)) * 0.6, rng.normal(size=(1, 3)) * 0.6
    sigma = 1.0
    k = float(gaussian_gram(x, xp, sigma)[0, 0])
    V = 1 - k ** 2 + k ** 4 / 2 if form == "paper" else (1 + k ** 4) / 2 - k ** 2
    rmses = []
    Ds = [100, 1000, 10000]
    for D in Ds:
        est = []
        for s in range(200):
            W, c = draw_block(np.random.SeedSequence(s), 1, 3, D, sigma)
            est.append(float((block_features(x, W, c, form) @ block_features(xp, W, c, form).T)[0, 0]))
        rmse = math.sqrt(np.mean((np.array(est) - k) ** 2))
        assert 0.85 <= rmse * math.sqrt(D) / math.sqrt(V) <= 1.15
        rmses.append(rmse)
    slope = np.polyfit(np.log(Ds), np.log(rmses), 1)[0]
    assert abs(slope + 0.5) <= 0.05


# ---------------------------------------------------------------- 5. unbiased first step
def test_first_step_is_unbiased_estimate_of_norma_first_step():
    X = np.array([[0.2, -0.1, 0.4]])
    Xe = np.array([[0.5, 0.3, -0.2], [-0.3, 0.1, 0.1]])
    vals = []
    for s in range(10000):
        W, c = draw_block(np.random.SeedSequence(s), 1, 3, 1, 1.0)
        alpha = 1.0 * block_features(X, W, c, "paper")[0]  # gamma_1 = 1, y = +1, f = 0 < 1
        vals.append(block_features(Xe, W, c, "paper") @ alpha)
    vals = np.array(vals)
    norma = gaussian_gram(Xe, X, 1.0)[:, 0]  # -gamma l' k(x_1, .)
    se = vals.std(axis=0) / math.sqrt(len(vals))
    assert np.all(np.abs(vals.mean(axis=0) - norma) <= 4 * se)


# ---------------------------------------------------------------- 6. DSG -> NORMA as r grows
def test_dsg_approaches_norma_as_r_grows():
    X, y = toy(n=200, d=3)
    norma = registry.create("norma", "binary", sigma=1.0, nu=1e-3, batch_size=20, schedule="inv_sqrt",
                            theta=1.0).fit(X, y)
    ref = scores(norma, X)
    gaps = []
    for r in (2 ** 8, 2 ** 11, 2 ** 14):
        m = DSG(sigma=1.0, nu=1e-3, batch_size=20, block_features=r, schedule="inv_sqrt", theta=1.0,
                dtype="float64", random_state=2, max_iter=1, shuffle=False).fit(X, y)  # NORMA's one pass
        gaps.append(np.max(np.abs(scores(m, X) - ref)))
    assert gaps[-1] <= 0.05 * np.max(np.abs(ref))
    assert gaps[0] > gaps[1] > gaps[2]


# ---------------------------------------------------------------- 7. precond = least squares
def test_preconditioned_step_is_least_squares():
    X, y = toy(n=64, d=3, task="regression")
    m = RegressionDSG(sigma=1.0, nu=0.0, batch_size=64, block_features=16, schedule="const",
                      theta=1.0, precond=True, precond_eps=0.0, dtype="float64", random_state=4)
    m.partial_fit(X[:32], y[:32])  # block 1 from a half batch is refused: b < 2 x width
    F = scores(m, X[32:])
    m.partial_fit(X[32:], y[32:])
    Phi = m.features(X[32:], 2)
    expect = np.linalg.lstsq(Phi, y[32:] - F, rcond=None)[0]
    np.testing.assert_allclose(m.coef_[1, :, 0], expect, rtol=1e-7, atol=1e-9)


# ---------------------------------------------------------------- 8. softmax gradient
def test_softmax_block_gradient_matches_finite_differences():
    X, y = toy(n=30, d=3, task="multiclass")
    m = MulticlassDSG(sigma=1.0, batch_size=30, block_features=4, theta=1.0, dtype="float64",
                      random_state=0)
    m.fit(X, y)
    Y = m._encode(y, first=False)
    F = scores(m, X)

    def loss(S):
        Z = S - S.max(axis=1, keepdims=True)
        return float(np.mean(-np.sum(Z * Y, axis=1) + np.log(np.exp(Z).sum(axis=1))))

    G = m._gradient(F.copy(), Y) / len(X)
    h = 1e-6
    for i, k in [(0, 0), (3, 2), (7, 1)]:
        E = np.zeros_like(F)
        E[i, k] = h
        assert (loss(F + E) - loss(F - E)) / (2 * h) == pytest.approx(G[i, k], abs=1e-7)
    np.testing.assert_allclose(m._gradient(F + 5.0, Y), m._gradient(F.copy(), Y), atol=1e-12)


# ---------------------------------------------------------------- 9. running scores
@pytest.mark.parametrize("name,task,params", [
    ("dsg", "binary", dict(loss="hinge", random_state=1)),
    ("dsg", "binary", dict(loss="logistic", form="matlab", random_state=1)),
    ("dsg", "multiclass", dict(batch_size=16, block_features=8, random_state=1)),
    ("dsg", "regression", dict(random_state=1, precond=True, batch_size=40, block_features=8)),
    ("norma", "binary", dict(nu=1e-2, schedule="inv_t", theta=5.0)),
    ("ksdca", "binary", dict(lam=1e-2)),
])
def test_running_scores_equal_step_by_step_and_fresh_predict(name, task, params):
    X, y = toy(n=150, task=task)
    Xt, yt = toy(n=40, seed=9, task=task)
    p = dict(sigma=1.5, **params)
    if name == "dsg":
        p["dtype"] = "float64"
    fast = registry.create(name, task, **p)
    curve = fast.fit_curve(X, y, Xt, yt, checkpoints=[150])
    slow = registry.create(name, task, **p).partial_fit(  # batch scores from the model
        X, y, classes=None if task == "regression" else np.unique(y))
    np.testing.assert_allclose(scores(fast, Xt), scores(slow, Xt), atol=1e-9)
    S = scores(fast, Xt)
    if task == "regression":
        assert curve.test_error[-1] == pytest.approx(np.sqrt(np.mean((S - yt) ** 2)), abs=1e-10)
    else:
        assert curve.test_error[-1] == pytest.approx(np.mean(fast.predict(Xt) != yt), abs=1e-12)


# ---------------------------------------------------------------- 10. baselines
def test_ksdca_one_pass_does_not_depend_on_lambda_without_clipping():
    X, y = toy(n=100, d=3)
    a = registry.create("ksdca", "binary", sigma=1.0, lam=1e-6, batch_size=10).fit(X, y)
    b = registry.create("ksdca", "binary", sigma=1.0, lam=1e-7, batch_size=10).fit(X, y)
    np.testing.assert_allclose(scores(a, X), scores(b, X), rtol=1e-10)
    c = registry.create("ksdca", "binary", sigma=1.0, lam=10.0, batch_size=10).fit(X, y)
    assert not np.allclose(scores(a, X), scores(c, X))  # clip active: differs


@pytest.mark.parametrize("name", ["rpegasos", "npegasos"])
def test_pegasos_projection_keeps_norm_bound(name):
    X, y = toy(n=300, d=3)
    lam = 1e-3
    m = registry.create(name, "binary", sigma=1.0, lam=lam, batch_size=5, random_state=0)
    for a in range(0, 300, 30):
        m.partial_fit(X[a:a + 30], y[a:a + 30], classes=[-1.0, 1.0])
        assert np.linalg.norm(m.coef_) <= 1 / math.sqrt(lam) * (1 + 1e-12)


@pytest.mark.parametrize("name", ["dsg", "norma", "ksdca", "rpegasos", "rsdca", "npegasos", "nsdca"])
def test_every_method_learns_a_toy_problem(name):
    X, y = toy(n=600)
    Xt, yt = toy(n=300, seed=3)
    p = {"sigma": 1.0, "batch_size": 16}
    if name in ("dsg", "rpegasos", "rsdca", "npegasos", "nsdca"):
        p["random_state"] = 0
    m = registry.create(name, "binary", **p)
    curve = m.fit_curve(X, y, Xt, yt)
    assert curve.test_error[-1] < 0.2 < np.mean(yt != np.sign(np.mean(y)))
    assert list(curve.samples_seen) == sorted(set(curve.samples_seen)) and curve.samples_seen[-1] == 600


def test_nystrom_features_reuse_the_nogd_map_and_approximate_the_kernel():
    from lsokl.compute.features import NystromMap

    X, y = toy(n=300, d=3)
    m = registry.create("nsdca", "binary", sigma=1.0, n_components=300, random_state=0).fit(X, y)
    assert isinstance(m.map_, NystromMap)
    Z = m.features(X[:20])
    np.testing.assert_allclose(Z @ Z.T, gaussian_gram(X[:20], X[:20], 1.0), atol=1e-6)


# ---------------------------------------------------------------- memory
def test_state_is_t_r_coefficients_never_frequencies():
    X, y = toy(n=640, d=50)
    m = DSG(sigma=3.0, batch_size=16, block_features=8, random_state=0, max_iter=1).fit(X, y)
    t = m.n_blocks_
    assert t == 40
    assert m.state_size_ == t * 8
    arrays = [v for v in vars(m).values() if isinstance(v, np.ndarray)]
    arrays += [a for v in vars(m).values() if isinstance(v, tuple) for a in v
               if isinstance(a, np.ndarray)]
    # all the numbers kept: the t blocks of r coefficients (coef_ has room for the pass, which is
    # t blocks here) and the labels; no frequencies (one block's W alone is d x r = 400 numbers)
    assert sum(a.size for a in arrays) <= t * 8 + 2
    assert m.cache_ is None and m._last is None
    cached = DSG(sigma=3.0, batch_size=16, block_features=8, random_state=0, cache_features=True, max_iter=1)
    cached.fit(X, y).predict(X)
    assert sum(W.size + c.size for W, c in cached.cache_.values()) == t * 8 * (50 + 1)


# ---------------------------------------------------------------- schedules and checkpoints
def test_step_size_schedules():
    assert step_size("inv_t", 4, 2.0, 1.0, 0) == pytest.approx(0.4)
    assert step_size("inv_sqrt", 3, 2.0, 1.0, 0) == pytest.approx(1.0)
    assert step_size("const", 9, 2.0, 1.0, 0) == 2.0
    assert step_size("matlab", 100, 1.0, 0, 1e-4) == pytest.approx(1 / 1.01)


def test_log_checkpoints_are_batch_ends():
    c = log_checkpoints(1000, 64, 10)
    assert c[0] == 64 and c[-1] == 1000 and all(x % 64 == 0 for x in c[:-1])
    assert np.all(np.diff(c) > 0)


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("key,value", [("batch_size", 0), ("block_features", 0)])
def test_b_or_r_below_one(key, value):
    X, y = toy(n=20)
    with pytest.raises(ValueError, match=key):
        DSG(**{key: value}).fit(X, y)


def test_unknown_schedule_suggests_closest():
    X, y = toy(n=20)
    with pytest.raises(ValueError, match="Did you mean 'inv_sqrt'") as e:
        DSG(schedule="inv_sqr").fit(X, y)
    assert "schedule" in str(e.value)


def test_precond_needs_b_at_least_twice_the_block_width():
    X, y = toy(n=100)
    with pytest.raises(ValueError, match="precond.*batch_size >= 2 x the block width.*128"):
        DSG(precond=True, batch_size=100, block_features=32, form="matlab").fit(X, y)
    DSG(precond=True, batch_size=64, block_features=32).fit(X, y)  # 64 >= 2 x 32: fine


def test_logistic_on_regression_data_names_the_loss_key():
    X, y = toy(n=30, task="regression")
    with pytest.raises(ValueError, match="'loss'.*'logistic' needs a binary or multiclass dataset"):
        RegressionDSG(loss="logistic").fit(X, y)


def test_test_split_with_unseen_classes():
    X, y = toy(n=60, task="multiclass")
    Xt = X[:10]
    yt = np.array([0, 1, 2, 3, 0, 1, 2, 0, 1, 2])
    with pytest.raises(ValueError, match=r"y_test.*classes \[3\]"):
        MulticlassDSG(batch_size=8, block_features=4).fit_curve(X, y, Xt, yt)


@pytest.mark.parametrize("name,task,params", [
    ("dsg", "multiclass", dict(batch_size=32, block_features=8, precond=True, form="matlab",
                               schedule="matlab", theta=1.0, nu=0.0, random_state=2)),
    ("norma", "binary", dict(nu=1e-2, schedule="inv_t", theta=5.0)),
])
def test_running_scores_on_a_multi_pass_stream(name, task, params):
    """The MATLAB script cycles the data: a stream that revisits rows keeps their running scores
    until their last visit, and equals the step-by-step path on X[order]."""
    X, y = toy(n=100, task=task)
    Xt, yt = toy(n=30, seed=9, task=task)
    rng = np.random.default_rng(0)
    order = np.concatenate([np.arange(100), rng.permutation(100), np.arange(100)])[:260]
    p = dict(sigma=1.5, **params)
    if name == "dsg":
        p["dtype"] = "float64"
    fast = registry.create(name, task, **p)
    fast.fit_curve(X, y, Xt, yt, order=order)
    slow = registry.create(name, task, **p).partial_fit(
        X[order], y[order], classes=None if task == "regression" else np.unique(y))
    np.testing.assert_allclose(scores(fast, Xt), scores(slow, Xt), atol=1e-9)
