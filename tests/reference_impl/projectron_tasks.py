"""Multi-class and regression Projectron(++) as slow per-step loops, straight from ALGORITHMS.md
2.5, 2.6 and 3 (plain NumPy, no lsokl code): the oracles the compiled learners are checked
against. The inverse Gram matrix grows by the block formula, as in the authors' code.
"""
from __future__ import annotations

import math

import numpy as np


def _kernel(A, x, sigma):
    d2 = np.maximum((A * A).sum(axis=1) + x @ x - 2.0 * (A @ x), 0.0)
    return np.exp(-d2 / (2.0 * sigma * sigma))


def _grow_inverse(Kinv, d, res):
    m = len(d)
    big = np.zeros((m + 1, m + 1))
    big[:m, :m] = Kinv
    v = np.append(d, -1.0)
    return big + np.outer(v, v) / res


def pick(V, y):
    """argmax (first on ties), best wrong class (first on ties), hinge loss."""
    yhat = int(np.argmax(V))
    others = [r for r in range(len(V)) if r != y]
    s = others[int(np.argmax(V[others]))]
    return yhat, s, max(0.0, 1.0 - (V[y] - V[s]))


def multiclass_projectron(X, y, order, *, sigma, budget, n_classes, plus=False, corrected=False,
                          floor=1e-10):
    """Returns dict(mistakes, updates, sv, alpha (|S| x m), decision(Xq) (n x m))."""
    SV, cols, Kinv, Kid = [], [], None, 1.0
    U = 0.25 * math.sqrt((budget + 1) / math.log(budget + 1))
    mistakes = updates = 0
    for i in order:
        x, yt = X[i], int(y[i])
        k = _kernel(np.array(SV), x, sigma) if SV else np.zeros(0)
        A = np.array(cols).reshape(len(SV), n_classes)
        V = A.T @ k if SV else np.zeros(n_classes)
        yhat, s, loss = pick(V, yt)
        if yhat != yt:
            mistakes += 1
            updates += 1
            col = np.zeros(n_classes)
            col[yt], col[s] = 1.0, -1.0
            if not SV:
                SV.append(x.copy())
                cols.append(col)
                Kid = float(_kernel(x[None, :], x, sigma)[0])
                Kinv = np.array([[1.0 / Kid]])
                continue
            d = Kinv @ k
            res = Kid - k @ d
            if len(SV) == budget or (corrected and res <= floor):
                for j in range(len(SV)):
                    cols[j][yt] += d[j]
                    cols[j][s] -= d[j]
            else:
                SV.append(x.copy())
                cols.append(col)
                Kinv = _grow_inverse(Kinv, d, res)
        elif plus and SV and loss > 0.0:
            d = Kinv @ k
            res = Kid - k @ d
            P = k @ Kinv @ k
            tau = min(loss / P, 1.0)
            if res < 0 and not corrected:
                ok = True  # Octave: complex beta compared by modulus
            else:
                ok = tau * (2 * loss - tau * P - 2 * U * math.sqrt(max(res, 0.0))) >= 0
            if ok:
                updates += 1
                for j in range(len(SV)):
                    cols[j][yt] += tau * d[j]
                    cols[j][s] -= tau * d[j]
    S = np.array(SV)
    A = np.array(cols).reshape(len(SV), n_classes)

    def decision(Xq):
        if not SV:
            return np.zeros((len(Xq), n_classes))
        return np.array([A.T @ _kernel(S, xq, sigma) for xq in Xq])

    return dict(mistakes=mistakes, updates=updates, sv=S, alpha=A, decision=decision)


def regression_projectron(X, y, order, *, sigma, budget, eta, epsilon, corrected=False,
                          floor=1e-10):
    """Returns dict(events, sq_loss (sum), sv, alpha, decision(Xq))."""
    SV, alpha, Kinv, Kid = [], np.zeros(0), None, 1.0
    events = 0
    sq_loss = 0.0
    for i in order:
        x = X[i]
        k = _kernel(np.array(SV), x, sigma) if SV else np.zeros(0)
        f = float(alpha @ k) if SV else 0.0
        delta = float(y[i]) - f
        sq_loss += delta * delta
        if abs(delta) <= epsilon:
            continue
        events += 1
        lab = eta * np.sign(delta)
        if not SV:
            SV.append(x.copy())
            alpha = np.array([lab])
            Kid = float(_kernel(x[None, :], x, sigma)[0])
            Kinv = np.array([[1.0 / Kid]])
            continue
        d = Kinv @ k
        res = Kid - k @ d
        if len(SV) == budget or (corrected and res <= floor):
            alpha = alpha + lab * d
        else:
            SV.append(x.copy())
            alpha = np.append(alpha, lab)
            Kinv = _grow_inverse(Kinv, d, res)
    S = np.array(SV)

    def decision(Xq):
        if not SV:
            return np.zeros(len(Xq))
        return np.array([alpha @ _kernel(S, xq, sigma) for xq in Xq])

    return dict(events=events, sq_loss=sq_loss, sv=S, alpha=alpha, decision=decision)
