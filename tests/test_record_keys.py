"""A cell's record key includes how its dataset's files are read: a changed parse setting of the
same file (e.g. parkinsons with 19 or 20 columns) runs the cells again instead of reusing stale
records, while an unchanged one still resumes."""
from __future__ import annotations

import os
import textwrap

import numpy as np
import pytest
import yaml

from lsokl.config import load_config
from lsokl.data import registry
from lsokl.runner import run_experiment

# 40 rows, columns a, b, c, target; c is noise the first reading keeps and the second drops
_rng = np.random.default_rng(3)
_ROWS = _rng.random((40, 4))
CSV = "a,b,c,target\n" + "".join(",".join(f"{v:.6f}" for v in r) + "\n" for r in _ROWS)

CONFIG = """
name: keys
task: regression
permutations: 2
seed: 1
datasets:
  toyreg: {}
algorithms:
  ogd: {eta: 0.1, sigma: 1}
"""


def _entry(parse: dict, d: int) -> dict:
    return {"name": "toyreg", "aliases": [], "task": "regression", "source": "uci", "description": "test set",
            "format": "csv", "parse": parse, "d": d, "storage": "dense",
            "preprocessing": {"features": "minmax", "target": "minmax"}, "paper": "none",
            "splits": {"train": {"n": 40, "files": [{"url": None, "sha256": None, "mirror": "toyreg/toy.csv",
                                                      "mirror_sha256": None, "derived_from": "test",
                                                      "compression": "none"}]}}}


@pytest.fixture
def setup(tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    (mirror / "toyreg").mkdir(parents=True)
    (mirror / "toyreg" / "toy.csv").write_text(CSV)
    import hashlib

    digest = hashlib.sha256(CSV.encode()).hexdigest()
    monkeypatch.setenv("LSOKL_DATA_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("LSOKL_DATA_MIRROR", str(mirror))
    reg = tmp_path / "datasets.yaml"
    monkeypatch.setenv("LSOKL_REGISTRY", str(reg))
    cfg = tmp_path / "keys.yaml"
    cfg.write_text(textwrap.dedent(CONFIG))
    stamp = [1_000_000_000]

    def write_registry(parse: dict, d: int):
        e = _entry(parse, d)
        e["splits"]["train"]["files"][0]["mirror_sha256"] = digest
        reg.write_text(yaml.safe_dump({"datasets": [e]}))
        stamp[0] += 10  # a distinct mtime, so the registry's (path, mtime) cache re-reads the file
        os.utime(reg, (stamp[0], stamp[0]))

    return cfg, tmp_path / "res", write_registry


def _run(cfg, res):
    ran = []
    summary = run_experiment(load_config(cfg), res, jobs=1, on_record=ran.append)
    return summary, ran


def test_a_changed_parse_setting_runs_the_cells_again(setup):
    cfg, res, write_registry = setup
    write_registry({"sep": ",", "header": True, "label": "target"}, d=3)
    summary, first = _run(cfg, res)
    assert summary.skipped_ok == 0 and len(first) == 2
    assert all(r["status"] == "ok" and r["n_features"] == 3 for r in first)

    # the same file, read without column c: the old records describe other data
    write_registry({"sep": ",", "header": True, "label": "target", "drop": ["c"]}, d=2)
    summary, second = _run(cfg, res)
    assert summary.skipped_ok == 0, "a record made from the old reading of the file was reused"
    assert len(second) == 2 and all(r["status"] == "ok" and r["n_features"] == 2 for r in second)
    assert not {r["key"] for r in first} & {r["key"] for r in second}
    assert {r["squared_loss"] for r in first} != {r["squared_loss"] for r in second}


def test_an_unchanged_reading_resumes(setup):
    cfg, res, write_registry = setup
    parse = {"sep": ",", "header": True, "label": "target"}
    write_registry(parse, d=3)
    _, first = _run(cfg, res)
    assert len(first) == 2
    summary, again = _run(cfg, res)
    assert summary.skipped_ok == 2 and again == []


def test_settings_hash_follows_parse_options_not_descriptions():
    e = _entry({"sep": ",", "label": "target"}, d=3)
    base = registry._spec(e).settings_hash
    assert registry._spec({**e, "description": "reworded", "aliases": ["x"]}).settings_hash == base
    assert registry._spec({**e, "parse": {"sep": ",", "label": "target", "drop": ["c"]}}).settings_hash != base
    assert registry._spec({**e, "preprocessing": {"features": "none", "target": "minmax"}}).settings_hash != base
