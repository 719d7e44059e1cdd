"""``lsokl reproduce ITEM --dry-run``: what a reproduction would do and roughly how long it takes,
without fetching or running anything.

For each item: its configs' cells per dataset, whether each dataset is here (built in, cached,
or in the mirror folder) or absent (a download, or skipped when unavailable), and an estimated
CPU and wall time. The estimate of a dataset's cells comes from the first of:

1. ``records``: the item's local records (``results/<folder>/records``, git-ignored): the mean
   recorded ``wall_s`` of that dataset's cells, times its cells;
2. ``summary``: the committed ``report/summary.csv`` of the item's folder: the mean ``time_s``
   of that dataset's rows (the learner's time only: loading and scoring are not in it);
3. ``rule`` (an item or dataset never run): :data:`RULE_S_PER_ROW` seconds per training row per
   cell (a budgeted pass at B = 100 on one core of the reference machine), at least
   :data:`RULE_MIN_CELL_S` per cell; rows from the registry (``datasets.yaml``), else
   :data:`RULE_UNKNOWN_ROWS`.

Wall time = CPU time / the workers (``--jobs``, else the machine's default). Estimates are
printed with their source so a reader knows how much to trust them. Each config's cell count and
memory estimate (:func:`lsokl.runner.resources.dry_run_estimates`) are listed, with the datasets'
provenance notes, and the item's last run from ``run-time.json`` in its folder (written by the long
reproductions after they ran: :func:`write_run_time`).
"""
from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from .declare import Item

#: the never-run rule: seconds per training row and cell, the floor per cell, rows when unknown
RULE_S_PER_ROW = 2e-5
RULE_MIN_CELL_S = 0.05
RULE_UNKNOWN_ROWS = 50_000
#: written into a long item's folder after its run: wall and CPU seconds, cells, the machine's load
RUN_TIME = "run-time.json"


@dataclass
class DatasetPlan:
    name: str
    cells: int
    data: str  # "built in", "cached", "in the mirror", "absent: ..."
    cpu_s: float
    source: str  # "records", "summary" or "rule"

    @property
    def present(self) -> bool:
        return not self.data.startswith("absent")


@dataclass
class ItemPlan:
    item: str
    folder: str
    jobs: int
    datasets: list = field(default_factory=list)
    note: str = ""
    lines: list = field(default_factory=list)  # per config: cells and memory estimate; data notes; last run

    @property
    def cells(self) -> int:
        return sum(d.cells for d in self.datasets)

    @property
    def cpu_s(self) -> float:
        return sum(d.cpu_s for d in self.datasets if d.present)

    @property
    def wall_s(self) -> float:
        return self.cpu_s / max(self.jobs, 1)


def data_status(name: str) -> str:
    """Where a dataset would come from: built in, the cache, the mirror folder, or absent."""
    from ..data import builtin, registry
    from ..data.fetch import is_cached, mirror_setting

    if name in getattr(builtin, "BUILTINS", {}):
        return "built in"
    try:
        spec = registry.get(name)
    except Exception:  # noqa: BLE001 - an unknown name is reported as absent, with the reason
        return "absent: not in the dataset registry"
    # the training split decides (an online pass reads nothing else; a missing test split is
    # reported by the run itself)
    split = "train" if "train" in spec.splits else next(iter(spec.splits), None)
    if split is None:
        return "absent: the registry lists no file"
    try:
        if is_cached(name, split):
            return "cached"
    except Exception:  # noqa: BLE001 - an unreadable cache is not a cached dataset
        pass
    mirror = mirror_setting(None)
    if mirror and "://" not in mirror:
        base = Path(mirror).expanduser()
        files = list(spec.splits[split].files)
        if files and all((base / f.mirror).is_file() or any((base / a).is_file() for a in f.mirror_alternatives)
                         for f in files):
            return "in the mirror"
    urls = [f.url for f in spec.splits[split].files]
    if urls and all(urls):
        return "absent: would be downloaded (`lsokl fetch " + name + "`)"
    return "absent: not in the mirror and no download URL (the run skips it)"


def _rows(name: str) -> int:
    from ..data import registry

    try:
        spec = registry.get(name)
    except Exception:  # noqa: BLE001 - built-ins and unknown names: the rule's default
        return RULE_UNKNOWN_ROWS
    split = spec.splits.get("train") or next(iter(spec.splits.values()), None)
    return int(split.n) if split is not None and split.n else RULE_UNKNOWN_ROWS


def _record_times(folder: Path) -> dict:
    """dataset -> [wall seconds of each recorded cell] from local records."""
    from ..results import ResultStore

    out: dict = {}
    for rec in ResultStore(folder):
        t = rec.get("wall_s") or rec.get("time_s")
        if rec.get("status") == "ok" and t:
            out.setdefault(rec["dataset"], []).append(float(t))
    return out


