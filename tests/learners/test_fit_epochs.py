"""``fit`` follows scikit-learn's SGD convention for the learners with ``max_iter`` (FOGD, NOGD,
the Pegasos/BSGD family): epochs over shuffled rows, continuing one model, stopped by ``tol`` /
``n_iter_no_change``, ``n_iter_``; ``run`` and ``partial_fit`` keep the paper's single pass."""
from __future__ import annotations

import numpy as np
import pytest

from lsokl.learners import create


def _moons(n=300, seed=0):
    from sklearn.datasets import make_moons
    from sklearn.preprocessing import StandardScaler

    X, y = make_moons(n, noise=0.25, random_state=seed)
    return StandardScaler().fit_transform(X), y


@pytest.mark.parametrize("name", ["fogd", "bsgd-m"])
def test_fit_is_epochs_of_partial_fit_over_seeded_shuffles(name):
    """fit(max_iter=k, tol=None) = k partial_fit calls, each over rng.permutation(n) with
    rng = default_rng(random_state) (0 when there is none); FOGD's epoch k steps eta / k
    (``fit_step_decay``), and BSGD's lam="auto" is 1/n in fit."""
    X, y = _moons()
    extra = {"random_state": 3} if name == "fogd" else {}
    fitted = create(name, max_iter=3, tol=None, **extra).fit(X, y)
    assert fitted.n_iter_ == 3
    manual = create(name, **extra, **({"lam": 1.0 / len(y)} if name == "bsgd-m" else {}))
    eta = manual.get_params().get("eta")
    rng = np.random.default_rng(3 if extra else 0)
    for k in range(3):
        if eta is not None:
            manual.set_params(eta=eta * (1.0 / (k + 1)))
        p = rng.permutation(len(y))
        manual.partial_fit(X[p], y[p], classes=[0, 1])
    np.testing.assert_allclose(fitted.decision_function(X), manual.decision_function(X), rtol=1e-12, atol=1e-12)


def test_tol_stops_when_the_epoch_error_stops_improving():
    X, y = _moons()
    model = create("nogd", max_iter=50, tol=1.0, n_iter_no_change=2).fit(X, y)
    # tol = 1 (100 points of error rate) can never be beaten: epochs 2 and 3 are stale, stop
    assert model.n_iter_ == 3
    assert create("nogd", max_iter=4, tol=None).fit(X, y).n_iter_ == 4


def test_epochs_learn_where_one_pass_does_not():
    """At defaults on standardised two-moons, several epochs beat the single pass (the paper's
    protocol, max_iter=1) on held-out data."""
    X, y = _moons(600)
    Xt, yt = _moons(600, seed=1)
    single = create("bsgd-m", max_iter=1).fit(X, y).score(Xt, yt)
    several = create("bsgd-m").fit(X, y).score(Xt, yt)
    assert several > single + 0.02


def test_run_keeps_the_single_pass():
    X, y = _moons()
    learner = create("fogd", random_state=0)
    trace = learner.run(X, np.where(y == 1, 1.0, -1.0))
    assert trace.n_samples == len(y) and int(learner.counts_[0]) == len(y)
    assert not hasattr(learner, "n_iter_")


@pytest.mark.parametrize("name", ["bsgd-m", "bpegasos"])
def test_lam_auto_is_one_over_n_in_fit_and_the_papers_in_run(name):
    """lam="auto": 1/n in fit (SVC(C=1)'s objective), the paper's 1e-4 in run and partial_fit."""
    X, y = _moons()
    assert create(name).lam == "auto"
    assert create(name, max_iter=1).fit(X, y).lam_ == pytest.approx(1.0 / len(y))
    learner = create(name)
    learner.run(X, np.where(y == 1, 1.0, -1.0))
    assert learner.lam_ == 1e-4
    assert create(name).partial_fit(X, y, classes=[0, 1]).lam_ == 1e-4
    assert create(name, lam=0.01, max_iter=1).fit(X, y).lam_ == 0.01
