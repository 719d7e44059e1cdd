"""Verdicts a referee would sign: the tolerance rule grounded in both spreads, each headline claim in
the paper's words (checked exactly, and flipped by hand-made numbers), a computed verdict for every
item with a claim, one provenance per file and one tie rule, and users' words in committed files."""
from __future__ import annotations

import re
import subprocess
import unicodedata
from pathlib import Path

import pandas as pd
import pytest

from lsokl import papers
from lsokl.papers import scoring
from lsokl.papers.scoreboard import FILE, score

REPO = Path(__file__).resolve().parents[1]
PAPER_TEXTS = REPO.parent / "shared" / "docs" / "papers"


# ----------------------------------------------------------------------------- the rule
def test_a_rate_58_times_the_published_one_is_a_miss_however_noisy():
    # LSOKL Table 5, kddcup99, Perceptron: 1.17% against the published 0.02 +- 0.00
    assert not scoring.within(1.17, 0.02, sd_paper=0.0, sd_ours=0.6)  # inside 2 sqrt(...) but 58x
    assert not scoring.within(0.95, 0.01, sd_paper=0.0, sd_ours=0.5)
    assert scoring.within(0.015, 0.01, sd_paper=0.0, sd_ours=0.01)  # same order, inside the spreads


def test_a_cell_within_both_spreads_is_a_match_and_outside_is_a_miss():
    # band = 2 sqrt(0.5^2 + 0.5^2) + 0.05 = 1.46
    assert scoring.within(31.4, 30.0, sd_paper=0.5, sd_ours=0.5)
    assert not scoring.within(31.5, 30.0, sd_paper=0.5, sd_ours=0.5)
    assert scoring.printed_step(3.47, 0.01) == pytest.approx(0.01) and scoring.printed_step(15) == 1.0


def test_a_cell_printed_without_std_uses_lsokl_measured_spread():
    # MEKA-style cell: no published std; 0.1380 vs 0.1325 needs sd_ours >= 0.00275
    assert not scoring.within(0.1380, 0.1325, sd_paper=None, sd_ours=0.001)
    assert scoring.within(0.1380, 0.1325, sd_paper=None, sd_ours=0.003)
    # a seed-to-seed std dominated by one unstable seed does not widen a median's band
    assert scoring.median_sd(0.097, 0.171) is None and scoring.median_sd(0.13, 0.003) == 0.003


def test_accuracies_use_the_relative_band_on_their_errors():
    assert not scoring.within(99.0, 99.98, sd_paper=0.5, sd_ours=0.5, accuracy=True)  # 1% vs 0.02% error
    assert scoring.within(98.5, 98.3, sd_paper=0.2, sd_ours=0.2, accuracy=True)


def test_one_tie_rule():
    assert scoring.tie(0.7582, 0.7583, 0.01, 0.01) and not scoring.tie(0.12, 0.18, 0.01, 0.01)


def test_the_table5_kddcup99_cells_are_misses_in_the_committed_summary():
    df = pd.read_csv(REPO / "results" / "table5" / "report" / "summary.csv")
    cells = scoring.online_cells(df)
    kdd = cells[(cells["dataset"] == "kddcup99") & (cells["learner"] == "perceptron")]
    assert len(kdd) == 1 and not kdd["ok"].iloc[0]


# ----------------------------------------------------------------------------- claims flip on hand-made numbers
def _frame(rows, cols=("dataset", "learner", "mean", "time_s")):
    return pd.DataFrame(rows, columns=list(cols))


