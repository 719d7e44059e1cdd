"""Was a pass degenerate? A learner that predicted one constant value all along, or never updated.

A too-small (or too-large) step size can turn a learner into a constant predictor: BOGD at
eta = 0.002 on w8a and a9a predicts the majority class at every step, so its mistake rate is the
minority share with std 0.00. Such a number is not a result about the learner, and a step-size
search must never pick it. The flag is computed from what the pass recorded, after the timing:

* **constant prediction** (binary, multi-class): in every checkpoint segment (~15 per pass) the
  mistakes differ from those of always predicting one class c on the same steps (the labels != c)
  by at most 0.1% of the segment's steps (at least 3), and by at most 0.1% of the pass in total.
  So the learner predicted c at all but a handful of steps (BOGD above: at all steps but the first
  few, where its model was still 0). A learner whose predictions really varied could match one
  constant predictor in all ~15 segments only by an exact cancellation of its extra hits and
  misses in each of them, which is why every segment is checked, not only the final rate (on w8a
  a good learner's rate is close to the minority share). The compiled loops do not store the
  per-step predictions (that would cost memory and time on every pass), so this checks their
  consequence, the mistake counts, not the predictions themselves.
* **constant prediction** (regression): the mean squared loss at every checkpoint equals, to
  1e-9 relative, that of one constant prediction c (a quadratic in c fitted on the last
  checkpoint, verified on all the others).
* **support never changed**: the model never made an update (support size 0 at every checkpoint
  and at the end; for FOGD the count of updates), so it predicted 0 throughout.

:func:`check` is that strict test (a constant predictor, exactly). :func:`classify`, which the runner
records and the step-size search reads, adds the two looser ways a pass says nothing about its learner:

* **nearly constant** (classification): the segments that match one constant predictor as above
  hold most (more than half) of the pass's steps, e.g. a learner that stalls on the majority class
  for the first 60% of the stream and only then moves;
  On short passes the per-segment slack of ``MIN_SLACK`` steps is coarse: with segments of ~10 steps
  (a 150-row pass) a learner making 1 mistake where the majority class makes 3-4 matches it within
  the slack, so a pass that learned (7-10% mistakes against a 37% minority share) can be flagged
  nearly constant. Every committed reproduction's passes have segments of 60 steps or more.
* **no better than the constant**: its mistake rate (squared loss) lies within the spread of the
  constant predictor's on the same stream, ``|value - constant| <= spread``. The constant is the best
  one in hindsight (the stream's majority class; the mean target), and the spread is the standard
  error of its rate over the pass: sqrt(p (1 - p) / n) for a mistake rate p, sd((y - mean)^2) / sqrt(n)
  for the squared loss. On Table 5's w8a (49,749 rows, majority share 97.03%) that is 2.97% +- 0.08
  points; on the 25,010-row poker 49.9% +- 0.32, so a rate 0.3 points from always predicting the
  majority class is flagged.

:func:`constant_reference` is that constant predictor's rate and spread, recorded with every online
pass (the tables' ``Constant`` reference row).
"""
from __future__ import annotations

import math

import numpy as np

RTOL_LOSS = 1e-9
SLACK = 1e-3  # share of a segment's (and of the pass's) steps that may deviate from the constant
MIN_SLACK = 3  # steps: the first few predictions of a model that is still 0 may differ


