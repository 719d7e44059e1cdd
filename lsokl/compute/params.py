"""Declarative parameter checks with scikit-learn-style messages."""
from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral, Real


@dataclass(frozen=True)
class Num:
    """A real (or, with ``integer=True``, whole) number in an interval."""

    low: float = -math.inf
    high: float = math.inf
    closed: str = "neither"  # which ends are included: "left", "right", "both", "neither"
    integer: bool = False
    allow_none: bool = False

    def check(self, owner: str, name: str, value) -> None:
        if value is None and self.allow_none:
            return
        kind = "an int" if self.integer else "a float"
        ok_type = isinstance(value, Integral) if self.integer else isinstance(value, Real)
        if isinstance(value, bool) or not ok_type or (not self.integer and math.isnan(value)):
            raise ValueError(self._msg(owner, name, kind, value))
        lo_ok = value >= self.low if self.closed in ("left", "both") else value > self.low
        hi_ok = value <= self.high if self.closed in ("right", "both") else value < self.high
        if not (lo_ok and hi_ok):
            raise ValueError(self._msg(owner, name, kind, value))

    def _msg(self, owner, name, kind, value) -> str:
        lb = "[" if self.closed in ("left", "both") else "("
        rb = "]" if self.closed in ("right", "both") else ")"
        lo = "-inf" if self.low == -math.inf else f"{self.low:g}"
        hi = "inf" if self.high == math.inf else f"{self.high:g}"
        none = " or None" if self.allow_none else ""
        return (f"The {name!r} parameter of {owner} must be {kind} in the range "
                f"{lb}{lo}, {hi}{rb}{none}. Got {value!r} instead.")


@dataclass(frozen=True)
class OneOf:
    options: tuple

    def check(self, owner: str, name: str, value) -> None:
        if value not in self.options:
            opts = ", ".join(repr(o) for o in self.options)
            raise ValueError(f"The {name!r} parameter of {owner} must be one of {opts}. "
                             f"Got {value!r} instead.")


@dataclass(frozen=True)
class Seed:
    """None, an int >= 0, or a numpy SeedSequence."""

    def check(self, owner: str, name: str, value) -> None:
        import numpy as np

        if value is None or isinstance(value, np.random.SeedSequence):
            return
        if isinstance(value, Integral) and not isinstance(value, bool) and value >= 0:
            return
        raise ValueError(f"The {name!r} parameter of {owner} must be None, an int >= 0 or a "
                         f"numpy.random.SeedSequence. Got {value!r} instead.")


POSITIVE = Num(0, math.inf, "neither")
NON_NEGATIVE = Num(0, math.inf, "left")
BUDGET = Num(1, math.inf, "left", integer=True)


# The Gaussian kernel's width, checked once for every learner and approximation (issue 23).
# sigma (LSOKL): exp(-r^2 / (2 sigma^2)); gamma (MEKA, scikit-learn): exp(-gamma r^2). Outside
# these bounds 1 / (2 sigma^2) overflows or underflows float64 (sigma = 1e300 gave a bare
# OverflowError, 1e-300 a ZeroDivisionError), and well inside them no data set that fits in
# float64 could use the kernel anyway; gamma's bounds are the same kernels.
SIGMA_RANGE = (1e-150, 1e150)
GAMMA_RANGE = (1.0 / (2.0 * SIGMA_RANGE[1] ** 2), 1.0 / (2.0 * SIGMA_RANGE[0] ** 2))


@dataclass(frozen=True)
class KernelWidth:
    """``sigma`` or ``gamma`` of the Gaussian kernel: a finite float > 0 inside SIGMA_RANGE /
    GAMMA_RANGE, where the kernel's exponent is a normal float64 number."""

    kind: str = "sigma"

    @property
    def bounds(self) -> tuple:
        return SIGMA_RANGE if self.kind == "sigma" else GAMMA_RANGE

    def describe(self, value=None) -> str:
        """The rule in the words of a config error (lsokl.config.describe_rule): the range when
        a positive number falls outside it."""
        if isinstance(value, Real) and not isinstance(value, bool) and value > 0:
            lo, hi = self.bounds
            return f"a number in [{lo:g}, {hi:g}] (outside it the kernel is 0 or 1 in float64)"
        return "a number > 0 or 'scale'" if self.kind == "sigma" else "a number > 0"

    def check(self, owner: str, name: str, value) -> None:
        if self.kind == "sigma" and isinstance(value, str) and value == "scale":
            return  # sigma="scale": resolved from the data at fit time (resolve_sigma)
        lo, hi = self.bounds
        formula = "exp(-||x-y||^2 / (2 sigma^2))" if self.kind == "sigma" else "exp(-gamma ||x-y||^2)"
        if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value) \
                or value <= 0:
            also = " or 'scale'" if self.kind == "sigma" else ""
            raise ValueError(f"The {name!r} parameter of {owner} must be a finite float > 0{also}. "
                             f"Got {value!r} instead.")
        if not lo <= value <= hi:
            raise ValueError(f"The {name!r} parameter of {owner} must lie in [{lo:g}, {hi:g}]: "
                             f"outside it the Gaussian kernel {formula} is 0 or 1 for any data "
                             f"in float64. Got {value!r} instead.")


