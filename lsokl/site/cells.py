"""The numbers the site shows, read from the same committed files and declarations as
``REPRODUCTIONS.md``: one :class:`Row` per item for the index (status, provenance, declared and
strict counts and the claim verdict, asked of the item through :func:`lsokl.papers.scoreboard.score`),
and the comparison cells of an item (ours beside the published value, with Delta/sigma and the
distance in the item's tolerance rule).

The cells come from whichever comparison file the item's folder holds (the files the scorers of
:mod:`lsokl.papers.scoring` read): ``report/summary.csv`` (online tables), ``report/batch.csv``
(LSOKL Table 3), ``table1.csv`` (BPegasosM Table 1) and ``report/table.csv`` with a ``within``
column (MEKA Tables 7, 8). Verdicts for the online tables use :func:`lsokl.papers.scoring.strict_ok`,
so a cell is green here exactly when the scoreboard counts it.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pandas as pd

from ..papers import PAPERS, Item, items
from ..papers import scoreboard as _board
from ..papers import scoring as _scoring


@dataclass(frozen=True)
class Row:
    """One item of the index."""

    item: Item
    declared: str  # "38/40" or "—"
    strict: str
    claim: Optional[bool]  # None: no verdict
    verdict: str  # "yes (7/7)", "no (5/6 ...)", "no verdict (...)", "— (reason)"


def rows(root: Path) -> list[Row]:
    """The index rows of every declared item, in paper order (as REPRODUCTIONS.md)."""
    out = []
    for item in items().values():
        s = _board.score(item, root) if item.runnable else None
        declared = _count(s.declared, s.declared_of) if s else "—"
        strict = _count(s.strict, s.strict_of) if s else "—"
        if not item.runnable:
            verdict, claim = f"— ({item.reason})", None
        elif s is None or s.claim is None:
            verdict, claim = "no verdict" + (f" ({s.note})" if s is not None and s.note else ""), None
        else:
            claim = bool(s.claim)
            verdict = ("yes" if claim else "no") + (f" ({s.claim_detail})" if s.claim_detail else "")
        out.append(Row(item, declared, strict, claim, verdict))
    return out


def _count(n, of) -> str:
    return "—" if n is None or not of else f"{n}/{of}"


def papers() -> dict[str, str]:
    return dict(PAPERS)


# ----------------------------------------------------------------------------- comparison cells
@dataclass(frozen=True)
class Cell:
    """One of lsokl's numbers beside the published one.

    ``distance`` is |ours - paper| in units of the item's tolerance (<= 1: within); ``within`` the
    verdict (None: not compared, e.g. no published value); ``counted``: the cell enters the
    declared count (False: indicative only, e.g. a dataset on another split)."""

    row: str  # the table's row (learner, method)
    column: str  # the table's column (dataset, or dataset and budget)
    ours: float
    ours_std: Optional[float]
    paper: Optional[float]
    paper_std: Optional[float]
    within: Optional[bool]
    distance: Optional[float]
    counted: bool = True
    unit: str = ""
    tolerance: str = ""

    @property
    def delta(self) -> Optional[float]:
        return None if self.paper is None else self.ours - self.paper

    @property
    def delta_sigma(self) -> Optional[float]:
        """(ours - paper) / published std; None without a positive published std."""
        if self.paper is None or not self.paper_std or not math.isfinite(self.paper_std) or self.paper_std <= 0:
            return None
        return self.delta / self.paper_std


def _num(v) -> Optional[float]:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def strict_threshold(std: Optional[float], percent: bool = True) -> float:
    """The largest |ours - paper| the strict rule accepts (the rule of :func:`scoring.strict_ok`):
    2 published std, or 1.5 points where a percentage's std is below 0.75 or not printed."""
    two_std = _scoring.STRICT_STD * (std if std is not None else 0.0)
    if percent and (std is None or std < _scoring.SMALL_STD):
        return max(_scoring.STRICT_POINTS, two_std)
    return two_std if std is not None else float("nan")


def cells(item: Item, root: Path) -> list[Cell]:
    """The comparison cells of an item's committed folder; [] where it has no cell-by-cell
    comparison (figures, stand-in tables)."""
    if not item.folder or item.kind != "table":
        return []
    folder = Path(root) / item.folder
    same = {d.name for d in item.datasets if d.provenance == "same"}
    if (folder / "report" / "summary.csv").exists() and item.published:
        return _online(pd.read_csv(folder / "report" / "summary.csv"), same)
    if (folder / "report" / "batch.csv").exists():
        return _batch(pd.read_csv(folder / "report" / "batch.csv"))
    if (folder / "table1.csv").exists():
        return _bpegasosm(pd.read_csv(folder / "table1.csv"))
    table = folder / "report" / "table.csv"
    if table.exists():
        df = pd.read_csv(table)
        if {"within", "paper", "median", "tolerance"} <= set(df.columns):
            return _relative(df)
    return []


