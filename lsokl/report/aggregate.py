"""Records -> one row per (task, dataset, algorithm setting): mean, sample std, mean time."""
from __future__ import annotations

import json
from collections.abc import Iterable

import numpy as np
import pandas as pd

from ..learners.registry import DISPLAY_NAMES, LEARNERS

# The papers' row order: the order of the registry (Perceptron, OGD, RBP, ... FOGD, NOGD).
ORDER = list(dict.fromkeys(n for (_, n) in LEARNERS))
# The holdout protocol's metrics (lsokl.runner.protocols.holdout); online metrics keep the defaults.
UNITS = {"test_accuracy": "test accuracy %", "test_rmse": "test RMSE"}


def records_frame(records: Iterable[dict]) -> pd.DataFrame:
    """One row per record; ``params`` kept as canonical JSON so settings can be grouped."""
    rows = []
    for r in records:
        if ((r.get("holdout") or {}).get("evaluated_on") or "test") != "test":
            continue  # an inner cell of a hyper-parameter selection, not a result
        rows.append({
            "key": r["key"], "config_name": r["config_name"], "status": r["status"],
            "task": r["task"], "dataset": r["dataset"], "algorithm": r["algorithm"],
            "learner": r["learner"], "params": json.dumps(r["params"], sort_keys=True),
            "permutation": r["permutation"], "seed": r["seed"], "scale": r["scale"],
            "max_samples": r["max_samples"], "n_samples": r["n_samples"],
            "n_features": r["n_features"], "metric": r["metric"], "value": r["value"],
            "mistakes": r["mistakes"], "time_s": r["time_s"], "support_size": r["support_size"],
            "error": (r["error"] or {}).get("message") if r["error"] else None,
            "curve": json.dumps(r["curve"]) if r["curve"] else None,
            "degenerate": bool(r.get("degenerate")),  # a constant predictor (lsokl.compute.degenerate)
            # the best constant predictor's value on the same stream (online passes; else None)
            "constant": (r.get("constant") or {}).get("value"),
        })
    cols = ["key", "config_name", "status", "task", "dataset", "algorithm", "learner", "params",
            "permutation", "seed", "scale", "max_samples", "n_samples", "n_features", "metric",
            "value", "mistakes", "time_s", "support_size", "error", "curve", "degenerate", "constant"]
    return pd.DataFrame(rows, columns=cols)


def _varying(frame: pd.DataFrame) -> dict[str, list[str]]:
    """Per algorithm label, the parameters that differ between its settings on one dataset.

    A value tuned per dataset (the paper's eta) keeps one row; a sweep on a dataset (several
    budgets) gets one row per value.
    """
    out: dict[str, set] = {}
    for (label, _), grp in frame.groupby(["algorithm", "dataset"]):
        settings = [json.loads(p) for p in grp["params"].unique()]
        keys = set().union(*settings) if settings else set()
        out.setdefault(label, set()).update(
            k for k in keys if len({json.dumps(s.get(k)) for s in settings}) > 1)
    return {label: sorted(keys) for label, keys in out.items()}


def row_label(label: str, learner: str, params: dict, varying: list[str]) -> str:
    name = DISPLAY_NAMES.get(learner, label) if label == learner else label
    if varying:
        name += " (" + ", ".join(f"{k}={_fmt(params.get(k))}" for k in varying) + ")"
    return name


