"""The runner: failures are recorded and the grid goes on; results do not depend on scheduling."""
from __future__ import annotations

import textwrap
import time

import numpy as np
import pytest

from lsokl.config import load_config
from lsokl.results import ResultStore, validate_record
from lsokl.runner import run_experiment
from lsokl.runner.seeds import authors_order, learner_seed, permutation_order

GRID = """
name: tiny
seed: 3
permutations: 2
datasets:
  checkerboard: {max_samples: 150, defaults: {sigma: 0.1}}
  breast_cancer: {max_samples: 120, defaults: {sigma: 100}}
algorithms:
  perceptron: {sigma: [0.1, 4]}
  rbp: {budget: 10}
"""
VOLATILE = {"time_s", "wall_s", "started_at", "finished_at", "host", "config_hash"}


def exp_from(tmp_path, text=GRID):
    p = tmp_path / "grid.yaml"
    p.write_text(textwrap.dedent(text))
    return load_config(p)


def comparable(records):
    out = {}
    for r in records:
        r = {k: v for k, v in r.items() if k not in VOLATILE}
        r["curve"] = {k: v for k, v in (r["curve"] or {}).items() if k != "time_s"}
        out[r["key"]] = r
    return out


def test_permutations_are_paired_and_seeded():
    a = permutation_order(0, "german", 1, 50)
    assert np.array_equal(a, permutation_order(0, "german", 1, 50))
    assert sorted(a) == list(range(50))
    assert not np.array_equal(a, permutation_order(0, "german", 2, 50))
    assert not np.array_equal(a, permutation_order(1, "german", 1, 50))
    assert not np.array_equal(a, permutation_order(0, "spambase", 1, 50))
    s1, s2 = learner_seed(0, "german", "rbp", 1), learner_seed(0, "german", "fogd", 1)
    assert s1.entropy != s2.entropy


def test_authors_matrix_rows_and_subsets():
    perms = np.array([[3, 0, 4, 1, 2], [4, 3, 2, 1, 0]])
    assert authors_order(perms, 1, 5).tolist() == [4, 3, 2, 1, 0]
    assert authors_order(perms, 0, 3).tolist() == [0, 1, 2]  # max_samples=3 keeps the authors' order
    with pytest.raises(ValueError, match="2 permutations"):
        authors_order(perms, 2, 5)


def test_authors_permutations_are_used(tmp_path, monkeypatch):
    from lsokl import data
    from lsokl.data import Dataset
    from lsokl.learners import create

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 3)), np.where(rng.random(40) > 0.5, 1.0, -1.0)
    perms = np.stack([rng.permutation(40) for _ in range(3)])
    fake = Dataset("checkerboard", X, y, "binary", {"sha256": "fake"}, perms)
    monkeypatch.setattr(data, "load", lambda name, **kw: fake)
    exp = exp_from(tmp_path, """
        permutations: 3
        permutation_source: authors
        datasets: [checkerboard]
        algorithms: {perceptron: {sigma: 1}}
        """)
    run_experiment(exp, tmp_path / "res", jobs=1)
    recs = {r["permutation"]: r for r in ResultStore(tmp_path / "res")}
    for i in range(3):
        expected = create("perceptron", sigma=1).run(X, y, perms[i])
        assert recs[i]["mistakes"] == expected.mistakes
        assert recs[i]["curve"]["mistakes"] == expected.ckpt_mistakes.tolist()


def test_one_failing_and_one_diverging_cell_do_not_stop_the_grid(tmp_path, monkeypatch):
    from lsokl.learners.online.perceptron import KernelPerceptron

    real_play = KernelPerceptron._play

    def play(self, *args):
        if self.sigma == 4:
            raise FloatingPointError("boom at sigma=4")
        return real_play(self, *args)

    monkeypatch.setattr(KernelPerceptron, "_play", play)
    exp = exp_from(tmp_path)
    summary = run_experiment(exp, tmp_path / "res", jobs=1)
    recs = ResultStore(tmp_path / "res").records()
    assert len(recs) == len(exp.cells) == 12
    failed = [r for r in recs if r["status"] == "failed"]
    assert len(failed) == 4 and all(r["params"]["sigma"] == 4 for r in failed)
    assert all("boom at sigma=4" in r["error"]["traceback"] for r in failed)
    assert summary.ran["ok"] == 8 and summary.exit_code == 1

    # diverged: a model whose outputs are NaN
    monkeypatch.setattr(KernelPerceptron, "_play", real_play)
    monkeypatch.setattr(KernelPerceptron, "decision_function", lambda self, X: np.full(X.shape[0], np.nan))
    summary = run_experiment(exp, tmp_path / "res2", jobs=1, algorithms=["perceptron[sigma=0.1]"])
    assert summary.ran["diverged"] == 4 and summary.exit_code == 0

    # a rerun keeps failures unless asked, and --retry-failed reruns only them
    monkeypatch.undo()
    again = run_experiment(exp, tmp_path / "res", jobs=1)
    assert again.skipped_ok == 8 and again.kept_failed["failed"] == 4 and not again.ran
    retry = run_experiment(exp, tmp_path / "res", jobs=1, retry_failed=True)
    assert retry.ran["ok"] == 4 and retry.exit_code == 0
    assert all(r["status"] == "ok" for r in ResultStore(tmp_path / "res"))


