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


# --------------------------------------------------------------------------- select: {by: cv}
CV = CONFIG.replace("permutations: 1", "permutations: 2").replace(
    "  libsvm: {C: 4, sigma: 4}\n  llsvm: {C: 4, sigma: 4, budget: 30}\n",
    "  libsvm: {C: 4, select: {sigma: [0.05, 4, 50], by: cv, folds: 3}}\n")


def _folds(Xtr, ytr, k, subsample=None):
    """The documented fold recipe, recomputed independently."""
    from sklearn.model_selection import StratifiedKFold, train_test_split

    from lsokl.runner.seeds import name_entropy

    state = np.random.SeedSequence([1, 3, name_entropy("breast_cancer")]).generate_state(2)
    rows = np.arange(len(ytr))
    if subsample:
        rows = np.sort(train_test_split(rows, train_size=subsample, random_state=int(state[0]),
                                        stratify=ytr)[0])
    skf = StratifiedKFold(k, shuffle=True, random_state=int(state[1]))
    return [(rows[np.sort(a)], rows[np.sort(b)]) for a, b in skf.split(rows, ytr[rows])]


def test_cv_selection_on_a_toy_problem_is_the_hand_computed_choice_and_resumes(tmp_path):
    from lsokl.learners import create

    exp = _exp(tmp_path, CV)
    s = run_experiment(exp, tmp_path / "res", jobs=1)
    # 3 candidates x 3 folds, shared by both repetitions, then the 2 outer cells
    assert s.exit_code == 0 and s.ran["ok"] == 9 + 2
    recs = ResultStore(tmp_path / "res").records()
    outer = [r for r in recs if r["holdout"]["evaluated_on"] == "test"]
    inner = [r for r in recs if r["holdout"]["evaluated_on"] == "cv"]
    assert len(outer) == 2 and len(inner) == 9
    Xtr, ytr, Xte, yte = _split()
    folds = _folds(Xtr, ytr, 3)
    assert sorted(np.concatenate([b for _, b in folds])) == list(range(len(ytr)))
    expected = {}
    for sigma in (0.05, 4, 50):
        accs = []
        for a, b in folds:
            m = create("libsvm", C=4, sigma=sigma).fit(Xtr[a], ytr[a])
            accs.append(np.mean(m.predict(Xtr[b]) == ytr[b]))
        expected[sigma] = np.mean(accs)
    best = max(expected, key=expected.get)
    assert expected[0.05] < expected[best] - 0.1  # the toy grid has a clear loser
    for r in outer:
        sel = r["holdout"]["selection"]
        assert sel["by"] == "cv" and sel["folds"] == 3 and sel["subsample"] is None
        for c in sel["candidates"]:
            assert c["score"] == pytest.approx(expected[c["params"]["sigma"]], abs=1e-12)
        assert sel["chosen"] == {"sigma": best}
        m = create("libsvm", C=4, sigma=best).fit(Xtr, ytr)
        assert r["value"] == pytest.approx(np.mean(m.predict(Xte) == yte), abs=1e-12)
    again = run_experiment(exp, tmp_path / "res", jobs=1)
    assert again.skipped_ok == 11 and not again.ran


def test_reduced_cv_folds_come_from_a_stratified_subsample(tmp_path):
    from lsokl.runner import selection

    text = CV.replace("by: cv, folds: 3", "by: cv, folds: 3, subsample: 120, reduced: 'a test'")
    exp = _exp(tmp_path, text)
    cell = exp.cells[0]
    opts = selection.options_of(cell)[1]
    assert opts == {"folds": 3, "subsample": 120, "reduced": "a test"}
    Xtr, ytr, _, _ = _split()
    from lsokl.data import Dataset
    from lsokl.runner.protocols import Prepared

    parts = selection.splits(cell, Prepared(train=Dataset("breast_cancer", Xtr, ytr, "binary", {})), 1)
    want = _folds(Xtr, ytr, 3, subsample=120)
    assert len(parts) == 3
    for (sfx, prep), (a, b) in zip(parts.items(), want):
        assert sfx.startswith("cv3-sub120-fold")
        np.testing.assert_array_equal(prep.train.X, Xtr[a])
        np.testing.assert_array_equal(prep.X_test, Xtr[b])
    assert sum(len(b) for _, b in want) == 120


