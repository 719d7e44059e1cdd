"""The headline claims of Lu et al. (JMLR 2016), each in the paper's words with its place, and the
check that tests exactly that sentence on a table of numbers (lsokl's committed one, or the
published one: the tests run both).

The tables' claims say "for most cases": held when they hold on more than half of the datasets.
Figures 1, 2, 5 and 6 are the convergence curves of Tables 7 and 9's runs; their verdicts read the
curves' end points from the same records (``report/summary.csv``: mean and time per learner).
"""
from __future__ import annotations

from typing import Optional

import pandas as pd

from ..scoring import BUDGET_BASELINES, best_of_beats, count

OURS = ("fogd", "nogd")

#: (quotation, place) per item
QUOTES = {
    "table3": ("some online algorithms, especially the proposed FOGD and NGOD algorithms, are able to achieve "
               "slightly lower but fairly competitive learning accuracy compared with the state-of-the-art batch "
               "SVM algorithm [...] due to their significant advantage of much lower learning time",
               "Section 7.1.2, the paragraph after Table 3"),
    "table5": ("by comparing the proposed algorithms (FOGD and NOGD) with the budget online classification "
               "algorithms, we found that they generally achieve the best classification performance for most "
               "cases", "Section 7.2.2, the paragraph after Table 5"),
    "table7": ("the proposed algorithms achieve the highest accuracy for most cases",
               "Section 7.3.2, the paragraph after Figure 1 (Table 7 and Figures 1-2)"),
    "table9": ("our algorithms achieve the lowest squared [...] loss for most cases",
               "Section 7.4.2, the paragraph after Table 9"),
    "fig1": ("the proposed algorithms achieve the highest accuracy for most cases",
             "Section 7.3.2, the paragraph after Figure 1"),
    "fig2": ("and meanwhile run significantly faster than the other algorithms",
             "Section 7.3.2, the paragraph after Figure 1 (on Figures 1-2)"),
    "fig3": ("the value ρf is essential to increasing the number of Fourier components, leading to a better "
             "approximation of lower variance and thus higher classification accuracy [...] for NOGD, the large the "
             "value of ρn, the more accurate approximation achieved",
             "Section 7.3.3, the paragraph after Figure 3"),
    "fig4": ("increasing the budget size generally results in better classification accuracy and higher learning "
             "time cost for all the budget online kernel learning algorithms", "Section 7.3.4, on Figure 4"),
    "fig5": ("our algorithms achieve the lowest squared [...] loss for most cases",
             "Section 7.4.2, the paragraph after Table 9 (Figures 5-6)"),
    "fig6": ("Among all the budget algorithms, the proposed FOGD algorithm is able to achieve the smallest time "
             "cost for all cases", "Section 7.4.2, the paragraph before Table 9 (Figures 5-6)"),
}


def most_accurate(frame: pd.DataFrame, value: str = "mean") -> tuple[Optional[bool], str]:
    """Tables 5, 7, 9 and Figs. 1, 5: the better of FOGD and NOGD is at least as good (lower mistake
    rate or loss) as every budget baseline, on more than half of the datasets."""
    return best_of_beats(frame.assign(v=frame[value]), OURS, BUDGET_BASELINES, value="v", most=True)


def faster_than_the_others(frame: pd.DataFrame, time: str = "time_s") -> tuple[Optional[bool], str]:
    """Fig. 2: the faster of FOGD and NOGD runs faster than every other budget learner, on every dataset."""
    return best_of_beats(frame.assign(t=frame[time]), OURS, BUDGET_BASELINES, value="t")


def fogd_fastest(frame: pd.DataFrame, time: str = "time_s") -> tuple[Optional[bool], str]:
    """Fig. 6: FOGD has the smallest time of every budget learner (NOGD included), on every dataset."""
    held, checked, misses = 0, 0, []
    for ds, grp in frame.groupby("dataset", sort=False):
        f = grp[grp["learner"] == "fogd"][time].dropna()
        others = grp[grp["learner"].isin(BUDGET_BASELINES + ("nogd",))][time].dropna()
        if f.empty or others.empty:
            continue
        checked += 1
        if f.iloc[0] <= others.min():
            held += 1
        else:
            fastest = grp.loc[grp[grp["learner"].isin(BUDGET_BASELINES + ("nogd",))][time].idxmin()]
            misses.append(f"{ds}: {fastest['learner']} {fastest[time]:.3g} s vs FOGD {f.iloc[0]:.3g} s")
    if not checked:
        return None, "no dataset with FOGD and another budget learner"
    return bool(held == checked), count(held, checked, misses, " datasets")


#: the paper's largest accuracy gap between the better of FOGD/NOGD and LIBSVM in Table 3 (w8a:
#: 98.36 vs 99.40): what "slightly lower but fairly competitive" covers in its own numbers
BATCH_GAP = 1.04


def batch_competitive(frame: pd.DataFrame) -> tuple[Optional[bool], str]:
    """Table 3, per dataset: FOGD or NOGD trains faster than LIBSVM, at an accuracy at most the paper's
    own largest gap (1.04 points) below LIBSVM's, plus the tie band of the measured spreads."""
    from ..scoring import band

    held, checked, misses = 0, 0, []
    for ds, grp in frame.groupby("dataset", sort=False):
        lib = grp[grp["learner"] == "libsvm"]
        ours = grp[grp["learner"].isin(OURS)].dropna(subset=["mean"])
        if lib.empty or ours.empty or lib["mean"].isna().all():
            continue
        checked += 1
        best = ours.loc[ours["mean"].idxmax()]
        sd = lambda row: row["std"] if "std" in row else None  # noqa: E731
        gap = lib["mean"].iloc[0] - best["mean"]
        near = gap <= BATCH_GAP + band(sd(best), sd(lib.iloc[0])) + 1e-12
        faster = ours["train"].min() < lib["train"].iloc[0]
        if near and faster:
            held += 1
        else:
            misses.append(f"{ds}: " + "; ".join(([] if faster else ["not faster"])
                                                + ([] if near else [f"{gap:.2f} points below LIBSVM"])))
    if not checked:
        return None, "no dataset with LIBSVM and FOGD/NOGD"
    return bool(held == checked), count(held, checked, misses)
