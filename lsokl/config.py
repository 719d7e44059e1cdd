"""Experiment configs: typed YAML -> validated :class:`Experiment` -> a list of :class:`Cell`.

A config declares a grid. Every list-valued learner parameter expands to a product, so
``eta: [0.2, 0.02]`` with ``budget: [50, 100]`` gives four settings, each run on every
permutation of every dataset. Example::

    name: table5
    seed: 0
    permutations: 20
    budgets: 100                 # sugar for `defaults: {budget: ...}`; only budgeted learners take it
    defaults: {sigma: 8}         # any parameter, given to every learner that has it
    datasets:
      german: {scale: minmax}
      w7a:
        max_samples: 5000
        algorithms: {fogd: {eta: 0.02}, ogd: {permutations: 5}}  # per-dataset, per-algorithm override
        exclude: [perceptron, ogd]
    algorithms:
      perceptron: {}
      fogd: {eta: [0.2, 0.002], D: 400}
      fogd-small: {learner: fogd, D: 100}  # a second setting under its own label

Every error names the file, the key path and what was expected; unknown keys are errors and
unknown names suggest the closest registered one.
"""
from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import re
from dataclasses import dataclass, field
from numbers import Integral, Real
from pathlib import Path
from typing import Any

import yaml

from .errors import ConfigError, UnknownNameError, closest
from .protocol_options import (CHECK_LEARNER, CHECK_OPTIONS, DATASET_OPTIONS, DEFAULT, OPTIONS, PROTOCOL_NAMES,
                               SELECT_KEY, SELECT_OPTIONS, _join, describe_rule, has_test_split, parse_select)
from .yamlio import AliasBombError, DuplicateKeyError, TooDeepError, UniqueKeyLoader, read_text

TASKS = ("binary", "multiclass", "regression")
SCALES = ("none", "minmax", "minmax_pm1", "standard", "zscore")
SCALE_ALIASES = {"zscore": "standard"}
PERMUTATION_SOURCES = ("seed", "authors")
BUDGET_PARAM = "budget"

TOP_KEYS = ("name", "description", "task", "seed", "permutations", "permutation_source",
            "checkpoints", "max_samples", "scale", "timeout", "budgets", "defaults",
            "datasets", "algorithms", "protocol", "epochs", "test_fraction", "select", "test_at",
            "rows", "krr", "block_ranks",  # these three: `protocol: approximation`
            "search", "test_with", "order", "block_rows",
            "device")  # device: an Array API device for dsg, rks, nystrom, knys
SPLITS = ("train", "test", "all")
DATASET_KEYS = ("task", "split", "scale", "max_samples", "permutations", "permutation_source",
                "budgets", "defaults", "algorithms", "exclude", "test_fraction", "draws", "rows", "krr",
                "order", "block_rows", "labels")
LEARNER_KEY = "learner"  # inside an algorithm entry: the registry name when the label differs
#: cells (settings x permutations) a config may expand to without ``--max-cells``; the largest shipped
#: reproduction has a few thousand (the runner's resource guards, lsokl.runner.resources, read it from here)
DEFAULT_MAX_CELLS = 200_000
RULES = ("lowest-mean",)
SEARCH_KEYS = ("algorithms", "permutations", "seed", "rule", "datasets", "overrides", "refine")


# --------------------------------------------------------------------------- YAML
class _Loader(UniqueKeyLoader):
    """SafeLoader that reads ``1e-3`` as a float (YAML 1.1 would make it a string) and refuses duplicate keys."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
                  |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
                  |\.[0-9_]+(?:[eE][-+][0-9]+)?
                  |[-+]?\.(?:inf|Inf|INF)
                  |\.(?:nan|NaN|NAN))$""", re.X),
    list("-+0123456789."))


def _order(v, key: str, entry: dict, default_how: str, default_rows):
    """(how, block_rows, Cell.order) from ``order`` / ``block_rows`` under ``key`` (dataset level inherits top)."""
    from .protocol_options import DEFAULT_BLOCK_ROWS, ORDERS

    how = v.choice(_join(key, "order") if key else "order", entry.get("order", default_how), ORDERS)
    rows = v.int_(_join(key, "block_rows") if key else "block_rows", entry.get("block_rows", default_rows),
                  low=1, allow_none=True)
    if how != "block-shuffle":
        if "block_rows" in entry and key:
            v.fail(_join(key, "block_rows") if key else "block_rows", "only means something with "
                   "`order: block-shuffle`")
        return how, rows, ()
    return how, rows, (("block_rows", rows or DEFAULT_BLOCK_ROWS), ("how", how))


# --------------------------------------------------------------------------- the model
@dataclass(frozen=True)
class DatasetSpec:
    name: str
    task: str
    scale: str | None
    max_samples: int | None
    permutations: int
    permutation_source: str
    split: str | None = None  # train / test / all (the data layer's default when None)
    test_fraction: float | None = None  # holdout protocol: test rows cut from the train split
    draws: dict | None = None  # holdout protocol, built-in generators: {n_train, n_test} per repetition
    protocol_options: tuple = ()  # per-dataset protocol keys (approximation: rows, krr), sorted pairs
    order: tuple = ()  # () = a random permutation; (("block_rows", N), ("how", "block-shuffle")) otherwise
    # the config says `order` (top or dataset level): kept as given; else the runner may choose block-shuffle
    # for data larger than the memory available (lsokl.runner.run.choose_order)
    order_given: bool = False
    labels: tuple = ()  # `labels: [8, 6]`: only the rows of these labels (two: the first is +1), in this order

    def load_options(self) -> dict:
        """Keyword arguments for :func:`lsokl.data.load` (only the ones that are set)."""
        opts = {"split": self.split} if self.split else {}
        if self.labels:
            opts["labels"] = self.labels
        if self.scale is not None:
            opts["scale"] = self.scale
        if self.max_samples is not None:
            opts["max_samples"] = self.max_samples
        return opts