def check(trace, y, order) -> dict | None:
    """None for an ordinary pass, else ``{"reason", "constant_prediction", "support_never_changed"}``."""
    if trace is None or not trace.n_samples:
        return None
    order = np.asarray(order if order is not None else np.arange(trace.n_samples), dtype=np.int64)
    labels = np.asarray(y)[order[: trace.n_samples]]
    steps = np.append(np.asarray(trace.checkpoints, np.int64), trace.n_samples)
    support = np.append(np.asarray(trace.ckpt_support, np.int64), trace.support_size)
    never_updated = bool(np.all(support == 0))
    if trace.task == "regression":
        losses = np.append(np.asarray(trace.ckpt_squared_loss, np.float64), trace.squared_loss)
        constant = _constant_regression(labels.astype(np.float64), steps, losses)
    else:
        mistakes = np.append(np.asarray(trace.ckpt_mistakes, np.int64), trace.mistakes)
        constant = _constant_class(labels, steps, mistakes)
    if constant is None and not never_updated:
        return None
    if never_updated:
        reason = "the model never updated (support stayed empty): it predicted 0 at every step"
    elif trace.task == "regression":
        reason = f"constant prediction {constant:.6g} over the pass (squared loss of a constant predictor)"
    else:
        reason = (f"constant prediction of class {_label(constant)} over the pass (mistakes equal "
                  "those of always predicting it in every checkpoint segment, to 0.1% of the steps)")
    return {"reason": reason, "constant_prediction": constant, "support_never_changed": never_updated}


def constant_reference(y, order, n_samples: int, task: str) -> dict:
    """The best constant predictor of the pass's stream (the first ``n_samples`` of ``order``): its
    ``prediction`` (majority class, or mean target), its ``value`` (mistake rate as a fraction, or
    mean squared loss: the record's ``value`` unit) and ``spread`` (the standard error of that value
    over the pass)."""
    order = np.asarray(order if order is not None else np.arange(n_samples), dtype=np.int64)
    labels = np.asarray(y)[order[:n_samples]]
    n = max(int(len(labels)), 1)
    if task == "regression":
        labels = labels.astype(np.float64)
        c = float(np.mean(labels))
        loss = (labels - c) ** 2
        value = float(np.mean(loss))
        spread = float(np.std(loss, ddof=1) / math.sqrt(n)) if n > 1 else 0.0
        return {"prediction": c, "value": value, "spread": spread}
    classes, counts = np.unique(labels, return_counts=True)
    top = classes[int(np.argmax(counts))]
    p = 1.0 - float(np.max(counts)) / n
    c = int(top) if float(top).is_integer() else float(top)
    return {"prediction": c, "value": p, "spread": math.sqrt(p * (1.0 - p) / n)}


def classify(trace, y, order) -> dict | None:
    """:func:`check`, then the looser tests of the module docstring (nearly constant, no better than the
    constant predictor). None for an ordinary pass, else ``{"reason", "constant_prediction",
    "support_never_changed", "kind"}`` with kind ``constant``, ``nearly-constant`` or ``no-better``."""
    flag = check(trace, y, order)
    if flag is not None:
        return {**flag, "kind": "constant"}
    if trace is None or not trace.n_samples:
        return None
    order = np.asarray(order if order is not None else np.arange(trace.n_samples), dtype=np.int64)
    # no better than the constant first: when the rates agree, the segment counts agree by chance too, and
    # "no better" is then the accurate reason; "nearly constant" catches a stall on most of the stream
    # whose final rate still differs (the learner moved at the end)
    ref = constant_reference(y, order, trace.n_samples, trace.task)
    value = (trace.squared_loss if trace.task == "regression" else trace.mistakes / trace.n_samples)
    if value is not None and math.isfinite(value) and abs(value - ref["value"]) <= ref["spread"]:
        if trace.task == "regression":
            what = f"squared loss {value:.6g} within {ref['spread']:.2g} of the constant {ref['prediction']:.4g}'s {ref['value']:.6g}"
        else:
            what = (f"mistake rate {100 * value:.2f}% within {100 * ref['spread']:.2f} points of always predicting "
                    f"class {_label(ref['prediction'])} ({100 * ref['value']:.2f}%)")
        return {"reason": f"no better than a constant predictor: {what} (the constant's standard error over the pass)",
                "constant_prediction": ref["prediction"], "support_never_changed": False, "kind": "no-better"}
    if trace.task != "regression":
        labels = np.asarray(y)[order[: trace.n_samples]]
        steps = np.append(np.asarray(trace.checkpoints, np.int64), trace.n_samples)
        mistakes = np.append(np.asarray(trace.ckpt_mistakes, np.int64), trace.mistakes)
        c, share = _mostly_constant_class(labels, steps, mistakes)
        if c is not None:
            return {"reason": f"nearly constant: predicted class {_label(c)} on {100 * share:.0f}% of the pass "
                              "(segments whose mistakes equal those of always predicting it)",
                    "constant_prediction": c, "support_never_changed": False, "kind": "nearly-constant"}
    return None


