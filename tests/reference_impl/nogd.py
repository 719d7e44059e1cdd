"""NOGD as a plain per-sample loop, straight from ALGORITHMS.md 1.10 (NumPy only, no lsokl code)."""
from __future__ import annotations

import numpy as np


def _kernel(A, x, sigma):
    d2 = np.maximum((A * A).sum(axis=1) + x @ x - 2.0 * (A @ x), 0.0)
    return np.exp(-d2 / (2.0 * sigma * sigma))


def nogd(X, y, order, *, sigma, budget, rank, eta, floor=None):
    """Returns dict(mistakes, updates, sv, switched_at (0-based step or None), w, M, alpha,
    decision(Xq))."""
    SV, alpha = [], []
    M = w = None
    switched_at = None
    mistakes = updates = 0
    for t, i in enumerate(order):
        x, yt = X[i], float(y[i])
        k = _kernel(np.array(SV), x, sigma) if SV else np.zeros(0)
        if M is None:
            f = float(np.dot(alpha, k)) if SV else 0.0
        else:
            z = M @ k
            f = float(w @ z)
        if (1.0 if f >= 0 else -1.0) != yt:
            mistakes += 1
        if yt * f < 1:
            if M is None and len(SV) < budget:
                SV.append(x.copy())
                alpha.append(eta * yt)
                updates += 1
            elif M is None:
                S = np.array(SV)
                K = np.array([_kernel(S, s, sigma) for s in S])
                lam, V = np.linalg.eigh(K)
                lam, V = lam[::-1][:rank], V[:, ::-1][:, :rank]
                if floor is not None:
                    lam = np.maximum(lam, floor)
                M = np.diag(lam ** -0.5) @ V.T
                w = np.array(alpha) @ np.linalg.pinv(M)
                w = w + eta * yt * (M @ k)
                switched_at = t
                updates += 1
            else:
                w = w + eta * yt * z
                updates += 1
    S = np.array(SV)

    def decision(Xq):
        out = []
        for xq in Xq:
            kq = _kernel(S, xq, sigma) if SV else np.zeros(0)
            out.append(float(w @ (M @ kq)) if M is not None else float(np.dot(alpha, kq)))
        return np.array(out)

    return dict(mistakes=mistakes, updates=updates, sv=S, switched_at=switched_at, w=w, M=M,
                alpha=np.array(alpha), decision=decision)
