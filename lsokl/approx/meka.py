"""MEKA: Memory Efficient Kernel Approximation (Si, Hsieh, Dhillon, JMLR 18, 2017), as the
authors' released MATLAB ``meka.m`` computes it (spec: ``docs/MEKA.md`` section 1).

1. **Clustering (TC).** The authors' k-means (:func:`~lsokl.approx.clustering.meka_kmeans`) on
   min(n, 10000) sampled points into c clusters; every point goes to its nearest centre; the
   c x c kernel D between centres decides which off-diagonal blocks are dropped (``eta``: the
   authors' fraction rule, or ``eps``: the paper's absolute threshold).
2. **Ranks.** R allocates the total rank c k proportionally to the cluster sizes
   (``k_alloc="prop"``: ceil(c k n_s / n), the excess taken from the last cluster, clipped to
   n_s); ``"equal"`` gives every cluster rank k (the paper's sec. 5.1 wording); ``"eig"`` is the paper's strategy (iii): the top c k eigenvalues
   pooled over every cluster's 2k landmark kernel decide each k_s (Fig. 6).
3. **Diagonal blocks (TW).** Per cluster, a rank-k_s Nystrom map on 2 k_s landmarks drawn from
   the cluster: W^(s) = E_s Q Sigma^-1/2 (the map NOGD uses, :func:`lsokl.approx.nystrom.landmark_map`).
   ``basis="knys"``/``"rnys"`` (Fig. 4): the cluster's 2 k_s k-means centroids as landmarks, or a
   randomised SVD of the landmark kernel (p = 10, q = 1), instead of Nys.
4. **Links (TL).** For each kept pair s < t, 4 k_s sampled rows of cluster s and 4 k_t of
   cluster t (fresh for every pair): L_st = pinv(A'A) A' G^ B pinv(B'B) with MATLAB's
   ``pinv(., 1e-6)`` absolute cutoff; L_ts = L_st'.
5. G~ = W L W' with W block-diagonal (rows in the original order) and L_ss = I.

The paper's k is the rank *per cluster*: ``rank`` here is that k, as for the baselines (the
"same memory" rule), and the total rank is ``clusters * rank`` (R's ``k``; ``total_rank``
overrides it). ``kernel="laplacian"`` builds every block (centres, diagonal maps, links) with
exp(-gamma ||x - y||_1) instead (paper Fig. 11; the clustering stays Euclidean k-means). ``psd=True`` clips L's negative eigenvalues (MEKA-PSD, paper sec. 7.1), which
Table 8's kernel ridge regression needs (spec section 3). ``kmeans="kmeans++"`` (a variant, not R)
clusters with scikit-learn's k-means++ instead of the authors' 10 Lloyd steps from random labels,
whose partitions are visibly worse on pendigit (k-means objective 7570-8100 against 7530).
Memory = sum_s n_s k_s + sum over kept (s, t), diagonal included, of k_s k_t.

**Array API path** (issue 28, :mod:`lsokl.compute.xp`): ``fit`` given a torch / CuPy /
``array_api_strict`` array keeps the factor on that array's device (``_fit_xp``). The draws are
numpy's from the same seed, in the same order (k-means starts, landmark and link positions). The
clustering runs on the host over the sampled rows (at most ``kmeans_sample``: all of X when n is
not larger), every point's nearest centre is found on the device (the n labels then come to the
host: they define the partition), and the per-cluster eigendecompositions of the 2 k_s x 2 k_s
landmark Gram matrices and the link solves pinv(A'A) A' G^ B pinv(B'B) (4 k rows each) run on
the host with the numpy code above, then move to the device. The n x k_s blocks W_s and L live on
the device; the rows are kept there sorted by cluster (a permutation; its inverse applied with
``take``, since the standard has no integer-array assignment), so every block product of
``matvec``, ``solve``, ``rows``, ``cross`` and ``cross_matvec`` is a slice.
"""
from __future__ import annotations

import math

import numpy as np

from ..compute.kernels import gaussian_block, kernel_block, row_sqnorms
from ..compute.params import Num, OneOf
from ..compute.stream import Stream
from ..compute.xp import asarray, device, is_numpy, namespace, take_rows, to_numpy
from .base import KernelApproximation, as_dense, timed
from .clustering import eff_kmeans, meka_kmeans, nearest_centre
from .nystrom import CHUNK, gaussian_block_xp, landmark_map, map_rows
from .rnys import randomized_eigenpairs

