"""The numbers the site shows, read from the same committed files and declarations as
``REPRODUCTIONS.md``: one :class:`Row` per item for the index (status, provenance, declared and
strict counts and the claim verdict, asked of the item through :func:`lsokl.papers.scoreboard.score`),
and the comparison cells of an item (ours beside the published value, with Delta/sigma and the
distance in the item's tolerance rule).

The cells are the item's own (its ``cells`` function, the one ``verdicts.md`` lists): each cell
under the tolerance rule of :mod:`lsokl.papers.scoring`, with its band, so a cell is green here
exactly when the scoreboard counts it within.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Optional


from ..papers import PAPERS, Item, items
from ..papers import scoreboard as _board


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


def cells(item: Item, root: Path) -> list[Cell]:
    """The comparison cells of an item's committed folder, as its ``verdicts.md`` lists them (the
    item's ``cells`` function: every cell under the tolerance rule, with its band and whether it is
    counted); [] where it has no cell-by-cell comparison (figures, stand-in tables)."""
    if not item.folder or item.cells is None:
        return []
    df = item.cells(Path(root) / item.folder)
    out = []
    for r in df.itertuples(index=False):
        ours = _num(r.ours)
        if ours is None:
            continue
        paper, band = _num(r.paper), _num(r.band)
        within = None if paper is None else bool(r.ok)
        distance = None
        if paper is not None:
            distance = abs(ours - paper) / band if band else (0.0 if ours == paper else math.inf)
        tolerance = f"the rule's band ±{band:.3g}" if band else ""
        if band and within is False and distance is not None and distance <= 1:  # in the band, beyond x2
            tolerance += "; outside the factor-2 band"
        out.append(Cell(str(r.method), str(r.dataset), ours, _num(r.sd_ours), paper, _num(r.sd_paper), within,
                        distance, counted=bool(r.counted), tolerance=tolerance))
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
