"""Configs that would silently lose a setting, and results folders that must not be written, are refused in one
line naming what is wrong."""
from __future__ import annotations

import textwrap

import pytest
from typer.testing import CliRunner

from lsokl.config import load_config
from lsokl.errors import ConfigError, DataError


def write(tmp_path, text: str, name: str = "c.yaml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def test_duplicate_algorithm_key_names_both_lines(tmp_path):
    cfg = write(tmp_path, """\
        datasets: [checkerboard]
        algorithms:
          fogd: {eta: 0.2}
          perceptron: {}
          fogd: {eta: 0.002}
        """)
    with pytest.raises(ConfigError, match=r"c\.yaml: key 'fogd' appears twice in the same mapping, at lines 3 and 5"):
        load_config(cfg)


def test_duplicate_nested_key_and_top_level_key(tmp_path):
    nested = write(tmp_path, "datasets: [checkerboard]\nalgorithms:\n  fogd:\n    eta: 0.2\n    eta: 0.02\n")
    with pytest.raises(ConfigError, match=r"key 'eta' appears twice .* lines 4 and 5"):
        load_config(nested)
    top = write(tmp_path, "seed: 1\ndatasets: [checkerboard]\nalgorithms: [perceptron]\nseed: 2\n", "t.yaml")
    with pytest.raises(ConfigError, match=r"t\.yaml: key 'seed' appears twice .* lines 1 and 4"):
        load_config(top)


def test_yaml_merge_keys_still_override(tmp_path):
    cfg = write(tmp_path, """\
        defaults: &base {sigma: 8}
        datasets: [checkerboard]
        algorithms:
          fogd: {<<: *base, eta: 0.2, n_fourier: 50, sigma: 4}
        """)
    exp = load_config(cfg)
    assert exp.cells and exp.cells[0].param_dict["eta"] == 0.2 and exp.cells[0].param_dict["sigma"] == 4


@pytest.mark.parametrize("text,where", [
    ("datasets: [checkerboard]\nalgorithms: [perceptron, ogd, perceptron]\n",
     r"algorithms\[2\]: 'perceptron' is listed twice \(algorithms\[0\] and algorithms\[2\]\)"),
    ("datasets: [checkerboard, checkerboard]\nalgorithms: [perceptron]\n",
     r"datasets\[1\]: 'checkerboard' is listed twice"),
])
def test_duplicate_labels_in_lists(tmp_path, text, where):
    with pytest.raises(ConfigError, match=where):
        load_config(write(tmp_path, text))


def test_duplicate_key_in_a_user_dataset_registry(tmp_path, monkeypatch):
    from lsokl.data import registry

    reg = tmp_path / "datasets.yaml"
    reg.write_text("datasets:\n- name: toy\n  d: 3\n  d: 4\n")
    monkeypatch.setenv("LSOKL_REGISTRY", str(reg))
    with pytest.raises(DataError, match=r"key 'd' appears twice .* lines 3 and 4"):
        registry.specs()


# --- --results ------------------------------------------------------------------------------------------------------

@pytest.fixture
def tiny_config(tmp_path):
    return write(tmp_path, "name: tiny\npermutations: 1\ndatasets: {checkerboard: {max_samples: 50}}\n"
                           "algorithms: [perceptron]\n")


@pytest.mark.parametrize("target", ["/", "/etc", "/etc/lsokl-results", "/usr", "/usr/../usr/lib", "/boot/x"])
def test_system_paths_are_never_results_folders(target):
    from lsokl.results.store import ResultsDirError, check_results_dir

    with pytest.raises(ResultsDirError, match="refusing to write results into a system folder"):
        check_results_dir(target)


# only targets where even root cannot write, so this test never litters a system folder with the old code
@pytest.mark.parametrize("target", ["/proc", "/dev/null", "/sys/x", "/proc/self/lsokl"])
def test_results_refuses_system_paths_in_one_line(tiny_config, target):
    from lsokl.cli import app

    res = CliRunner(env={"COLUMNS": "300"}).invoke(app, ["run", str(tiny_config), "--results", target, "-q"])
    assert res.exit_code == 2, res.output
    assert res.output.startswith(f"error: --results {target}: refusing to write results into a system folder")
    assert len(res.output.strip().splitlines()) == 1 and "Traceback" not in res.output


def test_results_must_be_a_writable_folder(tiny_config, tmp_path):
    from lsokl.cli import app

    runner = CliRunner(env={"COLUMNS": "300"})
    afile = tmp_path / "afile"
    afile.write_text("x")
    res = runner.invoke(app, ["run", str(tiny_config), "--results", str(afile), "-q"])
    assert res.exit_code == 2 and "exists and is not a folder" in res.output
    assert len(res.output.strip().splitlines()) == 1
    res = runner.invoke(app, ["run", str(tiny_config), "--results", str(afile / "sub"), "-q"])
    assert res.exit_code == 2 and "not a writable folder" in res.output, res.output
    assert len(res.output.strip().splitlines()) == 1
    ok = runner.invoke(app, ["run", str(tiny_config), "--results", str(tmp_path / "new" / "out"), "-q"])
    assert ok.exit_code == 0, ok.output
    assert list((tmp_path / "new" / "out" / "records").glob("*.json"))


def test_report_out_refuses_system_paths(tmp_path):
    from lsokl.cli import app

    (tmp_path / "res").mkdir()
    res = CliRunner(env={"COLUMNS": "300"}).invoke(app, ["report", str(tmp_path / "res"), "--out", "/proc"])
    assert res.exit_code == 2 and "--out /proc: refusing to write" in res.output
