#!/usr/bin/env python
"""Reproduce the MEKA paper's tables (Si, Hsieh, Dhillon, JMLR 2017): run each config, then write
its report beside the published values.

    python scripts/reproduce_meka.py [table7 table8 table5 table3 table2 fig10] [--jobs N]

Each target reads configs/meka-<target>.yaml and writes results/meka-<target>/ (records, then
report/table.md, table.csv, plots; the headline table is copied to results/meka-<target>/meka-<target>.md).
Resumable: finished cells are skipped. Datasets absent offline are listed as missing and skipped.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGETS = ("table7", "table8", "table5", "table3", "table2", "fig10")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("targets", nargs="*", help=f"any of {', '.join(TARGETS)} [default: all]")
    ap.add_argument("--jobs", "-j", type=int, default=1)
    args = ap.parse_args(argv)
    from lsokl.report import meka

    lsokl = [str(Path(sys.executable).with_name("lsokl"))]
    if not Path(lsokl[0]).exists():
        lsokl = [sys.executable, "-c", "from lsokl.cli import main; main()"]
    code = 0
    bad = [t for t in args.targets if t not in TARGETS]
    if bad:
        print(f"error: unknown target {bad[0]!r}; choose from {', '.join(TARGETS)}", file=sys.stderr)
        return 2
    for target in args.targets or TARGETS:
        config = REPO / "configs" / f"meka-{target}.yaml"
        results = REPO / "results" / f"meka-{target}"
        print(f"== meka-{target}: {config.relative_to(REPO)} -> {results.relative_to(REPO)}", flush=True)
        before = f"Measured on {meka.machine_load()}."
        rc = subprocess.call([*lsokl, "run", str(config), "--results", str(results), "-j", str(args.jobs), "-q"])
        code = code or rc
        report = results / "report"
        fn = meka.TABLES[target]
        if target == "table5":
            fn(results, report, load=f"{before} (at the start of the run)", config=config)
        else:
            fn(results, report, config=config)
        shutil.copy(report / "table.md", results / f"meka-{target}.md")
    return code


if __name__ == "__main__":
    sys.exit(main())
