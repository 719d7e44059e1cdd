"""Scores and verdicts of the committed results, read from the files a reproduction writes
(never from the raw records, which are not committed).

**The tolerance rule** (one rule for every cell of every paper; ``within``). A cell of lsokl
matches the published cell when both hold:

* ``|ours - paper| <= 2 sqrt(sd_paper^2 + sd_ours^2) + step/2``: ``sd_paper`` is the published std
  (0 when the paper prints none), ``sd_ours`` the spread of lsokl's own repetitions of the cell
  (permutations or seeds, from the committed table; for a deterministic row such as LIBSVM, the
  largest spread lsokl measured on that dataset), ``step`` the last digit the paper printed
  (0.01 for "3.47 %", so rounding alone never makes a miss);
* **relative band**: ours and the paper's are within a factor 2 of each other (for accuracies, their
  errors 100 - accuracy), up to ``step/2``. A rate 58 times the published one (LSOKL Table 5,
  kddcup99: 1.17 % vs 0.02 %) is a miss however large the spreads are.

Why these numbers: two independent estimates of the same mean differ by less than
2 sqrt(sd_1^2 + sd_2^2) about 95 % of the time when each sd is the spread of one run; the paper's
std is over its own 20 permutations (LSOKL) or 5 repetitions (BPegasosM) and lsokl's over the same
number of its own. The former flat 1.5-point floor admitted misses of 50-100x on kddcup99 and a
band five times the paper's gap between DSG and its baselines on Adult; the factor 2 is wide enough
for the spreads measured here (the largest relative spread of a 20-permutation mean is below 40 %)
and narrow enough that no order-of-magnitude miss counts.

**The strict count** (``strict_ok``) is printed beside: within 2 published std, nothing else (no
count where the paper prints no std).

**Ties** (``tie``): two measured numbers tie when they differ by at most 2 sqrt(sd_a^2 + sd_b^2),
their spreads; the same rule everywhere a verdict compares two methods (MEKA Fig. 12, DSG Adult,
BPegasosM Figs. 1-2, MEKA Table 2).

Each paper's headline-claim checks live in ``lsokl/papers/<paper>/claims.py`` (functions of a table
of numbers, so the same check runs on the published table); this module holds the rule and the
scorers of committed files that several papers share.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Callable, Iterable, Optional

import numpy as np
import pandas as pd

from .declare import Score, Tolerance

#: the relative band: ours within this factor of the published value (errors, for accuracies)
FACTOR = 2.0
#: the rule in one line, shown under every table item of REPRODUCTIONS.md
RULE = Tolerance(
    "|ours - paper| <= 2 sqrt(sd_paper^2 + sd_ours^2) + half the paper's last printed digit, and ours within "
    "a factor 2 of the paper's (errors, for accuracies); sd_ours = the spread of lsokl's own repetitions "
    "(printed in the item's table)",
    "two estimates of one mean, each with its own spread, differ by less than 2 sqrt(sd_1^2 + sd_2^2) about "
    "95% of the time; the factor 2 keeps a rate many times the published one from counting however noisy "
    "both are (a flat point floor admitted 1.17% against 0.02%)")


def _finite(x) -> bool:
    try:
        return x is not None and math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def printed_step(*values) -> float:
    """The last digit the paper printed, from the published numbers of a cell (mean and std share
    it): 0.01 for 3.47 or 0.10, 1 for 15, 0.0001 for 0.1325."""
    decimals = 0
    for v in values:
        if not _finite(v):
            continue
        text = f"{float(v):.6f}".rstrip("0").rstrip(".")
        decimals = max(decimals, len(text.split(".")[1]) if "." in text else 0)
    return 10.0 ** -decimals


def band(sd_paper=None, sd_ours=None, step: float = 0.0) -> float:
    """The absolute half-width of the rule: 2 sqrt(sd_paper^2 + sd_ours^2) + step/2."""
    sp = float(sd_paper) if _finite(sd_paper) else 0.0
    so = float(sd_ours) if _finite(sd_ours) else 0.0
    return 2.0 * math.hypot(sp, so) + step / 2.0


def within(ours: float, paper: float, sd_paper=None, sd_ours=None, step: Optional[float] = None,
           accuracy: bool = False) -> bool:
    """The tolerance rule (module docstring). ``accuracy``: the values are accuracies in %, so the
    relative band compares the errors 100 - value."""
    if not (_finite(ours) and _finite(paper)):
        return False
    ours, paper = float(ours), float(paper)
    step = printed_step(paper, sd_paper) if step is None else step
    if abs(ours - paper) > band(sd_paper, sd_ours, step) + 1e-12:
        return False
    a, b = (100.0 - ours, 100.0 - paper) if accuracy else (ours, paper)
    lo, hi = sorted((abs(a), abs(b)))
    return hi <= FACTOR * lo + step / 2.0 + 1e-12


def strict_ok(delta: float, std, percent: bool = True) -> bool:
    """The strict count: within 2 published std, nothing else (False where no std is printed)."""
    if not _finite(std):
        return False
    return abs(float(delta)) <= 2.0 * float(std) + 1e-12


def tie(a: float, b: float, sd_a=None, sd_b=None) -> bool:
    """Two measured numbers tie when they differ by at most 2 sqrt(sd_a^2 + sd_b^2) (their spreads)."""
    return abs(float(a) - float(b)) <= band(sd_a, sd_b) + 1e-12


def at(x: float, xs, ys, log: bool = True) -> Optional[float]:
    """A curve (xs, ys) read at x: linear interpolation (in log x by default, as memory and time axes
    are drawn); None outside the measured range (no extrapolation)."""
    pts = sorted((float(u), float(v)) for u, v in zip(xs, ys) if _finite(u) and _finite(v))
    if not pts:
        return None
    us = [math.log(u) if log else u for u, _ in pts]
    x = math.log(x) if log else x
    if x < us[0] - 1e-12 or x > us[-1] + 1e-12:
        return None
    return float(np.interp(x, us, [v for _, v in pts]))


def median_sd(median, std) -> Optional[float]:
    """The spread of a value reported as a median of seeds (MEKA): the std of the seeds, unless one
    unstable seed dominates it (std above half the median: the median is reported precisely to leave
    that seed out), then none: the comparison is of the medians themselves."""
    if not (_finite(median) and _finite(std)):
        return None
    return float(std) if float(std) <= 0.5 * abs(float(median)) else None


def count(held: int, checked: int, misses: list, what: str = "") -> str:
    return f"{held}/{checked}{what}" + (f" (not on {', '.join(misses)})" if misses else "")


def _read_csv(path: Path) -> Optional[pd.DataFrame]:
    return pd.read_csv(path) if path.exists() else None


Claim = Callable[[pd.DataFrame], "tuple[Optional[bool], str]"]


# ----------------------------------------------------------------------------- claims on tables
def best_of_beats(frame: pd.DataFrame, ours: Iterable[str], others: Iterable[str], *, value="mean",
                  by="dataset", key="learner", lower=True, most: bool = False) -> tuple[Optional[bool], str]:
    """Per ``by`` group: the best of ``ours`` is at least as good as the best of ``others``.
    Groups lacking either side are skipped; None when no group has both. ``most``: the claim holds
    when it holds on more than half of the groups ("for most cases"), else on every group."""
    ours, others = set(ours), set(others)
    held, checked, misses = 0, 0, []
    for name, grp in frame.groupby(by, sort=False):
        a = grp[grp[key].isin(ours)][value].dropna()
        b = grp[grp[key].isin(others)][value].dropna()
        if a.empty or b.empty:
            continue
        checked += 1
        best_a, best_b = (a.min(), b.min()) if lower else (a.max(), b.max())
        if (best_a <= best_b) if lower else (best_a >= best_b):
            held += 1
        else:
            misses.append(str(name))
    if not checked:
        return None, "no group has both sides"
    ok = bool((2 * held > checked) if most else held == checked)
    return ok, count(held, checked, misses) + (" (the paper: for most cases)" if most else "")


# ----------------------------------------------------------------------------- online tables (LSOKL 5, 7, 9)
def online_cells(df: pd.DataFrame) -> pd.DataFrame:
    """Every comparable cell of a ``summary.csv`` with the rule's verdict (``ok``), the strict one
    (``strict``) and the allowed band."""
    df = df[df["paper_mean"].notna() & df["mean"].notna()].copy()
    steps = [printed_step(p, s) for p, s in zip(df["paper_mean"], df["paper_std"])]
    df["band"] = [band(sp, so, st) for sp, so, st in zip(df["paper_std"], df["std"], steps)]
    df["ok"] = [within(m, p, sp, so, st) for m, p, sp, so, st in
                zip(df["mean"], df["paper_mean"], df["paper_std"], df["std"], steps)]
    df["strict"] = [strict_ok(m - p, sp) for m, p, sp in zip(df["mean"], df["paper_mean"], df["paper_std"])]
    return df


BUDGET_BASELINES = ("rbp", "forgetron", "projectron", "projectron++", "bpas", "bogd")
REMOVAL_BASELINES = ("rbp", "forgetron", "bpas", "bogd")


def online_claim(frame: pd.DataFrame, baselines: tuple = BUDGET_BASELINES) -> tuple[Optional[bool], str]:
    """The better of FOGD and NOGD is at least as good as the best of ``baselines`` on most datasets
    (LSOKL's "for most cases"; ``lsokl2016.claims.most_accurate`` with other baselines)."""
    return best_of_beats(frame, ("fogd", "nogd"), baselines, most=True)


def online_table(folder: Path, *, declared: Iterable[str], claim: Optional[Claim] = None,
                 percent: bool = True, baselines: Optional[tuple] = None) -> Score:
    """``report/summary.csv`` of ``lsokl report --paper``: declared = the rule on the datasets whose
    provenance is ``same`` (``declared``); strict = 2 published std over every comparable cell.
    ``baselines`` without ``claim``: the claim is ``online_claim`` against those baselines."""
    if claim is None and baselines is not None:
        claim = lambda frame: online_claim(frame, tuple(baselines))  # noqa: E731
    df = _read_csv(folder / "report" / "summary.csv")
    if df is None:
        return Score(note="no report/summary.csv")
    if "std" not in df:
        df = df.assign(std=float("nan"))
    c, detail = claim(df) if claim else (None, "")  # on every row of ours, published or not
    cells = online_cells(df)
    same = cells[cells["dataset"].isin(set(declared))]
    strict_of = int(cells["paper_std"].notna().sum())
    return Score(declared=int(same["ok"].sum()), declared_of=len(same), strict=int(cells["strict"].sum()),
                 strict_of=strict_of, claim=c, claim_detail=detail)


# ----------------------------------------------------------------------------- LSOKL Table 3
def batch_cells(df: pd.DataFrame) -> pd.DataFrame:
    """Table 3's cells: rows the paper prints without std (LIBSVM, LLSVM) take as sd_ours lsokl's own
    spread where it repeated them, else the largest spread lsokl measured on the dataset."""
    cmp = df[df["paper_mean"].notna() & df["mean"].notna()].copy()
    spread = df.groupby("dataset")["std"].max()
    so = [s if _finite(s) else spread.get(d, float("nan")) for d, s in zip(cmp["dataset"], cmp["std"])]
    cmp["sd_ours"] = so
    cmp["band"] = [band(sp, s, printed_step(p, sp)) for p, sp, s in zip(cmp["paper_mean"], cmp["paper_std"], so)]
    cmp["ok"] = [within(m, p, sp, s, accuracy=True) for m, p, sp, s in
                 zip(cmp["mean"], cmp["paper_mean"], cmp["paper_std"], so)]
    cmp["strict"] = [strict_ok(d, s) for d, s in zip(cmp["delta"], cmp["paper_std"])]
    return cmp


def batch_table(folder: Path, claim: Optional[Claim] = None) -> Score:
    df = _read_csv(folder / "report" / "batch.csv")
    if df is None:
        return Score(note="no report/batch.csv")
    cmp = batch_cells(df)
    declared = cmp[cmp["substitute"].isna()] if "substitute" in cmp else cmp
    c, detail = claim(df.rename(columns={"train_s": "train"})) if claim else (None, "")
    return Score(declared=int(declared["ok"].sum()), declared_of=len(declared),
                 strict=int(cmp["strict"].sum()), strict_of=int(cmp["paper_std"].notna().sum()),
                 claim=c, claim_detail=detail)


# ----------------------------------------------------------------------------- MEKA tables 7, 8
def meka_cells(df: pd.DataFrame) -> pd.DataFrame:
    """MEKA's tables print no std: sd_ours = lsokl's seed-to-seed std of the cell (5 seeds;
    ``median_sd``)."""
    cmp = df[df["paper"].notna() & df["median"].notna()].copy()
    cmp["sd_ours"] = [median_sd(m, s) for m, s in zip(cmp["median"], cmp["std"])]
    cmp["band"] = [band(None, s, printed_step(p)) for p, s in zip(cmp["paper"], cmp["sd_ours"])]
    cmp["ok"] = [within(m, p, None, s) for m, p, s in zip(cmp["median"], cmp["paper"], cmp["sd_ours"])]
    return cmp


def meka_within(folder: Path, claim: Optional[Callable] = None) -> Score:
    """``report/table.csv`` under the rule with lsokl's seed-to-seed std; no published std, so no strict count."""
    df = _read_csv(folder / "report" / "table.csv")
    if df is None:
        return Score(note="no report/table.csv")
    if "std" not in df:
        df = df.assign(std=float("nan"))
    cmp = meka_cells(df)
    c, detail = (_call_claim(claim, df, folder)) if claim else (None, "")
    return Score(declared=int(cmp["ok"].sum()), declared_of=len(cmp), strict=None, strict_of=0, claim=c,
                 claim_detail=detail, note="no published std: strict count not applicable")


def _call_claim(claim: Callable, df: pd.DataFrame, folder: Path) -> tuple:
    """A claim check of a table alone (``check(df)``) or of a table and its folder (``check(df,
    folder)``, to read another folder's curves)."""
    import inspect

    try:
        n = len([p for p in inspect.signature(claim).parameters.values()
                 if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)])
    except (TypeError, ValueError):
        n = 2
    return claim(df, folder) if n >= 2 else claim(df)


