"""BPegasosM's synthetic rows at the paper's n (2M waveform, 10M checkerboard): compared in level like the
full-size sets, PegasosM's time line ends at its stop, the long items are left out of a paper's and `--all`'s
items, and `lsokl reproduce ITEM --dry-run` says what runs and how long it last took."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from lsokl import papers
from lsokl.config import load_config

REPO = Path(__file__).resolve().parents[1]


def _row(ds, algo, B, n, acc):
    return {"dataset": ds, "label": algo, "algo": algo, "by": "grid", "B": B, "sigma": 1.0, "rep": 0, "status": "ok",
            "acc": acc, "time_s": 1.0, "test_time_s": 0.1, "support": B or 10, "n_train": n, "steps": n, "curve": None}


def test_synthetic_rows_are_compared_in_level_at_the_paper_n_only():
    from lsokl.papers.bpegasosm2010 import report as rb

    # the tolerance rule with one repetition: 2 published std + half the last printed digit (0.05)
    rows = [_row("waveform", "bpm-mrg", 100, 2_000_000, 85.0),  # paper 85.9 +- 0.6: 0.9 within 1.25
            _row("waveform", "bpm-rand", 100, 2_000_000, 75.0),  # paper 79.1 +- 1.1: 4.1 outside 2.25
            _row("waveform", "bpm-mrg", 100, 1_000_000, 85.0),  # reduced n: judged by ordering, no verdict
            _row("checkerboard", "bpm-mrg", 100, 10_000_000, 99.4),  # paper 99.5 +- 0.1: 0.1 within 0.25
            _row("checkerboard", "bpm-proj", 100, 10_000_000, 99.0)]  # paper 99.5 +- 0.1: 0.5 outside 0.25
    table = rb.attach_paper(rb.summarise(pd.DataFrame(rows))).set_index(["dataset", "algo", "n_train"])
    assert table.loc[("waveform", "bpm-mrg", 2_000_000), "within"] is True
    assert table.loc[("waveform", "bpm-rand", 2_000_000), "within"] is False
    assert pd.isna(table.loc[("waveform", "bpm-mrg", 1_000_000), "within"])
    assert table.loc[("checkerboard", "bpm-mrg", 10_000_000), "within"] is True
    assert table.loc[("checkerboard", "bpm-proj", 10_000_000), "within"] is False


def test_paper_n_score_counts_cells_and_checks_the_ordering(tmp_path):
    from lsokl.papers.bpegasosm2010 import claims

    assert claims.paper_n(tmp_path).note.startswith("not run yet")
    pd.DataFrame({"dataset": ["waveform"] * 4, "algo": ["bpm-proj", "bpm-mrg", "bpm-rand", "bpm-smal"],
                  "B": [100] * 4, "n_train": [2e6] * 4, "test_best": [86.0, 85.0, 75.0, 80.0],
                  "paper": [85.0, 85.9, 79.1, 79.1], "paper_std": [0.4, 0.6, 1.1, 2.9],
                  "within": [True, True, True, True]}).to_csv(tmp_path / "table1.csv", index=False)
    s = claims.paper_n(tmp_path)  # recomputed from the values, whatever the table's `within` says
    # rule (bands 0.85, 1.25, 2.25, 5.85): PROJ +1.0 out, MRG -0.9 in, RAND -4.1 out, SMAL +0.9 in;
    # strict (2 std: 0.8, 1.2, 2.2, 5.8): the same two
    assert (s.declared, s.declared_of, s.strict, s.strict_of) == (2, 4, 2, 4)
    assert s.claim is True and s.claim_detail == "1/1"  # min(PROJ, MRG) 85 > max(RAND, SMAL) 80


def test_a_stopped_pegasos_line_ends_at_its_stop(tmp_path, monkeypatch):
    """PegasosM stopped at max_support after 1,500 of 10,000 points: its time line has the cuts before the
    stop and the stop, not flat points after it; a budgeted line keeps every cut and the end."""
    import lsokl.results
    from lsokl.papers.bpegasosm2010.report import time_vs_length_lines

    recs = [{"status": "ok", "algorithm": algo, "params": params, "support_size": support,
             "holdout": {"n_train": 10000, "steps": steps, "train_time_s": 3.0,
                         "test_curve": {"n": [1000, 2000, 5000], "train_time_s": [1.0, 2.5, 2.6]}}}
            for algo, params, steps, support in (("pegasos", {"max_support": 50}, 1500, 50),
                                                 ("bpm-mrg", {"budget": 5}, 10000, 5))]
    monkeypatch.setattr(lsokl.results, "ResultStore", lambda root: type("S", (), {"records": lambda self: recs})())
    lines = time_vs_length_lines(tmp_path)
    n, t, _ = lines["pegasos (stops at 50 SVs)"]
    np.testing.assert_array_equal(n, [1000, 1500])
    np.testing.assert_array_equal(t, [1.0, 3.0])
    n, t, _ = lines["bpm-mrg B=5"]
    np.testing.assert_array_equal(n, [1000, 2000, 5000, 10000])


def test_paper_n_items_run_the_paper_n_and_are_left_out_of_the_paper_and_all():
    from lsokl.papers.registry import is_long

    wave, board = papers.get("bpegasosm2010:table1-waveform"), papers.get("bpegasosm2010:table1-checkerboard")
    assert {d.provenance for d in wave.datasets + board.datasets} == {"same"}
    for item, ds, n in ((wave, "waveform", 2_000_000), (board, "checkerboard", 10_000_000)):
        budgets = set()
        for name in item.configs:
            exp = load_config(REPO / "configs" / f"{name}.yaml")
            assert exp.datasets[ds].draws["n_train"] == n
            budgets |= {c.param_dict.get("budget") for c in exp.cells}
        assert budgets == {None, 100, 500}  # PegasosM and both budgets of Table 1
    assert is_long(wave) and is_long(board)
    chosen = {i.id for i in papers.select(["bpegasosm2010"])}
    assert "bpegasosm2010:table1" in chosen and not chosen & {wave.id, board.id}
    assert {i.id for i in papers.select([wave.id])} == {wave.id}  # named, it runs


def test_dry_run_lists_cells_data_memory_and_the_last_run_time(tmp_path):
    from typer.testing import CliRunner

    from lsokl.cli import app

    item = papers.get("bpegasosm2010:table1-checkerboard")
    res = CliRunner().invoke(app, ["reproduce", item.id, "--dry-run", "--root", str(tmp_path)])
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert "bpegasosm-checkerboard-10m: 5 cells (checkerboard 5)" in out  # B = 100 and PegasosM
    assert "bpegasosm-checkerboard-10m-b500: 4 cells (checkerboard 4)" in out
    assert "10,000,000 training" in out and "memory estimate" in out
    assert "no recorded run yet" in out and not (tmp_path / "results").exists()  # nothing run or written
    folder = tmp_path / item.folder
    folder.mkdir(parents=True)
    (folder / "run-time.json").write_text(json.dumps({"cells": 9, "wall_s": 1830.0, "cpu_s": 905.0,
                                                      "when": "x", "load_before": "1.0", "cpus": 2}))
    res = CliRunner().invoke(app, ["reproduce", item.id, "--dry-run", "--root", str(tmp_path)])
    assert "last run: 9 cells in 30m 30s wall, 15m 05s CPU" in " ".join(res.output.split())


def test_a_redraw_keeps_the_long_runs_own_time(tmp_path, monkeypatch):
    """`--redraw` runs nothing: the run-time.json the long run wrote (what `--dry-run` reports) stays."""
    from lsokl.papers import reproduce as rep
    from lsokl.papers.bpegasosm2010 import report as rb

    monkeypatch.setattr(rep, "_run", lambda *a, **k: 0)
    monkeypatch.setattr(rb, "report", lambda folder: None)
    monkeypatch.setattr(rb, "time_vs_length", lambda folder: None)
    item = papers.get("bpegasosm2010:table1-waveform")
    kept = json.dumps({"cells": 9, "wall_s": 3312.6, "cpu_s": 1245.5})
    (tmp_path / "run-time.json").write_text(kept)
    rep.bpegasosm(item, tmp_path, {"redraw": True}, echo=lambda m: None)
    assert (tmp_path / "run-time.json").read_text() == kept
    rep.bpegasosm(item, tmp_path, {}, echo=lambda m: None)  # a run writes its own time
    assert json.loads((tmp_path / "run-time.json").read_text())["wall_s"] < 60
