"""PRJTRN++: Orabona's multi-class Projectron++ with a projection threshold, tuned so that the
run ends with about B support vectors (ICML 2010 Table 1's PRJTRN++ row).

Spec ``BUDGETED_PEGASOS.md`` section 4; it follows DOGMA's ``k_projectron2_multi_train.m``. This
is **not** LSOKL's Projectron++ (registry name ``projectron++``, ``projectron.py``), which stores
every mistake until a hard budget and then always projects onto one shared span: here each class
c keeps its own list S_c of the support vectors in its span and its own inverse Gram matrix M_c,
and a threshold ``eta`` on the *squared* projection residual decides between projecting and
adding. There is no budget during training; the budget only enters through the threshold search.

Per step (a perceptron: no lambda, no decay), with f the class scores, r the best wrong class
(lowest index on ties) and, for c in {y, r}, q_c = M_c k_{S_c}(x) and delta_c =
max(1 - k_{S_c}' q_c, 0) (1 when S_c is empty):

* mistake, f_y <= f_r: if delta_y <= eta and delta_r <= eta, project: alpha^y[S_y] += q_y and
  alpha^r[S_r] -= q_r. Otherwise x becomes a new column with +1 for y and -1 for r, joins S_y and
  S_r, and M_y, M_r grow by the block formula; a class whose residual is below machine epsilon is
  projected instead (its entry of the new column stays 0), as DOGMA does;
* margin error, 0 < f_y - f_r < 1: loss l = 1 - f_y + f_r, delta = delta_y + delta_r; if
  l - delta/(2 eta) > 0, tau = min(l/(2 - delta), 1, 2(l - delta/(2 eta))/(2 - delta)) and
  alpha^y[S_y] += tau q_y, alpha^r[S_r] -= tau q_r. A margin error never adds a vector.

Like DOGMA, nothing guards the inverses (no refactorisation); the residual is clipped at 0.
Mistakes in ``counts_[1]`` are argmax(f) != y (ties to the lowest class index), as for every
other multi-class learner here; DOGMA's own tally counts f_y <= f_r (ties too).

Threshold search (``eta=None``): bisection on log eta over [1e-6, 1], at most 12 runs on one
stream, stopping at the first eta whose final #SV is within max(2, 0.02 B) of ``budget``; if none
is, the completed run closest to B wins (if every run ended above B, the largest eta tried). A
run is stopped as soon as its #SV exceeds B + tol (support vectors are never removed, so it can
only end above). The holdout protocol calls :meth:`PRJTRNpp.tune` with the stream of permutation
1 and the chosen eta is then used for every permutation (the spec's protocol); results are cached
per process, keyed by the data, the stream and the parameters, so the other permutations do not
repeat the search. Without ``tune`` (plain ``fit``/``run``), the search runs on the stream being
trained on. Data drawn afresh per repetition (``draws:``) are different data in every
repetition, so there the search runs once per repetition, on its permutation-1 stream.

No library implements the multi-class Projectron++; the loop is compiled with numba on the shared
kernel rows of ``kernels.py``.
"""
from __future__ import annotations

import hashlib
import math
from collections import OrderedDict

import numpy as np
from numba import njit

from ..base import SIGMA
from ...compute.kernels import JIT, kernel_row, store_row
from ...compute.params import Num
from ..support import SupportVectorLearner
from ...compute.tasks import top_two

EPS = float(np.finfo(np.float64).eps)  # MATLAB's eps: a residual below it projects, per class
ETA_RANGE = (1e-6, 1.0)
MAX_SEARCH_RUNS = 12
IEEE = dict(JIT, error_model="numpy")
GROW = -1  # returned by the compiled loop when a buffer must grow before the next step


def budget_tolerance(budget: int) -> float:
    """How far the final #SV may lie from B (spec 4): max(2, 0.02 B)."""
    return max(2.0, 0.02 * budget)


@njit(**IEEE)
def _project_coeffs(minv_c, idx_c, n_c, krow, q):
    """q = M_c k_{S_c}(x) (into ``q``); returns delta_c = max(1 - k' q, 0), 1 if S_c is empty."""
    if n_c == 0:
        return 1.0
    kq = 0.0
    for a in range(n_c):
        acc = 0.0
        row = minv_c[a]
        for b in range(n_c):
            acc += row[b] * krow[idx_c[b]]
        q[a] = acc
    for a in range(n_c):
        kq += krow[idx_c[a]] * q[a]
    d = 1.0 - kq
    return d if d > 0.0 else 0.0


