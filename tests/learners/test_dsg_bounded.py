"""Bounded DSG (spec DSG.md section 4, issue 26 item 6): after ``max_blocks`` blocks each step
refines a uniformly random existing block, so a pass is linear in n."""
from __future__ import annotations

import math
import time

import numpy as np
import pytest

from lsokl.learners.stochastic.dsg import DSG, RegressionDSG, block_seed_sequence


class _Injected(DSG):
    """Test hook: the frequencies and phases of block j are given, not drawn (a missing j fails)."""

    blocks: dict = {}

    def _block(self, j):
        return self.blocks[j]


def _phi(x, W, c):
    return math.sqrt(2.0) * math.cos(float(x @ W[:, 0]) + c[0])


def test_third_step_refines_a_random_existing_block_by_hand():
    """b = r = 1, hinge, nu = 0.5, gamma_t = 1/t, max_blocks = 2: steps 1, 2 add blocks 1, 2;
    step 3 scores x3 with both blocks, decays both by (1 - gamma_3 nu) and adds its step to the
    block the refine generator picks; no block 3 is ever drawn (the hook would raise)."""
    xs = np.array([[0.3, -0.2], [-0.4, 0.5], [0.1, 0.9]])
    ys = [1.0, -1.0, 1.0]
    blocks = {1: (np.array([[1.0], [2.0]]), np.array([0.1])),
              2: (np.array([[-0.5], [0.7]]), np.array([1.3]))}
    _Injected.blocks = blocks
    nu = 0.5
    m = _Injected(sigma=1.0, nu=nu, batch_size=1, block_features=1, schedule="inv_t", theta=1.0,
                  dtype="float64", random_state=4, max_blocks=2)
    m.partial_fit(xs[:1], ys[:1], classes=[-1.0, 1.0])
    m.partial_fit(xs[1:2], ys[1:2])
    a1, a2 = m.coef_[0, 0, 0], m.coef_[1, 0, 0]
    assert m.n_blocks_ == 2
    f3 = a1 * _phi(xs[2], *blocks[1]) + a2 * _phi(xs[2], *blocks[2])
    j = int(np.random.Generator(np.random.PCG64(block_seed_sequence(np.random.SeedSequence(4), 0)))
            .integers(1, 3))
    m.partial_fit(xs[2:3], ys[2:3])
    gamma3 = 1.0 / 3.0
    step = gamma3 * ys[2] * _phi(xs[2], *blocks[j]) * (ys[2] * f3 < 1)
    expect = np.array([a1, a2]) * (1 - gamma3 * nu)
    expect[j - 1] += step
    assert m.n_blocks_ == 2 and m.coef_.shape[0] == 2
    np.testing.assert_allclose(m.coef_[:, 0, 0], expect, rtol=0, atol=1e-15)
    assert step != 0.0


def test_refined_blocks_are_uniform_and_seeded():
    X = np.random.default_rng(0).normal(size=(4000, 3))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    picks = []

    class Spy(DSG):
        def _target_block(self, t):
            j = super()._target_block(t)
            picks.append(j)
            return j

    Spy(sigma=1.0, batch_size=2, block_features=2, max_blocks=4, random_state=1).fit(X, y)
    refine = np.array(picks[4:])
    assert picks[:4] == [1, 2, 3, 4]
    counts = np.bincount(refine, minlength=5)[1:]
    n = refine.size
    assert np.all(np.abs(counts - n / 4) <= 4 * math.sqrt(n * 0.25 * 0.75))  # 4 sd of a binomial
    a = DSG(sigma=1.0, batch_size=2, block_features=2, max_blocks=4, random_state=1).fit(X, y)
    b = DSG(sigma=1.0, batch_size=2, block_features=2, max_blocks=4, random_state=1).fit(X, y)
    assert np.array_equal(a.coef_, b.coef_)


