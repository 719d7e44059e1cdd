"""lsokl.report.figures on small synthetic records: files exist, axes are labelled as the paper's."""
from __future__ import annotations

import json

import numpy as np
import pytest

from lsokl.results import ResultStore
from lsokl.results.record import RECORD_KEYS


def _record(i, *, dataset, task, algorithm, params, perm, value, time_s):
    t = [10, 20, 30]
    rec = {k: None for k in RECORD_KEYS}
    rec.update(
        schema=1, key=f"k{i:05d}", config_hash="h", config_name="synthetic", status="ok",
        dataset=dataset, dataset_sha256="x", task=task, n_samples=30, n_features=4,
        algorithm=algorithm, learner=algorithm, params=params, permutation=perm,
        permutation_source="seed", seed=0, scale=None, metric="squared_loss" if task == "regression" else "mistake_rate",
        value=value, mistakes=int(value * 30), mistake_rate=None if task == "regression" else value,
        squared_loss=value if task == "regression" else None, time_s=time_s, support_size=5,
        curve={"t": t, "mistakes": [1, 2, 3], "mistake_rate": [value] * 3, "support": [5] * 3,
               "time_s": [time_s / 3, 2 * time_s / 3, time_s],
               "squared_loss": [value] * 3 if task == "regression" else None},
    )
    return rec


def _sweep_records(root, datasets):
    store = ResultStore(root).ensure()
    rng = np.random.default_rng(0)
    i = 0
    for ds in datasets:
        for alg, p0 in (("fogd", {"eta": 0.005, "rho_f": None}), ("nogd", {"eta": 0.5, "rho_n": None}),
                        ("rbp", {})):
            for budget in (50, 100, 200):
                for perm in range(3):
                    params = {"sigma": 8.0, "budget": budget, **{k: v for k, v in p0.items() if v is not None}}
                    if alg == "fogd":
                        params["rho_f"] = 4.0
                    if alg == "nogd":
                        params["rho_n"] = 0.2
                    store.write(_record(i, dataset=ds, task="multiclass" if ds == "dna" else "binary",
                                        algorithm=alg, params=params, perm=perm,
                                        value=0.3 - budget / 2000 + rng.normal(0, 0.01),
                                        time_s=0.01 * budget * (1 + rng.random())))
                    i += 1
        for rho in ((1.0, 2.0, 4.0) if ds == "dna" else ()):  # a FOGD rho_f sweep at a fixed budget
            for perm in range(2):
                store.write(_record(i, dataset=ds, task="multiclass" if ds == "dna" else "binary",
                                    algorithm="fogd", params={"sigma": 8.0, "budget": 300, "eta": 0.005, "rho_f": rho},
                                    perm=perm, value=0.2 / rho, time_s=0.01 * rho))
                i += 1
    return root


@pytest.fixture(scope="module")
def sweep_results(tmp_path_factory):
    return _sweep_records(tmp_path_factory.mktemp("sweep") / "res", ("dna", "german"))


@pytest.fixture(scope="module")
def drawn(sweep_results, tmp_path_factory):
    """Every sweep figure of the synthetic results, drawn once for the tests below."""
    from lsokl.report.figures import make_figures

    out = tmp_path_factory.mktemp("figs")
    files = make_figures(sweep_results, out, sweep=["budget", "rho_f", "rho_n"], prefix="fig-", dpi=30)
    return out, files


def test_budget_sweep_figures(sweep_results, drawn):
    from lsokl.report.figures import load_frame, sweep_table

    out, files = drawn
    names = {f.name for f in files}
    for ds in ("dna", "german"):
        assert {f"fig-budget-{ds}.png", f"fig-budget-{ds}.svg"} <= names
    assert all(f.exists() and f.stat().st_size > 500 for f in files if f.suffix in (".png", ".svg"))
    svg = (out / "fig-budget-dna.svg").read_text()
    for text in ("budget B", "online average rate of mistakes (%)", "average time cost (s, log scale)",
                 "FOGD", "NOGD", "RBP", "dna (multiclass"):
        assert text in svg, text
    table = sweep_table(load_frame(sweep_results), "budget")
    # budget 300 appears for FOGD (the rho sweep) only; rbp has exactly the three budgets
    rbp = table[(table["dataset"] == "dna") & (table["algorithm"] == "rbp")]
    assert list(rbp["x"]) == [50, 100, 200] and (rbp["runs"] == 3).all()


