"""scale() on dense and CSR input, subsample(), and load()'s scale/max_samples options."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from lsokl.data import load
from lsokl.data.preprocess import apply_scale, fit_scale, scale, subsample
from lsokl.errors import DataError

X = np.array([[1.0, 5.0, -2.0], [3.0, 5.0, 0.0], [2.0, 5.0, 2.0]])


def test_minmax_maps_columns_to_unit_interval_and_constants_to_zero():
    out = scale(X, "minmax")
    assert out.tolist() == [[0.0, 0.0, 0.0], [1.0, 0.0, 0.5], [0.5, 0.0, 1.0]]


def test_minmax_pm1_is_svm_scale():
    out = scale(X, "minmax_pm1")
    assert out.tolist() == [[-1.0, 0.0, -1.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]


def test_standard_is_zscore_with_constant_columns_zero():
    out = scale(X, "standard")
    assert np.allclose(out.mean(axis=0), 0.0)
    assert np.allclose(out[:, [0, 2]].std(axis=0), 1.0) and np.all(out[:, 1] == 0.0)


def test_none_returns_input_and_unknown_is_an_error():
    assert scale(X, "none") is X
    with pytest.raises(DataError, match="unknown scaling 'l2'"):
        scale(X, "l2")


def test_csr_minmax_stays_sparse_when_min_is_zero():
    dense = np.array([[0.0, 2.0, 0.0], [4.0, 0.0, 0.0], [2.0, 1.0, 0.0]])
    out = scale(sp.csr_matrix(dense), "minmax")
    assert sp.isspmatrix_csr(out) and out.nnz == 4
    assert np.allclose(out.toarray(), scale(dense, "minmax"))


@pytest.mark.parametrize("how", ["minmax", "minmax_pm1", "standard"])
def test_csr_matches_dense_for_every_scaling(how):
    rng = np.random.default_rng(1)
    dense = rng.normal(size=(40, 6)) * (rng.random((40, 6)) < 0.4)
    out = scale(sp.csr_matrix(dense), how)
    out = out.toarray() if sp.issparse(out) else out
    assert np.allclose(out, scale(dense, how))


def test_fitted_scaling_reapplies_to_other_rows():
    params = fit_scale(X, "minmax")
    assert apply_scale(np.array([[5.0, 5.0, 4.0]]), params).tolist() == [[2.0, 0.0, 1.5]]


def _dataset(n=100):
    from lsokl.data import Dataset

    Xs = np.arange(n * 2, dtype=np.float64).reshape(n, 2)
    return Dataset("t", Xs, np.arange(n, dtype=np.float64), "regression", {"sha256": "x"},
                   permutations=np.zeros((2, n), dtype=np.int64))


def test_subsample_is_seeded_ordered_and_drops_permutations():
    ds = _dataset()
    a, b, c = subsample(ds, 10, 0), subsample(ds, 10, 0), subsample(ds, 10, 1)
    assert a.n_samples == 10 and np.array_equal(a.y, b.y) and not np.array_equal(a.y, c.y)
    assert np.all(np.diff(a.y) > 0) and a.permutations is None
    assert np.array_equal(a.X[:, 0], a.y * 2)  # rows kept together
    assert a.meta["subsample"] == {"max_samples": 10, "seed": 0, "of_samples": 100}
    assert subsample(ds, 1000, 0) is ds


def test_load_applies_scale_and_max_samples():
    ds = load("breast_cancer", scale="minmax", max_samples=50)
    assert ds.n_samples == 50 and ds.X.min() == 0.0 and ds.X.max() == 1.0
    assert ds.meta["applied"] == ["scale=minmax"]
