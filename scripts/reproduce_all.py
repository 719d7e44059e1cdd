"""Every reproduction in sequence, each timed; prints a summary with the total wall time.

    python scripts/reproduce_all.py [--dry-run] [--only TARGET ...] [EXTRA_TARGET ...]

The reproductions are the Makefile's ``reproduce-*`` targets (except ``reproduce-all``), found in
the Makefile in the order they are written, followed by the extra targets given on the command
line (the Makefile passes its figure targets). A new reproduction needs nothing here: add a
``reproduce-<name>:`` target to the Makefile and ``make reproduce-all`` runs it. A target that
fails is reported and the others still run; the exit status is 1 if any failed.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def reproduction_targets(makefile: Path = ROOT / "Makefile") -> list[str]:
    names = re.findall(r"^(reproduce-[A-Za-z0-9_.-]+)\s*:", makefile.read_text(), flags=re.M)
    return [n for n in dict.fromkeys(names) if n != "reproduce-all"]


def fmt(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    h, m = divmod(m, 60)
    return f"{h}h {m:02d}m {s:02d}s" if h else f"{m}m {s:02d}s"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("extra", nargs="*", help="further make targets to run after the reproductions")
    ap.add_argument("--only", nargs="+", metavar="TARGET", help="run just these targets, in this order")
    ap.add_argument("--dry-run", action="store_true", help="list the targets and exit")
    args = ap.parse_args(argv)
    targets = args.only or reproduction_targets() + [t for t in args.extra if t]
    if args.dry_run:
        print("\n".join(targets))
        return 0
    make = os.environ.get("MAKE", "make")
    rows = []
    start = time.perf_counter()
    for target in targets:
        print(f"==> make {target}", flush=True)
        t0 = time.perf_counter()
        code = subprocess.call([make, "--no-print-directory", target], cwd=ROOT)
        rows.append((target, time.perf_counter() - t0, code))
        print(f"==> make {target}: {'ok' if code == 0 else f'FAILED (exit {code})'} in {fmt(rows[-1][1])}", flush=True)
    total = time.perf_counter() - start
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    print("\nreproduce-all summary")
    for target, seconds, code in rows:
        print(f"  {target:<28} {fmt(seconds):>10}  {'ok' if code == 0 else f'FAILED (exit {code})'}")
    print(f"  {'total wall time':<28} {fmt(total):>10}  (load average now {load} on {os.cpu_count()} CPUs)")
    return 1 if any(code for _, _, code in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
