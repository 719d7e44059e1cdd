"""Plain-Python multi-class BPA-S, straight from spec section 2.7 (slow; tests only)."""
from __future__ import annotations

from .tasks_common import argmax_first, kappa, multiclass_result, pair, scores


def run_multiclass(X, y, order, *, sigma, n_classes, budget, C, X_eval=None):
    svs, coefs, mistakes = [], [], 0
    for i in order:
        x, yt = X[i], y[i]
        v = scores(svs, coefs, x, sigma, n_classes)
        y_hat, s = argmax_first(v), argmax_first(v, skip=yt)
        mistakes += y_hat != yt
        loss = max(0.0, 1.0 - (v[yt] - v[s]))
        if not loss > 0:
            continue
        tau = min(C, loss / 2)
        if len(svs) < budget:
            svs.append(x)
            coefs.append(pair(n_classes, yt, s, tau))
            continue
        best, best_q, best_beta = None, float("inf"), None
        for r, (sv, a) in enumerate(zip(svs, coefs)):
            k = kappa(sv, x, sigma)
            beta = [a_c * k for a_c in a]
            beta[yt] += tau
            beta[s] -= tau
            dist = sum(p * p for p in a) + sum(b * b for b in beta) - 2 * k * sum(p * b for p, b in zip(a, beta))
            f_r = [v[c] - a[c] * k + beta[c] for c in range(n_classes)]
            s_r = argmax_first(f_r, skip=yt)
            q = 0.5 * dist + C * max(0.0, 1.0 - (f_r[yt] - f_r[s_r]))
            if q < best_q:
                best, best_q, best_beta = r, q, beta
        svs[best], coefs[best] = x, best_beta
    return multiclass_result(svs, coefs, mistakes, X if X_eval is None else X_eval, sigma, n_classes)