@njit(**IEEE)
def _grow_inverse(minv_c, n_c, q, delta):
    """M <- [[M, 0], [0, 0]] + [q; -1][q; -1]' / delta (spec 1.5's block formula); n_c >= 0."""
    if n_c == 0:
        minv_c[0, 0] = 1.0 / delta  # Kii^-1 with Kii = 1 (Gaussian)
        return
    for a in range(n_c):
        qa = q[a]
        for b in range(n_c):
            minv_c[a, b] += qa * q[b] / delta
        minv_c[a, n_c] = -qa / delta
        minv_c[n_c, a] = -qa / delta
    minv_c[n_c, n_c] = 1.0 / delta


@njit(**IEEE)
def play(xs, sqn, y, order, start, stop, sv, sv_sqn, alpha, size, counts, inv2s2, krow, scores,
         eta, minv, cls_idx, cls_n, q_y, q_r, abort_above):
    """Steps ``order[start:stop]``; returns the position reached: ``stop`` when done, a smaller
    position when a buffer is full (the caller grows it and continues from there), or -1 when
    #SV exceeded ``abort_above`` (> 0; the threshold search's early stop)."""
    c = alpha.shape[1]
    cap = sv.shape[0]
    capc = minv.shape[1]
    for ti in range(start, stop):
        m = size[0]
        if m + 1 > cap:
            return ti
        for k in range(c):
            if cls_n[k] + 1 > capc:
                return ti
        i = order[ti]
        yi = y[i]
        kernel_row(xs, i, sqn[i], sv, sv_sqn, m, inv2s2, krow)
        for k in range(c):
            scores[k] = 0.0
        for j in range(m):
            kj = krow[j]
            for k in range(c):
                scores[k] += alpha[j, k] * kj
        y_hat, r = top_two(scores, yi)  # ties to the lowest index, as MATLAB's max
        counts[0] += 1
        if y_hat != yi:
            counts[1] += 1
        if r < 0:
            continue  # a single class: nothing to separate
        fy = scores[yi]
        fr = scores[r]
        if not fy < fr + 1.0:
            continue
        ny = cls_n[yi]
        nr = cls_n[r]
        dy = _project_coeffs(minv[yi], cls_idx[yi], ny, krow, q_y)
        dr = _project_coeffs(minv[r], cls_idx[r], nr, krow, q_r)
        if fy > fr:  # margin error: a projected step, never an addition
            loss = 1.0 - fy + fr
            delta = dy + dr
            # eta = 0: delta / 0 is inf (or nan), so the step is never taken (as in MATLAB)
            if eta > 0.0 and loss - delta / (2.0 * eta) > 0.0:
                tau = loss / (2.0 - delta)
                if tau > 1.0:
                    tau = 1.0
                t2 = 2.0 * (loss - delta / (2.0 * eta)) / (2.0 - delta)
                if t2 < tau:
                    tau = t2
                counts[2] += 1
                for a in range(ny):
                    alpha[cls_idx[yi, a], yi] += tau * q_y[a]
                for a in range(nr):
                    alpha[cls_idx[r, a], r] -= tau * q_r[a]
            continue
        # mistake
        counts[2] += 1
        both_small = dy <= eta and dr <= eta
        new_column = dy > eta or dr > eta
        if new_column:
            store_row(xs, i, sqn[i], sv, sv_sqn, m)
            for k in range(c):
                alpha[m, k] = 0.0
        if both_small or dy < EPS:
            for a in range(ny):
                alpha[cls_idx[yi, a], yi] += q_y[a]
        else:
            _grow_inverse(minv[yi], ny, q_y, dy)
            cls_idx[yi, ny] = m
            cls_n[yi] = ny + 1
            alpha[m, yi] = 1.0
        if both_small or dr < EPS:
            for a in range(nr):
                alpha[cls_idx[r, a], r] -= q_r[a]
        else:
            _grow_inverse(minv[r], nr, q_r, dr)
            cls_idx[r, nr] = m
            cls_n[r] = nr + 1
            alpha[m, r] = -1.0
        if new_column:
            size[0] = m + 1
            if abort_above > 0 and m + 1 > abort_above:
                return -1
    return stop


# ----------------------------------------------------------------------------- search cache
_SEARCHES: OrderedDict = OrderedDict()  # key -> (eta, history); small LRU, per process
_CACHE_SIZE = 64


def _fingerprint(stream, y, order) -> str:
    h = hashlib.blake2b(digest_size=16)
    for a in (stream.dense, stream.indptr, stream.indices, stream.values, np.asarray(y), order):
        a = np.ascontiguousarray(a)
        h.update(str((a.dtype.str, a.shape)).encode())
        h.update(a.view(np.uint8).reshape(-1) if a.size else b"")
    return h.hexdigest()


ETA = Num(0, math.inf, "left", allow_none=True)
TARGET = Num(1, math.inf, "left", integer=True)


