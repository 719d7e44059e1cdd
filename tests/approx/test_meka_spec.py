"""The exact checks of the MEKA spec (docs/MEKA.md section 7), on hand-checkable data."""
from __future__ import annotations

import numpy as np
import pytest

from lsokl.approx import create
from lsokl.approx.meka import MEKA, allocate_ranks, dropped_pairs, pinv_psd
from lsokl.compute.kernels import gaussian_block


def dense_gaussian(A, B, gamma):
    """An independent Gaussian kernel: explicit differences, no norm trick."""
    d2 = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
    return np.exp(-gamma * d2)


def blobs(sizes=(20, 20, 20), spacing=3.0, spread=1.0, d=2, seed=0):
    """Well-separated clusters: each block well conditioned, off-diagonal blocks not negligible."""
    rng = np.random.default_rng(seed)
    parts = [rng.normal(size=(m, d)) * spread + spacing * i * np.eye(d)[0] * 1.0 + spacing * (i % 2) * np.eye(d)[-1]
             for i, m in enumerate(sizes)]
    return np.vstack(parts)[rng.permutation(sum(sizes))]


def test_one_cluster_equals_standard_nystrom():
    """c = 1, eta = 0: MEKA's G~ = E M_k^+ E' on the same 2k landmarks (check 1)."""
    X = np.random.default_rng(1).uniform(size=(80, 3))
    gamma, k = 2.0, 6
    m = MEKA(rank=k, gamma=gamma, clusters=1, eta=0.0).fit(X, seed=3)
    landmarks = m.maps_[0].sv
    assert landmarks.shape[0] == 2 * k
    E = dense_gaussian(X, landmarks, gamma)
    U, s, _ = np.linalg.svd(dense_gaussian(landmarks, landmarks, gamma))
    Mk_pinv = (U[:, :k] / s[:k]) @ U[:, :k].T
    np.testing.assert_allclose(m.to_dense(), E @ Mk_pinv @ E.T, atol=1e-10, rtol=0)


def test_full_rank_reproduces_G():
    """k_total = n, all landmarks, all rows sampled: G~ = G (check 2), rows in the original order."""
    X = blobs(sizes=(10, 10, 10), spacing=3.5)
    gamma = 1.0
    G = dense_gaussian(X, X, gamma)
    m = MEKA(rank=1, total_rank=X.shape[0], gamma=gamma, clusters=3, eta=0.0).fit(X, seed=0)
    assert sorted(len(s) for s in m.members_) == [10, 10, 10]
    assert list(m.ranks_) == [len(s) for s in m.members_]
    off = m.labels_[:, None] != m.labels_[None, :]
    assert np.abs(G[off]).max() > 1e-3  # the link blocks matter
    np.testing.assert_allclose(m.to_dense(), G, atol=1e-9, rtol=0)


def test_symmetry_of_links_and_of_the_approximation():
    X = np.random.default_rng(2).uniform(size=(150, 4))
    m = MEKA(rank=5, gamma=1.0, clusters=4, eta=0.0).fit(X, seed=1)
    o = m.offsets_
    for s in range(4):
        for t in range(4):
            assert np.array_equal(m.L_[o[s]:o[s + 1], o[t]:o[t + 1]], m.L_[o[t]:o[t + 1], o[s]:o[s + 1]].T)
    np.testing.assert_array_equal(m.L_[o[0]:o[1], o[0]:o[1]], np.eye(o[1] - o[0]))
    Gt = m.to_dense()
    np.testing.assert_allclose(Gt, Gt.T, atol=1e-13, rtol=0)


def test_link_is_least_squares_on_the_whole_block():
    """4 k_s >= n_s: the sample is the whole block, so L_st = lstsq(G_st) (check 4)."""
    X = blobs(sizes=(12, 12, 12), seed=4)
    gamma = 0.5
    m = MEKA(rank=3, gamma=gamma, clusters=3, eta=0.0, link_oversample=10).fit(X, seed=2)
    assert all(10 * k >= len(s) for k, s in zip(m.ranks_, m.members_))
    o = m.offsets_
    for s, t in [(0, 1), (0, 2), (1, 2)]:
        A, B = m.blocks_[s], m.blocks_[t]
        G_st = dense_gaussian(X[m.members_[s]], X[m.members_[t]], gamma)
        expected = np.linalg.pinv(A) @ G_st @ np.linalg.pinv(B).T
        np.testing.assert_allclose(m.L_[o[s]:o[s + 1], o[t]:o[t + 1]], expected, atol=1e-9, rtol=1e-9)


def test_threshold_rule():
    """Check 5: tau = ceil((c^2 - c) eta)-th smallest entry, strict inequality."""
    rng = np.random.default_rng(0)
    for c in (3, 10, 14):
        A = rng.uniform(size=(c, c))
        D = (A + A.T) / 2
        np.fill_diagonal(D, 1.0)
        assert not dropped_pairs(D, eta=0.01).any()  # c <= 14: nothing dropped
        assert not dropped_pairs(D, eta=0.0).any()
    c = 15
    A = rng.uniform(size=(c, c))
    D = (A + A.T) / 2
    np.fill_diagonal(D, 1.0)
    drop = dropped_pairs(D, eta=0.01)  # mm = ceil(210 * 0.01) = 3: one pair, the smallest
    iu = np.triu_indices(c, 1)
    s, t = iu[0][np.argmin(D[iu])], iu[1][np.argmin(D[iu])]
    assert drop.sum() == 2 and drop[s, t] and drop[t, s]
    keep = ~dropped_pairs(D, eta=1.0)  # eta = 1 still keeps the closest pair
    s, t = iu[0][np.argmax(D[iu])], iu[1][np.argmax(D[iu])]
    assert keep[s, t] and np.sum(~keep[iu]) == len(iu[0]) - 1
    # the paper's absolute threshold: dropped iff D_st <= eps
    assert (dropped_pairs(D, eps=0.5)[iu] == (D[iu] <= 0.5)).all()