def _online(df: pd.DataFrame, same: set) -> list[Cell]:
    out = []
    for r in df.itertuples(index=False):
        ours = _num(r.mean)
        if ours is None:
            continue
        paper, std = _num(getattr(r, "paper_mean", None)), _num(getattr(r, "paper_std", None))
        percent = "%" in str(r.unit)
        within = distance = None
        if paper is not None:
            within = bool(_scoring.strict_ok(ours - paper, std, percent))
            thr = strict_threshold(std, percent)
            distance = abs(ours - paper) / thr if thr and math.isfinite(thr) else (0.0 if ours == paper else math.inf)
        rule = "2 std, or 1.5 points where std < 0.75" if percent else "2 std"
        out.append(Cell(str(r.row), str(r.dataset), ours, _num(r.std), paper, std, within, distance,
                        counted=r.dataset in same, unit=str(r.unit), tolerance=rule))
    return out


def _batch(df: pd.DataFrame) -> list[Cell]:
    out = []
    for r in df.itertuples(index=False):
        ours = _num(r.mean)
        if ours is None:
            continue
        paper, tol = _num(r.paper_mean), _num(r.tolerance)
        within = {"yes": True, "no": False}.get(str(r.within))
        distance = abs(ours - paper) / tol if paper is not None and tol else None
        counted = within is not None
        if within is None and distance is not None:  # a substitute test cut: coloured, not counted
            within = distance <= 1 + 1e-9
        out.append(Cell(str(r.algorithm), str(r.dataset), ours, _num(r.std), paper, _num(r.paper_std),
                        within if paper is not None else None, distance, counted=counted,
                        unit="accuracy %", tolerance=f"{tol:g} points" if tol else ""))
    return out


def _bpegasosm(df: pd.DataFrame) -> list[Cell]:
    out = []
    several_n = {d: g["n_train"].nunique() > 1 for d, g in df.groupby("dataset")}
    for r in df.itertuples(index=False):
        val = _num(r.val)
        ours = val if val is not None else _num(r.test_best)
        if ours is None:
            continue
        paper, tol = _num(r.paper), _num(r.tolerance)
        flag = r.val_within if val is not None else r.within
        within = None if paper is None or pd.isna(flag) else str(flag) == "True"
        distance = abs(ours - paper) / tol if paper is not None and tol else None
        budget = _num(r.B)
        column = f"{r.dataset} B={budget:g}" if budget is not None else f"{r.dataset} (no budget)"
        if several_n.get(r.dataset):
            column += f" n={_num(r.n_train):g}"
        out.append(Cell(str(r.algo), column, ours, _num(r.val_std if val is not None else r.test_best_std),
                        paper, _num(r.paper_std), within, distance, counted=not pd.isna(r.val_within),
                        unit="accuracy %", tolerance=f"{tol:g} points" if tol else "ordering"))
    return out


_TOL = re.compile(r"±\s*([0-9.]+)\s*(%|abs)")


def _relative(df: pd.DataFrame) -> list[Cell]:
    """MEKA's relative or absolute tolerances (``±5%``, ``±0.03 abs``)."""
    out = []
    for r in df.itertuples(index=False):
        ours, paper = _num(r.median), _num(r.paper)
        if ours is None:
            continue
        within = None if paper is None or pd.isna(r.within) else str(r.within) == "True"
        distance = None
        m = _TOL.search(str(r.tolerance))
        if m and paper is not None:
            tol = float(m.group(1)) / (100 if m.group(2) == "%" else 1)
            dev = abs(ours - paper) / abs(paper) if m.group(2) == "%" and paper else abs(ours - paper)
            distance = dev / tol if tol else None
        out.append(Cell(str(r.method), str(r.dataset), ours, _num(r.std), paper, None, within, distance,
                        tolerance=str(r.tolerance)))
    return out


def grid(found: list[Cell], order: list[str] = ()) -> tuple[list[str], list[str], dict]:
    """Rows (first-seen order), columns (the datasets in ``order``, the item's order, which is
    the paper's; a column ``"usps B=500"`` sorts with ``usps``; others after, first seen first) and
    {(row, column): cell}."""
    rows_, cols, at = [], [], {}
    for c in found:
        if c.row not in rows_:
            rows_.append(c.row)
        if c.column not in cols:
            cols.append(c.column)
        at[(c.row, c.column)] = c
    rank = {name: i for i, name in enumerate(order)}
    first = {col: i for i, col in enumerate(cols)}
    cols.sort(key=lambda col: (rank.get(col.split(" ")[0], len(rank)), first[col]))
    return rows_, cols, at


def shade(cell: Cell) -> str:
    """The CSS class of a cell: ``in`` (within), ``near`` (outside, within twice the tolerance),
    ``out`` (beyond), ``na`` (not compared); ``indicative`` is added by the page for uncounted cells."""
    if cell.within is None:
        return "na"
    if cell.within:
        return "in"
    return "near" if cell.distance is not None and cell.distance <= 2 else "out"
