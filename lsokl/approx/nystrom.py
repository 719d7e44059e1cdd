"""Nys: the standard Nystrom approximation with rank truncation (Williams and Seeger 2001; the
MEKA paper's baseline, as in Mu Li's ``nys.m``).

m = 2k landmarks drawn uniformly without replacement, M = K(landmarks, landmarks), the top-k
eigenpairs of M, and G~ = C M_k^+ C' with C = K(X, landmarks), i.e. Z = C Q_k Lambda_k^(-1/2).

The feature map is NOGD's :class:`lsokl.compute.features.NystromMap` (the same code maps NOGD's
frozen support vectors), and the landmark Gram matrix is :func:`lsokl.compute.kernels.gaussian_block`.
scikit-learn's ``Nystroem`` does not truncate to rank k (it keeps all m components), so it is
not this baseline.
"""
from __future__ import annotations

import numpy as np

from ..compute.features import NystromMap
from ..compute.kernels import gaussian_block, kernel_block, row_sqnorms
from ..compute.params import Num
from ..compute.stream import Stream
from ..compute.xp import asarray, is_numpy, namespace, take_rows
from .base import LowRankApproximation, timed

CHUNK = 4096  # rows per kernel block when mapping many points (bounds the block's memory)


def eigen_abs(gram: np.ndarray, rank: int):
    """Top-``rank`` eigenpairs of a symmetric PSD Gram matrix with |lambda| (= its SVD, as the
    authors' ``svd(M)``: roundoff-negative eigenvalues become their absolute values)."""
    lam, V = NystromMap.eigen(gram, rank)
    return np.abs(lam), V


class KernelRowsMap:
    """:class:`~lsokl.compute.features.NystromMap`'s interface (``sv``, ``MT``, ``features``) for
    a kernel other than the Gaussian: z(x) = M [k(x, s)]_{s in S} with the block computed by
    :func:`lsokl.compute.kernels.kernel_block` (the Laplacian kernel's L1 distances have no
    ||a||^2 + ||b||^2 - 2 a.b form for the compiled Gaussian rows)."""

    def __init__(self, sv: np.ndarray, M: np.ndarray, gamma: float, kernel: str):
        self.sv = np.ascontiguousarray(sv, dtype=np.float64)
        self.MT = np.ascontiguousarray(M.T, dtype=np.float64)
        self.gamma, self.kernel = float(gamma), kernel

    def features(self, stream, idx) -> np.ndarray:
        return np.ascontiguousarray(kernel_block(stream.dense[idx], self.sv, self.gamma, self.kernel) @ self.MT)


def landmark_map(landmarks: np.ndarray, gamma: float, rank: int, eigenpairs=None,
                 floor: float | None = None, kernel: str = "gaussian"):
    """The rank-``rank`` Nystrom feature map on ``landmarks``: z(x) = Lambda^-1/2 V' k(x, landmarks).

    ``eigenpairs``: a function gram -> (lam, V) (default: exact top-k, :func:`eigen_abs`).
    ``floor``: drop eigenpairs below floor * lambda_max (None: keep all, as the authors do).
    ``kernel``: ``gaussian`` (NOGD's compiled :class:`NystromMap`) or ``laplacian``
    (:class:`KernelRowsMap`).
    """
    landmarks = np.ascontiguousarray(landmarks, dtype=np.float64)
    gram = kernel_block(landmarks, landmarks, gamma, kernel)
    lam, V = (eigenpairs or eigen_abs)(gram, rank)
    if floor is not None:
        keep = lam > floor * lam.max()
        lam, V = lam[keep], V[:, keep]
    M = (V / np.sqrt(lam)).T  # k x m
    if kernel != "gaussian":
        return KernelRowsMap(landmarks, M, gamma, kernel)
    return NystromMap(landmarks, row_sqnorms(landmarks), M, 1.0 / np.sqrt(2.0 * gamma))


def map_rows(fmap: NystromMap, stream: Stream, idx=None) -> np.ndarray:
    """The map's features of rows ``idx`` of ``stream`` (all rows by default), in chunks."""
    idx = np.arange(stream.n_samples) if idx is None else np.asarray(idx, dtype=np.int64)
    out = np.empty((len(idx), fmap.MT.shape[1]))
    for a in range(0, len(idx), CHUNK):
        out[a:a + CHUNK] = fmap.features(stream, idx[a:a + CHUNK])
    return out


