"""The approximation protocol of MEKA Tables 3, 5, 7 and 8: build a kernel approximation
(:mod:`lsokl.approx`) and measure it.

One cell = dataset x method x parameters (rank, gamma, ...) x repetition (``permutations``
repetitions, each with its own seed). Config keys (top level, or per dataset)::

    protocol: approximation
    rows: auto          # relative Frobenius error ||G - G~||_F / ||G||_F on: `full` (every row),
                        # an integer r (r rows drawn uniformly, seeded per repetition; R's demos
                        # use 1000, the paper 20000 for ijcnn1/covtype), `auto` (full when
                        # n <= 20000, else 20000 rows) or `none` (no error: KRR or timing runs).
                        # Computed in chunks: at most 2^24 floats of G (and of G~) at a time.
    krr:                # optional: kernel ridge regression on the approximation (Table 8)
      lambda: 0.0625    #   (G~ + lambda I) alpha = y by the push-through solve
      test_fraction: 0.2  # seeded split per (seed, dataset, repetition): every method sees the same
      target: raw       #   `raw`: undo the registry's [0, 1] target scaling (cpusmall RMSE in %usr)
    block_ranks: {delta: 1.0e-6}   # optional: numerical rank of every block G(V_s, V_t) of the
                        # method's partition (MEKA's clusters; Table 3)

The record (``lsokl.results.record``): ``metric`` = ``rel_error`` (or ``test_rmse`` with
``krr``), ``value`` its value, ``time_s`` = the approximation's build time, and
``approximation`` = {memory, rank, timings and cpu_timings (wall-clock and CPU seconds per step:
MEKA's clustering, diagonal, links), rows, rows_seed, rel_error, n_train, n_test, lambda, test_rmse, block_ranks, ...}.
The full-matrix error on a dataset with n > 60000 is refused before anything is allocated.
"""
from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np

from ... import protocol_options as _options
from . import Outcome, Prepared

OPTIONS = _options.OPTIONS["approximation"]  # the config keys, validated by the config layer
DATASET_OPTIONS = _options.DATASET_OPTIONS["approximation"]  # may also be set per dataset
check_options = _options.check_approximation_options
check_learner = _options.CHECK_LEARNER["approximation"]
AUTO_FULL = 20000  # `rows: auto`: the full matrix up to this n, else this many sampled rows
FULL_LIMIT = 60000  # `rows: full` beyond this n: n^2 kernel evaluations is hours; refuse
KRR_KEYS = _options.KRR_KEYS


# --------------------------------------------------------------------------- config
def memory_estimate(spec, n_samples: int, n_features: int, n_outputs: int) -> dict:
    """What the protocol holds beside the approximation: the exact and approximate row chunks of
    the error (lsokl.approx.metrics.MAX_FLOATS floats each) and a dense copy of X."""
    from ...approx.metrics import MAX_FLOATS

    parts = {f"a dense float64 copy of X ({n_samples:,} x {n_features:,})": 8.0 * n_samples * n_features}
    if spec.get("rows", OPTIONS["rows"]) not in ("none", None):
        parts["error row chunks (exact and approximate, 2 x 2^24 floats)"] = 2 * 8.0 * MAX_FLOATS
    return parts


# --------------------------------------------------------------------------- main process
def load(spec, seed: int, options: dict) -> Prepared:
    """The dataset as configured (split, scale, max_samples); with ``krr: {target: raw}`` the
    registry's min-max target scaling is undone here, once, from the scaling the data layer
    recorded in the dataset's meta."""
    from dataclasses import replace

    from ..run import load_dataset

    ds = load_dataset(spec)
    krr = {**options, **dict(getattr(spec, "protocol_options", ()))}.get("krr")
    if krr and krr.get("target") == "raw":
        ds = replace(ds, y=raw_target(ds))
    return Prepared(train=ds)


def raw_target(ds) -> np.ndarray:
    """y in the units of the source file (the registry min-max scales some regression targets)."""
    fitted = ((ds.meta or {}).get("preprocessing_fitted") or {}).get("target") or {}
    y = np.asarray(ds.y, dtype=np.float64)
    if fitted.get("how") != "minmax":
        return y
    lo, hi = float(fitted["lo"][0]), float(fitted["hi"][0])
    return y * (hi - lo) + lo


