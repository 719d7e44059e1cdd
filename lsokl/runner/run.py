"""Run a config: load data, skip finished cells, dispatch the rest, write each record at once."""
from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..config import Cell, DatasetSpec, Experiment, stable_hash
from ..errors import ConfigError, DataError
from ..results import ResultStore
from .backends import BACKENDS, default_jobs, run_dask, run_loky
from .resources import screen_memory
from .seeds import learner_seed
from .worker import Job


@dataclass
class Summary:
    selected: int = 0
    ran: Counter = field(default_factory=Counter)  # status -> cells run now
    skipped_ok: int = 0  # finished earlier
    kept_failed: Counter = field(default_factory=Counter)  # earlier failures not retried
    failures: list[dict] = field(default_factory=list)  # records not ok (this run and kept)
    missing: dict = field(default_factory=dict)  # dataset -> why its files are absent (cells skipped)

    @property
    def failed(self) -> int:
        return self.ran["failed"] + self.ran["timeout"] + self.kept_failed["failed"] + self.kept_failed["timeout"]

    @property
    def exit_code(self) -> int:
        # diverged is a legitimate outcome of a too-large step size, not a broken run
        return 1 if self.failed else 0


def lsokl_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("lsokl")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def load_dataset(spec: DatasetSpec):
    """Load (and, through the data layer, fetch and cache) one dataset in the main process."""
    from .. import data

    opts = spec.load_options()
    try:
        ds = data.load(spec.name, **opts)
    except TypeError as exc:
        if "unexpected keyword" not in str(exc):
            raise
        # a data layer without these options: subsetting we can do here, scaling we cannot
        if spec.scale not in (None, "none"):
            raise ConfigError(f"dataset {spec.name}: the data layer cannot apply scale={spec.scale!r} "
                              f"({exc})") from None
        ds = data.load(spec.name)
    if ds.task != spec.task:
        raise ConfigError(f"dataset {spec.name} is a {ds.task} dataset but the config runs it as "
                          f"{spec.task}; set `task: {ds.task}` for it")
    if spec.max_samples is not None and ds.n_samples > spec.max_samples:
        ds.X, ds.y = ds.X[: spec.max_samples], ds.y[: spec.max_samples]
    if spec.permutation_source == "authors" and ds.permutations is None:
        raise DataError(f"dataset {spec.name} has no authors' permutation matrix; "
                        "use `permutation_source: seed`")
    warn_permutation_over_memory(spec, ds.X)
    return ds


def warn_permutation_over_memory(spec: DatasetSpec, X, available: int | None = None) -> str | None:
    """Warn (and return the text) when ``spec`` plays a random permutation over data larger than the memory
    available: every row then reads a random page of the memory map. ``order: block-shuffle`` does not warn."""
    import warnings

    import scipy.sparse as sp

    from .seeds import permutation_exceeds_memory

    if getattr(spec, "order", ()):
        return None
    nbytes = (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) if sp.issparse(X) else int(X.nbytes)
    message = permutation_exceeds_memory(nbytes, available)
    if message:
        message = f"dataset {spec.name}: {message}"
        warnings.warn(message, UserWarning, stacklevel=2)
    return message


MISSING_FILE = "missing.json"


def write_missing(root: Path, missing: dict) -> None:
    """Record (or clear) the datasets this results folder could not load: ``missing.json``, read by
    the report. Entries of datasets loaded now are dropped; others from earlier runs are kept."""
    import json

    if not missing:
        return
    path = Path(root) / MISSING_FILE
    old = json.loads(path.read_text()) if path.exists() else {}
    path.write_text(json.dumps({**old, **missing}, indent=1, sort_keys=True) + "\n")


def clear_missing(root: Path, names) -> None:
    import json

    path = Path(root) / MISSING_FILE
    if not path.exists():
        return
    old = json.loads(path.read_text())
    new = {k: v for k, v in old.items() if k not in set(names)}
    if new != old:
        path.write_text(json.dumps(new, indent=1, sort_keys=True) + "\n")


def dataset_hash(ds) -> str:
    sha = (ds.meta or {}).get("sha256")
    if sha:
        return sha
    h = hashlib.sha256()
    for a in (ds.X.data if hasattr(ds.X, "indptr") else ds.X, ds.y):
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def dataset_settings(ds) -> str | None:
    """The hash of how a registered dataset's files are parsed and scaled (None for a built-in,
    whose ``meta["sha256"]`` already hashes its generator spec); see
    :attr:`lsokl.data.registry.DatasetSpec.settings_hash`."""
    from ..data import registry

    name = registry.resolve(ds.name) if ds.name else None
    return registry.specs()[name].settings_hash if name else None


