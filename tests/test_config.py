"""Config validation and grid expansion (no learner is run here)."""
from __future__ import annotations

import textwrap

import pytest
from typer.testing import CliRunner

from lsokl.config import load_config, parse_algorithm_filter
from lsokl.errors import ConfigError, UnknownNameError


def write(tmp_path, text, name="exp.yaml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


BASE = """
permutations: 3
datasets: [checkerboard]
algorithms:
  perceptron: {}
"""


def error_of(tmp_path, text) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, text))
    return str(info.value)


def test_bad_value_names_file_key_path_and_expectation(tmp_path):
    msg = error_of(tmp_path, """
        datasets: [checkerboard]
        algorithms:
          perceptron: {sigma: 0.2x}
        """)
    assert "exp.yaml: algorithms.perceptron.sigma: expected a number > 0 or 'scale', got '0.2x'" in msg


def test_bad_list_element_is_located(tmp_path):
    msg = error_of(tmp_path, """
        datasets: [checkerboard]
        algorithms:
          perceptron: {sigma: [1, -2]}
        """)
    assert "algorithms.perceptron.sigma[1]: expected a number > 0 or 'scale', got -2" in msg


def test_bad_per_dataset_override_is_located(tmp_path):
    msg = error_of(tmp_path, """
        datasets:
          checkerboard: {algorithms: {perceptron: {sigma: 0}}}
        algorithms: [perceptron]
        """)
    assert "datasets.checkerboard.algorithms.perceptron.sigma: expected a number > 0 or 'scale', got 0" in msg


@pytest.mark.parametrize("text, expected", [
    ("permutaions: 3\n" + BASE.replace("permutations: 3\n", ""), "permutaions: unknown key. Did you mean 'permutations'?"),
    ("datasets: {checkerboard: {max_sample: 10}}\nalgorithms: [perceptron]",
     "datasets.checkerboard.max_sample: unknown key. Did you mean 'max_samples'?"),
    ("datasets: [checkerbord]\nalgorithms: [perceptron]", "Did you mean 'checkerboard'?"),
    ("datasets: [checkerboard]\nalgorithms: [perceptorn]", "Did you mean 'perceptron'?"),
    ("datasets: [checkerboard]\nalgorithms: {perceptron: {sigmaa: 1}}",
     "algorithms.perceptron.sigmaa: perceptron has no parameter 'sigmaa'. Did you mean 'sigma'?"),
    ("datasets: {checkerboard: {algorithms: {percepton: {}}}}\nalgorithms: [perceptron]",
     "datasets.checkerboard.algorithms.percepton: unknown algorithm label of this config 'percepton'. "
     "Did you mean 'perceptron'?"),
    ("datasets: [checkerboard]\nalgorithms: [perceptron]\npermutations: 0",
     "permutations: expected an integer >= 1, got 0"),
    ("datasets: [checkerboard]\nalgorithms: [perceptron]\npermutation_source: author",
     "permutation_source: expected one of 'seed', 'authors', got 'author'. Did you mean 'authors'?"),
    ("datasets: [checkerboard]\nalgorithms: [perceptron]\ndefaults: {etaa: 1}",
     "defaults.etaa: no algorithm of this config has a parameter 'etaa'"),
    ("datasets: [checkerboard]\nalgorithms: [perceptron]\nseed: -1", "seed: expected an integer >= 0, got -1"),
    ("- just\n- a list", "expected a mapping"),
])
def test_config_errors(tmp_path, text, expected):
    assert expected in error_of(tmp_path, text)


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="no such config file"):
        load_config(tmp_path / "nope.yaml")


def test_grid_expands_to_product_with_overrides(tmp_path):
    exp = load_config(write(tmp_path, """
        seed: 7
        permutations: 4
        defaults: {sigma: 2e-1}
        datasets:
          checkerboard: {max_samples: 100}
          breast_cancer:
            permutations: 2
            algorithms: {perceptron: {sigma: [10, 100, 1000]}}
        algorithms:
          perceptron: {}
          wide: {learner: perceptron, sigma: [1, 2]}
        """))
    counts = {}
    for c in exp.cells:
        counts[(c.dataset, c.algorithm)] = counts.get((c.dataset, c.algorithm), 0) + 1
    assert counts == {("checkerboard", "perceptron"): 4, ("checkerboard", "wide"): 8,
                      ("breast_cancer", "perceptron"): 6, ("breast_cancer", "wide"): 4}
    cb = [c for c in exp.cells if c.dataset == "checkerboard" and c.algorithm == "perceptron"]
    assert cb[0].param_dict == {"sigma": 0.2}  # 2e-1 is a float, not YAML 1.1's string
    assert cb[0].max_samples == 100 and cb[0].seed == 7
    assert {c.param_dict["sigma"] for c in exp.cells if c.dataset == "breast_cancer"
            and c.algorithm == "perceptron"} == {10, 100, 1000}


