"""The order cells start in: longest first, by an estimated cost, so the last cells to finish are short ones.

A grid's cells differ by three orders of magnitude in time (Table 5: an unbudgeted OGD pass over kddcup99 takes
~10 s, a budgeted pass over german 2 ms). Workers take the next cell in the order given; started in config order,
the longest cells came last and ran alone at the end (16 workers: 56 % efficiency). Longest-processing-time-first
list scheduling bounds the makespan by 4/3 of the optimum and, with many short cells, comes close to sum/J.

The estimate of a cell (:func:`estimate_costs`), in order of trust:

1. finished cells of the same dataset, learner and task (an earlier run in the same results folder, or the
   step-size search's cells in ``RESULTS/search``, which run the same learners over the same data): their
   measured ``wall_s`` per unit of the model below, times this cell's model;
2. finished cells of other learners of the same kind (random features, budget, unbudgeted) on the same
   dataset: a dataset's duplicates, sparsity and width move every learner of a kind alike;
3. finished cells of the same learner, then of its kind, on other datasets (counted with d, since a record does
   not keep its data's non-zeros);
4. the model alone, in units of the median rate of everything measured (or 1 when nothing is).

The model (:func:`model_cost`) counts the work of one pass from n, the (non-zero) features per row and the
parameters the memory estimate already reads (``lsokl.runner.resources``): n x d x D for random features,
n x d x B for a budget, n^2 x d / 8 for an unbudgeted support set that grows with the mistakes.

The first ``jobs`` cells to start are of distinct compiled variants where possible
(:func:`compiled_variant`): a cold numba cache then compiles each once, not side by side.
Results never depend on the order (every cell has its own seeds and record).
"""
from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from statistics import median


#: work of one kernel evaluation beside its d multiply-adds (the exp, the loop), in multiply-adds
KERNEL_OPS = 16.0


def row_width(X) -> float:
    """Features a row touches: d for dense data, the mean non-zeros per row for sparse data."""
    n, d = int(X.shape[0]), int(X.shape[1])
    nnz = getattr(X, "nnz", None)
    if nnz is not None and n:
        return max(float(nnz) / n, 1.0)
    return float(max(d, 1))


def family(learner) -> str:
    """Which branch of :func:`model_cost` counts this learner: features, budget, unbudgeted or batch."""
    try:
        D = getattr(learner, "n_components_", None)
    except Exception:  # noqa: BLE001 - a property that validates parameters
        D = None
    if D is not None or getattr(learner, "n_fourier", None) is not None or (
            getattr(learner, "rho_f", None) is not None and getattr(learner, "budget", None)):
        return "features"
    if getattr(learner, "budget", None) is not None and getattr(learner, "budgeted", True):
        return "budget"
    return "unbudgeted" if hasattr(learner, "run") else "batch"


def model_cost(learner, n: int, width: float, n_outputs: int = 1) -> float:
    """Work of one pass, in arbitrary units (see the module docstring)."""
    n, m = float(max(n, 1)), float(max(n_outputs, 1))
    D = None
    try:
        D = getattr(learner, "n_components_", None)
    except Exception:  # noqa: BLE001 - a property that validates parameters
        D = None
    if D is None and getattr(learner, "n_fourier", None) is not None:
        D = learner.n_fourier
    if D is None and getattr(learner, "rho_f", None) is not None and getattr(learner, "budget", None):
        D = float(learner.rho_f) * float(learner.budget)
    if D is not None:
        return n * width * float(D) + n * float(D) * m
    budget = getattr(learner, "budget", None)
    if budget is not None and getattr(learner, "budgeted", True):
        return n * float(budget) * (width + KERNEL_OPS + m)
    if hasattr(learner, "run"):  # unbudgeted: the support set grows with the updates
        return n * n * (width + KERNEL_OPS + m) / 8.0
    return n * width * 32.0  # a batch learner: a few passes over the data