@dataclass(frozen=True)
class Cell:
    """One online pass: a dataset, a learner with fixed parameters, one permutation."""

    dataset: str
    task: str
    algorithm: str  # the label used in the config (and in reports)
    learner: str  # the registry name
    params: tuple  # sorted (name, value) pairs, JSON-able values
    permutation: int
    seed: int
    permutation_source: str
    max_samples: int | None
    scale: str | None
    n_checkpoints: int | None
    timeout: float | None
    split: str | None = None
    protocol: str = "online"
    protocol_options: tuple = ()  # sorted (key, value) pairs of the protocol's config keys
    select: tuple = ()  # hyper-parameter selection (lsokl.runner.selection): sorted (key, value) pairs
    order: tuple = ()  # the stream order when not a permutation (`order: block-shuffle`), sorted pairs
    labels: tuple = ()  # the dataset's `labels` filter (rows of these labels only), in the config's order

    @property
    def param_dict(self) -> dict:
        return dict(self.params)

    def setting(self) -> str:
        """``fogd[D=400,eta=0.002]``: the label plus the parameters that vary in the grid."""
        inner = ",".join(f"{k}={_fmt(v)}" for k, v in self.params)
        return f"{self.algorithm}[{inner}]" if inner else self.algorithm

    def spec(self, dataset_sha256: str | None, version: str) -> dict:
        """Everything that determines the result; its hash is the cell key. Online cells keep
        the keys they had before protocols existed, so earlier results still resume."""
        spec = {
            "dataset": self.dataset, "dataset_sha256": dataset_sha256, "task": self.task,
            "learner": self.learner, "params": self.param_dict, "lsokl_version": version,
            "permutation": self.permutation, "permutation_source": self.permutation_source,
            "seed": self.seed, "max_samples": self.max_samples, "scale": self.scale,
            "split": self.split, "n_checkpoints": self.n_checkpoints,
        }
        if self.protocol != "online":
            spec.update(protocol=self.protocol, **dict(self.protocol_options))
        if self.select:
            spec["select"] = {k: list(v) if isinstance(v, tuple) else v for k, v in self.select}
        if self.order:  # only when not the default permutation, so earlier keys stay valid
            spec["order"] = dict(self.order)
        if self.labels:  # only when filtered, so earlier keys stay valid
            spec["labels"] = list(self.labels)
        return spec


@dataclass
class Experiment:
    path: str
    name: str
    seed: int
    datasets: dict[str, DatasetSpec]
    algorithms: dict[str, str]  # label -> registry name
    cells: list[Cell]
    raw: dict = field(repr=False)
    warnings: list[str] = field(default_factory=list)
    search: object = None  # lsokl.search.SearchSpec: the step-size search run before the cells
    protocol: str = "online"
    protocol_options: dict = field(default_factory=dict)  # the top-level values of the protocol's keys

    @property
    def config_hash(self) -> str:
        return stable_hash(self.raw)

    def select(self, datasets=(), algorithms=()) -> list[Cell]:
        """The cells kept by ``-d``/``-a`` filters (``fogd`` or ``fogd[eta=0.002]``)."""
        cells = self.cells
        if datasets:
            for d in datasets:
                if d not in self.datasets:
                    raise UnknownNameError("dataset in this config", d, self.datasets)
            cells = [c for c in cells if c.dataset in set(datasets)]
        if algorithms:
            filters = [parse_algorithm_filter(a) for a in algorithms]
            for label, _ in filters:
                if label not in self.algorithms:
                    raise UnknownNameError("algorithm in this config", label, self.algorithms)
            cells = [c for c in cells if any(_matches(c, lab, want) for lab, want in filters)]
        return cells


def _matches(cell: Cell, label: str, want: dict) -> bool:
    if cell.algorithm != label:
        return False
    params = cell.param_dict
    return all(k in params and _same(params[k], v) for k, v in want.items())


def _same(a, b) -> bool:
    if isinstance(a, Real) and isinstance(b, Real) and not isinstance(a, bool):
        return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=0.0)
    return a == b


def parse_algorithm_filter(text: str) -> tuple[str, dict]:
    """``fogd[eta=0.002,D=400]`` -> ("fogd", {"eta": 0.002, "D": 400})."""
    m = re.fullmatch(r"\s*([^\[\]]+?)\s*(?:\[(.*)\])?\s*", text)
    if not m:
        raise ConfigError(f"cannot read algorithm filter {text!r}; expected NAME or NAME[param=value,...]")
    label, inner = m.group(1), m.group(2)
    want = {}
    for part in filter(None, (p.strip() for p in (inner or "").split(","))):
        if "=" not in part:
            raise ConfigError(f"algorithm filter {text!r}: expected param=value, got {part!r}")
        k, v = part.split("=", 1)
        want[k.strip()] = yaml.load(v.strip(), Loader=_Loader)
    return label, want


# --------------------------------------------------------------------------- helpers
def settings_count(merged: dict) -> int:
    """How many parameter settings the lists of ``merged`` expand to (their product), without expanding."""
    return math.prod(len(v) if isinstance(v, list) else 1 for v in merged.values())


def grid_too_large(total: int, limit: int | None) -> str | None:
    if limit is None or total <= limit:
        return None
    return (f"the grid expands to {total:,} cells (settings x permutations x datasets), above the limit of "
            f"{limit:,}; check `permutations:` and the parameter lists, or raise the limit with --max-cells "
            f"{total}")


# --------------------------------------------------------------------------- the search block
# The step-size search (lsokl/search.py, a step the runner takes before a table's cells) is declared in the
# config: the config layer parses and validates it here, so config never imports the search or the runner.
@dataclass(frozen=True)
class SearchSpec:
    grids: dict  # label -> {param: [values]}
    permutations: int
    seed: int
    rule: str
    datasets: tuple | None  # None = every dataset of the config
    overrides: dict  # dataset -> label -> {param: value or list, permutations: n}
    refine: tuple = ()  # mantissas of the second, finer stage (empty: no refinement)
    only: dict | None = None  # dataset -> labels: restrict the search to these (the refine stage)


