"""LLSVM (BudgetedSVM's recipe, spec BUDGETED_PEGASOS.md section 7 and check 10): the Nystrom
mapping, the landmarks, the chunking and the dual coordinate-descent solver."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import LinearSVC

from lsokl.learners import registry
from lsokl.compute.kernels import gaussian_gram
from lsokl.learners.batch.llsvm import LLSVM, dual_cd_hinge


def _blobs(n=300, d=4, seed=0, gap=2.5):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1, -1)
    X = rng.standard_normal((n, d)) + gap * y[:, None] * np.eye(d)[0]
    return X, y


def test_registered_as_a_batch_learner():
    cls = registry.get("llsvm")
    assert cls is LLSVM and cls.online is False


def test_landmarks_equal_all_points_reproduce_the_kernel_matrix():
    """Check 10: with every training point a landmark, e(x).e(y) = kappa(x, y) exactly."""
    X, y = _blobs(n=60, d=3)
    sigma = 0.7  # a well-conditioned Gram matrix: no eigenvalue falls under the 1e-5 cut
    m = LLSVM(budget=60, sigma=sigma, landmarks="random", random_state=0).fit(X, y)
    assert sorted(m.initial_rows_) == list(range(60))
    E = m.features(X)
    assert E.shape == (60, 60)
    np.testing.assert_allclose(E @ E.T, gaussian_gram(X, X, sigma), rtol=0, atol=1e-9)


def test_eigenvalue_cut_mapping_is_the_pinv_nystrom_kernel():
    """Check 10: with duplicate landmarks K_zz is singular; the cut map gives
    k_x' pinv(K_zz) k_y (singular values <= 1e-5 of the largest cut), with fewer directions."""
    X, y = _blobs(n=80, d=3, seed=1)
    X[40:60] = X[:20]  # exact duplicates, so some random landmark sets are rank-deficient
    sigma = 1.5
    m = LLSVM(budget=70, sigma=sigma, landmarks="random", random_state=3).fit(X, y)
    Z = m.landmarks_
    Kzz = gaussian_gram(Z, Z, sigma)
    assert np.linalg.matrix_rank(Kzz, tol=1e-5 * np.linalg.eigvalsh(Kzz).max()) < 70
    E = m.features(X)
    assert E.shape[1] < 70 and np.all(np.isfinite(E))
    Kxz = gaussian_gram(X, Z, sigma)
    expected = Kxz @ np.linalg.pinv(Kzz, rcond=1e-5, hermitian=True) @ Kxz.T
    np.testing.assert_allclose(E @ E.T, expected, rtol=0, atol=1e-8)


def _lloyd(X, centres, iters):
    """Plain Lloyd iterations with no convergence test (BudgetedSVM's kMeans)."""
    C = centres.copy()
    for _ in range(iters):
        d2 = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)
        lab = d2.argmin(1)
        for c in range(len(C)):
            if np.any(lab == c):
                C[c] = X[lab == c].mean(0)
    return C


@pytest.mark.parametrize("iters", [1, 10])
def test_kmeans_landmarks_are_lloyd_iterations_from_random_rows(iters):
    rng = np.random.default_rng(4)
    X = np.vstack([rng.normal(c, 0.6, size=(50, 2)) for c in ((0, 0), (4, 0), (0, 4), (4, 4))])
    y = np.where(X[:, 0] > 2, 1, -1)
    m = LLSVM(budget=8, sigma=1.0, kmeans_iter=iters, random_state=5).fit(X, y)
    assert len(set(m.initial_rows_)) == 8  # distinct rows
    expected = _lloyd(X, X[m.initial_rows_], iters)
    order = lambda A: A[np.lexsort(A.T)]  # noqa: E731 - cluster order is not part of the result
    np.testing.assert_allclose(order(m.landmarks_), order(expected), atol=1e-10)
    if iters == 1:  # the iteration count matters on this data (not converged after one step)
        ten = LLSVM(budget=8, sigma=1.0, kmeans_iter=10, random_state=5).fit(X, y)
        assert not np.allclose(order(ten.landmarks_), order(m.landmarks_))


def test_landmarks_come_from_the_first_chunk_in_file_order_and_w_carries_over():
    X, y = _blobs(n=400, seed=2)
    X[200:] += 50.0  # rows after the first chunk are far away: no landmark may move there
    chunked = LLSVM(budget=20, sigma=2.0, chunk_size=200, random_state=0).fit(X, y)
    first = LLSVM(budget=20, sigma=2.0, chunk_size=200, random_state=0).fit(X[:200], y[:200])
    np.testing.assert_array_equal(chunked.landmarks_, first.landmarks_)
    assert np.all(np.abs(chunked.landmarks_).max(axis=1) < 20)
    assert len(chunked.n_iter_) == 2 and len(first.n_iter_) == 1
    # the second chunk continued the first chunk's w: far rows map to ~0 features, so their
    # hinge terms can only be met by keeping w, never by starting again from w = 0
    E2 = chunked.features(X[200:])
    assert np.abs(E2).max() < 1e-12
    np.testing.assert_allclose(chunked.coef_, first.coef_, atol=1e-12)


def test_dual_cd_on_one_point_by_hand():
    """One example e = (1, 0), y = +1, w0 = 0: G = -1, alpha = min(1/1, C)."""
    E = np.array([[1.0, 0.0]])
    for C, expect in ((10.0, 1.0), (0.5, 0.5)):
        w, alpha = np.zeros(2), np.zeros(1)
        dual_cd_hinge(E, np.array([1.0]), w, C, 30, 0.01, 0, alpha)
        np.testing.assert_allclose(alpha, [expect])
        np.testing.assert_allclose(w, [expect, 0.0])


