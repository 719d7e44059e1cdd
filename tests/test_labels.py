"""`labels: [8, 6]` in a config: a dataset's rows of these labels only (DSG Fig. 1(2)'s MNIST 8 vs 6).
Two labels are a binary task with the first one +1; more are classes 0..k-1 in the order given; a label
the file does not have is a one-line error naming the key."""
from __future__ import annotations

import bz2
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from lsokl.config import parse_config
from lsokl.data.dataset import Dataset
from lsokl.data.labels import select_labels
from lsokl.errors import ConfigError, DataError

REPO = Path(__file__).resolve().parents[1]


def _digits():
    """Six rows labelled 8, 6, 3, 6, 8, 1 (multi-class codes = the digits' positions in meta classes)."""
    raw = [8, 6, 3, 6, 8, 1]
    classes = [1, 3, 6, 8]
    y = np.array([classes.index(v) for v in raw])
    X = np.arange(12, dtype=float).reshape(6, 2)
    return Dataset("digits", X, y, "multiclass", {"labels": {"classes": classes}})


def test_two_labels_keep_their_rows_in_file_order_first_label_positive():
    ds = select_labels(_digits(), [8, 6])
    assert ds.task == "binary"
    np.testing.assert_array_equal(ds.X[:, 0], [0, 2, 6, 8])  # rows 0, 1, 3, 4
    np.testing.assert_array_equal(ds.y, [1, -1, -1, 1])  # 8 -> +1, 6 -> -1
    assert ds.meta["labels"]["classes"] == [6, 8]  # binary classes: [-1 label, +1 label]


def test_three_labels_are_classes_in_the_order_given():
    ds = select_labels(_digits(), [6, 1, 8])
    assert ds.task == "multiclass"
    np.testing.assert_array_equal(ds.X[:, 0], [0, 2, 6, 8, 10])
    np.testing.assert_array_equal(ds.y, [2, 0, 0, 2, 1])  # 8 -> 2, 6 -> 0, 1 -> 1


def test_unknown_label_is_one_line_naming_the_key_and_the_labels_there_are():
    with pytest.raises(DataError) as err:
        select_labels(_digits(), [8, 7], where="datasets.digits.labels")
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("datasets.digits.labels:")
    assert "7" in msg and "1, 3, 6, 8" in msg


CONFIG = """
name: t
permutations: 1
budgets: 5
defaults: {{sigma: 1}}
datasets:
  iris: {{labels: {labels}{extra}}}
algorithms:
  rbp: {{}}
"""


def _parse(labels, extra=""):
    return parse_config(yaml.safe_load(CONFIG.format(labels=labels, extra=extra)), "t.yaml")


def test_config_labels_make_the_task_and_enter_the_record_key():
    exp = _parse("[2, 0]")
    assert exp.datasets["iris"].labels == (2, 0) and exp.datasets["iris"].task == "binary"
    cell = exp.cells[0]
    assert cell.task == "binary" and cell.spec("x", "0")["labels"] == [2, 0]
    unfiltered = yaml.safe_load(CONFIG.format(labels="[0]", extra=""))
    unfiltered["datasets"]["iris"] = {}
    assert "labels" not in parse_config(unfiltered, "t.yaml").cells[0].spec("x", "0")  # earlier keys unchanged
    assert _parse("[0, 1, 2]").datasets["iris"].task == "multiclass"


@pytest.mark.parametrize("labels, extra, key", [
    ("[8]", "", "datasets.iris.labels"),
    ("8", "", "datasets.iris.labels"),
    ("[1, 1]", "", "datasets.iris.labels"),
    ("[1, true]", "", "datasets.iris.labels[1]"),
    ("[1, 2]", ", task: multiclass", "datasets.iris.task"),
])
def test_bad_labels_are_one_line_naming_the_key(labels, extra, key):
    with pytest.raises(ConfigError) as err:
        _parse(labels, extra)
    msg = str(err.value)
    assert key in msg and "\n" not in msg.strip()


