"""MEKA's variants of the paper's Figs. 4 and 6: the diagonal basis by Nys, KNys or RNys, and the
eigenvalue-based rank per cluster (strategy (iii) of sec. 5.1)."""
from __future__ import annotations

import numpy as np
import pytest

from lsokl.approx import create
from lsokl.approx.clustering import nearest_centre


def kernel(A, B, gamma):
    return np.exp(-gamma * ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))


@pytest.fixture(scope="module")
def X():
    rng = np.random.default_rng(0)
    return np.vstack([rng.normal(size=(60, 3)) * s + c for s, c in ((0.2, 0.0), (0.6, 3.0), (0.1, 6.0))])


def test_rnys_basis_equals_nys_when_the_sketch_spans_the_landmarks(X):
    """One cluster, rank 5: 10 landmarks and k + p = 15 >= 10 sketch columns, so the randomised SVD is exact."""
    nys = create("meka", rank=5, gamma=0.5, clusters=1, eta=0.0).fit(X, seed=3)
    rn = create("meka", rank=5, gamma=0.5, clusters=1, eta=0.0, basis="rnys").fit(X, seed=3)
    np.testing.assert_array_equal(rn.maps_[0].sv, nys.maps_[0].sv)
    np.testing.assert_allclose(rn.to_dense(), nys.to_dense(), atol=1e-9)


def test_knys_basis_uses_each_clusters_kmeans_centroids(X):
    a = create("meka", rank=4, gamma=0.5, clusters=3, eta=0.0, basis="knys").fit(X, seed=1)
    for s, fmap in enumerate(a.maps_):
        lm = fmap.sv
        assert len(lm) <= 8
        # centroids, not drawn points (a centroid of a one-point k-means cluster is that point)
        assert sum((X == r).all(1).any() for r in lm) < len(lm) / 2
        # each centroid lies in its own cluster's region (the nearest MEKA centre is s)
        assert (nearest_centre(lm, a.centres_) == s).all()
    G = kernel(X, X, 0.5)
    assert np.linalg.norm(G - a.to_dense()) / np.linalg.norm(G) < 0.2


def test_eig_allocation_keeps_the_top_ck_pooled_eigenvalues(X):
    a = create("meka", rank=4, gamma=0.5, clusters=3, eta=0.0, k_alloc="eig").fit(X, seed=2)
    pooled = sorted(((v, s) for s, f in enumerate(a.maps_)
                     for v in np.abs(np.linalg.eigvalsh(kernel(f.sv, f.sv, 0.5)))), key=lambda p: -p[0])
    counts = np.bincount([s for _, s in pooled[:12]], minlength=3)
    np.testing.assert_array_equal(a.ranks_, np.maximum(counts, 1))
    # the widest cluster (scale 0.6) has the flattest spectrum: it gets the most rank
    assert a.ranks_[a.labels_[60]] == a.ranks_.max() > a.ranks_.min()
    assert a.memory_ == sum(len(m) * k for m, k in zip(a.members_, a.ranks_)) + int(a.ranks_.sum()) ** 2


def test_unknown_basis_is_refused():
    with pytest.raises(ValueError, match="basis"):
        create("meka", basis="svd")._validate_params()
