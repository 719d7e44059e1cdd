"""Protocols: how one cell (dataset x learner x parameters x repetition) becomes one record.

A config picks one with ``protocol:`` (default ``online``). Each protocol is one module here that
offers three things, and adding a protocol is that module plus one line in :data:`PROTOCOLS`:

``OPTIONS``
    the config keys the protocol reads (besides the common ones), with their defaults; the config
    layer validates them and puts the ones that are set into the cell spec (so they enter the key).
``load(spec, seed, protocol_options) -> Prepared``
    runs once per dataset in the main process (never in a worker): reads the data through
    :mod:`lsokl.data` and returns the arrays the workers receive. The online protocol returns the
    stream; holdout returns the training split and the test split, scaled with training statistics.
``run_cell(job, data) -> Outcome``
    runs in a worker: builds the learner (``worker.build``), plays / fits it and measures it.
    Exceptions are caught by the worker, which turns them into a ``failed`` record.
``check_learner(cls) -> str | None``  (optional)
    why a learner class cannot serve this protocol (None when it can); the config is refused before
    anything runs.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field

from ...errors import UnknownNameError

# name -> module (imported when used)
PROTOCOLS: dict[str, str] = {
    "online": "lsokl.runner.protocols.online",
    "holdout": "lsokl.runner.protocols.holdout",
    "approximation": "lsokl.runner.protocols.approximation",
}
DEFAULT = "online"


def get(name: str):
    """The module of protocol ``name``; unknown names suggest the closest."""
    if name not in PROTOCOLS:
        raise UnknownNameError("protocol", name, PROTOCOLS)
    return importlib.import_module(PROTOCOLS[name])


@dataclass
class Prepared:
    """A protocol's data for one dataset, built in the main process by ``load``."""

    train: object  # lsokl.data.Dataset: the rows the learner learns from (with its permutations)
    X_test: object = None
    y_test: object = None
    info: dict = field(default_factory=dict)  # how the test set was made (reported, not keyed)
    draw: object = None  # fresh data per repetition: draw(p) -> Prepared (generated datasets)

    def arrays(self) -> tuple:
        """The positional arrays a worker's ``execute`` receives."""
        return (self.train.X, self.train.y, self.train.permutations, self.X_test, self.y_test)


@dataclass
class CellData:
    """What a worker receives for one dataset (arrays may be memory-mapped or Dask futures' values)."""

    X: object
    y: object
    permutations: object = None
    X_test: object = None
    y_test: object = None


@dataclass
class Outcome:
    """What a protocol hands back to the worker: a status, the online trace if there was a pass,
    and the protocol's own record fields (merged into the record by ``make_record``)."""

    status: str = "ok"
    trace: object = None
    fields: dict = field(default_factory=dict)
    error: dict | None = None