def test_max_blocks_not_reached_equals_growing_form():
    """max_blocks >= the number of steps: the same model as the growing form (the bounded driver
    scores batches directly, the growing one from running scores: equal up to rounding)."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 4))
    y = np.sin(X[:, 0]) + 0.1 * X[:, 1]
    Xt = rng.normal(size=(50, 4))
    yt = np.sin(Xt[:, 0])
    kw = dict(sigma=1.5, batch_size=10, block_features=8, random_state=5, dtype="float64", nu=1e-3)
    g = RegressionDSG(**kw)
    cg = g.fit_curve(X, y, Xt, yt)
    bnd = RegressionDSG(**kw, max_blocks=30)
    cb = bnd.fit_curve(X, y, Xt, yt)
    assert g.n_blocks_ == bnd.n_blocks_ == 30
    np.testing.assert_allclose(bnd.coef_[:30], g.coef_[:30], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(cb.test_error, cg.test_error, rtol=1e-9)


def test_bounded_model_stays_bounded_and_predicts_from_its_blocks():
    X = np.random.default_rng(3).normal(size=(2000, 5))
    y = np.where(X[:, 0] + X[:, 1] > 0, 1.0, -1.0)
    m = DSG(sigma=2.0, batch_size=16, block_features=8, max_blocks=5, random_state=0, max_iter=1).fit(X, y)
    assert m.n_blocks_ == 5 and m.coef_.shape[0] == 5 and m.state_size_ == 5 * 8
    assert m.t_ == 125
    assert m.score(X, y) > 0.8


def test_max_blocks_bad_value_is_a_clear_error():
    X = np.zeros((4, 2))
    with pytest.raises(ValueError, match="'max_blocks' parameter of DSG must be an int"):
        DSG(max_blocks=0).fit(X, [1, -1, 1, -1])


def _pass(n, max_blocks):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 20)).astype(np.float32)
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    m = DSG(sigma=3.0, batch_size=32, block_features=64, max_blocks=max_blocks, random_state=0, max_iter=1)
    t = time.process_time()
    m.fit(X, y)
    return m.feature_rows_, time.process_time() - t


def test_bounded_pass_work_is_linear_in_n_growing_is_quadratic():
    """The work measure: (row, block) feature evaluations of a training pass."""
    w1, _ = _pass(4000, 10)
    w2, _ = _pass(8000, 10)
    assert w2 / w1 <= 2.05
    g1, _ = _pass(4000, None)
    g2, _ = _pass(8000, None)
    assert g2 / g1 >= 3.9


# ---------------------------------------------------------------- max_blocks="auto" (the default)
def test_auto_small_fit_is_the_growing_form(monkeypatch):
    """At most AUTO_ROWS training rows: the default fits the same model as max_blocks=None."""
    from lsokl.learners.stochastic import dsg as dsg_mod

    monkeypatch.setattr(dsg_mod, "AUTO_ROWS", 1000)
    X = np.random.default_rng(4).normal(size=(600, 5))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    kw = dict(sigma=2.0, batch_size=16, block_features=8, random_state=0, dtype="float64", max_iter=1)
    auto = DSG(**kw).fit(X, y)
    grow = DSG(**kw, max_blocks=None).fit(X, y)
    assert auto.max_blocks_ is None and auto.model_form_.startswith("growing (max_blocks: auto")
    assert auto.n_blocks_ == grow.n_blocks_ == 38
    assert np.array_equal(auto.coef_, grow.coef_)


def test_auto_large_fit_is_bounded_and_says_so(monkeypatch):
    """Above AUTO_ROWS: ceil(AUTO_FEATURES / block width) blocks, said in model_form_."""
    from lsokl.learners.stochastic import dsg as dsg_mod

    monkeypatch.setattr(dsg_mod, "AUTO_ROWS", 500)
    monkeypatch.setattr(dsg_mod, "AUTO_FEATURES", 20)
    X = np.random.default_rng(5).normal(size=(800, 5))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    m = DSG(sigma=2.0, batch_size=16, block_features=8, random_state=0, max_iter=1).fit(X, y)
    assert m.max_blocks_ == 3 and m.n_blocks_ == 3  # ceil(20 / 8)
    assert m.model_form_.startswith("bounded (max_blocks: auto, 800 training rows > 500: 3 blocks")
    assert DSG(max_blocks=None).fit(X, y).model_form_.startswith("growing (max_blocks: null")


def test_auto_max_blocks_is_the_only_string_accepted():
    X = np.zeros((4, 2))
    with pytest.raises(ValueError, match="'max_blocks' parameter of DSG must be an int .* or None or 'auto'"):
        DSG(max_blocks="big").fit(X, [1, -1, 1, -1])


def test_default_pass_work_doubles_when_rows_double(monkeypatch):
    """The default (max_blocks="auto") on data above its row limit: the pass's work (``feature_rows_``,
    its (row, block) feature evaluations) for 2n rows is 2x the work for n (the growing form's is ~4x).
    The limits are lowered so the pass is short. Its CPU time against n is measured, not tested (timings
    fail under parallel test workers): benchmarks/dsg_linear.py."""
    from lsokl.learners.stochastic import dsg as dsg_mod

    monkeypatch.setattr(dsg_mod, "AUTO_ROWS", 5000)
    monkeypatch.setattr(dsg_mod, "AUTO_FEATURES", 640)  # 10 blocks of 64

    def run(n):
        rng = np.random.default_rng(0)
        X = rng.normal(size=(n, 20)).astype(np.float32)
        y = np.where(X[:, 0] > 0, 1.0, -1.0)
        return DSG(sigma=3.0, batch_size=32, block_features=64, random_state=0, max_iter=1).fit(X, y)

    m1, m2 = run(10000), run(20000)
    assert m1.max_blocks_ == m2.max_blocks_ == 10
    assert m2.feature_rows_ / m1.feature_rows_ <= 2.05


def test_memory_estimate_counts_the_frequencies_the_bounded_form_keeps(monkeypatch):
    """The bounded form keeps every block's W and c (blocks x r x (d + 1) numbers, float32 by default): part
    of its estimate above AUTO_ROWS, absent below it (the growing form regenerates them)."""
    from lsokl.learners.stochastic import dsg as dsg_mod

    m = DSG(block_features=64)
    big = m.memory_estimate(dsg_mod.AUTO_ROWS + 1, 1000)
    assert big["kept frequencies W, c (256 blocks x 64 x (d + 1))"] == 4.0 * 256 * 64 * 1001
    assert not any(k.startswith("kept frequencies") for k in m.memory_estimate(dsg_mod.AUTO_ROWS, 1000))
    assert DSG(max_blocks=5, dtype="float64").memory_estimate(100, 10)[
        "kept frequencies W, c (5 blocks x 64 x (d + 1))"] == 8.0 * 5 * 64 * 11


def test_report_says_when_the_size_chose_the_bounded_form():
    from lsokl.report import _model_form_note

    form = "bounded (max_blocks: auto, 464810 training rows > 100000: 256 blocks = 16384 features, linear in n)"
    recs = [{"algorithm": "dsg", "dataset": "covtype", "holdout": {"model_form": form}},
            {"algorithm": "dsg", "dataset": "covtype", "holdout": {"model_form": form}},
            {"algorithm": "dsg", "dataset": "a9a", "holdout": {"model_form": "growing (max_blocks: auto, 32561 "
                                                                            "training rows <= 100000)"}},
            {"algorithm": "norma", "dataset": "a9a", "holdout": {}}]
    assert _model_form_note(recs) == f"\n\nModel form chosen by size: dsg on covtype: {form}."
