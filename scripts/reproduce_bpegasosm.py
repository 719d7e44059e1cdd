#!/usr/bin/env python
"""Reproduce BPegasosM Table 1 (Wang, Crammer & Vucetic, ICML 2010): run, then report beside the paper.

    python scripts/reproduce_bpegasosm.py [--jobs N] [--results DIR] [--skip-run] [--large | --ablation]

Runs configs/bpegasosm-table1.yaml (and, with --large, configs/bpegasosm-table1-large.yaml: the 10^6-point
synthetic runs) into results/bpegasosm-table1/ (--ablation: only configs/bpegasosm-table1-ablation.yaml, into
results/bpegasosm-table1-ablation/, summarised in the NOTES), then writes there:
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
# one marker per algorithm in the curves: PRJTRN++'s B = 100 checkerboard line lies on PROJ's and MRG's and was
# hidden under them when every line had the same marker and was opaque
MARKERS = {"pegasos": "o", "prjtrn++": "D", "bpm-rand": "v", "bpm-smal": "^", "bpm-proj": "s", "bpm-mrg": "P"}
FULL_SIZE = {"usps", "letter-uci"}
PAPER_N = {"waveform": 2_000_000, "checkerboard": 10_000_000}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", type=Path, default=REPO / "results" / "bpegasosm-table1")
    ap.add_argument("--jobs", "-j", type=int)
    ap.add_argument("--skip-run", action="store_true", help="only write the report from the records")
    ap.add_argument("--large", action="store_true", help="also run the 10^6-point synthetic config")
    ap.add_argument("--ablation", action="store_true",
                    help="only run configs/bpegasosm-table1-ablation.yaml (into <results>-ablation), then report")
    ap.add_argument("-d", "--dataset", action="append", default=[])
    args = ap.parse_args(argv)
    code = 0
    if not args.skip_run:
        configs = [(REPO / "configs" / "bpegasosm-table1.yaml", args.results)]
        if args.large:
            configs.append((REPO / "configs" / "bpegasosm-table1-large.yaml", args.results))
        if args.ablation:
            configs = [(REPO / "configs" / "bpegasosm-table1-ablation.yaml",
                        args.results.with_name(args.results.name + "-ablation"))]
        lsokl = str(Path(sys.executable).with_name("lsokl"))
        for cfg, into in configs:
            cmd = [lsokl, "run", str(cfg), "--results", str(into)]
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
            "sv_on_target": (h.get("threshold_search") or {}).get("within_tolerance"),
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
            eligible = means
            if algo == "prjtrn++":
                # a width whose threshold search did not end near B SVs gives PRJTRN++ more (or fewer)
                # SVs than the budgeted rows: choose among the widths that reached B when there are any
                reached = grid.groupby("sigma")["sv_on_target"].agg(lambda v: bool(v.fillna(False).all()))
                if reached.any():
                    eligible = means[reached.reindex(means.index).fillna(False).astype(bool)]
                row["sv_on_target"] = bool(reached.any())
            best = eligible["mean"].idxmax()
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
             "ours = best width by test accuracy (the width in column σ); val = one width per (dataset, algorithm, "
             "B) chosen on a 10% validation cut of the training set (USPS, LETTER), with its own ✓/✗; paper = "
             "published. n = training points we ran (the paper: full sets, 2M waveform and 10M checkerboard; "
             "PegasosM: the points trained before its stop in brackets). ✓/✗: within max(2 published std, 1.5) on "
             "the full-size sets; the synthetic sets are at reduced n and are judged by ordering and by PROJ/MRG "
             "within 1.5 at the largest n (see NOTES.md). #SV: mean final support size.", "",
             "| dataset | algorithm | B | n | ours | val | paper | diff | ok | σ | reps | #SV | train s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    order = {k: i for i, k in enumerate(ALGOS)}
    table = table.assign(_o=table["algo"].map(order), _d=table["dataset"].map(
        {k: i for i, k in enumerate(PAPER_NAMES)})).sort_values(["_d", "_o", "B", "n_train"], na_position="first")
    for _, r in table.iterrows():
        ok = "" if "within" not in r or pd.isna(r.get("within")) else ("✓" if r["within"] else "✗")
        B = "–" if pd.isna(r["B"]) else int(r["B"])
        n = f"{int(r['n_train']):,}" if not pd.isna(r.get("n_train")) else "–"
        if not pd.isna(r.get("steps")) and not pd.isna(r.get("n_train")) and r["steps"] < r["n_train"]:
            n += f" ({r['steps']:,.0f})"
        val = _fmt(r.get("val"), r.get("val_std"))
        if not pd.isna(r.get("val_within", np.nan)) and val != "–":
            val += " ✓" if r["val_within"] else " ✗"
        diff = "" if pd.isna(r.get("diff")) else format(r["diff"], "+.1f")
        sigma = "" if pd.isna(r.get("sigma")) else format(r["sigma"], ".3g")
        support = "" if pd.isna(r.get("support")) else format(r["support"], ".0f")
        secs = "" if pd.isna(r.get("time_s")) else format(r["time_s"], ".2f")
        lines.append(
            f"| {PAPER_NAMES.get(r['dataset'], r['dataset'])} | {ALGOS.get(r['algo'], r['algo'])} | {B} | {n} | "
            f"{_fmt(r.get('test_best'), r.get('test_best_std'))} | {val} | "
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
             "(not committed); validation fits are recorded cells too and are not counted here.",
             "- Protocol (spec BUDGETED_PEGASOS.md section 6): λ = 1e-4, one pass over a permutation of the training "
             "set, test with the final model, attributes z-scored with training statistics, ball projection on, "
             "γ ∈ {1, 4, 16, 64}/d (σ = sqrt(d/(2c))), 5 repetitions (different permutations; synthetic sets: fresh "
             "training and test draws per repetition).",
             "- Width choice (spec 10.4; the paper optimised the width 'for each combination of data set, algorithm "
             "and budget' without saying on what): `ours` = the best width by test accuracy; `val` = one width per "
             "(dataset, algorithm, B) chosen on a 10% stratified validation cut of the training set, on repetition "
             "0's permutation (`select: {sigma: grid, by: validation, once: true}`), then fitted in every repetition.",
             "- PRJTRN++ (spec 4, bpl's `prjtrn++`): the threshold η is searched by bisection on log η (≤ 12 runs, "
             "permutation 1's stream) to end within max(2, 0.02B) of B SVs and reused for every permutation; the "
             "table's width is the best among the widths whose search reached B (a width where it did not gives "
             "PRJTRN++ a different model size than the budgeted rows), and #SV is the mean final support size.",
             ""]
    timing = results / "timing.md"
    if timing.exists():
        lines += [timing.read_text().strip(), ""]
    synth = df[df["dataset"].isin(PAPER_N)]
    if len(synth):
        ns = {ds: sorted({int(n) for n in synth[synth["dataset"] == ds]["n_train"].dropna()}) for ds in PAPER_N}
        lines += ["## Synthetic sets at reduced n",
                  "- Training points run (paper: 2M waveform, 10M checkerboard): "
                  + "; ".join(f"{ds} n = {', '.join(f'{n:,}' for n in v)}" for ds, v in ns.items() if v)
                  + ". 20K fresh test points per repetition; the learning curves (curves-*.png) also score the test "
                  "set at n = 10^4 (and 10^5 in the 10^6 runs) on the same pass.",
                  "- Widths: the two the prototype of spec section 9 found best (waveform γ = 1/d, 4/d; checkerboard "
                  "γ = 16/d, 64/d); PRJTRN++ ran the first of them only, with 2 repetitions (its threshold search "
                  "repeats for every fresh draw, 60-90 s per cell at n = 10^5). PegasosM is stopped at 10,000 SVs "
                  "(the paper stopped it after 3000 s, at 53K / 63K SVs) and ran 2 repetitions.",
                  "- n = 10^7 (the paper's checkerboard size) did not run: one MRG pass at B = 100 costs about 10x "
                  "the 10^6 pass, beyond this session's time on the shared machine.",
                  ""]
        lines += ordering_checks(table)
    full = table[table["dataset"].isin(FULL_SIZE) & table["within"].notna()] if "within" in table else table[:0]
    val_ok = full["val_within"].dropna() if "val_within" in full else pd.Series(dtype=bool)
    lines += ["## Summary",
              f"- Full-size cells (USPS, LETTER) run: {len(full)}; within tolerance: {int(full['within'].sum())} "
              f"(best width by test accuracy); with the validation-chosen width: {int(val_ok.sum())} of "
              f"{len(val_ok)} budgeted cells.", ""]
    present = {(r["dataset"], r["algo"], None if pd.isna(r["B"]) else int(r["B"])) for _, r in table.iterrows()}
    absent = [f"{PAPER_NAMES[ds]} {ALGOS[a]}" + ("" if B is None else f" B={B}")
              for ds in ("usps", "letter-uci", "waveform", "checkerboard")
              for a in ALGOS
              for B in ((None,) if a == "pegasos" else (100, 500)) if (ds, a, B) not in present]
    no_val = sorted({f"{PAPER_NAMES[r['dataset']]} {ALGOS[r['algo']]} B={int(r['B'])}" for _, r in table.iterrows()
                     if r["dataset"] in FULL_SIZE and r["algo"] not in ("pegasos", "prjtrn++")
                     and pd.isna(r.get("val"))})
    lines += ["## What did not run",
              f"- Cells not run at all: {', '.join(absent) or 'none'} (COVERTYPE: below).",
              f"- Validation-chosen width missing for: {', '.join(no_val) or 'none'}. PegasosM's and PRJTRN++'s "
              "widths are not chosen on a validation cut (the test-best width is reported).",
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
    lines += [""] + investigation() + ablations(results)
    lines += ["## Not reproduced here",
              "- COVERTYPE: not in the offline data mirror (the config lists it; the run reports it missing; "
              "`lsokl fetch covtype` downloads it where there is a network).",
              ""]
    return "\n".join(lines) + "\n"


def investigation() -> list[str]:
    """What the search for a bug behind the B = 500 merge/projection misses found (2026-11-23)."""
    from lsokl.learners.pegasos.bpegasos import NEAR_DUPLICATE_S

    guard = f"{NEAR_DUPLICATE_S:.0e}".replace("e-0", "e-")  # 1e-4, as the spec writes its 1e-8
    return [
        "## Investigation of the merge / projection misses (the previous run's LETTER and USPS B = 500 cells)",
        "- Checked against the spec's exact checks (tests/learners/test_bpegasos.py, all pass): the incremental "
        "‖w‖² equals Σα^{iT}Kα^i after every step for every strategy (so the ball projection sees the right norm); "
        "the projection equals the least-squares solve and its downdated inverse equals inv(K_RR), and M stays "
        "inv(K) through appends and removals; the smallest SV is the brute-force argmin; the golden h matches a "
        "dense grid; the merge partner, h and L equal a brute force over every partner (also with the partner "
        "pruning added in this session, which only skips partners whose lower bound on L exceeds the best so far). "
        "On full LETTER/checkerboard runs the tracked ‖w‖² matched the exact value to 4 digits at every 500 steps "
        "and the projection's M matched inv(K) to 1e-4 relative (cond(K) up to 2e7). No bug was found.",
        "- LETTER B = 500 (PROJ 83.7, MRG 84.0 before): those cells had run at σ = 2.83 (γ = 1/d) only. At γ = 4/d "
        "they reach the published level (table above); the misses were the missing widths.",
        "- Checkerboard PROJ (-2.6 at n = 10^5 before) had run at σ = 0.125 only; σ = 0.25 (γ = 16/d) is better "
        "(table above).",
        "- Merging at the narrow widths collapses in some repetitions (e.g. LETTER B = 500 σ = 0.707: 37% in one "
        "of five permutations, 76-78% in the others; USPS B = 500 σ = 2.83: 38% and 87%). Cause, found by "
        "inspecting a collapsed run: a merged SV whose coefficients are spread thinly over many classes becomes "
        "the smallest SV m and stays so. The paper's surrogate (eq. 21) sums m_i = α_m^i/(α_m^i+α_n^i) over the "
        "classes, and every class where the fresh partner n has no coefficient contributes m_i = 1, so a1 ≈ 24 "
        "against a2 ≈ 2 on LETTER: the search puts z on x_m (h ≈ 1) and the merge deletes the fresh partner's "
        "whole weight (L = 3.125 at t = 8000, while the exact degradation's best merge, h = 0, costs 0.271, the "
        "size of m itself). From then on every maintenance event throws away a fresh SV, the model keeps only "
        "the last few hundred points and accuracy falls below removal. This follows the paper's (and "
        "BudgetedSVM's) rule, so the default is unchanged; `merge_objective: exact` (spec ablation) does not "
        "collapse (single permutations, run by hand during the investigation: LETTER B = 500 σ = 0.707, the "
        "permutation where the surrogate gave 30.1%, reaches 78.8% with the exact objective). The paper's best "
        "widths are the wider ones, where this does not happen.",
        "- Ablations at the best width, by hand on 2-3 permutations (configs/bpegasosm-table1-ablation.yaml runs "
        "them systematically; not run in this session for time): USPS MRG B = 500 σ = 5.66 gives 91.4 with the "
        "surrogate, 91.4 with the exact objective and 91.4 without the ball projection; USPS PROJ B = 100 σ = 11.3 "
        "gives 90.0 with the ball projection and 89.3 without. So neither choice explains the 1.5-2.5 point USPS "
        "gaps of PROJ/MRG; at σ = 5.66 the nearest partner of the smallest SV has k ≈ 0.08 in 256 dimensions, so "
        "a merge removes almost as much as a removal (L = 3.98 vs 4.08 for removing m).",
        f"- The PROJ cells run with the near-duplicate guard s < {guard} "
        "(`lsokl.learners.pegasos.bpegasos.NEAR_DUPLICATE_S`). The spec's 1e-8 (spec 3.3) was raised in commit b0d9b55: "
        "on dense 2-d data at B = 300-500 the tracked K^-1 lost every digit with it (checkerboard B = 500 fell to "
        "68%). Re-running the PROJ cells with the raised guard moved their accuracies by at most 0.1 point.",
        "- Waveform B = 500 ordering: PRJTRN++ (81.7, one width, 2 repetitions) falls below SMAL (83.5); the "
        "published gap between them is only 0.6 points (83.5 vs 82.9), and PRJTRN++ ran at one width only.",
        "",
    ]


def ablations(results: Path) -> list[str]:
    """The spec's ablations (configs/bpegasosm-table1-ablation.yaml) if their records exist."""
    abl = results.parent / "bpegasosm-table1-ablation"
    if not (abl / "records").exists():
        return []
    df = load_records(abl)
    if df.empty:
        return []
    from lsokl.results import ResultStore

    variant = {}
    for r in ResultStore(abl):
        variant[(r["dataset"], r["algorithm"])] = r["algorithm"]
    df = df[df["status"] == "ok"]
    lines = ["## Ablations (configs/bpegasosm-table1-ablation.yaml; results/bpegasosm-table1-ablation/)",
             "Mean test accuracy % (repetitions in brackets) per width σ, beside the main run's value at the same "
             "width and repetitions.", "",
             "| dataset | variant | B | " + " | ".join(["σ: ablation / main"] * 1) + " |", "|---|---|---|---|"]
    main = load_records(results)
    main = main[(main["status"] == "ok") & (main["by"] == "grid")]
    for (ds, label, B), g in df.groupby(["dataset", "label", "B"]):
        base = {"mrg-exact": "bpm-mrg", "mrg-noball": "bpm-mrg", "proj-noball": "bpm-proj"}.get(label)
        cells = []
        for sigma, gs in g.groupby("sigma"):
            reps = set(gs["rep"])
            m = main[(main["dataset"] == ds) & (main["algo"] == base) & (main["B"] == B)
                     & np.isclose(main["sigma"].astype(float), float(sigma)) & main["rep"].isin(reps)]
            cells.append(f"{sigma:.3g}: {gs['acc'].mean():.1f} / {m['acc'].mean():.1f} ({len(gs)})")
        lines.append(f"| {PAPER_NAMES.get(ds, ds)} | {label} | {int(B)} | {'; '.join(cells)} |")
    return lines + [""]