def test_lsokl_claims_flip():
    from lsokl.papers.lsokl2016 import claims as c

    rows = [("a", "fogd", 10, 1.0), ("a", "rbp", 12, 2.0), ("b", "nogd", 10, 1.0), ("b", "bogd", 11, 0.5),
            ("c", "fogd", 10, 1.0), ("c", "projectron", 9, 3.0)]
    assert c.most_accurate(_frame(rows))[0] is True  # 2 of 3 datasets: "for most cases"
    rows[0] = ("a", "fogd", 13, 1.0)
    assert c.most_accurate(_frame(rows))[0] is False  # 1 of 3
    assert c.faster_than_the_others(_frame(rows))[0] is False  # b: BOGD faster than NOGD
    rows[3] = ("b", "bogd", 11, 1.5)
    assert c.faster_than_the_others(_frame(rows))[0] is True
    fig6 = _frame([("a", "fogd", 1, 0.1), ("a", "nogd", 1, 0.2), ("a", "rbp", 1, 0.3)])
    assert c.fogd_fastest(fig6)[0] is True
    fig6.loc[1, "time_s"] = 0.05  # NOGD faster: FOGD is not "the smallest time cost for all cases"
    assert c.fogd_fastest(fig6)[0] is False
    t3 = pd.DataFrame([("a", "libsvm", 90.0, 10.0), ("a", "fogd", 89.0, 1.0)],
                      columns=["dataset", "learner", "mean", "train"])
    assert c.batch_competitive(t3)[0] is True
    t3.loc[1, "train"] = 11.0
    assert c.batch_competitive(t3)[0] is False


def test_bpegasosm_claims_flip():
    from lsokl.papers.bpegasosm2010 import claims as c

    rows = pd.DataFrame([("g", "bpm-proj", 90.0), ("g", "bpm-mrg", 91.0), ("g", "bpm-rand", 85.0), ("g", "prjtrn++", 89.0)],
                        columns=["group", "algo", "value"])
    assert c.outperform(rows)[0] is True
    rows.loc[3, "value"] = 90.5  # Projectron++ above projection: "outperformed both" fails
    assert c.outperform(rows)[0] is False
    curves = pd.DataFrame([("w", "pegasos", None, 1e5, 85.0, 0.2), ("w", "bpm-proj", 100, 1e5, 84.0, 0.2),
                           ("w", "bpm-proj", 100, 1e6, 86.0, 0.2), ("w", "bpm-mrg", 100, 1e6, 84.9, 0.2)],
                          columns=["dataset", "algo", "B", "n_train", "test_best", "test_best_std"])
    assert c.surpass_pegasos(curves, "w")[0] is True  # MRG 84.9 ties PegasosM's 85.0 within the spreads
    curves.loc[3, "test_best"] = 83.0
    assert c.surpass_pegasos(curves, "w")[0] is False


def test_dsg_claims_flip():
    from lsokl.papers.dsg2014 import claims as c

    assert c.comparable({"dsg": 15.3, "norma": 15.0, "ksdca": 15.1}, {"dsg": 0.1, "norma": 0.1})[0] is True
    assert c.comparable({"dsg": 15.83, "norma": 15.97, "ksdca": 15.04}, {"dsg": 0.12, "ksdca": 0.06})[0] is False
    paper_order = {"dsg": 0.26, "norma": 0.5, "ksdca": 0.45, "rpegasos": 0.4, "nsdca": 0.3}
    assert c.features_beat_full_kernel(paper_order)[0] is True
    reversed_order = {"dsg": 2.48, "norma": 1.4, "ksdca": 1.09, "rpegasos": 10.7, "nsdca": 1.55}
    held, detail = c.features_beat_full_kernel(reversed_order)
    assert held is False and "reversed" in detail
    assert c.below_nets(0.5)[0] is True and c.below_nets(2.15)[0] is False
    assert c.rate_one_over_t(-1.18)[0] is True and c.rate_one_over_t(-0.5)[0] is False


