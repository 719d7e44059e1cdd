"""Config bombs and hopeless splits refused at load time with one line (issue 23 items 7-10)."""
from __future__ import annotations

import textwrap
import time

import pytest

from lsokl.config import load_config
from lsokl.errors import ConfigError

BASE = """
name: t
task: binary
permutations: 1
datasets:
  breast_cancer: {}
algorithms:
  perceptron: {}
"""


def _write(tmp_path, text, name="c.yaml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def _alias_bomb(levels=9):
    lines = ['  a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        refs = ",".join([f"*a{i - 1}"] * 9)
        lines.append(f"  a{i}: &a{i} [{refs}]")
    return "description:\n" + "\n".join(lines) + "\n"


def test_a_yaml_alias_bomb_is_refused_at_load_in_one_line(tmp_path):
    bomb = _alias_bomb()
    assert len(bomb) < 600  # ~9**9 = 387M strings once expanded
    p = _write(tmp_path, BASE + bomb)
    t0 = time.perf_counter()
    with pytest.raises(ConfigError) as err:
        load_config(p)
    assert time.perf_counter() - t0 < 5
    msg = str(err.value)
    assert "\n" not in msg and "alias" in msg and "c.yaml" in msg and "nodes" in msg


def test_a_recursive_alias_is_refused(tmp_path):
    p = _write(tmp_path, BASE + "description: &d [note, *d]\n")  # was: a traceback when hashing
    with pytest.raises(ConfigError) as err:
        load_config(p)
    assert "infinite document" in str(err.value) and "\n" not in str(err.value)


def test_ordinary_anchors_and_merge_keys_still_load(tmp_path):
    p = _write(tmp_path, """
        name: t
        task: binary
        permutations: 1
        datasets:
          breast_cancer: {}
        algorithms:
          ogd: &common {eta: 0.2, sigma: 4}
          fogd: {<<: *common, eta: 0.02}
        """)
    exp = load_config(p)
    assert {c.algorithm: c.param_dict["eta"] for c in exp.cells} == {"ogd": 0.2, "fogd": 0.02}


APPROX = """
name: approx
seed: 2
permutations: 1
protocol: approximation
rows: full
datasets:
  digits: {scale: minmax, max_samples: 300}
defaults: {rank: 8, gamma: 0.05}
algorithms:
"""


@pytest.mark.parametrize("entry, key", [
    ("knys: {kmeans_iterations: 1000000000}", "algorithms.knys.kmeans_iterations"),
    ("rnys: {power_iterations: 1000000000}", "algorithms.rnys.power_iterations"),
])
def test_absurd_iteration_counts_are_refused_at_config_time(tmp_path, entry, key):
    with pytest.raises(ConfigError) as err:
        load_config(_write(tmp_path, APPROX + f"  {entry}\n"))
    assert key in str(err.value) and "\n" not in str(err.value)


def test_knys_kmeans_stops_at_a_fixed_point(monkeypatch):
    """eff_kmeans used to run every requested Lloyd step; now it stops when a step changes no
    centre, with exactly the centres of the full count."""
    import numpy as np

    from lsokl.approx import clustering

    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(c, 0.1, size=(40, 2)) for c in (0.0, 3.0, 6.0)])
    full = clustering.eff_kmeans(X, 6, np.random.default_rng(1), iterations=60)
    calls = []
    real = clustering.nearest_centre

    def counting(*a, **k):
        calls.append(1)
        if len(calls) > 100:
            raise AssertionError("eff_kmeans did not stop at convergence")
        return real(*a, **k)

    monkeypatch.setattr(clustering, "nearest_centre", counting)
    fast = clustering.eff_kmeans(X, 6, np.random.default_rng(1), iterations=10**9)
    assert len(calls) < 60
    np.testing.assert_array_equal(fast, full)


HOLDOUT = """
name: ho
seed: 1
permutations: 1
protocol: holdout
datasets:
  breast_cancer: {DS}
algorithms:
  perceptron: {}
  ogd: {OGD}
"""


def _holdout(tmp_path, top="", ds="{test_fraction: 0.2}", ogd="{eta: 0.2}"):
    return _write(tmp_path, HOLDOUT.replace("{DS}", ds).replace("{OGD}", ogd) + top)


