"""Projectron / Projectron++ as a slow per-step loop, straight from ALGORITHMS.md 1.5 and 1.6.

Plain NumPy, no lsokl code: the oracle the compiled learner is checked against. The Gram matrix
is recomputed at every margin error, as the authors' proplus.m does.
"""
from __future__ import annotations

import math

import numpy as np


def _kernel(A, x, sigma):
    d2 = np.maximum((A * A).sum(axis=1) + x @ x - 2.0 * (A @ x), 0.0)
    return np.exp(-d2 / (2.0 * sigma * sigma))


def projectron(X, y, order, *, sigma, budget, plus=False, corrected=False, floor=1e-10):
    """Returns dict(mistakes, updates, sv (stored rows), alpha, decision(Xq))."""
    SV, alpha, Kinv, Kid = [], np.zeros(0), None, 1.0
    U = 0.25 * math.sqrt((budget + 1) / math.log(budget + 1))
    mistakes = updates = 0
    for i in order:
        x, yt = X[i], float(y[i])
        k = _kernel(np.array(SV), x, sigma) if SV else np.zeros(0)
        f = float(alpha @ k) if SV else 0.0
        yhat = 1.0 if f >= 0 else -1.0
        if yhat != yt:
            mistakes += 1
            updates += 1
            if not SV:
                SV.append(x.copy())
                alpha = np.array([yt])
                Kid = float(_kernel(x[None, :], x, sigma)[0])
                Kinv = np.array([[1.0 / Kid]])
                continue
            d = Kinv @ k
            res = Kid - k @ d
            if len(SV) == budget or (corrected and res <= floor):
                alpha = alpha + yt * d
            else:
                SV.append(x.copy())
                alpha = np.append(alpha, yt)
                m = len(d)
                big = np.zeros((m + 1, m + 1))
                big[:m, :m] = Kinv
                v = np.append(d, -1.0)
                Kinv = big + np.outer(v, v) / res
        elif plus and SV:
            loss = 1.0 - yt * f
            if 0.0 < loss < 1.0:
                d = Kinv @ k
                res = Kid - k @ d
                S = np.array(SV)
                Kt = np.array([_kernel(S, s, sigma) for s in S])
                P = d @ Kt @ d
                tau = min(loss / P, 1.0)
                if res < 0 and not corrected:
                    ok = True  # Octave: complex beta compared by modulus
                else:
                    beta = tau * (2 * loss - tau * P - 2 * U * math.sqrt(max(res, 0.0)))
                    ok = beta >= 0
                if ok:
                    updates += 1
                    alpha = alpha + yt * tau * d
    S = np.array(SV)

    def decision(Xq):
        if not SV:
            return np.zeros(len(Xq))
        return np.array([alpha @ _kernel(S, xq, sigma) for xq in Xq])

    return dict(mistakes=mistakes, updates=updates, sv=S, alpha=alpha, decision=decision)
