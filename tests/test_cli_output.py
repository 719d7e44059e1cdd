"""The command line as a new user meets it (issue 25, item 5): ``lsokl --version``, and tables and
summaries that are never cut when the output is not a terminal (a pipe, a log), or plain CSV/TSV
rows with ``--format``."""
from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

from typer.testing import CliRunner

from lsokl.cli import app

REPO = Path(__file__).resolve().parents[1]


def test_version():
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"lsokl {version('lsokl')}"


def test_tables_in_a_pipe_are_never_cut():
    """A subprocess writing to a pipe (no terminal): the widest cells stay whole, no ellipsis,
    even when the shell that started it is a narrow terminal."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    out = subprocess.run([sys.executable, "-c", "from lsokl.cli import main; main()", "algorithms"],
                         capture_output=True, text=True, cwd=REPO, env=env, timeout=300).stdout
    assert "…" not in out
    assert ("C=1.0, cache_size=200.0, clusters=64, kmeans_iter=10, kmeans_sample=5000, "
            "random_state=None, sigma='scale', time_limit=None, tol=0.01") in out
    # the kernel convention and the "scale" rule, on one unwrapped line
    assert "sigma = sqrt(n_features * X.var() / 2), computed from the data of the first fit" in out


def test_dry_run_grid_and_summary_lines_are_whole():
    """The report that started this: 1366-cell totals printed as "13…" in a log."""
    result = CliRunner().invoke(app, ["run", str(REPO / "configs" / "table5.yaml"), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "…" not in result.output
    assert "1732" in result.output  # 1366 cells, + ijcnn1 and kddcup99-full (absent offline)
    assert any(line.lstrip().startswith("largest memory estimate:") and line.rstrip().endswith(")")
               for line in result.output.splitlines())


def test_tsv_and_csv_formats_are_plain_rows():
    result = CliRunner().invoke(app, ["algorithms", "--format", "tsv"])
    assert result.exit_code == 0
    rows = list(csv.reader(io.StringIO(result.output), delimiter="\t"))
    assert rows[0] == ["task", "name", "parameters (defaults)"]
    assert ["binary", "fogd"] == rows[[r[:2] for r in rows].index(["binary", "fogd"])][:2]
    assert all(len(r) == 3 for r in rows)
    result = CliRunner().invoke(app, ["datasets", "--format", "csv"])
    assert result.exit_code == 0
    rows = list(csv.reader(io.StringIO(result.output)))
    assert rows[0][:3] == ["name", "aliases", "task"]
    assert "[green]" not in result.output and "[dim]" not in result.output  # markup dropped


def test_unknown_format_is_one_clear_error():
    result = CliRunner().invoke(app, ["algorithms", "--format", "tvs"])
    assert result.exit_code == 2
    assert "unknown format 'tvs'" in result.output and "tsv" in result.output


def test_help_documents_the_kernel_and_the_scale_rule():
    for args in (["--help"], ["algorithms", "--help"]):
        text = " ".join(CliRunner().invoke(app, args).output.split())
        assert "exp(-||x - x'||^2 / (2 sigma^2))" in text
        assert "sqrt(n_features * X.var() / 2)" in text and "sigma_" in text
