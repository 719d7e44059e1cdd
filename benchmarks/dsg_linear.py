"""Bounded DSG's training pass against n: CPU time (process time, one BLAS thread) of `fit` at n,
2n and 4n rows, beside the pass's work count (`feature_rows_`, the (row, block) feature evaluations,
which `tests/learners/test_dsg_bounded.py` checks exactly). The growing form (max_blocks=None) is
timed beside it for contrast. Best of 3 per size, after one warm-up fit (compilation, caches).

    python benchmarks/dsg_linear.py
"""
from __future__ import annotations

import time

import numpy as np
from threadpoolctl import threadpool_limits

from page import load, machine, write_section

from lsokl.learners.stochastic.dsg import DSG


def _pass(n: int, max_blocks):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 20)).astype(np.float32)
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    m = DSG(sigma=3.0, batch_size=32, block_features=64, max_blocks=max_blocks, random_state=0, max_iter=1,
            shuffle=False)
    t = time.process_time()
    m.fit(X, y)
    return m.feature_rows_, time.process_time() - t


def main() -> None:
    start = load()
    rows = []
    with threadpool_limits(1):
        for form, mb, sizes in (("bounded (max_blocks=10)", 10, (20_000, 40_000, 80_000)),
                                ("growing (max_blocks=None)", None, (5_000, 10_000, 20_000))):
            _pass(2_000, mb)  # compile, warm caches
            prev = None
            for n in sizes:
                work = _pass(n, mb)[0]
                cpu = min(_pass(n, mb)[1] for _ in range(3))
                ratio = "" if prev is None else f"{cpu / prev:.2f}x"
                rows.append(f"| {form} | {n:,} | {work:,} | {cpu:.2f} s | {ratio} |")
                prev = cpu
    md = "\n".join([
        "## DSG's training pass against n (`benchmarks/dsg_linear.py`)", "",
        f"{machine()}; {start} at the start, {load()} at the end.", "",
        "`DSG(sigma=3, batch_size=32, block_features=64, max_iter=1, shuffle=False)` on n x 20 float32 Gaussian rows, `fit` (one pass); CPU time "
        "(process time, one BLAS thread), best of 3; work = `feature_rows_`. The bounded form's time should double with "
        "n (linear), the growing form's quadruple (quadratic); passes of a fraction of a second are noisy on a shared "
        "machine, so read the ratio over 4n (first to last row of a form).", "",
        "| form | n | work (row, block evaluations) | CPU time | against the previous n |",
        "|---|---|---|---|---|", *rows])
    print(md)
    write_section("dsg-linear", md)


if __name__ == "__main__":
    main()
