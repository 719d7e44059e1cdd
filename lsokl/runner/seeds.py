"""Stream orders and learner seeds, derived so that results never depend on scheduling.

Permutation i of a dataset depends only on (seed, dataset, i), so every algorithm sees the same
stream (a paired comparison). A learner's random draws depend on (seed, dataset, learner, i):
not on its other parameters, so an eta sweep of FOGD reuses the same random features.
"""
from __future__ import annotations

import hashlib

import numpy as np

_PERMUTATION, _LEARNER = 0, 1  # domain tags: the two streams never share a SeedSequence


def name_entropy(name: str) -> int:
    """A stable 64-bit integer for a name (Python's hash() is salted per process)."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little")


def permutation_order(seed: int, dataset: str, index: int, n: int) -> np.ndarray:
    ss = np.random.SeedSequence([seed, _PERMUTATION, name_entropy(dataset), index])
    return np.random.default_rng(ss).permutation(n).astype(np.int64)


def authors_order(permutations: np.ndarray, index: int, n: int) -> np.ndarray:
    """Row ``index`` of the authors' matrix; on a subset (max_samples) keep the rows that remain,
    in the authors' order."""
    if index >= permutations.shape[0]:
        raise ValueError(f"the authors' matrix has {permutations.shape[0]} permutations; "
                         f"permutation {index} was asked for")
    row = np.asarray(permutations[index], dtype=np.int64)
    if permutations.shape[1] != n:
        row = row[row < n]
    if row.size != n or np.unique(row).size != n:
        raise ValueError(f"the authors' permutation {index} is not a permutation of {n} rows")
    return row


def learner_seed(seed: int, dataset: str, learner: str, index: int) -> np.random.SeedSequence:
    return np.random.SeedSequence([seed, _LEARNER, name_entropy(dataset), name_entropy(learner), index])
