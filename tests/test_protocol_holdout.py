"""The holdout protocol: the test set, the scaling fitted on training rows only, the record."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from lsokl.config import load_config
from lsokl.errors import ConfigError
from lsokl.results import ResultStore, validate_record
from lsokl.runner import run_experiment
from lsokl.runner.seeds import permutation_order

HOLDOUT = """
name: holdout-tiny
seed: 1
permutations: 2
protocol: holdout
test_fraction: 0.25
scale: zscore
datasets:
  breast_cancer: {}
algorithms:
  fogd: {eta: 0.2, n_fourier: 40, sigma: 4}
  perceptron: {sigma: 4}
"""


def exp_from(tmp_path, text):
    p = tmp_path / "c.yaml"
    p.write_text(textwrap.dedent(text))
    return load_config(p)


def _independent_split(seed):
    """The protocol's test split recomputed from its documented recipe (stratified, seeded)."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split

    from lsokl.runner.seeds import name_entropy

    b = load_breast_cancer()
    X, y = b.data, np.where(b.target == 1, 1.0, -1.0)
    rs = np.random.RandomState(np.random.SeedSequence([seed, 2, name_entropy("breast_cancer")]).generate_state(1)[0])
    tr, te = train_test_split(np.arange(len(y)), test_size=0.25, random_state=rs, stratify=y)
    tr, te = np.sort(tr), np.sort(te)
    mu, sd = X[tr].mean(0), X[tr].std(0)
    return (X[tr] - mu) / sd, y[tr], (X[te] - mu) / sd, y[te]


def test_holdout_record_equals_a_hand_run(tmp_path):
    from lsokl.learners import create

    exp = exp_from(tmp_path, HOLDOUT)
    assert exp.protocol == "holdout" and exp.cells[0].spec("x", "v")["protocol"] == "holdout"
    summary = run_experiment(exp, tmp_path / "res", jobs=1)
    assert summary.exit_code == 0
    recs = ResultStore(tmp_path / "res").records()
    assert len(recs) == 4
    Xtr, ytr, Xte, yte = _independent_split(1)
    for r in recs:
        assert not validate_record(r) and r["status"] == "ok"
        assert r["protocol"] == "holdout" and r["metric"] == "test_accuracy"
        h = r["holdout"]
        assert h["n_train"] == len(ytr) == r["n_samples"] and h["n_test"] == len(yte) == 143
        assert h["epochs"] == 1 and h["steps"] == len(ytr)
        assert h["train_time_s"] > 0 and h["test_time_s"] > 0 and r["time_s"] == h["train_time_s"]
        # replay the same cell by hand: same order, same learner, same test rows
        order = permutation_order(1, "breast_cancer", r["permutation"], len(ytr))
        learner = create(r["learner"], "binary", **r["params"])
        if r["learner"] == "fogd":  # FOGD's random features come from the cell's seed
            from lsokl.compute.randomness import NumpySource
            from lsokl.runner.seeds import learner_seed

            src = NumpySource(np.random.SeedSequence(list(
                learner_seed(1, "breast_cancer", "fogd", r["permutation"]).entropy)))
        else:
            src = None
        trace = learner.run(Xtr, ytr, order, random_source=src)
        acc = np.mean(learner.predict(Xte) == yte)
        assert r["value"] == pytest.approx(acc, abs=1e-12) and h["test_accuracy"] == r["value"]
        assert r["mistake_rate"] == pytest.approx(trace.mistakes / len(ytr))
        assert r["support_size"] == trace.support_size
        assert acc > 0.85  # a Gaussian-kernel learner on z-scored WDBC


def test_epochs_concatenate_fresh_permutations(tmp_path):
    exp = exp_from(tmp_path, HOLDOUT.replace("permutations: 2", "permutations: 1\nepochs: 3"))
    run_experiment(exp, tmp_path / "res", jobs=1, algorithms=["perceptron"])
    (r,) = ResultStore(tmp_path / "res").records()
    assert r["holdout"]["epochs"] == 3 and r["holdout"]["steps"] == 3 * r["holdout"]["n_train"]


