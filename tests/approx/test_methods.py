"""The baselines: each one's construction checked against a hand computation, shared code, errors."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

from lsokl.approx import create
from lsokl.approx.clustering import eff_kmeans, meka_kmeans, nearest_centre
from lsokl.approx.fastfood import fwht_rows
from lsokl.approx.metrics import block_ranks, numerical_rank, relative_error
from lsokl.learners import registry
from lsokl.compute.features import FourierMap, NystromMap


def kernel(A, B, gamma):
    return np.exp(-gamma * ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))


@pytest.fixture(scope="module")
def X():
    return np.random.default_rng(0).uniform(size=(200, 6))


def test_nystrom_is_C_Mk_pinv_C_on_its_landmarks(X):
    a = create("nystrom", rank=10, gamma=2.0).fit(X, seed=1)
    assert isinstance(a.map_, NystromMap)  # NOGD's map
    lm = a.map_.sv
    assert lm.shape == (20, 6)  # m = 2k landmarks, drawn from X without replacement
    assert len({tuple(r) for r in lm}) == 20 and all((X == r).all(1).any() for r in lm)
    C = kernel(X, lm, 2.0)
    U, s, _ = np.linalg.svd(kernel(lm, lm, 2.0))
    np.testing.assert_allclose(a.to_dense(), C @ ((U[:, :10] / s[:10]) @ U[:, :10].T) @ C.T, atol=1e-10)


def test_nystrom_with_every_point_as_landmark_is_exact():
    X = np.random.default_rng(1).uniform(size=(30, 4)) * 4
    a = create("nystrom", rank=30, gamma=1.0, landmark_factor=1.0).fit(X, seed=0)
    np.testing.assert_allclose(a.to_dense(), kernel(X, X, 1.0), atol=1e-9)


def test_rnys_equals_nys_when_the_sketch_spans_the_landmarks(X):
    """k + p >= m: the range finder's Q spans everything, so RNys = Nys on the same landmarks."""
    nys = create("nystrom", rank=10, gamma=2.0).fit(X, seed=4)
    rn = create("rnys", rank=10, gamma=2.0, oversample=10).fit(X, seed=4)
    np.testing.assert_array_equal(rn.map_.sv, nys.map_.sv)
    np.testing.assert_allclose(rn.to_dense(), nys.to_dense(), atol=1e-9)
    rough = create("rnys", rank=10, gamma=2.0, oversample=0).fit(X, seed=4)
    assert np.abs(rough.to_dense() - nys.to_dense()).max() > 1e-6  # a sketch that cannot span differs


def test_knys_uses_kmeans_centres():
    rng = np.random.default_rng(2)
    centres = np.array([[0, 0], [5, 5], [0, 5], [5, 0]], float)
    X = np.vstack([c + 0.1 * rng.normal(size=(25, 2)) for c in centres])
    a = create("knys", rank=2, gamma=0.1).fit(X, seed=0)  # 4 landmarks = the 4 blob means
    got = a.map_.sv[np.lexsort(a.map_.sv.T)]
    want = np.stack([X[i * 25:(i + 1) * 25].mean(0) for i in range(4)])
    np.testing.assert_allclose(got, want[np.lexsort(want.T)], atol=1e-12)


def test_eff_kmeans_drops_empty_clusters():
    X = np.array([[0.0], [0.0], [0.0], [10.0]])
    assert eff_kmeans(X, 3, np.random.default_rng(0)).shape[0] == 2  # two copies of 0 collapse


def test_meka_kmeans_recovers_blobs_and_repairs_empty_clusters():
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(size=(30, 2)) * 0.2 + c for c in ([0, 0], [4, 0], [0, 4])])
    labels, centres = meka_kmeans(X, 3, rng)
    assert sorted(np.bincount(labels)) == [30, 30, 30]
    assert (nearest_centre(X, centres) == labels).all()
    labels, _ = meka_kmeans(np.zeros((5, 2)), 4, rng)  # identical points: no cluster left empty
    assert (np.bincount(labels, minlength=4) > 0).all()


def test_enys_is_the_average_of_its_experts(X):
    a = create("enys", rank=12, gamma=2.0).fit(X, seed=0)
    assert len(a.experts_) == 3 and all(e.rank == 4 and e.map_.sv.shape[0] == 8 for e in a.experts_)
    np.testing.assert_allclose(a.to_dense(), sum(e.to_dense() for e in a.experts_) / 3, atol=1e-12)


def test_rks_is_fogds_fourier_map_normalised(X):
    a = create("rks", rank=50, gamma=0.5).fit(X, seed=0)
    assert isinstance(a.map_, FourierMap)
    U = a.map_.U
    P = X @ U
    np.testing.assert_allclose(a.Z_, np.hstack([np.cos(P), np.sin(P)]) / np.sqrt(50), atol=1e-13)
    big = create("rks", rank=4000, gamma=0.5).fit(X, seed=0)
    err = np.linalg.norm(big.to_dense() - kernel(X, X, 0.5)) / np.linalg.norm(kernel(X, X, 0.5))
    assert err < 0.03  # omega ~ N(0, 2 gamma I): the right kernel


