"""`make reproduce-all` (scripts/reproduce_all.py) and the benchmark page's sections."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _module(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_reproduce_all_finds_every_reproduction_target(tmp_path):
    mod = _module(REPO / "scripts" / "reproduce_all.py")
    makefile = tmp_path / "Makefile"
    makefile.write_text("reproduce-all: x\n\tpython a\nreproduce-table5: $(STAMP)\n\tpython b\n"
                        "other: y\nreproduce-new-paper:\n\tpython c\nreproduce-table5: more\n")
    assert mod.reproduction_targets(makefile) == ["reproduce-table5", "reproduce-new-paper"]
    targets = mod.reproduction_targets()  # the real Makefile
    assert "reproduce-table5" in targets and "reproduce-all" not in targets


def test_reproduce_all_runs_in_sequence_and_reports_failures(tmp_path, monkeypatch):
    mod = _module(REPO / "scripts" / "reproduce_all.py")
    calls = []

    def fake_call(cmd, cwd=None):
        calls.append(cmd[-1])
        return 2 if cmd[-1] == "bad" else 0

    monkeypatch.setattr(mod.subprocess, "call", fake_call)
    assert mod.main(["--only", "good", "bad", "last"]) == 1
    assert calls == ["good", "bad", "last"]  # a failure does not stop the others


def test_reproduce_all_summary_columns_line_up_for_long_target_names(monkeypatch, capsys):
    mod = _module(REPO / "scripts" / "reproduce_all.py")
    monkeypatch.setattr(mod.subprocess, "call", lambda cmd, cwd=None: 0)
    mod.main(["--only", "reproduce-bpegasosm-table1-large", "fig3"])
    summary = capsys.readouterr().out.split("reproduce-all summary")[1].splitlines()[1:]
    assert len(summary) == 3 and len({line.index("CPU") for line in summary}) == 1


def test_reproduce_all_dry_run_lists_targets_and_extras():
    out = subprocess.run([sys.executable, str(REPO / "scripts" / "reproduce_all.py"), "--dry-run", "fig3"],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == "reproduce-table5" and out[-1] == "fig3"


def test_benchmark_page_sections_are_replaced_in_place(tmp_path):
    page = _module(REPO / "benchmarks" / "page.py")
    path = tmp_path / "RESULTS.md"
    page.write_section("a", "## A\n\nfirst", path)
    page.write_section("b", "## B", path)
    page.write_section("a", "## A\n\nsecond", path)
    text = path.read_text()
    assert text.startswith("# lsokl benchmarks")
    assert "second" in text and "first" not in text
    assert text.index("## A") < text.index("## B")
