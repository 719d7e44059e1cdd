"""The Python API's input path (issue 23 items 1-6, issue 26 item 2): malformed sparse input is
refused before any compiled code, duplicate/unsorted CSR entries mean what scipy says they mean
(without touching the caller's matrix), run() checks y and the order first, absurd kernel widths
and overflowing data are refused with a clear message, non-finite outputs never pass silently,
the mini-batch classifiers require ``classes`` on the first partial_fit, and int32-indexed CSR is
read without an nnz-sized int64 copy.

Most checks here raise before any loop compiles, so every registered learner is covered cheaply;
the duplicate-entry property fits each learner (compiled loops come from numba's cache)."""
from __future__ import annotations

import tracemalloc
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsokl.compute.stream import Stream
from lsokl.compute.validation import NonFiniteWarning, check_sparse
from lsokl.learners import registry
from lsokl.learners.base import OnlineLearner
from lsokl.learners.stochastic.minibatch import MinibatchLearner

LEARNERS = sorted(registry.LEARNERS)
ONLINE = [(t, n) for t, n in LEARNERS if issubclass(registry.get(n, t), OnlineLearner)]
MINIBATCH_CLASSIFIERS = [(t, n) for t, n in LEARNERS if t != "regression"
                         and issubclass(registry.get(n, t), MinibatchLearner)]
APPROX = sorted(registry.APPROXIMATIONS)


def make(task, name, **kw):
    cls = registry.get(name, task)
    p = {"sigma": 1.5, "random_state": 0, "batch_size": 8, "n_components": 8, "budget": 8,
         "rank": 4, "dtype": "float64", "clusters": 2, "n_frequencies": 8}
    p.update(kw)
    return cls(**{k: v for k, v in p.items() if k in cls._get_param_names()})


def toy(task, n=40, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random(X.shape) < 0.4] = 0.0
    if task == "regression":
        return X, X[:, 0] - 0.5 * X[:, 1]
    if task == "multiclass":
        return X, np.arange(n) % 3
    return X, np.where(X[:, 0] + 0.3 * X[:, 1] > 0, 1, -1)


def bad_csr(kind: str, X):
    """A CSR matrix with one structural defect (built without scipy's checks)."""
    A = sp.csr_matrix(X)
    data, indices, indptr = A.data.copy(), A.indices.copy(), A.indptr.copy()
    if kind == "index-too-large":
        indices[3] = 10 ** 6
    elif kind == "index-negative":
        indices[3] = -1
    elif kind == "indptr-decreasing":
        indptr[2], indptr[3] = indptr[3], indptr[2]
    elif kind == "lengths":
        data = data[:-1]
    B = sp.csr_matrix(X.shape)
    B.data, B.indices, B.indptr = data, indices, indptr
    return B


BAD = ["index-too-large", "index-negative", "indptr-decreasing", "lengths"]


# ------------------------------------------------------------------------------------ item 1
@pytest.mark.parametrize("kind", BAD)
@pytest.mark.parametrize("task,name", LEARNERS, ids=[f"{t}-{n}" for t, n in LEARNERS])
def test_malformed_csr_is_refused_by_fit(task, name, kind):
    X, y = toy(task)
    with pytest.raises(ValueError, match="sparse X"):
        make(task, name).fit(bad_csr(kind, X), y)


@pytest.mark.parametrize("kind", BAD)
@pytest.mark.parametrize("task,name", ONLINE, ids=[f"{t}-{n}" for t, n in ONLINE])
def test_malformed_csr_is_refused_by_run(task, name, kind):
    X, y = toy(task)
    with pytest.raises(ValueError, match="sparse X"):
        make(task, name).run(bad_csr(kind, X), y.astype(float))


