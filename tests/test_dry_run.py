"""`lsokl reproduce ITEM --dry-run`: cells, data here or absent, and estimated times, from the
recorded cell times or, for an item never run, from the declared rule; nothing is written."""
from __future__ import annotations

import csv

import pytest

from lsokl.papers import dry_run, get


def _write_summary(folder, rows):
    (folder / "report").mkdir(parents=True)
    with (folder / "report" / "summary.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["dataset", "time_s", "n_ok"])
        w.writeheader()
        w.writerows(rows)


def test_never_run_item_uses_the_rule(tmp_path):
    item = get("lsokl2016:table9")
    plan = dry_run.plan(item, tmp_path, jobs=2)
    housing = next(d for d in plan.datasets if d.name == "housing")
    assert housing.source == "rule" and housing.cells > 0
    per_cell = max(dry_run.RULE_MIN_CELL_S, dry_run.RULE_S_PER_ROW * dry_run._rows("housing"))
    assert housing.cpu_s == pytest.approx(per_cell * housing.cells)
    assert plan.wall_s == pytest.approx(plan.cpu_s / 2)


def test_recorded_times_from_the_committed_summary(tmp_path):
    item = get("lsokl2016:table9")
    # housing: two rows, 10 cells at 1 s and 30 cells at 3 s -> 2.5 s per cell
    _write_summary(tmp_path / item.folder, [{"dataset": "housing", "time_s": 1.0, "n_ok": 10},
                                            {"dataset": "housing", "time_s": 3.0, "n_ok": 30}])
    plan = dry_run.plan(item, tmp_path, jobs=4)
    housing = next(d for d in plan.datasets if d.name == "housing")
    assert housing.source == "summary"
    assert housing.cpu_s == pytest.approx(2.5 * housing.cells)
    assert next(d for d in plan.datasets if d.name == "mg").source == "rule"
    # absent data is not counted in the time
    assert plan.cpu_s == pytest.approx(sum(d.cpu_s for d in plan.datasets if d.present))


def test_absent_data_is_said_so(tmp_path, monkeypatch):
    monkeypatch.setenv("LSOKL_DATA_MIRROR", str(tmp_path))  # an empty mirror
    monkeypatch.setenv("LSOKL_DATA_DIR", str(tmp_path / "cache"))  # an empty cache
    assert dry_run.data_status("german").startswith(("built in", "absent"))
    status = dry_run.data_status("housing")
    assert status.startswith("absent") and "lsokl fetch housing" in status


def test_cli_dry_run_prints_the_plan_and_writes_nothing(tmp_path):
    from typer.testing import CliRunner

    from lsokl.cli.app import app

    result = CliRunner().invoke(app, ["reproduce", "lsokl2016:table9", "--dry-run", "--root", str(tmp_path),
                                      "--jobs", "2"])
    assert result.exit_code == 0, result.output
    assert "lsokl2016:table9 -> results/table9:" in result.output
    assert "cells" in result.output and "wall" in result.output and "housing" in result.output
    assert list(tmp_path.iterdir()) == []
