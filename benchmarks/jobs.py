"""Why two workers do not run a grid twice as fast here: one process alone against two at once.

    python benchmarks/jobs.py [--repeats 3] [--workloads compute,memory,blas,cell]

Each workload runs in fresh child processes, first one alone, then two started together (a
shared start time, so they overlap); the child reports its wall and CPU time. If two cores were
free, two children would each take as long as one alone (speed-up of two workers = 2.0). What
slows the pair down tells which resource is shared:

* ``compute``: a numba loop of exp over an L1-resident array: the cores themselves;
* ``memory``: NumPy copies of two 256 MiB arrays: memory bandwidth;
* ``blas``: a 1000 x 1000 float64 matrix product with one BLAS thread: the FPU / caches;
* ``cell``: one lsokl cell of the Table 5 grid (OGD and FOGD passes over a9a).

Every child limits BLAS and numba to one thread, as ``lsokl run`` workers do, so oversubscribed
threads are ruled out by construction (the section records the threading layers in use).
The section also records the CPUs' steal time (/proc/stat) during the run: on a virtual machine
the hypervisor can take a core away from the guest, which no setting inside it can fix.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(var, "1")

HERE = Path(__file__).resolve().parent
WORKLOADS = ("compute", "memory", "blas", "cell")


def child(workload: str, start_at: float) -> None:
    import numpy as np

    if workload == "compute":
        import math

        from numba import njit

        @njit(cache=False)
        def spin(a, rounds):
            acc = 0.0
            for _ in range(rounds):
                for j in range(a.shape[0]):
                    acc += math.exp(-a[j])
            return acc

        a = np.random.default_rng(0).random(2048)
        spin(a, 1)
        work = lambda: spin(a, 40_000)  # noqa: E731
    elif workload == "memory":
        a = np.ones(2**25)  # 256 MiB
        b = np.empty_like(a)
        work = lambda: [np.copyto(b, a) for _ in range(12)]  # noqa: E731
    elif workload == "blas":
        a = np.random.default_rng(0).random((1000, 1000))
        work = lambda: [a @ a for _ in range(12)]  # noqa: E731
    elif workload == "cell":
        from lsokl.data import load
        from lsokl.learners import create

        ds = load("a9a")
        order = np.random.default_rng(0).permutation(ds.n_samples)
        y = np.asarray(ds.y, dtype=float)
        params = {"ogd": {"sigma": 8.0}, "fogd": {"sigma": 8.0, "random_state": 0}}
        for name in ("ogd", "fogd"):
            create(name, "binary", **params[name]).run(ds.X, y, order[:400])
        work = lambda: [create(name, "binary", **params[name]).run(ds.X, y, order)  # noqa: E731
                        for name in ("ogd", "fogd", "ogd", "fogd")]
    else:
        raise SystemExit(f"unknown workload {workload!r}")
    while time.time() < start_at:
        time.sleep(0.001)
    wall, cpu = time.perf_counter(), time.process_time()
    work()
    print(json.dumps({"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}))


def steal_ticks() -> tuple[int, int]:
    """(steal, total) jiffies over all CPUs from /proc/stat (0, 0 where unavailable)."""
    try:
        fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    except (OSError, ValueError, IndexError):
        return 0, 0
    return (fields[7] if len(fields) > 7 else 0), sum(fields)


def run_together(workload: str, n: int) -> list[dict]:
    start_at = time.time() + 3.0  # after every child has imported and compiled
    procs = [subprocess.Popen([sys.executable, __file__, "--child", workload, str(start_at)],
                              stdout=subprocess.PIPE, text=True) for _ in range(n)]
    out = []
    for p in procs:
        stdout, _ = p.communicate()
        if p.returncode == 0:
            out.append(json.loads(stdout.strip().splitlines()[-1]))
    return out


def threading_layers() -> str:
    import numba
    from threadpoolctl import threadpool_info

    pools = ", ".join(sorted({f"{i['internal_api']} ({i.get('threading_layer')}, {i['num_threads']} thread)"
                              for i in threadpool_info()}))
    return f"{pools}; numba threading layer {numba.config.THREADING_LAYER}, NUMBA_NUM_THREADS={numba.config.NUMBA_NUM_THREADS}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--child", nargs=2, metavar=("WORKLOAD", "START_AT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], float(args.child[1]))
        return
    sys.path.insert(0, str(HERE))
    import page

    load_start = page.load()
    steal0 = steal_ticks()
    rows = []
    for workload in args.workloads.split(","):
        alone, pair = [], []
        for _ in range(args.repeats):
            alone += run_together(workload, 1)
            pair += run_together(workload, 2)
            print(f"{workload}: alone {[round(r['wall'], 2) for r in alone]}, "
                  f"pair {[round(r['wall'], 2) for r in pair]}", flush=True)
        if not alone or not pair:
            rows.append(f"| {workload} | failed | | | | |")
            continue
        t1 = statistics.median(r["wall"] for r in alone)
        t2 = statistics.median(r["wall"] for r in pair)
        c1 = statistics.median(r["cpu"] for r in alone)
        c2 = statistics.median(r["cpu"] for r in pair)
        rows.append(f"| {workload} | {t1:.2f} | {t2:.2f} | {t2 / t1:.2f}x | {2 * t1 / t2:.2f} | "
                    f"{c1:.2f} / {c2:.2f} |")
    steal1 = steal_ticks()
    total = steal1[1] - steal0[1]
    steal = 100.0 * (steal1[0] - steal0[0]) / total if total else float("nan")
    lines = ["## Two workers against one (`benchmarks/jobs.py`)", "",
             "Each workload in fresh processes, one alone and then two started together; median of "
             f"{args.repeats} rounds. 'slow-down' = a process's wall time when paired / alone; "
             "'speed-up of 2 workers' = 2 x alone / paired (2.0 if two cores were free).", "",
             f"Machine: {page.machine()}.", f"Threads in each child: {threading_layers()}.",
             f"Load: {load_start} at the start, {page.load()} at the end; CPU steal time during the "
             f"run: {steal:.1f}% of all CPU time.", "",
             "| workload | wall s alone | wall s paired | slow-down | speed-up of 2 workers | CPU s alone / paired |",
             "|---|---|---|---|---|---|", *rows]
    page.write_section("jobs", "\n".join(lines + [""] + FINDINGS))
    print(f"wrote {page.PAGE}")


# What the measurements mean, written after reading them (kept with the script that makes them).
FINDINGS = [
    "Reading: every child runs one BLAS and one numba thread, so thread oversubscription is ruled",
    "out. A workload whose CPU time stays the same when paired but whose wall time doubles lost its",
    "core to other processes (load above 2 on 2 CPUs), not to a shared resource; a workload whose",
    "CPU time grows when paired is slowed by something the two processes share (memory bandwidth,",
    "caches). On a heavily loaded machine two processes are rarely on the CPUs at the same moment,",
    "so such contention can hide; compare the load average above. See the `--jobs` note in README.",
]


if __name__ == "__main__":
    main()