def _learner(spec: dict, overrides=()):
    from ..learners import registry

    params = {**spec.get("params", {}), **dict(overrides or ())}
    return registry.create(spec["learner"], spec["task"], **params)


def _n_outputs(task: str, y) -> int:
    if task != "multiclass" or y is None:
        return 1
    try:
        import numpy as np

        return int(np.max(y)) + 1 if len(y) else 1
    except Exception:  # noqa: BLE001 - a label array we cannot read: one output
        return 1


class History:
    """Measured cells: (dataset, learner, task) -> [(learner instance, n_samples, n_features, wall_s, rates by
    row width)]; the rates :meth:`rate` derives are cached until a cell is added."""

    def __init__(self):
        self.cells: dict[tuple, list[tuple]] = defaultdict(list)
        self.learners: set = set()  # (learner, task) with at least one timing
        self.families: dict = {}  # (learner, task) -> family()
        self._learners: dict = {}
        self._cache: dict = {}

    def add(self, record: dict) -> bool:
        """A finished cell's record (only ``ok`` records with a positive ``wall_s`` count); True if it counted."""
        try:
            if record.get("status") != "ok" or not record.get("wall_s") or record["wall_s"] <= 0:
                return False
            n, d = int(record["n_samples"]), int(record["n_features"])
            params = record.get("params") or {}
            key = (record["learner"], record["task"], json.dumps(params, sort_keys=True, default=str))
            if key not in self._learners:
                self._learners[key] = _learner(record)
            learner = self._learners[key]
        except Exception:  # noqa: BLE001 - a record from another version or a learner gone: not a timing
            return False
        self.cells[(record["dataset"], record["learner"], record["task"])].append(
            (learner, n, d, float(record["wall_s"]), {}))  # the last: rates by row width, filled when asked
        self.learners.add((record["learner"], record["task"]))
        self.families[(record["learner"], record["task"])] = family(learner)
        self._cache = {}  # rates are recomputed when asked (a few medians)
        return True

    @classmethod
    def from_folders(cls, folders) -> "History":
        """The ok records of these results folders (``<folder>/records/*.json``); absent folders are skipped."""
        h = cls()
        for folder in folders:
            records = Path(folder) / "records"
            if not records.is_dir():
                continue
            for p in records.glob("*.json"):
                try:
                    h.add(json.loads(p.read_text()))
                except (OSError, ValueError):
                    continue
        return h

    @staticmethod
    def _rate(cells, width=None) -> float | None:
        """Median wall_s per model unit; ``width``: the row width to count with (None: each cell's d)."""
        rates = []
        for learner, n, d, wall, memo in cells:
            w = float(d) if width is None else width
            if w not in memo:
                cost = model_cost(learner, n, w)
                memo[w] = wall / cost if cost > 0 and math.isfinite(cost) else None
            if memo[w] is not None:
                rates.append(memo[w])
        return median(rates) if rates else None

    def rate(self, dataset: str, learner: str, task: str, width: float, kind: str | None = None
             ) -> tuple[float | None, bool]:
        """(rate, same): wall_s per model unit for a cell of ``learner`` on ``dataset`` (row ``width``), from
        the closest measured cells: this dataset and learner; this dataset and learners of the same ``kind``
        (:func:`family`; a dataset's duplicates, sparsity and width move every learner alike); then this learner
        on other datasets; then its kind on other datasets. same = True when counted on this dataset (with its
        row width), False when counted with each cell's d."""
        key = ("rate", dataset, learner, task, width, kind)
        if key in self._cache:
            return self._cache[key]
        out: tuple[float | None, bool] = (None, False)
        same = self.cells.get((dataset, learner, task))
        if same:
            out = (self._rate(same, width), True)
        if out[0] is None and kind is not None:
            kin = [c for (ds, lr, t), cs in self.cells.items()
                   if ds == dataset and t == task and self.families.get((lr, t)) == kind for c in cs]
            if kin:
                out = (self._rate(kin, width), True)
        if out[0] is None:
            other = [c for (ds, lr, t), cs in self.cells.items() if lr == learner and t == task for c in cs]
            if other:
                out = (self._rate(other), False)
        if out[0] is None and kind is not None:
            kin = [c for (ds, lr, t), cs in self.cells.items()
                   if t == task and self.families.get((lr, t)) == kind for c in cs]
            if kin:
                out = (self._rate(kin), False)
        self._cache[key] = out
        return out

    def default_rate(self) -> float:
        if ("default",) not in self._cache:
            every = [c for cs in self.cells.values() for c in cs]
            self._cache[("default",)] = self._rate(every) or 1.0
        return self._cache[("default",)]