@pytest.mark.parametrize("kind", BAD)
@pytest.mark.parametrize("name", APPROX)
def test_malformed_csr_is_refused_by_approximations(name, kind):
    X, _ = toy("binary", n=100)
    with pytest.raises(ValueError, match="sparse X"):
        registry.get(name)(gamma=0.5, rank=8, random_state=0).fit(bad_csr(kind, X))
    fitted = registry.get(name)(gamma=0.5, rank=8, random_state=0).fit(X)
    with pytest.raises(ValueError, match="sparse X"):
        fitted.cross(bad_csr(kind, X))
    with pytest.raises(ValueError, match="sparse X"):
        fitted.cross_matvec(bad_csr(kind, X), np.ones(len(X)))


def test_malformed_coo_and_csc_are_refused():
    X, _ = toy("binary")
    C = sp.csc_matrix(X)
    C.indices[2] = 99
    with pytest.raises(ValueError, match="csc"):
        check_sparse(C)
    coo = sp.coo_matrix(X)
    coo.col[0] = 77
    with pytest.raises(ValueError, match="coo"):
        check_sparse(coo)


# ------------------------------------------------------------------------------------ item 2
def with_duplicates(X, splits, shuffle_seed):
    """X as a CSR matrix whose entries are split into several stored duplicates, in a shuffled
    order inside each row, plus the (data, indices) arrays as built, to check they are kept."""
    rng = np.random.default_rng(shuffle_seed)
    rows, cols, vals = [], [], []
    for i, j in zip(*np.nonzero(X)):
        k = splits[(i * X.shape[1] + j) % len(splits)]
        parts = rng.random(k) + 0.5
        parts = X[i, j] * parts / parts.sum()
        parts[-1] = X[i, j] - parts[:-1].sum()
        rows += [i] * k
        cols += [j] * k
        vals += list(parts)
    rows, cols, vals = np.array(rows), np.array(cols), np.array(vals)
    perm = rng.permutation(len(rows))
    perm = perm[np.argsort(rows[perm], kind="stable")]  # grouped by row, shuffled inside
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=X.shape[0]))])
    A = sp.csr_matrix((vals[perm], cols[perm].astype(np.int32), indptr), shape=X.shape)
    return A


def decisions(model, X):
    return model.predict(X) if model.task == "regression" else model.decision_function(X)


@pytest.mark.parametrize("task,name", LEARNERS, ids=[f"{t}-{n}" for t, n in LEARNERS])
@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck))
@given(splits=st.lists(st.integers(1, 3), min_size=1, max_size=5), seed=st.integers(0, 2 ** 16))
def test_duplicate_unsorted_csr_equals_its_dense_twin(task, name, splits, seed):
    X, y = toy(task, n=60)
    A = with_duplicates(X, splits, seed)
    before = (A.data.copy(), A.indices.copy(), A.indptr.copy())
    np.testing.assert_allclose(A.toarray(), X, atol=1e-12)  # scipy's meaning: the sum
    dense = make(task, name).fit(X, y)
    sparse = make(task, name).fit(A, y)
    np.testing.assert_allclose(decisions(sparse, A), decisions(dense, X), rtol=1e-6, atol=1e-8)
    for got, kept in zip((A.data, A.indices, A.indptr), before):  # the caller's matrix untouched
        np.testing.assert_array_equal(got, kept)


def test_canonical_csr_passes_through_without_a_copy():
    A = sp.csr_matrix(toy("binary")[0])
    assert check_sparse(A) is A
    B = with_duplicates(toy("binary")[0], [2], 0)
    C = check_sparse(B)
    assert C is not B and C.has_canonical_format and not np.shares_memory(C.data, B.data)


# ------------------------------------------------------------------------------------ item 3
@pytest.mark.parametrize("task,name", ONLINE, ids=[f"{t}-{n}" for t, n in ONLINE])
def test_run_checks_lengths_and_order_first(task, name):
    X, y = toy(task)
    y = y.astype(float)
    model = make(task, name)
    with pytest.raises(ValueError, match="rows but y has"):
        model.run(X, y[:25])
    with pytest.raises(ValueError, match="order holds row indices"):
        model.run(X, y, order=np.array([0, 1, len(X)]))
    with pytest.raises(ValueError, match="order holds row indices"):
        model.run(X, y, order=np.array([-1, 0]))
    with pytest.raises(ValueError, match="integer row indices"):
        model.run(X, y, order=np.array([0.0, 1.7]))


