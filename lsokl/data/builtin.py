"""Datasets that need no file: scikit-learn's shipped sets and seeded generators.

Generators are deterministic functions of their arguments; ``meta["sha256"]`` hashes the generator spec so a
result record can name exactly which stream it saw.
"""
from __future__ import annotations

import hashlib
import inspect

import numpy as np

from .dataset import Dataset


def _meta(spec: str, source: str, **extra) -> dict:
    return {"sha256": hashlib.sha256(spec.encode()).hexdigest(), "source": source, "spec": spec,
            "preprocessing": {"features": "none", "target": "none"}, **extra}


# --- generators -----------------------------------------------------------------------------------------------

def checkerboard(n: int = 10000, seed: int = 0) -> Dataset:
    """The 4x4 checkerboard of Wang, Crammer & Vucetic (2010): uniform points in [0,1]^2, label = colour of the
    cell (+1 when the row and column indices have the same parity). Noise-free, so ~100% is reachable.
    The JMLR text draws x ~ U([0,4]^2) with y = (floor(x1) + floor(x2)) mod 2: the same board at 1/4 scale, which
    z-scoring (BPegasosM's protocol) makes identical."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, size=(n, 2))
    cell = np.floor(X * 4).astype(np.int64)
    y = np.where((cell[:, 0] + cell[:, 1]) % 2 == 0, 1.0, -1.0)
    return Dataset("checkerboard", X, y, "binary", _meta(f"checkerboard:n={n}:seed={seed}", "generated"))


def _waveform_bases() -> np.ndarray:
    # Breiman et al. (1984, CART) triangular waves on 21 points, h(i) = max(6 - |i - p|, 0) for i = 1..21 with
    # peaks p = 7, 11, 15 (h_a, h_b, h_c in BUDGETED_PEGASOS.md section 8).
    i = np.arange(1, 22)
    return np.stack([np.maximum(6 - np.abs(i - p), 0).astype(np.float64) for p in (7, 11, 15)])


# class -> (wave weighted by u, wave weighted by 1-u); checked against the class means of the UCI waveform.data
WAVEFORM_CLASSES = np.array([[0, 2], [0, 1], [1, 2]])


def waveform(n: int = 5000, seed: int = 0, noise_features: int = 0) -> Dataset:
    """Breiman's waveform generator (UCI Waveform v1; v2 with ``noise_features=19``), classes 0..2 equiprobable.

    x = u*h_a + (1-u)*h_b + N(0, I) with u ~ U(0,1): class 0 mixes the waves peaking at 7 and 15, class 1 at 7 and
    11, class 2 at 11 and 15, the mapping of the UCI file (its class means match within 0.1). The Bayes accuracy is
    about 86%, where BPegasosM's best published values sit.
    """
    rng = np.random.default_rng(seed)
    h = _waveform_bases()
    y = rng.integers(0, 3, size=n)
    u = rng.uniform(0.0, 1.0, size=(n, 1))
    a, b = h[WAVEFORM_CLASSES[y, 0]], h[WAVEFORM_CLASSES[y, 1]]
    X = u * a + (1.0 - u) * b + rng.standard_normal((n, 21))
    if noise_features:
        X = np.hstack([X, rng.standard_normal((n, noise_features))])
    X = np.ascontiguousarray(X, dtype=np.float64)
    spec = f"waveform:n={n}:seed={seed}:noise_features={noise_features}:classes=uci"
    return Dataset("waveform", X, y.astype(np.int64), "multiclass", _meta(spec, "generated"))


def scale(n: int = 100000, d: int = 54, seed: int = 0, clusters: int = 8, separation: float = 6.0) -> Dataset:
    """A synthetic binary stream of any size for speed benchmarks (e.g. ``n=581012, d=54`` = covtype's shape).

    A Gaussian mixture: ``clusters`` centres per class drawn from N(0, separation^2/(2d) I), so two centres are about
    ``separation`` noise standard deviations apart whatever d is; each point is its centre + N(0, I) and carries the
    centre's class. Classes interleave, so a Gaussian-kernel learner does clearly better than a linear one (on
    d=54, 5000 points: RBF-SVM ~96%, logistic regression ~78%). Rows are i.i.d., so any prefix is a valid stream.
    """
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((2 * clusters, d)) * (separation / np.sqrt(2 * d))
    label = np.repeat([1.0, -1.0], clusters)
    k = rng.integers(0, 2 * clusters, size=n)
    X = centres[k]
    X += rng.standard_normal((n, d))
    spec = f"scale:n={n}:d={d}:seed={seed}:clusters={clusters}:separation={separation}"
    return Dataset("scale", np.ascontiguousarray(X), label[k], "binary", _meta(spec, "generated"))


# --- scikit-learn's shipped sets --------------------------------------------------------------------------------

def _sklearn(name: str, loader: str, task: str) -> Dataset:
    import sklearn.datasets

    b = getattr(sklearn.datasets, loader)()
    X = np.ascontiguousarray(b.data, dtype=np.float64)
    if task == "binary":
        y = np.where(b.target == 1, 1.0, -1.0)
    elif task == "multiclass":
        y = np.asarray(b.target, dtype=np.int64)
    else:
        y = np.asarray(b.target, dtype=np.float64)
    digest = hashlib.sha256(X.tobytes() + y.tobytes()).hexdigest()
    import sklearn

    return Dataset(name, X, y, task, {"sha256": digest, "source": f"scikit-learn {sklearn.__version__} {loader}",
                                      "preprocessing": {"features": "none", "target": "none"}})


def breast_cancer() -> Dataset:
    """Wisconsin diagnostic breast cancer (569 x 30); benign = +1."""
    return _sklearn("breast_cancer", "load_breast_cancer", "binary")


def digits() -> Dataset:
    """8x8 handwritten digits (1797 x 64), classes 0..9."""
    return _sklearn("digits", "load_digits", "multiclass")


def diabetes() -> Dataset:
    """Diabetes progression (442 x 10, features already centred and scaled by scikit-learn), raw target."""
    return _sklearn("diabetes", "load_diabetes", "regression")


def wine() -> Dataset:
    """UCI wine cultivars (178 x 13), classes 0..2. (MEKA's "wine" is the registered ``wine-quality``.)"""
    return _sklearn("wine", "load_wine", "multiclass")


def iris() -> Dataset:
    """Fisher's iris (150 x 4), classes 0..2."""
    return _sklearn("iris", "load_iris", "multiclass")


#: name -> (function, task, source label) for everything that needs no download.
BUILTINS = {
    "breast_cancer": (breast_cancer, "binary", "scikit-learn"),
    "digits": (digits, "multiclass", "scikit-learn"),
    "diabetes": (diabetes, "regression", "scikit-learn"),
    "wine": (wine, "multiclass", "scikit-learn"),
    "iris": (iris, "multiclass", "scikit-learn"),
    "checkerboard": (checkerboard, "binary", "generated"),
    "waveform": (waveform, "multiclass", "generated"),
    "scale": (scale, "binary", "generated"),
}


def build(name: str, **options) -> Dataset:
    """Call the built-in ``name`` with its options; unknown options are an error that lists the accepted ones."""
    from ..errors import DataError

    fn = BUILTINS[name][0]
    accepted = list(inspect.signature(fn).parameters)
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise DataError(f"built-in dataset {name!r} does not take {unknown}; it accepts {accepted or 'no options'}")
    return fn(**options)