def history_folders(root: str | Path) -> list[Path]:
    """Where a run into ``root`` finds timings: ``root`` itself, its step-size search (``root/search``) and, for
    a search folder, the table folder above it."""
    root = Path(root)
    folders = [root, root / "search"]
    if root.name == "search":
        folders.append(root.parent)
    return folders


def estimate_costs(work: list, data: dict, history: History | None = None) -> list[float]:
    """The estimated seconds (or model units, where nothing was measured) of each (job, data key) in ``work``."""
    history = history or History()
    fallback = None
    cache: dict = {}
    out = []
    for job, dkey in work:
        spec = job.spec
        X, y = data[dkey][0], data[dkey][1] if len(data[dkey]) > 1 else None
        overrides = tuple(getattr(job, "overrides", None) or ())
        key = (dkey, spec.get("learner"), spec.get("task"),
               json.dumps(spec.get("params", {}), sort_keys=True, default=str), overrides)
        if key not in cache:
            n, d, width = int(X.shape[0]), float(max(int(X.shape[1]), 1)), row_width(X)
            try:
                learner = _learner(spec, overrides)
            except Exception:  # noqa: BLE001 - a learner that cannot be built fails fast in its worker
                cache[key] = 0.0
                out.append(0.0)
                continue
            m = _n_outputs(spec.get("task"), y)
            rate, same = history.rate(str(spec.get("dataset", str(dkey).split("|")[0])), spec.get("learner"),
                                      spec.get("task"), width, family(learner))
            if rate is None:
                if fallback is None:
                    fallback = history.default_rate()
                rate, same = fallback, not history.cells  # nothing measured: the model with the row width
            cache[key] = rate * model_cost(learner, n, width if same else d, m)
        out.append(cache[key])
    return out


def _group_key(job, dkey) -> tuple:
    spec = job.spec
    return (dkey, spec.get("learner"), spec.get("task"),
            json.dumps(spec.get("params", {}), sort_keys=True, default=str),
            tuple(getattr(job, "overrides", None) or ()))


