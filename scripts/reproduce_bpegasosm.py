#!/usr/bin/env python
"""Reproduce BPegasosM Table 1 (Wang, Crammer & Vucetic, ICML 2010): run, then report beside the paper.

    python scripts/reproduce_bpegasosm.py [--jobs N] [--results DIR] [--skip-run] [--large]

Runs configs/bpegasosm-table1.yaml (and, with --large, configs/bpegasosm-table1-large.yaml: the 10^6-point
synthetic runs) into results/bpegasosm-table1/, then writes there:
  table1.md / table1.csv   every cell: ours (best width by test accuracy, and width chosen on a 10% validation
                           cut), the published mean +- std, the difference and whether it is within tolerance;
  NOTES.md                 what ran, the choices the paper leaves open, and an entry for every cell off tolerance;
  curves-<dataset>.png     test accuracy against training points n for the synthetic sets, with the published
                           full-size value drawn where it lies (n = 2M / 10M).
Tolerance (spec section 9): USPS and LETTER |ours - paper| <= max(2 published std, 1.5 points); the synthetic sets
run at reduced n, so there the checks are the ordering {PROJ, MRG} > {RAND, SMAL} and PROJ/MRG within 1.5 points
of the published value at the largest n run.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
PAPER_NAMES = {"usps": "USPS", "letter-uci": "LETTER", "covtype": "COVERTYPE", "waveform": "WAVEFORM",
               "checkerboard": "CHECKERB"}
ALGOS = {"pegasos": "PegasosM", "prjtrn++": "PRJTRN++", "bpm-rand": "BPM+RAND", "bpm-smal": "BPM+SMAL",
         "bpm-proj": "BPM+PROJ", "bpm-mrg": "BPM+MRG"}
FULL_SIZE = {"usps", "letter-uci"}
PAPER_N = {"waveform": 2_000_000, "checkerboard": 10_000_000}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", type=Path, default=REPO / "results" / "bpegasosm-table1")
    ap.add_argument("--jobs", "-j", type=int)
    ap.add_argument("--skip-run", action="store_true", help="only write the report from the records")
    ap.add_argument("--large", action="store_true", help="also run the 10^6-point synthetic config")
    ap.add_argument("-d", "--dataset", action="append", default=[])
    args = ap.parse_args(argv)
    code = 0
    if not args.skip_run:
        configs = [REPO / "configs" / "bpegasosm-table1.yaml"]
        if args.large:
            configs.append(REPO / "configs" / "bpegasosm-table1-large.yaml")
        lsokl = str(Path(sys.executable).with_name("lsokl"))
        for cfg in configs:
            cmd = [lsokl, "run", str(cfg), "--results", str(args.results)]
            if args.jobs:
                cmd += ["--jobs", str(args.jobs)]
            for d in args.dataset:
                cmd += ["-d", d]
            code = subprocess.call(cmd) or code
    report(args.results)
    return code


# --------------------------------------------------------------------------- records
def load_records(results: Path) -> pd.DataFrame:
    from lsokl.results import ResultStore

    rows = []
    for r in ResultStore(results):
        h = r.get("holdout") or {}
        if r.get("protocol") != "holdout" or h.get("evaluated_on", "test") != "test":
            continue
        label = r["algorithm"]
        base = label.removesuffix("-val")
        p = r["params"]
        sel = h.get("selection") or {}
        sigma = (sel.get("chosen") or {}).get("sigma", p.get("sigma"))
        rows.append({
            "dataset": r["dataset"], "label": label, "algo": base, "by": "validation" if label.endswith("-val") else "grid",
            "B": p.get("budget"), "sigma": sigma, "rep": r["permutation"], "status": r["status"],
            "acc": None if r["value"] is None else 100.0 * r["value"], "time_s": r["time_s"],
            "test_time_s": h.get("test_time_s"), "support": r["support_size"], "n_train": h.get("n_train"),
            "steps": h.get("steps"), "curve": h.get("test_curve"),
        })
    return pd.DataFrame(rows)


def paper_table() -> pd.DataFrame:
    p = pd.read_csv(REPO / "lsokl" / "report" / "paper_tables" / "bpegasosm2010_table1.csv")
    p["B"] = p["B"].map(lambda b: None if b == "none" else int(b))
    return p


def summarise(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (dataset, algorithm, B): best width by test accuracy and the validation choice."""
    out = []
    ok = df[df["status"] == "ok"]
    for (ds, algo, B, _n), grp in ok.groupby(["dataset", "algo", ok["B"].fillna(-1), "n_train"], sort=False):
        B = None if B == -1 else int(B)
        grid = grp[grp["by"] == "grid"]
        row = {"dataset": ds, "algo": algo, "B": B}
        if len(grid):
            means = grid.groupby("sigma")["acc"].agg(["mean", "std", "count"])
            best = means["mean"].idxmax()
            g = grid[grid["sigma"] == best]
            row.update(test_best=means.loc[best, "mean"], test_best_std=means.loc[best, "std"],
                       reps=int(means.loc[best, "count"]), sigma=best,
                       n_train=int(g["n_train"].max()), time_s=g["time_s"].mean(),
                       support=g["support"].mean(), steps=g["steps"].mean(),
                       all_widths="; ".join(f"{s:.3g}: {m:.1f}" for s, m in means["mean"].items()))
        val = grp[grp["by"] == "validation"]
        if len(val):
            row.update(val=val["acc"].mean(), val_std=val["acc"].std(ddof=1) if len(val) > 1 else np.nan,
                       val_sigmas=",".join(f"{s:.3g}" for s in val["sigma"]))
        out.append(row)
    return pd.DataFrame(out)


