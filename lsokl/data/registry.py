"""The dataset registry: ``datasets.yaml`` parsed into typed, validated specs.

The YAML is the single source of truth for what a dataset name means (files, hashes, format, expected shape,
preprocessing); everything downstream (fetch, cache, ``lsokl datasets``) reads it through this module.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import yaml

from ..errors import DataError, UnknownNameError
from .dataset import TASKS

#: Bump when a reader or the cache layout changes meaning, so caches written by older code are rebuilt.
PARSER_VERSION = 1

# Shipped in the package (lsokl/datasets.yaml, a symlink to the repository's top-level file).
REGISTRY_PATH = Path(__file__).resolve().parents[1] / "datasets.yaml"

FORMATS = ("libsvm", "mat", "csv", "idx", "hdf5")
SOURCES = ("lsokl-mat", "libsvm", "uci", "mlbench")
COMPRESSIONS = ("none", "gz", "bz2", "xz", "zip", "Z")  # Z (Unix compress, LZW) is refused with advice when read
STORAGES = ("dense", "csr")
SCALINGS = ("none", "minmax", "minmax_pm1", "standard")
SPLITS = ("train", "test")
#: precision of the cached features: float64 (the default, and what every set that reproduces the authors' runs
#: keeps), float32, or auto (float32 when every value is a float32 exactly, else float64)
DTYPES = ("float64", "float32", "auto")

_REQUIRED_ENTRY = ("name", "aliases", "task", "source", "description", "format", "d", "storage",
                   "preprocessing", "splits", "paper")
_REQUIRED_FILE = ("url", "sha256", "mirror", "compression")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class FileSpec:
    url: str | None
    sha256: str | None
    mirror: str
    compression: str
    mirror_sha256: str | None = None
    derived_from: str | None = None
    #: other paths a mirror may hold the file under (e.g. ijcnn1.trn for ijcnn1.bz2); tried in order when
    #: ``mirror`` is absent, and verified only when their bytes have the registry's hash
    mirror_alternatives: tuple[str, ...] = ()

    @property
    def mirror_hash(self) -> str | None:
        """The hash a mirror's copy must have (the upstream hash unless the copy is known to differ)."""
        return self.mirror_sha256 or self.sha256

    @property
    def filename(self) -> str:
        return Path(self.mirror).name


@dataclass(frozen=True)
class SplitSpec:
    n: int | None
    files: tuple[FileSpec, ...]
    parse: dict = field(default_factory=dict)


