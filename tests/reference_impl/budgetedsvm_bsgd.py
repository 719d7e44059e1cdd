"""BudgetedSVM's BSGD training loop (``bsgd.cpp``, ``budgetedsvm-train -A 4``) restated step by
step in NumPy, to replay its reference traces (``../shared/data/reference-runs/budgetedsvm``).

Plain NumPy, no lsokl code. It follows the C++ statement by statement where the arithmetic is
decided by the representation, not the precision: features are float32, every product of two
features is a float32 product (C++ ``float * float``) summed in a wider type, a data point's
squared norm is the sum of float32-rounded squares, every SV's alphas are decayed one by one by
(1 - 1/t) (no global scale), the merged vector z is rounded to float32 while its squared norm is
the analytic h^2 |x_m|^2 + (1-h)^2 |x_n|^2 + 2h(1-h) x_m.x_n with |x_n|^2 from exact squares
(``sqrNorm``), "smallest" is the first strict minimum in list order, the list erases in order
(the merged point keeps m's position), a zero alpha sum d_k == 0 (exactly) becomes 1e-4, the
golden search is ``goldenSectionSearch`` (``fp <= fq`` keeps the left part), h is clipped at 0
after the partner choice with kZ1, kZ2 kept, and a duplicate is kappa rounded to 8 decimals == 1
(the last such SV in list order).

What it cannot reproduce is the x87 80-bit ``long double`` rounding of the reference build; the
replay therefore takes the trace's decision, and counts it, where the two are a documented tie
(README sections 6 and 10): a smallest-SV choice among SVs whose ||alpha||^2 agree to 1e-9
(never-merged SVs tie exactly in exact arithmetic), or a merge whose alpha sums d_k of some class
vanish to rounding (1/d_k then decides the bracket). Any other disagreement is returned as
unexplained.
"""
from __future__ import annotations

import math

import numpy as np

TIE_RTOL = 1e-9
# two partners whose merge losses agree to this (relative) are a near-tie once the merged vectors
# carry float32 rounding of the last bits of h (x87 vs double golden search): documented
LOSS_RTOL = 1e-6


def golden(k12, a1, a2, a, b, tol=1e-4):
    """``goldenSectionSearch`` for every candidate at once (arrays of one bracket width)."""
    g = (math.sqrt(5.0) - 1.0) / 2.0
    f = lambda x: -(a1 * np.power(k12, (1.0 - x) * (1.0 - x)) + a2 * np.power(k12, x * x))  # noqa: E731
    a, b = np.array(a, float), np.array(b, float)
    p, q = b - g * (b - a), a + g * (b - a)
    fp, fq = f(p), f(q)
    while np.any(b - a >= 2.0 * tol):
        left = fp <= fq
        # left: b = q, q = p, fq = fp, p = b - g (b - a); right: a = p, p = q, fp = fq, q = a + g (b - a)
        nb = np.where(left, q, b)
        na = np.where(left, a, p)
        nq = np.where(left, p, na + g * (nb - na))
        np_ = np.where(left, nb - g * (nb - na), q)
        nfq = np.where(left, fp, f(nq))
        nfp = np.where(left, f(np_), fq)
        a, b, p, q, fp, fq = na, nb, np_, nq, nfp, nfq
    return (a + b) / 2.0