PINV_CUTOFF = 1e-6  # MATLAB pinv(X, 1e-6) in meka.m: singular values <= 1e-6 are zeroed


def pinv_solve(A: np.ndarray, M: np.ndarray, right: bool = False, cutoff: float = PINV_CUTOFF) -> np.ndarray:
    """pinv(A) @ M (or M @ pinv(A) with ``right``) for a symmetric PSD A, without forming pinv(A)
    when every eigenvalue of A is above the cutoff (then pinv = inverse: two Cholesky solves)."""
    import scipy.linalg

    if scipy.linalg.eigvalsh(A, check_finite=False)[0] > cutoff:
        try:
            factor = scipy.linalg.cho_factor(A, check_finite=False)
            if right:  # M pinv(A) = (pinv(A) M')' for symmetric A
                return scipy.linalg.cho_solve(factor, M.T, check_finite=False).T
            return scipy.linalg.cho_solve(factor, M, check_finite=False)
        except np.linalg.LinAlgError:  # not numerically positive definite after all
            pass
    P = pinv_psd(A, cutoff)
    return M @ P if right else P @ M


def pinv_psd(A: np.ndarray, cutoff: float = PINV_CUTOFF) -> np.ndarray:
    """Pseudo-inverse of a symmetric PSD matrix with an absolute singular-value cutoff.

    The eigenvalues alone come first (no eigenvectors: a few times cheaper); when all of them are
    above the cutoff the pseudo-inverse is the inverse, computed by Cholesky."""
    import scipy.linalg

    lam = scipy.linalg.eigvalsh(A, check_finite=False)
    if lam[0] > cutoff:
        try:
            factor = scipy.linalg.cho_factor(A, check_finite=False)
            return scipy.linalg.cho_solve(factor, np.eye(A.shape[0]), check_finite=False)
        except np.linalg.LinAlgError:  # not numerically positive definite after all
            pass
    lam, V = np.linalg.eigh(A)
    keep = np.abs(lam) > cutoff
    return (V[:, keep] / lam[keep]) @ V[:, keep].T


def dropped_pairs(D: np.ndarray, eta: float | None = None, eps: float | None = None) -> np.ndarray:
    """Boolean c x c mask of off-diagonal blocks set to zero (spec 1.2).

    ``eta`` (R): tau = the ceil((c^2 - c) eta)-th smallest of all c^2 entries of D (tau = 0 when
    eta = 0); block (s, t) is dropped iff D_st < tau (strict). ``eps`` (paper): dropped iff
    D_st <= eps."""
    c = D.shape[0]
    if eps is not None:
        drop = D <= eps
    else:
        mm = math.ceil((c * c - c) * eta)
        tau = 0.0 if mm == 0 else np.sort(D, axis=None)[mm - 1]
        drop = D < tau
    drop = drop | drop.T
    np.fill_diagonal(drop, False)
    return drop


