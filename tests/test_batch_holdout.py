"""The batch learners (libsvm, llsvm) in the holdout protocol: the record is the hand-run fit,
LLSVM reads its rows in file order with the cell's seed, and a solver over its time limit fails
its cell with the reason while the grid goes on."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from lsokl.config import load_config
from lsokl.results import ResultStore, validate_record
from lsokl.runner import run_experiment
from lsokl.runner.seeds import learner_seed, permutation_order

CONFIG = """
name: batch-tiny
seed: 1
permutations: 1
protocol: holdout
test_fraction: 0.25
scale: zscore
datasets:
  breast_cancer: {}
algorithms:
  libsvm: {C: 4, sigma: 4}
  llsvm: {C: 4, sigma: 4, budget: 30}
"""


def _exp(tmp_path, text):
    p = tmp_path / "c.yaml"
    p.write_text(textwrap.dedent(text))
    return load_config(p)


def _split():
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    from lsokl.runner.seeds import name_entropy

    b = load_breast_cancer()
    X, y = b.data, np.where(b.target == 1, 1.0, -1.0)
    rs = np.random.RandomState(np.random.SeedSequence([1, 2, name_entropy("breast_cancer")]).generate_state(1)[0])
    tr, te = train_test_split(np.arange(len(y)), test_size=0.25, random_state=rs, stratify=y)
    tr, te = np.sort(tr), np.sort(te)
    sc = StandardScaler().fit(X[tr])
    return sc.transform(X[tr]), y[tr], sc.transform(X[te]), y[te]


def test_batch_records_equal_hand_runs(tmp_path):
    from lsokl.learners import create

    summary = run_experiment(_exp(tmp_path, CONFIG), tmp_path / "res", jobs=1)
    assert summary.exit_code == 0
    recs = {r["learner"]: r for r in ResultStore(tmp_path / "res").records()}
    assert set(recs) == {"libsvm", "llsvm"}
    Xtr, ytr, Xte, yte = _split()
    for name, r in recs.items():
        assert not validate_record(r) and r["status"] == "ok" and r["mistake_rate"] is None
        if name == "llsvm":  # file order, the cell's seed
            seed = np.random.SeedSequence(list(learner_seed(1, "breast_cancer", "llsvm", 0).entropy))
            learner = create(name, **r["params"], random_state=seed).fit(Xtr, ytr)
            assert r["support_size"] == 30
        else:  # libsvm gets the permuted rows; its solution does not depend on the order
            order = permutation_order(1, "breast_cancer", 0, len(ytr))
            learner = create(name, **r["params"]).fit(Xtr[order], ytr[order])
        acc = np.mean(learner.predict(Xte) == yte)
        assert r["value"] == pytest.approx(acc, abs=1e-12) and acc > 0.9
        assert r["holdout"]["train_time_s"] > 0 and r["holdout"]["test_time_s"] > 0


def test_a_solver_over_its_time_limit_fails_its_cell_and_the_grid_goes_on(tmp_path):
    text = CONFIG.replace("  libsvm: {C: 4, sigma: 4}\n",
                          "  libsvm: {C: 4, sigma: 4}\n  libsvm-slow: {learner: libsvm, C: 4, sigma: 4, time_limit: 0.0001}\n")
    summary = run_experiment(_exp(tmp_path, text), tmp_path / "res", jobs=1)
    recs = {r["algorithm"]: r for r in ResultStore(tmp_path / "res").records()}
    assert recs["libsvm"]["status"] == "ok" and recs["llsvm"]["status"] == "ok"
    slow = recs["libsvm-slow"]
    assert slow["status"] == "failed" and summary.exit_code != 0
    assert slow["error"]["type"] == "FitTimeLimitError"
    assert "time limit" in slow["error"]["message"]


def test_the_cell_timeout_reaches_the_solver(tmp_path):
    """``timeout:`` in the config becomes the batch learner's hard limit (an alarm cannot stop C)."""
    from lsokl.runner.protocols import CellData
    from lsokl.runner.protocols.holdout import _train_batch
    from lsokl.learners import create

    class Job:
        timeout = 12.5
        seed_entropy = (1, 2, 3)
        spec = {"learner": "libsvm"}

        def order(self, n, permutations):
            return np.arange(n)

    Xtr, ytr, _, _ = _split()
    learner = create("libsvm", C=1.0, sigma=4.0)
    _train_batch(Job(), learner, CellData(Xtr, ytr))
    assert learner.time_limit == 12.5
