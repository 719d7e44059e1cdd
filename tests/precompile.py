"""Compile lsokl's numba loops once before the test suite's parallel workers start.

numba's on-disk cache lives under the source tree's absolute path, so a fresh clone (every CI run)
starts cold, and pytest-xdist's workers would each compile the same loops: on 2 CPUs that doubled
the compile time (a fresh clone's suite took 12 min 47 s, a warm one 5 min 29 s). ``make test``
runs this first, one process per CPU, each compiling its share of the registered learners: every
(learner, task) at its defaults and at a small budget, played on dense float64, dense float32 and
CSR rows with labels that force updates (so the code that runs once the budget is full is compiled
too), then predicted. What a test needs beyond that (other parameter types, other layouts) it still
compiles itself.

    python tests/precompile.py PART PARTS
"""
from __future__ import annotations

import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp


def _inputs(task: str, n: int = 96, d: int = 5):
    rng = np.random.default_rng(0)
    X = rng.random((n, d))
    i = np.arange(n)
    y = {"binary": np.where(i % 2 == 0, 1.0, -1.0), "multiclass": (i % 3).astype(np.float64),
         "regression": np.where(i % 2 == 0, 1.0, -1.0) * rng.random(n)}[task]
    return [X, X.astype(np.float32), sp.csr_matrix(X), sp.csr_matrix(X.astype(np.float32))], y


def compile_share(part: int, parts: int) -> int:
    from lsokl.learners import registry

    done = 0
    for k, (task, name) in enumerate(sorted(registry.LEARNERS)):
        if k % parts != part:
            continue
        inputs, y = _inputs(task)
        for params in ({}, {"budget": 20}):
            for X in inputs:
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        model = registry.create(name, task, **params)
                        run = getattr(model, "run", None)
                        if run is not None:
                            run(X, y, np.arange(X.shape[0], dtype=np.int64))
                        else:
                            model.fit(X, y)
                        model.predict(X[:8])
                except Exception:  # noqa: BLE001 - a learner that refuses a layout or a parameter: its tests say so
                    continue
                done += 1
    return done


if __name__ == "__main__":
    part, parts = (int(a) for a in sys.argv[1:3])
    t0 = time.perf_counter()
    n = compile_share(part, parts)
    print(f"precompile {part + 1}/{parts}: {n} fits in {time.perf_counter() - t0:.0f} s", flush=True)
