"""Resource estimates made before anything is allocated: how big a grid is, how much memory a cell needs.

Two guards, both cheap and both run before any work starts:

* :func:`settings_count` / :data:`DEFAULT_MAX_CELLS` (defined in :mod:`lsokl.config`, re-exported here): the config
  layer counts a grid (settings x permutations, and the inner cells of a ``select``) before it expands it, so
  ``permutations: 1000000000`` is refused with its count instead of filling memory with cells (``lsokl run
  --max-cells N`` raises the limit).
* :func:`cell_memory`: what one cell will hold at its peak, from its parameters and the dataset's shape (features
  x samples, D x d, B^2, kernel blocks), compared with the memory available now; a cell above it is not started but
  recorded as failed with the estimate and what dominates it (``lsokl run --memory-limit GIB`` overrides).

Adding a learner or a protocol: declare the estimate next to the code that allocates, with one method.

* A learner class may define ``memory_estimate(self, n_samples, n_features, n_outputs) -> dict[str, float]``:
  named parts in bytes, e.g. ``{"Fourier matrix U (d x D)": 8.0 * d * D}``. It is called on an unfitted instance
  built from the cell's parameters, so it must only read parameters. ``n_outputs`` is the number of classes for
  multi-class tasks, 1 otherwise. Without it, :func:`default_learner_estimate` guesses from the common parameters
  (``budget``, ``n_fourier``/``n_components_``, an unbudgeted support set growing to n).
* A protocol module may define ``memory_estimate(spec, n_samples, n_features, n_outputs) -> dict[str, float]`` for
  what it allocates beside the learner (``spec`` is the cell spec); holdout-style protocols add their prediction
  buffers this way.

The data itself is not counted: the main process has already loaded it and workers read it memory-mapped. The
estimates are deliberately simple upper-ish bounds of the big arrays (float64, 8 bytes per value); they exist to
catch settings that are off by orders of magnitude, not to budget memory to the last MB.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

from ..compute.memory import BLOCK_ROWS, F64, default_learner_estimate  # noqa: F401 (re-exported)
from ..config import DEFAULT_MAX_CELLS, grid_too_large, settings_count  # noqa: F401  (the config layer counts)


def gib(n: float) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"


def available_memory() -> int | None:
    """Bytes of memory available to a new process now (Linux MemAvailable, psutil where installed), or None."""
    try:
        import psutil

        return int(psutil.virtual_memory().available)
    except Exception:  # noqa: BLE001 - not installed or unsupported platform
        pass
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


# --- memory per cell ------------------------------------------------------------------------------------------------

def cell_memory(learner, n_samples: int, n_features: int, n_outputs: int = 1, protocol=None,
                spec: dict | None = None) -> dict[str, float]:
    """Named parts (bytes) of one cell's peak memory: the learner's own estimate (or the default) plus the
    protocol's."""
    own = getattr(learner, "memory_estimate", None)
    parts = dict(own(n_samples, n_features, n_outputs) if callable(own)
                 else default_learner_estimate(learner, n_samples, n_features, n_outputs))
    proto = getattr(protocol, "memory_estimate", None) if protocol is not None else None
    if callable(proto):
        parts.update(proto(spec or {}, n_samples, n_features, n_outputs))
    return parts


#: the share of the available memory the cells running at once may plan to use; the rest is for the data, the
#: main process and whatever else runs on the machine
SAFETY_SHARE = 0.8


def default_limit(workers: int = 1) -> tuple[float | None, str]:
    """(bytes one cell may need, how that was decided) from the memory available now and the concurrent cells."""
    avail = available_memory()
    if avail is None:
        return None, "unknown"
    workers = max(int(workers), 1)
    share = f"{SAFETY_SHARE:.0%} of the {gib(avail)} available now"
    return SAFETY_SHARE * avail / workers, share + (f", shared by {workers} parallel cells" if workers > 1 else "")


