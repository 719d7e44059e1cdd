"""The approximation protocol: records equal a hand run, the options, and bad input."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from lsokl.config import load_config
from lsokl.errors import ConfigError
from lsokl.results import ResultStore, validate_record
from lsokl.runner import run_experiment

APPROX = """
name: approx-tiny
seed: 2
permutations: 2
protocol: approximation
rows: full
datasets:
  digits: {scale: minmax, max_samples: 300}
  diabetes: {scale: minmax_pm1, rows: none, krr: {lambda: 0.5}}
defaults: {rank: 8, gamma: 0.05}
algorithms:
  nystrom: {}
  meka: {clusters: 3, psd: true}
"""


def exp_from(tmp_path, text):
    p = tmp_path / "c.yaml"
    p.write_text(textwrap.dedent(text))
    return load_config(p)


def test_records_equal_a_hand_run(tmp_path):
    from lsokl.approx import create
    from lsokl.data import load
    from lsokl.runner.protocols.approximation import _krr_split
    from lsokl.runner.seeds import learner_seed

    exp = exp_from(tmp_path, APPROX)
    summary = run_experiment(exp, tmp_path / "res", jobs=1)
    assert summary.exit_code == 0
    recs = ResultStore(tmp_path / "res").records()
    assert len(recs) == 8 and all(validate_record(r) == [] for r in recs)
    for r in recs:
        a = r["approximation"]
        assert r["protocol"] == "approximation" and r["status"] == "ok"
        assert a["memory"] > 0 and a["timings"]["total"] == r["time_s"]
        if r["algorithm"] == "meka":
            assert {"clustering", "diagonal", "links"} <= set(a["timings"])
        # the same fit by hand: the cell's seed, then the metric
        ss = learner_seed(2, r["dataset"], r["learner"], r["permutation"])
        ds = load(r["dataset"], scale=r["scale"], max_samples=r["max_samples"])
        X, y = np.asarray(ds.X), np.asarray(ds.y, float)
        fit_seed = np.random.SeedSequence(list(ss.entropy)).spawn(3)[0]
        if r["dataset"] == "digits":
            assert r["metric"] == "rel_error" and a["rows"] == 300 and a["rows_full"]
            approx = create(r["learner"], **r["params"]).fit(X, seed=fit_seed)
            G = np.exp(-0.05 * ((X[:, None] - X[None]) ** 2).sum(-1))
            assert r["value"] == pytest.approx(np.linalg.norm(G - approx.to_dense()) / np.linalg.norm(G), rel=1e-9)
            assert a["memory"] == approx.memory_
        else:
            assert r["metric"] == "test_rmse" and a["n_train"] + a["n_test"] == 442
            tr, te = _krr_split({"seed": 2, "dataset": "diabetes", "permutation": r["permutation"]}, 442, 0.2)
            approx = create(r["learner"], **r["params"]).fit(X[tr], seed=fit_seed)
            alpha = np.linalg.solve(approx.to_dense() + 0.5 * np.eye(len(tr)), y[tr])
            pred = approx.cross(X[te]) @ alpha
            assert r["value"] == pytest.approx(np.sqrt(np.mean((pred - y[te]) ** 2)), rel=1e-8)
    # the same split for every method of a repetition
    by = {(r["dataset"], r["permutation"], r["algorithm"]): r for r in recs}
    assert by[("diabetes", 0, "meka")]["approximation"]["n_test"] == by[("diabetes", 0, "nystrom")]["approximation"]["n_test"]


def test_sampled_rows_and_block_ranks(tmp_path):
    exp = exp_from(tmp_path, """
        name: ranks
        protocol: approximation
        permutations: 1
        rows: 50
        block_ranks: {delta: 1.0e-6}
        datasets: {digits: {scale: minmax, max_samples: 200}}
        algorithms:
          meka-kmeans: {learner: meka, rank: 4, gamma: 0.05, clusters: 3}
          meka-random: {learner: meka, rank: 4, gamma: 0.05, clusters: 3, partition: random}
          nystrom: {rank: 4, gamma: 0.05}
    """)
    run_experiment(exp, tmp_path / "res", jobs=1)
    recs = {r["algorithm"]: r for r in ResultStore(tmp_path / "res").records()}
    for lab in ("meka-kmeans", "meka-random"):
        a = recs[lab]["approximation"]
        assert recs[lab]["status"] == "ok" and a["rows"] == 50 and not a["rows_full"]
        assert np.array(a["block_ranks"]).shape == (3, 3)
    assert recs["nystrom"]["status"] == "failed"
    assert "block_ranks needs a method with a partition" in recs["nystrom"]["error"]["message"]


def test_full_matrix_on_a_large_dataset_is_refused_before_allocating(tmp_path, monkeypatch):
    from lsokl.runner.protocols import approximation

    monkeypatch.setattr(approximation, "FULL_LIMIT", 100)
    exp = exp_from(tmp_path, """
        name: big
        protocol: approximation
        permutations: 1
        rows: full
        datasets: {digits: {max_samples: 150}}
        algorithms: {nystrom: {rank: 4, gamma: 0.05}}
    """)
    run_experiment(exp, tmp_path / "res", jobs=1)
    (rec,) = ResultStore(tmp_path / "res").records()
    assert rec["status"] == "failed"
    assert "set `rows:` to a number of sampled rows" in rec["error"]["message"]


def test_a_failing_cell_does_not_stop_the_grid(tmp_path):
    exp = exp_from(tmp_path, """
        name: grid
        protocol: approximation
        permutations: 1
        datasets: {digits: {max_samples: 60}}
        algorithms:
          nystrom: {rank: [4, 100], gamma: 0.05}
    """)
    summary = run_experiment(exp, tmp_path / "res", jobs=1)
    status = {r["params"]["rank"]: r for r in ResultStore(tmp_path / "res").records()}
    assert status[4]["status"] == "ok" and status[100]["status"] == "failed"
    assert "rank=100 is larger than the number of samples (60)" in status[100]["error"]["message"]
    assert summary.exit_code == 1


@pytest.mark.parametrize("snippet, key, words", [
    ("krr: {lambda: -1}", "krr.lambda", "expected a number > 0"),
    ("krr: {test_fraction: 0.2}", "krr", "needs `lambda`"),
    ("krr: {lambda: 1, lamda: 2}", "krr.lamda", "unknown key"),
    ("rows: many", "rows", "expected `full`, `auto`, `none` or an integer"),
    ("krr: {lambda: 1, target: cooked}", "krr.target", "expected `as_loaded` or `raw`"),
])
def test_bad_options_name_the_key(tmp_path, snippet, key, words):
    with pytest.raises(ConfigError, match=f"{key}: {words}".replace("(", r"\(").replace("`", "`")):
        exp_from(tmp_path, f"""
            protocol: approximation
            {snippet}
            datasets: [diabetes]
            algorithms: {{nystrom: {{rank: 4, gamma: 1}}}}
        """)


def test_bad_options_per_dataset_and_bad_parameters(tmp_path):
    with pytest.raises(ConfigError, match=r"datasets.diabetes.krr.lambda: expected a number > 0"):
        exp_from(tmp_path, """
            protocol: approximation
            datasets: {diabetes: {krr: {lambda: 0}}}
            algorithms: {nystrom: {rank: 4, gamma: 1}}
        """)
    with pytest.raises(ConfigError, match=r"algorithms.nystrom.gamma: expected a number > 0"):
        exp_from(tmp_path, """
            protocol: approximation
            datasets: [diabetes]
            algorithms: {nystrom: {rank: 4, gamma: -2}}
        """)
    with pytest.raises(ConfigError, match=r"rows: only means something with a protocol that reads it"):
        exp_from(tmp_path, """
            rows: full
            datasets: [diabetes]
            algorithms: [ogd]
        """)


def test_protocols_refuse_what_they_cannot_run(tmp_path):
    with pytest.raises(ConfigError, match="cannot run under `protocol: approximation`: it is not a kernel approximation"):
        exp_from(tmp_path, """
            protocol: approximation
            datasets: [diabetes]
            algorithms: [ogd]
        """)
    with pytest.raises(ConfigError, match="meka cannot run under `protocol: online`"):
        exp_from(tmp_path, """
            datasets: [diabetes]
            algorithms: {meka: {rank: 4}}
        """)


def test_algorithms_lists_the_approximations():
    from typer.testing import CliRunner

    from lsokl.cli import app

    out = CliRunner().invoke(app, ["algorithms"], env={"COLUMNS": "200"})
    assert out.exit_code == 0
    for name in ("nystrom", "rnys", "knys", "enys", "rks", "fastfood", "meka", "bka-svm"):
        assert name in out.output
    assert "approximation" in out.output
