"""What the MEKA paper measures on a kernel approximation (kept apart from how it is built).

* :func:`relative_error`: ||G - G~||_F / ||G||_F on the full matrix or on r sampled rows
  (Table 7), computed in row chunks so that no more than ``max_floats`` floats of G (and as many
  of G~) are ever held, whatever n is;
* :func:`krr_fit_predict`: kernel ridge regression on the approximation, (G~ + lam I) alpha = y
  by the approximation's push-through ``solve``, predictions G~_test alpha (Table 8);
* :func:`numerical_rank` and :func:`block_ranks`: the numerical rank of the kernel blocks of a
  partition (Table 3).
"""
from __future__ import annotations

import numpy as np

from ..compute.kernels import kernel_block, row_sqnorms
from ..compute.xp import to_numpy

MAX_FLOATS = 1 << 24  # floats per chunk of exact rows (128 MB), and as many approximate ones


def relative_error(approx, X, gamma: float, rows=None, rng=None, max_floats: int = MAX_FLOATS,
                   kernel: str | None = None):
    """(error, row indices used): ||G_R - G~_R||_F / ||G_R||_F over the rows R (all rows when
    ``rows`` is None, else ``rows`` of them drawn uniformly without replacement by ``rng``).
    ``kernel``: the exact kernel G is built with (default: the approximation's own)."""
    kernel = kernel or getattr(approx, "kernel", "gaussian")
    n = X.shape[0]
    if rows is None or rows >= n:
        idx = np.arange(n)
    else:
        idx = np.sort((rng or np.random.default_rng(0)).choice(n, int(rows), replace=False))
    sqn = row_sqnorms(X)
    chunk = max(1, max_floats // n)
    num = den = 0.0
    for a in range(0, len(idx), chunk):
        sel = idx[a:a + chunk]
        G = kernel_block(X[sel], X, gamma, kernel, A_sqn=sqn[sel], B_sqn=sqn)
        den += float(np.einsum("ij,ij->", G, G))
        G -= to_numpy(approx.rows(sel))  # an Array API factor's rows come back to the host
        num += float(np.einsum("ij,ij->", G, G))
    return float(np.sqrt(num / den)), idx


def krr_fit_predict(approx, y_train, X_test, lam: float) -> np.ndarray:
    """Predictions on X_test of kernel ridge regression on a fitted approximation: alpha solves
    (G~ + lam I) alpha = y (paper eq. 19, lambda added to the diagonal with no n factor)."""
    alpha = approx.solve(lam, np.asarray(y_train, dtype=np.float64))
    return to_numpy(approx.cross_matvec(X_test, alpha))


def numerical_rank(A: np.ndarray, delta: float = 1e-6) -> int:
    """#{sigma_i(A) > max(m, n) ||A||_2 delta}: MATLAB ``rank`` with delta in place of eps."""
    if A.size == 0:
        return 0
    s = np.linalg.svd(A, compute_uv=False)
    return int(np.sum(s > max(A.shape) * s[0] * delta))


def block_ranks(X, labels: np.ndarray, gamma: float, delta: float = 1e-6,
                kernel: str = "gaussian") -> list[list[int]]:
    """Numerical rank of every kernel block G(V_s, V_t) of the partition ``labels`` (Table 3)."""
    c = int(labels.max()) + 1
    members = [np.flatnonzero(labels == s) for s in range(c)]
    return [[numerical_rank(kernel_block(X[members[s]], X[members[t]], gamma, kernel), delta)
             for t in range(c)] for s in range(c)]
