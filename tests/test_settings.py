"""Configs by name, the list of configs on a miss, and the persistent mirror setting."""
from __future__ import annotations

import pytest
from typer.testing import CliRunner

from lsokl.cli import app
from lsokl.data.fetch import mirror_setting
from lsokl.errors import ConfigError
from lsokl.packaged import available_configs, resolve_config, setting, write_setting


def test_configs_resolve_by_name_and_by_path():
    assert resolve_config("table5").name == "table5.yaml"
    assert resolve_config("configs/binary.yaml").name == "binary.yaml"
    for everyday in ("binary", "multiclass", "regression", "quickstart"):
        assert everyday in available_configs()


def test_a_missing_config_lists_the_ones_that_exist():
    with pytest.raises(ConfigError, match="Did you mean table5.*Configs that exist.*quickstart"):
        resolve_config("tabel5")
    result = CliRunner().invoke(app, ["run", "configs/nothing-here.yaml"])
    assert result.exit_code == 2 and "binary" in result.output and "table9" in result.output


def test_mirror_setting_persists_and_the_environment_wins(tmp_path, monkeypatch):
    monkeypatch.delenv("LSOKL_DATA_MIRROR", raising=False)
    assert mirror_setting(None) is None
    result = CliRunner().invoke(app, ["config", "mirror", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert setting("mirror") == str(tmp_path.resolve()) == mirror_setting(None)
    assert CliRunner().invoke(app, ["config", "mirror", "/elsewhere", "--keep"]).exit_code == 0
    assert setting("mirror") == str(tmp_path.resolve())  # --keep does not overwrite
    monkeypatch.setenv("LSOKL_DATA_MIRROR", "https://mirror.example/data")
    assert mirror_setting(None) == "https://mirror.example/data"
    assert "from $LSOKL_DATA_MIRROR" in CliRunner().invoke(app, ["config"]).output
    write_setting("mirror", None)
    monkeypatch.delenv("LSOKL_DATA_MIRROR")
    assert mirror_setting(None) is None


def test_unknown_setting_suggests_the_closest():
    result = CliRunner().invoke(app, ["config", "mirorr", "x"])
    assert result.exit_code == 2 and "did you mean 'mirror'" in result.output