class Replay:
    """The BSGD state: SV features (float32), squared norms, alphas (n_sv x classes)."""

    def __init__(self, X32: np.ndarray, y: np.ndarray, n_classes: int, lam: float, g: float,
                 budget: int, merge: bool):
        self.X, self.y, self.C = X32, y, n_classes
        self.lam, self.g, self.B, self.merge = lam, g, budget, merge
        self.sqn_data = (X32 * X32).astype(np.float64).sum(axis=1)  # float32 squares, wide sum
        self.S = np.empty((0, X32.shape[1]), np.float32)
        self.sqn = np.empty(0)
        self.A = np.empty((0, n_classes))
        self.t = 0
        self.ties = 0
        self.zero_sum_merges = 0

    def _kernels(self, x32, sqn_x):
        dots = (self.S * x32).astype(np.float64).sum(axis=1)  # float32 products
        return np.exp(-0.5 * self.g * (self.sqn + sqn_x - 2.0 * dots))

    def scores(self, i):
        """Class scores f_k of row i (before this step's decay) and the kernel row."""
        k = self._kernels(self.X[i], self.sqn_data[i])
        return (self.A * k[:, None]).sum(axis=0), k

    def step(self, i, forced=None):
        """One step on row i. ``forced``: the trace's parsed action, used where the choice is a
        documented tie. Returns (f, i2, viol, action) with action as in the trace."""
        self.t += 1
        yi = int(self.y[i])
        if self.t == 1:
            self._append(i, np.eye(self.C)[yi] - np.eye(self.C)[(yi + 1) % self.C])
            return None, (yi + 1) % self.C, 1, ("first",)
        f, k = self.scores(i)
        i2, best = -1, -math.inf
        for c in range(self.C):
            if c != yi and f[c] > best:
                best, i2 = f[c], c
        dup = -1
        for j in range(len(k)):
            if int(k[j] * 100000000.0 + 0.5) == 100000000:
                dup = j
        self.A *= 1.0 - 1.0 / self.t  # zeros stay zero
        viol = int(1.0 + f[i2] - f[yi] > 0.0)
        if not viol:
            return f, i2, 0, ("none",)
        a = np.zeros(self.C)
        a[yi] = 1.0 / (self.t * self.lam)
        a[i2] = -1.0 / (self.t * self.lam)
        self._append(i, a)
        if len(self.A) <= self.B:
            return f, i2, 1, ("add",)
        return f, i2, 1, (self._merge(dup, forced) if self.merge else self._remove(dup, forced))

    def _append(self, i, a):
        self.S = np.vstack([self.S, self.X[i][None]])
        self.sqn = np.append(self.sqn, self.sqn_data[i])
        self.A = np.vstack([self.A, a[None]])

    def _delete(self, j):
        self.S = np.delete(self.S, j, axis=0)
        self.sqn = np.delete(self.sqn, j)
        self.A = np.delete(self.A, j, axis=0)

    def _smallest(self, norms, forced_j):
        j = int(np.argmin(norms))  # first minimum in list order
        if forced_j is not None and forced_j != j and \
                abs(norms[forced_j] - norms[j]) <= TIE_RTOL * norms[j]:
            self.ties += 1
            return forced_j
        return j

    def _remove(self, dup, forced):
        if dup >= 0:
            self._delete(self.B)
            return ("remove_new_dup", self.B, dup)
        norms = (self.A ** 2).sum(axis=1)  # x self-kernel = 1 (raw points)
        j = self._smallest(norms, forced[1] if forced and forced[0] == "remove" else None)
        self._delete(j)
        return ("remove", j)

    def _merge(self, dup, forced):
        if dup >= 0:
            self.A[dup] += self.A[self.B]
            self._delete(self.B)
            return ("merge_dup", dup, self.B)
        norms = (self.A ** 2).sum(axis=1)
        fm = forced[1] if forced and forced[0] == "merge" else None
        m = self._smallest(norms, fm)
        others = np.array([j for j in range(len(self.A)) if j != m])
        dots = (self.S[others] * self.S[m]).astype(np.float64).sum(axis=1)
        k12 = np.exp(-0.5 * self.g * (self.sqn[m] + self.sqn[others] - 2.0 * dots))
        am, an = self.A[m][None, :], self.A[others]
        d = am + an
        zero = d == 0.0
        d = np.where(zero, 1e-4, d)
        a1 = (am / d).sum(axis=1)
        a2 = (an / d).sum(axis=1)
        lo = np.where(a1 * a2 > 0, 0.0, np.where(a1 > 0, 1.0, -5.0))
        h = np.empty(len(others))
        for width in (1.0, 5.0):
            sel = (np.where(a1 * a2 > 0, 1.0, 5.0) == width)
            if sel.any():
                h[sel] = golden(k12[sel], a1[sel], a2[sel], lo[sel], lo[sel] + width)
        kz1 = np.power(k12, (1 - h) * (1 - h))
        kz2 = np.power(k12, h * h)
        z = am * kz1[:, None] + an * kz2[:, None]
        loss = (am ** 2 + an ** 2 + 2.0 * k12[:, None] * am * an - z * z).sum(axis=1)
        best = int(np.argmin(loss))
        n, hh, k1, k2 = int(others[best]), float(h[best]), float(kz1[best]), float(kz2[best])
        if forced and forced[0] == "merge" and forced[1] == m and forced[2] != m and \
                (forced[2] != n or abs(forced[3] - max(hh, 0.0)) > 1e-3):
            # a zero-to-rounding alpha sum (1/d decides the bracket) or a near-equal loss: documented
            fn = forced[2]
            jn = int(np.flatnonzero(others == fn)[0])
            def zero_sum(j):  # a class whose alpha sum vanishes to rounding, not exactly
                s_ = np.abs(am[0] + an[j])
                return bool(np.any((s_ <= TIE_RTOL * (np.abs(am[0]) + np.abs(an[j]))) & (s_ != 0.0)))

            if zero_sum(jn) or zero_sum(best) or abs(loss[jn] - loss[best]) <= LOSS_RTOL * abs(loss[best]):
                self.zero_sum_merges += 1
                n, hh, k1, k2 = fn, forced[3], forced[4], forced[5]
        h_used = max(hh, 0.0)
        xm, xn = self.S[m].astype(np.float64), self.S[n].astype(np.float64)
        lin = float((self.S[m] * self.S[n]).astype(np.float64).sum())
        sqn_n_exact = float((xn * xn).sum())
        self.S[m] = (h_used * xm + (1.0 - h_used) * xn).astype(np.float32)
        self.sqn[m] = (h_used * h_used * self.sqn[m] + (1 - h_used) ** 2 * sqn_n_exact
                       + 2.0 * h_used * (1 - h_used) * lin)
        self.A[m] = self.A[m] * k1 + self.A[n] * k2
        self._delete(n)
        return ("merge", m, n, h_used, k1, k2)


def parse_action(p: list[str]):
    """The action columns of one trace line as a tuple like :meth:`Replay.step` returns."""
    act = p[9]
    if act in ("first", "none", "add"):
        return (act,)
    if act == "remove":
        return ("remove", int(p[10]))
    if act == "remove_new_dup":
        return ("remove_new_dup", int(p[10]), int(p[12]))
    if act == "merge_dup":
        return ("merge_dup", int(p[10]), int(p[11]))
    kv = {s.split("=")[0]: float(s.split("=")[1]) for s in p[12:15]}
    return ("merge", int(p[10]), int(p[11]), kv["h"], kv["kz1"], kv["kz2"])
