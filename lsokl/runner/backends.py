"""Where cells run: joblib/loky processes on this machine, or a Dask cluster.

Both yield records as cells finish (in completion order), so the caller can write each one
the moment it exists. loky memory-maps large arrays into its workers; Dask workers open the
datasets themselves, by path (lsokl.runner.bypath), once per worker.
"""
from __future__ import annotations

import os
from collections.abc import Iterator

from ..errors import LsoklError
from .worker import Job, execute, execute_in_worker

BACKENDS = ("loky", "dask")
#: seconds to wait for a Dask scheduler to answer before saying it cannot be reached
CONNECT_TIMEOUT = 20.0


class SchedulerError(LsoklError, OSError):
    """A Dask scheduler that cannot be reached (or Dask that is not installed)."""


def connect(address: str):
    """A ``distributed.Client`` of the scheduler at ``address``, or one line saying why there is none."""
    from distributed import Client

    try:
        return Client(address, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SchedulerError(f"cannot reach the Dask scheduler at --scheduler {address} within "
                             f"{CONNECT_TIMEOUT:g} s ({why}); is it running, and is the address "
                             f"tcp://HOST:PORT as `dask scheduler` printed it?") from None


def default_jobs() -> int:
    return max(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1, 1)


def run_loky(work: list[tuple[Job, str]], data: dict, jobs: int) -> Iterator[dict]:
    from joblib import Parallel, delayed

    if jobs == 1:  # in-process: no pickling, simplest tracebacks
        for job, ds in work:
            yield execute(job, *data[ds])
        return
    parallel = Parallel(n_jobs=jobs, backend="loky", return_as="generator_unordered",
                        batch_size=1, pre_dispatch="2*n_jobs")
    me = os.getpid()  # workers die with this process, however it ends (kill -9 included)
    yield from parallel(delayed(execute_in_worker)(me, job, *data[ds]) for job, ds in work)


def run_dask(work: list[tuple[Job, str]], recipes: dict, jobs: int,
             scheduler: str | None = None) -> Iterator[dict]:
    """Cells on a Dask cluster (``scheduler``) or a local one of ``jobs`` processes. Each task carries its data's
    recipe (:mod:`lsokl.runner.bypath`): workers open the datasets by path, once each, instead of receiving
    pickled arrays."""
    try:
        from distributed import LocalCluster, as_completed
    except ImportError:  # pragma: no cover - depends on the install
        raise SchedulerError("the dask backend needs `pip install lsokl[dask]`") from None
    from ..results.record import make_record
    from .bypath import execute_by_path

    cluster = None
    if scheduler:
        client = connect(scheduler)
    else:
        cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = connect(cluster.scheduler_address)
    try:
        # the scheduler starts higher priorities first: the runner's order (longest first)
        futures = {client.submit(execute_by_path, job, recipes[ds], pure=False, key=f"cell-{job.key}",
                                 priority=len(work) - i): job
                   for i, (job, ds) in enumerate(work)}
        for fut in as_completed(futures):
            job = futures[fut]
            if fut.status == "error":  # the worker died or could not unpickle: still record it
                exc = fut.exception()
                yield make_record(key=job.key, spec=job.spec, status="failed",
                                  config_hash=job.config_hash, config_name=job.config_name,
                                  algorithm=job.algorithm,
                                  error={"type": type(exc).__name__, "message": str(exc),
                                         "traceback": None})
            else:
                yield fut.result()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
