"""Comparing an lsokl Trace with one row of the authors' binary, multi-class or regression
reference runs (shared/data/reference-runs/{binary,multiclass,regression}.csv, README there)."""
from __future__ import annotations

import numpy as np

from conftest import load_authors_mat

# The binary runs' two settings: the paper's (sigma 8, B 100) and the scripts' (sigma 64, B 50).
BINARY_SETTINGS = {"paper": {"sigma": 8.0, "budget": 100}, "script": {"sigma": 64.0, "budget": 50}}

# The `mat-eta` setting: eta as stored in each regression .mat file's own options struct.
MAT_ETA = {"housing": 0.3, "mg": 0.4}
# The multi-class and regression scripts' width (the learners' Python default is sigma="scale").
AUTHORS_SIGMA = 8.0


def rows(reference_runs, task, dataset, algorithm, setting="script"):
    df = reference_runs[task]
    sel = df[(df.dataset == dataset) & (df.setting == setting) & (df.algorithm == algorithm)]
    return sel.sort_values("perm")


def load(shared_data, dataset):
    """X, y in lsokl's convention (multi-class labels 1..m -> 0..m-1) and 0-based permutations."""
    X, y, perms = load_authors_mat(shared_data / "lsokl-mat" / f"{dataset}.mat")
    if dataset in ("dna", "satimage"):
        y = (y - 1).astype(np.int64)
    return X, y, perms


def _split(text, dtype):
    return np.array(str(text).split(";"), dtype=dtype)


def assert_same_binary_run(trace, row, *, checkpoints=True, support_label="nSV"):
    """err_count, nSV, every checkpoint's mistake rate and nSV exactly; with ``checkpoints``,
    the checkpoint steps too. ``support_label`` names nSV in the messages (FOGD's is its
    update count)."""
    perm = int(row.perm)
    assert trace.mistakes == row.err_count, f"perm {perm}: err_count"
    assert trace.support_size == row.nSV, f"perm {perm}: {support_label}"
    if checkpoints:
        np.testing.assert_array_equal(trace.checkpoints, _split(row.ckpt_t, np.int64),
                                      err_msg=f"perm {perm}: checkpoints")
    np.testing.assert_array_equal(trace.ckpt_mistakes / trace.checkpoints,
                                  _split(row.ckpt_mistake_rate, np.float64),
                                  err_msg=f"perm {perm}: checkpoint mistake rates")
    np.testing.assert_array_equal(trace.ckpt_support, _split(row.ckpt_nSV, np.int64),
                                  err_msg=f"perm {perm}: checkpoint nSV")


def assert_same_multiclass_run(trace, row, *, support=True):
    """err_count, nSV and every checkpoint exactly. ``support=False`` for FOGD, whose update
    count lsokl reports where the authors record 0."""
    perm = int(row.perm)
    assert trace.mistakes == row.err_count, f"perm {perm}: err_count"
    np.testing.assert_array_equal(trace.checkpoints, _split(row.ckpt_t, np.int64),
                                  err_msg=f"perm {perm}: checkpoints")
    np.testing.assert_array_equal(trace.ckpt_mistakes / trace.checkpoints,
                                  _split(row.ckpt_mistake_rate, np.float64),
                                  err_msg=f"perm {perm}: checkpoint mistake rates")
    if support:
        assert trace.support_size == row.nSV, f"perm {perm}: nSV"
        np.testing.assert_array_equal(trace.ckpt_support, _split(row.ckpt_nSV, np.int64),
                                      err_msg=f"perm {perm}: checkpoint nSV")


def assert_same_regression_run(trace, row, *, rtol=1e-13, events=True, support=True):
    """loss_avg and every checkpoint loss to ``rtol``; with ``events``, the |y - f| > eps counts
    (the authors' FOGD and NOGD never count them, so they are skipped there); with ``support``,
    the returned size and every checkpoint's SV count."""
    perm = int(row.perm)
    np.testing.assert_allclose(trace.squared_loss, row.loss_avg, rtol=rtol, atol=0,
                               err_msg=f"perm {perm}: loss_avg")
    np.testing.assert_array_equal(trace.checkpoints, _split(row.ckpt_t, np.int64),
                                  err_msg=f"perm {perm}: checkpoints")
    np.testing.assert_allclose(trace.ckpt_squared_loss, _split(row.ckpt_loss_avg, np.float64),
                               rtol=rtol, atol=0, err_msg=f"perm {perm}: checkpoint losses")
    if events:
        assert trace.mistakes == row.err_events, f"perm {perm}: err_events"
        np.testing.assert_array_equal(trace.ckpt_mistakes / trace.checkpoints,
                                      _split(row.ckpt_err_event_rate, np.float64),
                                      err_msg=f"perm {perm}: checkpoint event rates")
    if support:
        assert trace.support_size == row.nSV_returned, f"perm {perm}: nSV"
        np.testing.assert_array_equal(trace.ckpt_support, _split(row.ckpt_nSV, np.int64),
                                      err_msg=f"perm {perm}: checkpoint nSV")
