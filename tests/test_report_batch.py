"""The holdout comparison report (lsokl.papers.lsokl2016.report): aggregation, published values, tolerance
verdicts, substitute flags and the time ratios measured in one run."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lsokl.papers.lsokl2016.report import attach, summarise, to_markdown


def _rec(ds, algo, acc, train, test, status="ok", evaluated_on="test", perm=0, chosen=None):
    return {"dataset": ds, "algorithm": algo, "learner": algo, "status": status, "permutation": perm,
            "value": acc if status == "ok" else None, "support_size": 10,
            "error": None if status == "ok" else {"message": "libsvm fit did not finish within the 300 s time limit"},
            "holdout": {"evaluated_on": evaluated_on, "train_time_s": train, "test_time_s": test,
                        "n_train": 100, "n_test": 50,
                        "selection": {"by": "cv", "folds": 5, "subsample": 3000, "reduced": "why",
                                      "grid": {"C": [1, 2]}, "chosen": chosen or {"C": 2}}}}


PAPER = pd.DataFrame({
    "dataset": ["w7a", "w7a", "KDD"], "algorithm": ["LIBSVM", "FOGD", "LIBSVM"],
    "learner": ["libsvm", "fogd", "libsvm"], "dataset_key": ["w7a", "w7a", "kdd"],
    "mean": [98.0, 97.0, 99.0], "std": [np.nan, 0.2, np.nan],
    "time_s": [50.0, 2.0, 100.0], "test_time_s": [20.0, 1.0, 10.0]})


def test_summary_ratios_and_verdicts():
    recs = [_rec("w7a", "libsvm", 0.985, 40.0, 10.0),
            _rec("w7a", "fogd", 0.96, 1.0, 2.0, perm=0), _rec("w7a", "fogd", 0.97, 3.0, 2.0, perm=1),
            _rec("w7a", "fogd", 0.5, 9.0, 9.0, evaluated_on="cv"),  # an inner CV fit: not a result
            _rec("kdd", "libsvm", None, None, None, status="failed")]
    table = attach(summarise(recs), PAPER, {"kdd": "4/1 cut"}, "libsvm").set_index(["dataset", "algorithm"])
    fogd = table.loc[("w7a", "fogd")]
    assert fogd["mean"] == pytest.approx(96.5) and fogd["std"] == pytest.approx(np.std([96, 97], ddof=1))
    assert fogd["train_s"] == pytest.approx(2.0) and fogd["n_ok"] == 2
    assert fogd["ratio_train_s"] == pytest.approx(40.0 / 2.0)     # LIBSVM time / FOGD time, ours
    assert fogd["paper_ratio_train_s"] == pytest.approx(50.0 / 2.0)
    assert fogd["ratio_test_s"] == pytest.approx(10.0 / 2.0)
    # |96.5 - 97| = 0.5 <= 2 sqrt(0.2^2 + 0.707^2) + 0.05 (the paper prints 97.0: half a digit of 0.1)
    sd = np.std([96, 97], ddof=1)
    assert fogd["within"] == "yes" and fogd["tolerance"] == pytest.approx(2 * np.hypot(0.2, sd) + 0.05)
    lib = table.loc[("w7a", "libsvm")]
    # no published std and one run: the largest spread measured on w7a (FOGD's) stands for LIBSVM's
    assert lib["delta"] == pytest.approx(0.5) and lib["tolerance"] == pytest.approx(2 * sd + 0.5)
    assert lib["within"] == "yes"
    kdd = table.loc[("kdd", "libsvm")]
    assert kdd["n_ok"] == 0 and "time limit" in kdd["errors"][0] and kdd["substitute"] == "4/1 cut"


def test_markdown_states_the_timing_caveat_and_the_failure():
    recs = [_rec("w7a", "libsvm", 0.985, 40.0, 10.0), _rec("w7a", "fogd", 0.96, 1.0, 2.0),
            _rec("kdd", "libsvm", None, None, None, status="failed")]
    table = attach(summarise(recs), PAPER, {"kdd": "4/1 cut"}, "libsvm")
    md = to_markdown(table, PAPER, "libsvm", "t", [], "load 7")
    assert "authors' C++ tools" in md and "one thread" in md and "load 7" in md
    assert "failed: libsvm fit did not finish within the 300 s time limit" in md
    assert "kdd †" in md and "3000 training rows" in md and "Reduced because: why" in md


def test_markdown_does_not_depend_on_the_order_records_come_in():
    """Records are read in file-listing order; a re-run of the same cells must write the same report."""
    recs = [_rec("w7a", "libsvm", 0.985, 40.0, 10.0), _rec("w7a", "fogd", 0.96, 1.0, 2.0),
            _rec("kdd", "libsvm", 0.99, 90.0, 2.0)]
    subs = {"kdd": "4/1 cut", "w7a": "another cut"}
    md = [to_markdown(attach(summarise(r), PAPER, subs, "libsvm"), PAPER, "libsvm", "t", [], "load 1")
          for r in (recs, recs[::-1], recs[1:] + recs[:1])]
    assert md[0] == md[1] == md[2]
    assert "shared with other jobs" not in md[0]  # the load is stated from the record, not assumed


def test_generic_report_skips_rows_without_a_curve():
    """Holdout rows of batch learners have no online curve (NaN in the frame): the convergence
    plots of `lsokl report` skip them instead of failing."""
    from lsokl.report.plots import _curves

    grp = pd.DataFrame({"curve": [np.nan, None]})
    assert _curves(grp, "binary") is None
