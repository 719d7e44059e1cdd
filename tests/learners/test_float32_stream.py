"""float32 data without a float64 copy (issue 26 item 2).

A Stream keeps float32 dense rows and CSR values as they are (a memory map stays that memory
map); FOGD, NOGD and the BPegasos family (BSGD-M/R) read them in their compiled loops, converting
each value to float64 before using it. float32 -> float64 is exact, so a pass over float32 X is
the pass over ``X.astype(float64)`` bit for bit. The other learners get ``Stream.as_float64()``.
Few learners are exercised on float32 here on purpose: each one compiles its loops once more.
"""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from lsokl.compute import stream as stream_module
from lsokl.compute.stream import Stream
from lsokl.learners import create


def _memmap(tmp_path, name, a):
    path = tmp_path / f"{name}.npy"
    np.save(path, a)
    return np.load(path, mmap_mode="r")


def _data(n=300, d=7, seed=0, repeats=True):
    """float32 values whose squares and products are not float32 numbers, plus repeated rows
    (so the duplicate-row ids run on float32 bits too) and labels +-1."""
    rng = np.random.default_rng(seed)
    X = (rng.standard_normal((n, d)) * 1.7).astype(np.float32)
    X[rng.random(X.shape) < 0.4] = 0.0
    if repeats:
        X[n // 2:] = X[rng.integers(0, 20, n - n // 2)]
    y = np.where(X[:, 0] + 0.5 * X[:, 1] - 0.2 > 0, 1.0, -1.0)
    return X, y


def test_stream_keeps_a_float32_dense_memmap(tmp_path):
    X, _ = _data(repeats=False)
    Xm = _memmap(tmp_path, "X", X)
    s = Stream(Xm)
    assert s.dense.dtype == np.float32 and np.shares_memory(s.dense, Xm)
    ref = Stream(X.astype(np.float64))
    # float64 squared norms from the exact conversions: the float64 stream's, bit for bit
    assert s.sqnorms.dtype == np.float64
    np.testing.assert_array_equal(s.sqnorms.view(np.uint64), ref.sqnorms.view(np.uint64))
    naive32 = (X * X).sum(axis=1, dtype=np.float32)  # what squaring in float32 would give
    assert not np.array_equal(naive32.astype(np.float64), ref.sqnorms)
    f64 = s.as_float64()
    assert f64.dense.dtype == np.float64 and f64 is s.as_float64()
    np.testing.assert_array_equal(f64.dense, ref.dense)
    assert ref.as_float64() is ref


def test_stream_keeps_float32_int32_csr_memmaps(tmp_path):
    X, _ = _data(repeats=False)
    csr = sp.csr_matrix(X)
    data = _memmap(tmp_path, "d", csr.data.astype(np.float32))
    indices = _memmap(tmp_path, "i", csr.indices.astype(np.int32))
    indptr = _memmap(tmp_path, "p", csr.indptr.astype(np.int64))
    Xc = sp.csr_matrix((data, indices, indptr), shape=csr.shape)
    s = Stream(Xc)
    assert s.values.dtype == np.float32 and np.shares_memory(s.values, data)
    assert s.indices.dtype == np.int32 and np.shares_memory(s.indices, indices)
    ref = Stream(sp.csr_matrix(X.astype(np.float64)))
    np.testing.assert_array_equal(s.sqnorms, ref.sqnorms)
    np.testing.assert_array_equal(s.as_float64().values, ref.values)


def test_a_pass_over_a_float32_memmap_allocates_no_float64_copy(tmp_path):
    """FOGD's pass (dense rows, BLAS projections by blocks) traces far less than the n x d
    float64 copy the Stream used to make (16 MB here)."""
    rng = np.random.default_rng(3)
    n, d = 20_000, 100
    Xm = _memmap(tmp_path, "X", rng.standard_normal((n, d)).astype(np.float32))
    y = np.where(rng.standard_normal(n) > 0, 1.0, -1.0)
    learner = create("fogd", sigma=3.0, n_fourier=16, random_state=0)
    learner.run(Xm[:300], y[:300])  # compile first (numba's compiler allocates too)
    stream_module._REUSED.clear()
    tracemalloc.start()
    try:
        learner.run(Xm, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < n * d * 8 / 4, f"{peak / 1e6:.1f} MB traced"


def test_learners_that_do_not_read_float32_get_the_float64_copy():
    X, y = _data(repeats=False)
    a = create("ogd", sigma=2.0).run(X, y)
    b = create("ogd", sigma=2.0).run(X.astype(np.float64), y)
    assert (a.mistakes, a.support_size) == (b.mistakes, b.support_size)
    np.testing.assert_array_equal(a.ckpt_mistakes, b.ckpt_mistakes)


def _same_run(name, task, X, y, params, arrays):
    a = create(name, task, **params)
    ta = a.run(X, y)
    b = create(name, task, **params)
    tb = b.run(X.astype(np.float64), y)
    assert ta.mistakes > 0 and ta.support_size > 0
    assert (ta.mistakes, ta.support_size) == (tb.mistakes, tb.support_size)
    assert a.sigma_ == b.sigma_
    np.testing.assert_array_equal(ta.ckpt_mistakes, tb.ckpt_mistakes)
    for attr in arrays:  # bit for bit
        np.testing.assert_array_equal(getattr(a, attr), getattr(b, attr), err_msg=attr)
    Xt = X[:50]
    np.testing.assert_array_equal(a.decision_function(Xt.astype(np.float64)),
                                  b.decision_function(Xt.astype(np.float64)))


@pytest.mark.parametrize("sparse", [False, True])
def test_fogd_on_float32_is_the_float64_pass_bit_for_bit(sparse):
    X, y = _data()
    X = sp.csr_matrix(X) if sparse else X
    # sigma="scale": the width from the float32 values (read without a copy) is the float64 one
    _same_run("fogd", "binary", X, y, dict(sigma="scale", n_fourier=24, eta=0.05, random_state=1),
              ["w_"])


def test_bsgd_m_and_nogd_on_float32_are_the_float64_passes_bit_for_bit():
    """Both read rows through the shared kernel_row/store_row (NOGD also through the Nystrom
    features' BLAS blocks after its switch)."""
    X, y = _data(seed=2)
    _same_run("bsgd-m", "multiclass", X, (y > 0).astype(np.int64),
              dict(budget=8, sigma=2.0, lam=1e-3), ["alpha_", "sv_"])
    nogd = dict(sigma=2.0, budget=10, eta=0.2)
    _same_run("nogd", "binary", X, y, nogd, ["sv_", "w_"])
    nogd32 = create("nogd", **nogd)
    nogd32.run(X, y)
    assert nogd32.switched_  # the linear phase (Nystrom features of float32 rows) was played


def _traced_peak(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_bounded_dsg_reads_float32_memmaps_without_data_sized_temporaries(tmp_path):
    """DSG (float32 features) takes float32 dense rows and float32/int32 CSR memory maps as they
    are; its input checks (finiteness, the largest row norm) used to allocate an n x d boolean
    array and an nnz-sized float64 array."""
    rng = np.random.default_rng(5)
    n, d = 40_000, 100
    dense = rng.standard_normal((n, d)).astype(np.float32)
    dense[rng.random((n, d)) < 0.5] = 0.0
    y = np.where(rng.standard_normal(n) > 0, 1.0, -1.0)
    kw = dict(sigma=3.0, batch_size=256, block_features=32, max_blocks=4, random_state=0)
    Xm = _memmap(tmp_path, "X", dense)
    csr = sp.csr_matrix(dense)
    Xc = sp.csr_matrix((_memmap(tmp_path, "d", csr.data), _memmap(tmp_path, "i", csr.indices),
                        _memmap(tmp_path, "p", csr.indptr.astype(np.int64))), shape=csr.shape)
    for X, limit in ((Xm, n * d // 2), (Xc, csr.nnz * 2)):  # an n x d bool / nnz float64 is more
        create("dsg", **kw).fit_curve(X, y, X[:8], y[:8], order=np.arange(600))  # compile
        peak = _traced_peak(lambda: create("dsg", **kw).fit_curve(X, y, X[:8], y[:8]))
        assert peak < limit, f"{type(X).__name__}: {peak / 1e6:.1f} MB traced"


def test_duplicate_row_ids_of_float32_rows_are_the_float64_ones():
    """The memo's row ids compare float32 rows by their own bits (no float64 copy): equal iff
    the float64 conversions are equal (the conversion is one to one)."""
    from lsokl.compute.duplicates import repeated_row_ids, row_ids

    X, _ = _data()
    X[7, 3], X[8] = -0.0, X[7]  # -0.0 and 0.0 differ in both precisions
    X[8, 3] = 0.0
    for A in (X, sp.csr_matrix(X)):
        s = Stream(A)
        ids, n_ids = repeated_row_ids(s)
        assert s.dtype == np.float32 and ids is not None  # the memo is on for these rows
        ids64, n64 = row_ids(Stream(A.astype(np.float64)))
        np.testing.assert_array_equal(ids, ids64)
        assert n_ids == n64
        assert (ids[7] == ids[8]) == sp.issparse(A)  # CSR drops both zeros: equal rows there