def check_width_for_data(owner: str, sigma: float, max_sqnorm: float) -> None:
    """Refuse a sigma for which the Gaussian kernel is identically 1 on data whose largest
    squared row norm is ``max_sqnorm`` (every squared distance is at most 4 max_sqnorm)."""
    if max_sqnorm > 0 and 4.0 * max_sqnorm / (2.0 * sigma * sigma) < 2.0 ** -53:
        suggest = math.sqrt(4.0 * max_sqnorm)
        raise ValueError(f"The 'sigma' parameter of {owner} is {sigma!r}: for this data (largest "
                         f"squared row norm {max_sqnorm:.3g}) the Gaussian kernel is 1.0 in float64 "
                         f"for every pair of rows, so nothing can be learned; use a sigma of the "
                         f"order of the distances between rows (e.g. {suggest:.3g}).")


#: the rule of every learner's ``sigma``: a number in SIGMA_RANGE, or ``"scale"``
Width = KernelWidth


# ----------------------------------------------------------------------------- kernel width
#: ``sigma="scale"``: the Gaussian kernel width is taken from the training data at the first
#: fit / partial_fit / run, with scikit-learn's ``gamma='scale'`` rule (see :func:`scale_sigma`).
SCALE = "scale"
#: rows per block when the variance of dense (possibly memory-mapped) data is computed
_VARIANCE_BLOCK_ENTRIES = 1 << 20


def data_variance(X) -> float:
    """The variance of all the entries of X (n x d), as ``X.var()`` but without a copy of X:
    dense (memory-mapped, any float dtype) data is read in row blocks and accumulated in float64;
    sparse data counts its implicit zeros (E[x^2] - E[x]^2 over n * d entries, as scikit-learn
    computes it for sparse X)."""
    import numpy as np
    import scipy.sparse as sp

    n, d = X.shape
    total = float(n) * float(d)
    if total == 0:
        return 0.0
    from .xp import is_numpy, namespace

    if not is_numpy(X):  # torch / CuPy: on the array's device
        xp = namespace(X)
        Xf = xp.astype(X, xp.float64)
        return float(xp.mean((Xf - xp.mean(Xf)) ** 2))
    if sp.issparse(X):
        data = np.asarray(X.data, dtype=np.float64) if X.format in ("csr", "csc", "coo") \
            else np.asarray(X.tocsr().data, dtype=np.float64)
        mean = float(data.sum()) / total
        return max(float(np.dot(data, data)) / total - mean * mean, 0.0)
    X = np.asarray(X) if not isinstance(X, np.ndarray) else X
    step = max(1, _VARIANCE_BLOCK_ENTRIES // max(d, 1))
    s = 0.0
    for a in range(0, n, step):
        s += float(np.sum(X[a:a + step], dtype=np.float64))
    mean = s / total
    ss = 0.0
    for a in range(0, n, step):
        block = np.asarray(X[a:a + step], dtype=np.float64) - mean
        ss += float(np.einsum("ij,ij->", block, block))
    return ss / total


def scale_sigma(X) -> float:
    """scikit-learn's ``gamma='scale'`` as a width: gamma = 1 / (n_features * X.var()), so
    sigma = sqrt(n_features * X.var() / 2); X with zero variance gives gamma = 1 as in
    scikit-learn (sigma = sqrt(1/2))."""
    var = data_variance(X)
    d = X.shape[1]
    if not (var > 0 and math.isfinite(var)):
        return math.sqrt(0.5)
    return math.sqrt(d * var / 2.0)


def resolve_sigma(sigma, X) -> float:
    """The width a fit uses: ``"scale"`` is computed from X (:func:`scale_sigma`); a number is
    that number (its range is checked by the learner's parameter rules)."""
    if isinstance(sigma, str) and sigma == SCALE:
        return scale_sigma(X)
    return float(sigma)


# ----------------------------------------------------------------------------- kernel name
@dataclass(frozen=True)
class KernelName:
    """``kernel`` of the batch approximations: one of ``allowed`` (``gaussian``, ``laplacian``);
    a misspelling is answered with the closest name, and a kernel the method cannot approximate
    (Fastfood: Gaussian only) with ``why``."""

    allowed: tuple = ("gaussian", "laplacian")
    why: str = ""

    def describe(self, value=None) -> str:
        from ..errors import closest

        known = ("gaussian", "laplacian")
        if isinstance(value, str) and value in known and value not in self.allowed:
            return f"{' or '.join(repr(a) for a in self.allowed)} ({self.why})"
        guess = closest(value, known) if isinstance(value, str) else []
        hint = f" (did you mean {guess[0]!r}?)" if guess else ""
        return f"one of {', '.join(repr(a) for a in self.allowed)}{hint}"

    def check(self, owner: str, name: str, value) -> None:
        if value not in self.allowed:
            raise ValueError(f"The {name!r} parameter of {owner} must be {self.describe(value)}. "
                             f"Got {value!r} instead.")