@pytest.mark.parametrize("top, ds, ogd, key, sizes", [
    ("", "{test_fraction: 0.0001}", "{}", "datasets.breast_cancer.test_fraction", "568 training and 1 test"),
    ("test_fraction: 0.9999\n", "{}", "{}", "test_fraction", "0 training and 569 test"),
    ("", "{test_fraction: 0.2}", "{select: {eta: [0.2, 2], by: validation, validation_fraction: 0.0001}}",
     "algorithms.ogd.select.validation_fraction", "454 training and 1 validation"),
    ("", "{test_fraction: 0.2}", "{select: {eta: [0.2, 2], by: cv, folds: 1000}}",
     "algorithms.ogd.select.folds", "1,000 folds of 455 training rows"),
    ("", "{test_fraction: 0.2, max_samples: 100}", "{select: {eta: [0.2, 2], by: cv, folds: 101}}",
     "algorithms.ogd.select.folds", "101 folds of 100 training rows"),
])
def test_splits_too_small_are_refused_at_config_time_naming_key_and_sizes(tmp_path, top, ds, ogd, key, sizes):
    with pytest.raises(ConfigError) as err:
        load_config(_holdout(tmp_path, top, ds, ogd))
    msg = str(err.value)
    assert f": {key}: " in msg and sizes in msg and "\n" not in msg, msg


def test_reasonable_splits_still_load(tmp_path):
    exp = load_config(_holdout(tmp_path, ogd="{select: {eta: [0.2, 2], by: cv, folds: 5}}"))
    assert exp.cells


def test_a_krr_test_fraction_that_rounds_to_no_test_row_is_refused(tmp_path):
    text = APPROX.replace("digits: {scale: minmax, max_samples: 300}",
                          "diabetes: {krr: {lambda: 0.5, test_fraction: 0.0001}}") + "  nystrom: {}\n"
    with pytest.raises(ConfigError) as err:
        load_config(_write(tmp_path, text))
    assert "datasets.diabetes.krr.test_fraction" in str(err.value) and "0 test rows" in str(err.value)


def test_a_loaded_dataset_too_small_for_its_split_says_so_in_one_line():
    """The runtime guard for sizes the config cannot know (a generator's draws)."""
    import numpy as np

    from lsokl.data.dataset import Dataset
    from lsokl.runner.protocols.holdout import _stratified_split

    ds = Dataset("tiny", np.zeros((10, 2)), np.array([1.0, -1.0] * 5), "binary", {})
    with pytest.raises(ConfigError, match="validation_fraction 0.05 of 10 rows leaves 9 training and 1"):
        _stratified_split(ds, 0.05, 0, "validation")


# --- item 7: holdout bombs counted and estimated before anything runs ------------------------------------------

def test_select_inner_cells_count_towards_the_grid(tmp_path):
    """`folds: 1000000000` passed as "1 cells": the inner cells (candidates x folds) were not counted."""
    p = _holdout(tmp_path, ogd="{select: {eta: [0.2, 2], by: cv, folds: 5}}")
    exp = load_config(p, max_cells=100)
    assert len(exp.cells) == 2  # perceptron + ogd's outer cell
    with pytest.raises(ConfigError, match=r"the grid expands to 12 cells"):  # 1 + 1 + 2 x 5 inner
        load_config(p, max_cells=11)


def test_a_billion_folds_are_refused_at_load(tmp_path):
    p = _holdout(tmp_path, ogd="{select: {eta: [0.2, 2], by: cv, folds: 1000000000}}")
    with pytest.raises(ConfigError, match="folds"):
        load_config(p)


def test_a_billion_folds_on_a_dataset_of_unknown_size_are_counted(tmp_path, monkeypatch):
    import lsokl.splits

    monkeypatch.setattr(lsokl.splits, "train_rows", lambda name: None)  # the size check cannot help
    p = _holdout(tmp_path, ogd="{select: {eta: [0.2, 2], by: cv, folds: 1000000000}}")
    with pytest.raises(ConfigError, match=r"the grid expands to 2,000,000,002 cells"):
        load_config(p)


