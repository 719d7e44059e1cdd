"""Nothing lsokl's make targets set lands in the user's home: the settings folder make exports is
inside the checkout; a mirror that lacks a file says how to get it from upstream instead, and
`lsokl fetch --no-mirror` does so whatever the settings say."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from lsokl.data.fetch import NO_MIRROR, MissingFileError, mirror_setting, obtain
from lsokl.data.registry import FileSpec

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_keeps_settings_in_the_checkout(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run(["make", "-s", "--no-print-directory", "--eval",
                          "where-settings: ; @echo \"$$LSOKL_CONFIG_DIR\"", "where-settings"],
                         cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert out, "the Makefile exports no LSOKL_CONFIG_DIR"
    assert Path(out).resolve().is_relative_to(ROOT.resolve())
    assert list(tmp_path.iterdir()) == []


def test_a_mirror_miss_says_how_to_fetch_upstream(tmp_path):
    f = FileSpec(url="https://example.org/x.bz2", sha256=None, mirror="x/x.bz2", compression="bz2")
    with pytest.raises(MissingFileError, match=r"lsokl fetch xset --no-mirror.*lsokl config mirror --unset"):
        obtain(f, str(tmp_path), tmp_path, name="xset", index=0, retries=0, timeout=1.0, progress=False)


def test_no_mirror_overrides_the_environment_and_the_settings(monkeypatch, tmp_path):
    monkeypatch.setenv("LSOKL_DATA_MIRROR", str(tmp_path))
    assert mirror_setting(None) == str(tmp_path)
    assert mirror_setting(NO_MIRROR) is None


def test_config_unset_without_a_name_removes_every_setting(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from lsokl.cli.app import app
    from lsokl.packaged import read_settings

    monkeypatch.setenv("LSOKL_CONFIG_DIR", str(tmp_path))
    monkeypatch.delenv("LSOKL_DATA_MIRROR", raising=False)
    runner = CliRunner()
    assert runner.invoke(app, ["config", "mirror", str(tmp_path)]).exit_code == 0
    assert read_settings().get("mirror")
    shown = runner.invoke(app, ["config"]).output
    assert "mirror = " in shown and "from the settings file" in shown
    assert runner.invoke(app, ["config", "--unset"]).exit_code == 0
    assert read_settings() == {}
    assert "not set" in runner.invoke(app, ["config"]).output
