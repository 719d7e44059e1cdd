"""Shared fixtures. Checks against the authors' runs need ../shared/data and skip without it."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
# The CLI's output is checked as a program reading a pipe sees it: no terminal, no COLUMNS (which the
# console would honour). pytest-xdist's workers inherit a COLUMNS from the controlling pytest.
for _var in ("COLUMNS", "LINES"):
    os.environ.pop(_var, None)
SHARED_DATA = Path(os.environ.get("LSOKL_SHARED_DATA", REPO.parent / "shared" / "data"))


def shared_data_or_skip() -> Path:
    if not (SHARED_DATA / "MANIFEST.yaml").exists():
        pytest.skip(f"needs the shared data folder {SHARED_DATA} (absent here)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def shared_data() -> Path:
    return shared_data_or_skip()


@pytest.fixture(scope="session")
def reference_runs(shared_data):
    """The authors' Octave outputs as DataFrames: {'binary': df, 'multiclass': df, 'regression': df}."""
    import pandas as pd

    ref = shared_data / "reference-runs"
    return {task: pd.read_csv(ref / f"{task}.csv") for task in ("binary", "multiclass", "regression")}


def load_authors_mat(path: Path):
    """X, y and the 0-based 20 x n permutation matrix of one of the authors' .mat files."""
    import scipy.io

    m = scipy.io.loadmat(path, mat_dtype=True)
    data = np.asarray(m["data"], dtype=np.float64)
    key = "ID_all" if "ID_all" in m else "ID_list"
    return np.ascontiguousarray(data[:, 1:]), data[:, 0].copy(), np.asarray(m[key], dtype=np.int64) - 1


@pytest.fixture(autouse=True)
def _tmp_data_dir(tmp_path_factory, monkeypatch):
    """Tests never write into the user's real cache."""
    monkeypatch.setenv("LSOKL_DATA_DIR", str(tmp_path_factory.getbasetemp() / "lsokl-cache"))
    monkeypatch.setenv("LSOKL_CONFIG_DIR", str(tmp_path_factory.getbasetemp() / "lsokl-config"))
