"""LIBSVM (scikit-learn's SVC with libsvm's own settings, spec BUDGETED_PEGASOS.md section 7)
and the hard time limit every batch learner has."""
from __future__ import annotations

import time

import numpy as np
import pytest
import scipy.sparse as sp

from lsokl.learners import registry
from lsokl.learners.batch.common import FitTimeLimitError, call_with_time_limit
from lsokl.compute.kernels import gaussian_gram
from lsokl.learners.batch.libsvm import LIBSVM


def _data(n=300, d=5, seed=0):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1, -1)
    X = rng.standard_normal((n, d)) + 1.2 * y[:, None] * np.eye(d)[0]
    X[np.abs(X) < 0.3] = 0.0
    return X, y


def test_registered_as_a_batch_learner():
    assert registry.get("libsvm") is LIBSVM and LIBSVM.online is False


def test_libsvm_settings_and_width_convention():
    X, y = _data()
    m = LIBSVM(C=3.0, sigma=2.0).fit(X, y)
    svc = m.svc_
    assert (svc.kernel, svc.tol, svc.shrinking, svc.cache_size, svc.C) == ("rbf", 1e-3, True, 100.0, 3.0)
    # the decision value is sum_j dual_j kappa(sv_j, x) + b with kappa = exp(-||.||^2 / (2 sigma^2))
    K = gaussian_gram(X[:20], svc.support_vectors_, 2.0)
    np.testing.assert_allclose(m.decision_function(X[:20]),
                               K @ svc.dual_coef_.ravel() + svc.intercept_[0], atol=1e-9)
    assert m.support_size_ == len(svc.support_) > 0
    assert m.score(X, y) > 0.8


def test_csr_input_reaches_libsvm_sparse_and_agrees_with_dense():
    X, y = _data()
    dense = LIBSVM(C=1.0, sigma=1.5).fit(X, y)
    csr = LIBSVM(C=1.0, sigma=1.5).fit(sp.csr_matrix(X), y)
    assert csr.svc_._sparse and not dense.svc_._sparse
    np.testing.assert_allclose(csr.decision_function(sp.csr_matrix(X[:30])),
                               dense.decision_function(X[:30]), atol=1e-6)


def test_time_limit_kills_the_solver_and_raises():
    X, y = _data(n=6000, d=20)
    y = np.random.default_rng(1).permutation(y)  # random labels: SMO works hard
    t0 = time.perf_counter()
    with pytest.raises(FitTimeLimitError, match="0.2 s time limit"):
        LIBSVM(C=1e4, sigma=0.5, time_limit=0.2).fit(X, y)
    assert time.perf_counter() - t0 < 5.0


def test_time_limit_returns_the_same_model_when_it_finishes():
    X, y = _data()
    direct = LIBSVM(C=2.0, sigma=1.0).fit(X, y)
    limited = LIBSVM(C=2.0, sigma=1.0, time_limit=60).fit(X, y)
    np.testing.assert_allclose(limited.decision_function(X), direct.decision_function(X), atol=1e-12)
    assert limited.fit_time_ > 0


def test_errors_in_a_time_limited_fit_reach_the_caller():
    def boom():
        raise ValueError("bad data in the child")

    with pytest.raises(ValueError, match="bad data in the child"):
        call_with_time_limit(boom, 10)
    X, _ = _data(n=20)
    with pytest.raises(ValueError, match="class"):
        LIBSVM(time_limit=10).fit(X, np.ones(20))


@pytest.mark.parametrize("params, match", [({"C": -1.0}, "'C'"), ({"sigma": 0}, "'sigma'"),
                                           ({"tol": 0}, "'tol'"), ({"time_limit": 0}, "'time_limit'")])
def test_invalid_parameters_are_named(params, match):
    X, y = _data(n=30)
    with pytest.raises(ValueError, match=match):
        LIBSVM(**params).fit(X, y)


@pytest.mark.parametrize("name", ["libsvm", "llsvm"])
def test_batch_learner_in_an_online_config_is_refused_before_anything_runs(name):
    from lsokl.config import parse_config
    from lsokl.errors import ConfigError

    with pytest.raises(ConfigError, match=rf"algorithms\.{name}: .*no online `run`.*protocol: holdout"):
        parse_config({"datasets": ["breast_cancer"], "algorithms": [name]})