@dataclass(frozen=True)
class DatasetSpec:
    name: str
    aliases: tuple[str, ...]
    task: str
    source: str
    description: str
    format: str
    d: int | None
    classes: int | None
    storage: str
    preprocessing: dict
    splits: dict[str, SplitSpec]
    paper: str
    homepage: str | None
    parse: dict
    raw: dict

    @property
    def dtype(self) -> str:
        return self.raw.get("dtype") or "float64"

    def parse_options(self, split: str) -> dict:
        return {**self.parse, **self.splits[split].parse}

    @property
    def spec_hash(self) -> str:
        """Identifies what the cached arrays were built from: a changed entry or parser invalidates the cache."""
        blob = json.dumps({"entry": self.raw, "parser": PARSER_VERSION}, sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()

    @property
    def settings_hash(self) -> str:
        """Identifies how the files are read into arrays (format, parse options, shape, storage,
        preprocessing, parser version), not which files: the files' own hashes are ``meta["sha256"]``.

        Part of every cell's key (``lsokl.runner.run``), so a changed reading of the same file
        (e.g. parkinsons with 19 or 20 columns) never reuses a record made from the old one. Unlike
        :attr:`spec_hash` it ignores descriptions, aliases and URLs, which do not change the arrays."""
        blob = json.dumps({
            "task": self.task, "format": self.format, "parse": self.parse, "d": self.d, "classes": self.classes,
            "storage": self.storage, "preprocessing": self.preprocessing, "parser": PARSER_VERSION,
            "splits": {name: {"n": s.n, "parse": s.parse} for name, s in sorted(self.splits.items())},
            # only when declared, so the keys of the float64 sets stay what they were
            **({"dtype": self.raw["dtype"]} if self.raw.get("dtype") else {}),
        }, sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()

    @property
    def mirror_paths(self) -> list[str]:
        seen: dict[str, None] = {}
        for split in self.splits.values():
            for f in split.files:
                seen.setdefault(f.mirror)
        return list(seen)


def registry_path() -> Path:
    # An override lets a user keep a private registry (extra datasets) without editing the package.
    return Path(os.environ.get("LSOKL_REGISTRY", REGISTRY_PATH))


def validate(raw: dict, builtin_names=()) -> list[str]:
    """Every problem in a parsed ``datasets.yaml``, as messages naming the entry and key. Empty when valid."""
    problems: list[str] = []
    entries = raw.get("datasets") if isinstance(raw, dict) else None
    if not isinstance(entries, list) or not entries:
        return ["top level must have a non-empty `datasets:` list"]
    names: dict[str, str] = {n.lower(): f"built-in {n}" for n in builtin_names}
    url_hashes: dict[tuple, str] = {}
    for i, e in enumerate(entries):
        where = f"datasets[{i}]" + (f" ({e.get('name')})" if isinstance(e, dict) and e.get("name") else "")
        if not isinstance(e, dict):
            problems.append(f"{where}: must be a mapping")
            continue
        missing = [k for k in _REQUIRED_ENTRY if k not in e]
        if missing:
            problems.append(f"{where}: missing keys {missing}")
            continue
        for label in [e["name"], *(e["aliases"] or [])]:
            if not isinstance(label, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.+-]*", label):
                problems.append(f"{where}: bad name or alias {label!r}")
                continue
            if label.lower() in names:
                problems.append(f"{where}: name/alias {label!r} already used by {names[label.lower()]}")
            names[label.lower()] = e["name"]
        if e["task"] not in TASKS:
            problems.append(f"{where}: task must be one of {TASKS}")
        if e["source"] not in SOURCES:
            problems.append(f"{where}: source must be one of {SOURCES}")
        if e["format"] not in FORMATS:
            problems.append(f"{where}: format must be one of {FORMATS}")
        if e["storage"] not in STORAGES:
            problems.append(f"{where}: storage must be one of {STORAGES}")
        if e.get("dtype") is not None and e["dtype"] not in DTYPES:
            problems.append(f"{where}: dtype must be one of {DTYPES}")
        if e["d"] is not None and (not isinstance(e["d"], int) or e["d"] < 1):
            problems.append(f"{where}: d must be a positive integer or null")
        if e["task"] != "regression" and not isinstance(e.get("classes"), int):
            problems.append(f"{where}: classification entries need an integer `classes`")
        if e["task"] == "binary" and e.get("classes") not in (None, 2):
            problems.append(f"{where}: a binary entry has classes: 2")
        pre = e["preprocessing"]
        if not isinstance(pre, dict) or pre.get("features") not in SCALINGS or pre.get("target") not in SCALINGS:
            problems.append(f"{where}: preprocessing needs features and target in {SCALINGS}")
        elif e["task"] != "regression" and pre["target"] != "none":
            problems.append(f"{where}: only regression targets can be scaled")
        splits = e["splits"]
        if not isinstance(splits, dict) or "train" not in splits:
            problems.append(f"{where}: splits needs a `train` split")
            continue
        for s, split in splits.items():
            sw = f"{where} split {s}"
            if s not in SPLITS:
                problems.append(f"{sw}: split names are {SPLITS}")
            if not isinstance(split, dict) or not split.get("files"):
                problems.append(f"{sw}: needs a non-empty `files` list")
                continue
            if split.get("n") is not None and (not isinstance(split["n"], int) or split["n"] < 1):
                problems.append(f"{sw}: n must be a positive integer")
            if e["format"] == "idx" and len(split["files"]) != 2:
                problems.append(f"{sw}: idx splits list two files (images, labels)")
            for j, f in enumerate(split["files"]):
                fw = f"{sw} file {j}"
                miss = [k for k in _REQUIRED_FILE if k not in f]
                if miss:
                    problems.append(f"{fw}: missing keys {miss}")
                    continue
                if f["url"] is None and not (f.get("derived_from") and f.get("mirror_sha256")):
                    problems.append(f"{fw}: url may be null only with derived_from and mirror_sha256")
                if f["url"] is not None and not re.match(r"^https?://", f["url"]):
                    problems.append(f"{fw}: url must be http(s)")
                for key in ("sha256", "mirror_sha256"):
                    if f.get(key) is not None and not _SHA256.match(str(f[key])):
                        problems.append(f"{fw}: {key} must be 64 lowercase hex digits or null")
                if f["compression"] not in COMPRESSIONS:
                    problems.append(f"{fw}: compression must be one of {COMPRESSIONS}")
                for mirror in [str(f["mirror"]), *map(str, f.get("mirror_alternatives") or [])]:
                    if mirror.startswith("/") or ".." in Path(mirror).parts:
                        problems.append(f"{fw}: mirror must be a relative path inside the mirror")
                # one file, one entry (the same file may serve several splits of that entry, e.g. an HDF5)
                key = (f["url"], f["sha256"]) if f["url"] else (f["mirror"], f.get("mirror_sha256"))
                owner = url_hashes.get(key)
                if owner is not None and owner != e["name"]:
                    problems.append(f"{fw}: url+sha256 {key[0]} also used by {owner}")
                url_hashes[key] = e["name"]
    return problems


def _file(f: dict) -> FileSpec:
    return FileSpec(url=f["url"], sha256=f["sha256"], mirror=f["mirror"], compression=f["compression"],
                    mirror_sha256=f.get("mirror_sha256"), derived_from=f.get("derived_from"),
                    mirror_alternatives=tuple(f.get("mirror_alternatives") or ()))


def _spec(e: dict) -> DatasetSpec:
    splits = {s: SplitSpec(n=v.get("n"), files=tuple(_file(f) for f in v["files"]), parse=dict(v.get("parse") or {}))
              for s, v in e["splits"].items()}
    return DatasetSpec(name=e["name"], aliases=tuple(e["aliases"] or ()), task=e["task"], source=e["source"],
                       description=e["description"], format=e["format"], d=e["d"], classes=e.get("classes"),
                       storage=e["storage"], preprocessing=dict(e["preprocessing"]), splits=splits,
                       paper=e["paper"], homepage=e.get("homepage"), parse=dict(e.get("parse") or {}), raw=e)


@lru_cache(maxsize=4)
def _load(path: str, mtime: float) -> dict[str, DatasetSpec]:
    from .builtin import BUILTINS

    try:
        from ..yamlio import UniqueKeyLoader, read_text

        raw = yaml.load(read_text(path), Loader=UniqueKeyLoader)
    except (OSError, yaml.YAMLError) as exc:
        raise DataError(f"cannot read the dataset registry {path}: {exc}") from exc
    except ValueError as exc:  # not UTF-8: one line, no traceback
        raise DataError(f"cannot read the dataset registry {exc}") from None
    problems = validate(raw, BUILTINS)
    if problems:
        raise DataError(f"invalid dataset registry {path}:\n  " + "\n  ".join(problems))
    return {e["name"]: _spec(e) for e in raw["datasets"]}


def specs() -> dict[str, DatasetSpec]:
    """All registered (file-backed) datasets by canonical name, in registry order."""
    path = registry_path()
    try:
        mtime = path.stat().st_mtime
    except OSError as exc:
        raise DataError(f"dataset registry not found at {path} (set LSOKL_REGISTRY to its path)") from exc
    return _load(str(path), mtime)


def aliases() -> dict[str, str]:
    """Lower-cased name or alias -> canonical name, for registered datasets."""
    out = {}
    for name, spec in specs().items():
        for label in (name, *spec.aliases):
            out[label.lower()] = name
    return out


def resolve(name: str) -> str | None:
    """The canonical registered name for ``name`` or one of its aliases (case-insensitive), else None."""
    return aliases().get(name.lower())


def get(name: str) -> DatasetSpec:
    from .builtin import BUILTINS

    canonical = resolve(name)
    if canonical is None:
        raise UnknownNameError("dataset", name, [*specs(), *BUILTINS])
    return specs()[canonical]
