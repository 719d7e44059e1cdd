"""Plain-Python kernel OGD straight from ALGORITHMS.md section 1.2 (slow; for tests only)."""
from __future__ import annotations

import math

import numpy as np


def kappa(a, b, sigma):
    return math.exp(-float(np.sum((np.asarray(a) - np.asarray(b)) ** 2)) / (2.0 * sigma * sigma))


def predict(svs, alpha, x, sigma):
    return sum(a * kappa(s, x, sigma) for s, a in zip(svs, alpha))


def run(X, y, order, *, sigma, eta, X_eval=None):
    svs, alpha = [], []
    mistakes = 0
    for i in order:
        x, yt = X[i], y[i]
        f = predict(svs, alpha, x, sigma)
        if (1.0 if f >= 0 else -1.0) != yt:  # sign(0) = +1
            mistakes += 1
        if yt * f < 1.0:  # strict
            svs.append(x)
            alpha.append(eta * yt)
    X_eval = X if X_eval is None else X_eval
    return {"mistakes": mistakes, "support_size": len(svs),
            "scores": np.array([predict(svs, alpha, x, sigma) for x in X_eval])}
