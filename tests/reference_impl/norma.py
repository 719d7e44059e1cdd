"""Plain-Python NORMA with nu-adaptive epsilon, straight from spec section 3 (slow; tests only)."""
from __future__ import annotations

from .tasks_common import matlab_sign, predict, regression_result


def run(X, y, order, *, sigma, eta, lam, nu, epsilon, X_eval=None):
    svs, coefs, events, loss, eps = [], [], 0, 0.0, epsilon
    epsilons = []
    for i in order:
        delta = y[i] - predict(svs, coefs, X[i], sigma)
        loss += delta * delta
        coefs = [(1 - lam * eta) * a for a in coefs]
        if abs(delta) > eps:
            events += 1
            svs.append(X[i])
            coefs.append(eta * matlab_sign(delta))
            eps += (1 - nu) * eta
        else:
            eps -= nu * eta
        epsilons.append(eps)
    out = regression_result(svs, coefs, events, loss / len(order), X if X_eval is None else X_eval, sigma)
    out["epsilon"] = eps
    return out
