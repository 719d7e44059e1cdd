"""The k-means variants the MEKA paper's methods use, in NumPy/BLAS.

* :func:`meka_kmeans`: the authors' ``mykmeans.cpp`` (MEKA spec 1.1): random initial labels, at
  most 10 Lloyd iterations, empty clusters repaired by moving random points out of clusters with
  more than one member, early stop when no label changes.
* :func:`eff_kmeans`: Zhang and Kwok's ``eff_kmeans.m`` for KNys: 2k random points as initial
  centres, 5 Lloyd iterations, empty clusters dropped.

scikit-learn's ``KMeans`` (k-means++ seeding, ``n_init`` restarts) is a different algorithm, so it
is used only where the paper used MATLAB's ``kmeans`` (BKA-SVM). Distances are
||x||^2 - 2 x.c + ||c||^2 by one BLAS product per chunk; ties go to the lowest index.
"""
from __future__ import annotations

import numpy as np

from ..learners.kernels import row_sqnorms

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


def meka_kmeans(X: np.ndarray, c: int, rng: np.random.Generator, max_iter: int = 10):
    """(labels, centres) of the authors' Lloyd k-means on X (see the module docstring)."""
    n = X.shape[0]
    if c > n:
        raise ValueError(f"clusters={c} is larger than the number of points clustered ({n})")
    labels = rng.integers(0, c, size=n)
    for _ in range(max_iter):
        centres = label_means(X, labels, c)
        alive = np.flatnonzero(np.bincount(labels, minlength=c) > 0)  # an empty cluster attracts nobody
        new = alive[nearest_centre(X, centres[alive])]
        _repair_empty(new, c, rng)
        changed = np.any(new != labels)
        labels = new
        if not changed:
            break
    return labels, label_means(X, labels, c)


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
    """Centres of ``eff_kmeans``: m random points, ``iterations`` Lloyd steps, empties dropped."""
    if m > X.shape[0]:
        raise ValueError(f"{m} centres requested from {X.shape[0]} points")
    centres = X[rng.choice(X.shape[0], m, replace=False)].copy()
    for _ in range(iterations):
        labels = nearest_centre(X, centres)
        counts = np.bincount(labels, minlength=centres.shape[0])
        centres = label_means(X, labels, centres.shape[0])[counts > 0]
    return centres