# --------------------------------------------------------------------------- worker
def run_cell(job, data) -> Outcome:
    from ...approx.base import as_dense
    from ...approx.metrics import block_ranks, krr_fit_predict, relative_error
    from ...compute.xp import check_device, put_device
    from ..worker import _alarm, build

    spec = job.spec
    check_device(spec.get("device"))  # an absent device fails the cell in one line
    X = data.X
    n = X.shape[0]
    rows = spec.get("rows", OPTIONS["rows"])
    if rows == "full" and n > FULL_LIMIT:
        raise ValueError(f"rows: full on {spec['dataset']} means {n} x {n} kernel entries "
                         f"(n > {FULL_LIMIT}); set `rows:` to a number of sampled rows, e.g. rows: 20000")
    if rows == "auto":
        rows = "full" if n <= AUTO_FULL else AUTO_FULL
    krr = spec.get("krr")
    fit_seed = np.random.SeedSequence(list(job.seed_entropy)).spawn(3)[0]
    rows_seed = _rows_seed(spec)
    approx = build(job)
    approx._validate_params()
    _warm_up(job, X)
    X = as_dense(X)
    y = np.asarray(data.y, dtype=np.float64)
    info: dict = {"n": int(n)}
    with _alarm(job.timeout):
        if krr is not None:
            tr, te = _krr_split(spec, n, krr["test_fraction"])
            X_fit = X[tr]
        else:
            X_fit = X
        approx.fit(put_device(X_fit, spec.get("device")), seed=fit_seed)  # device: cuda -> torch
        info.update(memory=approx.memory_, rank=int(_rank(approx)), n_train=int(X_fit.shape[0]),
                    timings={k: float(v) for k, v in approx.timings_.items()},
                    cpu_timings={k: float(v) for k, v in approx.cpu_timings_.items()})
        for attr in ("ranks_", "dropped_", "negative_eigenvalues_"):
            if hasattr(approx, attr):
                val = getattr(approx, attr)
                info[attr.rstrip("_")] = val.tolist() if hasattr(val, "tolist") else val
        metric, value = None, None
        if rows != "none":
            r = None if rows == "full" else int(rows)
            rng = np.random.default_rng(rows_seed)
            t0 = time.perf_counter()
            err, idx = relative_error(approx, X_fit, float(approx.gamma), r, rng)
            info.update(rel_error=err, rows=len(idx), rows_full=r is None or r >= X_fit.shape[0],
                        rows_seed=[int(e) for e in rows_seed.entropy],
                        error_time_s=time.perf_counter() - t0)
            metric, value = "rel_error", err
        if krr is not None:
            t0 = time.perf_counter()
            pred = krr_fit_predict(approx, y[tr], X[te], krr["lambda"])
            rmse = float(np.sqrt(np.mean((pred - y[te]) ** 2)))
            info.update(test_rmse=rmse, n_test=int(len(te)), krr_time_s=time.perf_counter() - t0,
                        **{"lambda": krr["lambda"], "target": krr["target"]})
            metric, value = "test_rmse", rmse
        if spec.get("block_ranks") is not None:
            labels = getattr(approx, "labels_", None)
            if labels is None:
                raise ValueError(f"block_ranks needs a method with a partition (meka); "
                                 f"{spec['learner']} has none")
            info["block_ranks"] = block_ranks(X_fit, labels, float(approx.gamma),
                                              spec["block_ranks"]["delta"], getattr(approx, "kernel", "gaussian"))
            if metric is None:
                metric, value = "block_rank_diag_mean", float(np.mean(np.diag(info["block_ranks"])))
    if metric is None:
        metric, value = "build_time_s", float(approx.timings_["total"])
    status = "ok" if value is not None and np.isfinite(value) else "diverged"
    fields = {"metric": metric, "value": value if status == "ok" else None,
              "time_s": float(approx.timings_["total"]), "support_size": None,
              "n_samples": int(n), "mistakes": None, "mistake_rate": None, "squared_loss": None,
              "approximation": info}
    return Outcome(status=status, fields=fields)


def _rank(approx) -> int:
    L = getattr(approx, "L_", None)
    return L.shape[0] if L is not None else approx.n_components_


def _rows_seed(spec) -> np.random.SeedSequence:
    """The sampled rows of the error: the same for every method of a repetition (paired)."""
    from ..seeds import name_entropy

    return np.random.SeedSequence([int(spec["seed"]), 4, name_entropy(spec["dataset"]),
                                   int(spec["permutation"])])


def _krr_split(spec, n: int, fraction: float):
    """The same 80/20 split for every method of a repetition (seed, dataset, repetition)."""
    from ..seeds import name_entropy

    ss = np.random.SeedSequence([int(spec["seed"]), 3, name_entropy(spec["dataset"]),
                                 int(spec["permutation"])])
    from ...splits import rounded_parts, split_problem

    why = split_problem(n, fraction, 1, rounding=rounded_parts)
    if why:  # the config layer refuses this when it knows the size; a loaded dataset says it here
        raise ValueError(f"datasets.{spec['dataset']}.krr.test_fraction: {why}")
    perm = np.random.default_rng(ss).permutation(n)
    n_test = int(round(fraction * n))
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


_WARMED: set = set()


def _warm_up(job, X) -> None:
    """Compile the numba code a method uses (FWHT, sin/cos, Nystrom kernel rows) on a few rows,
    once per process, so compilation is not in the step timings."""
    from ...approx.base import as_dense
    from ..worker import build

    name = job.spec["learner"]
    if name in _WARMED:
        return
    _WARMED.add(name)
    m = int(min(X.shape[0], 64))
    Xs = as_dense(X[:m])
    rank = int(job.spec["params"].get("rank", 8))
    small = {} if name in ("rks", "fastfood") else {"rank": max(1, min(rank, m // 2))}
    if "clusters" in job.spec["params"]:
        small.update(clusters=2, rank=max(1, min(rank, m // 4)), total_rank=None)
    try:
        build(job, **small).fit(Xs, seed=0)
    except Exception:  # noqa: BLE001 - warm-up only; the real fit reports its own errors
        pass
