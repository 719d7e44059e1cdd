"""Plain-Python multi-class (spec 2.8) and regression (spec 3) BOGD: decay every step, oldest
removal, no B/(B-1) factor; multi-class clips from above after a full-budget step (slow)."""
from __future__ import annotations

from .tasks_common import argmax_first, multiclass_result, pair, predict, regression_result, scores


def run_multiclass(X, y, order, *, sigma, n_classes, budget, eta, lam, gamma, X_eval=None):
    svs, coefs, mistakes = [], [], 0
    for i in order:
        v = scores(svs, coefs, X[i], sigma, n_classes)
        y_hat, s = argmax_first(v), argmax_first(v, skip=y[i])
        mistakes += y_hat != y[i]
        coefs = [[(1 - eta * lam) * a for a in c] for c in coefs]
        if max(0.0, 1.0 - (v[y[i]] - v[s])) > 0:
            full = len(svs) == budget
            if full:
                svs, coefs = svs[1:], coefs[1:]
            svs.append(X[i])
            coefs.append(pair(n_classes, y[i], s, eta))
            if full:
                coefs = [[min(a, eta * gamma) for a in c] for c in coefs]
    return multiclass_result(svs, coefs, mistakes, X if X_eval is None else X_eval, sigma, n_classes)


def run_regression(X, y, order, *, sigma, budget, eta, lam, epsilon, X_eval=None):
    svs, coefs, events, loss = [], [], 0, 0.0
    for i in order:
        delta = y[i] - predict(svs, coefs, X[i], sigma)
        loss += delta * delta
        coefs = [(1 - eta * lam) * a for a in coefs]
        if abs(delta) > epsilon:
            events += 1
            if len(svs) == budget:
                svs, coefs = svs[1:], coefs[1:]
            svs.append(X[i])
            coefs.append(eta * delta)
    return regression_result(svs, coefs, events, loss / len(order), X if X_eval is None else X_eval, sigma)
