"""A plain (non-editable) install works: build a wheel, install it into a fresh virtual environment
and run `lsokl datasets` and the quickstart there, from a folder that is not the clone.

The fresh environment reuses this environment's dependencies through a .pth line (installing
numba, scipy, ... again would take minutes and need the network); lsokl itself comes only from the
wheel, since a .pth-added folder's own .pth files (this environment's editable hook) are not read.
"""
from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.packaging


def _run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)
    assert proc.returncode == 0, f"{cmd} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
          "-w", str(out), str(REPO)])
    (path,) = out.glob("lsokl-*.whl")
    return path


def test_wheel_carries_registry_configs_and_paper_tables(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "lsokl/datasets.yaml" in names
    for config in ("table5", "quickstart", "binary", "multiclass", "regression"):
        assert f"lsokl/configs/{config}.yaml" in names
    assert any(n.startswith("lsokl/report/paper_tables/") and n.endswith(".csv") for n in names)
    assert "lsokl/configs/meka-fig7a.yaml" in names
    for paper in ("lsokl2016", "bpegasosm2010", "dsg2014", "meka2017"):  # one folder per paper
        assert {f"lsokl/papers/{paper}/{m}.py" for m in ("__init__", "items", "report")} <= names


def test_wheel_declares_the_mit_license_with_its_file(wheel):
    """SPDX ``license = "MIT"`` plus ``license-files`` (issue 25: no deprecated license table)."""
    archive = zipfile.ZipFile(wheel)
    names = set(archive.namelist())
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = archive.read(meta).decode()
    assert "License-Expression: MIT" in text
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)


def test_installed_wheel_runs_datasets_and_the_quickstart(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    site = Path(_run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).strip())
    (site / "reuse_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "-q", str(wheel)])

    work = tmp_path / "elsewhere"  # not the clone: only the installed package can answer
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LSOKL_REGISTRY")}
    env.update(LSOKL_DATA_DIR=str(tmp_path / "cache"), LSOKL_CONFIG_DIR=str(tmp_path / "config"))
    where = _run([str(py), "-c", "import lsokl; print(lsokl.__file__)"], cwd=work, env=env)
    assert str(env_dir) in where, f"lsokl imported from {where}, not from the wheel"
    _run([str(py), "-c", "import lsokl.cli, lsokl.papers, " + ", ".join(  # each paper's folder ships
        f"lsokl.papers.{p}.report" for p in ("lsokl2016", "bpegasosm2010", "dsg2014", "meka2017"))],
         cwd=work, env=env)
    lsokl = str(env_dir / "bin" / "lsokl")
    listing = _run([lsokl, "datasets"], cwd=work, env=env)
    assert "german" in listing and "checkerboard" in listing
    _run([lsokl, "run", "quickstart", "--results", "res", "-q", "-j", "1", "-a", "fogd", "-a", "nogd"],
         cwd=work, env=env)
    report = _run([lsokl, "report", "res", "--no-plots"], cwd=work, env=env)
    assert "FOGD" in report or "fogd" in report
    listing = _run([lsokl, "reproduce", "--list"], cwd=work, env=env)  # the paper layer ships in the wheel
    assert "lsokl2016:table9" in listing and "meka2017:fig7a" in listing
    _run([lsokl, "reproduce", "--scoreboard"], cwd=work, env=env)
    assert "lsokl2016:table9" in (work / "REPRODUCTIONS.md").read_text()
    missing = subprocess.run([lsokl, "run", "no-such-config"], cwd=work, env=env,
                             capture_output=True, text=True)
    assert missing.returncode != 0 and "quickstart" in missing.stdout + missing.stderr
