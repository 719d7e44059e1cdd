"""The headline claims of Dai et al. (NIPS 2014), each in the paper's words with its place, and the
check that tests exactly that sentence on lsokl's committed JSON files (the numbers the panels of
``results/dsg/figures/`` are drawn from).

Which DSG is scored on Adult (Fig. 1(1)): plain DSG, Algorithm 1 with its step size
gamma_t = theta/(t + t0) and theta, t0, nu chosen on a 10% validation cut of the training rows
(``e1-plain-report/summary.csv``). That is the paper's protocol as far as it is published: Algorithm 1
is the method the paper states, its appendix settings are unknown here, and the spec (DSG.md
sections 7 and 10) chooses open hyper-parameters on a 10% validation split. The provisional
theta/sqrt(t) run of ``e1.json`` (16.48%) is drawn beside it in the figure but not scored: it was
an untuned first setting, not the paper's step size. NORMA and k-SDCA come from ``e1.json``.

On MNIST 8 vs 6 (Fig. 1(2)) the scored run is ``e2-tuned.json`` (DSG's step chosen on validation
like Adult's; the untuned ``e2.json`` is drawn beside it).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

from ..declare import Score
from ..scoring import band, count, printed_step, strict_ok, tie, within

QUOTES = {
    "fig1-adult": ("NORMA and k-SDCA achieve the best error rate, 15%, while our algorithm achieves a comparable "
                   "rate, 15.3%", "Section 7, \"Adult\", on Figure 1(1)"),
    "fig1-mnist8v6": ("Our algorithm achieves the best test error 0.26%. Comparing to the methods with full kernel, "
                      "the methods using random/Nyström features achieve better test errors",
                      "Section 7, \"MNIST8M 8 vs. 6\", on Figure 1(2)"),
    "fig1-mnist8m": ("Better than the 0.6% error provided by [...] neural nets, our method reaches an error of 0.5% "
                     "very quickly", "Section 7, \"MNIST8M\", on Figure 1(4)"),
    "fig1-qm": ("our algorithm can estimate the optimal function in the RKHS with rate O(1/t)",
                "Section 5, Theoretical Guarantees (Fig. 1(7)'s K-ridge, checked on a synthetic stream)"),
    "sc2": ("To further investigate the computational efficiency of the proposed algorithm, we also conduct "
            "experiments where we stop all algorithms within the same time budget (SC2)",
            "Section 7, experiment settings (the SC2 panels are in Appendix B.2)"),
}

#: the numbers of the paper's text for Adult (no std printed)
ADULT = {"dsg": 15.3, "norma": 15.0, "ksdca": 15.0}
#: the paper's own gap between DSG and the better exact-kernel method on Adult (points)
ADULT_GAP = ADULT["dsg"] - min(ADULT["norma"], ADULT["ksdca"])


def comparable(ends: dict, sds: Optional[dict] = None) -> tuple[Optional[bool], str]:
    """Fig. 1(1): DSG's error exceeds the better of NORMA and k-SDCA by at most the paper's gap
    (0.3 points) plus the tie band of the two measured spreads ("a comparable rate")."""
    sds = sds or {}
    if not all(k in ends for k in ADULT):
        return None, "end points missing"
    best = min(("norma", "ksdca"), key=lambda k: ends[k])
    gap = ends["dsg"] - ends[best]
    allowed = ADULT_GAP + band(sds.get("dsg"), sds.get(best))
    return bool(gap <= allowed + 1e-12), (f"DSG {ends['dsg']:.2f}% vs {'NORMA' if best == 'norma' else 'k-SDCA'} "
                                    f"{ends[best]:.2f}%: {gap:+.2f} points (the paper: +{ADULT_GAP:.1f}; "
                                    f"allowed {allowed:.2f} with the measured spreads)")


def adult_ends(folder: Path) -> tuple[dict, dict]:
    """The scored end points (percent) and their spreads: plain DSG from ``e1-plain-report``, NORMA and
    k-SDCA from ``e1.json``."""
    import pandas as pd

    ends, sds = {}, {}
    path = folder / "e1.json"
    if path.exists():
        for r in json.loads(path.read_text())["end_points"]:
            if r["algorithm"] in ("norma", "ksdca"):
                ends[r["algorithm"]], sds[r["algorithm"]] = 100 * r["mean"], 100 * r["std"]
    plain = folder / "e1-plain-report" / "summary.csv"
    if plain.exists():
        row = pd.read_csv(plain).query("algorithm == 'dsg'").iloc[0]
        ends["dsg"], sds["dsg"] = 100 - float(row["mean"]), float(row["std"])
    return ends, sds


def adult(folder: Path) -> Score:
    """Fig. 1(1): the three end points beside the paper's text numbers (rule: sd_paper = 0, sd_ours =
    lsokl's spread over its permutations); no std printed, so no strict count."""
    ends, sds = adult_ends(folder)
    if not ends:
        return Score(note="no e1.json / e1-plain-report")
    cells = [(ends[a], p, sds.get(a)) for a, p in ADULT.items() if a in ends]
    ok = sum(within(o, p, None, s, printed_step(p)) for o, p, s in cells)
    c, detail = comparable(ends, sds)
    return Score(declared=ok, declared_of=len(cells), strict=sum(strict_ok(o - p, None) for o, p, _ in cells),
                 strict_of=0, claim=c, claim_detail=detail)


FULL_KERNEL, FEATURES = ("norma", "ksdca"), ("rpegasos", "rsdca", "npegasos", "nsdca")


