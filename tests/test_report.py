"""Reports from synthetic records: aggregation by hand, paper deviations, files and plots."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from lsokl.report import build_report
from lsokl.report.paper import available, load_table
from lsokl.results import ResultStore, make_record

RATES = {  # (dataset, learner) -> mistake rate per permutation
    ("german", "perceptron"): [0.35, 0.36, 0.34],
    ("german", "fogd"): [0.30, 0.29, 0.31],
    ("spambase", "perceptron"): [0.245, 0.250, 0.240],
}
TIMES = [0.1, 0.2, 0.3]


class FakeTrace:
    def __init__(self, rate, n, elapsed, task="binary"):
        self.n_samples, self.task = n, task
        self.mistakes = int(round(rate * n))
        self.support_size = self.mistakes
        self.elapsed = elapsed
        self.squared_loss = float("nan")
        self.checkpoints = np.array([n // 2, n])
        self.ckpt_mistakes = np.array([self.mistakes // 2, self.mistakes])
        self.ckpt_support = self.ckpt_mistakes.copy()
        self.ckpt_time = np.array([elapsed / 2, elapsed])
        self.ckpt_squared_loss = np.empty(0)


def spec(ds, learner, perm, params):
    return {"dataset": ds, "dataset_sha256": "x", "task": "binary", "learner": learner,
            "params": params, "lsokl_version": "0", "permutation": perm,
            "permutation_source": "seed", "seed": 0, "max_samples": None, "scale": None,
            "n_checkpoints": None}


@pytest.fixture
def results(tmp_path):
    store = ResultStore(tmp_path / "res").ensure()
    n = 1000
    for (ds, learner), rates in RATES.items():
        params = {"sigma": 8.0} if learner == "perceptron" else {"sigma": 8.0, "budget": 100, "eta": 0.002}
        for p, (rate, t) in enumerate(zip(rates, TIMES)):
            store.write(make_record(key=f"{ds}-{learner}-{p}", spec=spec(ds, learner, p, params),
                                    status="ok", config_hash="c", config_name="synthetic",
                                    algorithm=learner, n_features=3, trace=FakeTrace(rate, n, t)))
    # a failed permutation is reported, not averaged
    store.write(make_record(key="german-fogd-9", spec=spec("german", "fogd", 9, {"sigma": 8.0, "budget": 100, "eta": 0.002}),
                            status="failed", config_hash="c", config_name="synthetic", algorithm="fogd",
                            error={"type": "E", "message": "m", "traceback": "tb"}))
    return tmp_path / "res"


def test_aggregation_matches_hand_computation(results):
    rep = build_report(results, plots=False)
    summary = pd.read_csv(rep.out / "summary.csv")
    row = summary[(summary.dataset == "german") & (summary.learner == "perceptron")].iloc[0]
    vals = np.array([35.0, 36.0, 34.0])
    assert row["mean"] == pytest.approx(35.0)
    assert row["std"] == pytest.approx(np.sqrt(((vals - 35.0) ** 2).sum() / 2))  # ddof=1: 1.0
    assert row["std"] == pytest.approx(1.0)
    assert row["time_s"] == pytest.approx(0.2)
    fogd = summary[(summary.dataset == "german") & (summary.learner == "fogd")].iloc[0]
    assert fogd["n_ok"] == 3 and fogd["n_failed"] == 1 and fogd["mean"] == pytest.approx(30.0)
    md = rep.markdown["binary"]
    assert "| Perceptron | 35.00 ± 1.00 | 0.200 |" in md
    assert "30.00 ± 1.00 (3/4 runs)" in md
    for name in ("table.md", "table.csv", "table.tex"):
        assert (rep.out / name).stat().st_size > 0
    tex = (rep.out / "table.tex").read_text()
    assert r"35.00 $\pm$ 1.00" in tex and r"\begin{tabular}" in tex


def test_paper_columns_give_deviation_in_published_std(results):
    rep = build_report(results, paper="lsokl2016:table5", plots=False)
    summary = pd.read_csv(rep.out / "summary.csv")
    row = summary[(summary.dataset == "german") & (summary.learner == "perceptron")].iloc[0]
    # published german Perceptron: 35.2 ± 0.9; ours 35.0 -> (35.0 - 35.2) / 0.9
    assert row["paper_mean"] == 35.2 and row["paper_std"] == 0.9
    assert row["deviation_sd"] == pytest.approx((35.0 - 35.2) / 0.9)
    fogd = summary[(summary.dataset == "german") & (summary.learner == "fogd")].iloc[0]
    assert fogd["deviation_sd"] == pytest.approx((30.0 - 29.9) / 0.7)
    md = rep.markdown["binary"]
    header = md.splitlines()[0]
    assert "german paper" in header and "german Δ/σ" in header
    assert header.index("german") < header.index("spambase")  # the paper's dataset order
    assert "| Perceptron | 35.00 ± 1.00 | 0.200 | 35.20 ± 0.90 | -0.2 |" in md


def test_paper_tables_ship_with_names_mapped():
    assert {"lsokl2016:table5", "lsokl2016:table7", "lsokl2016:table9"} <= set(available())
    t5 = load_table("lsokl2016:table5")
    assert set(t5["learner"]) == {"perceptron", "ogd", "rbp", "forgetron", "projectron",
                                  "projectron++", "bpas", "bogd", "fogd", "nogd"}
    assert "kddcup08" in set(t5["dataset_key"])


def test_plots_and_compact_files(results):
    rep = build_report(results, compact=True)
    for ds in ("german", "spambase"):
        for ext in ("png", "svg"):
            path = rep.out / "plots" / f"{ds}.{ext}"
            assert path.stat().st_size > 1000
    assert "german: n=1000" in (rep.out / "plots" / "german.svg").read_text()
    frame = pd.read_csv(rep.out / "records.csv")
    assert len(frame) == 10 and set(frame["status"]) == {"ok", "failed"}
    assert json.loads(frame.loc[frame.status == "ok", "curve"].iloc[0])["t"] == [500, 1000]


def test_cli_report_prints_table(results, tmp_path, monkeypatch):
    from lsokl.cli import app

    monkeypatch.chdir(tmp_path)  # the report goes to ./runs/<results name>/report

    res = CliRunner().invoke(app, ["report", str(results), "--no-plots", "--paper", "lsokl2016:table5"])
    assert res.exit_code == 0, res.output
    assert "Perceptron" in res.output and "35.00 ± 1.00" in res.output
    res = CliRunner().invoke(app, ["report", str(results), "--paper", "lsokl2016:tabel5"])
    assert res.exit_code == 2 and "Did you mean 'lsokl2016:table5'" in " ".join(res.output.split())
