"""Built-in datasets: scikit-learn's shipped sets and the seeded generators."""
from __future__ import annotations

import numpy as np
import pytest

from lsokl.data import load
from lsokl.data.builtin import _waveform_bases
from lsokl.errors import DataError


@pytest.mark.parametrize("name,task,shape,classes", [
    ("breast_cancer", "binary", (569, 30), 2),
    ("digits", "multiclass", (1797, 64), 10),
    ("diabetes", "regression", (442, 10), None),
    ("wine", "multiclass", (178, 13), 3),
    ("iris", "multiclass", (150, 4), 3),
])
def test_scikit_learn_sets(name, task, shape, classes):
    ds = load(name)
    assert ds.task == task and ds.X.shape == shape and ds.X.dtype == np.float64 and ds.X.flags.c_contiguous
    assert ds.n_classes == classes and ds.meta["sha256"]
    if task == "binary":
        assert set(np.unique(ds.y)) == {-1.0, 1.0}
    elif task == "multiclass":
        assert ds.y.dtype == np.int64 and set(np.unique(ds.y)) == set(range(classes))


def test_checkerboard_is_seeded_and_balanced():
    a, b, c = load("checkerboard", n=4000, seed=3), load("checkerboard", n=4000, seed=3), load("checkerboard", n=4000)
    assert np.array_equal(a.X, b.X) and not np.array_equal(a.X, c.X)
    assert a.meta["sha256"] == b.meta["sha256"] != c.meta["sha256"]
    assert 0.45 < (a.y == 1).mean() < 0.55
    cell = np.floor(a.X * 4).astype(int)
    assert np.all(a.y == np.where(cell.sum(1) % 2 == 0, 1, -1))


def test_waveform_follows_breimans_generator():
    ds = load("waveform", n=30000, seed=1)
    assert ds.X.shape == (30000, 21) and set(np.unique(ds.y)) == {0, 1, 2}
    assert np.all(np.abs(np.bincount(ds.y) / 30000 - 1 / 3) < 0.02)  # equiprobable classes
    h = _waveform_bases()
    assert h[0].argmax() == 6 and h[1].argmax() == 10 and h[2].argmax() == 14  # peaks at i = 7, 11, 15
    for c, (i, j) in enumerate([(0, 2), (0, 1), (1, 2)]):  # class means = average of their two waves
        assert np.abs(ds.X[ds.y == c].mean(0) - (h[i] + h[j]) / 2).max() < 0.1
    assert load("waveform", n=10, noise_features=19).X.shape == (10, 40)


def test_waveform_class_means_match_the_uci_file(shared_data):
    """Spec 9.11: the generator's class c is the UCI file's class c (means within 0.1)."""
    uci = load("waveform-uci", mirror=str(shared_data))
    gen = load("waveform", n=200000, seed=2)
    for c in range(3):
        assert np.abs(gen.X[gen.y == c].mean(0) - uci.X[uci.y == c].mean(0)).max() < 0.1


def test_scale_stream_has_the_asked_shape_and_is_kernel_learnable():
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import SVC

    ds = load("scale", n=3000, d=54, seed=0)
    assert ds.X.shape == (3000, 54) and ds.X.flags.c_contiguous and ds.task == "binary"
    assert np.array_equal(ds.X, load("scale", n=3000, d=54, seed=0).X)
    assert 0.3 < (ds.y == 1).mean() < 0.7
    X, y = ds.X, ds.y
    kernel = SVC(gamma="scale").fit(X[:2000], y[:2000]).score(X[2000:], y[2000:])
    linear = LogisticRegression(max_iter=1000).fit(X[:2000], y[:2000]).score(X[2000:], y[2000:])
    assert kernel > 0.85 and kernel > linear + 0.05


def test_generator_options_are_checked():
    with pytest.raises(DataError, match=r"does not take \['dims'\]; it accepts \['n', 'seed'\]"):
        load("checkerboard", dims=3)
    with pytest.raises(DataError, match="takes no options"):
        load("german", n=5)
    with pytest.raises(DataError, match="no test split"):
        load("iris", split="test")


def test_seed_argument_reaches_generators_and_subsample():
    a = load("scale", n=100, d=3, seed=5, max_samples=10)
    b = load("scale", n=100, d=3, seed=5, max_samples=10)
    assert np.array_equal(a.X, b.X) and a.n_samples == 10