def test_dataset_test_split_is_used_and_scaled_with_train_statistics(tmp_path, monkeypatch):
    from lsokl import data
    from lsokl.data import Dataset
    from lsokl.runner.protocols import holdout

    rng = np.random.default_rng(0)
    Xtr, Xte = rng.normal(3.0, 2.0, size=(60, 4)), rng.normal(5.0, 2.0, size=(30, 4))
    ytr, yte = np.sign(Xtr[:, 0] - 3.0), np.sign(Xte[:, 0] - 3.0)
    parts = {"train": Dataset("a9a", Xtr, ytr, "binary", {"sha256": "tr"}),
             "test": Dataset("a9a", Xte, yte, "binary", {"sha256": "te"})}
    monkeypatch.setattr(data, "load", lambda name, split="train", **kw: parts[split])
    monkeypatch.setattr(holdout, "has_test_split", lambda name: True)
    exp = exp_from(tmp_path, """
        protocol: holdout
        permutations: 1
        scale: zscore
        datasets: [a9a]
        algorithms: {perceptron: {sigma: 2}}
        """)
    prep = holdout.load(exp.datasets["a9a"], 0, exp.protocol_options)
    mu, sd = Xtr.mean(0), Xtr.std(0)
    np.testing.assert_allclose(prep.train.X, (Xtr - mu) / sd)
    np.testing.assert_allclose(prep.X_test, (Xte - mu) / sd)  # train statistics, not the test's own
    assert prep.X_test.mean() > 0.5
    run_experiment(exp, tmp_path / "res", jobs=1)
    (r,) = ResultStore(tmp_path / "res").records()
    assert r["holdout"]["n_test"] == 30 and r["holdout"]["n_train"] == 60

    # a test split with another number of features is refused before anything runs
    parts["test"] = Dataset("a9a", Xte[:, :3], yte, "binary", {"sha256": "te3"})
    with pytest.raises(Exception, match="3 features but the training split has 4"):
        run_experiment(exp, tmp_path / "res2", jobs=1)
    assert not (tmp_path / "res2" / "records").exists() or not list((tmp_path / "res2" / "records").iterdir())


@pytest.mark.parametrize("text, where", [
    ("protocol: holdout\ndatasets: [breast_cancer]\nalgorithms: [perceptron]", "datasets.breast_cancer"),
    ("protocol: holdout\ntest_fraction: 1.5\ndatasets: [breast_cancer]\nalgorithms: [perceptron]",
     "test_fraction: expected a number strictly between 0 and 1"),
    ("protocol: holdout\nepochs: 0\ntest_fraction: 0.2\ndatasets: [breast_cancer]\nalgorithms: [perceptron]",
     "epochs"),
    ("test_fraction: 0.2\ndatasets: [breast_cancer]\nalgorithms: [perceptron]", "test_fraction"),
    ("protocol: holdot\ndatasets: [breast_cancer]\nalgorithms: [perceptron]", "Did you mean 'holdout'"),
])
def test_bad_holdout_configs_name_the_key(tmp_path, text, where):
    with pytest.raises(ConfigError, match=where.replace(".", r"\.") if "expected" not in where else where):
        exp_from(tmp_path, text)


def test_online_cells_keep_their_keys():
    """Protocols must not change the key of an online cell (earlier results still resume)."""
    from lsokl.config import parse_config

    exp = parse_config({"datasets": ["breast_cancer"], "algorithms": ["perceptron"], "permutations": 1})
    spec = exp.cells[0].spec("sha", "v")
    assert "protocol" not in spec and exp.protocol == "online"


SELECT = HOLDOUT.replace("algorithms:\n  fogd: {eta: 0.2, n_fourier: 40, sigma: 4}\n  perceptron: {sigma: 4}\n", """algorithms:
  perceptron: {select: {sigma: [0.05, 4, 50], by: validation, validation_fraction: 0.2}}
""")


def test_select_by_validation_runs_inner_cells_and_resumes(tmp_path):
    from lsokl.learners import create
    from lsokl.runner.protocols.holdout import _stratified_split
    from lsokl.data import Dataset

    exp = exp_from(tmp_path, SELECT)
    assert "sigma" not in exp.cells[0].param_dict and dict(exp.cells[0].select)["by"] == "validation"
    s = run_experiment(exp, tmp_path / "res", jobs=1)
    assert s.exit_code == 0 and s.ran["ok"] == 2 * 3 + 2  # 3 candidates x 2 repetitions + 2 outer cells
    recs = ResultStore(tmp_path / "res").records()
    outer = [r for r in recs if r["holdout"].get("selection")]
    assert all(r["holdout"]["evaluated_on"] == ("test" if r in outer else "validation") for r in recs)
    inner = [r for r in recs if not r["holdout"].get("selection")]
    assert len(outer) == 2 and len(inner) == 6
    Xtr, ytr, Xte, yte = _independent_split(1)
    # the validation cut, recomputed: 20% of the (scaled) training rows
    ds = Dataset("breast_cancer", Xtr, ytr, "binary", {})
    inner_ds, Xv, yv = _stratified_split(ds, 0.2, 1 + 7919)
    for r in outer:
        sel = r["holdout"]["selection"]
        assert [c["params"]["sigma"] for c in sel["candidates"]] == [0.05, 4, 50]
        scores = []
        for c in sel["candidates"]:
            order = permutation_order(1, "breast_cancer", r["permutation"], len(inner_ds.y))
            learner = create("perceptron", "binary", sigma=c["params"]["sigma"])
            learner.run(inner_ds.X, inner_ds.y, order)
            scores.append(np.mean(learner.predict(Xv) == yv))
            assert c["score"] == pytest.approx(scores[-1], abs=1e-12)
        assert sel["chosen"] == {"sigma": [0.05, 4, 50][int(np.argmax(scores))]}
        # the outer cell is the chosen learner fitted on the whole training split
        learner = create("perceptron", "binary", **{**r["params"], **sel["chosen"]})
        learner.run(Xtr, ytr, permutation_order(1, "breast_cancer", r["permutation"], len(ytr)))
        assert r["value"] == pytest.approx(np.mean(learner.predict(Xte) == yte), abs=1e-12)
    again = run_experiment(exp, tmp_path / "res", jobs=1)
    assert again.skipped_ok == 8 and not again.ran