def too_much_memory(parts: dict[str, float], limit: float | None, how: str = "the limit") -> str | None:
    """A one-line refusal when the parts add up to more than ``limit`` bytes, naming the biggest part."""
    total = sum(parts.values())
    if limit is None or total <= limit:
        return None
    biggest = max(parts, key=parts.get)
    return (f"needs about {gib(total)} of memory (largest: {biggest}, {gib(parts[biggest])}), more than the "
            f"{gib(limit)} a cell may use ({how}); not started. Lower the parameter that sets that size, or "
            "override with --memory-limit GIB.")


def n_outputs_of(task: str, y) -> int:
    if task != "multiclass":
        return 1
    try:
        return int(max(int(y.max()) + 1, 1)) if len(y) else 1
    except (TypeError, ValueError):
        return 1


def screen_memory(work: list, data: dict, protocol, limit: float | None, workers: int = 1) -> tuple[list, list]:
    """Split ``work`` ((Job, data key) pairs; ``data[key]`` = the arrays a worker receives, X and y first) into the
    cells to run and failed records of the cells whose estimate exceeds ``limit`` bytes (default:
    :func:`default_limit` for ``workers`` cells at once; ``inf`` = no check). One estimate per distinct (data,
    learner, parameters): building an unfitted learner allocates nothing."""
    how = "--memory-limit"
    if limit is None:
        limit, how = default_limit(min(workers, len(work)))
    if limit is None or math.isinf(limit) or not work:
        return work, []
    from ..config import stable_hash
    from ..learners import registry
    from ..results.record import make_record, now

    keep, refused, verdicts = [], [], {}
    for job, dkey in work:
        spec = job.spec
        X, y = data[dkey][0], data[dkey][1]
        n, d = int(X.shape[0]), int(X.shape[1])
        params = {**spec["params"], **dict(getattr(job, "overrides", None) or ())}
        key = (dkey, spec["learner"], spec["task"], stable_hash(params))
        if key not in verdicts:
            try:
                learner = registry.create(spec["learner"], spec["task"], **params)
                parts = cell_memory(learner, n, d, n_outputs_of(spec["task"], y), protocol, spec)
                verdicts[key] = too_much_memory(parts, limit, how)
            except Exception:  # noqa: BLE001 - a learner that cannot even be built fails in its worker, saying why
                verdicts[key] = None
        why = verdicts[key]
        if why is None:
            keep.append((job, dkey))
            continue
        name = str(dkey).split("|")[0]
        refused.append(make_record(
            key=job.key, spec=spec, status="failed", config_hash=job.config_hash, config_name=job.config_name,
            algorithm=job.algorithm, n_samples=n, n_features=d, started_at=now(), wall_s=0.0,
            error={"type": "MemoryEstimateError", "message": f"{name} ({n:,} x {d:,}): {why}", "traceback": None}))
    return keep, refused


@dataclass(frozen=True)
class CellEstimate:
    """One setting's memory estimate for ``--dry-run``: ``parts`` (name -> bytes) from the registry's declared
    shape ``n`` x ``d``, or ``why`` there is none before the data is loaded."""

    dataset: str
    setting: str
    n: int | None = None
    d: int | None = None
    parts: dict | None = None
    why: str | None = None

    @property
    def total(self) -> float | None:
        return None if self.parts is None else float(sum(self.parts.values()))

    def line(self) -> str:
        """``dataset (n x d) setting: 1.2 GiB (largest: ...)``, or why no estimate is shown."""
        if self.parts is None:
            return f"{self.dataset} {self.setting}: no estimate before loading ({self.why})"
        biggest = max(self.parts, key=self.parts.get) if self.parts else "-"
        return (f"{self.dataset} ({self.n:,} x {self.d:,}) {self.setting}: {gib(self.total)}"
                + (f" (largest: {biggest}, {gib(self.parts[biggest])})" if self.parts else ""))


