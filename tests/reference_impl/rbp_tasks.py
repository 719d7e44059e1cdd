"""Plain-Python multi-class (spec 2.3) and regression (spec 3) RBP (slow; tests only).

``draws`` are 0-based positions in the oldest-first list, one consumed per removal."""
from __future__ import annotations

from .tasks_common import (argmax_first, matlab_sign, multiclass_result, pair, predict,
                           regression_result, scores)


def run_multiclass(X, y, order, *, sigma, n_classes, budget, draws, X_eval=None):
    svs, coefs, mistakes, draws = [], [], 0, iter(draws)
    for i in order:
        v = scores(svs, coefs, X[i], sigma, n_classes)
        y_hat, s = argmax_first(v), argmax_first(v, skip=y[i])
        if y_hat != y[i]:
            mistakes += 1
            if len(svs) == budget:
                r = next(draws)
                del svs[r], coefs[r]
            svs.append(X[i])
            coefs.append(pair(n_classes, y[i], s, 1.0))
    return multiclass_result(svs, coefs, mistakes, X if X_eval is None else X_eval, sigma, n_classes)


def run_regression(X, y, order, *, sigma, budget, eta, epsilon, draws, X_eval=None):
    svs, coefs, events, loss, draws = [], [], 0, 0.0, iter(draws)
    for i in order:
        delta = y[i] - predict(svs, coefs, X[i], sigma)
        loss += delta * delta
        if abs(delta) > epsilon:
            events += 1
            if len(svs) == budget:
                r = next(draws)
                del svs[r], coefs[r]
            svs.append(X[i])
            coefs.append(eta * matlab_sign(delta))
    return regression_result(svs, coefs, events, loss / len(order), X if X_eval is None else X_eval, sigma)