def test_prjtrn_run_checks_before_its_threshold_search():
    X, y = toy("binary")
    for task in ("binary", "multiclass"):
        labels = y.astype(float) if task == "binary" else (y > 0).astype(float)
        with pytest.raises(ValueError, match="rows but y has"):
            make(task, "prjtrn++").run(X, labels[:25])
        with pytest.raises(ValueError, match="order holds"):
            make(task, "prjtrn++").tune(X, labels, order=np.array([10 ** 6]))


# ------------------------------------------------------------------------------------ item 4
@pytest.mark.parametrize("name", [n for t, n in ONLINE if t == "regression"])
def test_regression_run_refuses_nan_targets(name):
    X, y = toy("regression")
    y[4] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        make("regression", name).run(X, y)


@pytest.mark.parametrize("task,name", [("binary", "norma"), ("binary", "ksdca"), ("binary", "ogd"),
                                       ("binary", "dsg"), ("regression", "fogd")])
def test_overflowing_data_is_refused(task, name):
    X, y = toy(task)
    with pytest.raises(ValueError, match="overflow"):
        make(task, name).fit(X * 1e200, y)


def test_dsg_with_a_tiny_sigma_warns_instead_of_returning_nan_silently():
    X, y = toy("binary")
    model = make("binary", "dsg", sigma=1e-100, dtype="float32")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("error", NonFiniteWarning)
        model.fit(X, y)
        with pytest.raises(NonFiniteWarning, match="diverged"):
            model.decision_function(X)


@pytest.mark.parametrize("name", APPROX)
def test_cross_matvec_checks_width_and_finiteness(name):
    X, _ = toy("binary", n=100)
    approx = registry.get(name)(gamma=0.5, rank=8, random_state=0).fit(X)
    with pytest.raises(ValueError, match="features"):
        approx.cross_matvec(X[:, :3], np.ones(len(X)))
    with pytest.raises(ValueError, match="features"):
        approx.cross(np.hstack([X, X]))
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        approx.cross_matvec(bad, np.ones(len(X)))


def test_a_diverged_holdout_cell_records_no_accuracy():
    from lsokl.runner.protocols.holdout import evaluate

    class NaNModel:
        def predict(self, X):
            return np.full(len(X), -1)

        def decision_function(self, X):
            return np.full(len(X), np.nan)

    job = SimpleNamespace(spec={"task": "binary"}, timeout=None, selection=None)
    data = SimpleNamespace(X_test=np.zeros((10, 2)), y_test=np.array([-1] * 7 + [1] * 3))
    out = evaluate(job, NaNModel(), data, trace=None, train_time=0.1, n_train=5, epochs=1)
    assert out.status == "diverged"
    assert out.fields["value"] is None and out.fields["holdout"]["test_accuracy"] is None


# ------------------------------------------------------------------------------------ item 5
SIGMA_LEARNERS = [(t, n) for t, n in LEARNERS if "sigma" in registry.get(n, t)._get_param_names()]


@pytest.mark.parametrize("sigma", [1e300, 1e-300, float("inf"), float("nan"), -1.0])
@pytest.mark.parametrize("task,name", SIGMA_LEARNERS, ids=[f"{t}-{n}" for t, n in SIGMA_LEARNERS])
def test_absurd_sigma_is_refused_with_the_parameter_named(task, name, sigma):
    X, y = toy(task)
    with pytest.raises(ValueError, match="'sigma' parameter"):
        make(task, name, sigma=sigma).fit(X, y)


