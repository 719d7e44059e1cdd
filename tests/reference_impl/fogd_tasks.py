"""Multi-class and regression FOGD as plain per-sample loops, straight from ALGORITHMS.md 2.9 and
3 (NumPy only, no lsokl code). The caller passes U (d x D, already divided by sigma)."""
from __future__ import annotations

import numpy as np

from .projectron_tasks import pick


def _z(U, x):
    p = U.T @ np.asarray(x, dtype=np.float64).ravel()
    return np.concatenate([np.cos(p), np.sin(p)])


def _features(U, Xq):
    P = np.asarray(Xq, dtype=np.float64) @ U
    return np.hstack([np.cos(P), np.sin(P)])


def multiclass_fogd(X, y, order, *, U, eta, n_classes):
    """Returns dict(mistakes, updates, W (m x 2D), decision(Xq))."""
    W = np.zeros((n_classes, 2 * U.shape[1]))
    mistakes = updates = 0
    for i in order:
        z = _z(U, X[i])
        yt = int(y[i])
        yhat, s, loss = pick(W @ z, yt)
        mistakes += yhat != yt
        if loss > 0:
            updates += 1
            W[yt] += eta * z
            W[s] -= eta * z
    return dict(mistakes=mistakes, updates=updates, W=W, decision=lambda Xq: _features(U, Xq) @ W.T)


def regression_fogd(X, y, order, *, U, eta, epsilon):
    """Returns dict(events, sq_loss (sum), w, decision(Xq))."""
    w = np.zeros(2 * U.shape[1])
    events = 0
    sq_loss = 0.0
    for i in order:
        z = _z(U, X[i])
        delta = float(y[i]) - float(w @ z)
        sq_loss += delta * delta
        if abs(delta) > epsilon:
            events += 1
            w = w + eta * delta * z
    return dict(events=events, sq_loss=sq_loss, w=w, decision=lambda Xq: _features(U, Xq) @ w)
