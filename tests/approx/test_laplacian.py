"""The Laplacian kernel exp(-gamma ||x - y||_1) for the approximations and MEKA, checked against
scikit-learn's ``laplacian_kernel``: exact blocks, exact Nystrom at full rank, convergence with the rank,
Cauchy random features, and the errors for a kernel a method cannot approximate or a misspelt name."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics.pairwise import laplacian_kernel

from lsokl.approx import create
from lsokl.approx.metrics import block_ranks, relative_error
from lsokl.compute.kernels import kernel_block, laplacian_block
from lsokl.config import load_config
from lsokl.errors import ConfigError

GAMMA = 0.7


@pytest.fixture(scope="module")
def X():
    return np.random.default_rng(0).uniform(size=(240, 5))


def test_laplacian_block_is_sklearns():
    A = np.array([[0.0, 0.0], [1.0, 2.0]])
    B = np.array([[1.0, 0.0], [0.0, -1.0], [1.0, 2.0]])
    # hand: L1 distances [[1, 1, 3], [2, 4, 0]]
    np.testing.assert_allclose(laplacian_block(A, B, 0.5), np.exp(-0.5 * np.array([[1, 1, 3], [2, 4, 0]])))
    R = np.random.default_rng(3).normal(size=(7, 4))
    np.testing.assert_allclose(kernel_block(R, R[:3], GAMMA, "laplacian"), laplacian_kernel(R, R[:3], gamma=GAMMA),
                               rtol=1e-13)


@pytest.mark.parametrize("name", ["nystrom", "rnys", "knys"])
def test_nystrom_family_on_its_landmarks_is_C_Mk_pinv_C(name, X):
    a = create(name, rank=10, gamma=GAMMA, kernel="laplacian").fit(X, seed=1)
    lm = a.map_.sv
    C = laplacian_kernel(X, lm, gamma=GAMMA)
    lam, V = np.linalg.eigh(laplacian_kernel(lm, lm, gamma=GAMMA))
    top = np.argsort(-lam)[:10]
    expected = C @ ((V[:, top] / lam[top]) @ V[:, top].T) @ C.T
    np.testing.assert_allclose(a.to_dense(), expected, atol=1e-8)


def test_nystrom_with_every_point_as_landmark_is_the_laplacian_kernel():
    X = np.random.default_rng(1).uniform(size=(30, 4)) * 3
    a = create("nystrom", rank=30, gamma=1.0, landmark_factor=1.0, kernel="laplacian").fit(X, seed=0)
    np.testing.assert_allclose(a.to_dense(), laplacian_kernel(X, gamma=1.0), atol=1e-9)
    gauss = create("nystrom", rank=30, gamma=1.0, landmark_factor=1.0).fit(X, seed=0)
    assert np.abs(gauss.to_dense() - laplacian_kernel(X, gamma=1.0)).max() > 0.05  # the kernels differ


def test_meka_full_rank_reproduces_the_laplacian_kernel():
    """Spec check 2 with the Laplacian kernel: k_s = n_s and every row sampled, so G~ = G."""
    rng = np.random.default_rng(2)
    X = np.vstack([rng.normal(size=(12, 3)) * 0.05 + c for c in (0.0, 3.0, 6.0)])
    a = create("meka", rank=1, total_rank=36, gamma=1.0, clusters=3, eta=0.0, kernel="laplacian").fit(X, seed=0)
    G = laplacian_kernel(X, gamma=1.0)
    assert relative_error(a, X, 1.0)[0] < 1e-8
    np.testing.assert_allclose(a.to_dense(), G, atol=1e-7)


@pytest.mark.parametrize("name", ["nystrom", "enys", "rks", "meka"])
def test_error_against_sklearns_kernel_falls_as_the_rank_grows(name, X):
    extra = {"clusters": 3} if name == "meka" else {}
    ranks = (3, 12, 48) if name != "rks" else (16, 256, 4096)
    errs = []
    G = laplacian_kernel(X, gamma=GAMMA)
    for k in ranks:
        e = [np.linalg.norm(G - create(name, rank=k, gamma=GAMMA, kernel="laplacian", **extra)
                            .fit(X, seed=s).to_dense()) / np.linalg.norm(G) for s in range(3)]
        errs.append(float(np.mean(e)))
    assert errs[0] > errs[1] > errs[2]
    assert errs[2] < 0.5 * errs[0]


def test_rks_draws_cauchy_frequencies_with_scale_gamma(X):
    a = create("rks", rank=20000, gamma=GAMMA, kernel="laplacian").fit(X[:2], seed=0)
    U = a.map_.U
    # Cauchy(0, gamma): median |omega| = gamma (a Gaussian's frequencies would have median 0.674 * sqrt(2 gamma))
    assert abs(np.median(np.abs(U)) - GAMMA) < 0.02
    # the sin/cos pair estimates the kernel between the two points
    exact = laplacian_kernel(X[:1], X[1:2], gamma=GAMMA)[0, 0]
    assert abs(a.to_dense()[0, 1] - exact) < 0.02


def test_relative_error_and_block_ranks_use_the_laplacian_kernel(X):
    a = create("nystrom", rank=200, gamma=GAMMA, landmark_factor=1.2, kernel="laplacian").fit(X, seed=0)
    G, Gt = laplacian_kernel(X, gamma=GAMMA), a.to_dense()
    err, _ = relative_error(a, X, GAMMA)
    assert err == pytest.approx(np.linalg.norm(G - Gt) / np.linalg.norm(G), rel=1e-9)
    labels = np.arange(len(X)) % 2
    ranks = block_ranks(X, labels, GAMMA, kernel="laplacian")
    assert ranks[0][0] == np.linalg.matrix_rank(G[::2, ::2], tol=120 * np.linalg.norm(G[::2, ::2], 2) * 1e-6)


def test_fastfood_refuses_the_laplacian_kernel_in_one_line(X):
    with pytest.raises(ValueError, match="Gaussian kernel only") as exc:
        create("fastfood", rank=16, gamma=1.0, kernel="laplacian").fit(X)
    assert "\n" not in str(exc.value)


def _config(tmp_path, algorithms):
    p = tmp_path / "c.yaml"
    p.write_text("name: lap\nprotocol: approximation\ndatasets:\n  pendigits: {split: all}\n"
                 f"defaults: {{rank: 8, gamma: 1}}\nalgorithms:\n{algorithms}")
    return p


def test_config_kernel_key(tmp_path):
    cfg = load_config(_config(tmp_path, "  nystrom: {kernel: laplacian}\n"))
    assert {dict(c.params)["kernel"] for c in cfg.cells} == {"laplacian"}
    with pytest.raises(ConfigError, match="did you mean 'laplacian'"):
        load_config(_config(tmp_path, "  nystrom: {kernel: laplacain}\n"))
    with pytest.raises(ConfigError, match="Gaussian kernel only"):
        load_config(_config(tmp_path, "  fastfood: {kernel: laplacian}\n"))