@pytest.mark.parametrize("gamma", [1e300, 1e-305, float("inf")])
@pytest.mark.parametrize("name", APPROX)
def test_absurd_gamma_is_refused(name, gamma):
    with pytest.raises(ValueError, match="'gamma' parameter"):
        registry.get(name)(gamma=gamma, rank=8, random_state=0).fit(toy("binary", n=100)[0])


@pytest.mark.parametrize("task,name", [("binary", "ogd"), ("binary", "dsg"), ("regression", "fogd")])
def test_sigma_making_the_kernel_identically_one_is_refused(task, name):
    X, y = toy(task)
    with pytest.raises(ValueError, match="is 1.0 in float64"):
        make(task, name, sigma=1e12).fit(X, y)


# ------------------------------------------------------------------------------------ item 6
@pytest.mark.parametrize("task,name", MINIBATCH_CLASSIFIERS,
                         ids=[f"{t}-{n}" for t, n in MINIBATCH_CLASSIFIERS])
def test_minibatch_partial_fit_requires_classes_first(task, name):
    assert len(MINIBATCH_CLASSIFIERS) == 8
    X, y = toy(task)
    with pytest.raises(ValueError, match="classes must be passed"):
        make(task, name).partial_fit(X, y)


# ------------------------------------------------------------------------- issue 26 item 2
def big_int32_csr(n=20000, d=100, per_row=50, seed=0):
    rng = np.random.default_rng(seed)
    indices = np.sort(np.argsort(rng.random((n, d)), axis=1)[:, :per_row], axis=1)
    indices = np.ascontiguousarray(indices.ravel(), dtype=np.int32)
    indptr = np.arange(0, n * per_row + 1, per_row, dtype=np.int64)
    A = sp.csr_matrix((rng.normal(size=n * per_row), indices, indptr), shape=(n, d))
    assert A.indices.dtype == np.int32
    return A, np.where(rng.random(n) < 0.5, 1.0, -1.0)


def test_stream_reads_int32_csr_without_an_int64_copy():
    A, _ = big_int32_csr(n=2000)
    stream = Stream(A)
    assert np.shares_memory(stream.indices, A.indices) and stream.indices.dtype == np.int32
    assert np.shares_memory(stream.values, A.data)


def test_run_on_int32_csr_allocates_no_nnz_sized_array():
    A, y = big_int32_csr()
    model = make("binary", "fogd", n_components=16)
    model.run(A[:200], y[:200])  # compile (and warm) first
    tracemalloc.start()
    model.run(A, y)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < A.nnz * 8 / 2, f"peak {peak} bytes against {A.nnz * 8} for an int64 copy"


@pytest.mark.parametrize("task,name", ONLINE, ids=[f"{t}-{n}" for t, n in ONLINE])
def test_int32_and_int64_indexed_csr_give_identical_runs(task, name):
    """The loops now read int32 column indices as they are (no int64 copy): the arithmetic, and
    so every committed CSR result (a9a, kddcup99, ... cached with int32 indices), is unchanged."""
    X, y = toy(task, n=60)
    A32 = sp.csr_matrix(X)
    A64 = sp.csr_matrix(A32.shape)  # scipy's constructor would narrow int64 indices to int32
    A64.data, A64.indices, A64.indptr = A32.data, A32.indices.astype(np.int64), A32.indptr.astype(np.int64)
    assert A32.indices.dtype == np.int32 and A64.indices.dtype == np.int64
    assert Stream(A32).indices.dtype == np.int32 and Stream(A64).indices.dtype == np.int64
    order = np.random.default_rng(1).permutation(len(X))
    a, b = make(task, name), make(task, name)
    ta, tb = a.run(A32, y.astype(float), order), b.run(A64, y.astype(float), order)
    assert ta.mistakes == tb.mistakes and ta.support_size == tb.support_size
    np.testing.assert_array_equal(ta.ckpt_mistakes, tb.ckpt_mistakes)
    np.testing.assert_array_equal(decisions(a, A32), decisions(b, A64))