class LongestFirst:
    """The cells still to start, handed out longest first by their current estimate.

    :meth:`pop` gives the next cell; :meth:`finished` adds a finished cell's record to the history, so the cells
    of its dataset and learner still waiting are estimated again from what it took (the first OGD pass over a
    dataset says more about the other 19 than any model). Cells with the same estimate inputs form one group,
    re-estimated only when their history changes; :meth:`pop` is O(groups). Thread-safe (loky asks for the next
    cell from its callback thread while the main thread records finished ones)."""

    def __init__(self, work: list, data: dict, history: History | None = None, jobs: int = 1):
        import threading

        self.data, self.history, self.jobs = data, history or History(), jobs
        self._lock = threading.Lock()
        self.groups: dict[tuple, list] = {}
        for i, item in enumerate(work):
            self.groups.setdefault(_group_key(*item), []).append((i, item))
        self.cost: dict[tuple, float] = {}
        self._stale = set(self.groups)
        self._started_variants: set = set()
        self.left = len(work)

    def _refresh(self) -> None:
        stale = [g for g in self._stale if self.groups.get(g)]
        if stale:
            firsts = [self.groups[g][0][1] for g in stale]
            for g, c in zip(stale, estimate_costs(firsts, self.data, self.history)):
                self.cost[g] = c
        self._stale.clear()

    def finished(self, record: dict) -> None:
        with self._lock:
            if self.history.add(record):
                # its dataset's and its learner's waiting cells (and, through the fallbacks, possibly any)
                self._stale.update(g for g, items in self.groups.items() if items)

    def pop(self):
        """The next (job, data key), or None when all were handed out."""

        with self._lock:
            if not self.left:
                return None
            self._refresh()
            live = [g for g, items in self.groups.items() if items]
            # the first `jobs` cells: distinct compiled variants where the grid has them (a cold cache compiles
            # each once, not side by side in two workers)
            if len(self._started_variants) < self.jobs and self.jobs > 1:
                fresh = [g for g in live if compiled_variant(self.groups[g][0][1][0], self.data[g[0]][0])
                         not in self._started_variants]
                if fresh:
                    live = fresh
            best = max(live, key=lambda g: (self.cost.get(g, 0.0), -self.groups[g][0][0]))
            i, item = self.groups[best].pop(0)
            self.left -= 1
            if len(self._started_variants) < self.jobs:
                self._started_variants.add(compiled_variant(item[0], self.data[item[1]][0]))
            return item

    def __iter__(self):
        while True:
            item = self.pop()
            if item is None:
                return
            yield item


def longest_first(work: list, data: dict, history: History | None = None, jobs: int = 1) -> list:
    """``work`` in decreasing estimated cost (ties keep their given order), the first ``jobs`` of distinct
    compiled variants where the grid has that many: the order :class:`LongestFirst` gives when no cell finishes
    in between."""
    return list(LongestFirst(work, data, history, jobs))


def replay(durations: list[float], workers: int) -> float:
    """The makespan of cells of these durations started in this order on ``workers`` workers, each taking the
    next cell when it is free (what loky and Dask do with one cell per task)."""
    import heapq

    free = [0.0] * max(workers, 1)
    heapq.heapify(free)
    end = 0.0
    for t in durations:
        start = heapq.heappop(free)
        heapq.heappush(free, start + t)
        end = max(end, start + t)
    return end


def replay_queue(queue: LongestFirst, duration, workers: int, record=None, lookahead: int = 0) -> float:
    """The makespan of a :class:`LongestFirst` queue on ``workers`` workers, with cells finishing (and feeding
    the queue's history) as the clock passes their end. ``duration(item)``: the cell's seconds; ``record(item)``:
    its record for :meth:`LongestFirst.finished`. ``lookahead``: cells taken from the queue before a worker is
    free (joblib pre-dispatches 2 x workers; they are chosen with what was known then)."""
    import heapq
    from collections import deque

    running: list = []  # (end, seq, item)
    ahead: deque = deque()
    clock, end, seq = 0.0, 0.0, 0
    free = max(workers, 1)

    def take():
        item = queue.pop()
        if item is not None:
            ahead.append(item)
        return item is not None

    while True:
        while len(ahead) < lookahead + free and take():
            pass
        while free and ahead:
            item = ahead.popleft()
            seq += 1
            heapq.heappush(running, (clock + duration(item), seq, item))
            free -= 1
        if not running:
            return end
        clock, _, item = heapq.heappop(running)
        end = max(end, clock)
        free += 1
        if record is not None:
            queue.finished(record(item))


def compiled_variant(job, X) -> tuple:
    """What numba compiles a cell's loops for: the module of the learner's class (Projectron and
    Projectron++ share theirs), the task, and the kind of X (dense or CSR, dtype)."""
    from ..learners import registry

    try:
        owner = registry.get(job.spec.get("learner", job.algorithm), job.spec.get("task")).__module__
    except Exception:  # noqa: BLE001 - a learner that cannot be found fails in its worker, saying why
        owner = job.algorithm
    return owner, job.spec.get("task"), type(X).__name__, str(X.dtype)