@pytest.mark.parametrize("select, msg", [
    ("{sigma: [1, 2], by: cv, fold: 5}", r"select\.fold: .*Did you mean 'folds'"),
    ("{sigma: [1, 2], by: cv, folds: 1}", r"select\.folds: expected an integer >= 2"),
    ("{sigma: [1, 2], by: cv, subsample: 5}", r"select\.subsample: expected an integer >= 10"),
    ("{sigma: [1, 2], by: cv, reduced: 3}", r"select\.reduced: expected a sentence"),
    ("{sigma: [-1, 0], by: cv}", r"select\.sigma\[0\]: expected a number > 0"),
    ("{sigma: [], by: cv}", r"select\.sigma: expected a non-empty list"),
    ("{sigma: [1], by: cvv}", "Did you mean 'cv'"),
])
def test_bad_cv_configs_name_the_key(tmp_path, select, msg):
    from lsokl.errors import ConfigError

    with pytest.raises(ConfigError, match=msg):
        _exp(tmp_path, CV.replace("{sigma: [0.05, 4, 50], by: cv, folds: 3}", select))


def test_a_grid_where_no_candidate_finishes_fails_the_outer_cell_with_the_reason(tmp_path):
    text = CV.replace("libsvm: {C: 4,", "libsvm: {C: 4, time_limit: 0.0001,")
    s = run_experiment(_exp(tmp_path, text), tmp_path / "res", jobs=1)
    recs = ResultStore(tmp_path / "res").records()
    outer = [r for r in recs if (r.get("error") or {}).get("type") == "SelectionError"]
    assert s.exit_code != 0 and len(outer) == 2
    assert all(c["status"] == "failed" for c in outer[0]["holdout"]["selection"]["candidates"])
    assert "CV folds" in outer[0]["error"]["message"]
    assert sum((r.get("error") or {}).get("type") == "FitTimeLimitError" for r in recs) == 9


def test_permutations_in_an_algorithm_entry_sets_its_repetitions(tmp_path):
    exp = _exp(tmp_path, CONFIG.replace("permutations: 1", "permutations: 5").replace(
        "libsvm: {C: 4, sigma: 4}", "libsvm: {C: 4, sigma: 4, permutations: 1}"))
    counts = {}
    for c in exp.cells:
        counts[c.algorithm] = counts.get(c.algorithm, 0) + 1
    assert counts == {"libsvm": 1, "llsvm": 5}


def test_table3_config_expands_to_the_papers_settings():
    """configs/table3.yaml: B/D from the paper's column headers, one run of each batch solver,
    5 permutations of each online learner, a declared reduced CV for every row."""
    from pathlib import Path

    from lsokl.runner import selection

    exp = load_config(Path(__file__).resolve().parents[1] / "configs" / "table3.yaml")
    assert exp.protocol == "holdout" and set(exp.datasets) == {"w7a", "a9a", "w8a", "codrna", "kddcup99",
                                                                  "kddcup99-full"}
    headers = {"w7a": (400, 1600), "codrna": (400, 1600), "a9a": (1000, 4000), "w8a": (1000, 4000),
               "kddcup99": (200, 400), "kddcup99-full": (200, 400)}
    for ds, (B, D) in headers.items():
        cells = [c for c in exp.cells if c.dataset == ds]
        counts = {}
        for c in cells:
            counts[c.algorithm] = counts.get(c.algorithm, 0) + 1
            p = c.param_dict
            assert p.get("budget", B) == B and p.get("n_fourier", D) == D
            _, opts, grid = selection.options_of(c)
            assert opts["folds"] == 5 and opts["subsample"] == 3000 and opts["reduced"]
            assert "sigma" in grid and len(grid) == 2
        assert counts == {"libsvm": 1, "llsvm": 1, "fogd": 5, "nogd": 5, "bsgd-m": 5, "bsgd-r": 5}
    assert exp.datasets["w7a"].test_fraction is None and exp.datasets["a9a"].test_fraction is None
    assert all(exp.datasets[d].test_fraction == 0.2 for d in ("w8a", "codrna", "kddcup99"))
