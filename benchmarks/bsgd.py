#!/usr/bin/env python
"""BSGD-M / BSGD-R (and BPegasosM merge) samples/s beside BudgetedSVM's C++ ``budgetedsvm-train``.

    python benchmarks/bsgd.py [--budgetedsvm DIR] [--repeats 3] [--out benchmarks/BSGD.md]

What is timed, on the same data, the same stream order (file order: BudgetedSVM ``-r 0``), one epoch:
* lsokl: ``learner.run(X, y, order)`` after a warm-up on a prefix (compilation is not timed); the training pass
  only, as wall clock (``time.perf_counter``) and as process CPU time (``time.process_time``);
* BudgetedSVM: the "Training completed in X seconds" it prints, which is ``clock()`` CPU time around its training
  loop (loading excluded). Ratios are CPU time against CPU time, so a loaded machine inflates neither side;
  the wall-clock ratio is shown too. Medians of ``--repeats`` processes.
Accuracy: both models predict the same test split (lsokl ``predict``; BudgetedSVM ``budgetedsvm-predict``).

Settings: ``-A 4 -B <B> -m 1|0 -L 1e-4 -g <1/sigma^2> -e 1 -b 0 -r 0`` (BudgetedSVM's -g is 1/sigma^2 in lsokl's
exp(-||x-y||^2/(2 sigma^2))). Data: a9a (LIBSVM train/test, 123 sparse binary features, run as 2 classes) and
letter (LIBSVM letter.scale 15000/5000, 26 classes).

BudgetedSVM is not part of lsokl. To build it (outside this repository):
    git clone https://github.com/djurikom/BudgetedSVM && cd BudgetedSVM && make    # bin/budgetedsvm-train
then pass ``--budgetedsvm path/to/BudgetedSVM`` (or set BUDGETEDSVM_DIR). Without it the C++ columns are
skipped with that reason.

Also: the gradient-error column of BSGD's JMLR 2012 Table 4 (checkerboard, lambda = 1e-4, "sigma = 0.0625",
i.e. gamma = 16 on the [0,4]^2 board, B = 100, no ball projection): E = mean over maintenance events of
lambda t ||Delta_t||, published removal 1.402, projection 0.052, merge 0.037 (at 10M points; here fewer).
"""
from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import page  # noqa: E402  (benchmarks/page.py: machine description shared by every benchmark)

CASES = [  # dataset, sigma, budget
    ("a9a", float(np.sqrt(123 / 2)), 100),  # LIBSVM's default gamma = 1/d
    ("letter", float(np.sqrt(16 / 8)), 100),  # gamma = 4/d (the middle of BPegasosM's grid)
]
LEARNERS = [("bsgd-m", "-m 1"), ("bsgd-r", "-m 0"), ("bpegasos-merge", None)]
LAM = 1e-4


def load(name):
    from lsokl.data import load as data_load

    tr, te = data_load(name), data_load(name, split="test")
    X, Xt = tr.X, te.X
    if hasattr(X, "toarray"):
        X, Xt = X.toarray(), Xt.toarray()
    return np.ascontiguousarray(X), tr.y, np.ascontiguousarray(Xt), te.y, tr.task


def make(name, task, sigma, budget):
    from lsokl.learners import create

    if name == "bpegasos-merge":  # the paper's variant (ball projection on, first SV 1/lambda)
        return create("bpegasos", task, maintenance="merge", sigma=sigma, lam=LAM, budget=budget)
    return create(name, task, sigma=sigma, lam=LAM, budget=budget)


def time_ours(name, task, X, y, Xt, yt, sigma, budget, repeats):
    order = np.arange(len(y), dtype=np.int64)
    make(name, task, sigma, budget).run(X, y, order[: min(len(y), 4 * budget)])  # compile, untimed
    walls, cpus, acc = [], [], None
    for _ in range(repeats):
        learner = make(name, task, sigma, budget)
        c0 = time.process_time()
        trace = learner.run(X, y, order)
        cpus.append(time.process_time() - c0)
        walls.append(trace.elapsed)
        acc = float(np.mean(learner.predict(Xt) == yt))
    return statistics.median(walls), statistics.median(cpus), acc


def time_theirs(bindir: Path, flag, X, y, Xt, yt, sigma, budget, repeats, tmp: Path):
    from sklearn.datasets import dump_svmlight_file

    train, test = tmp / "train.txt", tmp / "test.txt"
    if not train.exists():
        dump_svmlight_file(X, y, str(train), zero_based=False)
        dump_svmlight_file(Xt, yt, str(test), zero_based=False)
    g = 1.0 / sigma ** 2
    cmd = [str(bindir / "budgetedsvm-train"), "-A", "4", "-B", str(budget), *flag.split(), "-L", str(LAM),
           "-g", repr(g), "-e", "1", "-b", "0", "-r", "0", "-D", str(X.shape[1]), "-v", "1", str(train),
           str(tmp / "model.txt")]
    secs = []
    for _ in range(repeats):
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        m = re.search(r"Training completed in\s+([0-9.]+) seconds", out)
        secs.append(float(m.group(1)))
    subprocess.run([str(bindir / "budgetedsvm-predict"), str(test), str(tmp / "model.txt"), str(tmp / "pred.txt")],
                   capture_output=True, text=True, check=True)
    pred = np.loadtxt(tmp / "pred.txt")
    return statistics.median(secs), float(np.mean(pred == yt)), " ".join(cmd[1:-2])