def _dual_objective(E, y, alpha):
    v = (alpha * y) @ E
    return 0.5 * v @ v - alpha.sum()


def test_dual_cd_from_zero_reaches_liblinear_optimum():
    X, y = _blobs(n=200, d=5, seed=6, gap=1.0)  # overlapping: bounded and free alphas
    C = 0.7
    w, alpha = np.zeros(5), np.zeros(200)
    it = dual_cd_hinge(X, y.astype(float), w, C, 100_000, 1e-8, 1, alpha)
    assert it < 100_000
    ref = LinearSVC(loss="hinge", dual=True, fit_intercept=False, C=C, tol=1e-10,
                    max_iter=1_000_000).fit(X, y)
    np.testing.assert_allclose(w, ref.coef_.ravel(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w, (alpha * y) @ X, atol=1e-10)
    assert 0 < np.sum((alpha > 0) & (alpha < C)) and np.any(alpha == C)


def test_dual_cd_warm_start_meets_the_kkt_conditions_of_the_proximal_problem():
    """From w0 with alpha = 0 the solver minimises 0.5||w - w0||^2 + C sum hinge: at the end
    w = w0 + sum alpha_i y_i e_i and each alpha_i satisfies its KKT condition."""
    X, y = _blobs(n=150, d=4, seed=7, gap=1.0)
    yf = y.astype(float)
    w0 = np.array([0.3, -0.2, 0.1, 0.5])
    w, alpha, C = w0.copy(), np.zeros(150), 2.0
    dual_cd_hinge(X, yf, w, C, 100_000, 1e-9, 3, alpha)
    np.testing.assert_allclose(w, w0 + (alpha * yf) @ X, atol=1e-10)
    margin = yf * (X @ w)
    tol = 1e-6
    assert np.all(alpha >= 0) and np.all(alpha <= C)
    assert np.all(margin[alpha == 0] >= 1 - tol)
    assert np.all(margin[alpha == C] <= 1 + tol)
    free = (alpha > 0) & (alpha < C)
    np.testing.assert_allclose(margin[free], 1.0, atol=tol)


def test_dual_cd_separates_a_toy_set_within_30_iterations():
    X, y = _blobs(n=300, d=3, seed=8, gap=4.0)
    w, alpha = np.zeros(3), np.zeros(300)
    it = dual_cd_hinge(X, y.astype(float), w, 1.0, 30, 0.01, 0, alpha)
    assert it <= 30
    assert np.mean(np.sign(X @ w) == y) == 1.0


def test_fit_predict_accuracy_dense_and_csr_agree():
    X, y = _blobs(n=500, d=6, seed=9, gap=1.5)
    X[np.abs(X) < 0.4] = 0.0
    dense = LLSVM(budget=40, sigma=2.0, C=2.0, random_state=1).fit(X[:400], y[:400])
    csr = LLSVM(budget=40, sigma=2.0, C=2.0, random_state=1).fit(sp.csr_matrix(X[:400]), y[:400])
    assert dense.score(X[400:], y[400:]) > 0.85
    np.testing.assert_allclose(dense.landmarks_, csr.landmarks_, atol=1e-10)
    np.testing.assert_allclose(dense.decision_function(X[400:]),
                               csr.decision_function(sp.csr_matrix(X[400:])), atol=1e-8)
    # the second label wins where e(x).w > 0, with any label values
    labels = np.where(y == 1, "spam", "ham")
    named = LLSVM(budget=40, sigma=2.0, C=2.0, random_state=1).fit(X[:400], labels[:400])
    assert set(named.predict(X[400:])) <= {"ham", "spam"}
    np.testing.assert_array_equal(named.predict(X[400:]) == "spam",
                                  named.decision_function(X[400:]) > 0)


def test_same_seed_same_model_and_seed_matters():
    X, y = _blobs(n=300, seed=10)
    a = LLSVM(budget=15, sigma=1.0, random_state=4).fit(X, y)
    b = LLSVM(budget=15, sigma=1.0, random_state=4).fit(X, y)
    c = LLSVM(budget=15, sigma=1.0, random_state=5).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert not np.array_equal(a.initial_rows_, c.initial_rows_)


@pytest.mark.parametrize("params, match", [
    ({"budget": 0}, "'budget'"), ({"sigma": -1.0}, "'sigma'"), ({"C": 0.0}, "'C'"),
    ({"landmarks": "kmedoids"}, "'landmarks'"), ({"time_limit": -2}, "'time_limit'"),
])
def test_invalid_parameters_are_named(params, match):
    X, y = _blobs(n=50)
    with pytest.raises(ValueError, match=match):
        LLSVM(**params).fit(X, y)


def test_too_few_rows_for_the_budget_adapt_with_a_warning_and_multiclass_is_refused():
    X, y = _blobs(n=50)
    with pytest.warns(UserWarning, match="budget=100 landmarks but the first chunk has 50 rows.*"
                                         "using 50 landmarks"):
        model = LLSVM(budget=100, random_state=0).fit(X, y)
    assert model.n_landmarks_ == 50 and len(model.landmarks_) == 50 and model.budget == 100
    assert np.mean(model.predict(X) == y) > 0.8
    with pytest.raises(ValueError, match="binary classifier"):
        LLSVM(budget=10).fit(X, np.arange(50) % 3)
