#!/usr/bin/env python
"""MEKA benchmarks: the time of each MEKA step on pendigit against the paper's Table 5, and the
memory of the chunked relative error at covtype size.

    python benchmarks/meka.py steps [--runs 5]            # MEKA on pendigit, Table 7 settings
    python benchmarks/meka.py rows [--rows 1000 --rank 32]  # Nystrom error on r rows of a 581012 x 54 set
    python benchmarks/meka.py all --out benchmarks/RESULTS.md

What is timed (``steps``): CPU seconds (and wall clock) of one MEKA fit of pendigit (n = 10992, d = 16, features / 100; rank 128
per cluster, c = 5, gamma = 2, eta = 0.01: Table 7's cell) on ONE thread (BLAS and numba limited
to one, as the paper's ``maxNumCompThreads(1)``), wall clock of each step as MEKA itself records
it: TC = clustering (sampled k-means, assignment of all points, centre kernel, threshold), TW =
the diagonal Nystrom blocks, TL = the link blocks. Data loading and one compile warm-up on 200
rows are not timed. Reported: the median over ``--runs`` fits (different seeds), and the ratio
paper seconds / lsokl seconds. The paper's numbers are MATLAB ``cputime`` on a Xeon X5440
(2.83 GHz): they are a published measurement on other hardware, not a bound.

``rows``: the relative error of a rank-32 Nystrom approximation of a covtype-shaped synthetic set
(the ``scale`` built-in, n = 581012, d = 54) on ``--rows`` sampled rows, in chunks of 2^24
floats; reported: the wall time and the process's peak resident memory against the r x n x 8
bytes that holding the sampled rows of G would take.

With ``--out FILE`` the results replace the block between ``<!-- meka:start -->`` and
``<!-- meka:end -->`` in FILE (appended when absent).
"""
from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

PAPER_T5 = {"TC": 0.05, "TW": 0.69, "TL": 0.35}  # MEKA Table 5, pendigit, seconds
STEP = {"TC": "clustering", "TW": "diagonal", "TL": "links"}


def machine() -> str:
    from lsokl.report.machine import machine_load

    return machine_load()


def one_thread():
    from threadpoolctl import threadpool_limits

    try:
        import numba

        numba.set_num_threads(1)
    except Exception:  # noqa: BLE001
        pass
    return threadpool_limits(1)


def bench_steps(runs: int) -> list[str]:
    from lsokl.approx.meka import MEKA
    from lsokl.data import load

    ds = load("pendigits", split="all")
    X = np.ascontiguousarray(np.asarray(ds.X, dtype=np.float64) / 100.0)
    before = machine()
    with one_thread():
        MEKA(rank=8, gamma=2.0, clusters=2).fit(X[:200], seed=0)  # compile warm-up
        times = {k: [] for k in STEP}
        walls = {k: [] for k in STEP}
        for seed in range(runs):
            m = MEKA(rank=128, gamma=2.0, clusters=5).fit(X, seed=seed)
            for k, step in STEP.items():
                times[k].append(m.cpu_timings_[step])
                walls[k].append(m.timings_[step])
    after = machine()
    lines = ["### MEKA steps on pendigit (Table 5) — `python benchmarks/meka.py steps`", "",
             f"One thread, median of {runs} fits (seeds 0..{runs - 1}) after a compile warm-up; CPU seconds per step "
             "(`time.process_time`, the measure of the paper's MATLAB `cputime`), wall clock beside it. "
             f"Machine before: {before}; after: {after}. The machine is shared by other jobs: "
             "the load average says how much of a core this process could get.", "",
             "| step | paper (s, MATLAB cputime, X5440) | lsokl CPU median (s) | [min, max] | paper / lsokl | lsokl wall median (s) |",
             "|---|---|---|---|---|---|"]
    for k in STEP:
        v = np.array(times[k])
        lines.append(f"| {k} ({STEP[k]}) | {PAPER_T5[k]:.2f} | {np.median(v):.3f} | [{v.min():.3f}, {v.max():.3f}] | "
                     f"{PAPER_T5[k] / np.median(v):.1f}x | {np.median(walls[k]):.3f} |")
    total_p, total = sum(PAPER_T5.values()), sum(np.median(times[k]) for k in STEP)
    lines.append(f"| all three | {total_p:.2f} | {total:.3f} | | {total_p / total:.1f}x | |")
    return lines


def bench_rows(rows: int, rank: int) -> list[str]:
    from lsokl.approx import create
    from lsokl.approx.metrics import MAX_FLOATS, relative_error
    from lsokl.data import load

    ds = load("scale", n=581012, d=54, seed=0)
    X = np.ascontiguousarray(ds.X)
    with one_thread():
        t0 = time.perf_counter()
        a = create("nystrom", rank=rank, gamma=1.0 / 54).fit(X, seed=0)
        t1 = time.perf_counter()
        err, idx = relative_error(a, X, 1.0 / 54, rows, np.random.default_rng(0))
        t2 = time.perf_counter()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: kB
    held = 8.0 * rows * X.shape[0]
    return ["### Relative error on sampled rows at covtype size — `python benchmarks/meka.py rows`", "",
            f"Nystrom rank {rank} (gamma = 1/54) of the `scale` built-in, n = {X.shape[0]:,}, d = 54; error on "
            f"r = {rows:,} sampled rows in chunks of 2^24 floats (= {MAX_FLOATS // X.shape[0]} rows of G at a time). "
            f"One thread; {machine()}.", "",
            f"* fit {t1 - t0:.1f} s; error {err:.4f} in {t2 - t1:.1f} s;",
            f"* peak resident memory of the whole process {peak / 2**30:.2f} GiB (data {X.nbytes / 2**30:.2f} GiB, "
            f"factor Z {a.Z_.nbytes / 2**30:.2f} GiB), against the {held / 2**30:.1f} GiB the r x n rows of G "
            "alone would take if held at once."]


def write(out: Path, lines: list[str]) -> None:
    block = "\n".join(["<!-- meka:start -->", "## MEKA (kernel approximations)", "", *lines, "<!-- meka:end -->"])
    text = out.read_text() if out.exists() else ""
    if "<!-- meka:start -->" in text:
        head, rest = text.split("<!-- meka:start -->", 1)
        tail = rest.split("<!-- meka:end -->", 1)[1]
        text = head + block + tail
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    out.write_text(text)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("steps", "rows", "all"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--rank", type=int, default=32)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    lines: list[str] = []
    if args.what in ("steps", "all"):
        lines += bench_steps(args.runs) + [""]
    if args.what in ("rows", "all"):
        lines += bench_rows(args.rows, args.rank) + [""]
    print("\n".join(lines))
    if args.out:
        write(args.out, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
