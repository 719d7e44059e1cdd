"""Stream orders and learner seeds, derived so that results never depend on scheduling.

Permutation i of a dataset depends only on (seed, dataset, i), so every algorithm sees the same
stream (a paired comparison). A learner's random draws depend on (seed, dataset, learner, i):
not on its other parameters, so an eta sweep of FOGD reuses the same random features.
"""
from __future__ import annotations

import hashlib

import numpy as np

_PERMUTATION, _LEARNER, _BLOCK_SHUFFLE = 0, 1, 2  # domain tags: the streams never share a SeedSequence

#: stream orders a config can ask for (``order:``); ``permutation`` is the default and the papers' protocol
from ..protocol_options import DEFAULT_BLOCK_ROWS, ORDERS  # noqa: F401 (declared with the config keys)


def name_entropy(name: str) -> int:
    """A stable 64-bit integer for a name (Python's hash() is salted per process)."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little")


def permutation_order(seed: int, dataset: str, index: int, n: int) -> np.ndarray:
    ss = np.random.SeedSequence([seed, _PERMUTATION, name_entropy(dataset), index])
    return np.random.default_rng(ss).permutation(n).astype(np.int64)


def block_shuffle_order(seed: int, dataset: str, index: int, n: int, block_rows: int = DEFAULT_BLOCK_ROWS
                        ) -> np.ndarray:
    """A random order for data larger than memory: the blocks of ``block_rows`` consecutive rows in a random
    order, then the rows inside each block in a random order. A pass reads each block's pages once, in one
    stretch (a full permutation of a memory map bigger than RAM reads a random page for every row).
    Depends only on (seed, dataset, index, n, block_rows), like :func:`permutation_order`."""
    if block_rows < 1:
        raise ValueError(f"block_rows must be >= 1, got {block_rows}")
    ss = np.random.SeedSequence([seed, _BLOCK_SHUFFLE, name_entropy(dataset), index, block_rows])
    rng = np.random.default_rng(ss)
    out = np.empty(n, dtype=np.int64)
    pos = 0
    for b in rng.permutation(-(-n // block_rows)):
        start = int(b) * block_rows
        size = min(n, start + block_rows) - start
        out[pos:pos + size] = start + rng.permutation(size)
        pos += size
    return out


def permutation_exceeds_memory(nbytes: int, available: int | None = None) -> str | None:
    """A warning when a random permutation is to be played over data (``nbytes``) larger than the memory
    available now (``available``, default: psutil's estimate), else None."""
    if available is None:
        from .resources import available_memory

        available = available_memory()
        if available is None:
            return None
    if nbytes <= available:
        return None
    return (f"a random permutation of {nbytes / 2**30:.1f} GiB of data with {available / 2**30:.1f} GiB of memory "
            "available reads a random page for nearly every row; `order: block-shuffle` reads blocks of rows "
            "in one stretch")


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
