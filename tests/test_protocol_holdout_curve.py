"""The holdout protocol's test-error curve for mini-batch learners (DSG and its baselines)."""
from __future__ import annotations

import textwrap

import numpy as np

from lsokl.config import load_config
from lsokl.results import ResultStore, validate_record
from lsokl.runner import run_experiment

CONFIG = """
name: curve-tiny
seed: 1
permutations: 2
protocol: holdout
test_fraction: 0.25
scale: zscore
datasets:
  breast_cancer: {}
algorithms:
  dsg: {sigma: 4, batch_size: 16, block_features: 16, nu: 1.0e-4, theta: 2.0}
  ksdca: {sigma: 4, batch_size: 16}
  rsdca: {sigma: 4, batch_size: 16, n_components: 64}
"""


def test_curve_records_log_spaced_checkpoints_matching_the_final_model(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(textwrap.dedent(CONFIG))
    exp = load_config(p)
    summary = run_experiment(exp, tmp_path / "res", jobs=1)
    assert summary.exit_code == 0
    recs = ResultStore(tmp_path / "res").records()
    assert len(recs) == 6
    for r in recs:
        assert not validate_record(r), validate_record(r)
        h = r["holdout"]
        c = h["curve"]
        seen = np.array(c["samples_seen"])
        assert seen[-1] == h["n_train"] and np.all(np.diff(seen) > 0) and len(seen) >= 5
        assert seen[0] == 16  # the first mini-batch
        # log-spaced: the gaps grow
        assert np.diff(seen)[-1] > np.diff(seen)[0]
        # the curve's last point is the final model's test error (running scores == fresh predict)
        assert abs(c["test_error"][-1] - (1 - r["value"])) < 1e-12
        assert len(c["train_time_s"]) == len(seen) and h["curve_test_time_s"] >= 0
    # DSG's blocks come from the cell's seed: a second run gives the same curves
    run_experiment(exp, tmp_path / "again", jobs=1)
    again = {r["key"]: r["holdout"]["curve"]["test_error"] for r in ResultStore(tmp_path / "again").records()}
    assert all(again[r["key"]] == r["holdout"]["curve"]["test_error"] for r in recs)


def test_figure_test_curve_draws_mean_and_band(tmp_path):
    """`lsokl figure --test-curve`: one PNG/SVG per dataset, mean curves = the mean over
    repetitions of the records' curves, end points = the last checkpoint."""
    import pandas as pd
    from typer.testing import CliRunner

    from lsokl.cli import app

    p = tmp_path / "c.yaml"
    p.write_text(textwrap.dedent(CONFIG))
    run_experiment(load_config(p), tmp_path / "res", jobs=1, algorithms=["dsg"])
    res = CliRunner().invoke(app, ["figure", str(tmp_path / "res"), "--test-curve", "--out", str(tmp_path / "fig")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "fig" / "test-error-breast_cancer.png").stat().st_size > 1000
    assert (tmp_path / "fig" / "test-error-breast_cancer.svg").exists()
    recs = [r for r in ResultStore(tmp_path / "res").records() if r["algorithm"] == "dsg"]
    curves = np.array([r["holdout"]["curve"]["test_error"] for r in recs])
    table = pd.read_csv(tmp_path / "fig" / "test-error-breast_cancer.csv")
    np.testing.assert_allclose(table["mean"], curves.mean(axis=0))
    np.testing.assert_allclose(table["std"], curves.std(axis=0, ddof=1))
    ends = pd.read_csv(tmp_path / "fig" / "end-points.csv")
    assert ends.loc[0, "mean"] == curves[:, -1].mean()
