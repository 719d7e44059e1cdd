"""Throughput and peak memory of every binary learner at the paper's settings, beside
scikit-learn's strict-online equivalents measured in the same run. Writes a Markdown report.

    python benchmarks/run.py [--out benchmarks/RESULTS.md] [--repeats 3]
        [--datasets spambase,a9a,codrna,kddcup99,covtype-shaped] [--algorithms fogd,nogd,...]

Each number is the median over ``--repeats`` fresh processes (the machine is noisy); numba
compilation is excluded (each process warms up first, and numba caches to disk); BLAS runs on one
thread. Needs the datasets fetched (``lsokl fetch ...`` or LSOKL_DATA_MIRROR set).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
LEARNERS = ["fogd", "nogd", "rbp", "forgetron", "bogd", "bpas", "projectron", "projectron++",
            "perceptron", "ogd"]
BASELINES = ["fogd-features", "sk-rff", "sk-nystroem"]
DATASETS = ["spambase", "a9a", "codrna", "kddcup99", "covtype-shaped"]
# Unbudgeted learners grow O(n) support sets: time them where the issue asks (a9a) only.
UNBUDGETED_ON = {"a9a", "spambase"}

TARGETS = {  # samples/s the issue asks for (paper settings, one thread)
    "fogd": 250e3, "rbp": 200e3, "forgetron": 200e3, "bogd": 200e3, "bpas": 100e3,
    "projectron": 20e3, "projectron++": 20e3,
}


def machine() -> str:
    import numba
    import numpy
    import scipy
    import sklearn
    from threadpoolctl import threadpool_info

    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    blas = ", ".join(sorted({f"{i['internal_api']} {i.get('version')}" for i in threadpool_info()}))
    return (f"{cpu}; {os.cpu_count()} cores; {mem:.0f} GiB; {platform.platform()}; "
            f"Python {platform.python_version()}, numpy {numpy.__version__}, scipy {scipy.__version__}, "
            f"numba {numba.__version__}, scikit-learn {sklearn.__version__}; BLAS: {blas}")


def measure(dataset: str, algorithm: str, repeats: int) -> dict | None:
    runs = []
    for _ in range(repeats):
        proc = subprocess.run([sys.executable, str(HERE / "measure.py"), dataset, algorithm],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"  {dataset}/{algorithm} failed:\n{proc.stderr[-2000:]}", file=sys.stderr)
            return None
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    best = dict(runs[0])
    for key in ("samples_per_s", "elapsed_s", "peak_rss_mb", "after_switch_samples_per_s"):
        vals = [r[key] for r in runs if key in r]
        if vals:
            best[key] = statistics.median(vals)
    best["repeats"] = len(runs)
    return best


def fmt_rate(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x / 1e3:,.0f}k" if x >= 1e4 else f"{x:,.0f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(HERE / "RESULTS.md"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--algorithms", default=",".join(LEARNERS + BASELINES))
    ap.add_argument("--merge", action="store_true",
                    help="keep the measurements already in --out's JSON sidecar; replace only those taken now")
    args = ap.parse_args()
    datasets = args.datasets.split(",")
    algorithms = args.algorithms.split(",")

    sidecar = Path(args.out).with_suffix(".json")
    results: dict[tuple[str, str], dict] = {}
    if args.merge and sidecar.exists():
        results = {(r["dataset"], r["algorithm"]): r for r in json.loads(sidecar.read_text())}
        datasets = list(dict.fromkeys(DATASETS + datasets))
        algorithms = list(dict.fromkeys(LEARNERS + BASELINES + algorithms))
    for ds in datasets:
        for alg in algorithms:
            if alg in ("perceptron", "ogd") and ds not in UNBUDGETED_ON:
                continue
            if alg.startswith("sk-") and ds == "covtype-shaped":
                continue  # the strict-online baseline is timed on a prefix: one dataset shape is enough
            if args.merge and not (ds in args.datasets.split(",") and alg in args.algorithms.split(",")):
                continue
            print(f"measuring {ds} / {alg} ...", flush=True)
            r = measure(ds, alg, args.repeats)
            if r:
                results[(ds, alg)] = r

    lines = ["# lsokl benchmarks", "",
             "Throughput of one online pass (predict, count, update for every sample) at the paper's",
             "settings: sigma = 8, B = 100, FOGD D = 4B = 400 frequencies, NOGD k = 0.2B = 20. One",
             "process, one BLAS thread, float64, numba compilation excluded; median of "
             f"{args.repeats} fresh processes. Peak RSS is the whole process (Python, data, model).",
             "", f"Machine: {machine()}", "",
             "Regenerate with `make bench` (the datasets must be fetched or `LSOKL_DATA_MIRROR` set).", ""]
    header = "| algorithm | " + " | ".join(datasets) + " |"
    lines += ["## Samples per second", "", header, "|---" * (len(datasets) + 1) + "|"]
    for alg in algorithms:
        cells = []
        for ds in datasets:
            r = results.get((ds, alg))
            cell = fmt_rate(r["samples_per_s"]) if r else "—"
            if r and "after_switch_samples_per_s" in r:
                cell += f" (after switch {fmt_rate(r['after_switch_samples_per_s'])})"
            cells.append(cell)
        lines.append(f"| {alg} | " + " | ".join(cells) + " |")
    lines += ["", "## Peak memory (MiB, whole process)", "", header, "|---" * (len(datasets) + 1) + "|"]
    for alg in algorithms:
        cells = [f"{results[(ds, alg)]['peak_rss_mb']:.0f}" if (ds, alg) in results else "—" for ds in datasets]
        lines.append(f"| {alg} | " + " | ".join(cells) + " |")

    lines += ["", "## Against the targets and baselines", ""]
    for ds in datasets:
        fogd = results.get((ds, "fogd"))
        bound = results.get((ds, "fogd-features"))
        sk = results.get((ds, "sk-rff"))
        if fogd and bound:
            lines.append(f"* {ds}: FOGD runs at {fogd['samples_per_s'] / bound['samples_per_s']:.0%} of the "
                         f"feature-only bound ({fmt_rate(bound['samples_per_s'])} samples/s).")
        if fogd and sk:
            lines.append(f"* {ds}: FOGD is {fogd['samples_per_s'] / sk['samples_per_s']:,.0f}x scikit-learn's "
                         f"strict-online RBFSampler + SGDClassifier ({fmt_rate(sk['samples_per_s'])} samples/s, "
                         f"timed on the first {sk.get('n_timed')} samples).")
        for alg, target in TARGETS.items():
            r = results.get((ds, alg))
            if r and r["samples_per_s"] < target:
                lines.append(f"* {ds}: {alg} at {fmt_rate(r['samples_per_s'])} samples/s is below the "
                             f"target of {fmt_rate(target)}.")
    Path(args.out).write_text("\n".join(lines) + "\n")
    sidecar.write_text(json.dumps(list(results.values()), indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
