"""Exact duplicate rows: content ids for a stream's rows, and the prediction memo built on them.

Some data sets repeat rows a great deal: kddcup99's 494,021 rows hold 145,584 distinct ones, and
one row alone is 39% of the stream. A learner's prediction f(x_t) depends only on the content of
x_t and on the model, so when x_t is a bit-for-bit copy of a row already predicted since the
model last changed, f(x_t) is that earlier value, bit for bit: the compiled loops would repeat
exactly the same operations on exactly the same numbers. The memo returns it instead.

* :func:`row_ids` gives every row an id shared only by rows with identical content: a 64-bit
  hash of each row (indices and the bit patterns of the values, so -0.0 and 0.0 differ), an
  open-addressing table, and a bit-for-bit comparison with the table entry's row, so a hash
  collision can cost a probe but never a wrong id. It runs only when a fixed 2,048-row sample
  shows enough repeats (:func:`sample_repeat_fraction`), so a data set without them pays
  ~0.5 ms per pass.
* :class:`RowMemo` holds, per distinct row, the last f and the model version it was computed
  at. The version is the learner's update count ``counts[2]``: the learners that use the memo
  change their model only in a step they count as an update. A hit is valid only while the
  count is unchanged.

Where it is used: the budgeted binary learners whose model changes only on counted updates
(``tasks.observe_binary_memo``: RBP, Forgetron, Projectron(++), BPA-S) and binary FOGD reuse
predictions; the blocked unbudgeted Perceptron/OGD (block-start kernel sums), NOGD's linear phase
(Nystrom features) and FOGD (projections) do a block's row-only work once per distinct row
(:class:`BlockRepeats`). BOGD and NORMA shrink every coefficient at every step, so their f never
repeats. The ids are computed inside the timed pass.

Nothing in NumPy or SciPy finds duplicate rows of a CSR matrix without densifying it
(``np.unique(axis=0)`` needs dense rows and sorts them whole), hence the hash-and-verify here.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .kernels import JIT

#: turn the memo off everywhere (tests compare both settings; the results are the same)
ENABLED = True
#: the ids are computed (and the memo used) only when, in a sample of SAMPLE_ROWS rows, at least
#: this fraction repeat another sampled row: then a block of 256 rows holds copies worth
#: sharing (kddcup99: 57% of the 2,048-row sample; w7a and w8a 17%, a9a 7%, codrna 1%, where
#: the ids would cost more than they save)
MIN_SAMPLE_REPEATS = 0.25
SAMPLE_ROWS = 2048
#: shorter streams (river's one row at a time, small partial_fit chunks) skip the sample check
MIN_ROWS = 64


@njit(**JIT)
def _mix(h, v):
    return (h ^ np.uint64(v)) * np.uint64(1099511628211)


@njit(**JIT)
def row_hashes(dense_bits, indptr, indices, value_bits, is_sparse, out):
    """out[i] = a 64-bit FNV-1a-style hash of row i's (index, value bits) pairs (CSR) or of its
    value bits (dense)."""
    for i in range(out.shape[0]):
        h = np.uint64(14695981039346656037)
        if is_sparse:
            for p in range(indptr[i], indptr[i + 1]):
                h = _mix(h, np.uint64(indices[p]))
                h = _mix(h, value_bits[p])
        else:
            for k in range(dense_bits.shape[1]):
                h = _mix(h, dense_bits[i, k])
        out[i] = h


@njit(**JIT)
def _same_row(dense_bits, indptr, indices, value_bits, is_sparse, a, b):
    if is_sparse:
        pa, pb = indptr[a], indptr[b]
        n = indptr[a + 1] - pa
        if indptr[b + 1] - pb != n:
            return False
        for q in range(n):
            if indices[pa + q] != indices[pb + q] or value_bits[pa + q] != value_bits[pb + q]:
                return False
        return True
    for k in range(dense_bits.shape[1]):
        if dense_bits[a, k] != dense_bits[b, k]:
            return False
    return True


@njit(**JIT)
def group_rows(dense_bits, indptr, indices, value_bits, is_sparse, hashes, ids):
    """Assign ids in one pass with an open-addressing table keyed by the hashes: rows get the
    same id iff their contents are identical (a row whose hash matches is compared bit for bit
    with that entry's row; on a collision the probe goes on). Returns the number of distinct
    rows."""
    n = hashes.shape[0]
    size = 1
    while size < 2 * n:
        size *= 2
    mask = np.uint64(size - 1)
    table = np.full(size, -1, dtype=np.int64)  # a representative row per occupied slot
    n_ids = 0
    for i in range(n):
        h = hashes[i]
        k = np.int64(h & mask)
        while True:
            r = table[k]
            if r < 0:
                table[k] = i
                ids[i] = n_ids
                n_ids += 1
                break
            if hashes[r] == h and _same_row(dense_bits, indptr, indices, value_bits, is_sparse,
                                            r, i):
                ids[i] = ids[r]
                break
            k = (k + 1) & (size - 1)
    return n_ids


def _bits(a: np.ndarray) -> np.ndarray:
    """The bit patterns of float64 (uint64) or float32 (uint32) values, a view: float32 rows are
    compared in their own precision (two float32 rows are equal iff their float64 conversions
    are), with no float64 copy of a float32 stream."""
    return a.view(np.uint32 if a.dtype.itemsize == 4 else np.uint64)


def row_ids(stream, hashes: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """(ids, n_distinct) for the rows of a Stream: ids[i] == ids[j] iff rows i and j are
    identical bit for bit; ids count up from 0 in order of first appearance. ``hashes`` replaces
    the computed hashes (tests force collisions)."""
    n = stream.n_samples
    if stream.is_sparse:
        dense_bits = np.empty((0, 0), dtype=np.uint64)
        value_bits = _bits(stream.values)
    else:
        dense_bits = _bits(stream.dense)
        value_bits = np.empty(0, dtype=np.uint64)
    if hashes is None:
        hashes = np.empty(n, dtype=np.uint64)
        row_hashes(dense_bits, stream.indptr, stream.indices, value_bits, stream.is_sparse, hashes)
    ids = np.empty(n, dtype=np.int64)
    n_ids = group_rows(dense_bits, stream.indptr, stream.indices, value_bits, stream.is_sparse,
                       np.ascontiguousarray(hashes, dtype=np.uint64), ids)
    return ids, int(n_ids)


#: what the compiled loops get when the memo is off: None, for which numba compiles a variant
#: without the memo's branches (an empty memo still cost FOGD 8% on a9a)
NO_MEMO = None


class RowMemo:
    """The last prediction per distinct row, stamped with the update count it was made at.

    ``arrays`` is the tuple the compiled loops take: (ids, f, stamp, hits), ``hits[0]`` counting
    the reuses; None when the memo is off (too few repeats, or ``ENABLED`` False)."""

    def __init__(self, ids: np.ndarray | None, n_distinct: int):
        if ids is None:
            self.arrays = NO_MEMO
            return
        self.arrays = (ids, np.zeros(n_distinct, dtype=np.float64),
                       np.full(n_distinct, -1, dtype=np.int64), np.zeros(1, dtype=np.int64))

    @property
    def active(self) -> bool:
        return self.arrays is not None

    @property
    def hits(self) -> int:
        return 0 if self.arrays is None else int(self.arrays[3][0])


_DISABLED = RowMemo(None, 0)


def sample_repeat_fraction(stream, rows: int = SAMPLE_ROWS) -> float:
    """The fraction of a fixed sample of rows whose hash equals another sampled row's (an
    estimate: a hash collision counts as a repeat, which only makes the ids be computed)."""
    n = stream.n_samples
    idx = np.arange(n)
    if n > rows:
        idx = np.sort(np.random.default_rng(0).choice(n, rows, replace=False))
    if stream.is_sparse:
        sub = stream.csr[idx]
        values = np.ascontiguousarray(sub.data, dtype=np.float64).view(np.uint64)
        indptr = np.ascontiguousarray(sub.indptr, dtype=np.int64)
        indices = np.ascontiguousarray(sub.indices, dtype=np.int64)
        dense = np.empty((0, 0), dtype=np.uint64)
    else:
        dense = np.ascontiguousarray(stream.dense[idx], dtype=np.float64).view(np.uint64)
        indptr = indices = np.empty(0, dtype=np.int64)
        values = np.empty(0, dtype=np.uint64)
    hashes = np.empty(len(idx), dtype=np.uint64)
    row_hashes(dense, indptr, indices, values, stream.is_sparse, hashes)
    _, counts = np.unique(hashes, return_counts=True)
    return float(counts[counts > 1].sum()) / max(len(idx), 1)


def repeated_row_ids(stream) -> tuple[np.ndarray | None, int]:
    """(ids, n_distinct) of a Stream's rows, computed once and kept on the Stream; (None, 0)
    when the memo is off or the rows repeat too little (``MIN_SAMPLE_REPEATS``)."""
    if not ENABLED or stream.n_samples < MIN_ROWS:
        return None, 0
    cached = stream.__dict__.get("_row_ids")
    if cached is None:
        cached = (None, 0)
        if sample_repeat_fraction(stream) >= MIN_SAMPLE_REPEATS:
            cached = row_ids(stream)
        stream._row_ids = cached
    return cached


def memo_for(stream, learner) -> RowMemo:
    """The memo of ``learner`` over a Stream's rows: made on the first call of a pass and kept on
    the Stream (one per learner, since the stamps are that learner's update counts), so it lasts
    across the pass's checkpoint segments."""
    ids, n_distinct = repeated_row_ids(stream)
    if ids is None:
        return _DISABLED
    memos = stream.__dict__.setdefault("_row_memos", {})
    memo = memos.get(id(learner))
    if memo is None:
        memo = memos[id(learner)] = RowMemo(ids, n_distinct)
    return memo


# Inlined into the loops (a call per step with the memo's tuple as argument cost more than the
# lookup); with memo None the branches are compiled away.
@njit(inline="always")
def memo_lookup(memo, i, version):
    """(hit, f): the memoised prediction for row i if it was made at update count ``version``."""
    if memo is None:
        return False, 0.0
    ids, mf, stamp, hits = memo
    u = ids[i]
    if stamp[u] == version:
        hits[0] += 1
        return True, mf[u]
    return False, 0.0


@njit(inline="always")
def memo_store(memo, i, version, f):
    if memo is None:
        return
    ids, mf, stamp, _ = memo
    u = ids[i]
    mf[u] = f
    stamp[u] = version


class BlockRepeats:
    """The distinct rows of each block of a pass over a Stream whose rows repeat: work that
    depends only on a row's content (projections, features, kernel sums against a fixed support
    set) is done once per distinct row of the block and copied to the other copies (the same
    bits). Does nothing on a stream without enough repeats (``repeated_row_ids``)."""

    def __init__(self, stream):
        self.ids, n_distinct = repeated_row_ids(stream)
        if self.ids is not None:
            self._seen = np.full(n_distinct, -1, dtype=np.int64)
            self._first = np.empty(0, dtype=np.int64)
            self._inverse = np.empty(0, dtype=np.int64)

    def map_rows(self, idx, compute):
        """``compute(rows, pos)`` returns one result row per stream row in ``rows``, which are
        ``idx[pos]`` (``pos`` None: ``rows`` is the whole block ``idx``). When some rows of the
        block repeat, it gets the first copy of each distinct row and its result is expanded to
        the whole block."""
        if self.ids is not None:
            if len(self._first) < len(idx):
                self._first = np.empty(len(idx), dtype=np.int64)
                self._inverse = np.empty(len(idx), dtype=np.int64)
            n_rep = in_block_representatives(self.ids, idx, self._seen, self._first, self._inverse)
            if n_rep < len(idx):
                pos = self._first[:n_rep]
                return compute(idx[pos], pos)[self._inverse[:len(idx)]]
        return compute(idx, None)


@njit(**JIT)
def in_block_representatives(ids, idx, seen, rep_pos, inverse):
    """For a block of rows ``idx``: the positions of each distinct row's first occurrence
    (``rep_pos``, returned count) and, per position, the index of its representative in that
    list (``inverse``). ``seen`` (length n_distinct, all -1) is restored before returning."""
    n_rep = 0
    for c in range(idx.shape[0]):
        u = ids[idx[c]]
        r = seen[u]
        if r < 0:
            r = n_rep
            seen[u] = r
            rep_pos[n_rep] = c
            n_rep += 1
        inverse[c] = r
    for q in range(n_rep):
        seen[ids[idx[rep_pos[q]]]] = -1
    return n_rep