def explain(r) -> str:
    algo = r["algo"]
    if algo in ("bpm-rand", "bpm-smal"):
        return ("Removal rows have large published std (up to 4) and depend on the width through which SVs survive; "
                "weak evidence either way (spec section 9).")
    if algo == "pegasos":
        return "PegasosM here is run to the end of the pass (no 3000 s stop on USPS/LETTER)."
    if algo == "prjtrn++":
        return ("PRJTRN++'s threshold search (spec 4) decides its model size; see the threshold_search records "
                "and bpl's notes on which widths reach B.")
    if algo == "bpm-mrg":
        return ("No bug found (see the investigation below): the exact checks pass, and merging here is at the "
                "level of projection, as in the paper's other USPS cells; the narrow widths collapse in some "
                "repetitions by the surrogate's class-count weighting; `merge_objective: exact` and the ball "
                "projection off were tried (investigation below).")
    return ("No bug found (see the investigation below); the paper's selection rule and its USPS copy are not "
            "stated, and the ball projection off was tried (investigation below).")


def ordering_checks(table: pd.DataFrame) -> list[str]:
    lines = ["### Checks on the synthetic sets (spec 9: {PROJ, MRG} > PRJTRN++ > {RAND, SMAL}; PROJ/MRG within 1.5 "
             "points of the published full-n value at the largest n run)"]
    for ds in PAPER_N:
        for B in (100, 500):
            sub = table[(table["dataset"] == ds) & (table["B"] == B)]
            if sub.empty:
                continue
            for n in sorted(sub["n_train"].dropna().unique()):
                at = sub[sub["n_train"] == n].set_index("algo")
                if not {"bpm-proj", "bpm-mrg", "bpm-rand", "bpm-smal"} <= set(at.index):
                    continue
                good = min(at.loc["bpm-proj", "test_best"], at.loc["bpm-mrg", "test_best"])
                bad = max(at.loc["bpm-rand", "test_best"], at.loc["bpm-smal", "test_best"])
                if "prjtrn++" in at.index:
                    mid = at.loc["prjtrn++", "test_best"]
                    holds = good > mid > bad
                    order = (f"min(PROJ, MRG) = {good:.1f}, PRJTRN++ = {mid:.1f}, max(RAND, SMAL) = {bad:.1f}: "
                             f"{'holds' if holds else 'FAILS'}")
                else:
                    holds = good > bad
                    order = (f"min(PROJ, MRG) = {good:.1f} vs max(RAND, SMAL) = {bad:.1f} (no PRJTRN++ at this n): "
                             f"{'holds' if holds else 'FAILS'}")
                gaps = {a: at.loc[a, "test_best"] - at.loc[a, "paper"] for a in ("bpm-proj", "bpm-mrg")}
                near = max(abs(g) for g in gaps.values()) <= 1.5
                lines.append(
                    f"- {PAPER_NAMES[ds]} B={B}, n = {int(n):,}: {order}; PROJ {gaps['bpm-proj']:+.1f}, MRG "
                    f"{gaps['bpm-mrg']:+.1f} from the published full-n value ({'within' if near else 'outside'} 1.5).")
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
            for rank, (algo, name) in enumerate(ALGOS.items()):
                g = sub[(sub["algo"] == algo) & ((sub["B"] == B) if algo != "pegasos" else sub["B"].isna())]
                if g.empty:
                    continue
                color = None
                # one line per training length run (10^5 main config, 10^6 large config), each at the width
                # of its table cell; the final test accuracy is the last point, the test_at scores the rest
                for n_run in sorted(g["n_train"].dropna().unique(), reverse=True):
                    gn = g[g["n_train"] == n_run]
                    best = gn.groupby("sigma")["acc"].mean().idxmax()
                    pts = {}
                    for _, rec in gn[gn["sigma"] == best].iterrows():
                        c = rec["curve"] or {}
                        for n, v in zip(c.get("n", []), c.get("test_value", [])):
                            if v is not None:
                                pts.setdefault(int(n), []).append(100 * v)
                        n_end = int(rec["steps"]) if not pd.isna(rec.get("steps")) else int(n_run)
                        pts.setdefault(n_end, []).append(rec["acc"])
                    ns = sorted(pts)
                    largest = n_run == g["n_train"].max()
                    line, = ax.plot(ns, [np.mean(pts[n]) for n in ns], marker=MARKERS[algo],
                                    markersize=6 if largest else 4, fillstyle="full" if largest else "none",
                                    linestyle="-" if largest else ":", color=color, alpha=0.8,
                                    zorder=3 + len(ALGOS) - rank,  # earlier rows on top: PRJTRN++ over PROJ/MRG
                                    label=f"{name} (σ={best:.3g})" if largest else None)
                    color = line.get_color()
                hit = paper[(paper["dataset"] == PAPER_NAMES[ds]) & (paper["algorithm"] == name)]
                hit = hit[hit["B"] == B] if algo != "pegasos" else hit[hit["B"].isna()]
                if len(hit):
                    ax.plot([PAPER_N[ds]], [hit["mean"].iloc[0]], marker="*", markersize=12, linestyle="none",
                            color=color)
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
