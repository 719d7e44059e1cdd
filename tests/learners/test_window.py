"""The support window of the blocked Perceptron/OGD (lsokl/compute/window.py).

Stage 1 sums a sample's block-start score over the support vectors within w of it on one wide
feature; every left-out term is below exp(-c w^2) exactly, the guard's bound grows by that, and
the decisions must stay the per-sample loop's. The streams here have one feature spanning many
kernel widths, so most support vectors fall outside each window.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from lsokl.compute import blocked
from lsokl.compute import window
from lsokl.compute.kernels import kernel_row
from lsokl.learners.online.ogd import KernelOGD
from lsokl.learners.online.perceptron import KernelPerceptron
from lsokl.compute.stream import Stream

from test_blocked import _same_run, block_sizes  # noqa: F401  (fixture)


def _wide_stream(seed, n=400, d=4, spread=60.0):
    """Feature 2 spans ~spread kernel widths (sigma 1.3 below); labels follow feature 0."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X[:, 2] *= spread
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y, rng.permutation(n)


def test_window_feature_is_the_one_that_excludes_most_pairs():
    X, _, _ = _wide_stream(0)
    assert window.window_feature(Stream(X), 1.3) == 2
    # the same rows at a kernel width as wide as the data: every pair is within w
    assert window.window_feature(Stream(X), 100.0) is None
    # sparse rows never use it
    assert window.window_feature(Stream(sp.csr_matrix(X)), 1.3) is None
    # a value too large for the rounding argument (outside the sample, too) refuses the feature
    X2 = X.copy()
    X2[1, 2] = 1e12
    assert window.window_feature(Stream(X2), 1.3) is None


def test_window_width_leaves_out_only_kernel_values_below_the_tail():
    sigma = 1.7
    w = window.window_width(sigma)
    c = 1 / (2 * sigma**2)
    assert math.isclose(math.exp(-c * w * w), math.exp(-window.TAIL_EXPONENT), rel_tol=1e-9)
    # a gap rounded down by 1e-6 w (the searched bounds' rounding) still stays below TAIL
    assert math.exp(-c * (w * (1 - 1e-6)) ** 2) <= window.TAIL


def test_insert_sorted_keeps_every_slot_once_in_key_order():
    rng = np.random.default_rng(3)
    m, d = 300, 3
    sv = np.asfortranarray(rng.standard_normal((m, d)))
    sv[::7, 1] = 0.25  # repeated keys
    sqn, alpha = (sv**2).sum(1), rng.standard_normal(m)
    win = window.SupportWindow(1, 1.0, d, m)
    for first, stop in [(0, 1), (1, 1), (1, 40), (40, 41), (41, 300)]:
        win.add(sv, sqn, alpha, first, stop)
        k = int(win.size[0])
        assert k == stop
        assert np.all(np.diff(win.keys[:k]) >= 0)
        # the same (vector, norm, coefficient) triples as the slots, each once
        got = np.column_stack([win.svT[:, :k].T, win.sqn[:k], win.alpha[:k]])
        want = np.column_stack([sv[:stop], sqn[:stop], alpha[:stop]])
        np.testing.assert_array_equal(got[np.lexsort(got.T[::-1])], want[np.lexsort(want.T[::-1])])
        np.testing.assert_array_equal(win.keys[:k], win.svT[1, :k])


