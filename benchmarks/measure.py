"""One throughput measurement in a fresh process (so peak RSS belongs to it alone).

    python benchmarks/measure.py DATASET ALGORITHM   -> one JSON line on stdout

DATASET is a registry name (regression sets as the data layer gives them: [0,1]-scaled), ``covtype-shaped`` (581,012 x 54 dense, the built-in generator
``scale``), ``covtype-shaped-100k`` (its first 100,000 rows' shape: 100,000 x 54) or
``kddcup99-minmax`` (kddcup99 scaled to [0, 1] per feature, as Table 5 plays it).
ALGORITHM is an lsokl learner name (binary task; ``NAME-regression``: its regression version at
the registry's defaults, the authors' regression script: sigma 8, eta 0.1, epsilon 0.1),
``fogd-dense`` (FOGD on the same rows densified: the BLAS
projection instead of the CSR one), or one of the baselines ``sk-rff`` (scikit-learn
RBFSampler(800) + SGDClassifier(hinge), strict online: transform, predict, partial_fit per
sample), ``sk-nystroem`` (Nystroem(100) fitted on the first 100 samples + the same SGD), or
``fogd-features`` (FOGD's own feature computation alone, in the same layout: per block the
projection, one BLAS call or the CSR product, then the vectorised cos/sin; a reference for how
much of FOGD's time is the features, not a bound: FOGD, which projects CSR rows one at a time,
can beat it).

LSOKL_BENCH_PER_SAMPLE=1 times the per-sample loop of the same revision (``play_in_blocks =
False``) instead of the blocked path.

Prints wall time of the pass (``elapsed_s``, the learner's own timer) and the process CPU time
spent in it (``cpu_s``): on a shared machine CPU time is the steadier of the two.
"""
from __future__ import annotations

import json
import os
import resource
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

SIGMA, BUDGET, RHO_F, RHO_N = 8.0, 100, 4, 0.2
SK_SAMPLES = 3000  # scikit-learn's strict-online loop runs ~500 samples/s: time a prefix


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def load_stream(name: str):
    from lsokl.data import load

    if name == "covtype-shaped":
        ds = load("scale", n=581012, d=54, seed=0)
    elif name == "covtype-shaped-100k":
        ds = load("scale", n=100000, d=54, seed=0)
    elif name == "kddcup99-minmax":  # as Table 5 plays it (configs/table5.yaml)
        ds = load("kddcup99", scale="minmax")
    else:
        ds = load(name)
    order = np.random.default_rng(0).permutation(ds.n_samples)
    return ds.X, np.asarray(ds.y, dtype=np.float64), order


def task_of(algorithm: str) -> tuple[str, str]:
    """("perceptron-regression") -> ("perceptron", "regression"); other names are binary."""
    if algorithm.endswith("-regression"):
        return algorithm[: -len("-regression")], "regression"
    return algorithm, "binary"


def paper_params(name: str, task: str = "binary") -> dict:
    from lsokl.learners import registry

    names = set(registry.get(name, task)._get_param_names())
    params = {"sigma": SIGMA, "budget": BUDGET, "rho_f": RHO_F, "rho_n": RHO_N, "random_state": 0}
    return {k: v for k, v in params.items() if k in names}


def learner_name(algorithm: str) -> str:
    return "fogd" if algorithm == "fogd-dense" else algorithm


def warm_up(name: str, X, y, order, task: str = "binary") -> None:
    """Compile (or load from numba's disk cache) on a prefix of the very stream to be timed: the
    same array types (a read-only memory map is a different numba type from a fresh array), and
    long enough to fill the budget twice, so removals and NOGD's switch are loaded too."""
    from lsokl.learners import create

    create(name, task, **paper_params(name, task)).run(X, y, order[: 4 * BUDGET])


def lsokl_rate(dataset: str, name: str) -> dict:
    from lsokl.learners import create

    X, y, order = load_stream(dataset)
    if name == "fogd-dense" and hasattr(X, "toarray"):
        X = np.ascontiguousarray(X.toarray())
    name, task = task_of(learner_name(name))
    warm_up(name, X, y, order, task)
    before = rss_mb()
    learner = create(name, task, **paper_params(name, task))
    learner.play_in_blocks = os.environ.get("LSOKL_BENCH_PER_SAMPLE") != "1"
    cpu = time.process_time()
    trace = learner.run(X, y, order)
    cpu = time.process_time() - cpu
    out = {"samples_per_s": len(order) / trace.elapsed, "elapsed_s": trace.elapsed, "cpu_s": cpu,
           "mistakes": int(trace.mistakes), "squared_loss": float(getattr(trace, "squared_loss", 0.0) or 0.0), "support_size": int(trace.support_size),
           "mistake_rate": trace.mistake_rate, "rss_before_mb": before,
           "n_features": int(X.shape[1]),
           "nnz_per_row": float(X.nnz / X.shape[0]) if hasattr(X, "nnz") else float(X.shape[1])}
    if name == "nogd":  # throughput after the switch to the fixed Nystrom feature map
        full = np.flatnonzero(trace.ckpt_support >= BUDGET)
        if len(full) >= 3:
            a, b = full[1], len(trace.checkpoints) - 1
            dt = trace.ckpt_time[b] - trace.ckpt_time[a]
            out["after_switch_samples_per_s"] = (trace.checkpoints[b] - trace.checkpoints[a]) / dt
    return out


