"""The duplicate-row memo (lsokl/compute/duplicates.py): exact row ids, and learners that give
bit-for-bit the same passes with the memo on and off, on streams built to hit it."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from lsokl.learners import create
from lsokl.compute import duplicates
from lsokl.compute.stream import Stream


def repeated_rows(n_distinct=40, n=800, d=6, seed=0, noisy_labels=True):
    """n rows drawn from n_distinct random rows (a few very frequent, as in kddcup99), with
    labels that disagree between copies when ``noisy_labels`` (so a reused prediction is often
    followed by an update, the path where the kernel row must be recomputed)."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(n_distinct, d)) * 2.0
    base[rng.random(base.shape) < 0.4] = 0.0  # zeros, so the CSR rows have varying lengths
    weights = 1.0 / np.arange(1, n_distinct + 1) ** 1.2
    which = rng.choice(n_distinct, size=n, p=weights / weights.sum())
    X = base[which]
    clean = np.where(base[:, 0] + base[:, 1] >= 0, 1.0, -1.0)[which]
    y = np.where(rng.random(n) < (0.3 if noisy_labels else 0.0), -clean, clean)
    return X, y


def test_row_ids_match_row_equality_dense_and_csr():
    X, _ = repeated_rows(n_distinct=30, n=500)
    _, expected = np.unique(X, axis=0, return_inverse=True)
    for data in (X, sp.csr_matrix(X)):
        ids, n_distinct = duplicates.row_ids(Stream(data))
        assert n_distinct == len(np.unique(expected))
        # same id <=> same row: the two labelings are the same partition
        pairs = set(zip(ids.tolist(), expected.ravel().tolist()))
        assert len(pairs) == n_distinct
        # ids count up in order of first appearance
        assert ids[0] == 0 and np.all(np.diff(np.maximum.accumulate(ids)) <= 1)


def test_row_ids_survive_hash_collisions():
    X, _ = repeated_rows(n_distinct=25, n=300)
    s = Stream(X)
    honest, n_honest = duplicates.row_ids(s)
    # every row colliding, and distinct rows colliding in three classes (a hash must only give
    # equal rows equal values)
    for forced in (np.zeros(300, dtype=np.uint64), (honest % 3).astype(np.uint64)):
        ids, n_distinct = duplicates.row_ids(s, hashes=forced)
        assert n_distinct == n_honest
        assert len(set(zip(ids.tolist(), honest.tolist()))) == n_honest


def test_row_ids_compare_bits_not_values():
    X = np.array([[0.0, 1.0], [-0.0, 1.0], [0.0, 1.0]])
    ids, n_distinct = duplicates.row_ids(Stream(X))
    assert n_distinct == 2 and ids[0] == ids[2] != ids[1]
    # CSR: an explicitly stored zero makes a different row (conservative: never a wrong reuse)
    A = sp.csr_matrix((np.array([1.0, 0.0, 1.0]), np.array([1, 0, 1]), np.array([0, 1, 3])),
                      shape=(2, 2))
    A.sort_indices()
    ids, n_distinct = duplicates.row_ids(Stream(A))
    assert n_distinct == 2


def test_sample_decides_whether_ids_are_computed():
    X, _ = repeated_rows(n_distinct=30, n=3000)
    assert duplicates.sample_repeat_fraction(Stream(X)) > 0.9
    assert duplicates.repeated_row_ids(Stream(X))[0] is not None
    distinct = np.random.default_rng(1).normal(size=(3000, 5))
    assert duplicates.sample_repeat_fraction(Stream(distinct)) == 0.0
    assert duplicates.repeated_row_ids(Stream(distinct)) == (None, 0)
    # a stream shorter than MIN_ROWS (river's one row at a time) is not even sampled
    assert duplicates.repeated_row_ids(Stream(np.ones((duplicates.MIN_ROWS - 1, 3)))) == (None, 0)
    assert duplicates.repeated_row_ids(Stream(np.ones((duplicates.MIN_ROWS, 3))))[1] == 1


