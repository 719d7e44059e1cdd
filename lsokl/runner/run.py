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
from ..results.store import ResultsLock
from .backends import BACKENDS, default_jobs, run_dask, run_loky
from . import bypath
from .bypath import dataset_hash  # noqa: F401 (re-exported)
from .resources import screen_memory
from .schedule import History, LongestFirst, compiled_variant, history_folders  # noqa: F401
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
    notes: list[str] = field(default_factory=list)  # choices the run made on its own (e.g. an order), said once

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

    if getattr(spec, "order", ()) or not getattr(spec, "order_given", True):
        return None  # block-shuffle; or no `order` in the config: the runner chooses (choose_order)
    nbytes = _data_bytes(X)
    message = permutation_exceeds_memory(nbytes, available)
    if message:
        message = f"dataset {spec.name}: {message}"
        warnings.warn(message, UserWarning, stacklevel=2)
    return message


def _data_bytes(X) -> int:
    import scipy.sparse as sp

    return int(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) if sp.issparse(X) else int(X.nbytes)


def choose_order(spec: DatasetSpec, X, available: int | None = None) -> tuple[dict, str] | None:
    """The stream order the runner picks for a dataset whose config says no ``order``: when its rows
    (``X``, a memory map of the cache) are larger than the memory available now, a random permutation
    would read a random page for nearly every row, so ``block-shuffle`` (whole blocks of rows, read in
    one stretch, in a seeded random order) is chosen. Returns (the cells' ``order``, the sentence the
    run prints) or None (a permutation, or the config's own order)."""
    from ..protocol_options import DEFAULT_BLOCK_ROWS
    from .seeds import permutation_exceeds_memory

    if spec.order or spec.order_given or spec.permutation_source == "authors":
        return None
    nbytes = _data_bytes(X)
    if permutation_exceeds_memory(nbytes, available) is None:
        return None
    if available is None:
        from .resources import available_memory

        available = available_memory()
    order = {"block_rows": DEFAULT_BLOCK_ROWS, "how": "block-shuffle", "chosen": "auto"}
    return order, (f"dataset {spec.name}: {nbytes / 2**30:.1f} GiB of data, {available / 2**30:.1f} GiB of memory "
                   f"available: order block-shuffle chosen (blocks of {DEFAULT_BLOCK_ROWS} rows in a seeded random "
                   "order; `order: permutation` in the config keeps a random permutation)")


MISSING_FILE = "missing.json"


def fetch_hint(name: str) -> str:
    """How to get an absent dataset, in the one line `lsokl run` prints and missing.json records."""
    return (f"get it with `lsokl fetch {name}` (its upstream URL) or from a mirror laid out like the shared "
            f"data folder (`lsokl fetch {name} --mirror DIR`, or LSOKL_DATA_MIRROR)")


def write_missing(root: Path, missing: dict) -> None:
    """Record (or clear) the datasets this results folder could not load: ``missing.json``, read by
    the report. Entries of datasets loaded now are dropped; others from earlier runs are kept."""
    import json

    if not missing:
        return
    from ..packaged import portable_paths
    from ..results.store import atomic_write_text

    path = Path(root) / MISSING_FILE
    old = json.loads(path.read_text()) if path.exists() else {}
    # results folders are committed: no machine paths in the messages (the mirror becomes <mirror>)
    missing = {name: {k: portable_paths(v) if isinstance(v, str) else v for k, v in entry.items()}
               if isinstance(entry, dict) else entry for name, entry in missing.items()}
    atomic_write_text(path, json.dumps({**old, **missing}, indent=1, sort_keys=True) + "\n")


def clear_missing(root: Path, names) -> None:
    import json

    path = Path(root) / MISSING_FILE
    if not path.exists():
        return
    old = json.loads(path.read_text())
    new = {k: v for k, v in old.items() if k not in set(names)}
    if new != old:
        from ..results.store import atomic_write_text

        atomic_write_text(path, json.dumps(new, indent=1, sort_keys=True) + "\n")


def dataset_settings(ds) -> str | None:
    """The hash of how a registered dataset's files are parsed and scaled (None for a built-in,
    whose ``meta["sha256"]`` already hashes its generator spec); see
    :attr:`lsokl.data.registry.DatasetSpec.settings_hash`."""
    from ..data import registry

    name = registry.resolve(ds.name) if ds.name else None
    return registry.specs()[name].settings_hash if name else None


def cell_spec(cell: Cell, ds, version: str, order: dict | None = None) -> dict:
    """A cell's spec (its hash is the record key): the config's settings, the data files' hash and,
    for a registered dataset, the hash of its parse/scale settings, so a record made from another
    reading of the same file is never reused. ``order``: the order the runner chose for data larger
    than memory (:func:`choose_order`; a different order is a different cell)."""
    spec = cell.spec(dataset_hash(ds), version)
    if order is not None and not spec.get("order"):
        spec["order"] = dict(order)
    settings = dataset_settings(ds)
    if settings is not None:
        spec["dataset_settings"] = settings
    return spec


