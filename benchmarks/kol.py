"""lsokl beside the authors' C++ toolbox KOL (github.com/LIBOL/KOL) on the same stream, same run.

    KOL_BIN=/path/to/KOL python benchmarks/kol.py [--datasets a9a] [--repeats 3]
        [--algorithms perceptron,ogd,fogd,nogd,rbp,forgetron,projectron,bpas,bogd]

KOL is not part of lsokl and is not shipped or built by it. To build it (needs CMake, a C++
compiler and Eigen 3, e.g. Debian's ``libeigen3-dev``), outside this repository::

    git clone https://github.com/LIBOL/KOL && cd KOL && mkdir build && cd build
    cmake .. -DEIGEN_DIR=/usr/include/eigen3/Eigen && make KOL     # -> build/bin/KOL

(``EIGEN_DIR`` must be the folder that holds the header ``Eigen``, because KOL's sources
``#include <Eigen>``.) Without ``KOL_BIN`` / ``--kol`` the section says it was skipped and why.

What is compared: the binary stream of the registry dataset, in the order the lsokl benchmark
uses (a fixed random permutation), written once as a LIBSVM text file for KOL. Both at the
paper's settings: Gaussian kernel with sigma = 8 (KOL's ``-gamma`` = 1 / (2 sigma^2)), B = 100,
FOGD D = 400, NOGD k = 20, the step sizes of lsokl's defaults. KOL's time is the wall time of
its process, which reads and parses the text file inside its timed learning loop (it streams the
file; its own "Learning time" includes the parsing, see PEERS.md); lsokl's is the pass alone on
data already loaded, so the ratio flatters lsokl by KOL's parsing time, which the "KOL parse
only" row estimates (KOL's Perceptron with a budget of 1 and no kernel work worth counting is
not available, so it is KOL's FOGD with D = 1). Mistake counts differ by design (KOL's
sign(0) = -1, its FOGD's approximate sin/cos, NOGD's unsorted eigenpairs; PEERS.md lists them)
and are shown only as a sanity check.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import page  # noqa: E402
from run import fmt_rate, measure  # noqa: E402

SIGMA, BUDGET = 8.0, 100
# lsokl name -> (KOL -opt name, extra KOL flags at the paper's settings / lsokl's defaults)
KOL_ALGORITHMS = {
    "perceptron": ("kernel-perceptron", []),
    "ogd": ("kernel-ogd", ["-eta", "0.2"]),
    "fogd": ("kernel-fogd", ["-D", "400", "-eta", "0.002"]),
    "nogd": ("kernel-nogd", ["-knogd", "20", "-eta", "0.2", "-eta1", "0.002"]),
    "rbp": ("kernel-rbp", []),
    "forgetron": ("kernel-forgetron", []),
    "projectron": ("kernel-projectron", []),
    "bpas": ("kernel-bpas", ["-cbpas", "1"]),
    "bogd": ("kernel-bogd", ["-eta", "0.2", "-lambda", "0.01"]),
}


BUILD = """How to build KOL (it is never part of this repository): with CMake, a C++ compiler and
Eigen 3 (Debian: `apt-get install cmake g++ libeigen3-dev`), outside the lsokl checkout:

```bash
git clone https://github.com/LIBOL/KOL && cd KOL && mkdir build && cd build
cmake .. -DEIGEN_DIR=/usr/include/eigen3/Eigen && make KOL   # -> build/bin/KOL
KOL_BIN=$PWD/bin/KOL python /path/to/lsokl/benchmarks/kol.py  # or: KOL_BIN=... make bench
```

`EIGEN_DIR` must be the folder holding the header `Eigen`: KOL's sources `#include <Eigen>`."""


def write_libsvm(dataset: str, folder: Path) -> tuple[Path, int]:
    """The benchmark's stream (measure.load_stream order) as a LIBSVM text file, 1-based."""
    import numpy as np
    import scipy.sparse as sp

    from measure import load_stream

    X, y, order = load_stream(dataset)
    X = sp.csr_matrix(X)[order]
    y = np.asarray(y)[order]
    path = folder / f"{dataset}.libsvm"
    with path.open("w") as fh:
        for r in range(X.shape[0]):
            a, b = X.indptr[r], X.indptr[r + 1]
            feats = " ".join(f"{j + 1}:{v:.17g}" for j, v in zip(X.indices[a:b], X.data[a:b]))
            fh.write(f"{int(y[r]):+d} {feats}\n")
    return path, X.shape[0]