def test_meka_claims_flip():
    from lsokl.papers.meka2017 import claims as c

    t2 = pd.DataFrame([("x", "BKA-SVM", 98.49, 98.4, 98.6, 5.0), ("x", "LIBSVM", 98.69, 98.69, 98.69, 115.0),
                       ("x", "LIBSVM (1/5 subsample)", 98.24, 98.2, 98.3, 6.0)],
                      columns=["dataset", "method", "acc", "accuracy_min", "accuracy_max", "time"])
    assert c.bka_near_libsvm(t2)[0] is True  # the paper's ijcnn1 row: 0.2 points, 23x faster
    t2.loc[0, "acc"] = 97.3  # 1.4 points below LIBSVM: more than the paper's 0.2
    held, detail = c.bka_near_libsvm(t2)
    assert held is False and "below LIBSVM" in detail
    t3 = pd.DataFrame([("d", "kmeans", 20.0, 10.0), ("d", "random", 100.0, 60.0)],
                      columns=["dataset", "partition", "diag_mean", "offdiag_mean"])
    assert c.lower_rank_offdiag(t3)[0] is True
    t3.loc[0, "offdiag_mean"] = 70.0
    assert c.lower_rank_offdiag(t3)[0] is False
    t5 = pd.DataFrame([(0.05, 0.69, 0.35)], columns=["TC", "TW", "TL"])
    assert c.clustering_cheap(t5)[0] is True
    assert c.clustering_cheap(t5.assign(TC=2.0))[0] is False


def test_meka_table7_compares_meka_and_knys_separately_at_meka_memory(tmp_path):
    """MEKA 0.097 at 1.99M floats against KNys's curve (0.079 at 1.41M, 0.042 at 2.81M): at MEKA's
    memory KNys is lower, so the claim fails although MEKA beats Nystrom."""
    from lsokl.papers.meka2017 import claims as c

    (tmp_path / "meka-fig7a" / "report").mkdir(parents=True)
    pd.DataFrame([("pendigits", "knys", 2813952.0, 0.042), ("pendigits", "nystrom", 2813952.0, 0.150)],
                 columns=["dataset", "learner", "memory", "error"]).to_csv(
        tmp_path / "meka-fig7a" / "report" / "table.csv", index=False)
    t7 = pd.DataFrame([("pendigit", "knys", 0.0790, 0.001, 1406976.0), ("pendigit", "nystrom", 0.2000, 0.003, 1406976.0),
                       ("pendigit", "meka", 0.0970, 0.004, 1985240.0)],
                      columns=["dataset", "learner", "median", "std", "memory"])
    held, detail = c.table7(t7, tmp_path / "meka-table7")
    assert held is False and "knys" in detail and "lower in 1" in detail
    t7.loc[2, "median"] = 0.050
    assert c.table7(t7, tmp_path / "meka-table7")[0] is True


# ----------------------------------------------------------------------------- every claim quoted, placed and judged
def _norm(text: str) -> str:
    """Letters and digits only, accents and the fi/fl ligatures the text extraction drops removed."""
    text = unicodedata.normalize("NFKD", text.lower().replace("ρ", "rho"))
    return re.sub(r"[^a-z0-9]", "", text).replace("fi", "").replace("fl", "")


def test_every_claim_is_quoted_with_its_place():
    for item in papers.items().values():
        if item.runnable:
            assert item.claim.startswith("\u201c") and item.claim.endswith("\u201d"), item.id
            assert item.where, item.id


@pytest.mark.skipif(not PAPER_TEXTS.is_dir(), reason="the papers' texts are not beside the clone")
def test_every_quotation_is_in_the_papers_text():
    texts = {"lsokl2016": "lsokl-jmlr2016.txt", "bpegasosm2010": "bpegasosm-icml2010.txt",
             "dsg2014": "dsg-nips2014.txt", "meka2017": "meka-jmlr2017.txt"}
    for item in papers.items().values():
        if not item.claim:
            continue
        text = _norm((PAPER_TEXTS / texts[item.paper]).read_text())
        for piece in item.claim.strip("\u201c\u201d").split("[...]"):
            assert _norm(piece) in text, f"{item.id}: {piece!r}"


