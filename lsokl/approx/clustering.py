"""The k-means variants the MEKA paper's methods use, in NumPy/BLAS.

* :func:`meka_kmeans`: the authors' ``mykmeans.cpp`` (MEKA spec 1.1): random initial labels, at
  most 10 Lloyd iterations, empty clusters repaired by moving random points out of clusters with
  more than one member, early stop when no label changes.
* :func:`eff_kmeans`: Zhang and Kwok's ``eff_kmeans.m`` for KNys: 2k random points as initial
  centres, 5 Lloyd iterations, empty clusters dropped.

scikit-learn's ``KMeans`` (k-means++ seeding, ``n_init`` restarts) is a different algorithm, so it
is used only where the paper used MATLAB's ``kmeans`` (BKA-SVM). Distances are
||x||^2 - 2 x.c + ||c||^2 (one BLAS product per chunk when assigning all points; MEKA's Lloyd
iterations are one compiled pass each, as ``mykmeans.cpp``); ties go to the lowest index.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..compute.kernels import JIT, row_sqnorms

CHUNK = 65536


def nearest_centre(X: np.ndarray, centres: np.ndarray, X_sqn: np.ndarray | None = None) -> np.ndarray:
    """Index of the nearest centre (squared Euclidean) for every row of X, in chunks."""
    c2 = row_sqnorms(centres)
    out = np.empty(X.shape[0], dtype=np.int64)
    for a in range(0, X.shape[0], CHUNK):
        block = X[a:a + CHUNK]
        d = -2.0 * (block @ centres.T)
        d += c2[None, :]  # ||x||^2 is the same for every centre: it cannot change the argmin
        out[a:a + CHUNK] = np.argmin(d, axis=1)
    return out


def label_means(X: np.ndarray, labels: np.ndarray, c: int) -> np.ndarray:
    counts = np.bincount(labels, minlength=c).astype(np.float64)
    sums = np.empty((c, X.shape[1]))
    for j in range(X.shape[1]):  # one bincount per feature: far faster than np.add.at
        sums[:, j] = np.bincount(labels, weights=X[:, j], minlength=c)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts[:, None]


@njit(**JIT)
def _centres(X, labels, C, counts):
    """C = the label means (NaN rows for empty clusters), counts = the cluster sizes."""
    C[:] = 0.0
    counts[:] = 0
    for i in range(X.shape[0]):
        lab = labels[i]
        counts[lab] += 1
        for f in range(X.shape[1]):
            C[lab, f] += X[i, f]
    for j in range(C.shape[0]):
        for f in range(C.shape[1]):
            C[j, f] = C[j, f] / counts[j] if counts[j] > 0 else np.nan


@njit(**JIT)
def _assign(X, C, counts, labels):
    """Move every point to its nearest non-empty centre (lowest index on ties); returns how many
    labels changed (``mykmeans.cpp``'s ``change``, counted before the empty-cluster repair)."""
    k, d = C.shape
    c2 = np.zeros(k)
    for j in range(k):
        for f in range(d):
            c2[j] += C[j, f] * C[j, f]
    changed = 0
    for i in range(X.shape[0]):
        best, arg = np.inf, -1
        for j in range(k):
            if counts[j] == 0:
                continue
            dot = 0.0
            for f in range(d):
                dot += X[i, f] * C[j, f]
            dist = c2[j] - 2.0 * dot
            if dist < best:
                best, arg = dist, j
        if labels[i] != arg:
            labels[i] = arg
            changed += 1
    return changed


def meka_kmeans(X: np.ndarray, c: int, rng: np.random.Generator, max_iter: int = 10):
    """(labels, centres) of the authors' Lloyd k-means on X (see the module docstring)."""
    n = X.shape[0]
    if c > n:
        raise ValueError(f"clusters={c} is larger than the number of points clustered ({n})")
    X = np.ascontiguousarray(X, dtype=np.float64)
    labels = rng.integers(0, c, size=n).astype(np.int64)
    C, counts = np.empty((c, X.shape[1])), np.empty(c, dtype=np.int64)
    for _ in range(max_iter):
        _centres(X, labels, C, counts)
        changed = _assign(X, C, counts, labels)
        _repair_empty(labels, c, rng)
        if not changed:
            break
    _centres(X, labels, C, counts)
    return labels, C.copy()


def _repair_empty(labels: np.ndarray, c: int, rng) -> None:
    counts = np.bincount(labels, minlength=c)
    for e in np.flatnonzero(counts == 0):
        while True:
            i = int(rng.integers(0, labels.shape[0]))
            if counts[labels[i]] > 1:
                counts[labels[i]] -= 1
                labels[i] = e
                counts[e] = 1
                break


def eff_kmeans(X: np.ndarray, m: int, rng: np.random.Generator, iterations: int = 5) -> np.ndarray:
    """Centres of ``eff_kmeans``: m random points, at most ``iterations`` Lloyd steps, empties dropped.

    Stops early at a fixed point (a step that leaves every centre exactly as it was: every further
    step would repeat it), so the result equals ``iterations`` steps while a huge count costs only
    the steps until convergence."""
    if m > X.shape[0]:
        raise ValueError(f"{m} centres requested from {X.shape[0]} points")
    centres = X[rng.choice(X.shape[0], m, replace=False)].copy()
    for _ in range(iterations):
        labels = nearest_centre(X, centres)
        counts = np.bincount(labels, minlength=centres.shape[0])
        new = label_means(X, labels, centres.shape[0])[counts > 0]
        if new.shape == centres.shape and np.array_equal(new, centres):
            break
        centres = new
    return centres
