"""What runs inside a worker process: one cell in, one complete record out.

The cell's protocol (``lsokl.runner.protocols``: online, holdout, ...) does the work; this module
holds what every protocol shares: building the learner, its random source, the compile warm-up,
the divergence check, single-threaded BLAS/numba and the timeout alarm.

Workers never touch the network or the results folder; they receive the data, play the stream
and return the record, which the main process writes. Everything a cell can raise is caught and
becomes a ``failed`` record, so one bad cell never stops a grid.
"""
from __future__ import annotations

import signal
import threading
import time
import warnings
import traceback
from dataclasses import dataclass

import numpy as np

from ..results.record import make_record, now
from .seeds import authors_order, block_shuffle_order, permutation_order

_WARMED: set = set()  # warm_up_key()s already compiled in this process

#: how far a loky worker's resident memory may grow past its size after its first cell before
#: loky replaces it (loky's own default, 300 MB, is a leak heuristic)
WORKER_GROWTH_ALLOWED = 4 << 30


def _allow_worker_growth() -> None:
    """Raise loky's leak threshold in this (worker) process to WORKER_GROWTH_ALLOWED.

    A worker's resident memory grows by design: the pages of the memory-mapped datasets it
    reads count as its own, and it keeps the last streams it built (``Stream.reuse``). Past
    300 MB loky took that for a leak and replaced the worker (twice in a Table 5 run), and the
    new one loaded every compiled loop again (5-10 s each time). joblib has no setting for
    this, so the module constant the worker loop reads is raised; the runner's memory screen
    (``resources.screen_memory``) still refuses cells that would not fit."""
    try:
        from joblib.externals.loky import process_executor
    except ImportError:  # pragma: no cover - another joblib layout: keep its default
        return
    limit = getattr(process_executor, "_MAX_MEMORY_LEAK_SIZE", None)
    if isinstance(limit, int) and limit < WORKER_GROWTH_ALLOWED:
        process_executor._MAX_MEMORY_LEAK_SIZE = WORKER_GROWTH_ALLOWED


_allow_worker_growth()  # runs in each worker as it unpickles its first cell's ``execute``


_WATCHED_PARENT: int | None = None  # the pid this worker dies with (die_with_parent)
#: seconds between the portable watcher's looks at the parent pid
PARENT_POLL_S = 0.5


def die_with_parent(parent_pid: int) -> None:
    """Make this worker process exit as soon as ``parent_pid`` (the `lsokl run` that started it) is gone.

    loky keeps an idle worker for 300 s and never looks at its parent: after ``kill -9`` of a run, its workers
    (~300 MB each, the mapped data) stayed alive for minutes. On Linux the kernel sends this process SIGKILL when
    its parent dies (``prctl(PR_SET_PDEATHSIG)``, which also interrupts a compiled loop that holds the GIL);
    elsewhere a daemon thread polls ``os.getppid()``. The worker writes nothing (the main process writes the
    records), so dying at once loses nothing. No-op in the parent itself and when already set up."""
    import os

    global _WATCHED_PARENT
    if _WATCHED_PARENT == parent_pid or os.getpid() == parent_pid:
        return
    _WATCHED_PARENT = parent_pid
    import sys

    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG = 1
        except (OSError, AttributeError):  # pragma: no cover - no prctl: the thread below does it
            pass
    if os.getppid() != parent_pid:  # the parent died before the line above took effect
        os._exit(1)

    def watch():
        while True:
            time.sleep(PARENT_POLL_S)
            if os.getppid() != parent_pid:
                os._exit(1)

    threading.Thread(target=watch, name="lsokl-parent-watch", daemon=True).start()


def execute_in_worker(parent_pid: int, job: "Job", *arrays) -> dict:
    """:func:`execute` in a pool worker that dies with ``parent_pid`` (:func:`die_with_parent`)."""
    die_with_parent(parent_pid)
    return execute(job, *arrays)


