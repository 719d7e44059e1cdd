"""Cells start longest first (issue 26 item 7): the ordering logic, not timings."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp

from lsokl.runner.schedule import History, estimate_costs, longest_first, model_cost, replay, row_width


def job(learner, dkey, key, task="binary", **params):
    return (SimpleNamespace(algorithm=learner, key=key, overrides=(),
                            spec={"task": task, "learner": learner, "dataset": dkey, "params": params}), dkey)


DATA = {"big": (np.zeros((4000, 20)), np.ones(4000)), "small": (np.zeros((200, 20)), np.ones(200)),
        "wide": (np.zeros((200, 2000)), np.ones(200))}


def test_the_model_orders_by_n_width_and_budget():
    work = [job("rbp", "small", 0, budget=10), job("rbp", "big", 1, budget=10),
            job("perceptron", "big", 2), job("rbp", "big", 3, budget=100), job("rbp", "wide", 4, budget=10)]
    got = [j.key for j, _ in longest_first(work, DATA, jobs=1)]
    # n x B x (d + 1): unbudgeted on 4000 rows ~ 4000^2 x 21 / 8 = 42M; 4000 x 100 x 21 = 8.4M;
    # 200 x 10 x 2001 = 4.0M (wide rows); 4000 x 10 x 21 = 0.84M; 200 x 10 x 21 = 0.04M
    assert got == [2, 3, 4, 1, 0]
    c = estimate_costs(work, DATA)
    assert c[3] == pytest.approx(10 * c[1], rel=0.1)  # ten times the budget, ten times the work


def test_sparse_rows_count_their_non_zeros():
    X = sp.random(100, 10_000, density=0.001, format="csr", random_state=0)
    assert row_width(X) == pytest.approx(X.nnz / 100)
    assert row_width(np.zeros((5, 7))) == 7


def test_random_features_cost_d_times_D():
    from lsokl.learners import registry

    small = model_cost(registry.create("fogd", "binary", budget=10, rho_f=4), 1000, 50)
    large = model_cost(registry.create("fogd", "binary", budget=100, rho_f=4), 1000, 50)
    assert large == pytest.approx(10 * small)


def _record(dataset, learner, wall, n=200, d=20, **params):
    return {"status": "ok", "wall_s": wall, "n_samples": n, "n_features": d, "params": params,
            "learner": learner, "task": "binary", "dataset": dataset}


def test_measured_timings_of_the_same_learner_and_dataset_come_first():
    """The search's cells (same learner, same data) took 100 s for rbp on `small`: its cells start before the
    model's larger ones; a learner measured on another dataset gets that dataset's rate."""
    h = History()
    h.add(_record("small", "rbp", 100.0, budget=10))
    h.add(_record("small", "rbp", 0.0, budget=10))  # no timing: ignored
    h.add({**_record("small", "rbp", 1e6, budget=10), "status": "failed"})  # not ok: ignored
    work = [job("rbp", "big", 1, budget=10), job("rbp", "small", 0, budget=10)]
    costs = estimate_costs(work, DATA, h)
    assert costs[1] == pytest.approx(100.0)  # same setting as measured
    assert costs[0] == pytest.approx(100.0 * 4000 / 200)  # rbp's rate, scaled by the model
    h.add(_record("big", "rbp", 1.0, n=4000, budget=10))  # `big` measured itself: its own rate now
    assert estimate_costs(work, DATA, h)[0] == pytest.approx(1.0)
    assert [j.key for j, _ in longest_first(work, DATA, h, jobs=1)] == [0, 1]


def test_the_first_slots_go_to_distinct_compiled_variants():
    """The two longest cells share a compiled variant: with 2 workers the second slot goes to the longest cell of
    another variant (a cold cache compiles each once); the rest keep the cost order; nothing lost or repeated."""
    work = [job("perceptron", "big", 0), job("perceptron", "big", 1), job("rbp", "big", 2, budget=100),
            job("rbp", "small", 3, budget=10), job("ogd", "small", 4)]
    got = [j.key for j, _ in longest_first(work, DATA, jobs=2)]
    assert got[:2] == [0, 2] and sorted(got) == [0, 1, 2, 3, 4]
    costs = dict(zip(range(5), estimate_costs(work, DATA)))
    assert [costs[k] for k in got[2:]] == sorted((costs[k] for k in got[2:]), reverse=True)
    assert longest_first([], DATA, jobs=4) == []


def test_replay_is_list_scheduling():
    # 2 workers, in order: w1 3, w2 3, w1 3+2, w2 3+2, w1 5+2 -> 7; longest first over [1, 1, 2, 2] -> 3
    assert replay([3, 3, 2, 2, 2], 2) == 7
    assert replay([1, 1, 2, 2], 2) == 3 and replay(sorted([1, 1, 2, 2], reverse=True), 2) == 3
    assert replay([], 4) == 0 and replay([5.0], 16) == 5.0


def test_a_grid_run_with_two_workers_hands_the_backend_its_cells_longest_first(tmp_path, monkeypatch):
    import textwrap

    from lsokl.config import load_config
    from lsokl.runner import run as run_mod
    from lsokl.runner.worker import execute

    p = tmp_path / "g.yaml"
    p.write_text(textwrap.dedent("""\
        name: g
        permutations: 2
        datasets:
          checkerboard: {max_samples: 100}
          breast_cancer: {max_samples: 400, scale: minmax}
        algorithms:
          rbp: {budget: 10}
          perceptron: {}
        """))
    seen = []

    def in_order(work, data, jobs):
        for j, dkey in work:
            seen.append((j.spec["dataset"], j.spec["learner"]))
            yield execute(j, *data[dkey])

    monkeypatch.setattr(run_mod, "run_loky", in_order)
    run_mod.run_experiment(load_config(p), tmp_path / "r", jobs=2)
    assert len(seen) == 8 and len(set(seen)) == 4
    # chosen before any cell finished, by the model: the unbudgeted learner on the larger set (later choices
    # lean on the measured times of the cells before, which vary from run to run)
    assert seen[0] == ("breast_cancer", "perceptron")


def test_history_rates_are_counted_with_the_same_row_width():
    """A sparse dataset's own timings scale with its non-zeros per row both ways: a cell twice as long as a
    measured one (twice n) is estimated at twice its wall time, whatever d."""
    X = sp.random(400, 5000, density=0.002, format="csr", random_state=1)
    data = {"sparse": (X, np.ones(400))}
    h = History()
    h.add(_record("sparse", "rbp", 3.0, n=200, d=5000, budget=10))
    (cost,) = estimate_costs([job("rbp", "sparse", 0, budget=10)], data, h)
    assert cost == pytest.approx(6.0, rel=0.02)


def test_a_finished_cell_re_estimates_the_waiting_cells_of_its_learner():
    """The model puts `big` rbp first; the first `small` rbp cell takes 100 s: the waiting `small` cells now come
    before `big`'s, whose estimate leans on the same learner's rate."""
    from lsokl.runner.schedule import LongestFirst

    work = [job("rbp", "big", "b0", budget=10), job("rbp", "big", "b1", budget=10),
            job("rbp", "small", "s0", budget=10), job("rbp", "small", "s1", budget=10),
            job("rbp", "small", "s2", budget=10)]
    q = LongestFirst(work, DATA, History(), jobs=1)
    assert q.pop()[0].key == "b0"
    assert q.pop()[0].key == "b1"
    q = LongestFirst(work, DATA, History(), jobs=1)
    first = q.pop()[0]
    q.finished(_record("small", "rbp", 100.0, budget=10))  # measured elsewhere meanwhile
    q.finished(_record("big", "rbp", 1.0, n=4000, budget=10))
    rest = [j.key for j, _ in q]
    assert first.key == "b0" and rest == ["s0", "s1", "s2", "b1"]
    assert q.pop() is None


def test_replaying_a_queue_feeds_it_the_finished_cells():
    from lsokl.runner.schedule import LongestFirst, replay_queue

    wall = {"b0": 1.0, "b1": 1.0, "s0": 10.0, "s1": 10.0}
    work = [job("rbp", "big", k, budget=10) for k in ("b0", "b1")] + \
           [job("rbp", "small", k, budget=10) for k in ("s0", "s1")]
    q = LongestFirst(work, DATA, History(), jobs=1)
    # one worker: b0 (model's longest) runs 1 s; then b1 (the small ones' 10 s are not known yet): 1 s; s0, s1
    assert replay_queue(q, lambda it: wall[it[0].key], 1,
                        record=lambda it: _record(it[1], "rbp", wall[it[0].key],
                                                  n=DATA[it[1]][0].shape[0], budget=10)) == 22.0
    q = LongestFirst(work, DATA, History(), jobs=2)
    # two workers, no timings fed back: b0 and b1 (the model's longest) at 0 s, s0 and s1 at 1 s, done at 11 s
    assert replay_queue(q, lambda it: wall[it[0].key], 2) == pytest.approx(11.0)


def test_a_dataset_s_other_learners_of_the_same_kind_come_before_the_learner_on_other_data():
    """No rbp timing on `small`: its budgeted neighbour (forgetron, same budget) on `small` says more than rbp
    on `big`; an unbudgeted learner's timing on `small` is not used for a budgeted cell."""
    h = History()
    h.add(_record("big", "rbp", 1.0, n=4000, budget=10))
    h.add(_record("small", "forgetron", 50.0, budget=10))
    h.add(_record("small", "perceptron", 1000.0))
    (cost,) = estimate_costs([job("rbp", "small", 0, budget=10)], DATA, h)
    assert cost == pytest.approx(50.0)
