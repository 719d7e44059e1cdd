"""Multi-class and regression NOGD as plain per-sample loops, straight from ALGORITHMS.md 2.10
and 3 (NumPy only, no lsokl code)."""
from __future__ import annotations

import numpy as np

from .projectron_tasks import _kernel, pick


def _nystrom(SV, sigma, rank, floor):
    S = np.array(SV)
    K = np.array([_kernel(S, s, sigma) for s in S])
    lam, V = np.linalg.eigh(K)
    lam, V = lam[::-1][:rank], V[:, ::-1][:, :rank]
    if floor is not None:
        lam = np.maximum(lam, floor)
    return np.diag(lam ** -0.5) @ V.T


def _decision(SV, sigma, coef, M):
    """f(x) = coef . k(x) before the switch, coef . (M k(x)) after (coef: alpha or w)."""
    S = np.array(SV)

    def decision(Xq):
        out = []
        for xq in Xq:
            k = _kernel(S, xq, sigma)
            out.append(coef @ (M @ k) if M is not None else coef @ k)
        return np.array(out)

    return decision


def multiclass_nogd(X, y, order, *, sigma, budget, rank, eta, n_classes, floor=None):
    """Returns dict(mistakes, updates, sv, switched_at, decision(Xq) (n x m))."""
    SV, cols = [], []
    M = W = None
    switched_at = None
    mistakes = updates = 0
    for t, i in enumerate(order):
        x, yt = X[i], int(y[i])
        k = _kernel(np.array(SV), x, sigma) if SV else np.zeros(0)
        if M is None:
            V = np.array(cols).T @ k if SV else np.zeros(n_classes)
        else:
            z = M @ k
            V = W @ z
        yhat, s, loss = pick(V, yt)
        mistakes += yhat != yt
        if loss <= 0:
            continue
        updates += 1
        if M is None and len(SV) < budget:
            col = np.zeros(n_classes)
            col[yt], col[s] = eta, -eta
            SV.append(x.copy())
            cols.append(col)
            continue
        if M is None:
            M = _nystrom(SV, sigma, rank, floor)
            W = np.array(cols).T @ np.linalg.pinv(M)
            z = M @ k
            switched_at = t
        W[yt] += eta * z
        W[s] -= eta * z
    coef = W if M is not None else np.array(cols).T
    return dict(mistakes=mistakes, updates=updates, sv=np.array(SV), switched_at=switched_at,
                decision=_decision(SV, sigma, coef, M))


def regression_nogd(X, y, order, *, sigma, budget, rank, eta, epsilon, floor=None):
    """Returns dict(events, updates, sq_loss (sum), sv, switched_at, decision(Xq))."""
    SV, alpha = [], []
    M = w = None
    switched_at = None
    events = updates = 0
    sq_loss = 0.0
    for t, i in enumerate(order):
        x = X[i]
        k = _kernel(np.array(SV), x, sigma) if SV else np.zeros(0)
        if M is None:
            f = float(np.dot(alpha, k)) if SV else 0.0
        else:
            z = M @ k
            f = float(w @ z)
        delta = float(y[i]) - f
        sq_loss += delta * delta
        if abs(delta) <= epsilon:
            continue
        events += 1
        updates += 1
        if M is None and len(SV) < budget:
            SV.append(x.copy())
            alpha.append(eta * delta)
            continue
        if M is None:
            M = _nystrom(SV, sigma, rank, floor)
            w = np.array(alpha) @ np.linalg.pinv(M)
            z = M @ k
            switched_at = t
        w = w + eta * delta * z
    coef = w if M is not None else np.array(alpha)
    return dict(events=events, updates=updates, sq_loss=sq_loss, sv=np.array(SV),
                switched_at=switched_at, decision=_decision(SV, sigma, coef, M))