def cell_estimates(exp, cells) -> list[CellEstimate]:
    """The memory estimate of every distinct setting of ``cells`` (one per dataset, learner, task, parameters; the
    permutations of a setting share it), from the registry's declared shapes (n of the train split, or train +
    test for ``split: all``; ``max_samples``; d) or, for a built-in generator drawn afresh, the config's n and the
    width of two drawn rows. What ``--dry-run`` prints per cell."""
    from ..data import registry
    from ..errors import LsoklError
    from ..learners import registry as learners
    from . import protocols

    try:
        specs = registry.specs()
        protocol = protocols.get(getattr(exp, "protocol", protocols.DEFAULT))
    except LsoklError as exc:
        return [CellEstimate(c.dataset, c.setting(), why=str(exc)) for c in cells]
    out, seen, widths = [], set(), {}
    for c in cells:
        key = (c.dataset, c.learner, c.task, c.params)
        if key in seen:
            continue
        seen.add(key)
        spec = specs.get(c.dataset)
        draws = dict(dict(c.protocol_options).get("draws") or ())
        if draws:  # a built-in generator drawn afresh: n from the config, d from two drawn rows
            if c.dataset not in widths:
                widths[c.dataset] = _generator_width(c.dataset)
            n, d, m = int(draws["n_train"]), widths[c.dataset], 1
            if d is None:
                out.append(CellEstimate(c.dataset, c.setting(), why="the generator's width is unknown"))
                continue
        elif spec is None or spec.d is None or spec.splits["train"].n is None:
            out.append(CellEstimate(c.dataset, c.setting(), why="the registry declares no n or no d; the run "
                                    "estimates it from the loaded arrays"))
            continue
        else:
            n, d = spec.splits["train"].n, spec.d
            if c.split in ("all", "test") and "test" in spec.splits and spec.splits["test"].n:
                n = spec.splits["test"].n + (n if c.split == "all" else 0)
            m = (spec.classes or 1) if c.task == "multiclass" else 1
        if c.max_samples:
            n = min(n, c.max_samples)
        try:
            parts = cell_memory(learners.create(c.learner, c.task, **dict(c.params)), n, d, m, protocol,
                                {**dict(c.protocol_options), "learner": c.learner, "task": c.task})
        except Exception as exc:  # noqa: BLE001 - the run reports a learner that cannot be built
            out.append(CellEstimate(c.dataset, c.setting(), n, d, why=f"the learner cannot be built: {exc}"))
            continue
        out.append(CellEstimate(c.dataset, c.setting(), n, d, parts))
    return out


def dry_run_estimates(exp, cells, limit: float | None = None, workers: int = 1) -> tuple[list[str], str | None]:
    """For ``--dry-run``: (one line per setting that would be refused, a line on the largest estimate), from
    :func:`cell_estimates`. Settings without a declared shape are not estimated here; the run estimates them from
    the loaded arrays."""
    how = "--memory-limit"
    if limit is None:
        limit, how = default_limit(workers)
    refused, largest = [], None
    for est in cell_estimates(exp, cells):
        if est.parts is None:
            continue
        total = est.total
        if largest is None or total > largest[0]:
            largest = (total, est.dataset, est.setting)
        why = None if limit is None or math.isinf(limit) else too_much_memory(est.parts, limit, how)
        if why:
            refused.append(f"{est.dataset} ({est.n:,} x {est.d:,}) {est.setting}: {why}")
    summary = None
    if largest is not None:
        summary = (f"largest memory estimate: {gib(largest[0])} ({largest[1]} {largest[2]}); a cell may use "
                   + (f"{gib(limit)} ({how})" if limit is not None and not math.isinf(limit) else "any amount"))
    return refused, summary


def _generator_width(name: str) -> int | None:
    """Features of a built-in generator's rows (two rows drawn), or None if it cannot be drawn."""
    try:
        from .. import data

        return int(data.load(name, n=2, seed=0).X.shape[1])
    except Exception:  # noqa: BLE001 - the run reports it
        return None