def cell_key(cell: Cell, ds, version: str) -> str:
    return stable_hash(cell_spec(cell, ds, version))


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
    store = ResultStore(results).ensure()
    lock = ResultsLock(store.root).acquire()  # one run per results folder (a second one is refused)
    try:
        return _run_locked(exp, store, cells, datasets=datasets, jobs=jobs, backend=backend, scheduler=scheduler,
                           force=force, retry_failed=retry_failed, config_text=config_text, progress=progress,
                           on_record=on_record, memory_limit=memory_limit)
    finally:
        lock.release()


def _run_locked(exp, store, cells, *, datasets, jobs, backend, scheduler, force, retry_failed, config_text,
                progress, on_record, memory_limit) -> Summary:
    version = lsokl_version()
    if config_text is not None:
        store.save_config(exp.config_hash, config_text)

    from ..data.fetch import MissingFileError

    from .protocols import get as get_protocol

    protocol = get_protocol(exp.protocol)
    loaded, prepared, missing = {}, {}, {}
    auto_orders, notes = {}, []  # dataset -> the order chosen for data larger than memory (choose_order)
    for name in dict.fromkeys(c.dataset for c in cells):
        spec = exp.datasets[name]
        try:
            # the protocol reads the data (online: the stream; holdout: train and test splits)
            prep = protocol.load(spec, exp.seed, {**exp.protocol_options,
                                                  "test_fraction": spec.test_fraction})
        except MissingFileError as exc:
            # a dataset whose files are absent (e.g. not in the offline mirror) is skipped and
            # listed in missing.json, so one absent file does not stop the rest of the grid
            missing[name] = f"{exc}; {fetch_hint(name)}"
            continue
        ds = prep.train
        if spec.permutation_source == "authors":
            need = max(c.permutation for c in cells if c.dataset == name) + 1
            if ds.permutations.shape[0] < need:
                raise DataError(f"dataset {name}: the authors' matrix has {ds.permutations.shape[0]} "
                                f"permutations, the config asks for {need}")
        loaded[name], prepared[name] = ds, prep
        chosen = choose_order(spec, ds.X)
        if chosen is not None:
            auto_orders[name] = chosen[0]
            notes.append(chosen[1])
            import warnings

            warnings.warn(chosen[1], UserWarning, stacklevel=2)

    write_missing(store.root, {n: {"message": m, "cells": sum(c.dataset == n for c in cells)}
                               for n, m in missing.items()})
    summary = Summary(selected=0, missing=missing, notes=notes)
    clear_missing(store.root, loaded)  # a dataset that loads now is no longer missing
    data = {name: prep.arrays() for name, prep in prepared.items()}
    # what a Dask worker opens instead of receiving the arrays (lsokl.runner.bypath)
    recipes = {name: bypath.load_recipe(exp.protocol, exp.datasets[name], exp.seed,
                                        {**exp.protocol_options, "test_fraction": exp.datasets[name].test_fraction},
                                        dataset_hash(loaded[name]))
               for name in prepared}

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
            recipes[key] = (recipes[cell.dataset] if cell.permutation == 0
                            else bypath.draw_recipe(recipes[cell.dataset], cell.permutation))
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
                    recipes[f"{dkey}|{sfx}"] = bypath.split_recipe(recipes[dkey], cell, exp.seed, sfx)
            first.append((icell, ikey))
        outer.append((cell, dkey))

    seen: set = set()

    def plan(cell: Cell, dkey: str, **job_extra) -> tuple[Job, str] | None:
        """The job of a cell that must run now (None: finished earlier, kept failed, or a repeat)."""
        spec = cell_spec(cell, loaded[cell.dataset], version, auto_orders.get(cell.dataset))
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

    history = None  # timings of finished cells (this folder, its search), read when there is work to order
    queue = None  # the cells of the wave running now, longest first (lsokl.runner.schedule)

    def dispatch(work):
        nonlocal history, queue
        # cells whose memory estimate exceeds the limit are recorded as failed instead of started
        work, refused = screen_memory(work, data, protocol, memory_limit,
                                      workers=1 if backend == "dask" else jobs)
        for record in refused:
            record_done(record)
        if not work:
            return
        ordered = work
        if jobs > 1 and len(work) > 1:  # longest first; one worker: the given order
            if history is None:
                history = History.from_folders(history_folders(store.root))
            queue = LongestFirst(work, data, history, jobs)
            ordered = iter(queue)  # loky takes the next cell as a worker frees: estimates refined meanwhile
        stream = (run_dask(list(ordered), recipes, jobs, scheduler) if backend == "dask"
                  else run_loky(ordered, data, min(jobs, len(work))))
        for record in stream:
            record_done(record)

    def record_done(record):
        store.write(record)
        if queue is not None:  # the waiting cells of its learner are estimated again (and the second wave too)
            queue.finished(record)
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
            order = auto_orders.get(cell.dataset)
            recs = [store.read(stable_hash(cell_spec(ic, ds, version, order))) for ic, _ in inner]
            chosen, summary_sel = selection.choose(cell, inner, recs)
            spec = cell_spec(cell, ds, version, order)
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
