"""BSGD against BudgetedSVM's own output (../shared/data/reference-runs/budgetedsvm): a run with no budget
maintenance (pendigits, B = 500, one epoch in file order: 420 SVs, 0 maintenance steps) is plain multi-class
Pegasos, so a faithful bsgd-m must give the same support set and the same test predictions (README section 7)."""
from __future__ import annotations

import lzma

import numpy as np
import pytest

from lsokl.learners import create

RUN = "pendigits_bsgd_m1_B500_L0.0001_g0.5_e1_file"
LABELS = [8, 2, 1, 4, 6, 0, 5, 9, 7, 3]  # the run's class order (first appearance in the file)


def _svmlight(path):
    from sklearn.datasets import load_svmlight_file

    with lzma.open(path, "rb") as f:
        X, y = load_svmlight_file(f, n_features=16)
    return X.toarray().astype(np.float32).astype(np.float64), y.astype(int)  # BudgetedSVM reads float


def test_bsgd_m_replays_budgetedsvm_without_maintenance(shared_data):
    ref = shared_data / "reference-runs" / "budgetedsvm"
    if not (ref / "runs" / RUN).exists():
        pytest.skip("reference run absent")
    X, y = _svmlight(ref / "inputs" / "pendigits.zs.txt.xz")
    Xt, yt = _svmlight(ref / "inputs" / "pendigits.zs.t.txt.xz")
    code = {lab: k for k, lab in enumerate(LABELS)}
    learner = create("bsgd-m", "multiclass", sigma=1 / np.sqrt(0.5), lam=float(np.float32(1e-4)),
                     budget=500)
    learner.run(X, np.array([code[v] for v in y]))
    assert learner.support_size_ == 420 and learner.maintenance_events_ == 0
    with lzma.open(ref / "runs" / RUN / "pred_test.txt.xz", "rt") as f:
        theirs = np.array([int(line.split()[0]) for line in f])
    ours = np.array(LABELS)[learner.predict(Xt)]
    assert np.mean(ours == theirs) >= 0.999  # ties closer than 1e-6 may break differently
    assert np.mean(ours == yt) == pytest.approx(0.9837, abs=6e-4)  # the run's 98.37%