@dataclass(frozen=True)
class Job:
    key: str
    spec: dict  # the canonical cell spec (see Cell.spec)
    algorithm: str
    config_hash: str
    config_name: str
    seed_entropy: tuple  # SeedSequence entropy for the learner's random draws
    timeout: float | None
    overrides: tuple = ()  # (param, value) pairs chosen by `select` (lsokl.runner.selection)
    selection: dict | None = None  # the selection's summary, kept in the record

    def order(self, n: int, permutations, epoch: int = 0, permutation: int | None = None) -> np.ndarray:
        """The stream order, computed where it is used (20 orders of a 5M-row set are 800 MB).

        Epoch 0 is the online protocol's order (so protocols see paired streams); later epochs of
        the holdout protocol draw fresh permutations from the same seed. ``permutation`` asks for
        another repetition's order (default: this cell's)."""
        s = self.spec
        p = s["permutation"] if permutation is None else permutation
        if epoch == 0 and s["permutation_source"] == "authors":
            return authors_order(permutations, p, n)
        name = s["dataset"] if epoch == 0 else f'{s["dataset"]}#epoch{epoch}'
        order = s.get("order")
        if order and order.get("how") == "block-shuffle":
            return block_shuffle_order(s["seed"], name, p, n, int(order["block_rows"]))
        return permutation_order(s["seed"], name, p, n)


class CellTimeout(Exception):
    pass


def execute(job: Job, X, y, permutations=None, X_test=None, y_test=None) -> dict:
    """Run one cell with its protocol (``job.spec["protocol"]``, default online); always return a
    record (status ok, diverged, timeout or failed)."""
    from ..learners.base import ConstantPredictorWarning
    from .protocols import DEFAULT, CellData, Outcome, get

    started, t0 = now(), time.perf_counter()
    n_samples, n_features = X.shape[0], X.shape[1]
    protocol = job.spec.get("protocol", DEFAULT)
    try:
        with _single_threaded(), warnings.catch_warnings():
            # a grid plays bad settings on purpose (a step-size search, CV candidates): the record
            # says whether a pass was a constant predictor (``degenerate``), so the warning meant for
            # a user's own fit is not repeated here for every such cell
            warnings.simplefilter("ignore", ConstantPredictorWarning)
            outcome = get(protocol).run_cell(job, CellData(X, y, permutations, X_test, y_test))
    except CellTimeout:
        outcome = Outcome(status="timeout", error={
            "type": "CellTimeout", "message": f"exceeded the {job.timeout} s timeout", "traceback": None})
    except BaseException as exc:  # noqa: BLE001 - a record must say what went wrong, whatever it was
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        outcome = Outcome(status="failed", error={"type": type(exc).__name__, "message": str(exc),
                                                  "traceback": traceback.format_exc()})
    keep = outcome.status in ("ok", "diverged")
    return make_record(
        key=job.key, spec=job.spec, status=outcome.status, config_hash=job.config_hash,
        config_name=job.config_name, algorithm=job.algorithm, n_samples=n_samples,
        n_features=n_features, trace=outcome.trace if keep else None,
        fields=outcome.fields if keep else None, error=outcome.error, started_at=started,
        wall_s=time.perf_counter() - t0)


def build(job: Job, **overrides):
    from ..learners import registry

    params = {**job.spec["params"], **dict(job.overrides), **overrides}
    return registry.create(job.spec["learner"], job.spec["task"], **params)


def random_source(job: Job, learner):
    """The learner's random draws come from the cell's seed unless the config fixed random_state."""
    from ..compute.randomness import NumpySource

    if getattr(learner, "random_state", None) is not None:
        return None
    return NumpySource(np.random.SeedSequence(list(job.seed_entropy)))