def _fmt(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def aggregate(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean and sample std (ddof=1) over permutations of the ok runs; classification in percent."""
    if frame.empty:
        return pd.DataFrame(columns=["task", "dataset", "algorithm", "learner", "params", "row",
                                     "mean", "std", "time_s", "support", "n_ok", "n_failed",
                                     "n_diverged", "n_timeout", "n_degenerate", "n_samples", "unit"])
    varying = _varying(frame)
    out = []
    for (task, ds, label, learner, params), grp in frame.groupby(
            ["task", "dataset", "algorithm", "learner", "params"], sort=False):
        ok = grp[grp["status"] == "ok"]
        scale = 1.0 if task == "regression" or grp["metric"].iloc[0] == "test_rmse" else 100.0
        vals = ok["value"].astype(float).to_numpy() * scale
        p = json.loads(params)
        out.append({
            "task": task, "dataset": ds, "algorithm": label, "learner": learner, "params": params,
            "row": row_label(label, learner, p, varying.get(label, [])),
            "mean": float(np.mean(vals)) if len(vals) else np.nan,
            "std": float(np.std(vals, ddof=1)) if len(vals) > 1 else np.nan,
            "time_s": float(ok["time_s"].astype(float).mean()) if len(ok) else np.nan,
            "support": float(ok["support_size"].astype(float).mean()) if len(ok) else np.nan,
            "n_ok": len(ok), "n_failed": int((grp["status"] == "failed").sum()),
            "n_diverged": int((grp["status"] == "diverged").sum()),
            "n_timeout": int((grp["status"] == "timeout").sum()),
            "n_degenerate": int(ok["degenerate"].astype(bool).sum()),
            "n_samples": int(grp["n_samples"].dropna().max()) if grp["n_samples"].notna().any() else None,
            "unit": UNITS.get(grp["metric"].iloc[0],
                              "squared loss" if task == "regression" else "mistake rate %"),
        })
    agg = pd.DataFrame(out + constant_rows(frame))
    agg["_order"] = agg["learner"].map(lambda n: ORDER.index(n) if n in ORDER else len(ORDER))
    agg = agg.sort_values(["task", "_order", "algorithm", "row"], kind="stable").drop(columns="_order")
    return agg.reset_index(drop=True)


def attach_paper(agg: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """Add the published mean/std/time and the deviation (ours - published) / published std.

    Cells are matched on dataset and algorithm; when the paper lists a budget (B) and our
    setting has one, they must agree too.
    """
    from .paper import norm_dataset

    agg = agg.copy()
    for col in ("paper_mean", "paper_std", "paper_time_s", "deviation_sd"):
        agg[col] = np.nan
    for i, row in agg.iterrows():
        hits = paper[(paper["dataset_key"] == norm_dataset(row["dataset"]))
                     & (paper["learner"] == row["learner"])]
        budget = json.loads(row["params"]).get("budget")
        if len(hits) > 1 and budget is not None and "B" in hits:
            hits = hits[hits["B"] == budget]
        if len(hits) != 1:
            continue
        hit = hits.iloc[0]
        agg.loc[i, ["paper_mean", "paper_std", "paper_time_s"]] = [
            float(hit["mean"]), float(hit["std"]), float(hit.get("time_s", np.nan))]
        if hit["std"] > 0 and np.isfinite(row["mean"]):
            agg.loc[i, "deviation_sd"] = (row["mean"] - hit["mean"]) / hit["std"]
        # a printed std of 0.00 leaves the deviation undefined: it stays NaN, the value still shows
    return agg


#: the reference row's labels: never a learner of the registry
CONSTANT = "constant"
CONSTANT_ROW = "Constant (reference)"


def constant_rows(frame: pd.DataFrame) -> list[dict]:
    """One reference row per (task, dataset): the best constant predictor (majority class, mean target;
    :func:`lsokl.compute.degenerate.constant_reference`) on the streams the learners were played on, one
    value per distinct stream (permutation and length; every pass of a stream sees the same constant), so
    its mean and std are over the same permutations as the rows above it. Records without the value
    (written before it was recorded, or by the holdout protocol) give no row."""
    if "constant" not in frame or frame["constant"].isna().all():
        return []
    rows = []
    ok = frame[(frame["status"] == "ok") & frame["constant"].notna()]
    for (task, ds), grp in ok.groupby(["task", "dataset"], sort=False):
        streams = grp.drop_duplicates(["permutation", "n_samples"])
        scale = 1.0 if task == "regression" else 100.0
        vals = streams["constant"].astype(float).to_numpy() * scale
        rows.append({
            "task": task, "dataset": ds, "algorithm": CONSTANT, "learner": CONSTANT, "params": "{}",
            "row": CONSTANT_ROW, "mean": float(np.mean(vals)),
            "std": float(np.std(vals, ddof=1)) if len(vals) > 1 else np.nan,
            "time_s": np.nan, "support": np.nan, "n_ok": len(vals), "n_failed": 0, "n_diverged": 0,
            "n_timeout": 0, "n_degenerate": 0,
            "n_samples": int(streams["n_samples"].max()),
            "unit": "squared loss" if task == "regression" else "mistake rate %",
        })
    return rows