def test_in_block_representatives():
    ids = np.array([5, 3, 5, 5, 0, 3, 1], dtype=np.int64)
    idx = np.arange(7, dtype=np.int64)
    seen = np.full(6, -1, dtype=np.int64)
    rep_pos, inverse = np.empty(7, dtype=np.int64), np.empty(7, dtype=np.int64)
    n = duplicates.in_block_representatives(ids, idx, seen, rep_pos, inverse)
    assert n == 4
    assert rep_pos[:n].tolist() == [0, 1, 4, 6]
    assert inverse.tolist() == [0, 1, 0, 0, 2, 1, 3]
    assert np.all(seen == -1)  # restored for the next block


# learner, its parameters: every learner that reads the memo, with small budgets so the removal,
# replacement and projection paths (the ones that read a recomputed kernel row) run many times
MEMO_LEARNERS = [
    ("rbp", {"budget": 8, "random_state": 3}),
    ("forgetron", {"budget": 8}),
    ("projectron", {"budget": 8}),
    ("projectron++", {"budget": 8}),
    ("bpas", {"budget": 8}),
    ("fogd", {"n_fourier": 16, "eta": 0.3, "random_state": 3}),
    ("perceptron", {}),
    ("ogd", {"eta": 0.3}),
    ("nogd", {"budget": 8, "eta": 0.3}),
]


def _pass(name, params, X, y, enabled, monkeypatch):
    monkeypatch.setattr(duplicates, "ENABLED", enabled)
    learner = create(name, sigma=3.0, **params)
    trace = learner.run(X, y, np.random.default_rng(7).permutation(len(y)))
    state = {k: np.ascontiguousarray(v).copy() for k, v in vars(learner).items()
             if isinstance(v, np.ndarray) and k.endswith("_") and not k.startswith("_")}
    return learner, trace, state


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("name,params", MEMO_LEARNERS, ids=[n for n, _ in MEMO_LEARNERS])
def test_memo_gives_the_same_pass_bit_for_bit(name, params, sparse, monkeypatch):
    X, y = repeated_rows(n=1500)
    data = sp.csr_matrix(X) if sparse else X
    made = []

    class RecordedMemo(duplicates.RowMemo):
        def __init__(self, *args):
            super().__init__(*args)
            made.append(self)

    monkeypatch.setattr(duplicates, "RowMemo", RecordedMemo)
    _, t_off, off = _pass(name, params, data, y, False, monkeypatch)
    assert not made
    _, t_on, on = _pass(name, params, data, y, True, monkeypatch)
    assert t_on.mistakes == t_off.mistakes
    assert np.array_equal(t_on.ckpt_mistakes, t_off.ckpt_mistakes)
    assert np.array_equal(t_on.ckpt_support, t_off.ckpt_support)
    assert on.keys() == off.keys()
    for key in off:
        assert np.array_equal(on[key].view(np.uint8), off[key].view(np.uint8)), key
    # the memo was really used: rows repeated and (for the per-step memo) predictions reused
    assert duplicates.sample_repeat_fraction(Stream(data)) >= duplicates.MIN_SAMPLE_REPEATS
    if name not in ("perceptron", "ogd", "nogd"):  # these share block sums or features instead
        assert len(made) == 1 and made[0].hits > 50


def test_blocked_learners_share_sums_of_repeated_rows(monkeypatch):
    """The blocked Perceptron computes block-start sums once per distinct row of a block."""
    import lsokl.compute.blocked as blocked

    X, y = repeated_rows(n=1500, noisy_labels=False)
    sizes = []
    real = blocked.block_scores

    def spy(stream, idx, *args, **kwargs):
        sizes.append(len(idx))
        return real(stream, idx, *args, **kwargs)

    monkeypatch.setattr(blocked, "block_scores", spy)
    create("perceptron", sigma=1.5).run(X, y, np.random.default_rng(7).permutation(len(y)))
    assert max(sizes) <= 40  # at most 40 distinct rows, whatever the block size (256)