def test_windowed_scores_stay_within_the_guards_bound():
    # g over each sample's window against f of the per-sample loop's kernel rows over the whole
    # support set: |f - g| <= E with the tail added; the left-out terms are not all exact zeros.
    X, _, _ = _wide_stream(1, n=600, spread=25.0)
    sigma = 1.3
    stream = Stream(X)
    m = 500
    sv = np.asfortranarray(X[:m])
    rng = np.random.default_rng(2)
    alpha = rng.standard_normal(m) * 4
    feature = window.window_feature(stream, sigma)
    assert feature == 2
    win = window.SupportWindow(feature, sigma, X.shape[1], m)
    win.add(sv, stream.sqnorms[:m], alpha, 0, m)
    inv2s2 = 1 / (2 * sigma**2)
    idx = np.arange(m, 600)
    g = win.scores(stream, idx, inv2s2)
    c_G = blocked.dot_error_factor(X.shape[1]) * inv2s2
    A, S = np.abs(alpha).sum(), np.abs(alpha) @ stream.sqnorms[:m]
    krow = np.empty(m)
    left_out_positive = 0
    for r, i in enumerate(idx):
        kernel_row(stream.xs, i, stream.sqnorms[i], sv, stream.sqnorms[:m], m, inv2s2, krow)
        f = float(np.sum(alpha * krow))
        E = blocked.error_bound(stream.sqnorms[i], A, S, m, c_G,
                                blocked.KERNEL_ERROR_64 + win.tail)
        assert abs(f - g[r]) <= E
        out = np.abs(X[i, feature] - X[:m, feature]) > win.width
        assert out.sum() > m // 2  # most of the support set is outside the window
        assert np.all(krow[out] <= win.tail)
        left_out_positive += int(np.count_nonzero(krow[out]))
    assert left_out_positive > 0  # the bound had real (tiny) terms to cover


@pytest.mark.parametrize("seed", [0, 1])
def test_window_blocks_take_the_loops_decisions(block_sizes, seed):  # noqa: F811
    X, y, order = _wide_stream(seed)
    for make in (lambda: KernelPerceptron(sigma=1.3), lambda: KernelOGD(sigma=1.3, eta=0.3)):
        model = _same_run(make, X, y, order)
        assert model.sv_window_ is not None and int(model.sv_window_.size[0]) == model.support_size_


def test_window_keeps_exact_ties_exact():
    # duplicates with both labels on a wide feature: f = 0 and y f = 1 exactly, again and again
    rng = np.random.default_rng(4)
    X = np.column_stack([rng.integers(0, 5, 300) * 200.0, rng.integers(0, 2, 300).astype(float)])
    y = np.where(rng.random(300) < 0.5, 1.0, -1.0)
    order = rng.permutation(300)
    for make in (lambda: KernelPerceptron(sigma=1.0), lambda: KernelOGD(sigma=1.0, eta=0.5)):
        model = _same_run(make, X, y, order)
        assert model.sv_window_ is not None and model.recomputed_[0] > 0


def test_window_off_gives_the_same_pass(monkeypatch):
    X, y, order = _wide_stream(5)
    on = KernelOGD(sigma=1.3, eta=0.2)
    on.run(X, y, order, n_checkpoints=5)
    monkeypatch.setattr(blocked, "WINDOW", False)
    off = KernelOGD(sigma=1.3, eta=0.2)
    off.run(X, y, order, n_checkpoints=5)
    assert on.sv_window_ is not None and off.sv_window_ is None
    np.testing.assert_array_equal(on.counts_, off.counts_)
    m = on.support_size_
    np.testing.assert_array_equal(on.alpha_[:m], off.alpha_[:m])


def test_partial_fit_rebuilds_the_window_when_the_buffer_grows():
    X, y, _ = _wide_stream(6, n=300)
    ref = KernelOGD(sigma=1.3, eta=0.3)
    ref.play_in_blocks = False
    model = KernelOGD(sigma=1.3, eta=0.3)
    for a in range(0, 300, 37):
        ref.partial_fit(X[a:a + 37], y[a:a + 37], classes=[-1.0, 1.0])
        model.partial_fit(X[a:a + 37], y[a:a + 37], classes=[-1.0, 1.0])
    np.testing.assert_array_equal(ref.counts_, model.counts_)
    m = ref.support_size_
    np.testing.assert_array_equal(ref.alpha_[:m], model.alpha_[:m])
    assert model.sv_window_ is not None and int(model.sv_window_.size[0]) == m