def gradient_errors(n: int) -> dict:
    """Ebar on checkerboard, B = 100, lambda = 1e-4, gamma = 16 on [0,4]^2 (our board is [0,1]^2: sigma/4)."""
    from lsokl.data import load as data_load
    from lsokl.learners import create

    ds = data_load("checkerboard", n=n, seed=0)
    sigma = float(np.sqrt(1 / (2 * 16))) / 4
    out = {}
    for label, maint in (("removal", "smallest"), ("projection", "projection"), ("merge", "merge")):
        learner = create("bpegasos", "binary", maintenance=maint, sigma=sigma, lam=LAM, budget=100,
                         ball_projection=False)
        learner.run(ds.X, ds.y)
        out[label] = (learner.gradient_error_, learner.maintenance_events_)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--budgetedsvm", type=Path, default=os.environ.get("BUDGETEDSVM_DIR"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--gradient-n", type=int, default=200_000)
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "BSGD.md")
    args = ap.parse_args(argv)
    bindir = args.budgetedsvm / "bin" if args.budgetedsvm else None
    reason = None
    if bindir is None:
        reason = "no --budgetedsvm / BUDGETEDSVM_DIR given"
    elif not (bindir / "budgetedsvm-train").exists():
        reason = f"{bindir}/budgetedsvm-train not found (build it with make)"
    load_before = os.getloadavg()
    rows = []
    for ds, sigma, budget in CASES:
        X, y, Xt, yt, task = load(ds)
        with tempfile.TemporaryDirectory() as tmpd:
            for name, flag in LEARNERS:
                wall, cpu, acc = time_ours(name, task, X, y, Xt, yt, sigma, budget, args.repeats)
                row = {"dataset": ds, "n": len(y), "learner": name, "B": budget, "sigma": sigma,
                       "ours_wall": wall, "ours_cpu": cpu, "ours_acc": acc}
                if reason is None and flag is not None:
                    secs, tacc, cmd = time_theirs(bindir, flag, X, y, Xt, yt, sigma, budget, args.repeats,
                                                  Path(tmpd))
                    row.update(theirs_cpu=secs, theirs_acc=tacc, cmd=cmd)
                rows.append(row)
                print(row, flush=True)
    ge = gradient_errors(args.gradient_n)
    load_after = os.getloadavg()
    text = render(rows, ge, reason, args, load_before, load_after)
    args.out.write_text(text)
    print(text)
    return 0


def render(rows, ge, reason, args, load_before, load_after) -> str:
    cpu = page.cpu_model()
    lines = ["## BSGD-M / BSGD-R beside BudgetedSVM's C++ (benchmarks/bsgd.py)", "",
             f"Machine: {cpu}, {os.cpu_count()} cores shared with other sessions; load average "
             f"{load_before[0]:.1f} before, {load_after[0]:.1f} after (1-min). One thread each. Medians of "
             f"{args.repeats} runs. samples/s = training points / training time; ratio = lsokl CPU samples/s ÷ "
             "BudgetedSVM CPU samples/s (its printed training time is clock() CPU time, loading excluded).", ""]
    if reason:
        lines += [f"BudgetedSVM columns skipped: {reason}.", ""]
    lines += ["| data | learner | B | n | lsokl samples/s (CPU) | lsokl samples/s (wall) | BudgetedSVM samples/s (CPU) "
              "| ratio (CPU) | lsokl acc % | BudgetedSVM acc % |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        theirs = r.get("theirs_cpu")
        t_rate = "–" if theirs is None else format(r["n"] / theirs, ",.0f")
        ratio = "–" if theirs is None else format(theirs / r["ours_cpu"], ".1f") + "x"
        t_acc = "–" if theirs is None else format(100 * r["theirs_acc"], ".2f")
        lines.append(
            f"| {r['dataset']} | {r['learner']} | {r['B']} | {r['n']} | {r['n'] / r['ours_cpu']:,.0f} | "
            f"{r['n'] / r['ours_wall']:,.0f} | {t_rate} | {ratio} | {100 * r['ours_acc']:.2f} | {t_acc} |")
    cmds = sorted({r["cmd"] for r in rows if r.get("cmd")})
    if cmds:
        lines += ["", "BudgetedSVM commands (train file, model file appended): " + "; ".join(f"`{c}`" for c in cmds)]
    lines += ["", f"Gradient error Ē = mean λt‖Δ_t‖ (JMLR 2012 Table 4 setting; checkerboard n = {args.gradient_n:,}, "
              "B = 100, no ball projection):", "",
              "| maintenance | Ē lsokl | events | published (10M points) |", "|---|---|---|---|"]
    published = {"removal": 1.402, "projection": 0.052, "merge": 0.037}
    for k, (e, n) in ge.items():
        lines.append(f"| {k} | {e:.3f} | {n:,} | {published[k]} |")
    lines += ["", f"Run with: `{' '.join([Path(sys.executable).name, *sys.argv])}` on {platform.python_version()}."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
