"""Convergence plots in the style of the paper's Figs. 1-2: online mistake rate (or squared loss)
and log10 time against the number of samples, one line per algorithm setting, band = std over
permutations."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd


def _curves(grp: pd.DataFrame, task: str):
    """Stack the permutations' curves on the checkpoints they all share."""
    key = "squared_loss" if task == "regression" else "mistake_rate"
    curves = [json.loads(c) for c in grp["curve"] if isinstance(c, str) and c]  # batch rows: no curve (NaN)
    if not curves:
        return None
    common = sorted(set.intersection(*(set(c["t"]) for c in curves)))
    if not common:
        return None
    ys, ts = [], []
    for c in curves:
        idx = {t: i for i, t in enumerate(c["t"])}
        ys.append([c[key][idx[t]] for t in common])
        ts.append([c["time_s"][idx[t]] for t in common])
    y = np.array(ys, dtype=float) * (1.0 if task == "regression" else 100.0)
    return np.array(common), y, np.array(ts, dtype=float)


def _band(ax, x, stack, transform=None, **kw):
    mean = stack.mean(axis=0)
    sd = stack.std(axis=0, ddof=1) if stack.shape[0] > 1 else np.zeros_like(mean)
    lo, hi = mean - sd, mean + sd
    if transform is not None:
        mean, lo, hi = transform(mean), transform(np.maximum(lo, mean * 1e-3)), transform(hi)
    (line,) = ax.plot(x, mean, marker="o", markersize=3, linewidth=1.5, **kw)
    ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.2, linewidth=0)


def caption(ds: str, part: pd.DataFrame) -> str:
    first = part.iloc[0]
    n_perm = part.groupby("row")["permutation"].nunique().max()
    shared = _shared_params(part)
    bits = [f"{ds}: n={int(first['n_samples'])}, d={int(first['n_features'])}",
            f"{n_perm} permutation{'s' if n_perm != 1 else ''} (seed {first['seed']})",
            f"scale={first['scale'] if isinstance(first['scale'], str) else 'as stored'}"]
    if pd.notna(first["max_samples"]):
        bits.append(f"max_samples={int(first['max_samples'])}")
    if shared:
        bits.append("common settings: " + ", ".join(f"{k}={v}" for k, v in shared.items()))
    return "; ".join(bits) + ". Lines: mean over permutations; bands: ±1 std."


def _shared_params(part: pd.DataFrame) -> dict:
    """Parameters with one value across every setting that has them (budget for budgeted ones)."""
    settings = [json.loads(p) for p in part["params"].unique()]
    keys = set().union(*settings) if settings else set()
    out = {}
    for k in sorted(keys):
        values = {json.dumps(s[k]) for s in settings if k in s}
        if len(values) == 1:
            out[k] = next(s[k] for s in settings if k in s)
    return out


def convergence_plots(frame: pd.DataFrame, agg: pd.DataFrame, out: Path, dpi: int = 120) -> list[Path]:
    """One PNG and one SVG per dataset under ``out``; returns the files written."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    ok = frame[frame["status"] == "ok"].merge(
        agg[["dataset", "algorithm", "params", "row"]], on=["dataset", "algorithm", "params"])
    written = []
    for ds, part in ok.groupby("dataset", sort=False):
        task = part["task"].iloc[0]
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.6))
        for row in dict.fromkeys(agg[agg["dataset"] == ds]["row"]):
            got = _curves(part[part["row"] == row], task)
            if got is None:
                continue
            x, y, t = got
            _band(ax1, x, y, label=row)
            _band(ax2, x, t, transform=np.log10, label=row)
        ax1.set_xlabel("number of samples")
        ax1.set_ylabel("average squared loss" if task == "regression" else "online average rate of mistakes (%)")
        ax2.set_xlabel("number of samples")
        ax2.set_ylabel("average time cost (log10 s)")
        ax1.set_title(f"{ds}: {'loss' if task == 'regression' else 'mistake rate'}")
        ax2.set_title(f"{ds}: time")
        for ax in (ax1, ax2):
            ax.grid(True, alpha=0.3)
        handles, labels = ax1.get_legend_handles_labels()
        fig.legend(handles, labels, loc="center right", fontsize=9, frameon=False)
        fig.text(0.01, 0.01, "\n".join(textwrap.wrap(caption(ds, part), 150)), fontsize=8,
                 va="bottom", ha="left")
        fig.tight_layout(rect=(0, 0.08, 0.8, 1))
        stem = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in ds)
        for ext in ("png", "svg"):
            path = out / f"{stem}.{ext}"
            fig.savefig(path, dpi=dpi)
            written.append(path)
        plt.close(fig)
    return written
