"""FOGD as a plain per-sample loop, straight from ALGORITHMS.md 1.9 (NumPy only, no lsokl code).

The caller passes the frequency matrix U (d x D, already divided by sigma), so the oracle and the
learner share their random draw.
"""
from __future__ import annotations

import numpy as np


def fogd(X, y, order, *, U, eta):
    """Returns dict(mistakes, updates, w, decision(Xq))."""
    D = U.shape[1]
    w = np.zeros(2 * D)
    mistakes = updates = 0
    for i in order:
        x = np.asarray(X[i], dtype=np.float64).ravel()
        p = U.T @ x
        z = np.concatenate([np.cos(p), np.sin(p)])
        f = float(w @ z)
        yhat = 1.0 if f >= 0 else -1.0
        if yhat != y[i]:
            mistakes += 1
        if y[i] * f < 1:
            updates += 1
            w = w + eta * y[i] * z

    def decision(Xq):
        P = np.asarray(Xq, dtype=np.float64) @ U
        return np.hstack([np.cos(P), np.sin(P)]) @ w

    return dict(mistakes=mistakes, updates=updates, w=w, decision=decision)
