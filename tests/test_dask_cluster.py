"""A real Dask cluster: ``dask scheduler`` and two ``dask worker`` processes started from the command line on
127.0.0.1 (the README's "Clusters" commands), a config run through them by address, and one worker killed
while the run is under way: the same records as a run in one process, none lost and none written twice (the
scheduler runs the killed worker's cells again on the other worker; the main process writes each record once,
as its result arrives)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from lsokl.config import load_config
from lsokl.results import ResultStore
from lsokl.runner import run_experiment

from test_data_fetch import entry, sha  # noqa: F401
from test_runner import comparable

CONFIG = """\
name: cluster
permutations: 4
budgets: 50
defaults: {sigma: 2}
datasets:
  toy: {}
algorithms:
  rbp: {}
  perceptron: {}
  projectron: {}
"""


def _dask(*args: str, env: dict, log: Path) -> subprocess.Popen:
    exe = Path(sys.executable).with_name("dask")
    return subprocess.Popen([str(exe), *args], env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)


@pytest.mark.timeout(300)
def test_a_config_runs_on_a_command_line_cluster_and_survives_a_killed_worker(tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed")
    if not Path(sys.executable).with_name("dask").exists():
        pytest.skip("the `dask` command is not installed beside this Python")
    rng = np.random.default_rng(1)
    X = rng.normal(size=(1500, 4)).round(3)
    y = np.where(X[:, 0] * X[:, 1] > 0, 1, -1)
    text = "".join(f"{int(t):+d} " + " ".join(f"{j + 1}:{v}" for j, v in enumerate(row)) + "\n"
                   for t, row in zip(y, X)).encode()
    mirror = tmp_path / "mirror"
    (mirror / "toy").mkdir(parents=True)
    (mirror / "toy" / "toy.txt").write_bytes(text)
    reg = tmp_path / "registry.yaml"
    reg.write_text(yaml.safe_dump({"datasets": [entry(url="http://127.0.0.1:9/toy.txt", sha256=sha(text), n=1500,
                                                      d=4)]}))
    env = {"LSOKL_REGISTRY": str(reg), "LSOKL_DATA_MIRROR": str(mirror)}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("LSOKL_DATA_DIR", str(tmp_path / "cache-main"))
    cfg = tmp_path / "c.yaml"
    cfg.write_text(textwrap.dedent(CONFIG))
    exp = load_config(cfg)
    run_experiment(exp, tmp_path / "one", jobs=1)
    alone = comparable(ResultStore(tmp_path / "one"))
    assert len(alone) == 12 and all(r["status"] == "ok" for r in alone.values())

    wenv = {**os.environ, **env, "LSOKL_DATA_DIR": str(tmp_path / "cache-workers"), "OMP_NUM_THREADS": "1"}
    sfile = tmp_path / "scheduler.json"
    procs = {"scheduler": _dask("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                "--scheduler-file", str(sfile), env=wenv, log=tmp_path / "scheduler.log")}
    try:
        for _ in range(600):
            if sfile.exists() and sfile.stat().st_size:
                break
            time.sleep(0.1)
        address = json.loads(sfile.read_text())["address"]
        for name in ("w1", "w2"):
            procs[name] = _dask("worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard", "--name", name,
                                "--host", "127.0.0.1", env=wenv, log=tmp_path / f"{name}.log")
        with distributed.Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=120)
        killed = {}

        def kill_w1(record):  # after the first record: the other 11 cells are queued or running
            if not killed:
                procs["w1"].kill()  # SIGKILL: no goodbye to the scheduler
                procs["w1"].wait()
                killed["after"] = record["key"]

        run_experiment(exp, tmp_path / "cluster", backend="dask", scheduler=address, on_record=kill_w1)
        assert killed and procs["w1"].returncode is not None
        records = list(ResultStore(tmp_path / "cluster"))
        assert len(records) == len({r["key"] for r in records}) == 12  # none lost, none doubled
        assert comparable(records) == alone  # the same records as one process
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.terminate()
        for p in procs.values():
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