def parse_search(v, value, labels, datasets_raw: dict, seed: int) -> SearchSpec:
    """Validate the ``search:`` block (``v`` is the config's validator, for key paths)."""
    top = v.mapping("search", value, SEARCH_KEYS)
    algos = v.mapping("search.algorithms", top.get("algorithms"))
    if not algos:
        v.fail("search.algorithms", "is required: the labels to search and their grids")
    grids = {}
    for label, grid in algos.items():
        key = f"search.algorithms.{label}"
        if label not in labels:
            v.fail(key, str(UnknownNameError("algorithm label of this config", label, labels)))
        grid = v.mapping(key, grid)
        if not grid:
            v.fail(key, "expected a mapping param -> list of values, e.g. {eta: [0.2, 0.02]}")
        for p, vals in grid.items():
            if not isinstance(vals, list) or not vals:
                v.expected(f"{key}.{p}", "a non-empty list of values to search", vals)
        grids[label] = {p: list(vals) for p, vals in grid.items()}
    names = top.get("datasets")
    if names is not None:
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            v.expected("search.datasets", "a list of dataset names of this config", names)
        for i, n in enumerate(names):
            if n not in datasets_raw:
                v.fail(f"search.datasets[{i}]", str(UnknownNameError("dataset of this config", n, datasets_raw)))
    overrides = v.mapping("search.overrides", top.get("overrides"))
    for d, per in overrides.items():
        if d not in datasets_raw:
            v.fail(f"search.overrides.{d}", str(UnknownNameError("dataset of this config", d, datasets_raw)))
        for label in v.mapping(f"search.overrides.{d}", per):
            if label not in grids:
                v.fail(f"search.overrides.{d}.{label}", str(UnknownNameError("searched label", label, grids)))
    refine = top.get("refine", [])
    if not isinstance(refine, list) or not all(
            isinstance(m, (int, float)) and not isinstance(m, bool) and 1 <= m < 10 for m in refine):
        v.expected("search.refine", "a list of mantissas in [1, 10), e.g. [1, 2, 3, 4, 5, 6, 7, 8, 9]", refine)
    return SearchSpec(
        refine=tuple(refine),
        grids=grids,
        permutations=v.int_("search.permutations", top.get("permutations", 3), low=1),
        seed=v.int_("search.seed", top.get("seed", seed + 1)),
        rule=v.choice("search.rule", top.get("rule", RULES[0]), RULES),
        datasets=tuple(names) if names is not None else None,
        overrides={d: {lab: dict(o or {}) for lab, o in (per or {}).items()} for d, per in overrides.items()},
    )