def test_rank_allocation():
    """Check 6: proportional ranks, excess from the last cluster, sum = total, k_s <= n_s."""
    assert allocate_ranks([3, 3, 4], 5).tolist() == [2, 2, 1]
    assert allocate_ranks([10, 30, 60], 20).tolist() == [2, 6, 12]
    assert allocate_ranks([2, 50, 48], 30).tolist() == [1, 15, 14]
    rng = np.random.default_rng(0)
    for _ in range(50):
        sizes = rng.integers(100, 200, size=rng.integers(2, 12))
        total = int(rng.integers(10 * len(sizes), 20 * len(sizes)))  # the last keeps a rank
        k = allocate_ranks(sizes, total)
        assert k.sum() == total and (k <= sizes).all() and (k >= 1).all()
    assert allocate_ranks([5, 7], 8, "equal", 4).tolist() == [4, 4]
    with pytest.raises(ValueError, match="leaves a cluster without rank"):
        allocate_ranks([10, 10, 10, 1], 4)  # ceil gives 2+2+2+1: the last would get -3


@pytest.mark.parametrize("name", ["nystrom", "rnys", "knys", "enys", "rks", "fastfood", "meka"])
def test_solve_and_matvec_equal_the_dense_operations(name):
    """Check 7, for every method: the push-through solve and the matvec equal dense algebra."""
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(120, 5))
    params = {"clusters": 3} if name == "meka" else {}
    a = create(name, rank=8, gamma=1.5, **params).fit(X, seed=0)
    Gt = a.to_dense()
    y, v = rng.normal(size=120), rng.normal(size=120)
    np.testing.assert_allclose(a.matvec(v), Gt @ v, atol=1e-10, rtol=1e-10)
    lam = 0.125
    np.testing.assert_allclose(a.solve(lam, y), np.linalg.solve(Gt + lam * np.eye(120), y),
                               atol=1e-8, rtol=1e-8)
    X_new = rng.uniform(size=(7, 5))
    C = a.cross(X_new)
    assert C.shape == (7, 120)
    np.testing.assert_allclose(a.cross_matvec(X_new, y), C @ y, atol=1e-10, rtol=1e-10)
    np.testing.assert_allclose(a.rows(np.array([3, 0, 77])), Gt[[3, 0, 77]], atol=1e-13)


def test_meka_psd_clips_negative_eigenvalues():
    """Check 8: MEKA-PSD's G~ has no eigenvalue below -1e-10 ||G~||; the raw L is indefinite."""
    X = np.random.default_rng(3).uniform(size=(400, 3))
    raw = MEKA(rank=6, gamma=8.0, clusters=5, eta=0.0).fit(X, seed=0)
    psd = MEKA(rank=6, gamma=8.0, clusters=5, eta=0.0, psd=True).fit(X, seed=0)
    assert np.linalg.eigvalsh(raw.L_).min() < -1e-6
    Gp = psd.to_dense()
    assert np.linalg.eigvalsh((Gp + Gp.T) / 2).min() >= -1e-10 * np.linalg.norm(Gp)
    assert psd.negative_eigenvalues_ > 0


def test_memory_count():
    """Check 9: sum n_s k_s + kept blocks; n k + (c k)^2 for equal balanced clusters."""
    X = blobs(sizes=(20, 20, 20), spacing=6.0)
    m = MEKA(rank=5, gamma=0.5, clusters=3, eta=0.0, k_alloc="equal").fit(X, seed=0)
    assert m.memory_ == 60 * 5 + (3 * 5) ** 2
    m = MEKA(rank=20, gamma=1.0, clusters=15, eta=0.01).fit(np.random.default_rng(0).uniform(size=(900, 2)), seed=0)
    k = m.ranks_
    kept = ~m.dropped_
    assert m.dropped_.sum() == 2  # one pair (two blocks) at c = 15
    expected = sum(len(s) * kk for s, kk in zip(m.members_, k)) + sum(
        k[s] * k[t] for s in range(15) for t in range(15) if kept[s, t])
    assert m.memory_ == expected


def test_pinv_cutoff_is_absolute():
    A = np.diag([2.0, 1e-5, 1e-7])
    np.testing.assert_allclose(pinv_psd(A), np.diag([0.5, 1e5, 0.0]))


def test_gaussian_block_matches_the_definition_and_keeps_the_sigma_path():
    rng = np.random.default_rng(0)
    A, B = rng.normal(size=(9, 4)), rng.normal(size=(6, 4))
    np.testing.assert_allclose(gaussian_block(A, B, 0.7), dense_gaussian(A, B, 0.7), rtol=1e-12)
    sigma = 1.3
    a2, b2 = np.einsum("ij,ij->i", A, A), np.einsum("ij,ij->i", B, B)  # the old gaussian_gram
    old = np.exp(-np.maximum(a2[:, None] + b2[None, :] - 2.0 * (A @ B.T), 0.0)
                 / (2.0 * sigma * sigma))
    assert np.array_equal(gaussian_block(A, B, sigma=sigma), old)  # NOGD's Gram stays bit-identical
