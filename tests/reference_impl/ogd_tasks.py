"""Plain-Python multi-class (spec 2.2) and regression (spec 3) kernel OGD (slow; tests only)."""
from __future__ import annotations

from .tasks_common import argmax_first, multiclass_result, pair, predict, regression_result, scores


def run_multiclass(X, y, order, *, sigma, n_classes, eta, X_eval=None):
    svs, coefs, mistakes = [], [], 0
    for i in order:
        v = scores(svs, coefs, X[i], sigma, n_classes)
        y_hat, s = argmax_first(v), argmax_first(v, skip=y[i])
        mistakes += y_hat != y[i]
        if max(0.0, 1.0 - (v[y[i]] - v[s])) > 0:
            svs.append(X[i])
            coefs.append(pair(n_classes, y[i], s, eta))
    return multiclass_result(svs, coefs, mistakes, X if X_eval is None else X_eval, sigma, n_classes)


def run_regression(X, y, order, *, sigma, eta, epsilon, X_eval=None):
    svs, coefs, events, loss = [], [], 0, 0.0
    for i in order:
        delta = y[i] - predict(svs, coefs, X[i], sigma)
        loss += delta * delta
        if abs(delta) > epsilon:
            events += 1
            svs.append(X[i])
            coefs.append(eta * delta)
    return regression_result(svs, coefs, events, loss / len(order), X if X_eval is None else X_eval, sigma)
