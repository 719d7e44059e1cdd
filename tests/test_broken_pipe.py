"""`lsokl ... | head`: a reader that closes the pipe early is not a failure (exit 0), whether the
command prints through rich or through click."""
from __future__ import annotations

import subprocess
import sys

import pytest

CODE = "import sys; from lsokl.cli import main; main(sys.argv[1:])"


@pytest.mark.parametrize("args", [["reproduce", "--list"], ["algorithms", "--format", "csv"]])
def test_closed_pipe_exits_0(args):
    p = subprocess.Popen([sys.executable, "-c", CODE, *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.stdout.close()  # the reader is gone before the first line
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 0, err


def test_a_real_failure_still_fails():
    p = subprocess.run([sys.executable, "-c", CODE, "reproduce", "no-such-item"], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 2 and "no-such-item" in p.stdout + p.stderr