def no_score(folder: Path) -> Score:
    """An item whose claim has no check yet: REPRODUCTIONS.md says so, and the test that every item
    with a claim has a computed verdict names it."""
    return Score(note="no claim check yet")


# ----------------------------------------------------------------------------- LSOKL sweeps (Figs. 3, 4)
def sweep_claim(folder: Path, files: dict, time: bool = False) -> Score:
    """``{csv name: learners}`` (None: every algorithm in the file): each learner's mistake rate at the
    largest swept value is below the one at the smallest, per dataset (more features / rank / budget
    helps); with ``time``, its time per pass at the largest value is also above the one at the
    smallest ("higher learning time cost")."""
    held, checked, misses = 0, 0, []
    for name, learners in files.items():
        df = _read_csv(folder / name)
        if df is None:
            return Score(note=f"no {name}")
        rows = df if learners is None else df[df["algorithm"].isin(learners)]
        for (ds, algo), grp in rows.groupby(["dataset", "algorithm"], sort=False):
            grp = grp.sort_values("x")
            checked += 1
            falls = grp["mean"].iloc[-1] < grp["mean"].iloc[0]
            rises = not time or grp["time_mean"].iloc[-1] > grp["time_mean"].iloc[0]
            held += bool(falls and rises)
            if not (falls and rises):
                why = ("" if falls else ": error does not fall") + ("" if rises else ": time does not rise")
                misses.append(f"{algo} on {ds}" + (why if time else ""))
    if not checked:
        return Score(note="nothing swept")
    what = "curves fall" if not time else "learners' error falls and time rises"
    return Score(claim=bool(held == checked), claim_detail=f"{held}/{checked} {what}"
                 + (f" (not {', '.join(misses)})" if misses else ""))