def run_kol(kol: str, path: Path, n: int, opt: str, flags: list[str]) -> dict | None:
    gamma = 1.0 / (2.0 * SIGMA**2)
    cmd = [kol, "-i", str(path), "-opt", opt, "-gamma", repr(gamma), "-B", str(BUDGET), *flags]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        print(f"KOL {opt} failed: {proc.stderr[-500:]}", file=sys.stderr)
        return None
    acc = re.search(r"Learn ac+uracy:\s*([\d.]+)%", proc.stdout)
    learn = re.search(r"Learning time:\s*([\d.]+)", proc.stdout)
    return {"wall": wall, "learning_time": float(learn.group(1)) if learn else float("nan"),
            "mistakes": round((1 - float(acc.group(1)) / 100) * n) if acc else None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kol", default=os.environ.get("KOL_BIN"), help="the KOL executable [env KOL_BIN]")
    ap.add_argument("--datasets", default="a9a")
    ap.add_argument("--algorithms", default=",".join(KOL_ALGORITHMS))
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    title = "## Beside the authors' C++ KOL (`benchmarks/kol.py`)"
    if not args.kol or not Path(args.kol).is_file() or not os.access(args.kol, os.X_OK):
        why = ("KOL_BIN is not set" if not args.kol else f"{args.kol} is not an executable file")
        page.write_section("kol", f"{title}\n\nSkipped: {why}.\n\n{BUILD}")
        print(f"skipped: {why}")
        return
    load_start = page.load()
    lines = [title, "",
             "Same stream (the benchmark's fixed random order, written once as a LIBSVM file for KOL),",
             "paper's settings (sigma = 8 i.e. KOL -gamma 0.0078125, B = 100, D = 400, k = 20). KOL: wall",
             "time of its process, which parses the text file inside its learning loop; lsokl: the",
             "pass alone on loaded data (its own timer), compilation excluded. Median of "
             f"{args.repeats} runs each, alternating.", "", f"Machine: {page.machine()}.",
             "KOL built from github.com/LIBOL/KOL (commit e8627b8 when this was written) with its own "
             "CMakeLists (-O2), Eigen 3.4.", ""]
    rows = []
    with tempfile.TemporaryDirectory(prefix="lsokl-kol-") as tmp:
        for ds in args.datasets.split(","):
            path, n = write_libsvm(ds, Path(tmp))
            parse = [run_kol(args.kol, path, n, "kernel-fogd", ["-D", "1"]) for _ in range(args.repeats)]
            parse_s = statistics.median(r["wall"] for r in parse if r) if any(parse) else float("nan")
            for alg in args.algorithms.split(","):
                opt, flags = KOL_ALGORITHMS[alg]
                print(f"KOL vs lsokl: {ds} / {alg} ...", flush=True)
                kol_runs = [run_kol(args.kol, path, n, opt, flags) for _ in range(args.repeats)]
                kol_runs = [r for r in kol_runs if r]
                mine = measure(ds, alg, args.repeats)
                if not kol_runs or not mine:
                    rows.append(f"| {ds} | {alg} | failed | | | | |")
                    continue
                kol_wall = statistics.median(r["wall"] for r in kol_runs)
                rows.append(f"| {ds} | {alg} | {kol_wall:.2f} | {mine['elapsed_s']:.3f} | "
                            f"{kol_wall / mine['elapsed_s']:,.0f}x | "
                            f"{max(kol_wall - parse_s, 0.0) / mine['elapsed_s']:,.0f}x | "
                            f"{kol_runs[0]['mistakes']:,} / {mine['mistakes']:,} |")
            rows.append(f"| {ds} | KOL parse only (FOGD, D = 1) | {parse_s:.2f} | | | | |")
    lines += [f"Load: {load_start} at the start, {page.load()} at the end.", "",
              "| dataset | algorithm | KOL wall s | lsokl pass s | lsokl faster by | ... less KOL's parse time | mistakes KOL / lsokl |",
              "|---|---|---|---|---|---|---|", *rows, "", BUILD]
    page.write_section("kol", "\n".join(lines))
    print(f"wrote {page.PAGE}")


if __name__ == "__main__":
    main()
