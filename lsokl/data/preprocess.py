"""Feature scaling and subsampling, on dense arrays and CSR matrices.

Every scaling is a per-column affine map x' = (x - lo) * mul + add, so statistics fitted on a train split can be
re-applied to its test split (:func:`fit_scale` / :func:`apply_scale`), and a CSR matrix stays sparse exactly when
the map sends 0 to 0.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from ..errors import DataError
from .dataset import Dataset

SCALINGS = ("none", "minmax", "minmax_pm1", "standard")


def _column_stats(X, how: str):
    if sp.issparse(X):
        from sklearn.utils.sparsefuncs import mean_variance_axis, min_max_axis

        Xc = sp.csr_matrix(X, dtype=np.float64)
        if how == "standard":
            mean, var = mean_variance_axis(Xc, axis=0)
            return np.asarray(mean), np.sqrt(np.asarray(var))
        lo, hi = min_max_axis(Xc, axis=0)  # counts the implicit zeros
        return np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    X = np.asarray(X, dtype=np.float64)
    if X.shape[0] == 0:
        raise DataError("cannot fit a scaling on zero rows")
    if how == "standard":
        return X.mean(axis=0), X.std(axis=0)
    return X.min(axis=0), X.max(axis=0)


def fit_scale(X, how: str) -> dict:
    """Per-column parameters of scaling ``how`` fitted on ``X`` (JSON-serialisable)."""
    if how not in SCALINGS:
        raise DataError(f"unknown scaling {how!r}; choose one of {', '.join(SCALINGS)}")
    d = X.shape[1]
    if how == "none":
        return {"how": "none"}
    a, b = _column_stats(X, how)
    if how == "standard":
        lo, spread, width = a, b, 1.0
    else:
        lo, spread, width = a, b - a, (1.0 if how == "minmax" else 2.0)
    constant = ~(spread > 0)
    mul = np.where(constant, 0.0, width / np.where(constant, 1.0, spread))
    # Constant columns carry no information; mapping them to 0 (not to -1 for minmax_pm1) is what svm-scale does.
    add = np.where(constant, 0.0, -1.0 if how == "minmax_pm1" else 0.0)
    params = {"how": how, "lo": lo.reshape(d).tolist(), "mul": mul.reshape(d).tolist(), "add": add.reshape(d).tolist()}
    if how != "standard":
        params["hi"] = b.reshape(d).tolist()  # exact range, e.g. to report regression errors in raw units
    return params


def apply_scale(X, params: dict):
    """Apply :func:`fit_scale` parameters. CSR input stays CSR when 0 maps to 0 in every column, else becomes dense."""
    if params["how"] == "none":
        return X
    lo, mul, add = (np.asarray(params[k], dtype=np.float64) for k in ("lo", "mul", "add"))
    if X.shape[1] != lo.size:
        raise DataError(f"scaling was fitted on {lo.size} features but X has {X.shape[1]}")
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        if np.all(add - lo * mul == 0.0):
            out = X.copy()
            out.data = out.data * mul[out.indices]
            out.eliminate_zeros()
            return out
        X = X.toarray()
    out = (np.asarray(X, dtype=np.float64) - lo) * mul + add
    return np.ascontiguousarray(out)


def scale(X, how: str = "none"):
    """Scale the columns of ``X`` (dense or CSR) by their own statistics.

    ``how``: ``"none"``; ``"minmax"`` to [0, 1] (constant columns -> 0; CSR stays sparse when every column's min is
    0); ``"minmax_pm1"`` to [-1, 1] like LIBSVM's svm-scale (constant columns -> 0); ``"standard"`` z-score (constant
    columns -> 0).
    """
    return apply_scale(X, fit_scale(X, how))


def scale_target(y: np.ndarray, how: str) -> tuple[np.ndarray, dict]:
    """Scale a regression target like a column; returns the scaled target and the parameters (to invert later)."""
    params = fit_scale(np.asarray(y, dtype=np.float64).reshape(-1, 1), how)
    return apply_scale_target(y, params), params


def apply_scale_target(y: np.ndarray, params: dict) -> np.ndarray:
    return np.asarray(apply_scale(np.asarray(y, dtype=np.float64).reshape(-1, 1), params)).reshape(-1)


def subsample(dataset: Dataset, max_samples: int | None, seed: int = 0) -> Dataset:
    """At most ``max_samples`` rows drawn without replacement (seeded), kept in their original order.

    The authors' permutations index the full set, so they are dropped from a subsample.
    """
    if max_samples is None or dataset.n_samples <= max_samples:
        return dataset
    if max_samples < 1:
        raise DataError(f"max_samples must be >= 1, got {max_samples}")
    rng = np.random.default_rng(seed)
    idx = np.sort(rng.choice(dataset.n_samples, size=max_samples, replace=False))
    X = dataset.X[idx]
    X = X.tocsr() if sp.issparse(X) else np.ascontiguousarray(X)
    meta = {**dataset.meta, "subsample": {"max_samples": int(max_samples), "seed": int(seed),
                                          "of_samples": int(dataset.n_samples)}}
    return replace(dataset, X=X, y=np.asarray(dataset.y)[idx], meta=meta, permutations=None)


def scale_dataset(dataset: Dataset, how: str | None) -> Dataset:
    """``dataset`` with its features scaled (statistics of its own rows); records the scaling in meta."""
    if how is None or how == "none":
        return dataset
    X = scale(dataset.X, how)
    steps = list(dataset.meta.get("applied", [])) + [f"scale={how}"]
    return replace(dataset, X=X, meta={**dataset.meta, "applied": steps})