def test_every_item_with_a_claim_has_a_computed_verdict():
    for item in papers.items().values():
        if not (item.runnable and item.claim):
            continue
        s = score(item, REPO)
        assert s is not None and s.claim is not None, f"{item.id}: {s}"


def test_the_words_not_judged_appear_nowhere():
    files = subprocess.run(["git", "ls-files", "lsokl", FILE, "README.md", "results"], cwd=REPO,
                           capture_output=True, text=True, check=True).stdout.split()
    bad = [f for f in files if f.endswith((".py", ".md")) and "not judged" in (REPO / f).read_text().lower()]
    assert not bad, bad


# ----------------------------------------------------------------------------- one label, one rule
def test_a_file_has_one_provenance_within_a_paper():
    # a generator's stream (waveform, checkerboard) has no file: it is a `subset` of the paper's data at a
    # shorter n and the `same` at the paper's n, so its provenance goes with the item's n
    generated = {"waveform", "checkerboard"}
    seen: dict = {}
    for item in papers.items().values():
        for d in item.datasets:
            if d.provenance in ("stand-in", "absent") or d.name in generated:  # a stand-in's label says for
                continue                                                      # which panel: not the file's
            key = (item.paper, d.name)
            assert seen.setdefault(key, (d.provenance, item.id))[0] == d.provenance, (key, seen[key], item.id)


def test_items_with_several_runs_say_which_they_score():
    for ident in ("dsg2014:fig1-adult", "dsg2014:fig1-mnist8v6", "meka2017:table7", "meka2017:table8"):
        assert papers.get(ident).variant, ident


# ----------------------------------------------------------------------------- users' words
INTERNAL = re.compile(r"\bissues? #?\d+|\bitem \d+ of issue|\bcoordination\b|\bPR #?\d+", re.IGNORECASE)


def test_committed_results_and_the_scoreboard_hold_no_internal_references():
    files = subprocess.run(["git", "ls-files", "results", FILE, "README.md"], cwd=REPO, capture_output=True,
                           text=True, check=True).stdout.split()
    bad = []
    for f in files:
        if f.endswith((".md", ".csv", ".json")) and (REPO / f).exists():
            bad += [f"{f}: {m.group(0)}" for m in INTERNAL.finditer((REPO / f).read_text(errors="replace"))]
    assert not bad, bad[:20]


def test_item_declarations_hold_no_internal_references():
    for item in papers.items().values():
        for text in (item.reason, item.claim, item.variant, item.layout,
                     *(d.note for d in item.datasets)):
            assert not INTERNAL.search(text or ""), (item.id, text)


def test_list_shows_a_verdict_for_every_item_with_a_claim():
    from typer.testing import CliRunner

    from lsokl.cli import app

    res = CliRunner().invoke(app, ["reproduce", "--list", "--root", str(REPO)])
    assert res.exit_code == 0, res.output
    for ident, item in papers.items().items():
        line = next(ln for ln in res.output.splitlines() if ln.startswith(ident + " "))
        want = ("claim:yes", "claim:no") if item.runnable and item.claim else (" - ",)
        assert any(w in line for w in want), line


def test_rescore_rewrites_verdicts_from_the_committed_tables_without_running_a_cell(tmp_path, monkeypatch):
    import shutil

    from typer.testing import CliRunner

    from lsokl.cli import app
    from lsokl.papers import reproduce

    monkeypatch.setattr(reproduce, "RECIPES", {})  # any run would fail with a KeyError
    (tmp_path / "results" / "table5" / "report").mkdir(parents=True)
    shutil.copy(REPO / "results" / "table5" / "report" / "summary.csv", tmp_path / "results" / "table5" / "report")
    shutil.copy(REPO / FILE, tmp_path / FILE)  # a results root lsokl made (--root refuses any other)
    res = CliRunner().invoke(app, ["reproduce", "lsokl2016:table5", "--rescore", "--root", str(tmp_path)])
    assert res.exit_code == 0, res.output
    text = (tmp_path / "results" / "table5" / "verdicts.md").read_text()
    assert "| kddcup99 | perceptron | 1.174 ± 0.0011 | 0.02 ± 0 |" in text and "Claim held: yes" in text
    assert (tmp_path / FILE).exists()