def attach_paper(summary: pd.DataFrame) -> pd.DataFrame:
    paper = paper_table()
    rows = []
    for _, r in summary.iterrows():
        hit = paper[(paper["dataset"] == PAPER_NAMES.get(r["dataset"])) & (paper["algorithm"] == ALGOS.get(r["algo"]))]
        if r["B"] is not None and not pd.isna(r["B"]):
            hit = hit[hit["B"] == r["B"]]
        else:
            hit = hit[hit["B"].isna()]
        d = dict(r)
        if len(hit) == 1:
            d.update(paper=float(hit["mean"].iloc[0]), paper_std=float(hit["std"].iloc[0]))
            diff = d.get("test_best", np.nan) - d["paper"]
            d["diff"] = diff
            if r["dataset"] in FULL_SIZE:
                tol = max(2 * d["paper_std"], 1.5)
                d["tolerance"] = tol
                d["within"] = bool(abs(diff) <= tol)
                if "val" in d and not pd.isna(d.get("val")):
                    d["val_within"] = bool(abs(d["val"] - d["paper"]) <= tol)
        rows.append(d)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- outputs
def report(results: Path) -> None:
    df = load_records(results)
    if df.empty:
        print(f"no holdout records in {results}")
        return
    table = attach_paper(summarise(df))
    table.to_csv(results / "table1.csv", index=False)
    (results / "table1.md").write_text(markdown(table, df))
    (results / "NOTES.md").write_text(notes(table, df, results))
    curves(df, results)
    print(f"wrote {results}/table1.md, table1.csv, NOTES.md and the curve plots")


def _fmt(m, s=None):
    if m is None or pd.isna(m):
        return "–"
    return f"{m:.1f} ± {s:.1f}" if s is not None and not pd.isna(s) else f"{m:.1f}"


