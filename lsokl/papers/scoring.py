"""Scores and headline claims of the committed results, read from the files a reproduction writes
(never from the raw records, which are not committed).

The strict rule is the same for every item: a cell matches when |ours - paper| <= 2 published std,
or <= 1.5 points where the published std is below 0.75 (or not printed). "Points" only make sense
for percentages; for other units (squared loss, relative error) the strict rule is 2 published
std alone, and items without any published std have no strict count (shown as "—"). The declared
rule is each item's own (``Item.tolerance``) and is applied by the scorer the item names.

Every claim check is a function of a table of numbers, so the same check runs on the published
table (tests check that each claim holds in the paper's own numbers).
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Callable, Iterable, Optional

import numpy as np
import pandas as pd

from .declare import Score

STRICT_STD, STRICT_POINTS, SMALL_STD = 2.0, 1.5, 0.75


def strict_ok(delta: float, std: float, percent: bool = True) -> bool:
    """The strict rule: within 2 published std, or 1.5 points where the std is < 0.75 (percent only)."""
    std = float("nan") if std is None else float(std)
    if percent and (not math.isfinite(std) or std < SMALL_STD):
        return abs(delta) <= max(STRICT_POINTS, 2 * (std if math.isfinite(std) else 0.0)) + 1e-9
    if not math.isfinite(std):
        return False
    return abs(delta) <= STRICT_STD * std + 1e-12


def _read_csv(path: Path) -> Optional[pd.DataFrame]:
    return pd.read_csv(path) if path.exists() else None


# ----------------------------------------------------------------------------- claims on tables
def best_of_beats(frame: pd.DataFrame, ours: Iterable[str], others: Iterable[str], *, value="mean",
                  by="dataset", key="learner", lower=True) -> tuple[Optional[bool], str]:
    """Per ``by`` group: the best of ``ours`` is at least as good as the best of ``others``.
    Groups lacking either side are skipped; None when no group has both."""
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
    return held == checked, f"{held}/{checked}" + (f" (not on {', '.join(misses)})" if misses else "")


# ----------------------------------------------------------------------------- LSOKL online tables
BUDGET_BASELINES = ("rbp", "forgetron", "projectron", "projectron++", "bpas", "bogd")
#: Table 7: Projectron(++) ties or beats FOGD/NOGD on letter and covtype in the paper itself
REMOVAL_BASELINES = ("rbp", "forgetron", "bpas", "bogd")


def online_table(folder: Path, *, declared: Iterable[str], percent: bool = True,
                 baselines: tuple = BUDGET_BASELINES) -> Score:
    """``report/summary.csv`` of ``lsokl report --paper``: declared rule = the strict rule on the
    datasets whose provenance is ``same`` (``declared``); strict = over every comparable cell."""
    df = _read_csv(folder / "report" / "summary.csv")
    if df is None:
        return Score(note="no report/summary.csv")
    claim, detail = online_claim(df, baselines)  # on every row of ours, published or not
    df = df[df["paper_mean"].notna() & df["mean"].notna()]
    ok = [strict_ok(m - p, s, percent) for m, p, s in zip(df["mean"], df["paper_mean"], df["paper_std"])]
    df = df.assign(ok=ok)
    same = df[df["dataset"].isin(set(declared))]
    return Score(declared=int(same["ok"].sum()), declared_of=len(same), strict=int(df["ok"].sum()),
                 strict_of=len(df), claim=claim, claim_detail=detail)


def online_claim(frame: pd.DataFrame, baselines: tuple = BUDGET_BASELINES) -> tuple[Optional[bool], str]:
    """The better of FOGD and NOGD is at least as good as every baseline named, per dataset."""
    return best_of_beats(frame, ("fogd", "nogd"), baselines)


# ----------------------------------------------------------------------------- LSOKL Table 3
def batch_table(folder: Path) -> Score:
    df = _read_csv(folder / "report" / "batch.csv")
    if df is None:
        return Score(note="no report/batch.csv")
    cmp = df[df["paper_mean"].notna() & df["mean"].notna()]
    declared = cmp[cmp["within"].isin(["yes", "no"])]
    strict = [strict_ok(d, s) for d, s in zip(cmp["delta"], cmp["paper_std"])]
    claim, detail = batch_claim(df.rename(columns={"train_s": "train"}))
    return Score(declared=int((declared["within"] == "yes").sum()), declared_of=len(declared),
                 strict=int(sum(strict)), strict_of=len(cmp), claim=claim, claim_detail=detail)


def batch_claim(frame: pd.DataFrame) -> tuple[Optional[bool], str]:
    """FOGD or NOGD within 1.5 points of LIBSVM's accuracy, and trains faster than LIBSVM."""
    held, checked, misses = 0, 0, []
    for ds, grp in frame.groupby("dataset", sort=False):
        lib = grp[grp["learner"] == "libsvm"]
        ours = grp[grp["learner"].isin(["fogd", "nogd"])].dropna(subset=["mean"])
        if lib.empty or ours.empty or lib["mean"].isna().all():
            continue
        checked += 1
        good = ours["mean"].max() >= lib["mean"].iloc[0] - 1.5 and ours["train"].min() < lib["train"].iloc[0]
        held += good
        if not good:
            misses.append(str(ds))
    if not checked:
        return None, "no dataset with LIBSVM and FOGD/NOGD"
    return held == checked, f"{held}/{checked}" + (f" (not on {', '.join(misses)})" if misses else "")


