"""Plain-Python RBP straight from ALGORITHMS.md section 1.3 (slow; for tests only).

``draws`` are 0-based removal positions in the oldest-first SV list, consumed one per removal.
"""
from __future__ import annotations

import math

import numpy as np


def kappa(a, b, sigma):
    return math.exp(-float(np.sum((np.asarray(a) - np.asarray(b)) ** 2)) / (2.0 * sigma * sigma))


def predict(svs, alpha, x, sigma):
    return sum(a * kappa(s, x, sigma) for s, a in zip(svs, alpha))


def run(X, y, order, *, sigma, budget, draws, X_eval=None):
    svs, alpha = [], []  # oldest first
    draws = iter(draws)
    mistakes = 0
    for i in order:
        x, yt = X[i], y[i]
        f = predict(svs, alpha, x, sigma)
        if (1.0 if f >= 0 else -1.0) != yt:
            mistakes += 1
            if len(svs) == budget:
                r = next(draws)
                del svs[r], alpha[r]
            svs.append(x)
            alpha.append(yt)
    X_eval = X if X_eval is None else X_eval
    return {"mistakes": mistakes, "support_size": len(svs),
            "scores": np.array([predict(svs, alpha, x, sigma) for x in X_eval])}
