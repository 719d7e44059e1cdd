"""Test error against training samples seen (DSG Fig. 1 style), from holdout records with a curve.

The holdout protocol records, for mini-batch learners, the test error (RMSE and MAE for
regression) at log-spaced checkpoints of "training samples seen" (``holdout.curve``), and for
online learners run with ``test_at`` the test accuracy / RMSE at those steps
(``holdout.test_curve``); both are drawn. Here: one
figure per dataset, one line per algorithm label = the mean over repetitions, a band = ±1 std
(ddof=1), log x axis; plus a CSV of the mean curves and one of the end points. Curves of the
repetitions of a label share their checkpoints (same training size and batch size); when they do
not, only the common checkpoints are drawn.
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pandas as pd

from ..learners.registry import DISPLAY_NAMES
from .plots import PUBLISHED_GID, save_figure


def curve_frame(records) -> pd.DataFrame:
    """One row per (record, checkpoint) of every ok holdout record that has a curve."""
    rows = []
    for r in records:
        h = r.get("holdout") or {}
        c = h.get("curve")
        if c is None and h.get("test_curve"):  # an online learner's `test_at` curve: n, test_value
            tc = h["test_curve"]
            reg = r.get("task") == "regression"
            c = {"samples_seen": tc["n"],
                 "test_error": [v if reg else 1.0 - v for v in tc["test_value"]]}
        if r.get("status") != "ok" or not c or (h.get("evaluated_on") or "test") != "test":
            continue  # failed, no curve, or an inner cell of a hyper-parameter selection
        label = r.get("algorithm") or r.get("learner")
        task = r.get("task")
        mae = c.get("test_mae") or [np.nan] * len(c["samples_seen"])
        for s, e, m in zip(c["samples_seen"], c["test_error"], mae):
            rows.append({"dataset": r.get("dataset"), "task": task, "algorithm": label,
                         "learner": r.get("learner"), "permutation": r.get("permutation"),
                         "samples_seen": int(s), "test_error": float(e), "test_mae": float(m),
                         "n_train": h.get("n_train"), "n_test": h.get("n_test"),
                         "time_s": r.get("time_s")})
    return pd.DataFrame(rows)


def summarise(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean, std and count over repetitions per (dataset, algorithm, samples_seen), only at the
    checkpoints every repetition of that label reached."""
    g = frame.groupby(["dataset", "task", "algorithm", "learner", "samples_seen"], sort=False)
    out = g.agg(mean=("test_error", "mean"), std=("test_error", "std"), runs=("test_error", "size"),
                mae_mean=("test_mae", "mean"), mae_std=("test_mae", "std")).reset_index()
    full = out.groupby(["dataset", "algorithm"])["runs"].transform("max")
    return out[out["runs"] == full].reset_index(drop=True)


def end_points(frame: pd.DataFrame) -> pd.DataFrame:
    """The last checkpoint of every label: mean ± std over repetitions, and mean training time."""
    last = frame[frame["samples_seen"] == frame.groupby(["dataset", "algorithm"])["samples_seen"].transform("max")]
    return last.groupby(["dataset", "task", "algorithm", "learner"], sort=False).agg(
        samples_seen=("samples_seen", "max"), mean=("test_error", "mean"), std=("test_error", "std"),
        mae_mean=("test_mae", "mean"), runs=("test_error", "size"),
        time_s=("time_s", "mean")).reset_index()


def heldout_curve_figures(records, out: str | Path, *, prefix: str = "", title: str | None = None,
                       dpi: int = 120, references: dict | None = None) -> list[Path]:
    """Write ``<prefix>test-error-<dataset>.png|svg`` (+ ``.csv`` mean curves and
    ``<prefix>end-points.csv``) under ``out``. ``references``: {dataset: {label: value}} drawn as
    dotted horizontal lines (published values, in the plotted unit)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    frame = curve_frame(records)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    if frame.empty:
        return written
    table = summarise(frame)
    for ds, part in table.groupby("dataset", sort=False):
        task = part["task"].iloc[0]
        pct = 1.0 if task == "regression" else 100.0
        fig, ax = plt.subplots(figsize=(7.2, 4.8))
        for alg, g in part.groupby("algorithm", sort=False):
            label = DISPLAY_NAMES.get(alg, alg)
            x, m, s = g["samples_seen"].to_numpy(), g["mean"].to_numpy() * pct, g["std"].fillna(0).to_numpy() * pct
            line, = ax.plot(x, m, marker="o", markersize=3, linewidth=1.5, label=label)
            ax.fill_between(x, m - s, m + s, color=line.get_color(), alpha=0.18, linewidth=0)
        styles = iter([":", "--", "-.", (0, (1, 3))])
        for name, value in ((references or {}).get(ds) or {}).items():
            ax.axhline(value, linestyle=next(styles, ":"), color="gray", linewidth=1,
                       label=f"{name}: {value:.4g}",
                       gid=PUBLISHED_GID if name.startswith("published") else None)
        ax.set_xscale("log")
        clipped = task != "regression" and float((part["mean"] * pct).max()) > 40.0
        if clipped:  # early Pegasos steps predict one class (~76% error): keep the end visible
            ax.set_ylim(max(0.0, float((part["mean"] * pct).min()) - 2.0), 40.0)
        ax.set_xlabel("number of training samples seen")
        ax.set_ylabel("test RMSE" if task == "regression" else "test error (%)")
        ax.set_title(title or f"{ds}: test error vs training samples")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, frameon=False)
        runs = int(part["runs"].max())
        first = frame[frame["dataset"] == ds].iloc[0]
        per = part.groupby("algorithm", sort=False)["runs"].max()
        reps = (f"{runs} repetition{'s' if runs != 1 else ''}" if per.nunique() == 1 else
                "repetitions " + ", ".join(f"{DISPLAY_NAMES.get(a, a)} {int(k)}" for a, k in per.items()))
        cap = (f"{ds} ({task}, n_train={first['n_train']}, n_test={first['n_test']}): mean over "
               f"{reps} (band ±1 std), one pass, test error "
               f"from running test scores at log-spaced checkpoints."
               + (" y axis cut at 40% (early points above it are in the CSV)." if clipped else ""))
        fig.text(0.01, 0.01, "\n".join(textwrap.wrap(cap, 120)), fontsize=7, va="bottom", ha="left")
        fig.tight_layout(rect=(0, 0.07, 1, 1))
        stem = f"{prefix}test-error-{ds}"
        written += save_figure(fig, out / stem, dpi)
        plt.close(fig)
        part.to_csv(out / f"{stem}.csv", index=False)
        written.append(out / f"{stem}.csv")
    end_points(frame).to_csv(out / f"{prefix}end-points.csv", index=False)
    written.append(out / f"{prefix}end-points.csv")
    return written