# ----------------------------------------------------------------------------- BPegasosM Table 1
ORDER_TOP, ORDER_LOW = ("bpm-proj", "bpm-mrg"), ("bpm-rand", "bpm-smal")


def bpegasosm_table1(folder: Path) -> Score:
    """Declared = the validation-chosen width's verdict (``val_within``, spec tolerance on the
    full-size sets); strict over every cell with a published value, on the validation choice where
    there is one (else the best width by test accuracy, e.g. PRJTRN++)."""
    df = _read_csv(folder / "table1.csv")
    if df is None:
        return Score(note="no table1.csv")
    df = df.assign(value=df["val"].where(df["val"].notna(), df["test_best"]))
    val = df[df["val_within"].notna()]
    cmp = df[df["paper"].notna() & df["value"].notna()]
    strict = [strict_ok(v - p, s) for v, p, s in zip(cmp["value"], cmp["paper"], cmp["paper_std"])]
    test_chosen = int(val["within"].fillna(False).astype(bool).sum())  # the same cells, best width by test
    groups = df["dataset"] + " B=" + df["B"].map(lambda b: f"{b:g}") + " n=" + df["n_train"].map(lambda n: f"{n:g}")
    claim, detail = bpegasosm_claim(df.assign(group=groups))
    return Score(declared=int(val["val_within"].astype(bool).sum()), declared_of=len(val),
                 strict=int(sum(strict)), strict_of=len(cmp), claim=claim, claim_detail=detail,
                 note=f"best width by test accuracy: {test_chosen}/{len(val)}")


def bpegasosm_claim(frame: pd.DataFrame, value: str = "value") -> tuple[Optional[bool], str]:
    """BPM+PROJ and BPM+MRG are both more accurate than BPM+RAND and BPM+SMAL, per (dataset, B)."""
    held, checked, misses = 0, 0, []
    for g, grp in frame.groupby("group", sort=False):
        top = grp[grp["algo"].isin(ORDER_TOP)][value].dropna()
        low = grp[grp["algo"].isin(ORDER_LOW)][value].dropna()
        if len(top) < 2 or low.empty:
            continue
        checked += 1
        if top.min() > low.max():
            held += 1
        else:
            misses.append(str(g))
    if not checked:
        return None, "no (dataset, B) with both groups"
    return held == checked, f"{held}/{checked}" + (f" (not on {', '.join(misses)})" if misses else "")


# ----------------------------------------------------------------------------- MEKA
def meka_within(folder: Path, claim: Optional[Callable] = None) -> Score:
    """``report/table.csv`` with the spec's relative tolerances (``within``); no published std, so no strict count."""
    df = _read_csv(folder / "report" / "table.csv")
    if df is None:
        return Score(note="no report/table.csv")
    cmp = df[df["within"].notna() & df["median"].notna()]
    c, detail = claim(df) if claim else (None, "")
    return Score(declared=int(cmp["within"].astype(str).eq("True").sum()), declared_of=len(cmp),
                 strict=None, strict_of=0, claim=c, claim_detail=detail,
                 note="no published std: strict rule not applicable")