# --------------------------------------------------------------------------- more helpers
def stable_hash(obj: Any) -> str:
    """sha256 of the canonical JSON of ``obj`` (sorted keys, no whitespace)."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=_json_default)
    return hashlib.sha256(text.encode()).hexdigest()


def _json_default(o):
    import numpy as np

    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, (set, tuple)):
        return list(o)
    raise TypeError(f"not JSON-serialisable: {o!r}")


def _fmt(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def _is_int(v) -> bool:
    return isinstance(v, Integral) and not isinstance(v, bool)


def _is_num(v) -> bool:
    return isinstance(v, Real) and not isinstance(v, bool) and not (isinstance(v, float) and math.isnan(v))


class _Validator:
    """Walks the raw YAML, raising ConfigError('file: key.path: expected ..., got ...')."""

    def __init__(self, path: str):
        self.file = path

    def fail(self, key: str, message: str):
        raise ConfigError(f"{self.file}: {key}: {message}" if key else f"{self.file}: {message}")

    def expected(self, key: str, what: str, got):
        self.fail(key, f"expected {what}, got {got!r}")

    def mapping(self, key: str, value, allowed: tuple | None = None) -> dict:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.expected(key, "a mapping", value)
        for k in value:
            if not isinstance(k, str):
                self.expected(key, "string keys", k)
            if allowed is not None and k not in allowed:
                guess = closest(k, allowed)
                hint = f" Did you mean {guess[0]!r}?" if guess else ""
                self.fail(_join(key, k), f"unknown key.{hint} Allowed: {', '.join(allowed)}.")
        return value

    def names(self, key: str, value) -> dict:
        """A list of names or a mapping name -> options, as an ordered mapping."""
        if value is None:
            self.fail(key, "is required")
        if isinstance(value, list):
            out, first = {}, {}
            for i, v in enumerate(value):
                if not isinstance(v, str):
                    self.expected(f"{key}[{i}]", "a name", v)
                if v in first:
                    hint = ("; give a second setting its own label with `learner:`"
                            if key.endswith("algorithms") else "")
                    self.fail(f"{key}[{i}]", f"{v!r} is listed twice ({key}[{first[v]}] and {key}[{i}]){hint}")
                first[v] = i
                out[v] = None
            return out
        return self.mapping(key, value)

    def int_(self, key, value, low=0, allow_none=False):
        if value is None and allow_none:
            return None
        if not _is_int(value) or value < low:
            self.expected(key, f"an integer >= {low}" + (" or null" if allow_none else ""), value)
        return int(value)

    def num(self, key, value, allow_none=False):
        if value is None and allow_none:
            return None
        if not _is_num(value) or value <= 0:
            self.expected(key, "a number > 0" + (" or null" if allow_none else ""), value)
        return float(value)

    def choice(self, key, value, options, allow_none=False):
        if value is None and allow_none:
            return None
        if value not in options:
            guess = closest(str(value), options)
            hint = f". Did you mean {guess[0]!r}?" if guess else ""
            self.fail(key, "expected one of " + ", ".join(repr(o) for o in options)
                      + f", got {value!r}{hint}")
        return value


def _known_datasets() -> dict[str, str | None] | None:
    """Registered dataset names and aliases (lower-case) -> (canonical name, task); None when the
    data layer cannot list them (then names are checked when the run loads the data)."""
    out: dict = {}
    try:
        from .data import registry

        for name, spec in registry.specs().items():
            for label in (name, *getattr(spec, "aliases", ())):
                out[label.lower()] = (name, spec.task)
    except Exception:  # no registry (yet): built-ins only
        pass
    try:
        from .data import builtin

        for name, entry in builtin.BUILTINS.items():
            out[name.lower()] = (name, entry[1] if isinstance(entry, tuple) else None)
    except Exception:
        try:
            from .data import loading

            for name in getattr(loading, "BUILTINS", {}):
                out[name.lower()] = (name, None)
        except Exception:
            pass
    return out or None


def _learner_class(name: str, task: str):
    """The class, or None when its module is not importable yet (the cell will fail and say why)."""
    from .learners import registry

    try:
        return registry.get(name, task)
    except UnknownNameError:
        raise
    except (ImportError, AttributeError):
        return None


# --------------------------------------------------------------------------- loading
def load_config(path: str | Path, *, max_cells: int | None = None) -> Experiment:
    """Read, validate and expand a config file; ``max_cells`` (default: the resources module's limit) refuses a
    grid above that many cells before expanding it."""
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"{path}: no such config file")
    try:
        raw = yaml.load(read_text(path), Loader=_Loader)
    except (DuplicateKeyError, AliasBombError, TooDeepError) as exc:
        raise ConfigError(f"{path}: {exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    except ValueError as exc:  # not UTF-8 (yamlio.read_text)
        raise ConfigError(str(exc)) from None
    return parse_config(raw, str(path), max_cells=max_cells)


def parse_config(raw: Any, source: str = "<config>", *, max_cells: int | None = None) -> Experiment:
    """Validate a config (already parsed from YAML) and expand it to cells.

    The grid is counted before it is expanded: above ``max_cells`` (default
    :data:`DEFAULT_MAX_CELLS`) it is refused with its count.

    The steps, in the order their errors are raised: the top-level settings (:func:`_top_settings`),
    the algorithms (:func:`_algorithms`), whether each learner can run under the protocol and the
    defaults reach one (:func:`_check_learners`), then per dataset its spec (:func:`_dataset_spec`),
    its overrides (:func:`_dataset_overrides`) and the cells of each algorithm on it
    (:func:`_add_cells`); last, the grid's size and the step-size search."""
    max_cells = DEFAULT_MAX_CELLS if max_cells is None else max_cells
    v = _Validator(source)
    top = v.mapping("", raw, TOP_KEYS)
    if not top:
        v.fail("", "empty config; it needs at least `datasets` and `algorithms`")
    raw = copy.deepcopy(top)
    s = _top_settings(v, top, source)
    algos = _algorithms(v, top, s)
    warnings = _check_learners(v, algos, s)

    known_ds = _known_datasets()
    ds_entries = v.names("datasets", top.get("datasets"))
    if not ds_entries:
        v.fail("datasets", "is empty")
    datasets: dict[str, DatasetSpec] = {}
    grid = _Grid(max_cells)
    for given, entry in ds_entries.items():
        spec, entry = _dataset_spec(v, given, entry, known_ds, datasets, s)
        datasets[spec.name] = spec
        sizes = _check_split_sizes(v, _join("datasets", given), entry, spec, s.protocol, s.protocol_options)
        over = _dataset_overrides(v, _join("datasets", given), entry, algos)
        for label in algos.entries:
            if label not in over.exclude:
                _add_cells(v, grid, s, algos, label, spec, over, sizes, _join("datasets", given))
    if grid.planned > max_cells:
        v.fail("", grid_too_large(grid.planned, max_cells))
    search = None
    if top.get("search") is not None:  # the step-size search (lsokl/search.py) feeding these cells
        search = parse_search(v, top["search"], algos.entries, ds_entries, s.seed)
    return Experiment(path=source, name=s.name, seed=s.seed, datasets=datasets,
                      algorithms={k: a[0] for k, a in algos.entries.items()}, cells=grid.cells, raw=raw,
                      warnings=warnings, protocol=s.protocol, protocol_options=s.protocol_options,
                      search=search)


def check_run_name(v: _Validator, name: str) -> None:
    """The config's ``name`` is the folder ``runs/<name>`` its results go to: one plain folder name,
    so that nothing is written outside ``runs/`` (no ``..``, no absolute path, no separator)."""
    bad = ("is empty" if not name.strip() else
           "is a relative folder ('.' or '..')" if name in (".", "..") else
           "holds a path separator" if ("/" in name or "\\" in name) else
           "holds a NUL character" if "\0" in name else None)
    if bad:
        v.fail("name", f"{name!r} {bad}; it names the folder runs/<name>, so give one plain folder name "
                       "(letters, digits, '-', '_', '.')")


@dataclass
class _TopSettings:
    """The top-level keys every dataset and algorithm inherits unless it overrides them."""

    name: str
    task: str
    seed: int
    permutations: int
    permutation_source: str
    order: tuple  # (how, rows) of the top-level `order`
    checkpoints: int | None
    max_samples: int | None
    scale: str | None
    protocol: str
    protocol_options: dict
    timeout: float | None
    defaults: dict  # parameter -> value (`budgets` folded in as `budget`)
    default_paths: dict  # parameter -> the key path it was given at
    order_given: bool = False  # the top level sets `order` (a dataset then keeps it even over memory)


def _top_settings(v: _Validator, top: dict, source: str) -> _TopSettings:
    name = top.get("name", Path(source).stem)
    if not isinstance(name, str):
        v.expected("name", "a string", name)
    check_run_name(v, name)
    task = v.choice("task", top.get("task", "binary"), TASKS)
    seed = v.int_("seed", top.get("seed", 0))
    perms = v.int_("permutations", top.get("permutations", 20), low=1)
    perm_source = v.choice("permutation_source", top.get("permutation_source", "seed"), PERMUTATION_SOURCES)
    top_order = _order(v, "", top, "permutation", None)
    checkpoints = v.int_("checkpoints", top.get("checkpoints"), low=1, allow_none=True)
    max_samples = v.int_("max_samples", top.get("max_samples"), low=1, allow_none=True)
    scale = v.choice("scale", top.get("scale"), SCALES, allow_none=True)
    protocol_name, protocol_options = _protocol(v, top)
    timeout = v.num("timeout", top.get("timeout"), allow_none=True)
    defaults = dict(v.mapping("defaults", top.get("defaults")))
    if "budgets" in top:
        defaults[BUDGET_PARAM] = top["budgets"]
    default_paths = {k: ("budgets" if k == BUDGET_PARAM and "budgets" in top else f"defaults.{k}")
                     for k in defaults}
    return _TopSettings(name, task, seed, perms, perm_source, top_order, checkpoints, max_samples, scale,
                        protocol_name, protocol_options, timeout, defaults, default_paths,
                        order_given="order" in top)


@dataclass
class _Algorithms:
    """The config's algorithms by label."""

    entries: dict  # label -> (registry name, class or None, params, key path of each param)
    select_of: dict  # label -> the parsed `select` (sorted pairs), () when none
    select_key_of: dict  # label -> the key path the `select` was given at
    perms_of: dict  # label -> its own `permutations`, when the entry gives one


def _algorithms(v: _Validator, top: dict, s: _TopSettings) -> _Algorithms:
    from .learners import registry

    algos = v.names("algorithms", top.get("algorithms"))
    if not algos:
        v.fail("algorithms", "is empty")
    out = _Algorithms({}, {}, {}, {})
    for label, entry in algos.items():
        key = _join("algorithms", label)
        entry = dict(v.mapping(key, entry))
        select_raw = entry.pop(SELECT_KEY, None)
        # `permutations` in an algorithm's entry: repetitions of that algorithm everywhere (a
        # deterministic batch solver needs one), unless a dataset's override says otherwise
        if "permutations" in entry:
            out.perms_of[label] = v.int_(_join(key, "permutations"), entry.pop("permutations"), low=1)
        lname = entry.pop(LEARNER_KEY, label)
        if not isinstance(lname, str):
            v.expected(_join(key, LEARNER_KEY), "a registered algorithm name", lname)
        lname = registry.canonical(lname)
        try:
            cls = _learner_class(lname, s.task)
        except UnknownNameError as exc:
            v.fail(_join(key, LEARNER_KEY) if LEARNER_KEY in (algos[label] or {}) else key, str(exc))
        out.entries[label] = (lname, cls, entry, {k: _join(key, k) for k in entry})
        out.select_of[label] = _select(v, s.protocol, _join(key, SELECT_KEY), select_raw, cls, lname)
        out.select_key_of[label] = _join(key, SELECT_KEY)
        if select_raw is None and top.get(SELECT_KEY) is not None and cls is not None:
            wanted = set(top[SELECT_KEY] or {}) - {"by", *_select_option_names()}
            if wanted <= set(cls._get_param_names()):  # the top-level select reaches learners that have the params
                out.select_of[label] = _select(v, s.protocol, SELECT_KEY, top[SELECT_KEY], cls, lname)
                out.select_key_of[label] = SELECT_KEY
    return out


def _check_learners(v: _Validator, algos: _Algorithms, s: _TopSettings) -> list[str]:
    """Each learner can run under the protocol; the defaults mean something to at least one learner
    of the grid. Returns the warnings (learners registered but not importable)."""
    warnings: list[str] = []
    check = CHECK_LEARNER.get(s.protocol)
    for label, (lname, cls, _, _) in algos.entries.items():
        if cls is not None and check is not None and (why := check(cls)):
            v.fail(_join("algorithms", label), f"{lname} cannot run under `protocol: {s.protocol}`: {why}")
        if cls is None:
            warnings.append(f"algorithm {label!r} ({lname}) is registered but not importable yet; "
                            "its cells will be recorded as failed")
    known_classes = [a[1] for a in algos.entries.values() if a[1] is not None]
    if known_classes and len(known_classes) == len(algos.entries):
        accepted = set().union(*(c._get_param_names() for c in known_classes))
        for k in s.defaults:
            if k not in accepted and k != BUDGET_PARAM:  # budgets may target learners added later
                v.fail(s.default_paths[k], f"no algorithm of this config has a parameter {k!r}."
                       + _hint(k, accepted))
    return warnings


def _dataset_spec(v: _Validator, given: str, entry, known_ds, datasets: dict, s: _TopSettings) -> tuple:
    """A dataset entry as a :class:`DatasetSpec` (its keys over the top-level ones); returns the spec
    and the validated entry."""
    dkey = _join("datasets", given)
    dname, registered_task = given, None
    if known_ds is not None:
        if given.lower() not in known_ds:
            v.fail(dkey, str(UnknownNameError("dataset", given, {n for n, _ in known_ds.values()})))
        dname, registered_task = known_ds[given.lower()]  # aliases resolve to one name
    if dname in datasets:
        v.fail(dkey, f"dataset {dname!r} is listed twice")
    entry = v.mapping(dkey, entry, DATASET_KEYS)
    labels = _labels(v, _join(dkey, "labels"), entry.get("labels"))
    if labels:  # the filter decides the task: two labels are a binary task, more a multi-class one
        registered_task = "binary" if len(labels) == 2 else "multiclass"
        if entry.get("task", registered_task) != registered_task:
            v.fail(_join(dkey, "task"), f"{len(labels)} labels ({_join(dkey, 'labels')}) make a "
                                        f"{registered_task} task, not {entry['task']!r}")
    dtask = v.choice(_join(dkey, "task"), entry.get("task", registered_task or s.task), TASKS)
    split = v.choice(_join(dkey, "split"), entry.get("split"), SPLITS, allow_none=True)
    dscale = v.choice(_join(dkey, "scale"), entry.get("scale", s.scale), SCALES, allow_none=True)
    fraction = s.protocol_options.get("test_fraction")
    if "test_fraction" in entry:
        if s.protocol != "holdout":
            v.fail(_join(dkey, "test_fraction"), "only means something with `protocol: holdout`")
        fraction = _fraction(v, _join(dkey, "test_fraction"), entry["test_fraction"])
    draws = _draws(v, _join(dkey, "draws"), entry.get("draws"), dname, s.protocol)
    if draws is not None and fraction is not None:
        v.fail(_join(dkey, "draws"), "fresh draws bring their own test points; drop `test_fraction`")
    if s.protocol == "holdout" and fraction is None and draws is None and not _has_test_split(dname):
        v.fail(dkey, f"dataset {dname!r} has no test split, so `protocol: holdout` needs "
                     f"`test_fraction` (e.g. 0.2) for it (under {dkey} or at the top)")
    spec = DatasetSpec(
        name=dname, task=dtask, split=split, test_fraction=fraction, draws=draws,
        protocol_options=_dataset_options(v, dkey, entry, s.protocol),
        scale=SCALE_ALIASES.get(dscale, dscale),
        max_samples=v.int_(_join(dkey, "max_samples"), entry.get("max_samples", s.max_samples),
                           low=1, allow_none=True),
        permutations=v.int_(_join(dkey, "permutations"), entry.get("permutations", s.permutations), low=1),
        permutation_source=v.choice(_join(dkey, "permutation_source"),
                                    entry.get("permutation_source", s.permutation_source), PERMUTATION_SOURCES),
        order=_order(v, dkey, entry, s.order[0], s.order[1])[2],
        order_given=s.order_given or "order" in entry,
        labels=labels,
    )
    if labels and draws is not None:
        v.fail(_join(dkey, "labels"), "filters a dataset read from files; fresh `draws` cannot be filtered")
    if labels and spec.permutation_source == "authors":
        v.fail(_join(dkey, "labels"), "the authors' permutations index the whole file; with `labels` use "
                                      "`permutation_source: seed`")
    if spec.order and spec.permutation_source == "authors":
        v.fail(_join(dkey, "order"), "`order: block-shuffle` draws its own order; it cannot be combined with "
                                     "`permutation_source: authors`")
    return spec, entry


@dataclass
class _DatasetOverrides:
    """What a dataset entry changes for the algorithms run on it."""

    defaults: dict  # its `defaults` (and `budgets`)
    default_paths: dict
    algorithms: dict  # label -> its per-algorithm parameters on this dataset
    exclude: list  # labels not run on it


def _dataset_overrides(v: _Validator, dkey: str, entry: dict, algos: _Algorithms) -> _DatasetOverrides:
    ddefaults = dict(v.mapping(_join(dkey, "defaults"), entry.get("defaults")))
    ddefault_paths = {k: _join(_join(dkey, "defaults"), k) for k in ddefaults}
    if "budgets" in entry:
        ddefaults[BUDGET_PARAM] = entry["budgets"]
        ddefault_paths[BUDGET_PARAM] = _join(dkey, "budgets")
    overrides = v.mapping(_join(dkey, "algorithms"), entry.get("algorithms"))
    for label in overrides:
        if label not in algos.entries:
            v.fail(_join(_join(dkey, "algorithms"), label),
                   str(UnknownNameError("algorithm label of this config", label, algos.entries)))
    exclude = entry.get("exclude", []) or []
    if not isinstance(exclude, list):
        v.expected(_join(dkey, "exclude"), "a list of algorithm labels", exclude)
    for i, label in enumerate(exclude):
        if label not in algos.entries:
            v.fail(_join(_join(dkey, "exclude"), i),
                   str(UnknownNameError("algorithm label of this config", label, algos.entries)))
    return _DatasetOverrides(ddefaults, ddefault_paths, overrides, exclude)


@dataclass
class _Grid:
    """The cells expanded so far and the count of all planned ones (counted on past ``max_cells``, so
    the error gives the whole count; nothing more is expanded then)."""

    max_cells: int
    planned: int = 0
    cells: list = field(default_factory=list)


def _add_cells(v: _Validator, grid: _Grid, s: _TopSettings, algos: _Algorithms, label: str, spec: DatasetSpec,
               over: _DatasetOverrides, sizes, dkey: str) -> None:
    """The cells of one algorithm on one dataset: its parameters merged (top defaults < dataset
    defaults < the algorithm's entry < the dataset's override for it), its `select` resolved, the
    grid expanded over the permutations."""
    lname, cls, aparams, apaths = algos.entries[label]
    dname, dtask = spec.name, spec.task
    if dtask != s.task:
        try:
            cls = _learner_class(lname, dtask)
        except UnknownNameError as exc:
            v.fail(_join(dkey, "task"), f"algorithm {label!r}: {exc}")
    okey = _join(_join(dkey, "algorithms"), label)
    oparams = dict(v.mapping(okey, over.algorithms.get(label)))
    # `permutations` here is not a learner parameter: it lets one costly (dataset,
    # algorithm) pair run fewer passes than the rest of the grid.
    n_perms = v.int_(_join(okey, "permutations"),
                     oparams.pop("permutations", algos.perms_of.get(label, spec.permutations)),
                     low=1)
    merged, paths = _merge_params(v, lname, cls, ((s.defaults, s.default_paths, True),
                                                  (over.defaults, over.default_paths, True),
                                                  (aparams, apaths, False),
                                                  (oparams, {k: _join(okey, k) for k in oparams}, False)))
    selected = _resolve_grid_select(v, label, algos.select_of.get(label) or (), merged, dname)
    if selected and sizes is not None:
        _check_select_sizes(v, algos.select_key_of[label], dict(selected), sizes, dname)
    for k in dict(selected):
        merged.pop(k, None)  # a selected parameter takes its candidates, not a fixed value
    # a `select` runs inner cells per outer setting (candidates, times the folds of a CV) before the cell
    # itself: they count towards the grid, so `folds: 1000000000` is refused with its count
    grid.planned += settings_count(merged) * n_perms * (1 + _inner_per_cell(dict(selected)))
    if grid.planned > grid.max_cells:
        return  # keep counting, expand nothing more: the whole count goes into the error
    for params in _expand(v, cls, lname, merged, paths):
        for k in dict(selected):
            params.pop(k, None)
        for p in range(n_perms):
            grid.cells.append(Cell(
                dataset=dname, task=dtask, algorithm=label, learner=lname,
                params=tuple(sorted(params.items())), permutation=p, seed=s.seed,
                permutation_source=spec.permutation_source,
                max_samples=spec.max_samples, scale=spec.scale,
                n_checkpoints=s.checkpoints, timeout=s.timeout, split=spec.split,
                protocol=s.protocol, select=selected, order=spec.order, labels=spec.labels,
                protocol_options=_cell_options(s.protocol_options, spec)))


def _merge_params(v: _Validator, lname: str, cls, sources) -> tuple[dict, dict]:
    """Parameters from ``(values, key paths, filtered)`` sources, later ones winning. Defaults
    (filtered) only reach the learners that have the parameter; anything else unknown is an error."""
    merged, paths = {}, {}
    accepted = set(cls._get_param_names()) if cls is not None else None
    for src, src_paths, filtered in sources:
        for k, val in src.items():
            if accepted is not None and k not in accepted:
                if filtered:
                    continue  # defaults only reach the learners that have the parameter
                v.fail(src_paths[k], f"{lname} has no parameter {k!r}." + _hint(k, accepted))
            if filtered and accepted is None and k == BUDGET_PARAM:
                continue
            merged[k], paths[k] = val, src_paths[k]
    return merged, paths


def _resolve_grid_select(v: _Validator, label: str, selected: tuple, merged: dict, dname: str) -> tuple:
    """`select: {k: grid}` takes its candidates from the parameter's list on this dataset."""
    if not any(val == "grid" for _, val in selected):
        return selected
    sel = dict(selected)
    for k, val in sel.items():
        if val == "grid":
            if not isinstance(merged.get(k), list):
                v.fail(_join(_join("algorithms", label), SELECT_KEY),
                       f"`{k}: grid` needs a list of {k} values for dataset {dname!r} "
                       f"(got {merged.get(k)!r})")
            sel[k] = tuple(merged[k])
    return tuple(sorted(sel.items()))


def _select_option_names() -> set:
    return {opt for options in SELECT_OPTIONS.values() for opt in options}


def _select(v: _Validator, protocol: str, key: str, raw, cls, lname: str) -> tuple:
    if raw is None:
        return ()
    if protocol != "holdout":
        v.fail(key, "selecting a parameter needs `protocol: holdout` (it scores a held-out split)")
    return parse_select(v, key, raw, cls, lname)


def _protocol(v: _Validator, top: dict) -> tuple[str, dict]:
    """The protocol's name and its top-level options (validated); see lsokl.protocol_options."""
    name = v.choice("protocol", top.get("protocol", DEFAULT), PROTOCOL_NAMES)
    allowed = OPTIONS[name]
    options = {}
    for key in ("epochs", "test_fraction", "test_at", "rows", "krr", "block_ranks", "test_with", "device"):
        if key in top and key not in allowed:
            v.fail(key, f"only means something with a protocol that reads it (not `protocol: {name}`)")
    if "epochs" in allowed:
        options["epochs"] = v.int_("epochs", top.get("epochs", allowed["epochs"]), low=1)
    if "test_fraction" in allowed and top.get("test_fraction") is not None:
        options["test_fraction"] = _fraction(v, "test_fraction", top["test_fraction"])
    if "test_at" in allowed and top.get("test_at") is not None:
        at = top["test_at"]
        if not isinstance(at, list) or not at:
            v.expected("test_at", "a non-empty list of training step counts", at)
        options["test_at"] = tuple(sorted({v.int_(f"test_at[{i}]", x, low=1) for i, x in enumerate(at)}))
    if "test_with" in allowed and top.get("test_with", "final") != "final":
        # only a non-default value enters the cell keys, so `final` runs keep their keys
        options["test_with"] = v.choice("test_with", top["test_with"], ("final", "average"))
    if "device" in allowed and top.get("device") is not None:
        # an Array API device (lsokl.compute.xp) for the learners that support it (dsg, rks, nystrom,
        # knys); only a given value enters the cell keys. An absent device fails its cells in one line.
        device = top["device"]
        if not (isinstance(device, str) and re.fullmatch(r"cpu|cuda(:\d+)?|mps", device)):
            v.expected("device", "cpu, cuda, cuda:N or mps (computed through torch)", device)
        options["device"] = device
    check = CHECK_OPTIONS.get(name)
    if check is not None:  # a protocol that validates its own keys (approximation)
        given = {k: top.get(k, default) for k, default in allowed.items()
                 if k not in ("epochs", "test_fraction", "test_at", "test_with", "device")}
        options.update(check(v.fail, "", given))
    return name, options


def _draws(v: _Validator, key: str, value, name: str, protocol: str) -> dict | None:
    """``draws: {n_train: N, n_test: M}``: a built-in generator drawn afresh per repetition."""
    if value is None:
        return None
    if protocol != "holdout":
        v.fail(key, "fresh draws only mean something with `protocol: holdout`")
    import inspect

    from .data import builtin

    fn = builtin.BUILTINS.get(name, (None,))[0]
    if fn is None or not {"n", "seed"} <= set(inspect.signature(fn).parameters):
        gens = [n for n, e in builtin.BUILTINS.items() if {"n", "seed"} <= set(inspect.signature(e[0]).parameters)]
        v.fail(key, f"{name!r} is not a built-in generator; draws work for {', '.join(gens)}")
    value = v.mapping(key, value, ("n_train", "n_test"))
    for k in ("n_train", "n_test"):
        if k not in value:
            v.fail(_join(key, k), "is required")
    return {k: v.int_(_join(key, k), value[k], low=1) for k in ("n_train", "n_test")}


def _labels(v: _Validator, key: str, value) -> tuple:
    """``labels: [8, 6]``: the dataset's rows of these labels only (lsokl.data.labels.select_labels), two or
    more distinct labels as the file writes them (numbers or text). Whether the file has them is checked
    when it is loaded (the registry does not list label values)."""
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) < 2:
        v.expected(key, "a list of two or more labels of the dataset (e.g. [8, 6])", value)
    for i, x in enumerate(value):
        if isinstance(x, bool) or not isinstance(x, (int, float, str)):
            v.expected(_join(key, i), "a label (a number or a string)", x)
    norm = [str(int(x)) if isinstance(x, float) and x.is_integer() else str(x) for x in value]
    if len(set(norm)) != len(norm):
        v.fail(key, f"lists a label twice: {value}")
    return tuple(value)


