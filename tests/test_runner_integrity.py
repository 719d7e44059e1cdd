"""Runner integrity (issue 23, items 11 and 13-16): the resume command is the exact invocation, one run per
results folder, workers die with their parent, unreachable schedulers and undecodable files give one line,
a full disk loses nothing."""
from __future__ import annotations

import shlex
import textwrap

import pytest
from typer.testing import CliRunner

CONFIG = """\
name: resumable
task: binary
seed: 3
permutations: 3
budgets: 10
defaults: {sigma: 4}
datasets:
  breast_cancer: {max_samples: 120, scale: minmax}
  checkerboard: {max_samples: 150}
algorithms:
  perceptron: {}
  ogd: {eta: [0.2, 0.5]}
  fogd: {eta: 0.002}
search:
  algorithms:
    ogd: {eta: [2, 0.2]}
  permutations: 2
  seed: 8
"""


def _cfg(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(CONFIG)
    return p


def _keys(folder):
    return sorted(p.stem for p in (folder / "records").glob("*.json"))


def _run_cmd():
    import typer.main

    from lsokl.cli import app

    return typer.main.get_command(app).commands["run"]


# ----------------------------------------------------------------------------------------------- item 13
def test_the_resume_command_carries_every_option_of_run():
    """Every option of `lsokl run` set to a non-default value comes back, parsed again, with the same value
    (so an option added later is carried without touching the resume code)."""
    from lsokl.cli.experiments import RESUME_DROPS, resume_command

    cmd = _run_cmd()
    args = ["my config.yaml"]
    for p in cmd.params:
        if p.param_type_name == "argument" or p.name in RESUME_DROPS:
            continue
        name = next(o for o in p.opts if o.startswith("--"))
        if p.is_flag:
            args.append(name)
        elif p.multiple:
            args += [name, "x [a=1]", name, "y"]
        elif p.name == "backend":
            args += [name, "dask"]
        elif p.name == "memory_limit":
            args += [name, "1.25"]
        elif p.name in ("scheduler", "results"):
            args += [name, "some value"]
        else:  # the numbers (jobs, max-cells): a new option of another type makes the parse below fail
            args += [name, "7"]
    ctx = cmd.make_context("run", list(args))
    line = resume_command(ctx)
    assert line[:2] == ["lsokl", "run"]
    again = cmd.make_context("run", shlex.split(shlex.join(line))[2:])
    assert again.params == ctx.params
    assert len(ctx.params) - len(RESUME_DROPS) == sum(1 for p in cmd.params if p.name not in RESUME_DROPS)
    # defaults are left out: the shortest exact command
    bare = resume_command(cmd.make_context("run", ["c.yaml"]))
    assert bare == ["lsokl", "run", "c.yaml"]


def test_running_the_printed_resume_command_runs_the_same_cells_and_no_search(tmp_path, monkeypatch):
    """Ctrl-C in the middle of `lsokl run -d -a --jobs --no-search --memory-limit --max-cells --results`: the
    printed command, run as printed, finishes exactly the cells the uninterrupted run makes, and no search."""
    import lsokl.runner as runner
    from lsokl.cli import app

    cfg = _cfg(tmp_path)
    flags = ["-d", "checkerboard", "-a", "ogd", "-a", "fogd", "--jobs", "1", "--no-search", "--memory-limit", "8",
             "--max-cells", "5000", "-q"]
    whole = CliRunner().invoke(app, ["run", str(cfg), *flags, "--results", str(tmp_path / "whole")])
    assert whole.exit_code == 0, whole.output
    assert not (tmp_path / "whole" / "search").exists()
    expected = _keys(tmp_path / "whole")
    assert len(expected) == 9  # checkerboard x (ogd x 2 etas + fogd) x 3 permutations

    real = runner.run_experiment

    def interrupted_after_two(*args, on_record=None, **kwargs):
        seen = []

        def record(rec):
            on_record(rec)
            seen.append(rec)
            if len(seen) == 2:
                raise KeyboardInterrupt

        return real(*args, on_record=record, **kwargs)

    monkeypatch.setattr(runner, "run_experiment", interrupted_after_two)
    res = tmp_path / "res"
    first = CliRunner().invoke(app, ["run", str(cfg), *flags, "--results", str(res)])
    assert first.exit_code == 130, first.output
    saved = _keys(res)
    assert len(saved) == 2
    line = first.output.strip().splitlines()[-1].strip()
    argv = shlex.split(line)
    assert argv[:3] == ["lsokl", "run", str(cfg)]
    monkeypatch.setattr(runner, "run_experiment", real)

    ran = []
    monkeypatch.setattr(runner, "run_experiment",
                        lambda *a, on_record=None, **k: real(*a, on_record=lambda r: (ran.append(r["key"]),
                                                                                      on_record(r)), **k))
    second = CliRunner().invoke(app, argv[1:])
    assert second.exit_code == 0, second.output
    assert not (res / "search").exists(), "the resumed run started the search the original skipped"
    assert _keys(res) == expected
    assert len(ran) == 7 and not set(ran) & set(saved)


# ----------------------------------------------------------------------------------------------- item 14
SMALL = """\
name: small
permutations: 2
datasets: {checkerboard: {max_samples: 100}}
algorithms: {rbp: {budget: 10}}
"""


def _small(tmp_path):
    p = tmp_path / "small.yaml"
    p.write_text(SMALL)
    return p


def test_a_second_run_on_the_same_results_folder_says_who_holds_it(tmp_path):
    import subprocess
    import sys

    from lsokl.cli import app

    res = tmp_path / "res"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from lsokl.results.store import ResultStore, ResultsLock; "
         "ResultStore(sys.argv[1]).ensure(); ResultsLock(sys.argv[1]).acquire(); print('held', flush=True); "
         "time.sleep(120)", str(res)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        out = CliRunner(env={"COLUMNS": "300"}).invoke(app, ["run", str(_small(tmp_path)), "--results", str(res),
                                                             "-j", "1", "-q"])
        assert out.exit_code == 2, out.output
        assert f"results folder {res} is in use by another lsokl run (pid {holder.pid}" in out.output
        assert "Traceback" not in out.output and len(out.output.strip().splitlines()) == 1
        assert not list((res / "records").glob("*.json")), "the refused run wrote records"
    finally:
        holder.kill()
        holder.wait()
    # the holder died (kill -9): its lock is taken over, with a warning
    ok = CliRunner().invoke(app, ["run", str(_small(tmp_path)), "--results", str(res), "-j", "1", "-q"])
    assert ok.exit_code == 0, ok.output
    assert len(list((res / "records").glob("*.json"))) == 2


def test_a_stale_lock_of_a_dead_pid_is_taken_over_with_a_warning(tmp_path):
    import json
    import socket
    import subprocess
    import sys

    from lsokl.config import load_config
    from lsokl.results.store import LOCK_NAME
    from lsokl.runner import run_experiment

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    lock = tmp_path / "res" / "records" / LOCK_NAME
    lock.parent.mkdir(parents=True)
    lock.write_text(json.dumps({"pid": dead.pid, "host": socket.gethostname(), "command": "lsokl run x"}))
    with pytest.warns(UserWarning, match=f"taking over the lock left by a run that is no longer running "
                                         f"\\(pid {dead.pid}"):
        s = run_experiment(load_config(_small(tmp_path)), tmp_path / "res", jobs=1)
    assert s.ran["ok"] == 2
    assert not lock.exists(), "the lock is removed when the run ends"


def test_the_lock_is_reentrant_in_one_process_and_released(tmp_path):
    from lsokl.results.store import LOCK_NAME, ResultsLock

    with ResultsLock(tmp_path):
        with ResultsLock(tmp_path):  # the CLI's lock, then run_experiment's on the same folder
            pass
        assert (tmp_path / "records" / LOCK_NAME).exists()
    assert not (tmp_path / "records" / LOCK_NAME).exists()


# ----------------------------------------------------------------------------------------------- item 16
def test_an_unreachable_scheduler_is_one_line(tmp_path, monkeypatch):
    import socket

    pytest.importorskip("distributed")
    from lsokl.cli import app
    from lsokl.runner import backends

    monkeypatch.setattr(backends, "CONNECT_TIMEOUT", 2.0)
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for address in (f"tcp://127.0.0.1:{port}", "no-such-scheme://x"):
        res = CliRunner(env={"COLUMNS": "300"}).invoke(
            app, ["run", str(_small(tmp_path)), "--results", str(tmp_path / "r"), "--scheduler", address, "-q"])
        assert res.exit_code == 2, res.output
        lines = res.output.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in res.output, res.output
        assert lines[0].startswith(f"error: cannot reach the Dask scheduler at --scheduler {address}"), lines


def test_a_config_or_registry_that_is_not_utf8_is_one_line(tmp_path, monkeypatch):
    from lsokl.cli import app

    cfg = tmp_path / "latin1.yaml"
    cfg.write_bytes(SMALL.replace("name: small", "name: caf\xe9 # r\xe9sum\xe9").encode("latin-1"))
    res = CliRunner(env={"COLUMNS": "300"}).invoke(app, ["run", str(cfg), "--results", str(tmp_path / "r")])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert res.output.strip() == f"error: {cfg}: not UTF-8 text (byte 0xe9 at line 1, offset 9); save it as UTF-8"

    reg = tmp_path / "registry.yaml"
    reg.write_bytes(b"datasets:\n  - name: caf\xe9\n")
    monkeypatch.setenv("LSOKL_REGISTRY", str(reg))
    res = CliRunner(env={"COLUMNS": "300"}).invoke(app, ["run", str(_small(tmp_path)), "--results",
                                                         str(tmp_path / "r")])
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    assert res.output.strip() == (f"error: cannot read the dataset registry {reg}: not UTF-8 text (byte 0xe9 at "
                                  "line 2, offset 23); save it as UTF-8")


# ----------------------------------------------------------------------------------------------- item 11
def _no_partial_files(records):
    import json

    for p in records.iterdir():
        assert p.suffix == ".json" and not p.name.startswith("."), f"left behind: {p.name}"
        json.loads(p.read_text())  # complete


def test_a_full_disk_while_writing_records_is_one_error_and_nothing_half_written(tmp_path, monkeypatch):
    import errno
    import os

    from lsokl.config import load_config
    from lsokl.results import store
    from lsokl.results.store import DiskFullError
    from lsokl.runner import run_experiment

    exp = load_config(_small(tmp_path))
    real_fsync, calls = os.fsync, []

    def fsync(fd):  # the disk fills up at the second record: the bytes are written, the flush fails
        calls.append(fd)
        if len(calls) >= 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(store.os, "fsync", fsync)
    with pytest.raises(DiskFullError) as err:
        run_experiment(exp, tmp_path / "res", jobs=1)
    msg = str(err.value)
    assert msg.startswith(f"no space left on the disk of {tmp_path / 'res' / 'records'} (") and " free) " in msg
    assert "\n" not in msg
    records = tmp_path / "res" / "records"
    _no_partial_files(records)
    assert len(list(records.glob("*.json"))) == 1
    monkeypatch.setattr(store.os, "fsync", real_fsync)
    again = run_experiment(exp, tmp_path / "res", jobs=1)  # space again: the rest runs, nothing is redone
    assert again.skipped_ok == 1 and again.ran["ok"] == 1


def test_a_really_full_disk_stops_the_cli_with_one_line(tmp_path):
    """A 64 KiB tmpfs as the results folder (needs root; skipped otherwise)."""
    import os
    import subprocess

    from lsokl.cli import app

    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mnt = tmp_path / "small-disk"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        cfg = tmp_path / "many.yaml"
        cfg.write_text(SMALL.replace("permutations: 2", "permutations: 60"))
        res = CliRunner(env={"COLUMNS": "300"}).invoke(app, ["run", str(cfg), "--results", str(mnt), "-j", "1",
                                                             "-q"])
        assert res.exit_code == 2, res.output
        lines = res.output.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in res.output, res.output
        assert lines[0].startswith(f"error: no space left on the disk of {mnt}"), lines
        assert " free) to write " in lines[0]
        _no_partial_files(mnt / "records")
        saved = {p.name: p.read_bytes() for p in (mnt / "records").glob("*.json")}
        assert 0 < len(saved) < 60
        subprocess.run(["mount", "-o", "remount,size=4m", str(mnt)], check=True)
        res = CliRunner().invoke(app, ["run", str(cfg), "--results", str(mnt), "-j", "1", "-q"])
        assert res.exit_code == 0, res.output
        assert len(list((mnt / "records").glob("*.json"))) == 60
        assert all((mnt / "records" / name).read_bytes() == data for name, data in saved.items())
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


# ----------------------------------------------------------------------------------------------- item 15
@pytest.mark.timeout(240)
def test_loky_workers_exit_when_the_run_is_killed(tmp_path):
    """kill -9 of `lsokl run -j 2`: its loky workers are gone within seconds (loky alone keeps an idle worker
    for 300 s)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    psutil = pytest.importorskip("psutil")
    cfg = tmp_path / "slow.yaml"
    cfg.write_text("name: slow\npermutations: 200\ndatasets: {checkerboard: {max_samples: 3000}}\n"
                   "algorithms: {perceptron: {sigma: [1, 2]}}\n")
    res = tmp_path / "res"
    proc = subprocess.Popen([sys.executable, "-c", "from lsokl.cli import main; main()", "run", str(cfg),
                             "--results", str(res), "-j", "2", "-q"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    workers = []
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and proc.poll() is None:
            kids = [k for k in psutil.Process(proc.pid).children(recursive=True)
                    if "loky" in " ".join(k.cmdline()) and "resource_tracker" not in " ".join(k.cmdline())]
            if len(kids) >= 2 and len(list((res / "records").glob("*.json"))) >= 2:
                workers = kids
                break
            time.sleep(0.1)
        assert len(workers) >= 2, "no loky workers appeared"
        os.kill(proc.pid, signal.SIGKILL)  # the run only; its workers are left to notice
        proc.wait()
        gone_by = time.monotonic() + 10
        alive = workers
        while alive and time.monotonic() < gone_by:
            alive = [w for w in alive if w.is_running() and w.status() != psutil.STATUS_ZOMBIE]
            time.sleep(0.1)
        assert not alive, f"workers still running 10 s after their parent died: {[w.pid for w in alive]}"
    finally:
        for w in workers:  # the test's own leftovers, by pid
            try:
                w.kill()
            except psutil.Error:
                pass
        if proc.poll() is None:
            proc.kill()


def test_a_process_runs_two_grids_on_the_same_workers(tmp_path):
    """The parent-death hook must not break loky's reusable pool: two grids in one process, both complete."""
    from lsokl.config import load_config
    from lsokl.runner import run_experiment

    exp = load_config(_small(tmp_path))
    for out in ("a", "b"):
        s = run_experiment(exp, tmp_path / out, jobs=2)
        assert s.ran["ok"] == 2 and s.exit_code == 0