def test_rho_sweep_only_draws_the_swept_algorithm(drawn):
    out, files = drawn
    names = {f.name for f in files}
    assert "fig-rho_f-dna.png" in names and "fig-rho_f-dna.svg" in names
    assert not any("rho_n-" in n for n in names)  # rho_n never varies here: no figure
    assert not any("rho_f-german" in n for n in names)  # german has no rho_f sweep
    svg = (out / "fig-rho_f-dna.svg").read_text()
    assert "rho" in svg
    assert "FOGD" in svg and "NOGD" not in svg and "RBP" not in svg


def test_regression_convergence_shows_squared_loss(tmp_path):
    from lsokl.report.figures import make_figures

    store = ResultStore(tmp_path / "res").ensure()
    for i, (alg, perm) in enumerate([(a, p) for a in ("ogd", "nogd") for p in range(2)]):
        store.write(_record(i, dataset="housing", task="regression", algorithm=alg,
                            params={"sigma": 8.0, "eta": 0.3}, perm=perm, value=0.04 + 0.001 * perm,
                            time_s=0.05))
    files = make_figures(tmp_path / "res", tmp_path / "out", convergence=True, dpi=30)
    svg = next(f for f in files if f.suffix == ".svg").read_text()
    assert "average squared loss" in svg and "average time cost (s, log scale)" in svg
    assert "number of samples" in svg
    assert any(f.suffix == ".png" for f in files)


def test_figure_cli(tmp_path):
    from typer.testing import CliRunner

    from lsokl.cli import app

    res_dir = _sweep_records(tmp_path / "res", ("dna",))
    res = CliRunner().invoke(app, ["figure", str(res_dir), "--sweep", "budget",
                                   "--out", str(tmp_path / "cli"), "--dpi", "30"])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "cli" / "budget-dna.png").exists()
    res = CliRunner().invoke(app, ["figure", str(res_dir)])
    assert res.exit_code != 0


def test_step_size_curve_marks_the_published_value(tmp_path):
    """`--sweep eta --paper lsokl2016:table7` on a search's records: log eta axis, the published
    value drawn, and the CSV's deviation in published std computed from the published row."""
    from lsokl.report.figures import make_figures

    store = ResultStore(tmp_path / "res").ensure()
    etas = (0.2, 0.02, 0.002, 0.0002)
    i = 0
    for eta in etas:
        for perm in range(2):
            store.write(_record(i, dataset="dna", task="multiclass", algorithm="fogd",
                                params={"sigma": 8.0, "budget": 200, "eta": eta, "rho_f": 4.0}, perm=perm,
                                value=0.18 + 0.01 * perm + eta / 10, time_s=0.1))
            i += 1
    files = make_figures(tmp_path / "res", tmp_path / "out", sweep=["eta"], paper="lsokl2016:table7", dpi=30)
    assert {f.name for f in files} >= {"eta-dna.png", "eta-dna.svg", "eta.csv"}
    import pandas as pd

    csv = pd.read_csv(tmp_path / "out" / "eta.csv")
    # LSOKL Table 7, dna FOGD: 20.8 +- 0.7 (mistake rate %)
    assert (csv["paper_mean"] == 20.8).all() and (csv["paper_std"] == 0.7).all()
    row = csv[csv["x"] == 0.2].iloc[0]
    assert row["mean"] == pytest.approx(100 * (0.185 + 0.02))
    assert row["dev_std"] == pytest.approx((100 * (0.185 + 0.02) - 20.8) / 0.7)
    svg = (tmp_path / "out" / "eta-dna.svg").read_text()
    assert "published value (lsokl2016:table7)" in svg
