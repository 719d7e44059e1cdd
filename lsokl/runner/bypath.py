"""Data by path for Dask workers: each cell carries a small recipe of its data, not the arrays.

A Dask worker that receives a cell opens the dataset itself, the way the main process did: ``protocol.load`` of
the dataset's config entry (which goes through ``lsokl.data.load``: the cache in ``LSOKL_DATA_DIR``, memory-mapped,
or a fetch from ``LSOKL_DATA_MIRROR`` / the upstream URL when the worker's cache lacks it), then the repetition's
fresh draw or the `select` split the cell runs on. A worker keeps what it opened (:data:`CACHE_SIZE` entries), so
each dataset is opened once per worker, not once per cell, and nothing of the data is pickled or scattered: a
cluster's workers read a shared filesystem's cache (or their own copies) instead of holding a pickled copy each.

The main process still loads every dataset (it needs the file hash for the record keys, the shapes for the
memory screen and the schedule); the recipe carries that hash, and a worker whose copy hashes differently (another
file, another registry) fails the cell with both hashes instead of computing something else under the same key.
Results are identical to loky's: the same code reads the same files.
"""
from __future__ import annotations

import hashlib
import pickle
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

#: datasets (and draws, splits) a worker keeps open; cells of one dataset usually follow each other
CACHE_SIZE = 16


@dataclass(frozen=True)
class Recipe:
    """How to rebuild one data key's arrays in a worker (see the module docstring)."""

    kind: str  # "load" | "draw" | "split"
    args: tuple
    token: str = field(default="", compare=False)

    @classmethod
    def make(cls, kind: str, *args) -> "Recipe":
        return cls(kind, args, hashlib.sha256(pickle.dumps((kind, args), protocol=4)).hexdigest())


def load_recipe(protocol: str, spec, seed: int, options: dict, sha256: str) -> Recipe:
    """A dataset as the protocol loads it; ``sha256``: :func:`dataset_hash` in the main process."""
    return Recipe.make("load", protocol, spec, seed, dict(options), sha256)


def draw_recipe(base: Recipe, repetition: int) -> Recipe:
    """The fresh draw of one repetition (protocols that draw a new sample per repetition)."""
    return Recipe.make("draw", base, int(repetition))


def split_recipe(source: Recipe, cell, seed: int, suffix: str) -> Recipe:
    """One validation / CV split of `select` (lsokl.runner.selection.splits)."""
    return Recipe.make("split", source, cell, int(seed), suffix)


_OPEN: OrderedDict = OrderedDict()  # token -> Prepared, in this worker
OPENED: list = []  # tokens opened in this process, in order (tests count them)


def prepared(recipe: Recipe):
    """The recipe's :class:`lsokl.runner.protocols.Prepared`, opened once per process."""
    hit = _OPEN.get(recipe.token)
    if hit is not None:
        _OPEN.move_to_end(recipe.token)
        return hit
    if recipe.kind == "load":
        from ..errors import DataError
        from .protocols import get

        protocol, spec, seed, options, sha256 = recipe.args
        prep = get(protocol).load(spec, seed, options)
        got = dataset_hash(prep.train)
        if got != sha256:
            import socket

            raise DataError(f"dataset {spec.name} on worker {socket.gethostname()} hashes {got[:16]}..., the "
                            f"main process's copy {sha256[:16]}...: give the workers the same cache "
                            "(LSOKL_DATA_DIR on a shared filesystem) or the same mirror and registry")
    elif recipe.kind == "draw":
        base, repetition = recipe.args
        prep = prepared(base).draw(repetition)
    elif recipe.kind == "split":
        from . import selection

        source, cell, seed, suffix = recipe.args
        prep = selection.splits(cell, prepared(source), seed)[suffix]
    else:  # pragma: no cover - recipes are made by this module
        raise ValueError(f"unknown recipe kind {recipe.kind!r}")
    _OPEN[recipe.token] = prep
    OPENED.append(recipe.token)
    while len(_OPEN) > CACHE_SIZE:
        _OPEN.popitem(last=False)
    return prep


def execute_by_path(job, recipe: Recipe) -> dict:
    """Run one cell on the data the recipe opens; a worker that cannot open it returns a failed record."""
    import traceback

    from ..results.record import make_record
    from .worker import execute

    try:
        arrays = prepared(recipe).arrays()
    except Exception as exc:  # noqa: BLE001 - the record says why this worker could not open the data
        return make_record(key=job.key, spec=job.spec, status="failed", config_hash=job.config_hash,
                           config_name=job.config_name, algorithm=job.algorithm,
                           error={"type": type(exc).__name__, "message": f"opening the data in the worker: {exc}",
                                  "traceback": traceback.format_exc()})
    return execute(job, *arrays)


def dataset_hash(ds) -> str:
    sha = (ds.meta or {}).get("sha256")
    if sha:
        return sha
    h = hashlib.sha256()
    for a in (ds.X.data if hasattr(ds.X, "indptr") else ds.X, ds.y):
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()
