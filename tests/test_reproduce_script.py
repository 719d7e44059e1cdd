"""scripts/reproduce.py: fetch, run and report in one process, with the commands' exit codes."""
from __future__ import annotations

from pathlib import Path

from test_reproduce_all import _module

REPO = Path(__file__).resolve().parents[1]


def test_commands_run_in_process_and_keep_their_exit_codes(tmp_path, capsys):
    mod = _module(REPO / "scripts" / "reproduce.py")
    assert mod._lsokl(["--help"]) == 0
    assert "Usage: lsokl" in capsys.readouterr().out
    missing = tmp_path / "absent.yaml"
    assert mod._lsokl(["run", str(missing)]) != 0
    assert mod._lsokl(["report", str(tmp_path / "no-results")]) == 2  # click's usage error


def test_a_table_is_run_and_reported(tmp_path):
    # the quickstart config (built-in data, seconds): records, the report and the headline file
    mod = _module(REPO / "scripts" / "reproduce.py")
    code = mod.main(["quickstart", "--config", str(REPO / "configs" / "quickstart.yaml"),
                     "--results", str(tmp_path / "qs"), "--paper", "lsokl2016:table5",
                     "--jobs", "1"])
    assert code == 0
    assert (tmp_path / "qs" / "report" / "table.md").exists()
    assert (tmp_path / "qs" / "quickstart.md").read_text() == (
        tmp_path / "qs" / "report" / "table.md").read_text()