def meka_order(frame: pd.DataFrame, value: str = "median") -> tuple[Optional[bool], str]:
    """{MEKA, KNys} < {Nys, RNys} < ENys < {RKS, Fastfood} (relative error), per dataset."""
    held, checked, misses = 0, 0, []
    for ds, grp in frame.groupby("dataset", sort=False):
        v = dict(zip(grp["learner"], grp[value]))
        need = ["meka", "knys", "nystrom", "rnys", "enys", "rks", "fastfood"]
        if any(k not in v or not np.isfinite(v[k]) for k in need):
            continue
        checked += 1
        good = (max(v["meka"], v["knys"]) < min(v["nystrom"], v["rnys"])
                and max(v["nystrom"], v["rnys"]) < v["enys"] < min(v["rks"], v["fastfood"]))
        held += good
        if not good:
            misses.append(str(ds))
    if not checked:
        return None, "no dataset with every method"
    return held == checked, f"{held}/{checked}" + (f" (not on {', '.join(misses)})" if misses else "")


def meka_beats_nys(frame: pd.DataFrame, value: str = "median") -> tuple[Optional[bool], str]:
    """MEKA's error is below standard Nystrom's at the same rank, per dataset."""
    return best_of_beats(frame.assign(v=frame[value]), ("meka",), ("nystrom",), value="v")


def meka_table3(folder: Path) -> Score:
    df = _read_csv(folder / "report" / "table.csv")
    if df is None:
        return Score(note="no report/table.csv")
    c, detail = meka_rank_claim(df)
    return Score(claim=c, claim_detail=detail, note="ranks of a stand-in: not comparable in level")


def meka_rank_claim(frame: pd.DataFrame, diag="diag_mean", off="offdiag_mean") -> tuple[Optional[bool], str]:
    """Under k-means clustering the off-diagonal blocks have a lower rank than under a random partition."""
    held, checked = 0, 0
    for ds, grp in frame.groupby("dataset", sort=False):
        km, rnd = grp[grp["partition"] == "kmeans"], grp[grp["partition"] == "random"]
        if km.empty or rnd.empty:
            continue
        checked += 1
        held += bool(km[off].iloc[0] < rnd[off].iloc[0])
    if not checked:
        return None, "no dataset with both partitions"
    return held == checked, f"{held}/{checked} datasets"


def meka_table5(folder: Path) -> Score:
    df = _read_csv(folder / "report" / "table.csv")
    if df is None:
        return Score(note="no report/table.csv")
    df = df[df["runs"] > 0]
    c, detail = meka_time_claim(df, tc="TC_s_cpu", tw="TW_s_cpu", tl="TL_s_cpu")
    return Score(claim=c, claim_detail=detail, note="times: other machine and language; not compared cell by cell")


def meka_time_claim(frame, tc="TC", tw="TW", tl="TL") -> tuple[Optional[bool], str]:
    """Clustering (TC) costs less than the block approximations (TW + TL), per dataset."""
    rows = frame.dropna(subset=[tc, tw, tl])
    if rows.empty:
        return None, "no timed dataset"
    good = (rows[tc] < rows[tw] + rows[tl])
    return bool(good.all()), f"{int(good.sum())}/{len(rows)} datasets"


def meka_table2(folder: Path) -> Score:
    df = _read_csv(folder / "report" / "table.csv")
    if df is None:
        return Score(note="no report/table.csv")
    c, detail = meka_bka_claim(df.rename(columns={"accuracy_median": "acc", "time_median": "time"}))
    return Score(claim=c, claim_detail=detail, note="stand-in data: not compared cell by cell")


def meka_bka_claim(frame, method="method") -> tuple[Optional[bool], str]:
    """BKA-SVM trains faster than LIBSVM, within 2 points of its accuracy, per dataset."""
    held, checked = 0, 0
    for ds, grp in frame.groupby("dataset", sort=False):
        b, lib = grp[grp[method] == "BKA-SVM"], grp[grp[method] == "LIBSVM"]
        if b.empty or lib.empty:
            continue
        checked += 1
        held += bool(b["time"].iloc[0] < lib["time"].iloc[0] and b["acc"].iloc[0] >= lib["acc"].iloc[0] - 2)
    if not checked:
        return None, "no dataset with both"
    return held == checked, f"{held}/{checked} datasets"


def meka_fig7a(folder: Path) -> Score:
    """Fig. 7(a): at each MEKA point (memory m, error e), no other method reaches a lower error with
    at most m floats stored (equal or less memory, as the figure's x axis)."""
    df = _read_csv(folder / "report" / "table.csv")
    if df is None:
        return Score(note="no report/table.csv")
    c, detail = meka_memory_claim(df)
    return Score(claim=c, claim_detail=detail)