def _dataset_options(v: _Validator, dkey: str, entry: dict, protocol_name: str) -> tuple:
    """Per-dataset protocol keys (approximation: ``rows``, ``krr``), validated by the protocol."""
    given = {k: entry[k] for k in DATASET_OPTIONS.get(protocol_name, ()) if k in entry}
    for k in ("rows", "krr"):
        if k in entry and k not in given:
            v.fail(_join(dkey, k), "only means something with `protocol: approximation`")
    return tuple(sorted(CHECK_OPTIONS[protocol_name](v.fail, dkey, given).items())) if given else ()


def _inner_per_cell(selected: dict) -> int:
    """How many inner cells one cell's ``select`` runs: its candidates, times the folds for ``by: cv`` (an upper
    bound: inner cells shared by repetitions are counted per cell). Pure arithmetic on the validated options."""
    if not selected:
        return 0
    options = {"by", "validation_fraction", "once", "folds", "subsample", "reduced"}
    cands = math.prod(len(v) for k, v in selected.items() if k not in options and isinstance(v, (tuple, list)))
    return cands * (int(selected.get("folds") or 1) if selected.get("by") == "cv" else 1)


def _check_split_sizes(v: _Validator, dkey: str, entry: dict, spec: DatasetSpec, protocol: str,
                       options: dict) -> tuple[int, int] | None:
    """Refuse a holdout ``test_fraction`` or a KRR ``test_fraction`` that leaves a part too small for the
    dataset's declared size (:mod:`lsokl.splits`); return (training rows, rows each part of a stratified split
    needs) for the selection checks, or None when the size is unknown before loading."""
    from .splits import classes_needed, rounded_parts, split_problem, train_rows

    krr = dict(spec.protocol_options).get("krr") or options.get("krr")
    if protocol not in ("holdout", "approximation") or (protocol == "approximation" and not krr):
        return None  # nothing is split
    if spec.draws is not None:
        rows, classes = spec.draws["n_train"], None
    else:
        known = train_rows(spec.name)
        if known is None:
            return None
        rows, classes = known
    need = classes_needed(spec.task, classes)
    if protocol == "holdout" and spec.test_fraction is not None:
        key = _join(dkey, "test_fraction") if "test_fraction" in entry else "test_fraction"
        why = split_problem(rows, spec.test_fraction, need)
        if why:
            v.fail(key, f"dataset {spec.name!r}: {why}")
        rows -= math.ceil(spec.test_fraction * rows)
    if spec.max_samples is not None:
        rows = min(rows, spec.max_samples)
    if protocol == "approximation":
        key = _join(dkey, "krr") if "krr" in entry else "krr"
        why = split_problem(rows, krr["test_fraction"], 1, rounding=rounded_parts)
        if why:
            v.fail(_join(key, "test_fraction"), f"dataset {spec.name!r}: {why}")
    return rows, need