class PRJTRNpp(SupportVectorLearner):
    """Multi-class Projectron++ with a threshold (DOGMA ``k_projectron2_multi_train.m``).

    Parameters
    ----------
    sigma : Gaussian kernel width, kappa = exp(-||x-y||^2 / (2 sigma^2)).
    eta : threshold on the squared projection residual (>= 0); None (default) = search it so that
        the run ends with ``budget`` support vectors (bisection on log eta over [1e-6, 1], at most
        12 runs, tolerance max(2, 0.02 B)).
    budget : the target #SV B of the search (not a cap: with a fixed eta the model grows freely).

    After training: ``eta_`` (the threshold used), ``threshold_search_`` (None when ``eta`` was
    given, else the search: every run's eta and #SV, and the choice), ``support_size_``.
    """

    name = "prjtrn++"
    task = "multiclass"
    budgeted = False
    randomized = False
    # Measured in check_classifiers_train (300 standardized 3-class blobs, one pass, sigma = 8):
    # the default target B = 100 is out of reach there (the search ends at eta = 1e-6 with 18 SVs)
    # and the training accuracy is 0.82, below the 0.83 bar; the 2-class problem gives 0.94.
    poor_score = "one pass over 300 blobs at sigma = 8 cannot reach B = 100 SVs; 0.82 accuracy"
    _params = {"sigma": SIGMA, "eta": ETA, "budget": TARGET}

    def __init__(self, *, sigma: float | str = "scale", eta: float | None = None, budget: int = 100):
        self.sigma = sigma
        self.eta = eta
        self.budget = budget

    # ----------------------------------------------------------------- threshold search
    def tune(self, X, y, order=None) -> dict:
        """Search the threshold on the stream ``X[order]`` (labels as :meth:`run` takes them) and
        fix it for every later fit/run of this instance (the holdout protocol passes the stream
        of permutation 1, so every permutation uses that eta). Returns the search record."""
        stream, y, order = self._run_inputs(X, y, order)  # run()'s checks, before compiled code
        labels = self._labels_for_search(y)
        n_classes = 2 if self.task == "binary" else int(labels.max()) + 1 if labels.size else 1
        record = self._search(stream, labels, order, max(n_classes, getattr(self, "n_classes_", 0)))
        self.eta_ = float(record["eta"])
        self.threshold_search_ = record
        return record

    def _labels_for_search(self, y):
        if self.task == "binary":
            return (y > 0).astype(np.int64)
        return y.astype(np.int64)

    def _search(self, stream, labels, order, n_classes: int) -> dict:
        self._validate_params()
        B = int(self.budget)
        tol = budget_tolerance(B)
        key = (_fingerprint(stream, labels, order), float(self.sigma_), B, n_classes)
        if key in _SEARCHES:
            _SEARCHES.move_to_end(key)
            return dict(_SEARCHES[key], cached=True)
        lo, hi = math.log(ETA_RANGE[0]), math.log(ETA_RANGE[1])
        runs = []
        chosen = None
        abort = int(math.floor(B + tol))  # more than this many SVs: already too many
        for _ in range(MAX_SEARCH_RUNS):
            eta = math.exp(0.5 * (lo + hi))
            n_sv, stopped = self._count_support(stream, labels, order, eta, n_classes, abort)
            runs.append({"eta": eta, "support": n_sv, "stopped_early": stopped})
            if abs(n_sv - B) <= tol and not stopped:
                chosen = eta
                break
            if n_sv > B:
                lo = math.log(eta)  # too many SVs: a larger threshold projects more
            else:
                hi = math.log(eta)
        within = chosen is not None
        if chosen is None:
            done = [r for r in runs if not r["stopped_early"]]
            if done:  # the completed run closest to B
                chosen = min(done, key=lambda r: (abs(r["support"] - B), r["eta"]))["eta"]
            else:  # every run ended above B + tol: the largest eta tried stores the fewest
                chosen = max(r["eta"] for r in runs)
        record = {"eta": chosen, "target": B, "tolerance": tol, "within_tolerance": within,
                  "runs": runs, "n_steps": int(len(order))}
        _SEARCHES[key] = record
        while len(_SEARCHES) > _CACHE_SIZE:
            _SEARCHES.popitem(last=False)
        return dict(record, cached=False)

    def _count_support(self, stream, labels, order, eta, n_classes, abort) -> tuple[int, bool]:
        probe = type(self)(sigma=self.sigma_, eta=eta, budget=self.budget)
        probe.sigma_ = self.sigma_
        probe.n_classes_ = n_classes
        probe.classes_ = np.arange(n_classes)
        probe._reset(stream.n_features, min(len(order), abort + 2), None)
        done = probe._advance(stream, labels, order, 0, len(order), abort_above=abort)
        return probe.support_size_, not done

    # ----------------------------------------------------------------- learner hooks
    def _prepare_run(self, X, y, order) -> None:
        # called by run() after its length/order checks, before any compiled code
        if self.eta is None and getattr(self, "eta_", None) is None:
            self.tune(X, y, order)  # no tune() before: search on this stream

    def _learn(self, X, y, first: bool):
        if first and self.eta is None:  # fit / first partial_fit: search on this data
            self.tune(X, self._encode_labels(y))
        return super()._learn(X, y, first)

    def _alpha_shape(self, capacity: int) -> tuple:
        return (capacity, self.n_classes_)  # binary too: 2 classes

    def _allocate(self, n_features, capacity, source):
        if self.task == "binary":
            self.n_classes_ = 2
        if self.eta is not None:
            self.eta_ = float(self.eta)
            self.threshold_search_ = None
        elif getattr(self, "eta_", None) is None:
            raise ValueError("PRJTRNpp: eta is None and no threshold search has run; call tune() "
                             "or fit()/run(), which search it")
        c = self.n_classes_
        self._allocate_support(n_features, min(max(int(capacity), 1), 1024))
        self.order_ = np.arange(self.sv_.shape[0], dtype=np.int64)
        capc = 16
        self.minv_ = np.zeros((c, capc, capc))
        self.cls_idx_ = np.zeros((c, capc), dtype=np.int64)
        self.cls_n_ = np.zeros(c, dtype=np.int64)
        self._q = np.zeros((2, capc))
        self._scores_buf = np.zeros(c)

    def _grow(self) -> None:
        m, cap = self.support_size_, self.sv_.shape[0]
        if m + 1 > cap:
            SupportVectorLearner._ensure_capacity(self, 2 * cap - m)  # doubles the vector buffers
            self.order_ = np.arange(self.sv_.shape[0], dtype=np.int64)
        capc = self.minv_.shape[1]
        if int(self.cls_n_.max()) + 1 > capc:
            c, new = self.n_classes_, 2 * capc
            minv = np.zeros((c, new, new))
            minv[:, :capc, :capc] = self.minv_
            idx = np.zeros((c, new), dtype=np.int64)
            idx[:, :capc] = self.cls_idx_
            self.minv_, self.cls_idx_, self._q = minv, idx, np.zeros((2, new))

    def _advance(self, stream, labels, order, start, stop, abort_above=0) -> bool:
        """Play steps start..stop, growing buffers as needed; False if stopped by abort_above."""
        pos = start
        while pos < stop:
            pos = play(stream.xs, stream.sqnorms, labels, order, pos, stop, self.sv_, self.sv_sqn_,
                       self.alpha_, self.size_, self.counts_, 1.0 / (2.0 * self.sigma_ ** 2),
                       self.krow_, self._scores_buf, self.eta_, self.minv_, self.cls_idx_,
                       self.cls_n_, self._q[0], self._q[1], int(abort_above))
            if pos < 0:
                return False
            if pos < stop:
                self._grow()
        return True

    def _ensure_capacity(self, extra: int) -> None:
        """Buffers grow inside :meth:`_play` when they fill (the #SV is not known in advance)."""

    def _play(self, stream, y, order, start, stop):
        self._advance(stream, self._labels_for_search(np.asarray(y)), order, start, stop)

    def _scores(self, stream):
        m = self.support_size_
        out = np.zeros((stream.n_samples, self.n_classes_))
        if m == 0:
            return out
        from ...compute.kernels import gaussian_gram

        X = stream.csr if stream.is_sparse else stream.dense
        step = max(1, int(2 ** 24 // m))  # row blocks: no n x #SV matrix for a large test set
        for a in range(0, stream.n_samples, step):
            out[a:a + step] = gaussian_gram(X[a:a + step], self.sv_[:m], self.sigma_) @ self.alpha_[:m]
        return out

    def memory_estimate(self, n_samples: int, n_features: int, n_outputs: int = 1) -> dict:
        """Per-class inverses: each class list holds at most ~B vectors (buffers double: < 2B)."""
        c = max(int(n_outputs), 2)
        L = 2 * int(self.budget) + 16
        return {f"per-class inverse Gram matrices ({c} x {L} x {L})": 8 * c * L * L,
                f"support vectors ({L} x {n_features})": 8 * L * (n_features + c)}


class BinaryPRJTRNpp(PRJTRNpp):
    """PRJTRN++ on binary data (-1/+1) run as 2 classes (class 0 / class 1), as the Table 1
    checkerboard; ``decision_function`` = f_1 - f_0."""

    task = "binary"
    poor_score = ""  # 0.94 on check_classifiers_train's 2-class problem

    def _scores(self, stream):
        s = PRJTRNpp._scores(self, stream)
        return s[:, 1] - s[:, 0]
