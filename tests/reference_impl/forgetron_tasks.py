"""Plain-Python multi-class (spec 2.4) and regression (spec 3) Forgetron (slow; tests only).

The shrink phi is the binary one (spec 1.4), with the task's mu and delta."""
from __future__ import annotations

from .forgetron import shrink
from .tasks_common import (argmax_first, matlab_sign, multiclass_result, pair, predict,
                           regression_result, scores)


def _phi_and_psi(delta, mu, Q, mistakes, variant, phi_floor):
    phi = shrink(delta**2 - 2 * delta * mu, 2 * delta, Q - 15 / 32 * mistakes, variant, phi_floor)
    return phi, (delta * phi) ** 2 + 2 * delta * phi * (1 - phi * mu)


def run_multiclass(X, y, order, *, sigma, n_classes, budget, variant="faithful", phi_floor=1e-12,
                   X_eval=None):
    svs, coefs, classes, mistakes, Q = [], [], [], 0, 0.0
    for i in order:
        v = scores(svs, coefs, X[i], sigma, n_classes)
        y_hat, s = argmax_first(v), argmax_first(v, skip=y[i])
        if y_hat == y[i]:
            continue
        mistakes += 1
        svs, coefs, classes = svs + [X[i]], coefs + [pair(n_classes, y[i], s, 1.0)], classes + [y[i]]
        if len(svs) <= budget:
            continue
        c = classes[0]
        mu = scores(svs, coefs, svs[0], sigma, n_classes)[c]  # the class score, new point included
        phi, psi = _phi_and_psi(abs(coefs[0][c]), mu, Q, mistakes, variant, phi_floor)
        Q += psi
        svs, classes = svs[1:], classes[1:]
        coefs = [[phi * a for a in col] for col in coefs[1:]]
    out = multiclass_result(svs, coefs, mistakes, X if X_eval is None else X_eval, sigma, n_classes)
    out["Q"] = Q
    return out


def run_regression(X, y, order, *, sigma, budget, eta, epsilon, variant="faithful",
                   phi_floor=1e-12, X_eval=None):
    svs, coefs, events, loss, Q = [], [], 0, 0.0, 0.0
    for i in order:
        delta = y[i] - predict(svs, coefs, X[i], sigma)
        loss += delta * delta
        if abs(delta) <= epsilon:
            continue
        events += 1
        old_first = coefs[0] if coefs else None
        svs, coefs = svs + [X[i]], coefs + [eta * matlab_sign(delta)]
        if len(svs) <= budget:
            continue
        mu = abs(predict(svs, coefs, svs[0], sigma))
        phi, psi = _phi_and_psi(abs(old_first), mu, Q, events, variant, phi_floor)
        Q += psi
        svs, coefs = svs[1:], [phi * a for a in coefs[1:]]
    out = regression_result(svs, coefs, events, loss / len(order), X if X_eval is None else X_eval, sigma)
    out["Q"] = Q
    return out
