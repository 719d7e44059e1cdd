"""Perceptron/OGD played in blocks (lsokl/compute/blocked.py) against the per-sample loop.

The block path must take every decision the per-sample loop takes: same mistakes, same support
set in the same order, same coefficients, same checkpoint curves. The streams below are built
to sit on the decision thresholds (duplicates with opposite labels give f = 0 exactly; constant
points give y f = 1 exactly), where only the exactness guard can keep the two paths together.
Small BLOCK/CHUNK values make every block and chunk boundary occur on short streams.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from lsokl.compute import blocked
from lsokl.learners.online.ogd import KernelOGD, MulticlassOGD
from lsokl.learners.online.perceptron import KernelPerceptron, MulticlassPerceptron

U = 2.0**-53


def test_vectorised_exp_is_within_one_ulp_of_libm():
    from numba import njit

    @njit
    def both(t, a, b):
        for i in range(t.shape[0]):
            a[i] = blocked.exp_nonpositive(t[i])
            b[i] = math.exp(t[i])

    rng = np.random.default_rng(0)
    t = np.concatenate([-rng.uniform(0, 1, 200_000), -rng.uniform(0, 60, 200_000),
                        -rng.exponential(1e-6, 10_000),
                        [0.0, -0.0, -1e-300, -40.0, -39.99999, -40.00001, -745.0, -1e300]])
    a, b = np.empty_like(t), np.empty_like(t)
    both(t, a, b)
    assert np.max(np.abs(a - b)) <= 2 * U  # the error bound allows 8u per kernel value
    assert a[t == 0.0].tolist() == [1.0, 1.0]


def _binary_stream(kind, seed, n=240, d=5):
    rng = np.random.default_rng(seed)
    if kind == "dense":
        X = rng.standard_normal((n, d))
    elif kind == "sparse":
        X = sp.random(n, d * 4, density=0.3, random_state=seed, format="csr") * 3.0
    elif kind == "binary":  # the bit-set path, dense and CSR
        X = (rng.random((n, d * 20)) < 0.15).astype(float)
    elif kind == "binary-csr":
        X = sp.csr_matrix((rng.random((n, d * 20)) < 0.15).astype(float))
    elif kind == "offset":  # far from the origin: |x|^2 + |s|^2 - 2 x.s cancels, single precision errs most
        X = 40.0 + rng.standard_normal((n, d))
    elif kind == "ties":  # few distinct points, many duplicates with both labels
        X = rng.integers(0, 2, (n, 2)).astype(float)
    else:
        raise ValueError(kind)
    Xd = X.toarray() if sp.issparse(X) else X
    y = np.where(Xd[:, 0] - Xd[:, 0].mean() + 0.7 * rng.standard_normal(n) > 0.1, 1.0, -1.0)
    if kind == "ties":
        y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    return X, y, rng.permutation(n)


def _same_run(make, X, y, order):
    per_sample = make()
    per_sample.play_in_blocks = False
    a = per_sample.run(X, y, order, n_checkpoints=7)
    in_blocks = make()
    b = in_blocks.run(X, y, order, n_checkpoints=7)
    assert (a.mistakes, a.support_size) == (b.mistakes, b.support_size)
    np.testing.assert_array_equal(a.ckpt_mistakes, b.ckpt_mistakes)
    np.testing.assert_array_equal(a.ckpt_support, b.ckpt_support)
    m = a.support_size
    np.testing.assert_array_equal(per_sample.alpha_[:m], in_blocks.alpha_[:m])
    np.testing.assert_array_equal(per_sample.order_[:m], in_blocks.order_[:m])
    np.testing.assert_array_equal(per_sample.sv_[:m], in_blocks.sv_[:m])
    np.testing.assert_array_equal(per_sample.counts_, in_blocks.counts_)
    return in_blocks


@pytest.fixture(params=[(blocked.BLOCK, blocked.CHUNK), (8, 16)], ids=["default", "tiny-blocks"])
def block_sizes(request, monkeypatch):
    monkeypatch.setattr(blocked, "BLOCK", request.param[0])
    monkeypatch.setattr(blocked, "CHUNK", request.param[1])


@pytest.mark.parametrize("kind", ["dense", "offset", "sparse", "binary", "binary-csr", "ties"])
@pytest.mark.parametrize("seed", [0, 1])
def test_binary_blocks_take_the_loops_decisions(block_sizes, kind, seed):
    X, y, order = _binary_stream(kind, seed)
    _same_run(lambda: KernelPerceptron(sigma=1.3), X, y, order)
    _same_run(lambda: KernelOGD(sigma=1.3, eta=0.3), X, y, order)


@pytest.mark.parametrize("kind", ["dense", "offset", "sparse", "binary", "ties"])
def test_multiclass_blocks_take_the_loops_decisions(block_sizes, kind):
    X, _, order = _binary_stream(kind, 3)
    Xd = X.toarray() if sp.issparse(X) else X
    y = (np.abs(Xd[:, :2]).sum(axis=1) * 2).astype(np.int64) % 4
    _same_run(lambda: MulticlassPerceptron(sigma=1.3), X, y, order)
    _same_run(lambda: MulticlassOGD(sigma=1.3, eta=0.5), X, y, order)


def test_exact_ties_take_the_exact_path():
    # Identical points with alternating labels: the Perceptron's f is exactly 0 again and again,
    # OGD's y f exactly 1; an approximate f on either side would flip the decision.
    X = np.zeros((40, 3))
    y = np.where(np.arange(40) % 2 == 0, 1.0, -1.0)
    model = _same_run(lambda: KernelPerceptron(sigma=1.0), X, y, None)
    assert model.recomputed_[0] > 0
    model = _same_run(lambda: KernelOGD(sigma=1.0, eta=0.5), np.zeros((9, 2)), np.ones(9), None)
    assert model.support_size_ == 2 and model.recomputed_[0] > 0


def test_partial_fit_switches_between_binary_and_real_inputs():
    rng = np.random.default_rng(5)
    parts = [(rng.random((60, 30)) < 0.2).astype(float), rng.standard_normal((60, 30)),
             (rng.random((60, 30)) < 0.2).astype(float)]
    labels = [np.where(rng.random(60) < 0.5, 1.0, -1.0) for _ in parts]
    ref = KernelOGD(sigma=2.0, eta=0.2)
    ref.play_in_blocks = False
    model = KernelOGD(sigma=2.0, eta=0.2)
    for X, y in zip(parts, labels):
        ref.partial_fit(X, y, classes=[-1.0, 1.0])
        model.partial_fit(X, y, classes=[-1.0, 1.0])
    np.testing.assert_array_equal(ref.counts_, model.counts_)
    np.testing.assert_array_equal(ref.alpha_[:ref.support_size_], model.alpha_[:model.support_size_])


@pytest.mark.parametrize("precision,layout", [("double", "dense"), ("single", "dense"),
                                               ("single", "csr")])
def test_error_bound_covers_the_block_scores(precision, layout):
    # f from the block path's kernel values (BLAS or the CSR product, then the vectorised exp,
    # in double or in single precision) against f from the loop's kernel rows, on data of a
    # wide dynamic range: the difference stays within the bound E of that precision.
    from lsokl.compute.kernels import kernel_row
    from lsokl.compute.stream import Stream

    rng = np.random.default_rng(7)
    X = rng.standard_normal((300, 40)) * rng.uniform(0.1, 10, 40)
    X[150:] += 300.0  # far from the origin: the squared distances cancel
    if layout == "csr":
        X[:, ::2] = 0.0  # half the features zero in every row: a real CSR product
    alpha = rng.standard_normal(260) * 3
    stream = Stream(sp.csr_matrix(X) if layout == "csr" else X)
    sigma = 30.0  # kernel values of 0.05..0.6 here: every term of f counts
    inv2s2 = 1 / (2 * sigma**2)
    sv = np.asfortranarray(X[:260])
    idx = np.arange(260, 300)
    single = None
    c_G, e_k = blocked.dot_error_factor(40) * inv2s2, blocked.KERNEL_ERROR_64
    if precision == "single":
        svT32, sqn32 = np.zeros((40, 260), np.float32), np.zeros(260, np.float32)
        assert blocked.pack_support32(sv, stream.sqnorms[:260], 0, 260, svT32, sqn32)
        single = (svT32, sqn32)
        c_G, e_k = blocked.dot_error_factor32(40) * inv2s2, blocked.KERNEL_ERROR_32
    g = blocked.block_scores(stream, idx, sv, stream.sqnorms[:260], alpha, 260, inv2s2,
                             np.empty(blocked.BLOCK * blocked.CHUNK), single=single)
    A, S = np.abs(alpha).sum(), np.abs(alpha) @ stream.sqnorms[:260]
    krow = np.empty(260)
    worst = 0.0
    for r, i in enumerate(idx):
        kernel_row(stream.xs, i, stream.sqnorms[i], sv, stream.sqnorms[:260], 260, inv2s2, krow)
        f = 0.0
        for j in range(260):
            f += alpha[j] * krow[j]
        E = blocked.error_bound(stream.sqnorms[i], A, S, 260, c_G, e_k)
        assert abs(f - g[r]) <= E
        worst = max(worst, abs(f - g[r]))
        assert E < 1e-6 or precision == "single"  # single: up to ~10 on the offset rows
    # the path of that precision did run: single errs by ~1e-6 here, double by ~1e-14
    assert (worst > 1e-9) == (precision == "single")


def test_single_precision_exp_is_within_its_error_allowance():
    from numba import njit

    @njit
    def both(t, a):
        for i in range(t.shape[0]):
            a[i] = blocked.exp32_nonpositive(t[i])

    rng = np.random.default_rng(1)
    t = np.concatenate([-rng.uniform(0, 1, 200_000), -rng.uniform(0, 100, 200_000),
                        -rng.exponential(1e-6, 10_000),
                        [0.0, -0.0, -1e-30, -87.0, -86.9999, -87.0001, -1e30, -np.inf]])
    t32 = t.astype(np.float32)
    a = np.empty_like(t32)
    both(t32, a)
    err = np.abs(a.astype(np.float64) - np.exp(t32.astype(np.float64)))
    # 1.5 u32 for exp itself; KERNEL_ERROR_32 (4 u32) adds the rounding of its argument
    assert np.max(err) <= 1.5 * 2.0**-24
    assert a[t == 0.0].tolist() == [1.0, 1.0]


@pytest.mark.parametrize("precision", ["single", "double"])
def test_kernel_blocks_are_the_scalar_exp_bit_for_bit(precision):
    # The kernel blocks (gaussian32_from_cross in single precision; exp_nonpositive_in_place,
    # behind the double-precision blocks and the support window) make 2^k from its bits, the
    # scalar exps from power-of-two factors: the same values, down to the flush to 0.
    from numba import njit

    single = precision == "single"
    scalar_exp = blocked.exp32_nonpositive if single else blocked.exp_nonpositive

    @njit
    def scalar(t, a):
        for i in range(t.shape[0]):
            a[i] = scalar_exp(t[i])

    rng = np.random.default_rng(3)
    flush = 87.0 if single else 40.0
    t = np.concatenate([-rng.uniform(0, 1, 100_000), -rng.uniform(0, 1.5 * flush, 100_000),
                        -rng.exponential(1e-6, 10_000),
                        [0.0, -(flush - 1e-4), -flush, -(flush + 1e-4), -800.0]])
    t = t.astype(np.float32 if single else np.float64)
    expected = np.empty_like(t)
    scalar(t, expected)
    if single:  # cross products c = t / 2 with |x|^2 = |s|^2 = 0 and inv2s2 = 1: argument t
        got = (t / np.float32(2.0)).reshape(-1, 433)  # 210,005 = 485 x 433
        blocked.gaussian32_from_cross(got, np.zeros(got.shape[0], np.float32),
                                      np.zeros(got.shape[1], np.float32), np.float32(1.0))
    else:
        got = t.copy()
        blocked.exp_nonpositive_in_place(got, np.empty(len(t), dtype=np.int64))
    bits = np.uint32 if single else np.uint64
    np.testing.assert_array_equal(got.ravel().view(bits), expected.view(bits))
    tiny = 1e-37 if single else 1e-17
    assert np.any((expected > 0) & (expected < tiny)) and np.any(expected == 0)  # both ends


def test_single_precision_is_refused_outside_its_range():
    # A value of 1e20 would overflow float32 products: the block path then plays in double.
    X = np.random.default_rng(2).standard_normal((50, 4))
    X[3, 1] = 1e20
    from lsokl.compute.stream import Stream

    model = KernelPerceptron(sigma=2.0)
    model.run(X, np.where(X[:, 0] > 0, 1.0, -1.0), None)
    assert model.sv32T_ is None
    assert model._support_single(Stream(X[:3])) is None  # a stored vector holds 1e20
    assert model._support_single(Stream(np.ones((3, 4)))) is None


def test_memory_estimate_counts_the_block_paths_copies():
    from lsokl.runner.resources import default_learner_estimate

    model = KernelOGD()
    parts = model.memory_estimate(1000, 10, 1)
    default = default_learner_estimate(model, 1000, 10, 1)
    # the float32 copy, or the support window's sorted double copy (keys, norms, coefficients)
    assert sum(parts.values()) - sum(default.values()) >= 8.0 * 1000 * (10 + 3)
    model.play_in_blocks = False
    assert model.memory_estimate(1000, 10, 1) == default


def _same_regression_run(make, X, y, order):
    """Regression blocks must give the loop's f to the last bit: equal squared-loss curves
    (sums of (y - f)^2), coefficients (OGD stores eta (y - f)) and support sets."""
    per_sample = make()
    per_sample.play_in_blocks = False
    a = per_sample.run(X, y, order, n_checkpoints=7)
    in_blocks = make()
    b = in_blocks.run(X, y, order, n_checkpoints=7)
    assert (a.mistakes, a.support_size) == (b.mistakes, b.support_size)
    assert a.squared_loss == b.squared_loss  # bit for bit, not approximately
    np.testing.assert_array_equal(a.ckpt_squared_loss, b.ckpt_squared_loss)
    m = a.support_size
    np.testing.assert_array_equal(per_sample.alpha_[:m], in_blocks.alpha_[:m])
    np.testing.assert_array_equal(per_sample.sv_[:m], in_blocks.sv_[:m])
    np.testing.assert_array_equal(per_sample.counts_, in_blocks.counts_)
    np.testing.assert_array_equal(per_sample.sq_loss_, in_blocks.sq_loss_)
    assert m > 2 * blocked.BLOCK or blocked.BLOCK < 16  # joins inside and across blocks
    return in_blocks


@pytest.mark.parametrize("kind", ["dense", "offset", "sparse", "binary"])
def test_regression_blocks_are_the_loop_bit_for_bit(block_sizes, kind):
    from lsokl.learners.online.ogd import RegressionOGD
    from lsokl.learners.online.perceptron import RegressionPerceptron

    X, _, order = _binary_stream(kind, 4, n=900)
    Xd = X.toarray() if sp.issparse(X) else X
    y = np.sin(Xd[:, :3].sum(axis=1)) + 0.1 * np.random.default_rng(4).standard_normal(len(Xd))
    _same_regression_run(lambda: RegressionPerceptron(sigma=1.7, eta=0.1, epsilon=0.05), X, y, order)
    _same_regression_run(lambda: RegressionOGD(sigma=1.7, eta=0.3, epsilon=0.05), X, y, order)


def test_regression_partial_fit_in_blocks_is_the_loop():
    from lsokl.learners.online.ogd import RegressionOGD

    rng = np.random.default_rng(6)
    ref, model = RegressionOGD(sigma=2.0, eta=0.2), RegressionOGD(sigma=2.0, eta=0.2)
    ref.play_in_blocks = False
    for _ in range(3):
        X = rng.standard_normal((300, 6))
        y = X[:, 0] - X[:, 1] ** 2
        ref.partial_fit(X, y)
        model.partial_fit(X, y)
    np.testing.assert_array_equal(ref.sq_loss_, model.sq_loss_)
    np.testing.assert_array_equal(ref.alpha_[:ref.support_size_], model.alpha_[:model.support_size_])


def test_single_precision_retries_back_off_across_segments(monkeypatch):
    """Where single precision fails for good (a raw feature spanning [-2000, 0]: its error bound
    exceeds 1 and every sample of a single-precision block is replayed), the blocked Perceptron
    retries it after 8, 16, 32, ... blocks, counted across the pass's checkpoint segments, and
    its decisions stay the per-sample loop's."""
    rng = np.random.default_rng(4)
    n = 12_000
    X = np.column_stack([rng.uniform(-2000.0, 0.0, n), rng.random((n, 3))])
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    attempts = []
    real = blocked.block_scores

    def spy(stream, idx, *args, **kwargs):
        attempts.append(kwargs.get("single", args[9] if len(args) > 9 else None) is not None)
        return real(stream, idx, *args, **kwargs)

    monkeypatch.setattr(blocked, "block_scores", spy)
    # such a feature now takes the support window instead (test_window.py); this is the path
    # for wide data the window does not pay on
    monkeypatch.setattr(blocked, "WINDOW", False)
    blocked_run = KernelPerceptron(sigma=8.0)
    trace = blocked_run.run(X, y)
    loop = KernelPerceptron(sigma=8.0)
    loop.play_in_blocks = False
    reference = loop.run(X, y)
    assert trace.mistakes == reference.mistakes
    assert np.array_equal(trace.ckpt_mistakes, reference.ckpt_mistakes)
    assert len(attempts) > 40 and sum(attempts) <= 4  # 47 blocks, in about 20 segments
    assert blocked_run.recomputed_[0] <= 4 * blocked.BLOCK + 100
