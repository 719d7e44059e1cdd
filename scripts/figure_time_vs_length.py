#!/usr/bin/env python
"""Training time against the length of the data stream, log-log (BPegasosM ICML 2010 Fig. 3).

    python scripts/figure_time_vs_length.py RESULTS [--out RESULTS] [--title ...]

Reads the holdout records of ``lsokl run`` with ``test_at`` cuts (``holdout.test_curve``: the
training time at each cut, test scoring excluded, plus the whole pass) and draws one line per
algorithm setting, with O(N) and O(N^2) guide lines through the first point of the fastest and
the slowest setting (the paper's Fig. 3 gives curves, no numbers: the guides carry its claim, MRG
and PROJ linear, PegasosM quadratic). Writes ``time-vs-length.png|svg`` and ``.csv`` (with the
fitted log-log slope of each line over its second half) into ``--out``. lsokl's figure module
draws sweeps and test curves but no time-vs-length panel, hence this small script.
"""
from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import numpy as np


def lines(results: Path) -> dict[str, tuple[np.ndarray, np.ndarray, int]]:
    from lsokl.results import ResultStore

    out = {}
    for r in ResultStore(results).records():
        if r.get("status") != "ok":
            continue
        h = r.get("holdout") or {}
        curve = h.get("test_curve") or {}
        n = list(curve.get("n", [])) + [h.get("n_train")]
        t = list(curve.get("train_time_s", [])) + [h.get("train_time_s")]
        if h.get("n_train") is None:
            continue
        p = r.get("params", {})
        label = r["algorithm"] + (f" B={p['budget']}" if p.get("budget") else "")
        stopped = p.get("max_support")
        if stopped:
            label += f" (stops at {stopped} SVs)"
        out[label] = (np.asarray(n, float), np.asarray(t, float), int(r.get("support_size") or 0))
    return dict(sorted(out.items()))


def slope(n: np.ndarray, t: np.ndarray) -> float:
    half = len(n) // 2
    ok = t[half:] > 0
    if ok.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log(n[half:][ok]), np.log(t[half:][ok]), 1)[0])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--title", default="BPegasosM Fig. 3: training time vs data stream length")
    args = ap.parse_args(argv)
    out = args.out or args.results
    data = lines(args.results)
    if not data:
        print(f"no finished holdout records with test_at cuts in {args.results}", file=sys.stderr)
        return 1
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.8, 4.6))
    rows = []
    for label, (n, t, sv) in data.items():
        ax.plot(n, np.maximum(t, 1e-4), marker="o", markersize=3, label=label)
        rows.append({"setting": label, "slope_second_half": round(slope(n, t), 3), "final_support": sv,
                     **{f"t_at_{int(k)}": round(float(v), 4) for k, v in zip(n, t)}})
    firsts = sorted((t[0], n[0]) for n, t, _ in data.values() if t[0] > 0)
    nmax = max(n.max() for n, _, _ in data.values())
    for (t0, n0), power, name in ((firsts[0], 1, "O(N)"), (firsts[-1], 2, "O(N^2)")):
        xs = np.array([n0, nmax])
        ax.plot(xs, t0 * (xs / n0) ** power, "k--", linewidth=0.8, alpha=0.6)
        ax.annotate(name, (xs[-1], t0 * (xs[-1] / n0) ** power), fontsize=8, ha="right", va="bottom")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("length of the data stream (training samples)")
    ax.set_ylabel("training time (s)")
    ax.set_title(args.title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(frameon=False, fontsize=7)
    fig.tight_layout()
    out.mkdir(parents=True, exist_ok=True)
    for ext in ("png", "svg"):
        fig.savefig(out / f"time-vs-length.{ext}", dpi=120)
    keys = sorted({k for r in rows for k in r}, key=lambda k: (not k.startswith("setting"), k))
    with open(out / "time-vs-length.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    for r in rows:
        print(f"{r['setting']}: log-log slope {r['slope_second_half']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