def _run_refused(tmp_path, text, limit):
    from lsokl.runner import run_experiment

    exp = load_config(_write(tmp_path, text))
    summary = run_experiment(exp, tmp_path / "res", jobs=1, memory_limit=limit)
    assert summary.ran.get("ok", 0) == 0  # refused, not started
    return [r for r in summary.failures if r["error"]["type"] == "MemoryEstimateError"]


def test_a_million_epochs_of_a_mini_batch_learner_are_refused_with_the_estimate(tmp_path):
    """A mini-batch learner's pass reads every epoch's order at once: that is counted (an online learner's
    epochs are made one at a time: tests/test_integrity.py)."""
    refused = _run_refused(tmp_path, """
        name: ep
        protocol: holdout
        permutations: 1
        epochs: 1000000
        datasets: {checkerboard: {max_samples: 100, test_fraction: 0.2}}
        algorithms: {dsg: {}}
        """, 50 * 2**20)
    assert len(refused) == 1
    assert "training order (1,000,000 epochs x 100 rows" in refused[0]["error"]["message"]


def test_a_billion_fastfood_frequencies_are_refused_with_the_estimate(tmp_path):
    refused = _run_refused(tmp_path, """
        name: ff
        protocol: holdout
        permutations: 1
        datasets: {breast_cancer: {test_fraction: 0.2}}
        algorithms: {fastfood-svm: {n_frequencies: 1000000000}}
        """, 2**30)
    msg = refused[0]["error"]["message"]
    assert len(refused) == 1 and "copy of Z" in msg and "breast_cancer (455 x 30)" in msg


def test_a_billion_drawn_rows_are_refused_before_the_draw(tmp_path):
    from lsokl.runner import run_experiment

    exp = load_config(_write(tmp_path, """
        name: dr
        protocol: holdout
        permutations: 1
        datasets: {waveform: {draws: {n_train: 1000000000, n_test: 1000}}}
        algorithms: {perceptron: {}}
        """))
    t0 = time.perf_counter()
    with pytest.raises(ConfigError) as err:
        run_experiment(exp, tmp_path / "res", jobs=1)
    assert time.perf_counter() - t0 < 30
    msg = str(err.value)
    assert "datasets.waveform.draws" in msg and "1,000,001,000 x 21" in msg and "\n" not in msg


def test_the_dry_run_estimate_sees_the_epochs(tmp_path):
    from lsokl.runner.resources import dry_run_estimates

    exp = load_config(_write(tmp_path, """
        name: ep
        protocol: holdout
        permutations: 1
        epochs: 1000000
        datasets: {german: {test_fraction: 0.2}}
        algorithms: {dsg: {}, perceptron: {}}
        """))
    refused, summary = dry_run_estimates(exp, exp.cells, limit=2**30)
    assert len(refused) == 1 and "training order" in refused[0] and "dsg" in refused[0]


def test_lsokl_run_refuses_the_alias_bomb_in_one_line(tmp_path):
    """The issue's case: `lsokl run` hung at 3.8 GB hashing the expanded `description:`."""
    from typer.testing import CliRunner

    from lsokl.cli import app

    p = _write(tmp_path, BASE + _alias_bomb())
    res = CliRunner(env={"COLUMNS": "300"}).invoke(app, ["run", str(p), "--dry-run"])
    assert res.exit_code == 2, res.output
    assert len(res.output.strip().splitlines()) == 1 and "would expand to" in res.output


def test_the_dry_run_estimate_sees_the_drawn_rows(tmp_path):
    from lsokl.runner.resources import dry_run_estimates

    exp = load_config(_write(tmp_path, """
        name: dr
        protocol: holdout
        permutations: 1
        datasets: {waveform: {draws: {n_train: 1000000000, n_test: 1000}}}
        algorithms: {perceptron: {}}
        """))
    refused, summary = dry_run_estimates(exp, exp.cells, limit=2**30)
    assert len(refused) == 1 and refused[0].startswith("waveform (1,000,000,000 x 21) perceptron")
    assert "fresh draw" in refused[0] or "support vectors" in refused[0]
