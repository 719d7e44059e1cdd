"""The paper's figures from a results folder (pandas + matplotlib Agg, PNG and SVG).

* :func:`sweep_figures`: a metric and log10 time against one swept parameter, one line per
  algorithm, error bars = ±1 std over permutations. Fig. 3 is the sweep of FOGD's ``rho_f``
  (D = rho_f B) and NOGD's ``rho_n`` (k = rho_n B); Fig. 4 the sweep of the budget ``budget``.
* :func:`convergence_figures`: Figs. 1-2 (mistake rate) and 5-6 (average squared loss) against the
  number of samples, the same plots ``lsokl report`` draws (:mod:`lsokl.report.plots`).

Every figure carries a caption line naming the dataset and the fixed settings. Times are drawn in
seconds on a log axis. With ``paper`` (one published table, or several joined by commas, e.g.
``lsokl2016:table5,lsokl2016:table7`` for Fig. 4's datasets) the published value is marked on
every plot it belongs to: at its own setting (a star with ±1 published std: the budget B for a
budget sweep, D / B for rho_f, k / B for rho_n, the last sample of a convergence curve), or as a
dashed line with a ±2 std band when the table has no such setting (a step-size sweep). Each drawn
style has one legend entry.
"""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd

from ..learners.registry import DISPLAY_NAMES
from .aggregate import ORDER

PARAM_LABELS = {
    "rho_f": r"$\rho_f$ (FOGD: D = $\rho_f$ B)",
    "rho_n": r"$\rho_n$ (NOGD: k = $\rho_n$ B)",
    "budget": "budget B",
    "eta": r"step size $\eta$",
    "sigma": r"kernel width $\sigma$",
}


def _metric_label(task: str) -> str:
    return "average squared loss" if task == "regression" else "online average rate of mistakes (%)"


def _stem(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in text)


def sweep_table(frame: pd.DataFrame, param: str) -> pd.DataFrame:
    """Per (task, dataset, algorithm, value of ``param``): mean/std of the metric and of the time.

    Only the ok records whose parameters include ``param`` are used, and only algorithms for which
    ``param`` takes at least two values on that dataset (a fixed budget is not a sweep).
    """
    ok = frame[frame["status"] == "ok"].copy()
    if ok.empty:
        return pd.DataFrame()
    ok["_p"] = ok["params"].map(json.loads)
    ok = ok[ok["_p"].map(lambda p: param in p and p[param] is not None)]
    if ok.empty:
        return pd.DataFrame()
    ok["x"] = ok["_p"].map(lambda p: float(p[param]))
    scale = np.where(ok["task"] == "regression", 1.0, 100.0)
    ok["y"] = ok["value"].astype(float) * scale
    ok["t"] = ok["time_s"].astype(float)
    rows = []
    for (task, ds, alg, learner, x), g in ok.groupby(["task", "dataset", "algorithm", "learner", "x"], sort=False):
        rows.append({"task": task, "dataset": ds, "algorithm": alg, "learner": learner, "x": x,
                     "mean": g["y"].mean(), "std": g["y"].std(ddof=1) if len(g) > 1 else 0.0,
                     "time_mean": g["t"].mean(), "time_median": g["t"].median(), "time_std": g["t"].std(ddof=1) if len(g) > 1 else 0.0,
                     "runs": len(g)})
    out = pd.DataFrame(rows)
    n_values = out.groupby(["dataset", "algorithm"])["x"].transform("nunique")
    out = out[n_values > 1]
    out["_order"] = out["learner"].map(lambda n: ORDER.index(n) if n in ORDER else len(ORDER))
    return out.sort_values(["dataset", "_order", "algorithm", "x"], kind="stable").drop(columns="_order")


def _fixed_settings(frame: pd.DataFrame, ds: str, algorithms, param: str) -> str:
    """The parameters that do not change over the sweep, per algorithm (for the caption)."""
    part = frame[(frame["dataset"] == ds) & (frame["algorithm"].isin(list(algorithms)))
                 & (frame["status"] == "ok")]
    bits = []
    for alg, g in part.groupby("algorithm", sort=False):
        settings = [json.loads(p) for p in g["params"].unique()]
        keys = sorted(set().union(*settings) - {param, "random_state", "dtype", "variant"})
        fixed = []
        for k in keys:
            vals = {json.dumps(s.get(k)) for s in settings}
            if len(vals) == 1 and settings[0].get(k) is not None:
                v = settings[0][k]
                fixed.append(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}")
        if fixed:
            bits.append(f"{_display(alg, g['learner'].iloc[0])}: " + ", ".join(fixed))
    return "; ".join(bits)


def _display(label: str, learner: str) -> str:
    return DISPLAY_NAMES.get(learner, label) if label == learner else label