def test_same_records_whatever_jobs_or_backend(tmp_path):
    exp = exp_from(tmp_path)
    run_experiment(exp, tmp_path / "j1", jobs=1)
    run_experiment(exp, tmp_path / "j2", jobs=2)
    one = comparable(ResultStore(tmp_path / "j1"))
    two = comparable(ResultStore(tmp_path / "j2"))
    assert len(one) == 12 and all(r["status"] == "ok" for r in one.values())
    assert one == two

    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None, protocol="tcp", host="127.0.0.1") as cluster:
        run_experiment(exp, tmp_path / "dask", backend="dask", scheduler=cluster.scheduler_address)
    assert comparable(ResultStore(tmp_path / "dask")) == one


def test_force_reruns_and_filters_select(tmp_path):
    exp = exp_from(tmp_path)
    s = run_experiment(exp, tmp_path / "r", jobs=1, datasets=["breast_cancer"], algorithms=["rbp"])
    assert s.selected == 2 and s.ran["ok"] == 2
    s = run_experiment(exp, tmp_path / "r", jobs=1, datasets=["breast_cancer"], algorithms=["rbp"], force=True)
    assert s.ran["ok"] == 2 and s.skipped_ok == 0
    for r in ResultStore(tmp_path / "r"):
        assert not validate_record(r)
        assert r["params"]["budget"] == 10 and r["support_size"] <= 10


def _worker_step(grow_mb, lsokl_limit):
    import os
    import time

    import lsokl.runner.worker  # noqa: F401 - what a grid's worker imports with its cell
    if not lsokl_limit:  # the control: loky's own threshold
        from joblib.externals.loky import process_executor

        process_executor._MAX_MEMORY_LEAK_SIZE = int(3e8)
    if grow_mb:
        _worker_step.hold = np.ones(grow_mb << 17)  # resident, kept (like mapped data pages)
        time.sleep(1.2)  # loky checks memory at most once a second
    return os.getpid()


@pytest.mark.parametrize("lsokl_limit", [True, False], ids=["lsokl-worker", "loky-default"])
def test_a_worker_whose_memory_grows_is_kept(lsokl_limit):
    """loky replaces a worker whose memory grew 300 MB since its first task (a leak heuristic);
    lsokl's workers grow by design (mapped datasets, kept streams) and must be kept, since a
    new one reloads every compiled loop. The control, with loky's threshold put back, shows the
    check is live."""
    pytest.importorskip("psutil")  # loky's leak check needs it
    from joblib.externals.loky import get_reusable_executor

    ex = get_reusable_executor(max_workers=1, reuse=False)
    try:
        first = ex.submit(_worker_step, 0, lsokl_limit).result()
        ex.submit(_worker_step, 400, lsokl_limit).result()
        time.sleep(0.5)
        later = ex.submit(_worker_step, 0, lsokl_limit).result()
    finally:
        ex.shutdown(wait=True)
    assert (later == first) == lsokl_limit


def test_a_grid_cell_does_not_repeat_the_constant_predictor_warning(tmp_path, monkeypatch):
    """A grid plays bad settings on purpose (searches, CV candidates); the record says whether a
    pass was degenerate, so the warning meant for a user's own fit is not printed per cell."""
    import warnings

    from lsokl.learners.base import ConstantPredictorWarning
    from lsokl.learners.online.perceptron import KernelPerceptron

    real_play = KernelPerceptron._play

    def play(self, *args):
        warnings.warn("constant on its own training data", ConstantPredictorWarning)
        return real_play(self, *args)

    monkeypatch.setattr(KernelPerceptron, "_play", play)
    exp = exp_from(tmp_path)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        summary = run_experiment(exp, tmp_path / "res", jobs=1, algorithms=["perceptron[sigma=0.1]"])
    assert summary.ran["ok"] == 4
    assert not [w for w in seen if issubclass(w.category, ConstantPredictorWarning)]
