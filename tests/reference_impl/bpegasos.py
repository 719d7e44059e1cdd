"""BPegasosM / BSGD as a slow per-step loop, straight from BUDGETED_PEGASOS.md sections 2-3 and
ALGORITHMS.md section 7.

Plain NumPy, no lsokl code: the oracle the compiled learner is checked against. It keeps the true
coefficients (no global scale), recomputes ||w||^2 from the Gram matrix at every step, solves the
projection with ``np.linalg.solve`` on K_RR and picks every "smallest"/partner by brute force over
the explicit kernel norm of the change. Two implementation conventions are shared with the learner
on purpose, because they only decide *which* of several equally valid choices is made:
* SVs sit in a list that deletes by moving the last entry into the hole (the learner's slots), and
  the j-th RAND draw removes list entry ``draws[j]`` (the new SV, last in the list, is never drawn);
* ties of the smallest SV (relative 1e-12) go to the oldest.
"""
from __future__ import annotations

import math

import numpy as np


def kern(A, B, sigma):
    A, B = np.atleast_2d(A), np.atleast_2d(B)
    d2 = np.maximum((A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2 * A @ B.T, 0.0)
    return np.exp(-d2 / (2 * sigma * sigma))


def golden(fun, lo, hi, tol=2e-4, left_on_tie=False):
    """argmax of fun on [lo, hi] by golden-section search; the midpoint of the last bracket.
    ``left_on_tie``: equal probes keep the left part (BudgetedSVM's ``fp <= fq``)."""
    g = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    while b - a >= tol:
        c, d = b - g * (b - a), a + g * (b - a)
        fc, fd = fun(c), fun(d)
        if fc > fd or (left_on_tie and fc == fd):
            b = d
        else:
            a = c
    return 0.5 * (a + b)


def bracket(a1, a2):
    if a1 * a2 > 0:
        return 0.0, 1.0
    if a1 > 0:
        return 1.0, 6.0
    return -5.0, 0.0


def sq_norm(S, A, sigma):
    if not S:
        return 0.0
    K = kern(np.array(S), np.array(S), sigma)
    return float(np.einsum("ic,ij,jc->", A, K, A))


def change_norm(S_old, A_old, S_new, A_new, sigma):
    """||w_old - w_new||^2 computed from the explicit kernel expansion of both models."""
    S = np.array(list(S_old) + list(S_new))
    A = np.vstack([A_old, -A_new]) if len(S_new) else A_old
    return float(np.einsum("ic,ij,jc->", A, kern(S, S, sigma), A))


def smallest(A, ages, rtol=1e-12):
    v = (A ** 2).sum(1)
    vmin = v.min()
    ties = np.flatnonzero(v <= vmin * (1 + rtol))
    return int(ties[np.argmin(np.asarray(ages)[ties])])


def merge_pair(am, an, k, quirks=False):
    """(h, k1, k2, L) for the merge of am (smallest) with an at kernel value k (spec 3.4)."""
    den = am + an
    zero = np.abs(den) <= 1e-9 * (np.abs(am) + np.abs(an))  # equal weights cancel up to rounding
    if quirks:
        den = np.where(zero, 1e-4, den)
        keep = np.ones_like(den, dtype=bool)
    else:
        keep = ~zero
    a1 = float(np.sum(am[keep] / den[keep]))
    a2 = float(np.sum(an[keep] / den[keep]))
    lo, hi = bracket(a1, a2)
    h = golden(lambda h: a1 * k ** ((1 - h) ** 2) + a2 * k ** (h * h), lo, hi, left_on_tie=quirks)
    k1, k2 = k ** ((1 - h) ** 2), k ** (h * h)
    az = am * k1 + an * k2
    L = float(np.sum(am ** 2 + an ** 2 + 2 * k * am * an - az ** 2))
    return h, k1, k2, L


def bpegasos(X, y, order, n_classes, *, sigma, lam, budget=None, maintenance="smallest",
             ball=True, quirks=False, draws=()):
    """Returns dict(S, A, ages, mistakes, events, ge (list of lam t ||Delta||), q_trace)."""
    S, A, ages = [], np.zeros((0, n_classes)), []
    mistakes, ge, q_trace, next_age, draw = 0, [], [], 0, 0
    for t, i in enumerate(order, start=1):
        x, yt = X[i], int(y[i])
        k = kern(np.array(S), x, sigma)[:, 0] if S else np.zeros(0)
        f = A.T @ k if S else np.zeros(n_classes)
        yhat = int(np.argmax(f))
        mistakes += yhat != yt
        r = max((c for c in range(n_classes) if c != yt), key=lambda c: (f[c], -c))
        if quirks and t == 1:
            r = (yt + 1) % n_classes  # BudgetedSVM: the first SV's -1 goes to class (y + 1) mod C
        loss = 1 + f[r] - f[yt]
        dup = next((j for j in range(len(S)) if k[j] >= 1 - 1e-8), -1) if quirks else -1
        A = A * (1 - 1 / t)
        if t == 1:
            S, A, ages = [], np.zeros((0, n_classes)), []
        eta = 1 / (lam * t)
        if quirks and t == 1:
            eta = 1.0
        if loss > 0:
            beta = np.zeros(n_classes)
            beta[yt], beta[r] = eta, -eta
            appended = True
            if maintenance == "projection" and budget is not None and S:
                K = kern(np.array(S), np.array(S), sigma)
                u = np.linalg.solve(K, k)
                s = 1 - k @ u
                if s < 1e-4:  # bpegasos.NEAR_DUPLICATE_S
                    A = A + np.outer(u, beta)
                    ge.append(lam * t * math.sqrt(2 * eta * eta * max(s, 0)))
                    appended = False
            if appended:
                S.append(x.copy())
                A = np.vstack([A, beta])
                ages.append(next_age)
                next_age += 1
            if budget is not None and len(S) > budget:
                S_old, A_old = list(S), A.copy()
                new = len(S) - 1
                if quirks and dup >= 0:
                    if maintenance == "merge":
                        A[dup] += A[new]
                    _delete(S, ages, new)
                    A = _delete_row(A, new)
                else:
                    if maintenance in ("random", "smallest"):
                        if maintenance == "random":
                            p = int(draws[draw])
                            draw += 1
                        else:
                            # brute force: the single removal with the least ||Delta||^2
                            costs = [float((A[j] ** 2).sum()) for j in range(len(S))]
                            p = smallest(A, ages)
                            assert costs[p] <= min(costs) * (1 + 1e-12)
                        _delete(S, ages, p)
                        A = _delete_row(A, p)
                    elif maintenance == "projection":
                        p = smallest(A, ages)
                        R = [j for j in range(len(S)) if j != p]
                        SR = np.array([S[j] for j in R])
                        d = np.linalg.solve(kern(SR, SR, sigma), kern(SR, S[p], sigma)[:, 0])
                        A[R] += np.outer(d, A[p])
                        _delete(S, ages, p)
                        A = _delete_row(A, p)
                    else:  # merge
                        mm = smallest(A, ages)
                        best = None
                        for n in range(len(S)):
                            if n == mm:
                                continue
                            kmn = float(kern(S[mm], S[n], sigma)[0, 0])
                            h, k1, k2, L = merge_pair(A[mm], A[n], kmn, quirks)
                            if best is None or L < best[4]:
                                best = (n, h, k1, k2, L)
                        n, h, k1, k2, L = best
                        if quirks:
                            h = max(h, 0.0)
                        z = h * S[mm] + (1 - h) * S[n]
                        S[mm] = z
                        A[mm] = A[mm] * k1 + A[n] * k2
                        _delete(S, ages, n)
                        A = _delete_row(A, n)
                    ge.append(lam * t * math.sqrt(max(change_norm(S_old, A_old, S, A, sigma), 0)))
        if ball:
            q = sq_norm(S, A, sigma)
            if q > 0:
                A = A * min(1.0, 1 / (math.sqrt(lam) * math.sqrt(q)))
            q_trace.append(sq_norm(S, A, sigma))
    return {"S": np.array(S), "A": A, "ages": np.array(ages), "mistakes": mistakes, "ge": ge,
            "q_trace": q_trace}


def _delete(S, ages, p):
    S[p] = S[-1]
    ages[p] = ages[-1]
    S.pop()
    ages.pop()


def _delete_row(A, p):
    A = A.copy()
    A[p] = A[-1]
    return A[:-1]


def binary_pegasos(X, y, order, *, sigma, lam, ball=True):
    """Binary kernel Pegasos (hinge, eta_t = 1/(lam t), projection onto ||h|| <= 1/sqrt(lam));
    returns (S, a)."""
    S, a = [], np.zeros(0)
    for t, i in enumerate(order, start=1):
        x, yt = X[i], float(y[i])
        h = float(a @ kern(np.array(S), x, sigma)[:, 0]) if S else 0.0
        a = a * (1 - 1 / t)
        if yt * h < 1:
            S.append(x.copy())
            a = np.append(a, yt / (lam * t))
        if ball and S:
            q = float(a @ kern(np.array(S), np.array(S), sigma) @ a)
            if q > 0:
                a = a * min(1.0, 1 / (math.sqrt(lam) * math.sqrt(q)))
    return np.array(S), a