def _mostly_constant_class(labels: np.ndarray, steps: np.ndarray, mistakes: np.ndarray):
    """The class c whose constant predictor's mistakes match the learner's (to ``SLACK``) in segments
    holding more than half of the pass's steps, and that share; (None, 0) if there is none."""
    steps, keep = np.unique(steps, return_index=True)
    mistakes = mistakes[keep]
    seg_len = np.diff(np.concatenate([[0], steps]))
    seg_mistakes = np.diff(np.concatenate([[0], mistakes]))
    slack = np.maximum(MIN_SLACK, np.floor(SLACK * seg_len))
    total = float(steps[-1])
    for c in np.unique(labels):
        wrong = np.cumsum(labels != c)[steps - 1]
        seg_wrong = np.diff(np.concatenate([[0], wrong]))
        share = float(seg_len[np.abs(seg_mistakes - seg_wrong) <= slack].sum()) / total
        if share > 0.5:
            return (int(c) if float(c).is_integer() else float(c)), share
    return None, 0.0


def _label(c):
    return f"{c:+d}" if isinstance(c, int) and c in (-1, 1) else str(c)


def _constant_class(labels: np.ndarray, steps: np.ndarray, mistakes: np.ndarray):
    """The class c whose constant predictor makes the pass's mistakes, segment by segment, up to
    ``SLACK`` of the steps; None if there is none."""
    steps, keep = np.unique(steps, return_index=True)
    mistakes = mistakes[keep]
    seg_len = np.diff(np.concatenate([[0], steps]))
    seg_mistakes = np.diff(np.concatenate([[0], mistakes]))
    slack = np.maximum(MIN_SLACK, np.floor(SLACK * seg_len))
    for c in np.unique(labels):
        wrong = np.cumsum(labels != c)[steps - 1]
        seg_wrong = np.diff(np.concatenate([[0], wrong]))
        if (np.all(np.abs(seg_mistakes - seg_wrong) <= slack)
                and abs(int(mistakes[-1]) - int(wrong[-1])) <= max(MIN_SLACK, SLACK * steps[-1])):
            return int(c) if float(c).is_integer() else float(c)
    return None


def _constant_regression(y: np.ndarray, steps: np.ndarray, losses: np.ndarray):
    """The c with mean((y_1..t - c)^2) == loss_t at every step, or None."""
    if not np.all(np.isfinite(losses)):
        return None
    s1, s2 = np.cumsum(y)[steps - 1], np.cumsum(y * y)[steps - 1]
    t = steps.astype(np.float64)
    # last step: t c^2 - 2 s1 c + (s2 - t L) = 0
    a, b, cc = t[-1], -2.0 * s1[-1], s2[-1] - t[-1] * losses[-1]
    disc = b * b - 4 * a * cc
    scale = max(abs(b * b), abs(4 * a * cc), 1e-300)
    if disc < -1e-9 * scale:
        return None
    root = math.sqrt(max(disc, 0.0))
    for c in ((-b - root) / (2 * a), (-b + root) / (2 * a)):
        predicted = (s2 - 2 * c * s1 + t * c * c) / t
        if np.allclose(predicted, losses, rtol=RTOL_LOSS, atol=1e-12 * max(1.0, float(np.max(np.abs(losses))))):
            return float(c)
    return None