def from_table(name: str, check: Callable[[pd.DataFrame], tuple], note: str = "") -> Callable[[Path], Score]:
    """A scorer that reads ``folder/name`` and applies a claim check to it (figures whose verdict
    comes from the same committed table the plot draws)."""
    def score(folder: Path) -> Score:
        df = _read_csv(folder / name)
        if df is None:
            return Score(note=f"no {name}")
        c, detail = check(df)
        return Score(claim=c, claim_detail=detail, note=note)
    score.__name__ = f"from_table({name})"
    return score


def from_json(name: str, check: Callable[[dict], tuple]) -> Callable[[Path], Score]:
    def score(folder: Path) -> Score:
        path = folder / name
        if not path.exists():
            return Score(note=f"no {name}")
        c, detail = check(json.loads(path.read_text()))
        return Score(claim=c, claim_detail=detail)
    score.__name__ = f"from_json({name})"
    return score


# ----------------------------------------------------------------------------- cells for verdicts.md
#: the columns every ``Item.cells`` returns (``lsokl.papers.verdicts``)
CELL_COLUMNS = ["dataset", "method", "ours", "sd_ours", "paper", "sd_paper", "band", "ok", "strict", "counted"]


def online_table_cells(folder: Path, *, declared: Iterable[str]) -> pd.DataFrame:
    df = _read_csv(folder / "report" / "summary.csv")
    if df is None:
        return pd.DataFrame(columns=CELL_COLUMNS)
    c = online_cells(df if "std" in df else df.assign(std=float("nan")))
    return pd.DataFrame({"dataset": c["dataset"], "method": c["learner"], "ours": c["mean"], "sd_ours": c["std"],
                         "paper": c["paper_mean"], "sd_paper": c["paper_std"], "band": c["band"], "ok": c["ok"],
                         "strict": c["strict"], "counted": c["dataset"].isin(set(declared))})


def batch_table_cells(folder: Path) -> pd.DataFrame:
    df = _read_csv(folder / "report" / "batch.csv")
    if df is None:
        return pd.DataFrame(columns=CELL_COLUMNS)
    c = batch_cells(df)
    return pd.DataFrame({"dataset": c["dataset"], "method": c["learner"], "ours": c["mean"], "sd_ours": c["sd_ours"],
                         "paper": c["paper_mean"], "sd_paper": c["paper_std"], "band": c["band"], "ok": c["ok"],
                         "strict": c["strict"], "counted": c["substitute"].isna()})


def meka_table_cells(folder: Path) -> pd.DataFrame:
    df = _read_csv(folder / "report" / "table.csv")
    if df is None:
        return pd.DataFrame(columns=CELL_COLUMNS)
    c = meka_cells(df if "std" in df else df.assign(std=float("nan")))
    return pd.DataFrame({"dataset": c["dataset"], "method": c["method"], "ours": c["median"], "sd_ours": c["sd_ours"],
                         "paper": c["paper"], "sd_paper": float("nan"), "band": c["band"], "ok": c["ok"],
                         "strict": False, "counted": True})
