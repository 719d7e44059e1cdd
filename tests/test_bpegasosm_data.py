"""The data of BPegasosM Table 1: USPS 7291/2007, LETTER in UCI order 16000/4000, and covertype,
which is not in the offline mirror but must fetch for a user with a network (a local server here)."""
from __future__ import annotations

import bz2

import numpy as np
import pandas as pd
import pytest
import yaml

from lsokl.data import load
from lsokl.data.fetch import fetch
from lsokl.data.registry import REGISTRY_PATH
from tests.test_data_fetch import put, server  # noqa: F401  (the 127.0.0.1 HTTP server fixture)


def test_letter_uci_is_the_uci_split_in_record_order(shared_data, monkeypatch):
    monkeypatch.setenv("LSOKL_DATA_MIRROR", str(shared_data))
    train, test = load("letter-16k"), load("letter-uci", split="test")
    assert train.X.shape == (16000, 16) and test.X.shape == (4000, 16)
    raw = pd.read_csv(shared_data / "debian-rda" / "LetterRecognition.csv")
    np.testing.assert_array_equal(train.X, raw.iloc[:16000, 1:].to_numpy(float))
    np.testing.assert_array_equal(test.X, raw.iloc[16000:, 1:].to_numpy(float))
    letters = np.array(sorted(raw["lettr"].unique()))
    assert letters[test.y].tolist() == raw["lettr"].iloc[16000:].tolist()  # A..Z -> 0..25 in both splits
    assert raw["lettr"].iloc[0] == "T" and train.X[0].tolist()[:4] == [2, 8, 3, 5]  # the UCI file's first record


def test_usps_is_7291_plus_2007(shared_data, monkeypatch):
    monkeypatch.setenv("LSOKL_DATA_MIRROR", str(shared_data))
    tr, te = load("usps"), load("usps", split="test")
    assert tr.X.shape == (7291, 256) and te.X.shape == (2007, 256)
    assert set(np.unique(tr.y)) == set(range(10)) == set(np.unique(te.y))


def test_covertype_fetches_from_a_server(server, tmp_path, monkeypatch):  # noqa: F811
    """The registry's covtype entry, pointed at 127.0.0.1 with a small file of the same format."""
    base, root, log = server
    rng = np.random.default_rng(0)
    lines = []
    for i in range(50):
        feats = " ".join(f"{j + 1}:{v:.3f}" for j, v in enumerate(rng.random(54)) if v > 0.5)
        lines.append(f"{1 + i % 7} {feats}")
    put(root, "covtype.scale.bz2", bz2.compress(("\n".join(lines) + "\n").encode()))
    entries = yaml.safe_load(REGISTRY_PATH.read_text())["datasets"]
    cov = next(e for e in entries if e["name"] == "covtype")
    cov["splits"]["train"]["n"] = 50
    cov["splits"]["train"]["files"][0]["url"] = f"{base}/covtype.scale.bz2"
    reg = tmp_path / "reg.yaml"
    reg.write_text(yaml.safe_dump({"datasets": [cov]}))
    monkeypatch.setenv("LSOKL_REGISTRY", str(reg))
    monkeypatch.delenv("LSOKL_DATA_MIRROR", raising=False)
    fetch("covtype", retries=0, progress=False)
    ds = load("covertype")
    assert ds.X.shape == (50, 54) and ds.task == "multiclass" and set(np.unique(ds.y)) == set(range(7))
    assert log == ["/covtype.scale.bz2"]


def test_covertype_missing_offline_is_reported_not_fatal(tmp_path, monkeypatch):
    """Without the file, a holdout run lists covertype in missing.json and runs the rest."""
    import textwrap

    from lsokl.config import load_config
    from lsokl.results import ResultStore
    from lsokl.runner import run_experiment

    monkeypatch.setenv("LSOKL_DATA_MIRROR", str(tmp_path / "empty-mirror"))
    (tmp_path / "empty-mirror").mkdir()
    cfg = tmp_path / "c.yaml"
    cfg.write_text(textwrap.dedent("""
        protocol: holdout
        task: multiclass
        permutations: 1
        test_fraction: 0.2
        datasets: [covtype, iris]
        algorithms: {bpegasos: {budget: 10, sigma: 1.0}}
        """))
    s = run_experiment(load_config(cfg), tmp_path / "res", jobs=1)
    assert "covtype" in s.missing and s.ran["ok"] == 1
    assert "covtype" in (tmp_path / "res" / "missing.json").read_text()
    assert [r["dataset"] for r in ResultStore(tmp_path / "res")] == ["iris"]