def gaussian_block_xp(A, B, gamma: float):
    """exp(-gamma ||a - b||^2) for an Array API A and B (their namespace and device): the
    squared distances as ||a||^2 + ||b||^2 - 2 a.b with rounding residue clamped at 0, as
    :func:`lsokl.compute.kernels.gaussian_block` computes them."""
    xp = namespace(A)
    d2 = xp.sum(A * A, axis=1)[:, None] + xp.sum(B * B, axis=1)[None, :] - 2.0 * (A @ B.T)
    return xp.exp(-gamma * xp.clip(d2, min=0.0))


class NystromFamily(LowRankApproximation):
    """Shared by Nys, RNys, KNys: landmarks -> rank-k map -> Z. Subclasses pick the landmarks
    (``_landmarks``) and the eigen-solver (``_eigenpairs``)."""

    _params = {**LowRankApproximation._params, "landmark_factor": Num(1, np.inf, "left")}

    def __init__(self, *, rank: int = 128, gamma: float = 1.0, landmark_factor: float = 2.0,
                 kernel: str = "gaussian", random_state=None):
        self.rank = rank
        self.gamma = gamma
        self.landmark_factor = landmark_factor
        self.kernel = kernel
        self.random_state = random_state

    def n_landmarks(self, n: int) -> int:
        return int(min(n, round(self.landmark_factor * self.rank)))

    def _eigenpairs(self, rng):
        return eigen_abs

    def _fit(self, X, rng):
        n = X.shape[0]
        self._check_rank(n, int(self.rank))
        with timed(self.timings_, "landmarks", self.cpu_timings_):
            landmarks = self._landmarks(X, rng)
        self._check_rank(len(landmarks), int(self.rank), what="landmarks")
        with timed(self.timings_, "factor", self.cpu_timings_):
            self.map_ = landmark_map(landmarks, float(self.gamma), int(self.rank),
                                     self._eigenpairs(rng), kernel=self.kernel)
            self.Z_ = map_rows(self.map_, Stream(X))

    def _landmarks(self, X, rng):
        idx = rng.choice(X.shape[0], self.n_landmarks(X.shape[0]), replace=False)
        if not is_numpy(X):
            return take_rows(X, np.sort(idx))
        return X[np.sort(idx)]

    def _fit_xp(self, X, rng):
        """The same landmarks (indices drawn by numpy from the same seed; KNys's k-means on the
        host over its at most ``kmeans_sample`` rows), then the landmark Gram matrix, its top-k
        eigenpairs (|lambda|, as :func:`eigen_abs`) and Z = K(X, L) V Lambda^-1/2 in X's namespace,
        in chunks of rows, on X's device."""
        xp = namespace(X)
        n = X.shape[0]
        self._check_rank(n, int(self.rank))
        with timed(self.timings_, "landmarks", self.cpu_timings_):
            L = self._landmarks(X, rng)
            L = L if not is_numpy(L) else asarray(L, X)
        self._check_rank(int(L.shape[0]), int(self.rank), what="landmarks")
        with timed(self.timings_, "factor", self.cpu_timings_):
            gamma = float(self.gamma)
            lam, V = xp.linalg.eigh(gaussian_block_xp(L, L, gamma))
            lam, V = xp.flip(lam, axis=0)[:int(self.rank)], xp.flip(V, axis=1)[:, :int(self.rank)]
            self.landmarks_ = L
            self.M_ = V / xp.sqrt(xp.abs(lam))  # m x k
            self.Z_ = None
            self.Z_ = self.transform(X)

    def transform(self, X_new) -> np.ndarray:
        from .base import as_dense

        if not is_numpy(X_new) or self._factor_like() is not None:  # the Array API path
            X_new = self._dense_like(X_new)
            xp, n = namespace(X_new), int(X_new.shape[0])
            parts = [gaussian_block_xp(X_new[a:min(a + CHUNK, n), ...], self.landmarks_, float(self.gamma)) @ self.M_
                     for a in range(0, n, CHUNK)]
            return parts[0] if len(parts) == 1 else xp.concat(parts, axis=0)
        return map_rows(self.map_, Stream(as_dense(X_new)))


class Nystrom(NystromFamily):
    """Nys: uniform landmarks (m = 2k), rank-k truncation."""

    name = "nystrom"
    display = "Nys"
    array_api_support = True