def meka_memory_claim(frame: pd.DataFrame) -> tuple[Optional[bool], str]:
    held, checked, misses = 0, 0, []
    for ds, grp in frame.groupby("dataset", sort=False):
        others = grp[grp["learner"] != "meka"]
        for _, p in grp[grp["learner"] == "meka"].iterrows():
            cheaper = others[others["memory"] <= p["memory"]]
            checked += 1
            if cheaper.empty or cheaper["error"].min() >= p["error"]:
                held += 1
            else:
                best = cheaper.loc[cheaper["error"].idxmin()]
                misses.append(f"{best['learner']} {best['error']:.3g} vs MEKA {p['error']:.3g} at {p['memory']:,.0f} floats")
    if not checked:
        return None, "no MEKA point"
    return held == checked, (f"MEKA lowest at {held}/{checked} of its points" +
                             (f" (e.g. {misses[0]})" if misses else ""))


# ----------------------------------------------------------------------------- DSG
DSG_E1 = {"dsg": 15.3, "norma": 15.0, "ksdca": 15.0}


def dsg_e1(folder: Path) -> Score:
    """End points of Fig. 1(1) beside the numbers in the paper's text (no std printed)."""
    path = folder / "e1.json"
    if not path.exists():
        return Score(note="no e1.json")
    ends = {r["algorithm"]: 100 * r["mean"] for r in json.loads(path.read_text())["end_points"]}
    cells = [(ends[a], p) for a, p in DSG_E1.items() if a in ends]
    ok = sum(abs(o - p) <= 1.5 for o, p in cells)
    strict = sum(strict_ok(o - p, float("nan")) for o, p in cells)
    c, detail = dsg_claim(ends)
    return Score(declared=ok, declared_of=len(cells), strict=strict, strict_of=len(cells), claim=c,
                 claim_detail=detail)


def dsg_claim(ends: dict) -> tuple[Optional[bool], str]:
    """DSG's error is within 1 point of the better of NORMA and k-SDCA (15.3% vs 15%)."""
    if not all(k in ends for k in DSG_E1):
        return None, "end points missing"
    gap = ends["dsg"] - min(ends["norma"], ends["ksdca"])
    return gap <= 1.0, f"DSG {ends['dsg']:.2f}% vs best of NORMA, k-SDCA {min(ends['norma'], ends['ksdca']):.2f}% ({gap:+.2f})"


# ----------------------------------------------------------------------------- LSOKL figures
def sweep_claim(folder: Path, files: dict[str, tuple[str, ...]]) -> Score:
    """``{csv name: learners}``: each learner's mistake rate at the largest swept value is below
    the one at the smallest, per dataset (more features / rank / budget helps)."""
    held, checked, misses = 0, 0, []
    for name, learners in files.items():
        df = _read_csv(folder / name)
        if df is None:
            return Score(note=f"no {name}")
        for (ds, algo), grp in df[df["algorithm"].isin(learners)].groupby(["dataset", "algorithm"], sort=False):
            grp = grp.sort_values("x")
            checked += 1
            good = grp["mean"].iloc[-1] < grp["mean"].iloc[0]
            held += good
            if not good:
                misses.append(f"{algo} on {ds}")
    if not checked:
        return Score(note="nothing swept")
    return Score(claim=held == checked, claim_detail=f"{held}/{checked} curves fall"
                 + (f" (not {', '.join(misses)})" if misses else ""))


def no_score(folder: Path) -> Score:
    return Score(note="figure: judged by eye and in NOTES.md")


