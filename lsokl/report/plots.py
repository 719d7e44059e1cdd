"""Convergence plots in the style of the paper's Figs. 1-2: online mistake rate (or squared loss)
and time (log axis, seconds) against the number of samples, one line per algorithm setting,
band = std over permutations. With published values attached to ``agg``
(:func:`lsokl.report.aggregate.attach_paper`: ``paper_mean``, ``paper_std``, ``paper_time_s``),
each setting's published end point (the table's value after the whole pass) is marked at the
last sample, in the line's colour, with its ±1 published std; one legend entry names the marker."""
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


#: how a published value is drawn on every reproduction plot (one legend entry for all of them)
PUBLISHED_STYLE = dict(marker="*", markersize=11, markeredgecolor="black", markeredgewidth=0.6,
                       linestyle="none", zorder=5)
PUBLISHED_LABEL = "published (paper), ±1 std"


def published_handle(source: str | None = None):
    """The legend entry of the published-value marker (grey: the colour is each line's)."""
    from matplotlib.lines import Line2D

    label = PUBLISHED_LABEL + (f" ({source})" if source else "")
    return Line2D([], [], color="0.6", label=label, **PUBLISHED_STYLE)


def mark_published(ax, x, mean, std, colour) -> None:
    """One published value at ``x``: a star in the line's colour with a ±1 std bar."""
    ax.errorbar([x], [mean], yerr=[std if np.isfinite(std) else 0.0], color=colour, capsize=4,
                elinewidth=1.2, label="_published", **PUBLISHED_STYLE)


#: the artist id of a published value drawn as a horizontal line (``ax.axhline(..., gid=PUBLISHED_GID)``)
PUBLISHED_GID = "published"


def published_marks(fig) -> list[dict]:
    """The published values a figure shows, read back from its artists: every star marker
    (:data:`PUBLISHED_STYLE`, a point at the paper's own setting) and every horizontal line with
    gid :data:`PUBLISHED_GID`, as {"axes": title, "kind": "point" | "line", "x", "y"}."""
    marks = []
    for ax in fig.axes:
        title = ax.get_title()
        for line in ax.lines:
            xs, ys = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
            if line.get_marker() == PUBLISHED_STYLE["marker"] and line.get_linestyle() in ("None", "none", ""):
                marks += [{"axes": title, "kind": "point", "x": float(x), "y": float(y)}
                          for x, y in zip(xs, ys) if np.isfinite(x) and np.isfinite(y)]
            elif line.get_gid() == PUBLISHED_GID and len(ys):
                marks.append({"axes": title, "kind": "line", "x": None, "y": float(ys[0])})
    return marks


def save_figure(fig, stem: str | Path, dpi: int = 120, exts=("png", "svg")) -> list[Path]:
    """Save ``fig`` as ``<stem>.<ext>`` and its published marks as ``<stem>.marks.json`` (the
    plotted points a test or a reader can check against the paper without reading pixels).
    Every reproduction plot is saved through here."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for ext in exts:
        path = stem.parent / f"{stem.name}.{ext}"
        fig.savefig(path, dpi=dpi)
        written.append(path)
    sidecar = stem.parent / f"{stem.name}.marks.json"
    sidecar.write_text(json.dumps({"figure": stem.name, "published": published_marks(fig)}, indent=1) + "\n")
    return written


def _band(ax, x, stack, positive=False, **kw):
    """Mean line and ±1 std band; ``positive``: a log-axis quantity (the band stays above 0)."""
    mean = stack.mean(axis=0)
    sd = stack.std(axis=0, ddof=1) if stack.shape[0] > 1 else np.zeros_like(mean)
    lo, hi = mean - sd, mean + sd
    if positive:
        lo = np.maximum(lo, mean * 1e-3)
    (line,) = ax.plot(x, mean, marker="o", markersize=3, linewidth=1.5, **kw)
    ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.2, linewidth=0)
    return line


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
    return "; ".join(bits) + ". Lines: mean over permutations; bands: ±1 std; time on a log axis."


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
    has_paper = "paper_mean" in agg.columns
    for ds, part in ok.groupby("dataset", sort=False):
        task = part["task"].iloc[0]
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.6))
        rows = agg[agg["dataset"] == ds].drop_duplicates("row").set_index("row")
        marked = False
        for row in rows.index:
            got = _curves(part[part["row"] == row], task)
            if got is None:
                continue
            x, y, t = got
            line = _band(ax1, x, y, label=row)
            _band(ax2, x, t, positive=True, label=row)
            if has_paper and np.isfinite(rows.at[row, "paper_mean"]):  # the table's end point
                end = int(part[part["row"] == row]["n_samples"].max())
                mark_published(ax1, end, rows.at[row, "paper_mean"], rows.at[row, "paper_std"],
                               line.get_color())
                if np.isfinite(rows.at[row, "paper_time_s"]) and rows.at[row, "paper_time_s"] > 0:
                    mark_published(ax2, end, rows.at[row, "paper_time_s"], np.nan, line.get_color())
                marked = True
        ax1.set_xlabel("number of samples")
        ax1.set_ylabel("average squared loss" if task == "regression" else "online average rate of mistakes (%)")
        ax2.set_xlabel("number of samples")
        ax2.set_yscale("log")
        ax2.set_ylabel("average time cost (s, log scale)")
        ax1.set_title(f"{ds}: {'loss' if task == 'regression' else 'mistake rate'}")
        ax2.set_title(f"{ds}: time")
        for ax in (ax1, ax2):
            ax.grid(True, alpha=0.3)
        handles, labels = ax1.get_legend_handles_labels()
        if marked:  # one entry for the published markers, not one per line
            handles = handles + [published_handle()]
            labels = labels + [handles[-1].get_label()]
        fig.legend(handles, labels, loc="center right", fontsize=9, frameon=False)
        fig.text(0.01, 0.01, "\n".join(textwrap.wrap(caption(ds, part), 150)), fontsize=8,
                 va="bottom", ha="left")
        fig.tight_layout(rect=(0, 0.08, 0.8, 1))
        stem = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in ds)
        written += save_figure(fig, out / stem, dpi)
        plt.close(fig)
    return written
