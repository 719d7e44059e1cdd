"""kernels.dots_with_svs / kernel_row: a CSR row gives bit for bit the dense row's values, which
are the sums over ascending features, one product at a time (the authors' Octave order)."""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from lsokl.compute.kernels import dots_with_svs, kernel_row
from lsokl.compute.stream import Stream


def rows_with_every_length(n=60, d=23, seed=11, scales=(1e-3, 1.0, 1e3)):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.choice(scales, size=(n, d))
    for r in range(n):  # 0 to d non-zeros per row: every remainder of the four-feature sweep
        X[r, rng.permutation(d)[: r % (d + 1)]] = 0.0
    return X, rng.normal(size=(37, d))


def test_csr_dot_products_equal_dense_and_sequential_sums():
    X, S = rows_with_every_length()  # mixed magnitudes: any other summation order shows
    m = len(S)
    sv = np.asfortranarray(S)
    dense, csr = Stream(X), Stream(sp.csr_matrix(X))
    out_d, out_s = np.empty(m), np.empty(m)
    for i in range(len(X)):
        dots_with_svs(dense.xs, i, sv, m, out_d)
        dots_with_svs(csr.xs, i, sv, m, out_s)
        assert np.array_equal(out_d.view(np.uint64), out_s.view(np.uint64))
        for j in range(m):
            acc = 0.0
            for k in range(X.shape[1]):
                if X[i, k] != 0.0:
                    acc += X[i, k] * S[j, k]
            assert out_s[j] == acc


def test_csr_kernel_rows_equal_dense():
    X, S = rows_with_every_length(scales=(0.1, 0.5, 1.0))
    m = len(S)
    sv = np.asfortranarray(S)
    sv_sqn = np.array([sum(v * v for v in s) for s in S])
    inv2s2 = 1.0 / (2.0 * 3.0**2)
    dense, csr = Stream(X), Stream(sp.csr_matrix(X))
    out_d, out_s = np.empty(m), np.empty(m)
    for i in range(len(X)):
        kernel_row(dense.xs, i, dense.sqnorms[i], sv, sv_sqn, m, inv2s2, out_d)
        kernel_row(csr.xs, i, csr.sqnorms[i], sv, sv_sqn, m, inv2s2, out_s)
        assert np.array_equal(out_d.view(np.uint64), out_s.view(np.uint64))
        assert 0.01 < np.median(out_s) < 1.0  # values that carry the dot products' bits
