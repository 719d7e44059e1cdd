"""Cells scheduled longest first: Table 5's recorded cell times replayed through the scheduler on J virtual workers.

    python benchmarks/schedule.py [--results results/table5] [--config configs/table5.yaml]
                                  [--workers 2,4,8,16] [--append benchmarks/RESULTS.md]

Reads the records a Table 5 run left (``make reproduce-table5``: RESULTS/search/records, the step-size search, then
RESULTS/records, the table; both git-ignored, so run it once first) and replays each phase's cells, with their
measured ``wall_s``, through list scheduling (every worker takes the next cell when it is free, as loky and Dask do
with one cell per task) in three orders:

* ``before``: config order with the first cell of each compiled variant first (the runner before this change);
* ``longest first``: :class:`lsokl.runner.schedule.LongestFirst` as a run uses it: estimates from the cost model
  (the search: a cold folder) or refined by the search's records (the table), and re-estimated as the replayed
  cells finish, each chosen 2 x J cells ahead of its start (joblib's pre-dispatch);
* ``oracle``: longest first by the true durations (what a perfect estimate would give).

For each J: the makespan, the lower bound max(sum/J, longest cell) and the efficiency (sum/J) / makespan; the
search and the table run one after the other (the table waits for the search's choice), so the whole run's
makespan is their sum. The replay assumes a cell takes as long on J workers as it did when recorded; on a real
machine memory bandwidth and compile warm-ups move the numbers a little, never the order.
"""
from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]


class ShapeOnly:
    """What the scheduler reads of X: shape, dtype and, for sparse data, the non-zeros (from the cached dataset)."""

    def __init__(self, n: int, d: int, like=None):
        self.shape, self.dtype = (n, d), str(getattr(like, "dtype", "float64"))
        if getattr(like, "nnz", None) is not None:
            self.nnz = int(like.nnz * n / max(like.shape[0], 1))


def records(folder: Path) -> list[dict]:
    out = []
    for p in sorted((folder / "records").glob("*.json")):
        rec = json.loads(p.read_text())
        if rec.get("wall_s") is not None:
            out.append(rec)
    return out


def work_items(recs: list[dict], exp):
    from lsokl import data as lsokl_data

    data, work, like = {}, [], {}
    for r in recs:
        dkey = r["dataset"]
        if dkey not in like:  # the cached dataset, memory-mapped: its sparsity, as a real run sees it
            try:
                like[dkey] = lsokl_data.load(dkey, **exp.datasets[dkey].load_options()).X
            except Exception:  # noqa: BLE001 - not cached here: dense, d features
                like[dkey] = None
        data.setdefault(dkey, (ShapeOnly(int(r["n_samples"]), int(r["n_features"]), like[dkey]), None))
        spec = {"learner": r["learner"], "task": r["task"], "dataset": r["dataset"], "params": r["params"]}
        work.append((SimpleNamespace(key=r["key"], algorithm=r["algorithm"], spec=spec, overrides=(),
                                     wall=float(r["wall_s"])), dkey))
    return work, data


def config_order(work, data, exp):
    """The grid's order (datasets, then algorithms as the config lists them, then parameters, then permutations),
    then the runner's former rule: the first cell of each compiled variant first."""
    from lsokl.runner.run import compiled_variant

    ds = {n: i for i, n in enumerate(exp.datasets)}
    al = {n: i for i, n in enumerate(exp.algorithms)}

    def key(item):
        job, _ = item
        s = job.spec
        return (ds.get(s["dataset"], 99), al.get(job.algorithm.split("[")[0], 99),
                json.dumps(s["params"], sort_keys=True, default=str), job.key)

    ordered = sorted(work, key=key)
    heads, rest, seen = [], [], set()
    for item in ordered:
        job, dkey = item
        variant = compiled_variant(job, data[dkey][0])
        (rest if variant in seen else heads).append(item)
        seen.add(variant)
    return heads + rest


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", type=Path, default=ROOT / "results" / "table5")
    ap.add_argument("--config", type=Path, default=ROOT / "configs" / "table5.yaml")
    ap.add_argument("--workers", default="2,4,8,16")
    ap.add_argument("--append", type=Path, help="append the section to this Markdown file (benchmarks/RESULTS.md)")
    args = ap.parse_args(argv)

    from lsokl.config import load_config
    from lsokl.runner.schedule import History, LongestFirst, replay, replay_queue

    exp = load_config(args.config)
    Js = [int(j) for j in args.workers.split(",")]
    phases = [("search", args.results / "search", History()),
              ("table", args.results, History.from_folders([args.results / "search"]))]
    lines, totals = [], {}
    for name, folder, history in phases:
        recs = records(folder)
        if not recs:
            print(f"no records in {folder}/records: run `make reproduce-table5` (or lsokl run) first", file=sys.stderr)
            return 1
        work, data = work_items(recs, exp)
        walls = [j.wall for j, _ in work]
        total, longest = sum(walls), max(walls)
        lines.append(f"\n**{name}**: {len(work)} cells, {total:.1f} s of cell time (sum of `wall_s`), longest "
                     f"cell {longest:.2f} s\n")
        lines.append("| workers | sum/J (s) | bound (s) | before: makespan (eff.) | longest first: makespan (eff.) "
                     "| oracle: makespan (eff.) |")
        lines.append("|---:|---:|---:|---:|---:|---:|")
        for J in Js:
            by_key = {j.key: r for (j, _), r in zip(work, recs)}
            queue = LongestFirst(work, data, copy.deepcopy(history), jobs=J)
            ms = {"before": replay([j.wall for j, _ in config_order(work, data, exp)], J),
                  "longest": replay_queue(queue, lambda it: it[0].wall, J, record=lambda it: by_key[it[0].key],
                                          lookahead=2 * J),
                  "oracle": replay(sorted((j.wall for j, _ in work), reverse=True), J)}
            ideal = total / J
            for k, v in ms.items():
                totals.setdefault((J, k), [0.0, 0.0])
                totals[(J, k)][0] += v
                totals[(J, k)][1] += ideal
            cells = " | ".join(f"{ms[k]:.1f} ({100 * ideal / ms[k]:.0f}%)" for k in ("before", "longest", "oracle"))
            lines.append(f"| {J} | {ideal:.1f} | {max(ideal, longest):.1f} | {cells} |")
    lines.append("\n**whole run** (search, then table):\n")
    lines.append("| workers | before | longest first | oracle |")
    lines.append("|---:|---:|---:|---:|")
    for J in Js:
        lines.append(f"| {J} | " + " | ".join(
            f"{totals[(J, k)][0]:.1f} s ({100 * totals[(J, k)][1] / totals[(J, k)][0]:.0f}%)"
            for k in ("before", "longest", "oracle")) + " |")
    text = "\n".join(lines)
    print(text)
    if args.append:
        import platform
        import subprocess

        rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True).stdout.strip()
        with open(args.append, "a") as fh:
            fh.write(f"\n## Cells scheduled longest first: Table 5 replayed on 2-16 virtual workers "
                     f"(`python benchmarks/schedule.py`)\n\nRevision {rev}, {platform.machine()}; records of one "
                     f"`make reproduce-table5` run (their `wall_s`), replayed as described in the script's "
                     f"docstring. Efficiency = (sum/J) / makespan.\n{text}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