def features_beat_full_kernel(errors: dict) -> tuple[Optional[bool], str]:
    """Fig. 1(2): DSG has the lowest test error of all methods, and the best random/Nystrom-feature
    method is below the best full-kernel one (both parts of the paper's sentence)."""
    if "dsg" not in errors or not any(k in errors for k in FULL_KERNEL) or not any(k in errors for k in FEATURES):
        return None, "methods missing"
    full = min(errors[k] for k in FULL_KERNEL if k in errors)
    feat = min(errors[k] for k in FEATURES if k in errors)
    others = min(v for k, v in errors.items() if k != "dsg")
    dsg_best = errors["dsg"] <= others
    order = feat < full
    return bool(dsg_best and order), (f"DSG {errors['dsg']:.2f}% vs the best other {others:.2f}% "
                                f"({'lowest' if dsg_best else 'not the lowest'}); best random/Nystrom-feature "
                                f"{feat:.2f}% vs best full-kernel {full:.2f}% "
                                f"({'the paper' + chr(39) + 's order' if order else 'the order reversed'})")


def mnist8v6(folder: Path) -> Score:
    path = folder / "e2-tuned.json"
    if not path.exists():
        return Score(note="no e2-tuned.json")
    methods = json.loads(path.read_text())["methods"]
    errors = {k: 100 * v["test_error"] for k, v in methods.items() if k in ("dsg",) + FULL_KERNEL + FEATURES}
    c, detail = features_beat_full_kernel(errors)
    return Score(claim=c, claim_detail=detail + " (e2-tuned: 16k virtual examples, DSG tuned on validation)")


def mnist8v6_labels(folder: Path) -> Score:
    """Fig. 1(2)'s sentence on the run that selects MNIST's 8s and 6s by ``labels: [8, 6]``
    (``e2-labels.json``): both parts of ``features_beat_full_kernel``; a feature method "better" than
    the full kernel only when the gap exceeds the two measured spreads (``tie``)."""
    path = folder / "e2-labels.json"
    if not path.exists():
        return Score(note="no e2-labels.json")
    ends = [r for r in json.loads(path.read_text())["end_points"] if r["dataset"] == "mnist"]
    errors = {r["learner"]: 100 * r["mean"] for r in ends}
    sds = {r["learner"]: 100 * r["std"] for r in ends}
    c, detail = features_beat_full_kernel(errors)
    full = min((k for k in FULL_KERNEL if k in errors), key=errors.get, default=None)
    feat = min((k for k in FEATURES if k in errors), key=errors.get, default=None)
    if c is not None and full and feat and errors[feat] < errors[full] and tie(errors[feat], errors[full],
                                                                               sds[feat], sds[full]):
        c = False
        detail += f" (within the measured spreads, {feat} vs {full}: a tie, not better)"
    return Score(claim=c, claim_detail=detail + " (labels [8, 6] of the 10k MNIST test images, no virtual examples)")


def below_nets(final_error_pct: float, nets: float = 0.6) -> tuple[Optional[bool], str]:
    """Fig. 1(4): DSG's final test error is below the neural nets' 0.6%."""
    return bool(final_error_pct < nets), f"DSG {final_error_pct:.2f}% vs the nets' {nets}% (the paper: 0.5%)"


def mnist8m(folder: Path) -> Score:
    path = folder / "e4.json"
    if not path.exists():
        return Score(note="no e4.json")
    d = json.loads(path.read_text())
    c, detail = below_nets(100 * d["precond"]["final_test_error"])
    return Score(claim=c, claim_detail=detail + " on the 8k-row MNIST-10k stand-in (the paper: 8.1M rows)")


def rate_one_over_t(slope: float, slack: float = 0.1) -> tuple[Optional[bool], str]:
    """Fig. 1(7) (theory): ||f_t - f*||^2 falls at least as fast as 1/t: its log-log slope is at most
    -1 + ``slack`` (the fit's own noise on a 16k-iteration stream)."""
    return bool(slope <= -1 + slack), f"log-log slope {slope:.2f} (O(1/t): at most -1, {slack} allowed for the fit)"


def qm(folder: Path) -> Score:
    path = folder / "e5.json"
    if not path.exists():
        return Score(note="no e5.json")
    c, detail = rate_one_over_t(json.loads(path.read_text())["synthetic"]["slope_t_ge_64"])
    return Score(claim=c, claim_detail=detail + " on the synthetic stream (QM7 is not in the mirror)")


def sc2(folder: Path) -> Score:
    """SC2 from ``e1-time.json``: at every time budget shorter than the exact-kernel methods' pass
    (where equal time differs from equal samples), DSG's test error is below NORMA's and k-SDCA's."""
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


__all__ = ["QUOTES", "adult", "comparable", "count", "features_beat_full_kernel", "mnist8m", "mnist8v6", "qm",
           "rate_one_over_t", "sc2", "below_nets", "tie"]


def adult_cells(folder: Path):
    """Fig. 1(1)'s three end points for verdicts.md."""
    import pandas as pd

    ends, sds = adult_ends(folder)
    rows = []
    for a, p in ADULT.items():
        if a in ends:
            rows.append({"dataset": "a9a (Adult)", "method": a, "ours": ends[a], "sd_ours": sds.get(a), "paper": p,
                         "sd_paper": float("nan"), "band": band(None, sds.get(a), printed_step(p)),
                         "ok": within(ends[a], p, None, sds.get(a), printed_step(p)), "strict": False, "counted": True})
    return pd.DataFrame(rows)
