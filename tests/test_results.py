"""The results store: atomic, complete records; resume after a hard kill redoes nothing."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from lsokl.config import load_config
from lsokl.results import RECORD_KEYS, ResultStore, make_record, validate_record
from lsokl.runner import run_experiment

SPEC = {"dataset": "d", "dataset_sha256": "x", "task": "binary", "learner": "perceptron",
        "params": {"sigma": float("inf")}, "lsokl_version": "0", "permutation": 0,
        "permutation_source": "seed", "seed": 0, "max_samples": None, "scale": None,
        "n_checkpoints": None}


def test_records_are_complete_strict_json_and_atomic(tmp_path):
    store = ResultStore(tmp_path).ensure()
    rec = make_record(key="k1", spec=SPEC, status="failed", config_hash="c", config_name="n",
                      algorithm="perceptron", error={"type": "E", "message": "m", "traceback": "tb"})
    store.write(rec)
    text = (tmp_path / "records" / "k1.json").read_text()
    back = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))
    assert set(back) == set(RECORD_KEYS) and not validate_record(back)
    assert back["params"]["sigma"] == "inf"
    assert [p.name for p in (tmp_path / "records").iterdir()] == ["k1.json"]  # no temp files left
    # a truncated file (a crash of some other writer) is treated as absent, so the cell reruns
    (tmp_path / "records" / "k2.json").write_text(text[: len(text) // 2])
    assert store.read("k2") is None and [r["key"] for r in store] == ["k1"]
    with pytest.raises(ValueError):
        make_record(key="k", spec=SPEC, status="weird", config_hash="c", config_name="n", algorithm="a")


def test_ok_record_without_value_is_incomplete():
    rec = make_record(key="k", spec=SPEC, status="ok", config_hash="c", config_name="n", algorithm="a")
    assert "status ok but no value" in validate_record(rec)


KILL_GRID = """
name: killme
permutations: 30
datasets:
  checkerboard: {max_samples: 4000, defaults: {sigma: 0.1}}
algorithms:
  perceptron: {}
"""


@pytest.mark.timeout(120)
def test_resume_after_sigkill_redoes_no_finished_cell(tmp_path):
    cfg = tmp_path / "kill.yaml"
    cfg.write_text(textwrap.dedent(KILL_GRID))
    res = tmp_path / "res"
    records = res / "records"
    lsokl = Path(sys.executable).with_name("lsokl")
    proc = subprocess.Popen([str(lsokl), "run", str(cfg), "--results", str(res), "-j", "1", "-q"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if records.is_dir() and len(list(records.glob("*.json"))) >= 3:
                break
            if proc.poll() is not None:
                pytest.fail(f"run ended before it could be killed: {proc.stderr.read().decode()}")
            time.sleep(0.02)
        else:
            pytest.fail("no records appeared")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the run's own process group, nothing else
        proc.wait()

    before = {}
    for p in records.iterdir():
        assert p.suffix == ".json" or p.name.startswith("."), p  # only temp files may be partial
        if p.suffix == ".json":
            rec = json.loads(p.read_text())
            assert not validate_record(rec), p
            before[rec["key"]] = p.stat().st_mtime_ns
    exp = load_config(cfg)
    assert 3 <= len(before) < len(exp.cells), "the kill should land mid-grid"

    rerun_keys = []
    summary = run_experiment(exp, res, jobs=1, on_record=lambda r: rerun_keys.append(r["key"]))
    assert not set(rerun_keys) & set(before), "a finished cell was run again"
    assert summary.skipped_ok == len(before)
    assert len(rerun_keys) == len(exp.cells) - len(before)
    assert {p.stem: p.stat().st_mtime_ns for p in records.glob("*.json") if p.stem in before} == before
    assert len(ResultStore(res).records()) == len(exp.cells)


def test_record_versions_are_looked_up_once_per_process(monkeypatch):
    """importlib.metadata scans every installed distribution on each call (about 10 ms for the six
    packages, more than many whole cells): a record takes the versions found once per process."""
    from importlib import metadata

    from lsokl.results import record

    calls = []
    real = metadata.version
    monkeypatch.setattr(metadata, "version", lambda pkg: calls.append(pkg) or real(pkg))
    record._package_versions.cache_clear()
    first = record.versions()
    first["numpy"] = "changed by a caller"
    second = record.versions()
    assert len(calls) == 6 and second["numpy"] == real("numpy") and second["python"]
    record._package_versions.cache_clear()