def _published(paper: pd.DataFrame | None, ds: str, learner: str) -> tuple[float, float] | None:
    """The published (mean, std) of ``learner`` on ``ds`` in ``paper`` (None when absent)."""
    row = _published_row(paper, ds, learner)
    return None if row is None else (float(row["mean"]), float(row["std"]))


def _published_row(paper: pd.DataFrame | None, ds: str, learner: str):
    if paper is None:
        return None
    from .paper import norm_dataset

    row = paper[(paper["dataset_key"] == norm_dataset(ds)) & (paper["learner"] == learner)]
    if row.empty or pd.isna(row["mean"].iloc[0]):
        return None
    return row.iloc[0]


def published_x(row, param: str) -> float | None:
    """Where a published table cell sits on a sweep of ``param`` (None: the table does not say)."""
    def num(key):
        v = row.get(key) if hasattr(row, "get") else None
        try:
            v = float(v)
        except (TypeError, ValueError):
            return None
        return v if np.isfinite(v) else None

    B, D, k = num("B"), num("D"), num("k")
    if param == "budget":
        return B
    if param == "rho_f" and B and D:
        return D / B
    if param == "rho_n" and B and k:
        return k / B
    if param == "rank":  # MEKA Table 8's k
        return k
    return None


def load_published(paper: str) -> pd.DataFrame:
    """One published table, or several joined by commas (``lsokl2016:table5,lsokl2016:table7``)."""
    from .paper import load_table

    tables = [load_table(p.strip()) for p in paper.split(",") if p.strip()]
    return pd.concat(tables, ignore_index=True) if len(tables) > 1 else tables[0]


