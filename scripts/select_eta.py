"""Pick each (dataset, algorithm)'s step size from a grid run, as the paper's protocol does.

    python scripts/select_eta.py results/table5-eta [--out results/table5/eta_selection.md]

Reads the records of a run whose config gives `eta` as a list (configs/table5-eta.yaml), and
for every dataset and algorithm chooses the eta with the lowest mean mistake rate (or squared
loss) over the permutations that finished `ok`; ties go to the larger eta. A setting whose
permutations did not all finish (diverged, failed) is never chosen. Prints the per-dataset
`algorithms:` overrides to paste into the reproduction config and writes the full grid as a
Markdown table, so the choice can be audited.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

from lsokl.report.aggregate import records_frame
from lsokl.results import ResultStore


def grid(results: Path) -> pd.DataFrame:
    frame = records_frame(ResultStore(results).records())
    if frame.empty:
        raise SystemExit(f"{results}: no records")
    frame["eta"] = [json.loads(p).get("eta") for p in frame["params"]]
    frame = frame[frame["eta"].notna()]
    rows = []
    for (ds, alg, eta), g in frame.groupby(["dataset", "algorithm", "eta"]):
        ok = g[g["status"] == "ok"]
        rows.append({"dataset": ds, "algorithm": alg, "eta": eta, "runs": len(g), "ok": len(ok),
                     "mean": ok["value"].mean() if len(ok) else float("nan")})
    return pd.DataFrame(rows)


def choose(table: pd.DataFrame) -> pd.DataFrame:
    complete = table[(table["ok"] == table["runs"]) & table["mean"].notna()]
    ranked = complete.sort_values(["dataset", "algorithm", "mean", "eta"], ascending=[True, True, True, False])
    return ranked.groupby(["dataset", "algorithm"], as_index=False).first()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", type=Path)
    ap.add_argument("--out", type=Path, default=None, help="write the full grid as Markdown here")
    args = ap.parse_args()
    table = grid(args.results)
    best = choose(table)
    print("# chosen eta (lowest mean over the selection permutations)")
    for ds, g in best.groupby("dataset", sort=False):
        picks = ", ".join(f"{a}: {{eta: {e:g}}}" for a, e in zip(g["algorithm"], g["eta"]))
        print(f"  {ds}: {{algorithms: {{{picks}}}}}")
    if args.out:
        wide = table.assign(cell=[f"{100 * m:.2f}" if m == m else "—" for m in table["mean"]])
        wide = wide.pivot_table(index=["dataset", "algorithm"], columns="eta", values="cell", aggfunc="first")
        wide = wide[sorted(wide.columns, reverse=True)].fillna("—")  # never run (see the config)
        chosen = {(d, a): e for d, a, e in zip(best["dataset"], best["algorithm"], best["eta"])}
        lines = ["# Step-size selection for Table 5", "",
                 f"Mean mistake rate (%) over the selection permutations of `{args.results}`, per eta.",
                 "The chosen eta (lowest mean; ties to the larger eta) is in bold; — = diverged or failed.", "",
                 "| dataset | algorithm | " + " | ".join(f"{c:g}" for c in wide.columns) + " |",
                 "|---|---|" + "---|" * len(wide.columns)]
        for (d, a), row in wide.iterrows():
            cells = [f"**{row[c]}**" if chosen.get((d, a)) == c else str(row[c]) for c in wide.columns]
            lines.append(f"| {d} | {a} | " + " | ".join(cells) + " |")
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(lines) + "\n")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
