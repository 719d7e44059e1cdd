"""Plain-Python pieces shared by the multi-class and regression reference loops (spec 2, 3),
and the Octave removal draws for replaying RBP. Slow; tests only. (Comparing a trace with the
authors' rows: ``authors_runs``.)"""
from __future__ import annotations

import math

import numpy as np


def kappa(a, b, sigma):
    return math.exp(-float(np.sum((np.asarray(a) - np.asarray(b)) ** 2)) / (2.0 * sigma * sigma))


def scores(svs, coefs, x, sigma, n_classes):
    """V_r = sum_i coef_i[r] kappa(x_i, x), oldest first (spec 2)."""
    v = [0.0] * n_classes
    for s, c in zip(svs, coefs):
        k = kappa(s, x, sigma)
        for r in range(n_classes):
            v[r] += c[r] * k
    return v


def predict(svs, coefs, x, sigma):
    return sum(c * kappa(s, x, sigma) for s, c in zip(svs, coefs))


def argmax_first(v, skip=None):
    """MATLAB max: the lowest index among the maxima (optionally ignoring index ``skip``)."""
    best = None
    for r, value in enumerate(v):
        if r != skip and (best is None or value > v[best]):
            best = r
    return best


def pair(n_classes, y, s, c):
    """+c for class y, -c for class s."""
    out = [0.0] * n_classes
    out[y], out[s] = c, -c
    return out


def matlab_sign(v):
    return 1.0 if v > 0 else (-1.0 if v < 0 else 0.0)


def multiclass_result(svs, coefs, mistakes, X_eval, sigma, n_classes):
    return {"mistakes": mistakes, "support_size": len(svs),
            "scores": np.array([scores(svs, coefs, x, sigma, n_classes) for x in X_eval])}


def regression_result(svs, coefs, events, sq_loss, X_eval, sigma):
    return {"mistakes": events, "support_size": len(svs), "squared_loss": sq_loss,
            "scores": np.array([predict(svs, coefs, x, sigma) for x in X_eval])}


def multiclass_stream(seed, n=120, d=3, n_classes=4):
    """Overlapping Gaussian classes: plenty of mistakes, margin errors and budget steps."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, size=n)
    X = rng.standard_normal((n_classes, d))[y] + 0.8 * rng.standard_normal((n, d))
    return X, y.astype(np.int64), rng.permutation(n)


def regression_stream(seed, n=120, d=3):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, d))
    y = 0.5 + 0.4 * np.sin(4 * X[:, 0]) * X[:, 1] + 0.05 * rng.standard_normal(n)
    return X, y, rng.permutation(n)


# ----------------------------------------------------------------------------- authors' runs
def octave_draws(shared_data, budget, seed):
    """The 1-based ``randperm(B)(1)`` stream Octave drew after ``rand('state', seed)``."""
    import pandas as pd

    streams = pd.read_csv(shared_data / "reference-runs" / "rng-streams" / "randperm_first_streams.csv")
    row = streams[(streams.B == budget) & (streams.seed == seed)].iloc[0]
    return np.array(row.draws.split(";"), dtype=np.int64)


def replay_authors_runs(shared_data, reference_runs, task, dataset, algorithm, make, *,
                        setting="script", draws_budget=None):
    """Run ``make()`` on each of the 20 permutations the authors ran and compare exactly; with
    ``draws_budget``, removals replay Octave's ``randperm`` stream for seed = perm."""
    from lsokl.compute.randomness import ReplaySource

    from . import authors_runs

    X, y, perms = authors_runs.load(shared_data, dataset)
    rows = authors_runs.rows(reference_runs, task, dataset, algorithm, setting)
    assert len(rows) == 20
    check = (authors_runs.assert_same_multiclass_run if task == "multiclass"
             else authors_runs.assert_same_regression_run)
    def learner():
        model = make()
        if getattr(model, "sigma", None) == "scale":  # the authors' scripts: sigma = 8
            model.set_params(sigma=authors_runs.AUTHORS_SIGMA)
        return model

    for row in rows.itertuples():
        source = None
        if draws_budget is not None:
            source = ReplaySource(positions=octave_draws(shared_data, draws_budget, int(row.seed)),
                                  budget=draws_budget)
        check(learner().run(X, y, perms[row.perm - 1], random_source=source), row)
