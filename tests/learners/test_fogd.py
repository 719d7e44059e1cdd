"""FOGD (spec 1.9): hand-checked update, blocked loop == plain per-sample loop, the authors' runs
replayed draw for draw, the Fourier kernel estimate, the vectorised sin/cos, parameter checks."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

from lsokl.compute.features import BLOCK, sincos
from lsokl.learners.online.fogd import FOGD
from lsokl.compute.randomness import ReplaySource
from reference_impl import authors_runs as authors
from reference_impl import fogd as reference

SETTINGS = authors.BINARY_SETTINGS


def test_update_rule_by_hand():
    # d = 1, one frequency u = 1 (sigma = 1): z(x) = [cos x, sin x].
    X = np.array([[0.0], [math.pi], [math.pi / 2]])
    y = np.array([1.0, 1.0, -1.0])
    model = FOGD(sigma=1.0, n_fourier=1, eta=0.5)
    trace = model.run(X, y, random_source=ReplaySource(normals=[1.0]))
    # t=1: z=[1,0], f=0 -> +1 correct; y f = 0 < 1 -> w = [0.5, 0].
    # t=2: z=[-1, sin pi], f=-0.5 -> mistake; y f < 1 -> w = [0, 0.5 sin pi].
    # t=3: z=[cos pi/2, 1], f = 0.5 sin(pi) (1e-16 > 0) -> +1, mistake; w -= 0.5 z.
    w = np.zeros(2)
    for x, yt in zip(X[:, 0], y):
        w = w + 0.5 * yt * np.array([math.cos(x), math.sin(x)])
    assert trace.mistakes == 2
    assert trace.support_size == 3  # the authors count updates as "SVs"
    np.testing.assert_allclose(model.w_, w, atol=1e-15)
    assert model.decision_function(np.array([[0.0]]))[0] == pytest.approx(w[0], abs=1e-15)


def test_margin_is_strict():
    # ||z||^2 = D = 1, so with eta = 1 the second step has y f = 1 exactly: no update.
    X = np.zeros((3, 1))
    trace = FOGD(sigma=1.0, n_fourier=1, eta=1.0).run(X, np.ones(3), random_source=ReplaySource(normals=[1.0]))
    assert trace.support_size == 1


def _stream(seed, n, d=6, heavy=False):
    rng = np.random.default_rng(seed)
    X = rng.lognormal(2.0, 2.0, size=(n, d)) if heavy else rng.standard_normal((n, d))
    y = np.where(np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y, rng.permutation(n)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_plain_python_reference(seed):
    X, y, order = _stream(seed, n=400)
    model = FOGD(sigma=1.0, budget=10, eta=0.05, random_state=seed)
    trace = model.run(X, y, order)
    ref = reference.fogd(X, y, order, U=model.map_.U, eta=0.05)
    assert trace.mistakes == ref["mistakes"]
    assert trace.support_size == ref["updates"]
    np.testing.assert_allclose(model.w_, ref["w"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(model.decision_function(X), ref["decision"](X), rtol=0, atol=1e-9)


@pytest.mark.parametrize("sparse", [False, True])
def test_blocked_loop_makes_the_per_sample_loops_mistakes(sparse):
    """Blocks of BLOCK samples (one BLAS call for U'x, vectorised cos/sin) against the plain
    float64 per-sample loop, on heavy-tailed raw-scale data (|U'x| up to ~1e4) at paper size."""
    n = 6 * BLOCK + 37
    X, y, order = _stream(7, n=n, d=20, heavy=True)
    X[X < 3.0] = 0.0
    model = FOGD(sigma=8.0, budget=100, random_state=3)
    trace = model.run(sp.csr_matrix(X) if sparse else X, y, order)
    ref = reference.fogd(X, y, order, U=model.map_.U, eta=0.002)
    assert trace.mistakes == ref["mistakes"]
    assert trace.support_size == ref["updates"]


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), n_checkpoints=st.integers(1, 600))
def test_blocks_respect_segment_bounds(seed, n_checkpoints):
    """Checkpoints cut the stream into segments; blocks must never cross them, and the result
    must not depend on where the cuts fall. Reference: one step per segment."""
    X, y, order = _stream(seed, n=600)
    per_step = FOGD(sigma=1.0, budget=20, eta=0.05, random_state=seed)
    cut = FOGD(sigma=1.0, budget=20, eta=0.05, random_state=seed)
    a = per_step.run(X, y, order, n_checkpoints=len(y))
    b = cut.run(X, y, order, n_checkpoints=n_checkpoints)
    assert a.mistakes == b.mistakes and a.support_size == b.support_size
    # Bits may differ: BLAS takes another kernel for a 1-row block (gemv) than for 256 rows.
    np.testing.assert_allclose(per_step.w_, cut.w_, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(b.ckpt_mistakes, a.ckpt_mistakes[b.checkpoints - 1])
    np.testing.assert_array_equal(b.ckpt_support, a.ckpt_support[b.checkpoints - 1])


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_same_seed_same_trace(seed):
    X, y, order = _stream(seed, n=300)
    a = FOGD(sigma=1.0, budget=8, random_state=seed).run(X, y, order, n_checkpoints=30)
    b = FOGD(sigma=1.0, budget=8, random_state=seed).run(X, y, order, n_checkpoints=30)
    np.testing.assert_array_equal(a.ckpt_mistakes, b.ckpt_mistakes)
    np.testing.assert_array_equal(a.ckpt_support, b.ckpt_support)


def test_fourier_kernel_estimate_converges():
    """z(x).z(y) / D -> kappa(x, y) as D grows (Rahimi & Recht): the mean absolute error over
    pairs falls roughly like 1/sqrt(D)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 5))
    sigma = 2.0
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    K = np.exp(-sq / (2 * sigma**2))
    errors = []
    for D in (10, 100, 1000, 10000):
        model = FOGD(sigma=sigma, n_fourier=D, random_state=1).fit(X[:1], np.ones(1))
        Z = model.features(X)
        np.testing.assert_allclose((Z * Z).sum(1), D, rtol=1e-12)  # ||z(x)||^2 = D exactly
        errors.append(np.abs(Z @ Z.T / D - K).mean())
    assert all(b < a for a, b in zip(errors, errors[1:])), errors
    assert errors[-1] < 0.02 and errors[0] / errors[-1] > 10


@pytest.mark.parametrize("scale", [1.0, 1e3, 4e5, 1e7])
def test_vectorised_sincos_is_within_2_ulp_of_libm(scale):
    x = np.random.default_rng(0).standard_normal(20000) * scale
    x[:4] = [0.0, -0.0, math.pi / 4, 2.0**19 + 0.5]
    c, s = np.empty_like(x), np.empty_like(x)
    sincos(x, c, s)
    for got, want in ((c, np.cos(x)), (s, np.sin(x))):
        ulp = np.abs(got - want) / np.spacing(np.maximum(np.abs(want), 1e-300))
        assert np.all((ulp <= 2) | (np.abs(got - want) <= 2**-53)), ulp.max()


def test_float32_model_tracks_float64():
    X, y, order = _stream(4, n=3000, heavy=True)
    a = FOGD(sigma=8.0, budget=50, random_state=0).run(X, y, order)
    b = FOGD(sigma=8.0, budget=50, random_state=0, dtype="float32").run(X, y, order)
    assert abs(a.mistakes - b.mistakes) <= 0.01 * len(y)


def test_frequency_count():
    assert FOGD(budget=100).n_components_ == 400
    assert FOGD(budget=50, rho_f=4).n_components_ == 200
    assert FOGD(budget=50, n_fourier=123).n_components_ == 123


@pytest.mark.parametrize("bad", [{"eta": 0.0}, {"sigma": -1.0}, {"budget": 0}, {"rho_f": 0.0},
                                 {"n_fourier": 0}, {"n_fourier": 2.5}, {"dtype": "float16"},
                                 {"random_state": -3}])
def test_invalid_parameters_are_named(bad):
    X, y, _ = _stream(0, n=10)
    (name,) = bad
    with pytest.raises(ValueError, match=f"'{name}' parameter of FOGD"):
        FOGD(**bad).run(X, y)


def test_too_few_frequencies_is_explained():
    X, y, _ = _stream(0, n=10)
    with pytest.raises(ValueError, match="rho_f"):
        FOGD(budget=1, rho_f=0.1).run(X, y)


# ----------------------------------------------------------------------------- authors' runs
@pytest.mark.shared_data
@pytest.mark.parametrize("dataset", ["german", "spambase"])
@pytest.mark.parametrize("setting", ["paper", "script"])
def test_replays_the_authors_runs_exactly(shared_data, reference_runs, dataset, setting):
    """Perms 1-3 with Octave's own randn draws (seed = perm): exact err_count, update count and
    every checkpoint. spambase FOGD is not among the fragile rows, and it matches too."""
    X, y, perms = authors.load(shared_data, dataset)
    normals = np.load(shared_data / "reference-runs" / "rng-streams" / "randn_streams_seed1-3.npy")
    rows = authors.rows(reference_runs, "binary", dataset, "FOGD", setting)
    for row in rows[rows.perm <= 3].itertuples():
        s = int(row.perm)
        trace = FOGD(**SETTINGS[setting]).run(X, y, perms[s - 1],
                                              random_source=ReplaySource(normals=normals[s - 1]))
        authors.assert_same_binary_run(trace, row, checkpoints=False, support_label="nSV (updates)")


@pytest.mark.shared_data
@pytest.mark.parametrize("dataset", ["german", "spambase"])
def test_matches_the_authors_in_distribution(shared_data, reference_runs, dataset):
    """With NumPy's own draws the 20-run mean is within 3 reference std of the authors' mean."""
    X, y, perms = authors.load(shared_data, dataset)
    rows = authors.rows(reference_runs, "binary", dataset, "FOGD", "paper")
    ours = np.array([FOGD(**SETTINGS["paper"], random_state=int(p)).run(X, y, perms[p - 1]).mistakes
                     for p in rows.perm])
    theirs = rows.err_count.to_numpy()
    assert abs(ours.mean() - theirs.mean()) <= 3 * theirs.std(ddof=1)


@pytest.mark.parametrize("rows", [40, 900], ids=["repeated", "distinct"])
@pytest.mark.parametrize("average", [False, True], ids=["plain", "track-average"])
def test_csr_row_loop_is_the_block_path_bit_for_bit(monkeypatch, average, rows):
    """Binary CSR FOGD projects each row inside one compiled loop (``CSR_ROW_LOOP``), only when
    it needs the features; the pass must be the blocked path's to the last bit, on rows that
    repeat (memo hits that still trigger updates included) and on rows that do not (the memo
    off), and with KOL's averaged model."""
    import lsokl.learners.online.fogd as fogd_module

    rng = np.random.default_rng(11)
    base = rng.standard_normal((rows, 30)) * 2.0
    base[rng.random(base.shape) < 0.7] = 0.0
    X = sp.csr_matrix(base[rng.integers(0, len(base), 900)] if rows < 900 else base)
    calls = []
    real = fogd_module._play_csr_rows
    monkeypatch.setattr(fogd_module, "_play_csr_rows", lambda *a: calls.append(1) or real(*a))
    y = np.where(rng.random(900) < 0.5, 1.0, -1.0)
    order = rng.permutation(900)
    runs = {}
    for row_loop in (True, False):
        monkeypatch.setattr(fogd_module, "CSR_ROW_LOOP", row_loop)
        model = FOGD(sigma=2.0, budget=20, eta=0.05, random_state=5)
        model.track_average = average
        trace = model.run(X, y, order, n_checkpoints=9)
        runs[row_loop] = (model, trace)
    (a, ta), (b, tb) = runs[True], runs[False]
    assert calls  # the row loop did run
    assert ta.mistakes == tb.mistakes and ta.support_size == tb.support_size
    np.testing.assert_array_equal(ta.ckpt_mistakes, tb.ckpt_mistakes)
    assert np.array_equal(a.w_.view(np.uint64), b.w_.view(np.uint64))
    if average:
        assert np.array_equal(a.w_sum_.view(np.uint64), b.w_sum_.view(np.uint64))