def cell_spec(cell: Cell, ds, version: str) -> dict:
    """A cell's spec (its hash is the record key): the config's settings, the data files' hash and,
    for a registered dataset, the hash of its parse/scale settings, so a record made from another
    reading of the same file is never reused."""
    spec = cell.spec(dataset_hash(ds), version)
    settings = dataset_settings(ds)
    if settings is not None:
        spec["dataset_settings"] = settings
    return spec


def cell_key(cell: Cell, ds, version: str) -> str:
    return stable_hash(cell_spec(cell, ds, version))


def compiled_variant(job, X) -> tuple:
    """What numba compiles a cell's loops for: the module of the learner's class (Projectron and
    Projectron++ share theirs), the task, and the kind of X (dense or CSR, dtype)."""
    from ..learners import registry

    try:
        owner = registry.get(job.spec.get("learner", job.algorithm), job.spec.get("task")).__module__
    except Exception:  # noqa: BLE001 - a learner that cannot be found fails in its worker, saying why
        owner = job.algorithm
    return owner, job.spec.get("task"), type(X).__name__, str(X.dtype)


def first_compiles_first(work: list, data: dict) -> list:
    """The jobs in the order to start them: the first job of each compiled variant
    (:func:`compiled_variant`) first, then the rest as given.

    A worker compiles a learner's loops for a kind of X on its first such cell (numba, 1-8 s,
    cached on disk after); with the grid in config order, both workers of a cold run meet the
    same learner first and compile it twice, side by side. Dealt out variant by variant, each
    compiles different ones, and a worker that later meets a variant the other compiled loads it
    from the cache. Results do not depend on the order (each cell has its own seeds)."""
    heads, rest, seen = [], [], set()
    for item in work:
        job, dkey = item
        variant = compiled_variant(job, data[dkey][0])
        (rest if variant in seen else heads).append(item)
        seen.add(variant)
    return heads + rest


