"""BKA-SVM, LIBSVM on a subsample and Fastfood + linear SVM (MEKA Table 2 rows)."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.svm import SVC

from lsokl.learners import registry


def two_moons_blocks(seed=0):
    """Four far-apart groups, each with its own +-1 rule: a block-diagonal problem."""
    rng = np.random.default_rng(seed)
    parts, labels = [], []
    for g, centre in enumerate(([0, 0], [20, 0], [0, 20], [20, 20])):
        P = rng.normal(size=(60, 2)) + centre
        parts.append(P)
        labels.append(np.where((P[:, g % 2] - centre[g % 2]) > 0, 1.0, -1.0))
    return np.vstack(parts), np.concatenate(labels)


def test_one_cluster_is_one_svc_with_the_same_settings():
    X, y = two_moons_blocks()
    bka = registry.create("bka-svm", "binary", C=4.0, sigma=2.0, clusters=1, random_state=0).fit(X, y)
    svc = SVC(kernel="rbf", C=4.0, gamma=1 / 8, tol=1e-2).fit(X, y)
    np.testing.assert_allclose(bka.decision_function(X), svc.decision_function(X), atol=1e-10)


def test_each_point_is_scored_by_its_clusters_model_only():
    X, y = two_moons_blocks()
    bka = registry.create("bka-svm", "binary", C=4.0, sigma=2.0, clusters=4, kmeans_sample=200,
                          random_state=0).fit(X, y)
    assert bka.centres_.shape == (4, 2)
    where = bka.route(X)
    assert sorted(np.bincount(where)) == [60, 60, 60, 60]  # the four groups
    for s in range(4):
        sel = where == s
        np.testing.assert_allclose(bka.decision_function(X[sel]), bka.models_[s].decision_function(X[sel]))
        # the centre is the mean of the cluster's training points
        np.testing.assert_allclose(bka.centres_[s], X[sel].mean(0))
    assert np.mean(bka.predict(X) == y) > 0.95


def test_a_one_label_cluster_predicts_its_label():
    X = np.vstack([np.zeros((5, 2)), 50 + np.random.default_rng(0).normal(size=(20, 2))])
    y = np.concatenate([np.ones(5), np.where(X[5:, 0] > 50, 1.0, -1.0)])
    bka = registry.create("bka-svm", "binary", C=1.0, sigma=1.0, clusters=2, random_state=0).fit(X, y)
    assert (bka.predict(np.zeros((3, 2))) == 1.0).all()


def test_fewer_points_than_clusters_adapts_with_a_warning():
    """Issue 25: 64 clusters on 10 points used to be an error (24 failed scikit-learn checks)."""
    X = np.random.default_rng(0).normal(size=(10, 2))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    with pytest.warns(UserWarning, match="clusters=64 is larger than the 10 points.*using 10 clusters"):
        bka = registry.create("bka-svm", "binary", random_state=0).fit(X, y)
    assert bka.n_clusters_ == 10 and bka.get_params()["clusters"] == 64
    assert bka.predict(X).shape == (10,)


def test_bad_input():
    with pytest.raises(ValueError, match="'C' parameter"):
        registry.create("bka-svm", "binary", C=0.0).fit(np.zeros((10, 2)), np.ones(10))


def test_libsvm_subsample_trains_on_a_fifth():
    X, y = two_moons_blocks()
    m = registry.create("libsvm-subsample", "binary", C=4.0, sigma=2.0, random_state=3).fit(X, y)
    assert len(m.subsample_) == 48 and len(set(m.subsample_)) == 48
    ref = registry.create("libsvm", "binary", C=4.0, sigma=2.0).fit(X[m.subsample_], y[m.subsample_])
    np.testing.assert_allclose(m.decision_function(X), ref.decision_function(X))


def test_fastfood_svm_uses_the_fastfood_features():
    from sklearn.svm import LinearSVC

    X, y = two_moons_blocks()
    m = registry.create("fastfood-svm", "binary", C=1.0, sigma=2.0, n_frequencies=64,
                        random_state=0).fit(X, y)
    assert m.features_.Z_.shape == (240, 128)
    ref = LinearSVC(C=1.0, loss="hinge", dual=True, max_iter=1000, random_state=m.svm_seed_).fit(m.features_.Z_, y)
    np.testing.assert_allclose(m.decision_function(X), ref.decision_function(m.features_.transform(X)))
    assert np.mean(m.predict(X) == y) > 0.8


def test_libsvm_subsample_is_the_uniform_draw_plus_one_row_per_missed_class():
    X, y = two_moons_blocks()
    m = registry.create("libsvm-subsample", "binary", random_state=3).fit(X, y)
    uniform = np.sort(np.random.default_rng(3).choice(240, 48, replace=False))
    np.testing.assert_array_equal(m.subsample_, uniform)  # every class drawn: nothing added
    rare = np.setdiff1d(np.arange(240), uniform)[0]  # a row the uniform draw misses
    y_rare = y.copy()
    y_rare[rare] = 5.0  # a third label on that row only
    m = registry.create("libsvm-subsample", "binary", random_state=3).fit(X, y_rare)
    np.testing.assert_array_equal(m.subsample_, np.sort(np.r_[uniform, rare]))
    assert m.classes_.tolist() == [-1.0, 1.0, 5.0]


def test_bka_svm_refuses_more_than_two_classes_and_keeps_string_labels():
    X, y = two_moons_blocks()
    with pytest.raises(ValueError, match="Only binary classification is supported"):
        registry.create("bka-svm", "binary", clusters=4).fit(X, np.arange(240) % 3)
    # A cluster holding one label only predicts it as a constant: it must not shorten the others.
    X2 = np.vstack([X, [[100.0, 100.0], [100.5, 100.0]]])
    names = np.r_[np.where(y > 0, "positive", "neg"), ["neg", "neg"]]
    m = registry.create("bka-svm", "binary", C=4.0, sigma=2.0, clusters=5, random_state=0).fit(X2, names)
    constant = [k for k, model in enumerate(m.models_) if not isinstance(model, SVC)]
    assert len(constant) == 1
    # the constant cluster is the first one these rows reach, so it is scored first
    rows = np.vstack([[[100.0, 100.0]], X2[m.route(X2) > constant[0]]])
    labels = m.predict(rows)
    assert set(labels) == {"positive", "neg"}
    np.testing.assert_array_equal(labels[1:], np.concatenate([m.predict(r[None]) for r in rows[1:]]))
