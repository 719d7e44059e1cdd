"""Memory estimates that hold: the peak memory a fit really adds (measured) stays within the estimate
the runner screens cells with (lsokl.runner.resources.cell_memory), for a sample of learners and
approximations on wide sparse and dense inputs.

Each fit runs in a forked child (the data is made, and the numba loops compiled, in the parent): the
child resets its peak resident set (``/proc/self/clear_refs``, Linux) and reports how far the peak
rose above where it started. ``SLACK`` covers what no estimate names (the interpreter's and BLAS's
scratch, small index arrays); the cases are sized so the estimated arrays are well above it.
"""
from __future__ import annotations

import multiprocessing as mp
import os

import numpy as np
import pytest
import scipy.sparse as sp

from lsokl.approx import create as create_approx
from lsokl.learners import registry
from lsokl.runner.resources import cell_memory

SLACK = 32 * 2**20

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs") or not hasattr(os, "fork"),
                                reason="peak RSS reset needs Linux /proc and fork")


def _status(key: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(key)


def peak_added(fit) -> int:
    """Bytes the peak resident set of a forked child rose by while it ran ``fit()``."""
    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)

    def child():
        try:
            with open("/proc/self/clear_refs", "w") as fh:
                fh.write("5")  # VmHWM := VmRSS
            base = _status("VmRSS")
            fit()
            send.send(_status("VmHWM") - base)
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            send.send(repr(exc))

    proc = ctx.Process(target=child)
    proc.start()
    out = recv.recv()
    proc.join()
    if isinstance(out, str):
        raise AssertionError(f"the fit failed in the child: {out}")
    return out


_RNG = np.random.default_rng(0)


def _sparse(n: int, d: int, per_row: int) -> sp.csr_matrix:
    rows = np.repeat(np.arange(n), per_row)
    return sp.csr_matrix((_RNG.random(n * per_row), (rows, _RNG.integers(0, d, n * per_row))), shape=(n, d))


WIDE = _sparse(1500, 100_000, 20)  # wide sparse rows (a LIBSVM file declaring 10^5 features)
Y_WIDE = np.where(_RNG.random(1500) > 0.5, 1, -1)
DENSE = _RNG.normal(size=(3000, 2500))
Y_DENSE = np.where(DENSE[:, 0] > 0, 1, -1)
TALL = _RNG.normal(size=(20000, 100))

LEARNERS = [  # (name, parameters, X, y)
    ("fogd", {"sigma": 3.0, "n_fourier": 100}, WIDE, Y_WIDE),  # U: d x D
    ("nogd", {"sigma": 3.0, "budget": 100}, WIDE, Y_WIDE),  # B x d support, copied at the switch
    ("bpas", {"sigma": 3.0, "budget": 100}, WIDE, Y_WIDE),
    ("dsg", {"sigma": 3.0, "max_iter": 1}, DENSE, Y_DENSE),  # one pass: the runner's cells (fit_curve)
]
APPROXIMATIONS = [  # (name, parameters, X)
    ("rks", {"rank": 500, "gamma": 0.01}, DENSE),  # U: d x k
    ("nystrom", {"rank": 300, "gamma": 0.01}, TALL),
]


def _check(estimate: dict, peak: int):
    total = sum(estimate.values())
    assert peak <= total + SLACK, (f"peak {peak / 2**20:.0f} MiB > estimate {total / 2**20:.0f} MiB + "
                                   f"{SLACK / 2**20:.0f} MiB: {estimate}")


@pytest.mark.parametrize("name,params,X,y", LEARNERS, ids=[c[0] for c in LEARNERS])
def test_learner_peak_within_its_estimate(name, params, X, y):
    registry.create(name, "binary", **params).fit(X, y)  # compile in the parent (every specialisation the fit uses)
    estimate = cell_memory(registry.create(name, "binary", **params), X.shape[0], X.shape[1])
    peak = peak_added(lambda: registry.create(name, "binary", **params).fit(X, y))
    _check(estimate, peak)


def test_dsg_fit_epochs_peak_within_its_stream_estimate(monkeypatch):
    """DSG's fit plays max_iter epochs: n x max_iter rows streamed choose the form (AUTO_ROWS lowered
    here: 3000 x 2 rows > 5000, the bounded form, which keeps its blocks' frequencies); the estimate
    with ``stream_rows`` counts them, the one-pass estimate does not, and fit's peak is within it."""
    from lsokl.learners.stochastic import dsg

    monkeypatch.setattr(dsg, "AUTO_ROWS", 5000)
    monkeypatch.setattr(dsg, "AUTO_FEATURES", 640)  # 10 blocks of 64
    params = {"sigma": 3.0, "max_iter": 2, "tol": None}
    registry.create("dsg", "binary", **params).fit(DENSE[:50], Y_DENSE[:50])
    learner = registry.create("dsg", "binary", **params)
    n, d = DENSE.shape
    estimate = learner.memory_estimate(n, d, 1, stream_rows=n * 2)
    assert estimate["kept frequencies W, c (10 blocks x 64 x (d + 1))"] == 4.0 * 10 * 64 * (d + 1)
    assert not any(k.startswith("kept frequencies") for k in learner.memory_estimate(n, d, 1))
    peak = peak_added(lambda: registry.create("dsg", "binary", **params).fit(DENSE, Y_DENSE))  # in a child
    _check(estimate, peak)
    assert registry.create("dsg", "binary", **params).fit(DENSE[:2600], Y_DENSE[:2600]).max_blocks_ == 10


@pytest.mark.parametrize("name,params,X", APPROXIMATIONS, ids=[c[0] for c in APPROXIMATIONS])
def test_approximation_peak_within_its_estimate(name, params, X):
    create_approx(name, **params).fit(X[:600])
    estimate = cell_memory(create_approx(name, **params), X.shape[0], X.shape[1])
    peak = peak_added(lambda: create_approx(name, **params).fit(X))
    _check(estimate, peak)
