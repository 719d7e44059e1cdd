"""Plain-Python self-tuned Forgetron straight from ALGORITHMS.md section 1.4 (slow; tests only).

``variant="faithful"`` keeps the authors' A < 0 root; ``"corrected"`` takes the largest phi in
(0, 1] satisfying the budget constraint, floored at ``phi_floor`` when none exists.
"""
from __future__ import annotations

import math

import numpy as np


def kappa(a, b, sigma):
    return math.exp(-float(np.sum((np.asarray(a) - np.asarray(b)) ** 2)) / (2.0 * sigma * sigma))


def predict(svs, alpha, x, sigma):
    return sum(a * kappa(s, x, sigma) for s, a in zip(svs, alpha))


def shrink(A, B, C, variant, phi_floor):
    if variant == "faithful":
        if A == 0:
            ratio = -C / B if B != 0 else (math.inf if C < 0 else -math.inf if C > 0 else math.nan)
            return 1.0 if math.isnan(ratio) else max(0.0, min(1.0, ratio))
        if A + B + C <= 0:
            return 1.0
        root = math.sqrt(max(B * B - 4 * A * C, 0.0))
        return (-B + root) / (2 * A) if A > 0 else (-B - root) / (2 * A)
    # corrected: largest phi in (0, 1] with A phi^2 + B phi + C <= 0
    if A + B + C <= 0:
        return 1.0
    if A == 0:
        phi = -C / B if B > 0 else 0.0
    else:
        disc = B * B - 4 * A * C
        phi = (-B + math.sqrt(disc)) / (2 * A) if disc >= 0 else 0.0
    return min(max(phi, phi_floor), 1.0)


def run(X, y, order, *, sigma, budget, variant="faithful", phi_floor=1e-12, X_eval=None):
    svs, alpha, labels = [], [], []  # oldest first
    Q, mistakes, phis = 0.0, 0, []
    for i in order:
        x, yt = X[i], y[i]
        f = predict(svs, alpha, x, sigma)
        if (1.0 if f >= 0 else -1.0) != yt:
            mistakes += 1
        if yt * f > 0:
            continue
        svs2, alpha2, labels2 = svs + [x], alpha + [yt], labels + [yt]
        if len(svs) < budget:
            svs, alpha, labels = svs2, alpha2, labels2
            continue
        f_oldest = predict(svs2, alpha2, svs2[0], sigma)  # f' includes the new point
        mu = labels2[0] * f_oldest
        delta = alpha2[0] / labels2[0]
        A, B, C = delta**2 - 2 * delta * mu, 2 * delta, Q - 15 / 32 * mistakes
        phi = shrink(A, B, C, variant, phi_floor)
        phis.append(phi)
        Q += (delta * phi) ** 2 + 2 * delta * phi * (1 - phi * mu)
        svs, alpha, labels = svs2[1:], [phi * a for a in alpha2[1:]], labels2[1:]
    X_eval = X if X_eval is None else X_eval
    return {"mistakes": mistakes, "support_size": len(svs), "Q": Q, "phis": phis,
            "scores": np.array([predict(svs, alpha, x, sigma) for x in X_eval])}
