"""Plain-Python BOGD (binary, uniform removal) straight from ALGORITHMS.md section 1.8.

``draws`` are 0-based removal positions in the oldest-first SV list, one per removal.
"""
from __future__ import annotations

import math

import numpy as np


def kappa(a, b, sigma):
    return math.exp(-float(np.sum((np.asarray(a) - np.asarray(b)) ** 2)) / (2.0 * sigma * sigma))


def predict(svs, alpha, x, sigma):
    return sum(a * kappa(s, x, sigma) for s, a in zip(svs, alpha))


def run(X, y, order, *, sigma, budget, eta, lam, gamma, draws, X_eval=None):
    svs, alpha = [], []  # oldest first
    draws = iter(draws)
    mistakes = 0
    for i in order:
        x, yt = X[i], y[i]
        f = predict(svs, alpha, x, sigma)
        if (1.0 if f >= 0 else -1.0) != yt:
            mistakes += 1
        if yt * f > 1:  # no margin error: decay only
            alpha = [(1 - eta * lam) * a for a in alpha]
        elif len(svs) < budget:
            alpha = [(1 - eta * lam) * a for a in alpha] + [eta * yt]
            svs.append(x)
        else:
            r = next(draws)
            alpha = [a * budget * (1 - lam * eta) / (budget - 1) for a in alpha]
            del svs[r], alpha[r]
            svs.append(x)
            alpha.append(eta * yt)
            scale = min(eta * gamma / max(abs(a) for a in alpha), 1.0)
            alpha = [a * scale for a in alpha]
    X_eval = X if X_eval is None else X_eval
    return {"mistakes": mistakes, "support_size": len(svs), "alpha": alpha,
            "scores": np.array([predict(svs, alpha, x, sigma) for x in X_eval])}
