"""Files shipped inside the package, and the user's persistent settings.

``datasets.yaml`` and ``configs/*.yaml`` live at the top of the repository, where people edit
them; ``lsokl/datasets.yaml`` and ``lsokl/configs`` are symlinks to them, so an installed wheel
carries real copies (``[tool.setuptools.package-data]``) and an editable install reads the
repository's files.

Settings (``lsokl config``): a small YAML file in the user config directory (platformdirs;
``LSOKL_CONFIG_DIR`` overrides the folder), so a data mirror set once serves every later command,
not only those started by the Makefile. An environment variable always wins over the file.
"""
from __future__ import annotations

import difflib
import os
import re
from importlib import resources
from pathlib import Path

import yaml

from .errors import ConfigError

PACKAGE_ROOT = Path(__file__).resolve().parent

#: setting -> (environment variable that overrides it, what it means)
SETTINGS = {
    "mirror": ("LSOKL_DATA_MIRROR", "local folder or URL used instead of the upstream hosts by fetch"),
}


def packaged_file(*parts: str) -> Path:
    """A file shipped in the package (works for editable and wheel installs)."""
    return Path(str(resources.files("lsokl").joinpath(*parts)))


# ----------------------------------------------------------------------------- configs by name
def _config_folders() -> list[Path]:
    """Where configs are looked up by name: ./configs first (a clone, or the user's own), then
    the packaged ones."""
    folders = [Path.cwd() / "configs", packaged_file("configs")]
    seen, out = set(), []
    for folder in folders:
        key = folder.resolve() if folder.exists() else folder
        if key not in seen and folder.is_dir():
            seen.add(key)
            out.append(folder)
    return out


def available_configs() -> dict[str, Path]:
    """{name: path} of every config reachable by name (./configs wins over the packaged one)."""
    found: dict[str, Path] = {}
    for folder in _config_folders():
        for path in sorted(folder.glob("*.yaml")):
            found.setdefault(path.stem, path)
    return found


def resolve_config(arg: str | os.PathLike) -> Path:
    """``lsokl run ARG``: a path to a YAML file, or the name of a shipped config (``table5``,
    ``configs/table5.yaml`` from an installed package). A miss lists the configs that exist."""
    path = Path(arg)
    if path.is_file():
        return path
    configs = available_configs()
    stem = path.name[: -len(".yaml")] if path.name.endswith(".yaml") else path.name
    if stem in configs and (path.parent == Path(".") or path.parent.name == "configs"):
        return configs[stem]
    if path.is_dir():
        raise ConfigError(f"{path} is a folder; give a config file or one of: {', '.join(configs)}")
    close = difflib.get_close_matches(stem, list(configs), n=3)
    hint = f" Did you mean {' or '.join(close)}?" if close else ""
    raise ConfigError(f"{arg}: no such config file.{hint} Configs that exist (run them by name, "
                      f"e.g. `lsokl run {next(iter(configs), 'quickstart')}`): {', '.join(configs)}")


# ----------------------------------------------------------------------------- user settings
def settings_path() -> Path:
    folder = os.environ.get("LSOKL_CONFIG_DIR")
    if not folder:
        from platformdirs import user_config_dir

        folder = user_config_dir("lsokl")
    return Path(folder) / "config.yaml"


def read_settings() -> dict:
    path = settings_path()
    if not path.exists():
        return {}
    try:
        from .yamlio import read_text

        data = yaml.safe_load(read_text(path)) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc}); fix it or remove it") from None
    except ValueError as exc:  # not UTF-8
        raise ConfigError(str(exc)) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected `key: value` lines, got {type(data).__name__}")
    return data


def setting(name: str) -> str | None:
    """The value in force: the environment variable, else the settings file, else None."""
    env = SETTINGS[name][0]
    if os.environ.get(env):
        return os.environ[env]
    value = read_settings().get(name)
    return None if value in (None, "") else str(value)


def write_setting(name: str, value: str | None) -> Path:
    """Set (or, with None, remove) one setting; returns the settings file."""
    if name not in SETTINGS:
        close = difflib.get_close_matches(name, list(SETTINGS), n=1)
        raise ConfigError(f"unknown setting {name!r}" + (f"; did you mean {close[0]!r}?" if close else "")
                          + f" Settings: {', '.join(SETTINGS)}")
    data = read_settings()
    if value is None:
        data.pop(name, None)
    else:
        if name == "mirror" and "://" not in value:
            value = str(Path(value).expanduser().resolve())
        data[name] = value
    path = settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(yaml.safe_dump(data, sort_keys=True))
    tmp.replace(path)
    return path


# ----------------------------------------------------------------------------- portable text
_ABSOLUTE = re.compile(r"(?<![\w`<>.~/-])/(?:[\w.+@-]+/)*[\w.+@-]+/?")


def portable_paths(text: str, mirror: str | None = None) -> str:
    """``text`` with this machine's absolute paths taken out, for files that are committed
    (``missing.json``, reports): the data mirror becomes ``<mirror>``, the current folder ``.``, the
    home folder ``~``, and any other absolute path its last component (``.../name``)."""
    mirror = mirror if mirror is not None else setting("mirror")
    roots = []
    if mirror and "://" not in mirror:
        roots.append((str(Path(mirror).expanduser().resolve()), "<mirror>"))
    roots += [(str(Path.cwd()), "."), (str(Path.home()), "~")]
    for root, name in roots:
        if root and root != "/":
            text = re.sub(re.escape(root) + r"(?=/|\b|$)", name, text)
    return _ABSOLUTE.sub(lambda m: ".../" + m.group(0).rstrip("/").rsplit("/", 1)[-1], text)