def sweep_figures(frame: pd.DataFrame, param: str, out: str | Path, *, prefix: str = "",
                  title: str | None = None, dpi: int = 120, paper: str | None = None) -> list[Path]:
    """For each dataset, one figure with two panels against ``param``: the metric (mistake rate %
    or squared loss) and the median time per pass (log axis); one line per algorithm that sweeps
    ``param``. Writes ``<prefix><param>-<dataset>.png|svg`` under ``out``; returns the files.

    ``paper`` (e.g. ``lsokl2016:table7``, or several tables joined by commas): each algorithm's
    published value is marked at its own setting when the sweep passes it (a star, ±1 published
    std, see :func:`published_x`), else drawn as a dashed line in its colour with a band of ±2
    published std, and the CSV gets ``paper_mean``,
    ``paper_std`` and ``dev_std`` (= (mean - paper_mean) / paper_std) per point, so a step-size
    search's whole curve can be read against the published cell."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    table = sweep_table(frame, param)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    if table.empty:
        return written
    from .plots import PUBLISHED_GID, mark_published, published_handle, save_figure

    published = None
    if paper is not None:
        published = load_published(paper)
        pub = [_published(published, r.dataset, r.learner) for r in table.itertuples()]
        table = table.assign(paper_mean=[p[0] if p else np.nan for p in pub],
                             paper_std=[p[1] if p else np.nan for p in pub])
        table["dev_std"] = (table["mean"] - table["paper_mean"]) / table["paper_std"].where(table["paper_std"] > 0)
    xlabel = PARAM_LABELS.get(param, param)
    for ds, part in table.groupby("dataset", sort=False):
        task = part["task"].iloc[0]
        first = frame[frame["dataset"] == ds].iloc[0]
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.6))
        styles = set()  # how published values were drawn on this figure: "point", "line"
        for alg, g in part.groupby("algorithm", sort=False):
            label = _display(alg, g["learner"].iloc[0])
            bars = ax1.errorbar(g["x"], g["mean"], yerr=g["std"], marker="o", markersize=4, capsize=3,
                                linewidth=1.5, label=label)
            row = _published_row(published, ds, g["learner"].iloc[0])
            if row is not None:
                colour = bars.lines[0].get_color()
                mean, std = float(row["mean"]), float(row["std"])
                at = published_x(row, param)
                if at is not None:  # the table's own setting is a point of this sweep
                    mark_published(ax1, at, mean, std, colour)
                    t_pub = float(row.get("time_s", np.nan))
                    if np.isfinite(t_pub) and t_pub > 0:
                        mark_published(ax2, at, t_pub, np.nan, colour)
                    styles.add("point")
                else:
                    ax1.axhline(mean, color=colour, linestyle="--", linewidth=1.0, gid=PUBLISHED_GID)
                    ax1.axhspan(mean - 2 * std, mean + 2 * std, color=colour, alpha=0.12, linewidth=0)
                    styles.add("line")
            # median: one pass per worker can include one-off compilation (an outlier, not the algorithm)
            ax2.plot(g["x"], g["time_median"].clip(lower=1e-9), marker="o", markersize=4, linewidth=1.5,
                     label=label)
        xs = part["x"][part["x"] > 0]
        if len(xs) and xs.min() > 0 and xs.max() / xs.min() >= 100:  # e.g. a step-size grid over decades
            ax1.set_xscale("log")
            ax2.set_xscale("log")
        ax1.set_xlabel(xlabel)
        ax1.set_ylabel(_metric_label(task))
        ax2.set_xlabel(xlabel)
        ax2.set_yscale("log")
        ax2.set_ylabel("average time cost (s, log scale)")  # median over permutations, see caption
        what = title or f"sensitivity to {param}"
        ax1.set_title(f"{ds}: {'loss' if task == 'regression' else 'mistake rate'} ({what})")
        ax2.set_title(f"{ds}: time per pass")
        for ax in (ax1, ax2):
            ax.grid(True, alpha=0.3)
        handles, labels = ax1.get_legend_handles_labels()
        if "point" in styles:
            handles.append(published_handle(paper))
        if "line" in styles:
            from matplotlib.lines import Line2D

            handles.append(Line2D([], [], color="0.6", linestyle="--", linewidth=1.0,
                                  label=f"published (paper), ±2 std band ({paper})"))
        labels = [h.get_label() for h in handles]
        fig.legend(handles, labels, loc="center right", fontsize=9, frameon=False)
        runs = int(part["runs"].max())
        cap = (f"{ds} ({task}, n={int(first['n_samples'])}, d={int(first['n_features'])}): {what}, "
               f"{param} in {{{', '.join(f'{v:g}' for v in sorted(part['x'].unique()))}}}; "
               f"{runs} permutation{'s' if runs != 1 else ''} per point (mean, bars ±1 std; time: median pass); "
               f"scale={first['scale'] or 'as stored'}. Fixed: "
               + (_fixed_settings(frame, ds, part["algorithm"].unique(), param) or "-") + "."
               + (f" Star: published value ({paper}) at its own setting, ±1 published std."
                  if "point" in styles else "")
               + (f" Dashed: published value ({paper}), band ±2 published std." if "line" in styles else ""))
        fig.text(0.01, 0.01, "\n".join(textwrap.wrap(cap, 160)), fontsize=7.5, va="bottom", ha="left")
        n_lines = len(textwrap.wrap(cap, 160))
        fig.tight_layout(rect=(0, 0.03 + 0.03 * n_lines, 0.83, 1))
        stem = _stem(f"{prefix}{param}-{ds}")
        written += save_figure(fig, out / stem, dpi)
        plt.close(fig)
    table.drop(columns=["learner"]).assign(param=param).to_csv(out / _stem(f"{prefix}{param}.csv"),
                                                               index=False)
    written.append(out / _stem(f"{prefix}{param}.csv"))
    return written


def convergence_figures(frame: pd.DataFrame, out: str | Path, *, dpi: int = 120,
                        paper: str | None = None) -> list[Path]:
    """Figs. 1-2 / 5-6: the convergence plots of :mod:`lsokl.report.plots` (mistake rate % or
    average squared loss, and time on a log axis, against the number of samples); ``paper``:
    each setting's published end point is marked."""
    from .aggregate import aggregate, attach_paper
    from .plots import convergence_plots

    agg = aggregate(frame)
    if paper:
        agg = attach_paper(agg, load_published(paper))
    return convergence_plots(frame, agg, Path(out), dpi=dpi)


def load_frame(results: str | Path) -> pd.DataFrame:
    from ..errors import LsoklError
    from ..results import ResultStore
    from .aggregate import records_frame

    records = ResultStore(results).records()
    if not records:
        raise LsoklError(f"{results}: no records found (run `lsokl run CONFIG --results {results}` first)")
    return records_frame(records)


def make_figures(results: str | Path, out: str | Path | None = None, *, sweep: list[str] = (),
                 convergence: bool = False, prefix: str = "", title: str | None = None,
                 dpi: int = 120, test_curve: bool = False, paper: str | None = None) -> list[Path]:
    """The figures of one results folder: a sweep figure per ``sweep`` parameter, the
    convergence figures and/or the test-error curves of holdout records (DSG Fig. 1,
    :mod:`lsokl.report.heldout_curves`). Default ``out``: ``<results>/figures``."""
    out = Path(out) if out else Path(results) / "figures"
    files: list[Path] = []
    if test_curve:
        from ..results import ResultStore
        from .heldout_curves import heldout_curve_figures

        files += heldout_curve_figures(ResultStore(results).records(), out, prefix=prefix, title=title,
                                    dpi=dpi)
        if not sweep and not convergence:
            return files
    frame = load_frame(results)
    for param in sweep:
        files += sweep_figures(frame, param, out, prefix=prefix, title=title, dpi=dpi, paper=paper)
    if convergence:
        files += convergence_figures(frame, out / "convergence", dpi=dpi, paper=paper)
    return files