def test_per_dataset_algorithm_permutations_override(tmp_path):
    exp = load_config(write(tmp_path, """
        permutations: 6
        datasets:
          checkerboard:
            algorithms: {perceptron: {permutations: 2, sigma: 0.5}}
        algorithms:
          perceptron: {}
          wide: {learner: perceptron, sigma: 3}
        """))
    perms = {}
    for c in exp.cells:
        perms.setdefault(c.algorithm, []).append(c.permutation)
    assert perms == {"perceptron": [0, 1], "wide": list(range(6))}
    assert all("permutations" not in c.param_dict for c in exp.cells)
    msg = error_of(tmp_path, """
        datasets:
          checkerboard: {algorithms: {perceptron: {permutations: 0}}}
        algorithms: {perceptron: {}}
        """)
    assert "datasets.checkerboard.algorithms.perceptron.permutations" in msg


def test_exclude_and_filters(tmp_path):
    exp = load_config(write(tmp_path, """
        permutations: 2
        datasets:
          checkerboard: {}
          breast_cancer: {exclude: [wide]}
        algorithms:
          perceptron: {sigma: [1, 4]}
          wide: {learner: perceptron, sigma: 50}
        """))
    assert len(exp.cells) == 2 * 3 + 2 * 2
    assert len(exp.select(datasets=["checkerboard"])) == 6
    assert len(exp.select(algorithms=["perceptron[sigma=4]"])) == 4
    assert len(exp.select(datasets=["breast_cancer"], algorithms=["wide"])) == 0
    with pytest.raises(UnknownNameError, match="Did you mean 'perceptron'"):
        exp.select(algorithms=["perceptrn"])
    assert parse_algorithm_filter("fogd[eta=0.002, budget=100]") == ("fogd", {"eta": 0.002, "budget": 100})


def test_registered_but_unwritten_learner_is_a_warning_not_an_error(tmp_path, monkeypatch):
    from lsokl.learners import registry

    monkeypatch.setitem(registry.LEARNERS, ("binary", "notyet"), "lsokl.learners.notyet:NotYet")
    exp = load_config(write(tmp_path, "datasets: [checkerboard]\nalgorithms: [notyet]\npermutations: 1"))
    assert len(exp.cells) == 1 and "not importable yet" in exp.warnings[0]


def test_dry_run_prints_counts(tmp_path):
    from lsokl.cli import app

    cfg = write(tmp_path, """
        permutations: 3
        datasets: [checkerboard, breast_cancer]
        algorithms:
          perceptron: {sigma: [1, 2]}
        """)
    res = CliRunner().invoke(app, ["run", str(cfg), "--dry-run"])
    assert res.exit_code == 0, res.output
    assert "12 cells" in res.output
    rows = [line for line in res.output.splitlines() if "checkerboard" in line and "│" in line]
    assert rows and "6" in rows[0]
    assert not (tmp_path / "results").exists()


def test_cli_reports_config_errors_without_traceback(tmp_path):
    from lsokl.cli import app

    cfg = write(tmp_path, "datasets: [checkerboard]\nalgorithms: {perceptron: {sigma: x}}")
    res = CliRunner().invoke(app, ["run", str(cfg), "--dry-run"])
    assert res.exit_code == 2
    assert "algorithms.perceptron.sigma: expected a number > 0" in res.output
    assert "Traceback" not in res.output


def test_shipped_configs_are_valid():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "configs"
    for path in sorted(root.glob("*.yaml")):  # every shipped config parses and expands
        exp = load_config(path)
        assert exp.cells, path.name
    smoke = load_config(root / "smoke.yaml")
    assert set(smoke.algorithms) >= {"perceptron", "ogd", "rbp", "forgetron", "projectron",
                                     "projectron++", "bpas", "bogd", "fogd", "nogd"}


def test_cells_leave_out_the_parameters_only_fit_reads(tmp_path):
    """max_iter, tol, n_iter_no_change (and DSG's shuffle) are read by fit's epochs only; a cell plays
    run / fit_curve, so its parameters (and record key) leave them out unless the config sets them."""
    from lsokl.config import load_config

    path = tmp_path / "c.yaml"
    path.write_text("name: c\npermutations: 1\nprotocol: holdout\ntest_fraction: 0.2\ndatasets:\n  german: {}\nalgorithms:\n"
                    "  fogd: {sigma: 8}\n  dsg: {sigma: 8}\n  nogd: {sigma: 8, max_iter: 3}\n")
    params = {c.algorithm: c.param_dict for c in load_config(path).cells}
    for name in ("fogd", "dsg"):
        assert not {"max_iter", "tol", "n_iter_no_change", "shuffle"} & set(params[name]), params[name]
    assert params["dsg"]["max_blocks"] == "auto" and params["fogd"]["eta"] == 0.002  # other defaults stay
    assert params["nogd"]["max_iter"] == 3 and "tol" not in params["nogd"]  # set in the config: kept