def _check_select_sizes(v: _Validator, key: str, selected: dict, sizes: tuple, dname: str) -> None:
    """A ``select`` whose validation cut or CV folds cannot be made from the training rows."""
    from .splits import folds_problem, split_problem

    rows, need = sizes
    if selected.get("by") == "validation":
        why = split_problem(rows, selected["validation_fraction"], need, what="validation")
        if why:
            v.fail(_join(key, "validation_fraction"), f"dataset {dname!r}: {why}")
    elif selected.get("by") == "cv":
        sub = selected.get("subsample")
        why = folds_problem(min(rows, sub) if sub else rows, selected["folds"])
        if why:
            v.fail(_join(key, "folds"), f"dataset {dname!r}: {why}")


def _fraction(v: _Validator, key: str, value) -> float:
    if not _is_num(value) or not 0 < value < 1:
        v.expected(key, "a number strictly between 0 and 1", value)
    return float(value)


def _has_test_split(name: str) -> bool:
    try:
        return has_test_split(name)
    except Exception:  # the data registry cannot tell: the run will check when it loads
        return True


def _cell_options(options: dict, spec: DatasetSpec) -> tuple:
    """The protocol options that enter a cell's spec (per-dataset values override the top level)."""
    out = {**options, **dict(spec.protocol_options)}
    if "test_fraction" in out or spec.test_fraction is not None:
        out["test_fraction"] = spec.test_fraction
    if spec.draws is not None:
        out["draws"] = tuple(sorted(spec.draws.items()))
    return tuple(sorted(out.items()))


