"""512-bit vectors per function and prefetches (``cpu_hints``), and cache-line-aligned arrays
(``kernels.aligned_empty``): faster, never different."""
from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit

from lsokl.compute import features
from lsokl.compute.kernels import aligned_copy, aligned_empty, aligned_zeros
from lsokl.compute.cpu_hints import PREFER_512


@njit(cache=False)
def _no_wide_vectors():
    pass


def _recompiled_without_wide_vectors(dispatcher, flags):
    """The same Python function compiled with ``wide_vectors`` a no-op (the default width)."""
    py = dispatcher.py_func
    glob = dict(py.__globals__, wide_vectors=_no_wide_vectors)
    clone = type(py)(py.__code__, glob, py.__name__, py.__defaults__, py.__closure__)
    return njit(**{k: v for k, v in flags.items() if k != "cache"})(clone)


def _values(n=60_000):
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.standard_normal(n // 3) * s for s in (1.0, 300.0, 3e5)])
    x[:8] = [0.0, -0.0, math.pi / 4, -math.pi / 2, 2.0**19, 2.0**19 + 0.5, 1e300, -7e4]
    return x


def test_sincos_is_the_default_widths_bits():
    narrow = _recompiled_without_wide_vectors(features._sincos_fast, features.SINCOS_JIT)
    x = _values()
    wide_c, wide_s = np.empty_like(x), np.empty_like(x)
    c, s = np.empty_like(x), np.empty_like(x)
    for offset in (0, 1, 3):  # unaligned starts and tails too
        assert features._sincos_fast(x[offset:], wide_c[offset:], wide_s[offset:]) == \
            narrow(x[offset:], c[offset:], s[offset:])
        assert np.array_equal(wide_c.view(np.uint64), c.view(np.uint64))
        assert np.array_equal(wide_s.view(np.uint64), s.view(np.uint64))


def test_csr_projection_is_the_default_widths_bits():
    import scipy.sparse as sp

    narrow = _recompiled_without_wide_vectors(features.csr_row_times_dense, features.SPARSE_JIT)
    rng = np.random.default_rng(2)
    X = sp.random(50, 123, density=0.11, random_state=3, format="csr") * 7.0
    for n_out in (400, 37, 3):
        W = rng.standard_normal((123, n_out))
        a, b = np.empty(n_out), np.empty(n_out)
        for i in range(X.shape[0]):
            features.csr_row_times_dense(X.indptr, X.indices, X.data, i, W, a)
            narrow(X.indptr, X.indices, X.data, i, W, b)
            assert np.array_equal(a.view(np.uint64), b.view(np.uint64))


def _attribute_groups(ir):
    return {line.split()[1]: line for line in ir.splitlines() if line.startswith("attributes #")}


def test_only_the_marked_functions_are_widened_and_never_inlined():
    """The attribute stays on the marked function (compiled afresh here: numba does not show
    cached code), and a caller, which may hold reassociated sums whose width is their summation
    order, calls it rather than inlining it and is not marked itself."""
    wide = njit(error_model="numpy", fastmath={"contract"})(features._sincos_fast.py_func)
    wide(np.zeros(8), np.zeros(8), np.zeros(8))
    groups = _attribute_groups(wide.inspect_llvm(wide.signatures[0]))
    assert any(PREFER_512 in g and "noinline" in g for g in groups.values())

    @njit(fastmath={"reassoc", "contract"})
    def caller(p, c, s):
        features.sincos(p, c, s)
        return features.dot(c, s)

    caller(np.zeros(8), np.zeros(8), np.zeros(8))
    ir = caller.inspect_llvm(caller.signatures[0])
    groups = _attribute_groups(ir)
    define = next(line for line in ir.splitlines()
                  if line.startswith("define") and "caller" in line and "cpython" not in line)
    marks = [g for g in define.split() if g.startswith("#")]
    assert all(PREFER_512 not in groups[m] for m in marks)  # often no attribute group at all
    assert any("call" in line and "_sincos_fast" in line for line in ir.splitlines())


@pytest.mark.parametrize("shape", [(0,), (1,), (400,), (256, 400), (3, 5, 7)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_aligned_arrays(shape, dtype):
    for make in (aligned_empty, aligned_zeros):
        a = make(shape, dtype)
        assert a.shape == shape and a.dtype == dtype and a.flags.c_contiguous
        assert a.ctypes.data % 64 == 0 or a.size == 0
        a[...] = 1  # writable, and the whole extent is owned
    assert not aligned_zeros(shape, dtype).any()
    src = np.arange(np.prod(shape), dtype=dtype).reshape(shape)
    copy = aligned_copy(src, dtype)
    assert np.array_equal(copy, src) and copy.ctypes.data % 64 == 0 or copy.size == 0


def test_fourier_map_and_projections_start_on_cache_lines():
    import scipy.sparse as sp

    from lsokl.compute.stream import Stream

    m = features.FourierMap(np.random.default_rng(0).standard_normal((13, 40))[:, ::2])
    assert m.U.ctypes.data % 64 == 0 and m.U.flags.c_contiguous
    X = np.random.default_rng(1).standard_normal((30, 13))
    for data in (X, sp.csr_matrix(X)):
        P = m.project(Stream(data), np.arange(5, 25))
        assert P.ctypes.data % 64 == 0
        np.testing.assert_allclose(P, X[5:25] @ m.U, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_prefetch_is_only_a_hint(dtype):
    """A prefetch reads nothing (so any index is harmless, past the end included) and changes no
    result; the compiled code does carry it."""
    from lsokl.compute.cpu_hints import prefetch

    @njit
    def total(a, ahead):
        s = 0.0
        for i in range(a.shape[0]):
            prefetch(a, i + ahead)
            s += a[i]
        return s

    a = np.arange(1000).astype(dtype)
    for ahead in (0, 1, 17, 10**9):
        assert total(a, ahead) == float(a.sum())
    assert "llvm.prefetch" in total.inspect_llvm(total.signatures[0])


def test_prefetch_next_reads_only_inside_the_arrays():
    """The look-ahead of the per-sample loops (``kernels.prefetch_next``) indexes rows, offsets,
    norms and labels of steps t + 1 and t + 2 only while they exist; compiled with bounds checks
    over whole passes and segments, empty CSR rows and a one-column matrix included."""
    import scipy.sparse as sp

    from lsokl.compute.kernels import prefetch_next
    from lsokl.compute.stream import Stream

    @njit(boundscheck=True)
    def look_ahead(xs, sqn, y, order, start, stop):
        for t in range(start, stop):
            prefetch_next(xs, sqn, y, order, t, stop)
        return stop - start

    rng = np.random.default_rng(0)
    for X in (rng.standard_normal((9, 1)), rng.standard_normal((9, 5)),
              sp.csr_matrix(np.where(rng.random((9, 5)) < 0.4, 1.0, 0.0))):
        stream = Stream(X)
        sqn, y = np.ones(9), np.ones(9)
        order = rng.permutation(9)
        for start, stop in ((0, 9), (3, 5), (8, 9), (4, 4)):
            assert look_ahead(stream.xs, sqn, y, order, start, stop) == stop - start