def markdown(table: pd.DataFrame, df: pd.DataFrame) -> str:
    lines = ["# BPegasosM (ICML 2010) Table 1: test accuracy % (mean ± std over repetitions)", "",
             "ours = best width by test accuracy (the width in column σ); val = width chosen on a 10% validation cut "
             "of the training set (USPS, LETTER); paper = published. n = training points we ran (the paper: full "
             "sets, 2M waveform and 10M checkerboard). ✓/✗: within max(2 published std, 1.5) on the full-size sets; "
             "the synthetic sets are at reduced n and are judged by ordering (see NOTES.md).", "",
             "| dataset | algorithm | B | n | ours | val | paper | diff | ok | σ | reps | #SV | train s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    order = {k: i for i, k in enumerate(ALGOS)}
    table = table.assign(_o=table["algo"].map(order), _d=table["dataset"].map(
        {k: i for i, k in enumerate(PAPER_NAMES)})).sort_values(["_d", "_o", "B", "n_train"], na_position="first")
    for _, r in table.iterrows():
        ok = "" if "within" not in r or pd.isna(r.get("within")) else ("✓" if r["within"] else "✗")
        B = "–" if pd.isna(r["B"]) else int(r["B"])
        n = int(r["n_train"]) if not pd.isna(r.get("n_train")) else "–"
        diff = "" if pd.isna(r.get("diff")) else format(r["diff"], "+.1f")
        sigma = "" if pd.isna(r.get("sigma")) else format(r["sigma"], ".3g")
        support = "" if pd.isna(r.get("support")) else format(r["support"], ".0f")
        secs = "" if pd.isna(r.get("time_s")) else format(r["time_s"], ".2f")
        lines.append(
            f"| {PAPER_NAMES.get(r['dataset'], r['dataset'])} | {ALGOS.get(r['algo'], r['algo'])} | {B} | {n} | "
            f"{_fmt(r.get('test_best'), r.get('test_best_std'))} | {_fmt(r.get('val'), r.get('val_std'))} | "
            f"{_fmt(r.get('paper'), r.get('paper_std'))} | {diff} | {ok} | {sigma} | {r.get('reps', '')} | "
            f"{support} | {secs} |")
    paper = paper_table()
    ran = set(table["dataset"].map(PAPER_NAMES))
    missing = sorted(set(paper["dataset"]) - ran)
    if missing:
        lines += ["", f"Not run here: {', '.join(missing)} (see NOTES.md)."]
    lines += ["", "All widths (σ: mean test accuracy) per cell are in table1.csv (column all_widths)."]
    return "\n".join(lines) + "\n"


def notes(table: pd.DataFrame, df: pd.DataFrame, results: Path) -> str:
    lines = ["# Notes on the BPegasosM Table 1 reproduction", "",
             "## What ran",
             f"- Records: {len(df)} test cells ({int((df['status'] == 'ok').sum())} ok) in {results.name}/records "
             "(not committed).",
             "- Protocol (spec BUDGETED_PEGASOS.md section 6): λ = 1e-4, one pass over a permutation of the training "
             "set, test with the final model, attributes z-scored with training statistics, ball projection on, "
             "γ ∈ {1, 4, 16, 64}/d (σ = sqrt(d/(2c))), 5 repetitions (different permutations; synthetic sets: fresh "
             "training and test draws per repetition).",
             "- Width choice (spec 10.4, not stated in the paper): `ours` = the best width by test accuracy, `val` = "
             "chosen per repetition on a 10% stratified validation cut of the training set (inner fits are recorded "
             "cells).",
             f"- Machine: {_cpu_model()}, 2 cores shared with 7 other sessions (load average 16-35 during the "
             f"2026-11-23 runs; {os.getloadavg()[0]:.0f} when this report was written), so training times are "
             "only indicative; the whole reproduction did not fit the issue's 20-minute target under that load.",
             ""]
    synth = df[df["dataset"].isin(PAPER_N)]
    if len(synth):
        lines += ["## Synthetic sets at reduced n",
                  f"- waveform / checkerboard ran n = {', '.join(sorted({f'{int(n):,}' for n in synth['n_train']}))} "
                  "training points (paper: 2M / 10M), 20K fresh test points per repetition; the learning curve "
                  "(curves-*.png) also scores the test set at n = 10^4 on the same pass. PegasosM is stopped at "
                  "10,000 SVs there (the paper stopped it after 3000 s: 53K / 63K SVs) and ran 2 repetitions.",
                  ""]
        lines += ordering_checks(table)
    full = table[table["dataset"].isin(FULL_SIZE) & table["within"].notna()] if "within" in table else table[:0]
    lines += ["## Summary",
              f"- Full-size cells (USPS, LETTER) run: {len(full)}; within tolerance: {int(full['within'].sum())} "
              "(best width by test accuracy).", ""]
    present = {(r["dataset"], r["algo"], None if pd.isna(r["B"]) else int(r["B"])) for _, r in table.iterrows()}
    absent = [f"{PAPER_NAMES[ds]} {ALGOS[a]}" + ("" if B is None else f" B={B}")
              for ds in ("usps", "letter-uci", "waveform", "checkerboard")
              for a in ALGOS if a != "prjtrn++"
              for B in ((None,) if a == "pegasos" else (100, 500)) if (ds, a, B) not in present]
    no_val = sorted({PAPER_NAMES[r["dataset"]] for _, r in table.iterrows()
                     if r["dataset"] in FULL_SIZE and r["algo"] != "pegasos" and pd.isna(r.get("val"))})
    one_width = [f"{PAPER_NAMES[r['dataset']]} {ALGOS[r['algo']]}" + ("" if pd.isna(r["B"]) else f" B={int(r['B'])}")
                 for _, r in table.iterrows() if isinstance(r.get("all_widths"), str) and ";" not in r["all_widths"]]
    lines += ["## What did not run (time on the loaded machine), so is missing from table1.md",
              f"- Cells not run at all: {', '.join(absent) or 'none'} (and PRJTRN++, COVERTYPE: below).",
              f"- Validation-chosen width not run for: {', '.join(no_val) or 'none'}; PegasosM's width is never "
              "chosen on a validation cut (the test-best width is reported).",
              f"- Cells run at a single width (so 'best width' is a fixed choice, made beforehand from the spec's "
              f"prototype): {', '.join(one_width) or 'none'}.",
              "- waveform / checkerboard: no 10^6 or 10^7 run (configs/bpegasosm-table1-large.yaml is written for "
              "them, with B = 500).",
              "- Cells with fewer than 5 repetitions show their count in the reps column.", ""]
    lines += ["## Cells outside tolerance (full-size sets: |ours - paper| > max(2 std, 1.5))"]
    off = table[(table["dataset"].isin(FULL_SIZE)) & (table.get("within") == False)]  # noqa: E712
    if off.empty:
        lines.append("- none")
    for _, r in off.iterrows():
        lines.append(
            f"- {PAPER_NAMES[r['dataset']]} {ALGOS.get(r['algo'], r['algo'])} B={'–' if pd.isna(r['B']) else int(r['B'])}: "
            f"ours {r['test_best']:.1f} vs paper {r['paper']:.1f} ± {r['paper_std']:.1f} (diff {r['diff']:+.1f}). "
            f"Widths tried (σ: acc): {r.get('all_widths')}. " + explain(r))
    lines += ["", "## Not reproduced here",
              "- COVERTYPE: not in the offline data mirror (the config lists it; the run reports it missing; "
              "`lsokl fetch covtype` downloads it where there is a network).",
              "- PRJTRN++ (Projectron++ with its threshold tuned to end at B SVs, DOGMA's multi-class version): not "
              "implemented yet.",
              ""]
    return "\n".join(lines) + "\n"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine()


def explain(r) -> str:
    algo = r["algo"]
    if algo in ("bpm-rand", "bpm-smal"):
        return ("Removal rows have large published std (up to 4) and depend on the width through which SVs survive; "
                "weak evidence either way (spec section 9).")
    if algo == "pegasos":
        return "PegasosM here is run to the end of the pass (no 3000 s stop on USPS/LETTER)."
    if algo == "bpm-mrg":
        return ("Merging is well below its level at the narrow widths (see the widths): when k(x_m, x_n) is nearly 0 "
                "the surrogate S(h) of eq. 21 is flat inside [0, 1] with its mass at the two ends, so the golden "
                "search (which assumes one maximum) can return a mid-segment z far from both points; the paper's "
                "best width need not be in our 4-point grid's best, and the paper's selection rule is unknown. "
                "Not tried for lack of time: a finer width grid, merge_objective='exact'.")
    return "See the width column: the paper's width selection rule is not stated."


def ordering_checks(table: pd.DataFrame) -> list[str]:
    lines = ["### Ordering checks on the synthetic sets ({PROJ, MRG} > {RAND, SMAL}; paper's values at full n)"]
    for ds in PAPER_N:
        for B in (100, 500):
            sub = table[(table["dataset"] == ds) & (table["B"] == B)]
            sub = sub[sub["n_train"] == sub["n_train"].max()].set_index("algo")  # the largest n run
            if not {"bpm-proj", "bpm-mrg", "bpm-rand", "bpm-smal"} <= set(sub.index):
                continue
            good = min(sub.loc["bpm-proj", "test_best"], sub.loc["bpm-mrg", "test_best"])
            bad = max(sub.loc["bpm-rand", "test_best"], sub.loc["bpm-smal", "test_best"])
            gaps = {a: sub.loc[a, "test_best"] - sub.loc[a, "paper"] for a in ("bpm-proj", "bpm-mrg")}
            lines.append(
                f"- {PAPER_NAMES[ds]} B={B} (n = {int(sub['n_train'].max()):,}): min(PROJ, MRG) = {good:.1f} "
                f"{'>' if good > bad else '<='} max(RAND, SMAL) = {bad:.1f} ({'holds' if good > bad else 'FAILS'}); "
                f"PROJ {gaps['bpm-proj']:+.1f}, MRG {gaps['bpm-mrg']:+.1f} points from the published full-n value "
                f"({'within' if max(abs(g) for g in gaps.values()) <= 1.5 else 'outside'} 1.5).")
    lines.append("")
    return lines


def curves(df: pd.DataFrame, results: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paper = paper_table()
    for ds in PAPER_N:
        sub = df[(df["dataset"] == ds) & (df["status"] == "ok") & (df["by"] == "grid")]
        if sub.empty:
            continue
        budgets = [B for B in (100, 500) if (sub["B"] == B).any()]
        fig, axes = plt.subplots(1, len(budgets), figsize=(5.5 * len(budgets) + 0.5, 4.2), sharey=True,
                                 squeeze=False)
        axes = axes[0]
        for ax, B in zip(axes, budgets):
            for algo, name in ALGOS.items():
                g = sub[(sub["algo"] == algo) & ((sub["B"] == B) if algo != "pegasos" else sub["B"].isna())]
                if g.empty:
                    continue
                best = g.groupby("sigma")["acc"].mean().idxmax()  # the width of the table's cell
                pts = {}
                for c in g[g["sigma"] == best]["curve"]:
                    if c:
                        for n, v in zip(c["n"], c["test_value"]):
                            pts.setdefault(n, []).append(100 * v)
                if not pts:
                    continue
                ns = sorted(pts)
                line, = ax.plot(ns, [np.mean(pts[n]) for n in ns], marker="o", label=f"{name} (σ={best:.3g})")
                hit = paper[(paper["dataset"] == PAPER_NAMES[ds]) & (paper["algorithm"] == name)]
                hit = hit[hit["B"] == B] if algo != "pegasos" else hit[hit["B"].isna()]
                if len(hit):
                    ax.plot([PAPER_N[ds]], [hit["mean"].iloc[0]], marker="*", markersize=12, linestyle="none",
                            color=line.get_color())
            ax.set_xscale("log")
            ax.set_xlabel("training points n")
            ax.set_title(f"{PAPER_NAMES[ds]}, B = {B} (★ = published at n = {PAPER_N[ds]:,})")
            ax.grid(alpha=0.3)
        axes[0].set_ylabel("test accuracy %")
        axes[-1].legend(fontsize=7, loc="lower right")
        fig.tight_layout()
        fig.savefig(results / f"curves-{ds}.png", dpi=110)
        plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