def _hint(name: str, choices) -> str:
    guess = closest(name, choices)
    hint = f" Did you mean {guess[0]!r}?" if guess else ""
    return hint + f" Known: {', '.join(sorted(choices))}."


def _expand(v: _Validator, cls, lname: str, merged: dict, paths: dict) -> list[dict]:
    """Check every value against the learner's rules, then take the product of the lists."""
    keys = list(merged)
    choices = []
    for k in keys:
        vals = merged[k] if isinstance(merged[k], list) else [merged[k]]
        if not vals:
            v.fail(paths[k], "expected a value or a non-empty list, got []")
        for i, val in enumerate(vals):
            where = f"{paths[k]}[{i}]" if isinstance(merged[k], list) else paths[k]
            if isinstance(val, (dict, list)):
                v.expected(where, "a scalar value", val)
            rule = getattr(cls, "_params", {}).get(k) if cls is not None else None
            if rule is not None:
                try:
                    rule.check(cls.__name__, k, val)
                except ValueError as exc:
                    what = describe_rule(rule, val)
                    if what is None:
                        v.fail(where, str(exc))
                    v.expected(where, what, val)
        choices.append(vals)
    combos = [dict(zip(keys, combo)) for combo in itertools.product(*choices)]
    if cls is None:
        return combos
    out = []
    for combo in combos:
        try:
            learner = cls(**combo)
            learner._validate_params()
        except (TypeError, ValueError) as exc:
            where = ", ".join(sorted({paths[k].rsplit(".", 1)[0] for k in combo})) or f"algorithms.{lname}"
            v.fail(where, f"{lname} with {combo}: {exc}")
        # the full parameter set, defaults included, so a record says exactly what ran; parameters only
        # `fit`'s epochs read (the learner's fit_only_params) are left out unless set: cells never call fit
        fit_only = set(getattr(cls, "fit_only_params", ())) - set(combo)
        full = {k: _jsonable(val) for k, val in learner.get_params(deep=False).items()
                if not (k == "random_state" and val is None) and k not in fit_only}
        out.append(full)
    return out


def _jsonable(val):
    import numpy as np

    if isinstance(val, np.generic):
        return val.item()
    return val


# --------------------------------------------------------------------------- dry run
def grid_counts(cells: list[Cell]) -> dict[str, dict[str, int]]:
    """dataset -> algorithm label -> number of cells (settings x permutations)."""
    out: dict[str, dict[str, int]] = {}
    for c in cells:
        out.setdefault(c.dataset, {}).setdefault(c.algorithm, 0)
        out[c.dataset][c.algorithm] += 1
    return out