def allocate_ranks(sizes: np.ndarray, total: int, how: str = "prop", per_cluster: int | None = None) -> np.ndarray:
    """Rank of every cluster (spec 1.3). ``prop``: ceil(total n_s / n), the excess subtracted
    from the last cluster, each clipped to n_s. ``equal``: ``per_cluster`` (or total // c) each,
    clipped to n_s."""
    sizes = np.asarray(sizes, dtype=np.int64)
    n = int(sizes.sum())
    if how == "equal":
        k = np.full(len(sizes), per_cluster if per_cluster is not None else total // len(sizes))
    else:
        k = np.ceil(total * sizes / n).astype(np.int64)
        k[-1] -= int(k.sum()) - total
    k = np.minimum(k, sizes)
    if np.any(k < 1):
        raise ValueError(f"rank allocation {k.tolist()} for cluster sizes {sizes.tolist()} leaves a "
                         "cluster without rank; use fewer clusters or a larger rank")
    return k


class MEKA(KernelApproximation):
    """MEKA with the authors' defaults (R ``meka.m``); see the module docstring."""

    name = "meka"
    display = "MEKA"
    array_api_support = True
    _params = {**KernelApproximation._params,
               "clusters": Num(1, np.inf, "left", integer=True),
               "total_rank": Num(1, np.inf, "left", integer=True, allow_none=True),
               "eta": Num(0, 1, "both"),
               "eps": Num(0, 1, "both", allow_none=True),
               "k_alloc": OneOf(("prop", "equal", "eig")),
               "basis": OneOf(("nys", "knys", "rnys")),
               "landmark_factor": Num(1, np.inf, "left"),
               "link_oversample": Num(1, np.inf, "left"),
               "kmeans_sample": Num(1, np.inf, "left", integer=True),
               "kmeans_iterations": Num(0, np.inf, "left", integer=True),
               "partition": OneOf(("kmeans", "random")),
               "kmeans": OneOf(("authors", "kmeans++")),
               "psd": OneOf((False, True))}

    def __init__(self, *, rank: int = 128, gamma: float = 1.0, clusters: int = 10,
                 total_rank: int | None = None, eta: float = 0.01, eps: float | None = None,
                 k_alloc: str = "prop", landmark_factor: float = 2.0, link_oversample: float = 4.0,
                 kmeans_sample: int = 10000, kmeans_iterations: int = 10,
                 partition: str = "kmeans", kmeans: str = "authors", psd: bool = False,
                 kernel: str = "gaussian", basis: str = "nys", random_state=None):
        self.rank = rank
        self.gamma = gamma
        self.clusters = clusters
        self.total_rank = total_rank
        self.eta = eta
        self.eps = eps
        self.k_alloc = k_alloc
        self.landmark_factor = landmark_factor
        self.link_oversample = link_oversample
        self.kmeans_sample = kmeans_sample
        self.kmeans_iterations = kmeans_iterations
        self.partition = partition
        self.kmeans = kmeans
        self.psd = psd
        self.kernel = kernel
        self.basis = basis
        self.random_state = random_state

    # ------------------------------------------------------------------ fit
    def _partition(self, X, rng, cluster):
        """The steps both fits share: the checks, the three draw streams, the clustering (by
        ``cluster(X, c, rng)``), the dropped link blocks, the members and ranks of every cluster.
        Returns (gamma, r_diag, r_link, members, sizes)."""
        n, c = X.shape[0], int(self.clusters)
        gamma = float(self.gamma)
        if c > n:
            raise ValueError(f"MEKA: clusters={c} is larger than the number of samples ({n})")
        total = int(self.total_rank) if self.total_rank is not None else c * int(self.rank)
        self._check_rank(n, total, key="clusters * rank" if self.total_rank is None else "total_rank")
        r_cluster, r_diag, r_link = rng.spawn(3)

        with timed(self.timings_, "clustering", self.cpu_timings_):
            cluster(X, c, r_cluster)
            self.centre_kernel_ = kernel_block(self.centres_, self.centres_, gamma, self.kernel)
            self.dropped_ = dropped_pairs(self.centre_kernel_, float(self.eta),
                                          None if self.eps is None else float(self.eps))
        members = [np.flatnonzero(self.labels_ == s) for s in range(c)]
        sizes = np.array([len(m) for m in members])
        if np.any(sizes == 0):
            raise ValueError(f"MEKA: a cluster is empty after assigning all points (sizes "
                             f"{sizes.tolist()}); use fewer clusters")
        self.ranks_ = allocate_ranks(sizes, total, self.k_alloc,
                                     None if self.total_rank is not None else int(self.rank))
        self.members_ = members
        self.offsets_ = np.concatenate([[0], np.cumsum(self.ranks_)])
        return gamma, r_diag, r_link, members, sizes

    def _fit(self, X, rng):
        sqn = row_sqnorms(X)
        gamma, r_diag, r_link, members, sizes = self._partition(X, rng, self._cluster)

        stream = Stream(X)
        with timed(self.timings_, "diagonal", self.cpu_timings_):
            chosen = self._eig_allocation(X, members, r_diag, gamma) if self.k_alloc == "eig" else None
            self.maps_, self.blocks_ = [], []
            for s, idx in enumerate(members):
                k_s = int(self.ranks_[s])
                if chosen is not None:
                    landmarks = chosen[s]
                else:
                    landmarks = self._basis_landmarks(X, s, idx, k_s, r_diag)
                eig = randomized_eigenpairs(r_diag) if self.basis == "rnys" else None
                fmap = landmark_map(landmarks, gamma, k_s, eig, kernel=self.kernel)
                self.maps_.append(fmap)
                self.blocks_.append(map_rows(fmap, stream, idx))

        self.L_ = self._link_matrix(lambda s, t: self._link(X, sqn, s, t, r_link, gamma))

    def _basis_landmarks(self, X, s: int, idx: np.ndarray, k_s: int, rng) -> np.ndarray:
        """Cluster s's 2 k_s landmarks: drawn from the cluster (``basis`` nys, rnys: R's Nys.m) or
        its k-means centroids (``knys``: eff_kmeans, 5 Lloyd steps, as the KNys baseline)."""
        m_s = int(min(round(self.landmark_factor * k_s), len(idx)))
        if self.basis == "knys":
            return eff_kmeans(np.ascontiguousarray(X[idx]), m_s, rng, 5)
        return X[idx[self._landmark_positions(s, len(idx), m_s, rng)]]

    def _eig_allocation(self, X, members, rng, gamma) -> list:
        """The paper's strategy (iii) for the ranks (sec. 5.1): 2k landmarks per cluster (k = the
        total rank / c), the eigenvalues of every cluster's landmark kernel pooled, and k_s = how
        many of the top c k are cluster s's (at least 1). Sets ``ranks_``/``offsets_``; returns
        the landmarks, reused by the diagonal maps."""
        c = len(members)
        k = int(self._columns()) // c
        landmarks, pooled = [], []
        for s, idx in enumerate(members):
            lm = self._basis_landmarks(X, s, idx, k, rng)
            landmarks.append(lm)
            lam = np.abs(np.linalg.eigvalsh(kernel_block(lm, lm, gamma, self.kernel)))
            pooled += [(v, s) for v in lam]
        pooled.sort(key=lambda p: -p[0])
        counts = np.bincount([s for _, s in pooled[:k * c]], minlength=c)
        sizes = np.array([len(lm) for lm in landmarks])
        self.ranks_ = np.minimum(np.maximum(counts, 1), sizes).astype(np.int64)
        self.offsets_ = np.concatenate([[0], np.cumsum(self.ranks_)])
        return landmarks

    def _link_matrix(self, link) -> np.ndarray:
        """The K x K link matrix L (host numpy): identity diagonal blocks, ``link(s, t)`` for every
        kept pair s < t and its transpose, then (``psd``) the PSD projection. Both fits share it."""
        c = int(self.clusters)
        K = int(self.offsets_[-1])
        L = np.zeros((K, K))
        with timed(self.timings_, "links", self.cpu_timings_):
            for s in range(c):
                a0, a1 = self.offsets_[s], self.offsets_[s + 1]
                L[a0:a1, a0:a1] = np.eye(a1 - a0)
                for t in range(s + 1, c):
                    if self.dropped_[s, t]:
                        continue
                    L_st = link(s, t)
                    b0, b1 = self.offsets_[t], self.offsets_[t + 1]
                    L[a0:a1, b0:b1] = L_st
                    L[b0:b1, a0:a1] = L_st.T
        if self.psd:
            with timed(self.timings_, "psd", self.cpu_timings_):
                lam, U = np.linalg.eigh(L)
                self.negative_eigenvalues_ = int(np.sum(lam < 0))
                L = (U * np.maximum(lam, 0.0)) @ U.T
                L = 0.5 * (L + L.T)
        return L

    def _fit_xp(self, X, rng):
        """:meth:`_fit` for an Array API X (see the module docstring): the same draws in the same
        order; W_s and L on X's device, the rows sorted by cluster there."""
        gamma, r_diag, r_link, members, sizes = self._partition(X, rng, self._cluster_xp)
        perm = np.concatenate(members)  # rows sorted by cluster (members_ order inside each)
        self.row_starts_ = np.concatenate([[0], np.cumsum(sizes)])
        self._perm_xp = asarray(perm, X, dtype=namespace(X).int64)
        self._inverse_xp = asarray(np.argsort(perm), X, dtype=namespace(X).int64)
        Xs = take_rows(X, perm)

        with timed(self.timings_, "diagonal", self.cpu_timings_):
            self.maps_, self.blocks_, self._maps_xp = [], [], []
            for s, idx in enumerate(members):
                k_s = int(self.ranks_[s])
                m_s = int(min(round(self.landmark_factor * k_s), len(idx)))
                lm = idx[self._landmark_positions(s, len(idx), m_s, r_diag)]
                fmap = landmark_map(to_numpy(take_rows(X, lm)), gamma, k_s)  # host: 2k_s x 2k_s
                self.maps_.append(fmap)
                self._maps_xp.append((asarray(fmap.sv, X), asarray(fmap.MT, X)))
                a0, a1 = int(self.row_starts_[s]), int(self.row_starts_[s + 1])
                self.blocks_.append(self._map_xp(s, Xs[a0:a1, ...]))

        self.L_ = asarray(self._link_matrix(lambda s, t: self._link_xp(X, s, t, r_link, gamma)), X)

    def _cluster_xp(self, X, c, rng):
        """:meth:`_cluster` for an Array API X: the same draws; k-means on the host over the
        sampled rows, the nearest centres (or the random partition's means) on the device."""
        n = X.shape[0]
        xp = namespace(X)
        if self.partition == "random":
            self.labels_ = rng.permutation(np.arange(n) % c)
            self.centres_ = np.stack([to_numpy(xp.mean(take_rows(X, np.flatnonzero(self.labels_ == s)), axis=0))
                                      for s in range(c)])
            return
        S = min(n, int(self.kmeans_sample))
        sample = to_numpy(take_rows(X, np.sort(rng.choice(n, S, replace=False))) if S < n else X)
        if self.kmeans == "kmeans++":
            from sklearn.cluster import KMeans

            km = KMeans(n_clusters=c, n_init=3, random_state=int(rng.integers(2**31 - 1))).fit(sample)
            self.centres_ = km.cluster_centers_
        else:
            _, self.centres_ = meka_kmeans(sample, c, rng, int(self.kmeans_iterations))
        self.labels_ = self._nearest_xp(X)

    def _nearest_xp(self, X) -> np.ndarray:
        """Host labels: the nearest centre of every row of the device array X, found on the device
        as :func:`nearest_centre` finds it (-2 x.c + ||c||^2, in chunks)."""
        xp = namespace(X)
        C = asarray(self.centres_, X)
        c2 = xp.sum(C * C, axis=1)
        n = int(X.shape[0])
        return np.concatenate([to_numpy(xp.argmin(-2.0 * (X[a:min(a + CHUNK, n), ...] @ C.T) + c2[None, :], axis=1))
                               for a in range(0, n, CHUNK)] or [np.zeros(0)]).astype(np.int64)

    def _map_xp(self, s: int, rows):
        """Cluster s's Nystrom features of device rows, in chunks: K(rows, landmarks) M'."""
        xp = namespace(rows)
        lm, MT = self._maps_xp[s]
        n = int(rows.shape[0])
        parts = [gaussian_block_xp(rows[a:min(a + CHUNK, n), ...], lm, float(self.gamma)) @ MT
                 for a in range(0, n, CHUNK)]
        return parts[0] if len(parts) == 1 else xp.concat(parts, axis=0)

    def _link_xp(self, X, s, t, rng, gamma):
        """:meth:`_link` with A, B and the sampled rows of X copied from the device (4 k_s and
        4 k_t rows), solved on the host by the same numpy code."""
        rows = []
        for u in (s, t):
            n_u = len(self.members_[u])
            take = int(min(math.ceil(self.link_oversample * self.ranks_[u]), n_u))
            rows.append(self._link_positions(s, t, u, n_u, take, rng))
        A = to_numpy(take_rows(self.blocks_[s], rows[0]))
        B = to_numpy(take_rows(self.blocks_[t], rows[1]))
        Xa = to_numpy(take_rows(X, self.members_[s][rows[0]]))
        Xb = to_numpy(take_rows(X, self.members_[t][rows[1]]))
        G_hat = gaussian_block(Xa, Xb, gamma, A_sqn=row_sqnorms(Xa), B_sqn=row_sqnorms(Xb))
        return pinv_solve(A.T @ A, pinv_solve(B.T @ B, (A.T @ G_hat) @ B, right=True))

    def _array_api_ok(self) -> bool:
        return super()._array_api_ok() and self.basis == "nys" and self.k_alloc != "eig"

    def _factor_like(self):
        blocks = getattr(self, "blocks_", None)
        return None if not blocks or is_numpy(blocks[0]) else blocks[0]

    def _block_rows(self, parts):
        """[(s, m_s x k_s block)] -> the sum_s m_s x K matrix with each block in cluster s's
        columns and zeros elsewhere (built by concatenation: no item assignment)."""
        xp = namespace(parts[0][1])
        K = int(self.offsets_[-1])
        out = []
        for s, P in parts:
            a0, a1 = int(self.offsets_[s]), int(self.offsets_[s + 1])
            m = int(P.shape[0])
            z = lambda w: xp.zeros((m, w), dtype=P.dtype, device=device(P))  # noqa: E731
            out.append(xp.concat([z(a0), P, z(K - a1)], axis=1))
        return out[0] if len(out) == 1 else xp.concat(out, axis=0)

    def _grouped_rows(self, labels: np.ndarray, rows_of):
        """W rows for m points of host ``labels``: each cluster's rows (``rows_of(s, sel)``) made
        contiguous by a stable sort, then put back in the points' order with ``take``."""
        order = np.argsort(labels, kind="stable")
        parts = [(int(s), rows_of(int(s), order[labels[order] == s])) for s in np.unique(labels)]
        if not parts:
            like = self._factor_like()
            return namespace(like).zeros((0, int(self.offsets_[-1])), dtype=like.dtype, device=device(like))
        return take_rows(self._block_rows(parts), np.argsort(order))

    def _cluster(self, X, c, rng):
        n = X.shape[0]
        if self.partition == "random":  # Table 3's baseline: a random partition of equal parts
            self.labels_ = rng.permutation(np.arange(n) % c)
            self.centres_ = np.stack([X[self.labels_ == s].mean(axis=0) for s in range(c)])
            return
        S = min(n, int(self.kmeans_sample))
        sample = X[np.sort(rng.choice(n, S, replace=False))] if S < n else X
        if self.kmeans == "kmeans++":  # a variant, not R: scikit-learn's k-means++ (3 restarts)
            from sklearn.cluster import KMeans

            km = KMeans(n_clusters=c, n_init=3, random_state=int(rng.integers(2**31 - 1))).fit(sample)
            self.centres_ = km.cluster_centers_
        else:
            _, self.centres_ = meka_kmeans(sample, c, rng, int(self.kmeans_iterations))
        self.labels_ = nearest_centre(X, self.centres_)

    def _link(self, X, sqn, s, t, rng, gamma):
        """L_st = pinv(A'A) A' G^ B pinv(B'B) on freshly sampled rows of clusters s and t."""
        rows = []
        for u in (s, t):
            n_u = len(self.members_[u])
            take = int(min(math.ceil(self.link_oversample * self.ranks_[u]), n_u))
            rows.append(self._link_positions(s, t, u, n_u, take, rng))
        A = self.blocks_[s][rows[0]]
        B = self.blocks_[t][rows[1]]
        gs, gt = self.members_[s][rows[0]], self.members_[t][rows[1]]
        G_hat = kernel_block(X[gs], X[gt], gamma, self.kernel, A_sqn=sqn[gs], B_sqn=sqn[gt])
        return pinv_solve(A.T @ A, pinv_solve(B.T @ B, (A.T @ G_hat) @ B, right=True))

    # ------------------------------------------------------------------ the random draws
    # (one method each, so that a test can inject the draws of the authors' code: the harness in
    # tests/approx/meka_octave.py runs meka.m and this class on the same partition and points)
    def _landmark_positions(self, s: int, n_s: int, m_s: int, rng) -> np.ndarray:
        """Positions (inside cluster s) of its m_s landmarks: uniform without replacement (Nys.m)."""
        return np.sort(rng.choice(n_s, m_s, replace=False))

    def _link_positions(self, s: int, t: int, u: int, n_u: int, take: int, rng) -> np.ndarray:
        """Positions (inside cluster u, one of the pair s < t) of the rows sampled for L_st."""
        return np.sort(rng.choice(n_u, take, replace=False))

    def _columns(self) -> int:
        return int(self.total_rank) if self.total_rank is not None else int(self.clusters) * int(self.rank)

    # ------------------------------------------------------------------ the W factor
    @property
    def memory_(self) -> int:
        """sum_s n_s k_s + sum over kept blocks (s, t) of L, diagonal included, of k_s k_t."""
        k = self.ranks_.astype(np.int64)
        kept = ~self.dropped_
        return int(sum(len(m) * kk for m, kk in zip(self.members_, k)) + k @ kept @ k)

    def _w_dot(self, U):
        if self._factor_like() is not None:  # device: block products on slices, then unsort
            xp = namespace(U)
            parts = [W @ U[int(self.offsets_[s]):int(self.offsets_[s + 1]), ...]
                     for s, W in enumerate(self.blocks_)]
            out = parts[0] if len(parts) == 1 else xp.concat(parts, axis=0)
            return xp.take(out, self._inverse_xp, axis=0)
        U = np.asarray(U)
        out = np.empty((self.n_samples_,) + U.shape[1:])
        for s, idx in enumerate(self.members_):
            out[idx] = self.blocks_[s] @ U[self.offsets_[s]:self.offsets_[s + 1]]
        return out

    def _wt_dot(self, V):
        if self._factor_like() is not None:
            xp = namespace(V)
            Vs = xp.take(V, self._perm_xp, axis=0)
            parts = [W.T @ Vs[int(self.row_starts_[s]):int(self.row_starts_[s + 1]), ...]
                     for s, W in enumerate(self.blocks_)]
            return parts[0] if len(parts) == 1 else xp.concat(parts, axis=0)
        V = np.asarray(V)
        out = np.empty((int(self.offsets_[-1]),) + V.shape[1:])
        for s, idx in enumerate(self.members_):
            out[self.offsets_[s]:self.offsets_[s + 1]] = self.blocks_[s].T @ V[idx]
        return out

    def _w_gram(self):
        if self._factor_like() is not None:
            return self._block_rows([(s, W.T @ W) for s, W in enumerate(self.blocks_)])
        K = int(self.offsets_[-1])
        out = np.zeros((K, K))
        for s, W in enumerate(self.blocks_):
            a0, a1 = self.offsets_[s], self.offsets_[s + 1]
            out[a0:a1, a0:a1] = W.T @ W
        return out

    def _w_rows(self, idx):
        if self._factor_like() is not None:
            idx = np.asarray(idx, dtype=np.int64) % self.n_samples_
            pos = self.position_
            return self._grouped_rows(self.labels_[idx],
                                      lambda s, sel: take_rows(self.blocks_[s], pos[idx[sel]]))
        out = np.zeros((len(idx), int(self.offsets_[-1])))
        pos = self.position_
        for s in np.unique(self.labels_[idx]):
            sel = np.flatnonzero(self.labels_[idx] == s)
            out[sel, self.offsets_[s]:self.offsets_[s + 1]] = self.blocks_[s][pos[idx[sel]]]
        return out

    @property
    def position_(self) -> np.ndarray:
        """Row of every sample inside its cluster's block."""
        if getattr(self, "_position", None) is None:
            pos = np.empty(self.n_samples_, dtype=np.int64)
            for idx in self.members_:
                pos[idx] = np.arange(len(idx))
            self._position = pos
        return self._position

    def _w_new(self, X_new):
        """Out-of-sample rows of W (spec 1.7, a reading: R has none): nearest centre s, then
        that cluster's Nystrom map, zeros in the other clusters' columns."""
        if self._factor_like() is not None:  # X_new is on the factor's device (_check_new)
            return self._grouped_rows(self._nearest_xp(X_new),
                                      lambda s, sel: self._map_xp(s, take_rows(X_new, sel)))
        X_new = as_dense(X_new)
        lab = nearest_centre(X_new, self.centres_)
        out = np.zeros((X_new.shape[0], int(self.offsets_[-1])))
        stream = Stream(X_new)
        for s in np.unique(lab):
            sel = np.flatnonzero(lab == s)
            out[sel, self.offsets_[s]:self.offsets_[s + 1]] = map_rows(self.maps_[s], stream, sel)
        return out