def test_a_run_with_labels_trains_and_tests_on_those_rows_only(tmp_path):
    """iris (built-in, classes 0, 1, 2) as 2 vs 0 under the holdout protocol: 100 rows, binary."""
    from lsokl.cli import app
    from lsokl.results import ResultStore

    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: t\nprotocol: holdout\ntest_fraction: 0.3\npermutations: 1\n"
                   "defaults: {sigma: 1}\ndatasets:\n  iris: {labels: [2, 0]}\nalgorithms:\n  rbp: {budget: 5}\n")
    res = CliRunner().invoke(app, ["run", str(cfg), "--results", str(tmp_path / "r"), "-j", "1", "-q"])
    assert res.exit_code == 0, res.output
    (rec,) = ResultStore(tmp_path / "r").records()
    assert rec["status"] == "ok" and rec["task"] == "binary"
    assert rec["holdout"]["n_train"] + rec["holdout"]["n_test"] == 100


def test_unknown_label_in_a_run_is_one_line_naming_the_key(tmp_path):
    from lsokl.cli import app

    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: t\npermutations: 1\nbudgets: 5\ndefaults: {sigma: 1}\n"
                   "datasets:\n  iris: {labels: [2, 9]}\nalgorithms:\n  rbp: {}\n")
    res = CliRunner().invoke(app, ["run", str(cfg), "--results", str(tmp_path / "r"), "-j", "1", "-q"])
    assert res.exit_code != 0
    assert "datasets.iris.labels: iris has no label 9; its labels are 0, 1, 2" in " ".join(res.output.split())


def test_dsg_mnist_8v6_config_filters_8_and_6():
    from lsokl.config import load_config

    exp = load_config(REPO / "configs" / "dsg-mnist8v6.yaml")
    assert exp.datasets["mnist"].labels == (8, 6) and exp.datasets["mnist"].task == "binary"


def test_forest_config_runs_on_a_covtype_format_file(tmp_path, monkeypatch):
    """configs/dsg-forest.yaml is ready for LIBSVM's covtype.binary: on a small file of that format
    (labels 1/2, 54 index:value features in [0, 1], bz2) in a mirror, every method runs."""
    from lsokl.cli import app
    from lsokl.results import ResultStore

    rng = np.random.default_rng(0)
    lines = []
    for i in range(240):
        x = rng.random(54)
        label = 1 if x[0] + x[1] > 1 else 2
        lines.append(f"{label} " + " ".join(f"{j + 1}:{v:.4f}" for j, v in enumerate(x) if j < 10 or v > 0.5))
    mirror = tmp_path / "mirror"
    (mirror / "covtype").mkdir(parents=True)
    (mirror / "covtype" / "covtype.libsvm.binary.scale.bz2").write_bytes(bz2.compress(("\n".join(lines) + "\n").encode()))
    monkeypatch.setenv("LSOKL_DATA_MIRROR", str(mirror))
    monkeypatch.setenv("LSOKL_DATA_DIR", str(tmp_path / "cache"))
    # the registry declares covtype-binary's 581,012 rows: a copy of it declares the small file's
    registry = (REPO / "datasets.yaml").read_text()
    start = registry.index("- name: covtype-binary")
    entry = registry[start:registry.index("\n- name:", start + 1)]
    assert entry.count("n: 581012") == 1
    (tmp_path / "registry.yaml").write_text(registry.replace(entry, entry.replace("n: 581012", "n: 240")))
    monkeypatch.setenv("LSOKL_REGISTRY", str(tmp_path / "registry.yaml"))
    res = CliRunner().invoke(app, ["run", str(REPO / "configs" / "dsg-forest.yaml"), "--results",
                                   str(tmp_path / "r"), "-j", "1", "-q"])
    assert res.exit_code == 0, res.output
    recs = list(ResultStore(tmp_path / "r").records())
    assert {r["algorithm"] for r in recs} == {"dsg", "rpegasos", "rsdca", "npegasos", "nsdca"}
    assert all(r["status"] == "ok" and r["holdout"]["n_test"] == 48 for r in recs)
