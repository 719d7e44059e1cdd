"""Stream.reuse (lsokl/compute/stream.py): a worker playing many cells on one memory-mapped data
set builds its Stream (and row ids) once. Reuse must never hand out a Stream for other content,
and a reused Stream must give the same passes as a fresh one."""
from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp

from lsokl.learners import create
from lsokl.compute import stream as stream_module
from lsokl.compute.stream import Stream, data_key


def _memmap(tmp_path, name, a):
    path = tmp_path / f"{name}.npy"
    np.save(path, a)
    return np.load(path, mmap_mode="r")


def test_reuse_keys_read_only_memory_maps_by_content(tmp_path):
    rng = np.random.default_rng(0)
    X = _memmap(tmp_path, "X", rng.standard_normal((50, 4)))
    a = Stream.reuse(X)
    assert Stream.reuse(_memmap(tmp_path, "X", np.asarray(X))) is not a  # rewritten file: new
    X2 = np.load(tmp_path / "X.npy", mmap_mode="r")
    assert Stream.reuse(X2) is Stream.reuse(X2)
    # in-memory arrays (they can change under a kept Stream) are never kept
    Xm = rng.standard_normal((50, 4))
    assert data_key(Xm) is None and Stream.reuse(Xm) is not Stream.reuse(Xm)
    assert data_key(np.load(tmp_path / "X.npy", mmap_mode="r+")) is None  # writable map


def test_reuse_of_csr_with_in_memory_row_pointers(tmp_path):
    rng = np.random.default_rng(1)
    dense = rng.standard_normal((60, 8))
    dense[rng.random(dense.shape) < 0.6] = 0.0
    csr = sp.csr_matrix(dense)
    data, indices = _memmap(tmp_path, "d", csr.data), _memmap(tmp_path, "i", csr.indices)
    ptr = csr.indptr.copy()
    X = sp.csr_matrix((data, indices, ptr), shape=csr.shape)
    a = Stream.reuse(X)
    assert Stream.reuse(sp.csr_matrix((data, indices, ptr.copy()), shape=csr.shape)) is a
    # the kept Stream owns its row pointers: changing the caller's array changes the key only
    ptr[5:] = ptr[5:]  # same content
    ptr2 = ptr.copy()
    ptr2[3] += 1  # other content: another Stream
    assert Stream.reuse(sp.csr_matrix((data, indices, ptr2), shape=csr.shape)) is not a
    assert not np.shares_memory(a.indptr, ptr) and not np.shares_memory(a.csr.indptr, ptr)


def test_reused_stream_gives_the_fresh_streams_passes(tmp_path, monkeypatch):
    # repeated rows, so the duplicate-row memo is on: a reused Stream must not carry one
    # learner's memo (stamped with its update counts) into the next pass, even for the same
    # learner object
    rng = np.random.default_rng(2)
    base = rng.standard_normal((30, 5)) * 2.0
    Xa = base[rng.integers(0, 30, 900)]
    y = np.where(rng.random(900) < 0.5, 1.0, -1.0)
    X = _memmap(tmp_path, "rep", Xa)
    order = rng.permutation(900)
    for name, params in [("rbp", {"budget": 6, "random_state": 1}), ("forgetron", {"budget": 6}),
                         ("fogd", {"n_fourier": 12, "eta": 0.3, "random_state": 1})]:
        fresh = create(name, sigma=2.0, **params)
        ref = fresh.run(np.array(Xa), y, order)
        model = create(name, sigma=2.0, **params)
        for _ in range(3):  # the same learner object, the same kept Stream
            trace = model.run(X, y, order)
            assert (trace.mistakes, trace.support_size) == (ref.mistakes, ref.support_size), name
            np.testing.assert_array_equal(trace.ckpt_mistakes, ref.ckpt_mistakes)
    assert Stream.reuse(X)._row_ids[0] is not None  # the ids were computed, and kept


def test_reuse_keeps_a_bounded_number_of_streams(tmp_path, monkeypatch):
    monkeypatch.setattr(stream_module, "_REUSED", type(stream_module._REUSED)())
    maps = [_memmap(tmp_path, f"m{k}", np.full((5, 2), float(k))) for k in range(4)]
    for X in maps:
        Stream.reuse(X)
    assert len(stream_module._REUSED) == stream_module.REUSE_SIZE
    assert os.path.exists(maps[0].filename)
