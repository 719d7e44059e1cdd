"""The computed claims of the MEKA figures (lsokl/papers/meka2017/figures.py) on tiny hand-made
tables, each checked both ways, and the BKA error on a hand-computable matrix."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lsokl.papers.meka2017 import figures as F


def frame(rows, cols):
    return pd.DataFrame([dict(zip(cols, r)) for r in rows])


def test_bka_error_by_hand():
    G = np.array([[1.0, 0.5], [0.5, 1.0]])
    assert F.bka_error(G, np.array([0, 1])) == pytest.approx(np.sqrt(0.5 / 2.5))
    assert F.bka_error(G, np.array([0, 0])) == 0.0


COLS = ["dataset", "gamma", "algorithm", "learner", "memory", "time", "error"]


def test_lowest_claim_against_memory_and_time():
    rows = [("d", 2, "meka", "meka", 100, 5.0, 0.10), ("d", 2, "nystrom", "nystrom", 90, 1.0, 0.20),
            ("d", 2, "knys", "knys", 200, 0.5, 0.01)]
    assert F.lowest_claim(frame(rows, COLS))[0] is True  # KNys is lower only with more memory
    assert F.lowest_claim(frame(rows, COLS), x="time")[0] is False  # ... but in less time
    rows[1] = ("d", 2, "nystrom", "nystrom", 90, 1.0, 0.05)
    held, detail = F.lowest_claim(frame(rows, COLS))
    assert held is False and "nystrom" in detail
    gamma10 = F.lowest_claim(frame(rows, COLS), where=lambda d: d["gamma"] == 10)
    assert gamma10[0] is None


def test_eps_claim():
    cols = ["dataset", "eps", "error", "time"]
    assert F.eps_claim(frame([("d", 0.0, 0.1, 2.0), ("d", 0.1, 0.15, 1.5), ("d", 0.4, 0.2, 1.0)], cols))[0] is True
    assert F.eps_claim(frame([("d", 0.0, 0.1, 2.0), ("d", 0.4, 0.2, 2.5)], cols))[0] is False
    assert F.eps_claim(frame([("d", 0.0, 0.1, 2.0), ("d", 0.4, 0.1, 1.0)], cols))[0] is False


def test_alloc_and_basis_claims():
    cols = ["dataset", "rank", "algorithm", "error"]
    ok = frame([("d", 16, "equal", 0.10), ("d", 16, "prop", 0.11), ("d", 16, "eig", 0.12)], cols)
    assert F.alloc_claim(ok)[0] is True
    assert F.alloc_claim(ok.assign(error=[0.10, 0.11, 0.20]))[0] is False
    basis = frame([("d", 16, "meka-nys", 0.105), ("d", 16, "meka-knys", 0.10), ("d", 16, "meka-rnys", 0.2)], cols)
    assert F.basis_claim(basis)[0] is True
    assert F.basis_claim(basis.assign(error=[0.12, 0.10, 0.2]))[0] is False


def test_nystrom_vs_features_claim():
    cols = ["dataset", "rank", "learner", "error"]
    rows = [("d", 16, "meka", 0.1), ("d", 16, "nystrom", 0.2), ("d", 16, "rks", 0.5), ("d", 16, "fastfood", 0.4)]
    assert F.nystrom_vs_features_claim(frame(rows, cols))[0] is True
    rows[3] = ("d", 16, "fastfood", 0.15)
    assert F.nystrom_vs_features_claim(frame(rows, cols))[0] is False


def test_gamma_claim():
    cols = ["dataset", "gamma", "learner", "error"]
    rows = [("d", 1, "meka", 0.1), ("d", 1, "nystrom", 0.05), ("d", 4, "meka", 0.1), ("d", 4, "nystrom", 0.12),
            ("d", 16, "meka", 0.2), ("d", 16, "nystrom", 0.5)]
    assert F.gamma_claim(frame(rows, cols))[0] is True  # gamma 1 (below 4) is not judged
    rows[5] = ("d", 16, "nystrom", 0.22)  # still lowest, but the gap shrinks
    assert F.gamma_claim(frame(rows, cols))[0] is False


def test_clusters_claim():
    cols = ["dataset", "learner", "clusters", "rank", "error", "TW", "TL"]
    rows = [("d", "meka", 5, 100, 0.10, 2.0, 1.0), ("d", "meka", 25, 100, 0.08, 2.0, 3.0),
            ("d", "nystrom", None, 112, 0.2, None, None), ("d", "nystrom", None, 403, 0.1, None, None),
            ("d", "knys", None, 112, 0.15, None, None), ("d", "knys", None, 403, 0.09, None, None)]
    assert F.clusters_claim(frame(rows, cols))[0] is True
    rows[1] = ("d", "meka", 25, 100, 0.08, 2.0, 0.5)  # TL does not grow with c
    assert F.clusters_claim(frame(rows, cols))[0] is False


def test_psd_partition_and_angles_claims():
    cols = ["dataset", "rank", "algorithm", "error", "time"]
    rows = [("d", 32, "meka", 0.1, 1.0), ("d", 32, "meka-psd", 0.11, 1.2), ("d", 32, "nystrom", 0.2, 0.5)]
    assert F.psd_claim(frame(rows, cols))[0] is True
    rows[1] = ("d", 32, "meka-psd", 0.11, 0.9)
    assert F.psd_claim(frame(rows, cols))[0] is False
    cols = ["dataset", "gamma", "algorithm", "error"]
    part = frame([("d", 1, "kmeans", 0.3), ("d", 1, "spectral", 0.28), ("d", 1, "random", 0.8)], cols)
    assert F.partition_claim(part)[0] is True
    assert F.partition_claim(part.assign(error=[0.5, 0.28, 0.8]))[0] is False
    assert F.angles_claim(pd.DataFrame({"cosine": [0.95, 0.99, 0.5]}))[0] is True
    assert F.angles_claim(pd.DataFrame({"cosine": [0.95, 0.3, 0.5]}))[0] is False
