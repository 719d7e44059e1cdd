"""The one object every other layer receives from the data layer."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

TASKS = ("binary", "multiclass", "regression")


@dataclass
class Dataset:
    """Features, labels and what is known about them.

    ``X`` is C-contiguous (memory-mapped when loaded from the cache) or CSR (int32 indices when they fit), in the
    cached precision: float64, or float32 for registry entries with ``dtype: float32`` (or ``auto`` when every
    value is a float32 exactly); built-ins are float64.
    ``y`` follows the task: binary {-1, +1}, multi-class 0..m-1, regression float.
    ``permutations`` is the authors' (runs x n) matrix of 0-based stream orders when the source
    file carries one (their ``.mat`` files), else None.
    ``meta`` holds at least ``sha256`` (of the source file or generator spec), ``source`` and
    ``preprocessing``.
    """

    name: str
    X: np.ndarray | sp.csr_matrix
    y: np.ndarray
    task: str
    meta: dict = field(default_factory=dict)
    permutations: np.ndarray | None = None

    def __post_init__(self):
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {self.task!r}")
        if self.X.shape[0] != len(self.y):
            raise ValueError(f"{self.name}: X has {self.X.shape[0]} rows but y has {len(self.y)}")

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def n_classes(self) -> int | None:
        if self.task == "regression":
            return None
        return 2 if self.task == "binary" else int(np.max(self.y)) + 1
