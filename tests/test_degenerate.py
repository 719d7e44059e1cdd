"""Degenerate passes (issue 9 item 6): a constant predictor is flagged in its record, marked in the
report and never chosen by the step-size search."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from lsokl.config import load_config
from lsokl.learners.base import Trace, checkpoint_steps
from lsokl.results import ResultStore
from lsokl.runner import run_experiment
from lsokl.compute.degenerate import check


def _trace(task, y, predictions, per_pass=15):
    """The Trace a learner predicting ``predictions`` (one per step) on labels ``y`` would leave."""
    n = len(y)
    ck = checkpoint_steps(n, per_pass)
    wrong = np.cumsum(predictions != y) if task != "regression" else np.cumsum(np.abs(y - predictions) > 0.1)
    sq = np.cumsum((y - predictions) ** 2) if task == "regression" else None
    return Trace(algorithm="x", task=task, n_samples=n, mistakes=int(wrong[-1]), support_size=7,
                 elapsed=0.0, squared_loss=float(sq[-1] / n) if sq is not None else float("nan"),
                 checkpoints=ck, ckpt_mistakes=wrong[ck - 1], ckpt_support=np.full(len(ck), 7),
                 ckpt_time=np.zeros(len(ck)),
                 ckpt_squared_loss=sq[ck - 1] / ck if sq is not None else np.empty(0))


def test_constant_binary_predictor_is_flagged_and_a_varying_one_with_the_same_rate_is_not():
    rng = np.random.default_rng(0)
    y = np.where(rng.random(3000) < 0.1, 1.0, -1.0)
    order = rng.permutation(3000)
    labels = y[order]
    const = np.full(3000, -1.0)
    const[:2] = 1.0  # the first steps, before the model leaves 0, predicted +1
    flag = check(_trace("binary", labels, const), y, order)
    assert flag["constant_prediction"] == -1 and not flag["support_never_changed"]
    assert "class -1" in flag["reason"]
    # a learner with exactly the same final mistake count, made of varied predictions: not flagged
    varied = np.where(rng.random(3000) < 0.5, 1.0, -1.0)
    varied_trace = _trace("binary", labels, varied)
    assert varied_trace.mistakes != int((labels != -1).sum())
    same_rate = labels.copy()
    k = int((labels != -1).sum())  # wrong on k steps spread over both classes, right elsewhere
    wrong_at = rng.choice(3000, size=k, replace=False)
    same_rate[wrong_at] = -labels[wrong_at]
    t = _trace("binary", labels, same_rate)
    assert t.mistakes == k  # the constant predictor's count, but not its segments
    assert check(t, y, order) is None
    assert check(varied_trace, y, order) is None


def test_constant_multiclass_and_regression_predictors_are_flagged():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 4, 2000)
    assert check(_trace("multiclass", y, np.full(2000, 2)), y, None)["constant_prediction"] == 2
    assert check(_trace("multiclass", y, rng.integers(0, 4, 2000)), y, None) is None
    yr = rng.random(1500)
    flag = check(_trace("regression", yr, np.full(1500, 0.37)), yr, None)
    assert flag is not None and flag["constant_prediction"] == pytest.approx(0.37, abs=1e-6)
    assert check(_trace("regression", yr, yr + rng.normal(0, 0.05, 1500)), yr, None) is None


def _write(tmp_path, text):
    p = tmp_path / "c.yaml"
    p.write_text(textwrap.dedent(text))
    return load_config(p)


NEVER_UPDATES = """
name: deg
task: regression
seed: 1
permutations: 2
budgets: 20
datasets:
  diabetes: {max_samples: 200}
algorithms:
  ogd: {eta: 0.1, epsilon: [1.0e+9, 0.1]}   # |y - f| never exceeds 1e9: no update, f = 0 throughout
