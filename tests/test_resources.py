"""Resource estimates before allocation: grid size before expansion, memory per cell before it starts, dense storage
only where it fits. (Importing the guards first means this module cannot run, and hang, against code without
them.)"""
from __future__ import annotations

import textwrap
import time

import pytest
from typer.testing import CliRunner

from lsokl.config import load_config
from lsokl.data.formats import dense_refusal
from lsokl.errors import ConfigError
from lsokl.runner import run_experiment
from lsokl.runner.resources import DEFAULT_MAX_CELLS, cell_memory, default_learner_estimate, screen_memory

from test_data_fetch import entry, own_cache, put, use_registry  # noqa: F401 (fixtures)

assert dense_refusal and screen_memory  # the guards exist


def cfg(tmp_path, text, name="c.yaml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


# --- grid size ----------------------------------------------------------------------------------------------------

def test_a_billion_permutations_are_refused_with_the_count_before_expanding(tmp_path):
    p = cfg(tmp_path, """\
        datasets: [checkerboard, breast_cancer]
        permutations: 1000000000
        algorithms: {fogd: {eta: [0.2, 0.02, 0.002]}, perceptron: {}}
        """)
    t0 = time.perf_counter()
    with pytest.raises(ConfigError, match=r"c\.yaml: the grid expands to 8,000,000,000 cells .* limit of "
                                          rf"{DEFAULT_MAX_CELLS:,}.*--max-cells 8000000000"):
        load_config(p)
    assert time.perf_counter() - t0 < 30  # counted, not expanded (expanding took until memory ran out)


def test_max_cells_is_an_override_and_applies_to_dry_run(tmp_path):
    from lsokl.cli import app

    p = cfg(tmp_path, "datasets: [checkerboard]\npermutations: 3\nalgorithms: {perceptron: {sigma: [1, 2]}}\n")
    with pytest.raises(ConfigError, match="6 cells"):
        load_config(p, max_cells=5)
    assert len(load_config(p, max_cells=6).cells) == 6
    runner = CliRunner(env={"COLUMNS": "300"})
    refused = runner.invoke(app, ["run", str(p), "--dry-run", "--max-cells", "5"])
    assert refused.exit_code == 2 and "the grid expands to 6 cells" in refused.output
    assert len(refused.output.strip().splitlines()) == 1
    ok = runner.invoke(app, ["run", str(p), "--dry-run", "--max-cells", "6"])
    assert ok.exit_code == 0 and "6 cells" in ok.output


# --- memory per cell ----------------------------------------------------------------------------------------------

def test_estimates_follow_the_big_arrays():
    from lsokl.learners import registry

    fogd = registry.create("fogd", "binary", n_fourier=100_000_000)
    parts = default_learner_estimate(fogd, 32_561, 123, 1)
    # drawn, then copied onto an aligned buffer: two d x D arrays at the peak (tests/test_memory_estimates.py)
    assert parts["random features U (d x D = 123 x 100,000,000) and its aligned copy"] == 2 * 8.0 * 123 * 1e8
    proj = registry.create("projectron", "binary", budget=1000)
    parts = default_learner_estimate(proj, 10_000, 50, 1)
    assert any("B x B" in k and v == 3 * 8.0 * 1000**2 for k, v in parts.items())
    ogd = registry.create("ogd", "multiclass")  # unbudgeted: the support set may reach n
    parts = default_learner_estimate(ogd, 60_000, 784, 10)
    assert parts["support vectors (up to n x d = 60,000 x 784)"] == 8.0 * 60_000 * (784 + 10 + 3)


def test_learner_and_protocol_hooks_are_used():
    class Declares:
        def memory_estimate(self, n_samples, n_features, n_outputs):
            return {"kernel block (n x n)": 8.0 * n_samples * n_samples}

    class Protocol:
        @staticmethod
        def memory_estimate(spec, n_samples, n_features, n_outputs):
            return {"test predictions": 8.0 * n_samples * n_outputs}

    parts = cell_memory(Declares(), 1000, 5, 3, Protocol, {})
    assert parts == {"kernel block (n x n)": 8e6, "test predictions": 24e3}


def test_a_cell_above_the_memory_limit_is_recorded_not_started(tmp_path):
    exp = load_config(cfg(tmp_path, """\
        name: mem
        permutations: 2
        datasets: {checkerboard: {max_samples: 100}}
        algorithms:
          fogd: {n_fourier: [100000, 20]}
          perceptron: {}
        """))
    summary = run_experiment(exp, tmp_path / "res", jobs=1, memory_limit=50 * 2**20)
    refused = [r for r in summary.failures if r["error"]["type"] == "MemoryEstimateError"]
    assert len(refused) == 2 and summary.ran["ok"] == 4  # the rest of the grid ran
    msg = refused[0]["error"]["message"]
    assert msg.startswith("checkerboard (100 x 2): needs about") and "projection blocks" in msg
    assert "more than the 50.0 MiB a cell may use (--memory-limit)" in msg
    assert refused[0]["params"]["n_fourier"] == 100000


def test_n_fourier_1e8_is_refused_by_the_default_limit(tmp_path):
    """The issue's case: 224 GiB requested; refused from the estimate against the memory available now."""
    exp = load_config(cfg(tmp_path, """\
        name: huge
        permutations: 1
        datasets: {checkerboard: {max_samples: 50}}
        algorithms: {fogd: {n_fourier: 100000000}}
        """))
    summary = run_experiment(exp, tmp_path / "res", jobs=1)
    (rec,) = summary.failures
    assert rec["error"]["type"] == "MemoryEstimateError" and "GiB of memory" in rec["error"]["message"]


# --- dense storage at fetch time ----------------------------------------------------------------------------------

def test_huge_feature_index_is_stored_sparse_not_dense(tmp_path, use_registry, own_cache):
    from lsokl.data import load
    from lsokl.data.fetch import fetch

    mirror = tmp_path / "mirror"
    put(mirror, "toy/toy.txt", "+1 1:1 999999999:1\n-1 2:1\n+1 3:1\n-1 1:2\n")
    use_registry(entry(url="http://127.0.0.1:9/x", sha256=None, d=None, n=4))
    with pytest.warns(UserWarning):
        res = fetch("toy", mirror=mirror, progress=False)
    assert any("stored sparse (CSR) although the registry says dense" in w and "999,999,999" in w
               for w in res.warnings), res.warnings
    size = sum(p.stat().st_size for p in own_cache.rglob("*") if p.is_file())
    assert size < 1_000_000  # dense, it would have been 2 x 999,999,999 x 8 bytes = 30 GB written
    ds = load("toy")
    assert ds.X.shape == (4, 999_999_999) and hasattr(ds.X, "indptr") and ds.X[0, 999_999_998] == 1.0


def test_dense_refusal_limits():
    assert dense_refusal((581_012, 54)) is None and dense_refusal((70_000, 784)) is None  # covtype, mnist
    assert "stored sparse" in dense_refusal((1_000_000, 2000))  # 16 GB dense
    assert "stored sparse" in dense_refusal((6, 999_999_999))


def test_dry_run_shows_the_settings_the_memory_estimate_would_refuse(tmp_path):
    from lsokl.cli import app

    p = cfg(tmp_path, """\
        permutations: 2
        datasets: [german]
        algorithms: {fogd: {n_fourier: [100000000, 400]}}
        """)
    res = CliRunner(env={"COLUMNS": "300"}).invoke(app, ["run", str(p), "--dry-run", "--memory-limit", "4"])
    assert res.exit_code == 0, res.output
    assert "largest memory estimate:" in res.output and "a cell may use 4.0 GiB (--memory-limit)" in res.output
    refused = [line for line in res.output.splitlines() if line.startswith("would not start:")]
    assert len(refused) == 1 and "german (1,000 x 24) fogd[" in refused[0] and "n_fourier=100000000" in refused[0]


def test_dry_run_shows_an_estimate_per_setting(tmp_path):
    """Every distinct setting gets its memory line (permutations share it), with its size and what dominates."""
    from lsokl.cli import app

    p = cfg(tmp_path, """\
        permutations: 3
        datasets: [german]
        algorithms: {fogd: {n_fourier: [4000, 400]}, bpas: {budget: 100}}
        """)
    res = CliRunner(env={"COLUMNS": "300"}).invoke(app, ["run", str(p), "--dry-run"])
    assert res.exit_code == 0, res.output
    lines = [line.strip() for line in res.output.splitlines() if line.strip().startswith("memory: german (1,000 x 24)")]
    assert len(lines) == 3, res.output
    big = next(line for line in lines if "n_fourier=4000" in line)
    # 2 x 256 x 4000 x 8 bytes = 15.6 MiB of projection blocks, + U and its copy 2 x 24 x 4000 x 8 = 1.5 MiB
    assert big.endswith("]: 17.2 MiB (largest: projection blocks (2 x 256 x D), 15.6 MiB)"), big