def sklearn_rate(dataset: str, which: str) -> dict:
    from sklearn.kernel_approximation import Nystroem, RBFSampler
    from sklearn.linear_model import SGDClassifier

    X, y, order = load_stream(dataset)
    order = order[:SK_SAMPLES]
    gamma = 1.0 / (2 * SIGMA**2)
    if which == "sk-rff":
        mapper = RBFSampler(gamma=gamma, n_components=2 * RHO_F * BUDGET, random_state=0).fit(X[:1])
    else:
        mapper = Nystroem(gamma=gamma, n_components=BUDGET, random_state=0).fit(X[order[:BUDGET]])
    clf = SGDClassifier(loss="hinge")
    classes = np.array([-1.0, 1.0])
    mistakes = 0
    before = rss_mb()
    start = time.perf_counter()
    for t, i in enumerate(order):
        z = mapper.transform(X[i : i + 1])
        if t > 0:
            mistakes += int(clf.predict(z)[0] != y[i])
        clf.partial_fit(z, y[i : i + 1], classes=classes)
    elapsed = time.perf_counter() - start
    return {"samples_per_s": len(order) / elapsed, "elapsed_s": elapsed,
            "mistake_rate": mistakes / len(order), "rss_before_mb": before, "n_timed": len(order)}


def fogd_feature_bound(dataset: str) -> dict:
    """Fourier features of the whole stream and nothing else: per block of 256 samples, X_block @ U
    (one BLAS call, or the O(nnz D) CSR product FOGD uses) then the vectorised cos/sin."""
    from lsokl.compute import features
    from lsokl.compute.stream import Stream

    X, y, order = load_stream(dataset)
    stream = Stream(X)
    D = RHO_F * BUDGET
    U = np.random.default_rng(0).standard_normal((stream.n_features, D)) / SIGMA
    Z = np.empty((features.BLOCK, 2 * D))
    features.fourier_from_projections(features.rows_times(stream, order[:8], U), Z[:8])  # compile
    before = rss_mb()
    start = time.perf_counter()
    for a in range(0, len(order), features.BLOCK):
        P = features.rows_times(stream, order[a : a + features.BLOCK], U)
        features.fourier_from_projections(P, Z[: len(P)])
    elapsed = time.perf_counter() - start
    return {"samples_per_s": len(order) / elapsed, "elapsed_s": elapsed, "rss_before_mb": before}


def main(dataset: str, algorithm: str) -> None:
    with threadpool_limits(limits=1):
        if algorithm.startswith("sk-"):
            out = sklearn_rate(dataset, algorithm)
        elif algorithm == "fogd-features":
            out = fogd_feature_bound(dataset)
        else:
            out = lsokl_rate(dataset, algorithm)
    out.update(dataset=dataset, algorithm=algorithm, peak_rss_mb=rss_mb())
    print(json.dumps(out))


def batch(specs: list[str]) -> None:
    """``DATASET:ALGORITHM:REPEATS`` ...: the passes of every spec in this one process (medians of
    its repeats), one JSON line per spec. Used where a fresh process per pass costs too much."""
    import statistics

    with threadpool_limits(limits=1):
        for spec in specs:
            dataset, algorithm, repeats = spec.split(":")
            runs = [lsokl_rate(dataset, algorithm) for _ in range(int(repeats))]
            out = dict(runs[0])
            for key in ("samples_per_s", "elapsed_s", "cpu_s"):
                out[key] = statistics.median(r[key] for r in runs)
            out.update(dataset=dataset, algorithm=algorithm, repeats=len(runs),
                       all_mistakes=sorted({r["mistakes"] for r in runs}),
                       all_cpu_s=[round(r["cpu_s"], 3) for r in runs])
            print(json.dumps(out), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "--batch":
        batch(sys.argv[2:])
    else:
        main(*sys.argv[1:3])