def warm_up(job: Job, X, y) -> None:
    """Compile every code path the cell's timed pass can take, on a short stream, before timing.

    Keyed by the learner, the task, the full parameter set (an integer ``eta: 2`` and a float
    ``eta: 0.2`` are different machine code; ``gamma: .inf`` or a variant string select other
    branches) and the data's layout (array type, dtype, contiguity, writeability, sparse or not),
    so a parameter variant or a dataset stored differently is warmed up too. The warm-up stream is
    the first rows of the same X with labels chosen to force an update at (nearly) every step:
    alternating signs (binary), cycling classes (multi-class), alternating targets 10 apart
    (regression). It is long enough to fill the budget twice, so code that only runs once the
    budget is full (removals, projections, NOGD's switch to its Nystrom phase and the eigen-
    decomposition) is compiled too, whatever the data would have triggered.
    """
    key = warm_up_key(job, X)
    if key in _WARMED:
        return
    budget = job.spec["params"].get("budget") or 0
    m = int(min(X.shape[0], max(64, 4 * int(budget) + 8)))
    rows = np.arange(m, dtype=np.int64)
    warm = build(job)
    warm.run(X, forcing_labels(job.spec["task"], y, m), rows, random_source=random_source(job, warm))
    _WARMED.add(key)


def warm_up_key(job: Job, X) -> tuple:
    import json

    flags = getattr(X, "flags", None)
    layout = (type(X).__name__, str(getattr(X, "dtype", "")), getattr(X, "format", None),
              bool(flags.c_contiguous) if flags is not None else None,
              bool(flags.writeable) if flags is not None else None)
    return (job.spec["learner"], job.spec["task"], json.dumps(job.spec["params"], sort_keys=True,
                                                              default=str), layout)


def forcing_labels(task: str, y, m: int) -> np.ndarray:
    """A copy of ``y`` whose first ``m`` labels make a learner err (and so update) at most steps."""
    out = np.array(y, copy=True)
    i = np.arange(m)
    if task == "binary":
        out[:m] = np.where(i % 2 == 0, 1.0, -1.0)
    elif task == "multiclass":
        n_classes = int(np.max(y)) + 1 if len(y) else 1
        out[:m] = i % max(n_classes, 1)
    else:
        out[:m] = np.where(i % 2 == 0, 10.0, -10.0)
    return out


def diverged(learner, trace, X) -> bool:
    """NaN or inf in the loss curve or in the model's outputs."""
    arrays = [trace.ckpt_time]
    if trace.task == "regression":
        arrays += [np.atleast_1d(trace.squared_loss), trace.ckpt_squared_loss]
    if not all(np.all(np.isfinite(a)) for a in arrays):
        return True
    try:
        outputs = learner.predict if trace.task == "regression" else learner.decision_function
        scores = outputs(X[: min(X.shape[0], 8)])
    except (NotImplementedError, ValueError, AttributeError):
        return False
    return not np.all(np.isfinite(np.asarray(scores, dtype=np.float64)))


class _single_threaded:
    """BLAS and numba on one thread: parallelism is across cells, and timings stay honest."""

    def __enter__(self):
        from threadpoolctl import threadpool_limits

        self._limits = threadpool_limits(limits=1)
        try:
            import numba

            self._numba = numba.get_num_threads()
            numba.set_num_threads(1)
        except Exception:  # numba threading layer unavailable: nothing to limit
            self._numba = None
        return self

    def __exit__(self, *exc):
        self._limits.restore_original_limits()
        if self._numba is not None:
            import numba

            numba.set_num_threads(self._numba)
        return False


class _alarm:
    """SIGALRM-based timeout where possible (POSIX, main thread). Compiled loops hand control
    back at every checkpoint, which is when the alarm can interrupt."""

    def __init__(self, seconds: float | None):
        self.seconds = seconds
        self.armed = (seconds is not None and hasattr(signal, "setitimer")
                      and threading.current_thread() is threading.main_thread())

    def __enter__(self):
        if self.armed:
            self._old = signal.signal(signal.SIGALRM, self._fire)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
        return self

    @staticmethod
    def _fire(signum, frame):
        raise CellTimeout

    def __exit__(self, *exc):
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self._old)
        return False