# ----------------------------------------------------------------------------- figures of issue 27 item 6
def bpegasosm_fig3(folder: Path) -> Score:
    """BPegasosM Fig. 3 from ``time-vs-length.csv``: PegasosM's log-log slope is quadratic (>= 1.7),
    every budgeted line's linear (<= 1.5), and merging ends faster than projection at each budget
    (the paper: merging has the better constant). The claim holds when all three do."""
    df = _read_csv(folder / "time-vs-length.csv")
    if df is None:
        return Score(note="no time-vs-length.csv")
    slope = dict(zip(df["setting"], df["slope_second_half"]))
    last = max((c for c in df.columns if c.startswith("t_at_")), key=lambda c: int(c[5:]))
    final = dict(zip(df["setting"], df[last]))
    peg = [s for k, s in slope.items() if k.startswith("pegasos")]
    budgeted = [s for k, s in slope.items() if k.startswith("bpm-")]
    if not peg or not budgeted:
        return Score(note="PegasosM or budgeted lines missing")
    growth = min(peg) >= 1.7 and max(budgeted) <= 1.5
    budgets = sorted({k.split(" B=")[1] for k in final if k.startswith("bpm-mrg B=")}, key=int)
    merge = [(b, final[f"bpm-mrg B={b}"], final.get(f"bpm-proj B={b}")) for b in budgets]
    merge = [(b, m, p) for b, m, p in merge if p is not None and not pd.isna(p)]
    faster = all(m < p for _, m, p in merge) if merge else None
    detail = (f"slopes: PegasosM {min(peg):.2f}, budgeted {min(budgeted):.2f}-{max(budgeted):.2f} "
              f"({'holds' if growth else 'does not hold'}); merging vs projection at {last[5:]} samples: "
              + ", ".join(f"B={b} {m:.2f} s vs {p:.2f} s" for b, m, p in merge)
              + f" ({'faster: holds' if faster else 'not faster: does not hold'})")
    return Score(claim=bool(growth and faster), claim_detail=detail)


def meka_fig12(folder: Path, tie: float = 0.005) -> Score:
    """MEKA Fig. 12 from ``fig12-rank.csv``: per dataset, MEKA's test RMSE is the lowest at every
    rank (within ``tie``, relative, of the lowest: a dataset where every method ties counts as a
    tie, not a win) and MEKA's time is below the slowest method's. The paper: lower RMSE in less time."""
    df = _read_csv(folder / "fig12-rank.csv")
    if df is None:
        return Score(note="no fig12-rank.csv")
    lowest, ties, slowest = [], [], []
    for ds, grp in df.groupby("dataset", sort=False):
        wins, tied, slow = True, True, True
        for _, at in grp.groupby("x"):
            meka = at[at["algorithm"] == "meka"]
            others = at[at["algorithm"] != "meka"]
            if meka.empty or others.empty:
                continue
            m = float(meka["mean"].iloc[0])
            wins &= m <= float(others["mean"].min())
            tied &= float(at["mean"].max()) <= (1 + tie) * float(at["mean"].min())
            slow &= float(meka["time_median"].iloc[0]) >= float(others["time_median"].max())
        (ties if tied else lowest if wins else []).append(ds)
        if slow:
            slowest.append(ds)
    judged = [d for d in df["dataset"].unique() if d not in ties]
    rmse = bool(judged) and all(d in lowest for d in judged)
    detail = (f"lowest RMSE at every rank on {len(lowest)}/{len(judged)} datasets ({', '.join(lowest) or 'none'})"
              + (f" ({', '.join(ties)}: every method within {tie:.1%})" if ties else "")
              + (f"; the slowest method at every rank on {', '.join(slowest)} (the paper: less time)" if slowest else ""))
    return Score(claim=rmse and not any(d in slowest for d in judged), claim_detail=detail)


def dsg_sc2(folder: Path) -> Score:
    """DSG's SC2 analogue from ``e1-time.json``: at every time budget shorter than the exact-kernel
    methods' pass (where equal time differs from equal samples), DSG's test error is below NORMA's
    and k-SDCA's."""
    path = folder / "e1-time.json"
    if not path.exists():
        return Score(note="no e1-time.json")
    methods = json.loads(path.read_text())["methods"]
    exact = [methods[k] for k in ("NORMA", "k-SDCA") if k in methods]
    if "DSG" not in methods or len(exact) < 2:
        return Score(note="DSG, NORMA or k-SDCA missing")
    shortest = min(m["time_s"][-1] for m in exact)
    budgets = [b for b in methods["DSG"]["error_within_budget_pct"] if float(b) < shortest]
    if not budgets:
        return Score(note="no budget below the exact-kernel methods' pass")
    err = lambda m, b: m["error_within_budget_pct"][b]  # noqa: E731
    held = [b for b in budgets if all(err(methods["DSG"], b) < err(m, b) for m in exact)]
    return Score(claim=len(held) == len(budgets),
                 claim_detail=f"DSG below NORMA and k-SDCA at {len(held)}/{len(budgets)} budgets under "
                              f"{shortest:.0f} s ({', '.join(f'{b} s' for b in budgets)})")
