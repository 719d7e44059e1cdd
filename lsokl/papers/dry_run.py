"""``lsokl reproduce ITEM --dry-run``: what an item would run and how long it took when it last ran, without
running anything: its configs with their cell counts, its datasets with their provenance, and the time of the
last run from ``run-time.json`` in its folder (written by the long reproductions after they ran) or, where the
folder's local records exist, the sum of their recorded training times."""
from __future__ import annotations

import json
from pathlib import Path

from .declare import Item

#: written into a long item's folder after its run: wall and CPU seconds, cells, the machine's load
RUN_TIME = "run-time.json"


def _hms(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    h, m = divmod(m, 60)
    return f"{h}h {m:02d}m {s:02d}s" if h else f"{m}m {s:02d}s"


def describe(item: Item, root: Path) -> list[str]:
    """The dry run's lines for one item (nothing is run or written)."""
    from ..config import load_config
    from ..packaged import resolve_config

    lines = [f"{item.id}: {item.title} [{item.status}] -> {item.folder or '-'}"]
    if not item.runnable:
        return lines + [f"  not run: {item.reason}"]
    for name in item.configs:
        exp = load_config(resolve_config(name))
        per = {}
        for c in exp.cells:
            per[c.dataset] = per.get(c.dataset, 0) + 1
        lines.append(f"  config {name}: {len(exp.cells)} cells ("
                     + ", ".join(f"{d} {n}" for d, n in per.items()) + ")")
        from ..runner.resources import dry_run_estimates

        refused, largest = dry_run_estimates(exp, exp.cells, None, workers=1)
        if largest:
            lines.append(f"    {largest}")
        lines += [f"    would not start: {r}" for r in refused]
    for d in item.datasets:
        lines.append(f"  data {d.label()}" + (f": {d.note}" if d.note else ""))
    folder = Path(root) / item.folder
    timing = folder / RUN_TIME
    if timing.exists():
        t = json.loads(timing.read_text())
        lines.append(f"  last run: {t['cells']} cells in {_hms(t['wall_s'])} wall, {_hms(t['cpu_s'])} CPU "
                     f"({t.get('when', '?')}; load average {t.get('load_before', '?')} at the start, "
                     f"{t.get('cpus', '?')} CPUs); expect about the CPU time on one free core")
    else:
        recorded = _recorded_seconds(folder)
        if recorded is not None:
            lines.append(f"  recorded cells: {recorded[0]} with {_hms(recorded[1])} of training time in total")
        else:
            lines.append("  no recorded run yet: no time estimate")
    return lines


def _recorded_seconds(folder: Path):
    """(cells, training seconds) of the folder's local records, or None without records."""
    if not (folder / "records").is_dir():
        return None
    from ..results import ResultStore

    n, total = 0, 0.0
    for r in ResultStore(folder).records():
        if r.get("status") == "ok" and r.get("time_s") is not None:
            n, total = n + 1, total + float(r["time_s"])
    return (n, total) if n else None


def write_run_time(folder: Path, wall_s: float, cpu_s: float, load_before: str) -> None:
    """``run-time.json`` after a long item ran (:func:`describe` reads it)."""
    import os
    import time

    from ..results import ResultStore

    cells = sum(1 for r in ResultStore(folder).records() if r.get("status") == "ok")
    Path(folder, RUN_TIME).write_text(json.dumps({
        "cells": cells, "wall_s": round(wall_s, 1), "cpu_s": round(cpu_s, 1),
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "load_before": load_before,
        "load_after": " ".join(f"{x:.1f}" for x in os.getloadavg()), "cpus": os.cpu_count()}, indent=1) + "\n")