def test_select_by_validation_once_chooses_on_repetition_0_for_every_repetition(tmp_path):
    """`once: true`: the inner fits run once (on repetition 0's permutation) and every
    repetition's outer cell uses that one choice."""
    text = SELECT.replace("validation_fraction: 0.2}", "validation_fraction: 0.2, once: true}")
    exp = exp_from(tmp_path, text)
    s = run_experiment(exp, tmp_path / "res", jobs=1)
    assert s.exit_code == 0 and s.ran["ok"] == 3 + 2  # 3 candidates once + 2 outer cells
    recs = ResultStore(tmp_path / "res").records()
    inner = [r for r in recs if not r["holdout"].get("selection")]
    outer = [r for r in recs if r["holdout"].get("selection")]
    assert len(inner) == 3 and {r["permutation"] for r in inner} == {0}
    assert sorted(r["permutation"] for r in outer) == [0, 1]
    chosen = [r["holdout"]["selection"]["chosen"] for r in outer]
    assert chosen[0] == chosen[1]
    assert [c["score"] for c in outer[0]["holdout"]["selection"]["candidates"]] == \
        [c["score"] for c in outer[1]["holdout"]["selection"]["candidates"]]


@pytest.mark.parametrize("select, msg", [
    ("{sigma: [1, 2]}", r"select\.by: is required"),
    ("{sigma: [1, 2], by: vaildation}", "Did you mean 'validation'"),
    ("{sigam: [1, 2], by: validation}", "Did you mean 'sigma'"),
    ("{sigma: [1, -2], by: validation}", r"select\.sigma\[1\]"),
    ("{by: validation}", "names no parameter"),
    ("{sigma: [1, 2], by: validation, once: 1}", r"select\.once"),
    ("{sigma: [1, 2], by: validation, validation_fraction: 1.5}", r"select\.validation_fraction"),
])
def test_bad_select_names_the_key(tmp_path, select, msg):
    text = SELECT.replace("{select: {sigma: [0.05, 4, 50], by: validation, validation_fraction: 0.2}}",
                          "{select: %s}" % select)
    with pytest.raises(ConfigError, match=msg):
        exp_from(tmp_path, text)


def test_select_needs_holdout(tmp_path):
    with pytest.raises(ConfigError, match="needs `protocol: holdout`"):
        exp_from(tmp_path, "datasets: [breast_cancer]\nalgorithms: {perceptron: {select: {sigma: [1], by: validation}}}")


def test_fresh_draws_per_repetition_and_a_learning_curve_from_one_pass(tmp_path):
    from lsokl.data import load
    from lsokl.learners import create

    exp = exp_from(tmp_path, """
        protocol: holdout
        seed: 4
        permutations: 2
        scale: zscore
        test_at: [100, 250]
        datasets:
          checkerboard: {draws: {n_train: 400, n_test: 300}}
        algorithms: {perceptron: {sigma: 0.5}}
        """)
    run_experiment(exp, tmp_path / "res", jobs=1)
    recs = sorted(ResultStore(tmp_path / "res").records(), key=lambda r: r["permutation"])
    assert [r["holdout"]["n_train"] for r in recs] == [400, 400]
    assert all(r["holdout"]["n_test"] == 300 for r in recs)
    curves = [r["holdout"]["test_curve"] for r in recs]
    assert all(c["n"] == [100, 250, 400] for c in curves)
    assert curves[0]["test_value"][-1] == recs[0]["value"]
    assert curves[0]["test_value"] != curves[1]["test_value"]  # different draws, different curves
    # recompute repetition 1 by hand: its own draw, the prefix models score the curve's points
    from lsokl.runner.seeds import name_entropy

    s = int(np.random.SeedSequence([4, 3, name_entropy("checkerboard"), 1]).generate_state(1)[0])
    full = load("checkerboard", n=700, seed=s)
    Xtr, ytr, Xte, yte = full.X[:400], full.y[:400], full.X[400:], full.y[400:]
    mu, sd = Xtr.mean(0), Xtr.std(0)
    Xtr, Xte = (Xtr - mu) / sd, (Xte - mu) / sd
    order = permutation_order(4, "checkerboard", 1, 400)
    for n, want in zip(curves[1]["n"], curves[1]["test_value"]):
        learner = create("perceptron", "binary", sigma=0.5)
        learner.run(Xtr, ytr, order[:n])
        assert np.mean(learner.predict(Xte) == yte) == pytest.approx(want, abs=1e-12)
    learner = create("perceptron", "binary", sigma=0.5)
    trace = learner.run(Xtr, ytr, order)
    assert recs[1]["mistake_rate"] == pytest.approx(trace.mistakes / 400)


def test_draws_only_for_generators(tmp_path):
    with pytest.raises(ConfigError, match="not a built-in generator"):
        exp_from(tmp_path, "protocol: holdout\ndatasets: {iris: {draws: {n_train: 10, n_test: 10}}}\nalgorithms: [perceptron]")
