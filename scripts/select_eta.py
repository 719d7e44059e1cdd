"""Pick each (dataset, algorithm)'s step size from the records of an eta grid, with the search rule.

    python scripts/select_eta.py RESULTS [--out eta_selection.md]

The reproductions no longer need this script: a config's `search:` block runs the search and
applies its choice inside `lsokl run` (lsokl/search.py). This reads any results folder whose
config gives parameters as lists (e.g. `eta: [2, 0.2, 0.02]`) and applies the same rule: per
dataset and algorithm, the setting with the lowest mean mistake rate (or squared loss) over its
permutations; ties go to the larger value; a setting with a failed or diverged pass, or with a majority of
**degenerate** passes (a constant predictor, see lsokl/runner/degenerate.py), is never chosen, and
the output says which were excluded and why. Prints the per-dataset `algorithms:` overrides; `--out` writes the
whole grid as Markdown.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from lsokl.results import ResultStore
from lsokl.search import choose, grid_markdown


def choices_from(results: Path):
    records = [r for r in ResultStore(results).records() if r.get("params") is not None]
    if not records:
        raise SystemExit(f"{results}: no records")
    groups: dict = {}
    for r in records:
        groups.setdefault((r["dataset"], r["algorithm"], r["task"]), []).append(r)
    out = []
    for (dataset, label, task), recs in groups.items():
        settings = {json.dumps(r["params"], sort_keys=True) for r in recs}
        dicts = [json.loads(s) for s in settings]
        names = sorted(k for k in set().union(*dicts) if len({json.dumps(d.get(k)) for d in dicts}) > 1)
        if not names:
            continue  # one setting only: nothing to choose
        names = (["eta"] if "eta" in names else []) + [n for n in names if n != "eta"]
        perms = {r["permutation"] for r in recs}
        by = {s: (perms, [r for r in recs if json.dumps(r["params"], sort_keys=True) == s]) for s in settings}
        out.append(choose(dataset, label, task, names, by))
    return sorted(out, key=lambda c: (c.dataset, c.algorithm))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", type=Path)
    ap.add_argument("--out", type=Path, default=None, help="write the full grid as Markdown here")
    args = ap.parse_args()
    choices = choices_from(args.results)
    print("# chosen (lowest mean; failed, diverged and mostly degenerate settings excluded)")
    for ds in dict.fromkeys(c.dataset for c in choices):
        picks = []
        for c in (c for c in choices if c.dataset == ds):
            if c.chosen is None:
                print(f"  # {ds} {c.algorithm}: {c.reason}")
                continue
            inner = ", ".join(f"{k}: {v:g}" if isinstance(v, float) else f"{k}: {v}" for k, v in c.chosen.items())
            picks.append(f"{c.algorithm}: {{{inner}}}")
        if picks:
            print(f"  {ds}: {{algorithms: {{{', '.join(picks)}}}}}")
    for c in choices:
        for cand in c.candidates:
            if cand.why_not and cand.degenerate:
                print(f"  # excluded {c.dataset} {c.algorithm} {cand.values}: {cand.why_not}")
    if args.out:
        lines = [f"# Step-size selection from `{args.results}`", "",
                 "Mean over the permutations (mistake rate in %, squared loss as is); **bold** = chosen; "
                 "`const k/n` = k of n passes degenerate (excluded when k > n/2); `—` = failed or diverged.", ""]
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(lines + grid_markdown(choices)) + "\n")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
