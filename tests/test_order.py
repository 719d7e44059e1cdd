"""`order: block-shuffle` (issue 26 item 4): a seeded order that reads data larger than memory block by block,
recorded with the cell; `permutation` stays the default (and the cell keys of existing configs do not change); a
permutation over data larger than the available memory warns."""
from __future__ import annotations

import numpy as np
import pytest
import yaml

from lsokl.config import load_config
from lsokl.errors import ConfigError
from lsokl.runner.seeds import block_shuffle_order, permutation_exceeds_memory, permutation_order


@pytest.mark.parametrize("n,block", [(23, 5), (20, 5), (7, 10), (1000, 64)])
def test_block_shuffle_is_a_permutation_of_whole_blocks_in_random_order(n, block):
    order = block_shuffle_order(0, "toy", 0, n, block)
    assert order.dtype == np.int64 and sorted(order.tolist()) == list(range(n))
    # the stream visits block after block: each stretch of the output is one block's rows
    blocks = order // block
    changes = np.flatnonzero(np.diff(blocks)) + 1
    visited = blocks[np.r_[0, changes]]
    assert sorted(visited.tolist()) == list(range(-(-n // block)))  # each block once
    if n >= 1000:  # rows are shuffled inside blocks and blocks are shuffled
        assert not np.array_equal(visited, np.sort(visited))
        first = order[:block]
        assert not np.array_equal(first, np.sort(first))


def test_block_shuffle_is_seeded_by_seed_dataset_index_and_block_rows():
    a = block_shuffle_order(0, "toy", 0, 500, 50)
    assert np.array_equal(a, block_shuffle_order(0, "toy", 0, 500, 50))
    for other in (block_shuffle_order(1, "toy", 0, 500, 50), block_shuffle_order(0, "toy2", 0, 500, 50),
                  block_shuffle_order(0, "toy", 1, 500, 50), block_shuffle_order(0, "toy", 0, 500, 51),
                  permutation_order(0, "toy", 0, 500)):
        assert not np.array_equal(a, other)
    with pytest.raises(ValueError, match="block_rows"):
        block_shuffle_order(0, "toy", 0, 10, 0)


def _config(tmp_path, top: dict | None = None, dataset: dict | None = None):
    raw = {"name": "order", "permutations": 2, "datasets": {"checkerboard": dataset or {}},
           "algorithms": {"perceptron": {}}, **(top or {})}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def test_default_is_permutation_and_keeps_the_cell_spec(tmp_path):
    exp = load_config(_config(tmp_path))
    assert all(c.order == () for c in exp.cells)
    assert all("order" not in c.spec("h", "v") for c in exp.cells)  # earlier results still resume


def test_block_shuffle_in_the_config_reaches_the_cell_spec_and_the_key(tmp_path):
    plain = load_config(_config(tmp_path)).cells[0].spec("h", "v")
    top = load_config(_config(tmp_path, {"order": "block-shuffle", "block_rows": 16})).cells[0]
    assert top.spec("h", "v")["order"] == {"how": "block-shuffle", "block_rows": 16}
    assert {k: v for k, v in top.spec("h", "v").items() if k != "order"} == plain
    default_rows = load_config(_config(tmp_path, dataset={"order": "block-shuffle"})).cells[0]
    assert default_rows.spec("h", "v")["order"]["block_rows"] == 65536


@pytest.mark.parametrize("top,dataset,message", [
    ({"order": "block-shufle"}, None, r"order.*block-shuffle"),  # a typo suggests the closest
    (None, {"block_rows": 8}, r"block_rows.*only means something with `order: block-shuffle`"),
    (None, {"order": "block-shuffle", "block_rows": 0}, r"block_rows"),
])
def test_bad_order_settings_point_at_the_key(tmp_path, top, dataset, message):
    with pytest.raises(ConfigError, match=message):
        load_config(_config(tmp_path, top, dataset))


def test_block_shuffle_with_the_authors_permutations_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="permutation_source: authors"):
        load_config(_config(tmp_path, {"permutation_source": "authors"}, {"order": "block-shuffle"}))


def test_a_run_streams_the_block_shuffled_order_and_records_it(tmp_path):
    from lsokl.results import ResultStore
    from lsokl.runner import run_experiment
    from lsokl.runner.worker import Job

    exp = load_config(_config(tmp_path, {"order": "block-shuffle", "block_rows": 7}))
    cell = exp.cells[1]
    job = Job(key="k", spec=cell.spec("h", "v"), algorithm=cell.algorithm, config_hash="c", config_name="order",
              seed_entropy=(0,), timeout=None)
    assert np.array_equal(job.order(100, None), block_shuffle_order(0, "checkerboard", 1, 100, 7))
    run_experiment(exp, tmp_path / "results", jobs=1)
    recs = ResultStore(tmp_path / "results").records()
    assert len(recs) == 2 and all(r["status"] == "ok" for r in recs)
    assert all(r["order"] == {"how": "block-shuffle", "block_rows": 7} for r in recs)


def test_warns_when_a_permutation_is_played_over_data_larger_than_memory(tmp_path):
    from lsokl.runner.run import warn_permutation_over_memory

    assert permutation_exceeds_memory(10 * 2**30, available=2**30).startswith("a random permutation of 10.0 GiB")
    assert permutation_exceeds_memory(2**20, available=2**30) is None
    X = np.zeros((1000, 10))  # 80 kB, "larger" than 40 kB of memory
    perm_spec = load_config(_config(tmp_path, {"order": "permutation"})).datasets["checkerboard"]
    with pytest.warns(UserWarning, match="checkerboard: a random permutation .*order: block-shuffle"):
        assert warn_permutation_over_memory(perm_spec, X, available=40_000)
    block_spec = load_config(_config(tmp_path, {"order": "block-shuffle"})).datasets["checkerboard"]
    assert warn_permutation_over_memory(block_spec, X, available=40_000) is None


def test_data_larger_than_memory_runs_block_shuffle_unless_the_config_insists(tmp_path, monkeypatch):
    """No `order` in the config and a cache larger than the memory available (faked: 1 kB): the run
    chooses block-shuffle, says so, and records it; `order: permutation` keeps the permutation (and
    warns); with enough memory nothing changes."""
    from lsokl.results import ResultStore
    from lsokl.runner import resources, run_experiment
    from lsokl.runner.run import choose_order

    X = np.zeros((1000, 10))
    spec = load_config(_config(tmp_path)).datasets["checkerboard"]
    order, line = choose_order(spec, X, available=40_000)
    assert order == {"block_rows": 65536, "how": "block-shuffle", "chosen": "auto"}
    assert line.startswith("dataset checkerboard: 0.0 GiB of data") and "block-shuffle chosen" in line
    assert choose_order(spec, X, available=10**9) is None
    insisted = load_config(_config(tmp_path, dataset={"order": "permutation"})).datasets["checkerboard"]
    assert choose_order(insisted, X, available=40_000) is None

    monkeypatch.setattr(resources, "available_memory", lambda: 1000)
    with pytest.warns(UserWarning, match="block-shuffle chosen"):
        summary = run_experiment(load_config(_config(tmp_path)), tmp_path / "auto", jobs=1, memory_limit=float("inf"))
    assert len(summary.notes) == 1 and "block-shuffle chosen" in summary.notes[0]
    recs = ResultStore(tmp_path / "auto").records()
    assert len(recs) == 2 and all(r["status"] == "ok" for r in recs)
    assert all(r["order"] == {"how": "block-shuffle", "block_rows": 65536, "chosen": "auto"} for r in recs)

    with pytest.warns(UserWarning, match="a random permutation"):
        summary = run_experiment(load_config(_config(tmp_path, {"order": "permutation"})), tmp_path / "kept",
                                 jobs=1, memory_limit=float("inf"))
    assert summary.notes == []
    assert all("order" not in r for r in ResultStore(tmp_path / "kept").records())
