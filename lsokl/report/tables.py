"""Aggregated rows -> the papers' layout (algorithms down, datasets across) as Markdown, CSV, LaTeX."""
from __future__ import annotations

import math

import pandas as pd


def fmt_value(mean: float, std: float, task: str) -> str:
    if not math.isfinite(mean):
        return ""
    digits = 5 if task == "regression" else 2
    sd = f"{std:.{digits}f}" if math.isfinite(std) else "n/a"
    return f"{mean:.{digits}f} ± {sd}"


def fmt_time(t: float) -> str:
    if not math.isfinite(t):
        return ""
    if t < 0.01:
        return f"{t:.2g}"
    return f"{t:.3f}" if t < 10 else f"{t:.1f}"


def fmt_dev(d: float) -> str:
    return f"{d:+.1f}" if math.isfinite(d) else ""


def _cell(row) -> str:
    if row["n_ok"] == 0:
        bad = [f"{row[f'n_{s}']} {s}" for s in ("failed", "diverged", "timeout") if row[f"n_{s}"]]
        return ", ".join(bad) or "no runs"
    text = fmt_value(row["mean"], row["std"], row["task"])
    missing = row["n_failed"] + row["n_diverged"] + row["n_timeout"]
    text += f" ({row['n_ok']}/{row['n_ok'] + missing} runs)" if missing else ""
    # a degenerate pass (a constant predictor, or no better than the Constant row) says nothing about
    # the learner: marked, explained in NOTES
    degenerate = int(row.get("n_degenerate", 0) or 0)
    return text + (f" [degenerate in {degenerate}/{row['n_ok']} runs]" if degenerate else "")


def wide_table(agg: pd.DataFrame, task: str, with_paper: bool = False,
               dataset_order: list[str] | None = None) -> pd.DataFrame:
    """One task's rows: 'Algorithm', then per dataset the value ± std and the mean time
    (and, with the paper, the published value and the deviation in published stds).
    Datasets follow ``dataset_order`` (the paper's), then alphabetical."""
    part = agg[agg["task"] == task]
    from .paper import norm_dataset

    rank = {norm_dataset(d): i for i, d in enumerate(dataset_order or [])}
    datasets = sorted(dict.fromkeys(part["dataset"]),
                      key=lambda d: (rank.get(norm_dataset(d), len(rank)), d))
    rows = list(dict.fromkeys(part["row"]))
    unit = part["unit"].iloc[0] if len(part) else ""
    table = pd.DataFrame({"Algorithm": rows})
    for ds in datasets:
        sub = part[part["dataset"] == ds].set_index("row")
        col = f"{ds} ({unit})"
        table[col] = [_cell(sub.loc[r]) if r in sub.index else "" for r in rows]
        table[f"{ds} time (s)"] = [fmt_time(sub.loc[r, "time_s"]) if r in sub.index else "" for r in rows]
        if with_paper:
            table[f"{ds} paper"] = [
                fmt_value(sub.loc[r, "paper_mean"], sub.loc[r, "paper_std"], task)
                if r in sub.index else "" for r in rows]
            table[f"{ds} Δ/σ"] = [fmt_dev(sub.loc[r, "deviation_sd"]) if r in sub.index else ""
                                  for r in rows]
    return table


def to_markdown(table: pd.DataFrame) -> str:
    cols = list(table.columns)
    lines = ["| " + " | ".join(cols) + " |",
             "|" + "|".join(":---" if i == 0 else "---:" for i in range(len(cols))) + "|"]
    for _, r in table.iterrows():
        lines.append("| " + " | ".join(str(r[c]).replace("|", "\\|") for c in cols) + " |")
    return "\n".join(lines) + "\n"


_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
        "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def _tex(text: str) -> str:
    out = "".join(_TEX.get(ch, ch) for ch in str(text))
    return out.replace("±", r"$\pm$").replace("Δ/σ", r"$\Delta/\sigma$")


def to_latex(table: pd.DataFrame, caption: str = "", label: str = "") -> str:
    cols = list(table.columns)
    spec = "l" + "r" * (len(cols) - 1)
    lines = [r"\begin{table}[t]", r"\centering", r"\small"]
    if caption:
        lines.append(rf"\caption{{{_tex(caption)}}}")
    if label:
        lines.append(rf"\label{{{label}}}")
    lines += [rf"\begin{{tabular}}{{{spec}}}", r"\hline",
              " & ".join(_tex(c) for c in cols) + r" \\", r"\hline"]
    for _, r in table.iterrows():
        lines.append(" & ".join(_tex(r[c]) for c in cols) + r" \\")
    lines += [r"\hline", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def split_for_width(table: pd.DataFrame, width: int) -> list[pd.DataFrame]:
    """Cut a wide table into pieces that fit a terminal, keeping each dataset's columns together
    and repeating the 'Algorithm' column."""
    def col_width(c):  # headers print on two lines: the dataset, then the rest
        return max([len(p) for p in str(c).split(" ", 1)] + [len(str(v)) for v in table[c]]) + 3

    groups: list[list[str]] = []
    for c in table.columns[1:]:
        ds = c.split(" ", 1)[0]
        if groups and groups[-1][0].split(" ", 1)[0] == ds:
            groups[-1].append(c)
        else:
            groups.append([c])
    first = col_width(table.columns[0]) + 1
    pieces, current, used = [], [], first
    for g in groups:
        w = sum(col_width(c) for c in g)
        if current and used + w > width:
            pieces.append(current)
            current, used = [], first
        current += g
        used += w
    if current or not pieces:
        pieces.append(current)
    return [table[[table.columns[0], *cols]] for cols in pieces]
