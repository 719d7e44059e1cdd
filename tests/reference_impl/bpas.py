"""Plain-Python BPA-S straight from ALGORITHMS.md section 1.7 (slow; for tests only)."""
from __future__ import annotations

import math

import numpy as np


def kappa(a, b, sigma):
    return math.exp(-float(np.sum((np.asarray(a) - np.asarray(b)) ** 2)) / (2.0 * sigma * sigma))


def predict(svs, alpha, x, sigma):
    return sum(a * kappa(s, x, sigma) for s, a in zip(svs, alpha))


def run(X, y, order, *, sigma, budget, C, X_eval=None):
    svs, alpha = [], []  # list order; replacement keeps the position
    mistakes, replaced = 0, []
    for i in order:
        x, yt = X[i], y[i]
        k = [kappa(s, x, sigma) for s in svs]
        f = sum(a * kr for a, kr in zip(alpha, k))
        loss = max(0.0, 1.0 - yt * f)
        if (1.0 if f >= 0 else -1.0) != yt:
            mistakes += 1
        if loss <= 0:
            continue
        tau = min(C, loss / 1.0)  # kappa(x, x) = 1
        if len(svs) < budget:
            svs.append(x)
            alpha.append(yt * tau)
            continue
        best, best_q, best_beta = None, math.inf, None
        for r in range(budget):
            beta = alpha[r] * k[r] + tau * yt
            dist = alpha[r] ** 2 + beta**2 - 2 * alpha[r] * beta * k[r]
            f_r = f - alpha[r] * k[r] + beta
            q = 0.5 * dist + C * max(0.0, 1.0 - yt * f_r)
            if q < best_q:  # first minimum wins
                best, best_q, best_beta = r, q, beta
        svs[best], alpha[best] = x, best_beta
        replaced.append(best)
    X_eval = X if X_eval is None else X_eval
    return {"mistakes": mistakes, "support_size": len(svs), "replaced": replaced,
            "scores": np.array([predict(svs, alpha, x, sigma) for x in X_eval])}
