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


def children_cpu() -> float:
    """User + system seconds of the finished child processes (and theirs) so far."""
    t = os.times()
    return t.children_user + t.children_system


def load_average() -> str:
    return f"{os.getloadavg()[0]:.1f}"


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
    start, cpu_start = time.perf_counter(), children_cpu()
    load_start = load_average()
    for target in targets:
        print(f"==> make {target}", flush=True)
        t0, c0, l0 = time.perf_counter(), children_cpu(), load_average()
        code = subprocess.call([make, "--no-print-directory", target], cwd=ROOT)
        rows.append((target, time.perf_counter() - t0, children_cpu() - c0, code, l0, load_average()))
        print(f"==> make {target}: {'ok' if code == 0 else f'FAILED (exit {code})'} in {fmt(rows[-1][1])}", flush=True)
    total, cpu = time.perf_counter() - start, children_cpu() - cpu_start
    # CPU time = user + system time of every process the target ran (what /usr/bin/time reports);
    # on a shared machine it is the steadier number, and CPU / wall says how many cores it used.
    print("\nreproduce-all summary (CPU = user + system of all its processes; load = 1-minute average at start -> end)")
    width = max([len("total wall time"), *(len(row[0]) for row in rows)])
    for target, seconds, cpu_s, code, l0, l1 in rows:
        print(f"  {target:<{width}} {fmt(seconds):>10}  CPU {fmt(cpu_s):>10}  load {l0} -> {l1}  "
              f"{'ok' if code == 0 else f'FAILED (exit {code})'}")
    print(f"  {'total wall time':<{width}} {fmt(total):>10}  CPU {fmt(cpu):>10}  load {load_start} -> {load_average()} "
          f"on {os.cpu_count()} CPUs")
    return 1 if any(row[3] for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
