"""``load(name)``: the entry point every other layer uses. (Minimal version: built-ins only.)"""
from __future__ import annotations

import hashlib

import numpy as np

from ..errors import UnknownNameError
from .dataset import Dataset


def _checkerboard(n: int = 10000, seed: int = 0) -> Dataset:
    """The 4x4 checkerboard of Wang, Crammer & Vucetic (2010): uniform points in [0,1]^2,
    label = colour of the cell."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, size=(n, 2))
    cell = np.floor(X * 4).astype(int)
    y = np.where((cell[:, 0] + cell[:, 1]) % 2 == 0, 1.0, -1.0)
    spec = f"checkerboard:n={n}:seed={seed}".encode()
    return Dataset("checkerboard", X, y, "binary",
                   {"sha256": hashlib.sha256(spec).hexdigest(), "source": "generated"})


def _breast_cancer() -> Dataset:
    from sklearn.datasets import load_breast_cancer

    b = load_breast_cancer()
    X = np.ascontiguousarray(b.data, dtype=np.float64)
    y = np.where(b.target == 1, 1.0, -1.0)
    return Dataset("breast_cancer", X, y, "binary",
                   {"sha256": hashlib.sha256(X.tobytes() + y.tobytes()).hexdigest(),
                    "source": "scikit-learn"})


BUILTINS = {"checkerboard": _checkerboard, "breast_cancer": _breast_cancer}


def load(name: str, **options) -> Dataset:
    if name in BUILTINS:
        return BUILTINS[name](**options)
    raise UnknownNameError("dataset", name, BUILTINS)