def test_committed_verdicts_are_current():
    from lsokl.papers import verdicts

    for folder, its in verdicts.folders(list(papers.items().values())).items():
        path = REPO / folder / verdicts.FILE
        assert path.exists() and path.read_text() == verdicts.render(its, REPO), (
            f"{path} is stale: run `lsokl reproduce --rescore`")


def test_lsokl_sweep_claim_flips(tmp_path):
    rows = [("dna", "fogd", 1.0, 20.0), ("dna", "fogd", 4.0, 18.0)]
    pd.DataFrame(rows, columns=["dataset", "algorithm", "x", "mean"]).to_csv(tmp_path / "s.csv", index=False)
    assert scoring.sweep_claim(tmp_path, {"s.csv": ("fogd",)}).claim is True
    rows[1] = ("dna", "fogd", 4.0, 21.0)  # more features, a higher mistake rate
    pd.DataFrame(rows, columns=["dataset", "algorithm", "x", "mean"]).to_csv(tmp_path / "s.csv", index=False)
    assert scoring.sweep_claim(tmp_path, {"s.csv": ("fogd",)}).claim is False


def test_lsokl_fig4_claim_reads_every_learner_and_the_time(tmp_path):
    cols = ["dataset", "algorithm", "x", "mean", "time_mean"]
    rows = [("usps", "rbp", 50.0, 60.0, 0.1), ("usps", "rbp", 500.0, 20.0, 0.3),
            ("usps", "nogd", 50.0, 20.0, 0.1), ("usps", "nogd", 500.0, 10.0, 0.4)]
    pd.DataFrame(rows, columns=cols).to_csv(tmp_path / "f.csv", index=False)
    s = scoring.sweep_claim(tmp_path, {"f.csv": None}, time=True)
    assert s.claim is True and s.claim_detail.startswith("2/2")
    rows[3] = ("usps", "nogd", 500.0, 10.0, 0.05)  # more budget, less time: "higher learning time cost" fails
    pd.DataFrame(rows, columns=cols).to_csv(tmp_path / "f.csv", index=False)
    s = scoring.sweep_claim(tmp_path, {"f.csv": None}, time=True)
    assert s.claim is False and "nogd on usps: time does not rise" in s.claim_detail
    assert scoring.sweep_claim(tmp_path, {"f.csv": None}).claim is True  # the error alone still falls


def test_meka_table8_compares_at_meka_memory_along_the_rank_sweep(tmp_path):
    from lsokl.papers.meka2017 import claims as c

    (tmp_path / "meka-fig12").mkdir()
    # RKS at rank 128 stores 200 floats in Table 8; the sweep puts rank 256 at 400: at MEKA's 300 -> 0.10
    pd.DataFrame([("cadata", "rks", 128, 0.14, 0.001), ("cadata", "rks", 256, 0.08, 0.001)],
                 columns=["dataset", "algorithm", "x", "mean", "std"]).to_csv(tmp_path / "meka-fig12" / "fig12-rank.csv",
                                                                           index=False)
    t8 = pd.DataFrame([("cadata", "rks", 0.14, 0.001, 200.0), ("cadata", "meka", 0.12, 0.001, 300.0)],
                      columns=["dataset", "learner", "median", "std", "memory"])
    held, detail = c.table8(t8, tmp_path / "meka-table8")
    assert held is False and "rks" in detail  # below RKS's Table 8 point, above its curve at MEKA's memory
    t8.loc[1, "median"] = 0.09
    assert c.table8(t8, tmp_path / "meka-table8")[0] is True
