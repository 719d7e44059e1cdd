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