"""


def test_runner_records_the_flag_and_the_report_marks_the_cell(tmp_path):
    from lsokl.report import build_report

    exp = _write(tmp_path, NEVER_UPDATES)
    run_experiment(exp, tmp_path / "r", jobs=1)
    recs = ResultStore(tmp_path / "r").records()
    assert len(recs) == 4 and all(r["status"] == "ok" and "degenerate" in r for r in recs)
    flagged = [r for r in recs if r["degenerate"]]
    assert {r["params"]["epsilon"] for r in flagged} == {1e9} and len(flagged) == 2
    assert all(r["degenerate"]["support_never_changed"] for r in flagged)
    assert all(r["degenerate"]["constant_prediction"] == 0.0 for r in flagged)
    rep = build_report(tmp_path / "r", plots=False)
    md = rep.markdown["regression"]
    marked = [line for line in md.splitlines() if "degenerate in 2/2 runs" in line]
    assert len(marked) == 1 and "epsilon=1e+09" in marked[0]
    # the reference row: the mean predictor's loss on the same two streams (one value per stream)
    const = [line for line in md.splitlines() if line.startswith("| Constant (reference)")]
    streams = {r["permutation"]: r["constant"]["value"] for r in recs}
    assert len(const) == 1 and len(streams) == 2
    assert f"{np.mean(list(streams.values())):.5f}" in const[0]


def test_search_never_selects_a_degenerate_setting(tmp_path):
    """epsilon = 1e9 (never updates, f = 0) has by far the lowest loss on diabetes' raw targets
    (OGD at eta = 2 overshoots them): the rule must still skip it and say so."""
    from lsokl.search import run_search

    exp = _write(tmp_path, """
        name: degsearch
        task: regression
        seed: 1
        permutations: 2
        budgets: 20
        defaults: {sigma: 8}
        datasets:
          diabetes: {max_samples: 200}
        algorithms:
          ogd: {eta: 0.1}
        search:
          algorithms:
            ogd: {epsilon: [1.0e+9, 0.1], eta: [2]}
          permutations: 2
          seed: 11
        """)
    table, choices, _ = run_search(exp, tmp_path / "r", jobs=1)
    (choice,) = choices
    by = {(c.values["epsilon"], c.values["eta"]): c for c in choice.candidates}
    assert by[(1e9, 2)].degenerate == 2 and by[(0.1, 2)].degenerate == 0
    best_overall = min(choice.candidates, key=lambda c: c.mean)
    assert best_overall.values["epsilon"] == 1e9  # the trap: the degenerate setting has the lowest mean
    assert choice.chosen["epsilon"] == 0.1
    assert {c.param_dict["epsilon"] for c in table.cells} == {0.1}
    text = (tmp_path / "r" / "eta_selection.md").read_text()
    assert "degenerate in 2 of 2 passes" in text and " const" in text


@pytest.mark.usefixtures("shared_data")
def test_bogd_majority_class_on_w8a_is_flagged(shared_data, monkeypatch):
    """The case of the issue: BOGD at eta 0.002 on w8a predicts the majority class; at 0.2 it does not."""
    monkeypatch.setenv("LSOKL_DATA_MIRROR", str(shared_data))
    from lsokl.config import parse_config

    exp = parse_config({"task": "binary", "seed": 5, "permutations": 1, "budgets": 100,
                        "defaults": {"sigma": 8}, "datasets": {"w8a": {}},
                        "algorithms": {"bogd": {"eta": [0.2, 0.002]}}})
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        run_experiment(exp, d, jobs=1)
        recs = {r["params"]["eta"]: r for r in ResultStore(d).records()}
    assert recs[0.002]["degenerate"]["constant_prediction"] == -1
    assert recs[0.2]["degenerate"] is None


def test_constant_reference_is_the_majority_class_or_the_mean_with_its_standard_error():
    from lsokl.compute.degenerate import constant_reference

    ref = constant_reference(np.array([1, 1, -1, 1]), np.array([3, 2, 1, 0]), 4, "binary")
    assert ref["prediction"] == 1 and ref["value"] == pytest.approx(0.25)
    assert ref["spread"] == pytest.approx(np.sqrt(0.25 * 0.75 / 4))
    # only the pass's prefix of the stream counts: the first 2 steps of order are both class 2
    assert constant_reference(np.array([0, 2, 2, 0, 0]), np.array([1, 2, 0, 3, 4]), 2, "multiclass")["value"] == 0
    reg = constant_reference(np.array([0.0, 1.0, 0.0, 1.0]), None, 4, "regression")
    assert reg == {"prediction": 0.5, "value": 0.25, "spread": 0.0}


def test_classify_flags_a_learner_no_better_than_the_constant_and_a_nearly_constant_one():
    from lsokl.compute.degenerate import classify

    rng = np.random.default_rng(3)
    n = 3000
    y = np.where(rng.random(n) < 0.1, 1.0, -1.0)
    order = rng.permutation(n)
    labels = y[order]
    k = int((labels != -1).sum())
    # varied predictions with exactly the constant's mistake count: not a constant (check), but no better
    same_rate = labels.copy()
    wrong_at = rng.choice(n, size=k, replace=False)
    same_rate[wrong_at] = -labels[wrong_at]
    t = _trace("binary", labels, same_rate)
    assert check(t, y, order) is None
    flag = classify(t, y, order)
    assert flag["kind"] == "no-better" and flag["constant_prediction"] == -1
    # half as many mistakes as the constant (5% vs 10%, 9 standard errors away): an ordinary pass
    better = labels.copy()
    wrong_at = rng.choice(n, size=k // 2, replace=False)
    better[wrong_at] = -labels[wrong_at]
    assert classify(_trace("binary", labels, better), y, order) is None
    # the majority class for the first 70% of the stream, then always right: nearly constant
    stalled = labels.copy()
    stalled[: int(0.7 * n)] = -1.0
    t = _trace("binary", labels, stalled)
    assert check(t, y, order) is None
    flag = classify(t, y, order)
    assert flag["kind"] == "nearly-constant" and flag["constant_prediction"] == -1
    # the same stall on only the first 30%: its mistakes are 30% of the constant's, not flagged
    early = labels.copy()
    early[: int(0.3 * n)] = -1.0
    assert classify(_trace("binary", labels, early), y, order) is None
    # a strict constant keeps its kind
    assert classify(_trace("binary", labels, np.full(n, -1.0)), y, order)["kind"] == "constant"


def test_classify_regression_loss_within_the_constants_spread():
    from lsokl.compute.degenerate import classify

    rng = np.random.default_rng(4)
    y = rng.random(2000)
    # the mean plus noise far smaller than the spread of y: the loss of the mean predictor, give or take
    near_mean = y.mean() + rng.normal(0, 0.003, 2000)
    flag = classify(_trace("regression", y, near_mean), y, None)
    assert flag is not None and flag["kind"] == "no-better"
    assert classify(_trace("regression", y, y + rng.normal(0, 0.05, 2000)), y, None) is None


def test_constant_rows_take_one_value_per_stream():
    import pandas as pd

    from lsokl.report.aggregate import CONSTANT_ROW, constant_rows

    frame = pd.DataFrame({
        "status": ["ok", "ok", "ok", "ok", "failed"], "task": ["binary"] * 5, "dataset": ["d"] * 5,
        "permutation": [0, 0, 1, 1, 2], "n_samples": [10] * 5,
        "constant": [0.10, 0.10, 0.30, 0.30, None]})  # two learners on streams 0 and 1
    (row,) = constant_rows(frame)
    assert row["row"] == CONSTANT_ROW and row["n_ok"] == 2
    assert row["mean"] == pytest.approx(20.0) and row["std"] == pytest.approx(np.std([10, 30], ddof=1))
    assert constant_rows(frame.assign(constant=None)) == []