def run_experiment(exp: Experiment, results: str | Path, *, datasets=(), algorithms=(),
                   jobs: int | None = None, backend: str = "loky", scheduler: str | None = None,
                   force: bool = False, retry_failed: bool = False, config_text: str | None = None,
                   progress=None, on_record=None, memory_limit: float | None = None) -> Summary:
    """Run the selected cells of ``exp``; records go to ``results/records`` as they finish.

    ``memory_limit``: bytes one cell may need by its estimate (lsokl.runner.resources), default the memory
    available now; a cell above it is recorded as failed without being started (``inf`` turns the check off).

    ``progress``: an object with ``start(total)``, ``advance(record)``, ``stop()`` (the CLI
    passes a rich progress bar). ``on_record``: called with every record written.
    """
    if backend not in BACKENDS:
        raise ConfigError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if scheduler and backend != "dask":
        backend = "dask"  # a scheduler address only means something to Dask
    cells = exp.select(datasets, algorithms)
    if not cells:
        raise ConfigError("no cell of the config matches the -d/-a filters")
    jobs = jobs or default_jobs()
    version = lsokl_version()
    store = ResultStore(results).ensure()
    if config_text is not None:
        store.save_config(exp.config_hash, config_text)

    from ..data.fetch import MissingFileError

    from .protocols import get as get_protocol

    protocol = get_protocol(exp.protocol)
    loaded, prepared, missing = {}, {}, {}
    for name in dict.fromkeys(c.dataset for c in cells):
        spec = exp.datasets[name]
        try:
            # the protocol reads the data (online: the stream; holdout: train and test splits)
            prep = protocol.load(spec, exp.seed, {**exp.protocol_options,
                                                  "test_fraction": spec.test_fraction})
        except MissingFileError as exc:
            # a dataset whose files are absent (e.g. not in the offline mirror) is skipped and
            # listed in missing.json, so one absent file does not stop the rest of the grid
            missing[name] = str(exc)
            continue
        ds = prep.train
        if spec.permutation_source == "authors":
            need = max(c.permutation for c in cells if c.dataset == name) + 1
            if ds.permutations.shape[0] < need:
                raise DataError(f"dataset {name}: the authors' matrix has {ds.permutations.shape[0]} "
                                f"permutations, the config asks for {need}")
        loaded[name], prepared[name] = ds, prep

    write_missing(store.root, {n: {"message": m, "cells": sum(c.dataset == n for c in cells)}
                               for n, m in missing.items()})
    summary = Summary(selected=0, missing=missing)
    clear_missing(store.root, loaded)  # a dataset that loads now is no longer missing
    data = {name: prep.arrays() for name, prep in prepared.items()}

    # Cells that choose a parameter (``select``) run in a second wave, after their inner cells.
    from . import selection

    preps: dict = {}  # data key -> Prepared, for fresh draws per repetition (made on first use)

    def data_key(cell: Cell) -> str:
        prep = prepared[cell.dataset]
        if prep.draw is None:
            return cell.dataset
        key = f"{cell.dataset}|draw={cell.permutation}"
        if key not in data:
            preps[key] = prep if cell.permutation == 0 else prep.draw(cell.permutation)
            data[key] = preps[key].arrays()
        return key

    first, outer = [], []
    for cell in cells:
        if cell.dataset in missing:
            continue
        dkey = data_key(cell)
        if not cell.select:
            first.append((cell, dkey))
            continue
        for icell, suffix in selection.inner_cells(cell):
            ikey = f"{dkey}|{suffix}"
            if ikey not in data:
                source = preps.get(dkey, prepared[cell.dataset])
                for sfx, prep in selection.splits(cell, source, exp.seed).items():
                    data[f"{dkey}|{sfx}"] = prep.arrays()
            first.append((icell, ikey))
        outer.append((cell, dkey))

    seen: set = set()

    def plan(cell: Cell, dkey: str, **job_extra) -> tuple[Job, str] | None:
        """The job of a cell that must run now (None: finished earlier, kept failed, or a repeat)."""
        spec = cell_spec(cell, loaded[cell.dataset], version)
        key = stable_hash(spec)
        if key in seen:  # the same setting listed twice (e.g. two labels, same learner and params)
            return None
        seen.add(key)
        summary.selected += 1
        old = None if force else store.read(key)
        if old is not None and old["status"] == "ok":
            summary.skipped_ok += 1
            return None
        if old is not None and not retry_failed:
            summary.kept_failed[old["status"]] += 1
            summary.failures.append(old)
            return None
        entropy = tuple(int(x) for x in learner_seed(cell.seed, cell.dataset, cell.learner,
                                                      cell.permutation).entropy)
        return (Job(key=key, spec=spec, algorithm=cell.algorithm, config_hash=exp.config_hash,
                    config_name=exp.name, seed_entropy=entropy, timeout=cell.timeout, **job_extra),
                dkey)

    work = [j for j in (plan(c, d) for c, d in first) if j is not None]
    pending = [(c, k) for c, k in outer if plan(c, k) is not None]  # counted now, run in wave 2
    if progress is not None:
        progress.start(len(work) + len(pending))

    def dispatch(work):
        # cells whose memory estimate exceeds the limit are recorded as failed instead of started
        work, refused = screen_memory(first_compiles_first(work, data), data, protocol, memory_limit,
                                      workers=1 if backend == "dask" else jobs)
        for record in refused:
            record_done(record)
        if not work:
            return
        stream = (run_dask(work, data, jobs, scheduler) if backend == "dask"
                  else run_loky(work, data, min(jobs, len(work))))
        for record in stream:
            record_done(record)

    def record_done(record):
        store.write(record)
        summary.ran[record["status"]] += 1
        if record["status"] != "ok":
            summary.failures.append(record)
        if on_record is not None:
            on_record(record)
        if progress is not None:
            progress.advance(record)

    try:
        dispatch(work)
        second = []
        for cell, dkey in pending:
            inner = selection.inner_cells(cell)
            ds = loaded[cell.dataset]
            recs = [store.read(cell_key(ic, ds, version)) for ic, _ in inner]
            chosen, summary_sel = selection.choose(cell, inner, recs)
            spec = cell_spec(cell, ds, version)
            key = stable_hash(spec)
            entropy = tuple(int(x) for x in learner_seed(cell.seed, cell.dataset, cell.learner,
                                                          cell.permutation).entropy)
            job = Job(key=key, spec=spec, algorithm=cell.algorithm, config_hash=exp.config_hash,
                      config_name=exp.name, seed_entropy=entropy, timeout=cell.timeout,
                      overrides=tuple(sorted((chosen or {}).items())), selection=summary_sel)
            if chosen is None:
                from ..results.record import make_record

                record_done(make_record(
                    key=key, spec=spec, status="failed", config_hash=exp.config_hash,
                    config_name=exp.name, algorithm=cell.algorithm,
                    fields={"holdout": {"selection": summary_sel}},
                    error={"type": "SelectionError", "traceback": None,
                           "message": "no candidate of `select` finished ok in its inner fits (validation cut or CV folds)"}))
                continue
            second.append((job, dkey))
        dispatch(second)
    finally:
        if progress is not None:
            progress.stop()
    return summary
