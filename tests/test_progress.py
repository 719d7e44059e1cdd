"""Progress where output is a log (not a terminal), and what Ctrl-C says."""
from __future__ import annotations

import bz2
import io
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from typer.testing import CliRunner

from lsokl.progress import CellProgress

from test_data_fetch import TRAIN, entry, own_cache, put, server, use_registry  # noqa: F401 (fixtures)

LSOKL = [sys.executable, "-c", "from lsokl.cli import main; main()"]


def test_cell_progress_prints_lines_while_nothing_finishes_and_at_the_end():
    out = io.StringIO()
    bar = CellProgress(out=out, every=0.05)
    bar.start(3)
    time.sleep(0.3)  # a slow first cell: lines keep coming
    bar.advance({"status": "ok"})
    bar.advance({"status": "failed", "dataset": "german", "algorithm": "fogd", "permutation": 2,
                 "error": {"type": "ValueError", "message": "bad"}})
    bar.stop()
    lines = out.getvalue().splitlines()
    assert lines[0] == "cells: 3 to run"
    assert sum(line.startswith("cells: 0/3 done (0%), 0 failed, elapsed") for line in lines) >= 2
    assert "failed german fogd perm 2 ValueError: bad" in lines
    assert lines[-1].startswith("cells: 2/3 done (67%), 1 failed, elapsed 0:00:00, eta 0:00:00")


def test_a_second_stage_counts_afresh_and_keeps_printing():
    """A step-size search's refinement (and then the table) reuse the progress of its grid stage."""
    out = io.StringIO()
    bar = CellProgress(out=out, every=0.05)
    bar.start(5)
    for _ in range(5):
        bar.advance({"status": "ok"})
    bar.stop()
    n = len(out.getvalue().splitlines())
    bar.start(2)
    time.sleep(0.3)  # the second stage's periodic lines
    bar.advance({"status": "ok"})
    bar.stop()
    lines = out.getvalue().splitlines()[n:]
    assert lines[0] == "cells: 2 to run"
    assert sum(line.startswith("cells: 0/2 done (0%), 0 failed") for line in lines) >= 2
    assert lines[-1].startswith("cells: 1/2 done (50%), 0 failed")


def _config(tmp_path: Path, permutations: int, samples: int) -> Path:
    p = tmp_path / "slow.yaml"
    p.write_text(textwrap.dedent(f"""\
        name: slow
        permutations: {permutations}
        datasets: {{checkerboard: {{max_samples: {samples}}}}}
        algorithms: {{ogd: {{sigma: [1, 2]}}}}
        """))
    return p


def test_run_with_output_to_a_pipe_prints_progress_lines(tmp_path):
    cfg = _config(tmp_path, 3, 300)
    env = {**os.environ, "LSOKL_PROGRESS_INTERVAL": "0.2", "COLUMNS": "200"}
    res = subprocess.run([*LSOKL, "run", str(cfg), "--results", str(tmp_path / "res"), "-j", "1"],
                         capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    lines = res.stdout.splitlines()
    assert "cells: 6 to run" in lines
    assert any(line.startswith("cells: 6/6 done (100%), 0 failed, elapsed ") for line in lines), res.stdout
    assert "\x1b[" not in res.stdout  # no terminal control codes in a log


def test_sigint_says_what_is_saved_and_how_to_resume(tmp_path):
    cfg = _config(tmp_path, 300, 4000)
    results = tmp_path / "res"
    env = {**os.environ, "LSOKL_PROGRESS_INTERVAL": "1", "COLUMNS": "200"}
    # The child must receive Ctrl-C as a terminal delivers it: a test run started in the
    # background of a non-interactive shell has SIGINT ignored, which a child inherits, and the
    # run would then finish all 600 cells instead of stopping.
    proc = subprocess.Popen([*LSOKL, "run", str(cfg), "--results", str(results), "-j", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=tmp_path,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.time() + 240
        while len(list((results / "records").glob("*.json"))) < 3 and time.time() < deadline:
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, out
    saved = len(list((results / "records").glob("*.json")))
    assert 3 <= saved < 600
    assert f"{saved} cell records are saved in {results / 'records'}" in out, out
    assert "Traceback" not in out
    resume = out.strip().splitlines()[-1].strip()
    assert resume == f"lsokl run {cfg} --jobs 1 --results {results}"


def test_fetch_from_a_mirror_shows_bytes_and_rows(tmp_path, use_registry, own_cache):
    from lsokl.cli import app

    mirror = tmp_path / "mirror"
    put(mirror, "toy/toy.bz2", bz2.compress(TRAIN.encode()))
    use_registry(entry(url="http://127.0.0.1:9/x", sha256=None, mirror="toy/toy.bz2", compression="bz2"))
    res = CliRunner(env={"COLUMNS": "300"}).invoke(app, ["fetch", "toy", "--mirror", str(mirror)])
    assert res.exit_code == 0, res.output
    assert f"toy: verifying {mirror / 'toy' / 'toy.bz2'} (" in res.output and " B)" in res.output
    assert "toy: train: decompressing" in res.output and "(bz2)" in res.output
    assert "toy: train: parsing" in res.output
    assert "toy: train: parsed 4 rows x 3 features in" in res.output


def test_download_to_a_log_prints_bytes(server, use_registry, capsys):
    from lsokl.data.fetch import fetch

    base, root, _ = server
    put(root, "toy/toy.txt", TRAIN)
    use_registry(entry(url=f"{base}/toy/toy.txt", sha256=None))
    fetch("toy", retries=0, progress=True)
    err = capsys.readouterr().err
    assert f"toy: toy.txt: {len(TRAIN)} B of {len(TRAIN)} B downloaded" in err, err
    assert "toy: train: parsed 4 rows x 3 features" in err
