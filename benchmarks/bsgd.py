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

Prediction: ``budgetedsvm-predict`` on Linux drops the first character of the model's first SV line (it skips
strlen("MODEL:\n") + 1 bytes, right only for CRLF files; ../shared/data/reference-runs/budgetedsvm/README.md
section 5), which wrecks the model (a9a BSGD-M B=100: 84.6% -> 54.9%). It is given a copy of the model whose
``MODEL:`` line ends in CRLF, as the reference runs do.

    python benchmarks/bsgd.py --gradient-only [--gradient-n 10000 100000 1000000]

The gradient error of BSGD's JMLR 2012 Table 4 (checkerboard 10M, lambda = 1e-4, "sigma = 0.0625", B = 100/500,
no ball projection (footnote 4)): published Ebar removal 1.402/1.401, projection 0.052/0.007, merge 0.037/0.002,
accuracy 79.19/90.32, 99.25/99.66, 99.55/99.74. The paper defines Ebar = sum_t ||E_t|| / N over ALL N steps with
E_t = Delta_t / eta_t (eq. 4.2; ||E_t|| = lambda t ||Delta_t||, 0 at a step without maintenance); the column
"per event" is the spec's mean over maintenance events (removal: exactly sqrt 2). Attributes are z-scored
("scaled to mean 0 and standard deviation 1", section 7.1); the width is reported for gamma = 8 (the paper's
footnote-10 kernel exp(-sigma ||.||^2) would make it 0.0625, far too wide for the board; gamma = 1/(2 sigma) = 8 =
ICML 2010's grid value 16/d) and gamma = 16 (the spec's reading exp(-||.||^2 / sigma)). Section
``bsgd-gradient-error`` of benchmarks/RESULTS.md.
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
    fixed = tmp / "model_fixed.txt"  # the Linux loader bug (module docstring): MODEL: line in CRLF
    fixed.write_bytes((tmp / "model.txt").read_bytes().replace(b"MODEL:\n", b"MODEL:\r\n", 1))
    subprocess.run([str(bindir / "budgetedsvm-predict"), str(test), str(fixed), str(tmp / "pred.txt")],
                   capture_output=True, text=True, check=True)
    pred = np.loadtxt(tmp / "pred.txt")
    return statistics.median(secs), float(np.mean(pred == yt)), " ".join(cmd[1:-2])


PUBLISHED_GE = {  # JMLR 2012 Table 4: (B, maintenance) -> (accuracy %, Ebar over all N steps)
    (100, "removal"): (79.19, 1.402), (100, "projection"): (99.25, 0.052), (100, "merge"): (99.55, 0.037),
    (500, "removal"): (90.32, 1.401), (500, "projection"): (99.66, 0.007), (500, "merge"): (99.74, 0.002)}
MAINTENANCE = (("removal", "smallest"), ("projection", "projection"), ("merge", "merge"))


def gradient_errors(ns, budgets, gammas, n_test: int = 20000) -> list:
    """Ebar on z-scored checkerboard draws (seed 0; test rows drawn with the training rows), one pass each."""
    from lsokl.data import load as data_load
    from lsokl.learners import create

    rows = []
    for n in ns:
        ds = data_load("checkerboard", n=n + n_test, seed=0)
        X, y, Xt, yt = ds.X[:n], ds.y[:n], ds.X[n:], ds.y[n:]
        mu, sd = X.mean(0), X.std(0, ddof=1)
        X, Xt = (X - mu) / sd, (Xt - mu) / sd
        for gamma in gammas:
            for B in budgets:
                for label, maint in MAINTENANCE:
                    learner = create("bpegasos", "binary", maintenance=maint, sigma=float(np.sqrt(1 / (2 * gamma))),
                                     lam=LAM, budget=B, ball_projection=False)
                    t0 = time.process_time()
                    learner.run(X, y)
                    cpu = time.process_time() - t0
                    events = learner.maintenance_events_
                    per_event = learner.gradient_error_
                    row = {"n": n, "gamma": gamma, "B": B, "maintenance": label, "per_event": per_event,
                           "all_steps": per_event * events / n, "events": events, "cpu_s": cpu,
                           "acc": float(np.mean(learner.predict(Xt) == yt))}
                    rows.append(row)
                    print(row, flush=True)
    return rows


def render_gradient(rows, load_before, load_after) -> str:
    lines = ["## Gradient error of BSGD's JMLR 2012 Table 4 (`python benchmarks/bsgd.py --gradient-only`)", "",
             "Checkerboard (4x4, z-scored with the training statistics), lambda = 1e-4, no ball projection, one pass; "
             "20,000 fresh test points. Ebar (all steps) = sum_t lambda t ||Delta_t|| / N, the paper's definition "
             "(eq. 4.2: E_t = 0 at steps without maintenance); per event = the same sum / #maintenance events. "
             f"Machine: {page.cpu_model()}; load average {load_before[0]:.1f} before, {load_after[0]:.1f} after.", "",
             "| gamma | B | n | maintenance | Ebar all steps | per event | events | test acc % | published Ebar (10M) "
             "| published acc % | CPU s |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        acc, ge = PUBLISHED_GE[(r["B"], r["maintenance"])]
        lines.append(f"| {r['gamma']:g} | {r['B']} | {r['n']:,} | {r['maintenance']} | {r['all_steps']:.4f} | "
                     f"{r['per_event']:.4f} | {r['events']:,} | {100 * r['acc']:.2f} | {ge} | {acc} | {r['cpu_s']:.1f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--budgetedsvm", type=Path, default=os.environ.get("BUDGETEDSVM_DIR"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--gradient-only", action="store_true", help="only the Table 4 gradient errors")
    ap.add_argument("--gradient-n", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--gradient-budgets", type=int, nargs="+", default=[100, 500])
    ap.add_argument("--gradient-gammas", type=float, nargs="+", default=[8.0, 16.0])
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "BSGD.md")
    args = ap.parse_args(argv)
    if args.gradient_only:
        before = os.getloadavg()
        rows = gradient_errors(args.gradient_n, args.gradient_budgets, args.gradient_gammas)
        page.write_section("bsgd-gradient-error", render_gradient(rows, before, os.getloadavg()))
        return 0
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
    load_after = os.getloadavg()
    text = render(rows, reason, args, load_before, load_after)
    args.out.write_text(text)
    print(text)
    return 0


def render(rows, reason, args, load_before, load_after) -> str:
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
    lines += ["", f"Run with: `{' '.join([Path(sys.executable).name, *sys.argv])}` on {platform.python_version()}."]
    from lsokl.packaged import portable_paths

    return portable_paths("\n".join(lines) + "\n")  # committed: no machine paths (the BudgetedSVM clone's)


if __name__ == "__main__":
    sys.exit(main())