def test_fwht_is_the_hadamard_product():
    A = np.random.default_rng(0).normal(size=(5, 16))
    B = A.copy()
    fwht_rows(B)
    np.testing.assert_allclose(B, A @ scipy.linalg.hadamard(16), atol=1e-12)


def test_fastfood_construction_and_kernel(X):
    a = create("fastfood", rank=20, gamma=0.5).fit(X, seed=0)  # d = 6 -> d' = 8, n = 24
    assert a.dim_ == 8 and a.n_frequencies_ == 24 and a.Z_.shape == (200, 48)
    # V = S H G Pi H B / (sigma sqrt(d')) row by row, against dense Hadamard matrices
    H = scipy.linalg.hadamard(8)
    Xp = np.hstack([X, np.zeros((200, 2))])
    V = np.vstack([np.diag(a.S_[b]) @ H @ np.diag(a.G_[b]) @ np.eye(8)[a.Pi_[b]] @ H @ np.diag(a.B_[b])
                   for b in range(3)]) * np.sqrt(2 * 0.5) / np.sqrt(8)
    np.testing.assert_allclose(a.project(X), Xp @ V.T, atol=1e-10)
    big = create("fastfood", rank=4096, gamma=0.5).fit(X, seed=1)
    G = kernel(X, X, 0.5)
    assert np.linalg.norm(big.to_dense() - G) / np.linalg.norm(G) < 0.05


@pytest.mark.parametrize("name", ["nystrom", "rnys", "knys", "enys", "rks", "fastfood", "meka"])
def test_same_seed_same_approximation_and_memory(name, X):
    params = {"clusters": 2} if name == "meka" else {}
    a = create(name, rank=8, gamma=1.0, **params).fit(X, seed=7)
    b = create(name, rank=8, gamma=1.0, **params).fit(X, seed=7)
    np.testing.assert_array_equal(a.to_dense(), b.to_dense())
    assert a.memory_ == b.memory_ > 0 and "total" in a.timings_
    if name != "meka":
        assert a.memory_ == 200 * a.n_components_


def test_relative_error_in_chunks_equals_the_dense_error(X):
    a = create("nystrom", rank=5, gamma=2.0).fit(X, seed=0)
    G = kernel(X, X, 2.0)
    want = np.linalg.norm(G - a.to_dense()) / np.linalg.norm(G)
    got, idx = relative_error(a, X, 2.0, max_floats=700)  # chunks of 3 rows
    assert len(idx) == 200 and got == pytest.approx(want, rel=1e-12)
    got, idx = relative_error(a, X, 2.0, rows=50, rng=np.random.default_rng(0), max_floats=700)
    assert len(idx) == 50 and got == pytest.approx(
        np.linalg.norm((G - a.to_dense())[idx]) / np.linalg.norm(G[idx]), rel=1e-12)


def test_numerical_rank_and_block_ranks():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(30, 4)) @ rng.normal(size=(4, 20))
    assert numerical_rank(A) == 4
    X = rng.uniform(size=(40, 2))
    ranks = block_ranks(X, np.arange(40) % 2, 1.0)
    assert np.array(ranks).shape == (2, 2) and ranks[0][1] == ranks[1][0]


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("name", ["nystrom", "rnys", "knys", "enys", "meka"])
def test_rank_larger_than_n_names_the_key(name):
    X = np.random.default_rng(0).uniform(size=(10, 2))
    with pytest.raises(ValueError, match="rank"):
        create(name, rank=50, gamma=1.0).fit(X, seed=0)


def test_rank_larger_than_the_landmarks():
    X = np.random.default_rng(0).uniform(size=(30, 2))
    with pytest.raises(ValueError, match="rank=25 is larger than the number of landmarks"):
        create("knys", rank=25, gamma=1.0).fit(np.repeat(X[:10], 3, axis=0), seed=0)


def test_clusters_larger_than_n():
    with pytest.raises(ValueError, match="clusters=20 is larger than the number of samples"):
        create("meka", rank=1, gamma=1.0, clusters=20).fit(np.zeros((10, 2)) + np.arange(10)[:, None], seed=0)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan")])
def test_non_positive_gamma_and_lambda(bad, X):
    with pytest.raises(ValueError, match="'gamma' parameter"):
        create("nystrom", rank=4, gamma=bad)._validate_params()
    a = create("nystrom", rank=4, gamma=1.0).fit(X, seed=0)
    with pytest.raises(ValueError, match="lambda must be a number > 0"):
        a.solve(bad, np.ones(200))


def test_fastfood_rank_below_the_padded_dimension():
    with pytest.raises(ValueError, match="rank=8 is smaller than the padded dimension d'=16"):
        create("fastfood", rank=8, gamma=1.0).fit(np.zeros((5, 10)), seed=0)


def test_unknown_method_suggests_the_closest():
    with pytest.raises(KeyError, match="Did you mean 'meka'"):
        registry.get("mekka", "regression")


def test_wrong_length_vector():
    a = create("rks", rank=4, gamma=1.0).fit(np.zeros((6, 2)), seed=0)
    with pytest.raises(ValueError, match="fitted on 6 samples"):
        a.matvec(np.ones(5))