def _summary_times(folder: Path) -> dict:
    """dataset -> mean cell time_s from the committed report/summary.csv (learner time only)."""
    path = folder / "report" / "summary.csv"
    if not path.is_file():
        return {}
    sums: dict = {}
    with path.open() as fh:
        for row in csv.DictReader(fh):
            try:
                t, n = float(row.get("time_s") or "nan"), int(float(row.get("n_ok") or 0))
            except ValueError:
                continue
            if n > 0 and t == t:
                s = sums.setdefault(row["dataset"], [0.0, 0])
                s[0] += t * n
                s[1] += n
    return {d: s / n for d, (s, n) in sums.items() if n}


def plan(item: Item, root: Path = Path("."), jobs: Optional[int] = None) -> ItemPlan:
    """The dry run of one item (nothing fetched, run or written)."""
    from ..config import load_config
    from ..packaged import resolve_config
    from ..runner.backends import default_jobs

    folder = root / item.folder
    out = ItemPlan(item=item.id, folder=item.folder, jobs=jobs or default_jobs())
    if not item.configs:
        out.note = (f"recipe {item.recipe!r} runs its own experiments (no config to count); "
                    "see the item's README/NOTES for its recorded time")
        return out
    recorded = _record_times(folder) if (folder / "records").is_dir() else {}
    summary = _summary_times(folder)
    from ..runner.resources import dry_run_estimates

    counts: dict = {}
    for config in item.configs:
        exp = load_config(resolve_config(config))
        per: dict = {}
        for cell in exp.cells:
            counts[cell.dataset] = counts.get(cell.dataset, 0) + 1
            per[cell.dataset] = per.get(cell.dataset, 0) + 1
        out.lines.append(f"config {config}: {len(exp.cells)} cells ("
                         + ", ".join(f"{d} {n}" for d, n in per.items()) + ")")
        refused, largest = dry_run_estimates(exp, exp.cells, None, workers=1)
        if largest:
            out.lines.append(f"  {largest}")
        out.lines += [f"  would not start: {r}" for r in refused]
    out.lines += [f"data {d.label()}: {d.note}" for d in item.datasets if d.note]
    timing = folder / RUN_TIME
    if timing.is_file():
        t = json.loads(timing.read_text())
        out.lines.append(f"last run: {t['cells']} cells in {_fmt(t['wall_s'])} wall, {_fmt(t['cpu_s'])} CPU "
                         f"({t.get('when', '?')}; load average {t.get('load_before', '?')} at the start, "
                         f"{t.get('cpus', '?')} CPUs); expect about the CPU time on one free core")
    elif not recorded and not summary:
        out.lines.append("no recorded run yet: the times below follow the per-row rule")
    for name, cells in counts.items():
        if recorded.get(name):
            per, source = sum(recorded[name]) / len(recorded[name]), "records"
        elif name in summary:
            per, source = summary[name], "summary"
        else:
            per, source = max(RULE_MIN_CELL_S, RULE_S_PER_ROW * _rows(name)), "rule"
        out.datasets.append(DatasetPlan(name, cells, data_status(name), per * cells, source))
    return out


def _fmt(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    h, m = divmod(m, 60)
    return f"{h}h {m:02d}m {s:02d}s" if h else f"{m}m {s:02d}s"


def render(plans: list) -> str:
    """The dry run as text: one block per item, one line per dataset, totals."""
    lines = []
    for p in plans:
        lines.append(f"{p.item} -> {p.folder}: {p.cells} cells, estimated CPU {_fmt(p.cpu_s)}, "
                     f"wall {_fmt(p.wall_s)} on {p.jobs} worker{'s' if p.jobs != 1 else ''}")
        if p.note:
            lines.append(f"  {p.note}")
        lines += [f"  {line}" for line in p.lines]
        for d in p.datasets:
            cost = f"CPU {_fmt(d.cpu_s)} ({d.source})" if d.present else "skipped unless fetched"
            lines.append(f"  {d.name:<16} {d.cells:>6} cells  {d.data:<16}  {cost}")
    if len(plans) > 1:
        lines.append(f"total: {sum(p.cells for p in plans)} cells, estimated CPU "
                     f"{_fmt(sum(p.cpu_s for p in plans))}, wall {_fmt(sum(p.wall_s for p in plans))}")
    lines.append("estimates: records = this checkout's recorded cell times; summary = the committed "
                 "report's learner times; rule = never run here, "
                 f"{RULE_S_PER_ROW:g} s per row per cell")
    return "\n".join(lines)


def write_run_time(folder: Path, wall_s: float, cpu_s: float, load_before: str) -> None:
    """``run-time.json`` after a long item ran (:func:`plan` reads it)."""
    import os
    import time

    from ..results import ResultStore

    cells = sum(1 for r in ResultStore(folder).records() if r.get("status") == "ok")
    Path(folder, RUN_TIME).write_text(json.dumps({
        "cells": cells, "wall_s": round(wall_s, 1), "cpu_s": round(cpu_s, 1),
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "load_before": load_before,
        "load_after": " ".join(f"{x:.1f}" for x in os.getloadavg()), "cpus": os.cpu_count()}, indent=1) + "\n")
