"""Multi-class and regression Projectron(++) as slow per-step loops, straight from ALGORITHMS.md
2.5, 2.6 and 3 (plain NumPy, no lsokl code): the oracles the compiled learners are checked
against. The inverse Gram matrix grows by the block formula, as in the authors' code.
"""
from __future__ import annotations

import math

import numpy as np

from .projectron import _kernel


class _Span:
    """The stored vectors, oldest first, and the inverse of their Gram matrix, grown by the
    block formula (spec 1.5): the part every Projectron shares, whatever the task."""

    def __init__(self, sigma, budget, corrected, floor):
        self.sigma, self.budget, self.corrected, self.floor = sigma, budget, corrected, floor
        self.SV, self.Kinv, self.Kid = [], None, 1.0

    def row(self, x):
        return _kernel(np.array(self.SV), x, self.sigma) if self.SV else np.zeros(0)

    def residual(self, k):
        d = self.Kinv @ k
        return d, self.Kid - k @ d

    def store_or_project(self, x, k):
        """A mistake step: store x and return None, or return d* = Kinv k to project with
        (budget full, or the corrected variant's residual guard)."""
        if not self.SV:
            self.Kid = float(_kernel(x[None, :], x, self.sigma)[0])
            self.Kinv = np.array([[1.0 / self.Kid]])
            self.SV.append(x.copy())
            return None
        d, res = self.residual(k)
        if len(self.SV) == self.budget or (self.corrected and res <= self.floor):
            return d
        m = len(d)
        big = np.zeros((m + 1, m + 1))
        big[:m, :m] = self.Kinv
        v = np.append(d, -1.0)
        self.Kinv = big + np.outer(v, v) / res
        self.SV.append(x.copy())
        return None


def pick(V, y):
    """argmax (first on ties), best wrong class (first on ties), hinge loss."""
    yhat = int(np.argmax(V))
    others = [r for r in range(len(V)) if r != y]
    s = others[int(np.argmax(V[others]))]
    return yhat, s, max(0.0, 1.0 - (V[y] - V[s]))


def multiclass_projectron(X, y, order, *, sigma, budget, n_classes, plus=False, corrected=False,
                          floor=1e-10):
    """Returns dict(mistakes, updates, sv, alpha (|S| x m), decision(Xq) (n x m))."""
    span = _Span(sigma, budget, corrected, floor)
    cols = []
    U = 0.25 * math.sqrt((budget + 1) / math.log(budget + 1))
    mistakes = updates = 0
    for i in order:
        x, yt = X[i], int(y[i])
        k = span.row(x)
        V = np.array(cols).T @ k if cols else np.zeros(n_classes)
        yhat, s, loss = pick(V, yt)
        tau = d = None
        if yhat != yt:
            mistakes += 1
            updates += 1
            d = span.store_or_project(x, k)
            if d is None:
                col = np.zeros(n_classes)
                col[yt], col[s] = 1.0, -1.0
                cols.append(col)
                continue
            tau = 1.0
        elif plus and cols and loss > 0.0:
            d, res = span.residual(k)
            P = k @ span.Kinv @ k
            tau = min(loss / P, 1.0)
            if not (res < 0 and not corrected):  # Octave: a complex beta passes by modulus
                if tau * (2 * loss - tau * P - 2 * U * math.sqrt(max(res, 0.0))) < 0:
                    continue
            updates += 1
        if tau is not None:
            for j in range(len(cols)):
                cols[j][yt] += tau * d[j]
                cols[j][s] -= tau * d[j]
    S = np.array(span.SV)
    A = np.array(cols).reshape(len(cols), n_classes)

    def decision(Xq):
        if not cols:
            return np.zeros((len(Xq), n_classes))
        return np.array([A.T @ _kernel(S, xq, sigma) for xq in Xq])

    return dict(mistakes=mistakes, updates=updates, sv=S, alpha=A, decision=decision)


def regression_projectron(X, y, order, *, sigma, budget, eta, epsilon, corrected=False,
                          floor=1e-10):
    """Returns dict(events, sq_loss (sum), sv, alpha, decision(Xq))."""
    span = _Span(sigma, budget, corrected, floor)
    alpha = np.zeros(0)
    events = 0
    sq_loss = 0.0
    for i in order:
        x = X[i]
        k = span.row(x)
        delta = float(y[i]) - (float(alpha @ k) if len(alpha) else 0.0)
        sq_loss += delta * delta
        if abs(delta) <= epsilon:
            continue
        events += 1
        lab = eta * np.sign(delta)
        d = span.store_or_project(x, k)
        alpha = np.append(alpha, lab) if d is None else alpha + lab * d
    S = np.array(span.SV)

    def decision(Xq):
        if not len(alpha):
            return np.zeros(len(Xq))
        return np.array([alpha @ _kernel(S, xq, sigma) for xq in Xq])

    return dict(events=events, sq_loss=sq_loss, sv=S, alpha=alpha, decision=decision)
