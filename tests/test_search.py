"""The step-size search as a config step (issue 15 item 1): declared in the config, ordinary
resumable cells, the rule, the choice flowing into the table's cells and eta_selection.md."""
from __future__ import annotations

import json
import textwrap

import pytest
from typer.testing import CliRunner

from lsokl.config import load_config
from lsokl.errors import ConfigError
from lsokl.results import ResultStore
from lsokl.search import run_search, search_config, search_experiment

CONFIG = """
name: small
task: binary
seed: 3
permutations: 2
budgets: 10
defaults: {sigma: 0.5}
datasets:
  breast_cancer: {max_samples: 300, scale: minmax}
  checkerboard:
    max_samples: 200
    permutation_source: seed
    algorithms: {ogd: {eta: 0.5}}     # fixed here: not searched on this dataset
algorithms:
  perceptron: {}
  ogd: {eta: 0.2}
  fogd: {eta: 0.002}
search:
  algorithms:
    ogd: {eta: [2, 0.2, 0.02]}
    fogd: {eta: [0.2, 0.002]}
  permutations: 2
  seed: 8
"""


def _rule(recs, where=lambda eta: True):
    """The rule, recomputed from the records: among the settings none of whose passes was degenerate,
    the lowest mean over the passes; ties to the larger eta; None when no setting is eligible."""
    passes: dict = {}
    for r in recs:
        if where(r["params"]["eta"]):
            passes.setdefault(r["params"]["eta"], []).append(r)
    eligible = {e: [r["value"] for r in rs] for e, rs in passes.items()
                if all(r["status"] == "ok" and not r.get("degenerate") for r in rs)}
    if not eligible:
        return None
    return min(sorted(eligible, reverse=True), key=lambda e: sum(eligible[e]) / len(eligible[e]))


def _load(tmp_path, text=CONFIG):
    p = tmp_path / "c.yaml"
    p.write_text(textwrap.dedent(text))
    return load_config(p)


def test_search_config_is_the_tables_own_reduced_to_the_grid(tmp_path):
    exp = _load(tmp_path)
    raw = search_config(exp.raw, exp.search)
    assert raw["seed"] == 8 and raw["permutations"] == 2 and raw["permutation_source"] == "seed"
    assert set(raw["algorithms"]) == {"ogd", "fogd"}
    assert raw["datasets"]["checkerboard"]["exclude"] == ["ogd"]  # its eta is fixed by the config
    assert raw["datasets"]["breast_cancer"]["scale"] == "minmax"  # the table's data settings
    sexp = search_experiment(exp)
    got = {(c.dataset, c.algorithm, c.param_dict["eta"]) for c in sexp.cells}
    assert ("breast_cancer", "ogd", 0.02) in got and ("checkerboard", "fogd", 0.2) in got
    assert not any(d == "checkerboard" and a == "ogd" for d, a, _ in got)
    assert len(sexp.cells) == 2 * (3 + 2) + 2 * 2
    assert all(c.permutation_source == "seed" and c.seed == 8 for c in sexp.cells)


@pytest.mark.parametrize("block, where", [
    ("{algorithms: {ogdd: {eta: [1]}}}", "search.algorithms.ogdd"),
    ("{algorithms: {ogd: {eta: 0.2}}}", "search.algorithms.ogd.eta"),
    ("{algorithms: {ogd: {eta: [1]}}, rule: best}", "search.rule"),
    ("{algorithms: {ogd: {eta: [1]}}, datasets: [germann]}", "search.datasets[0]"),
    ("{algorithms: {ogd: {eta: [1]}}, permutations: 0}", "search.permutations"),
    ("{algorithms: {ogd: {eta: [1]}}, colour: red}", "search.colour"),
])
def test_a_malformed_search_block_points_at_the_key(tmp_path, block, where):
    text = CONFIG.split("search:")[0] + f"search: {block}\n"
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, text)
    assert where in str(err.value)


def test_search_cells_are_resumable_and_the_choice_flows_into_the_table(tmp_path):
    exp = _load(tmp_path)
    table, choices, summary = run_search(exp, tmp_path / "r", jobs=1)
    assert summary.ran["ok"] == 14 and summary.skipped_ok == 0
    recs = ResultStore(tmp_path / "r" / "search").records()
    assert len(recs) == 14 and all(r["config_name"] == "small-search" for r in recs)
    chosen = {(c.dataset, c.algorithm): c.chosen for c in choices}
    # the rule, recomputed from the records (degenerate settings excluded, lowest mean, ties to the larger eta)
    for (ds, alg), pick in chosen.items():
        best = _rule([r for r in recs if (r["dataset"], r["algorithm"]) == (ds, alg)])
        assert pick == (None if best is None else {"eta": best})
    assert any(pick is not None for pick in chosen.values())
    # the table's cells carry the chosen eta (the config's where none was eligible), and the fixed one
    # where the config fixes it
    for c in table.cells:
        if c.algorithm in ("ogd", "fogd"):
            pick = chosen.get((c.dataset, c.algorithm))
            config = {"ogd": 0.2, "fogd": 0.002}[c.algorithm]
            want = 0.5 if (c.dataset, c.algorithm) == ("checkerboard", "ogd") else (pick or {"eta": config})["eta"]
            assert c.param_dict["eta"] == want
    md = (tmp_path / "r" / "eta_selection.md").read_text()
    assert "checkerboard ogd: eta=0.5 (set in the config, not searched)" in md
    assert md.count("**") >= 2 * len(choices)
    again = run_search(exp, tmp_path / "r", jobs=1)[2]
    assert again.skipped_ok == 14 and not again.ran


def test_lsokl_run_runs_the_search_then_the_table(tmp_path):
    from lsokl.cli import app

    cfg = tmp_path / "c.yaml"
    cfg.write_text(textwrap.dedent(CONFIG))
    res = CliRunner().invoke(app, ["run", str(cfg), "--results", str(tmp_path / "r"), "-j", "1", "-q"])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "r" / "eta_selection.md").exists()
    assert len(ResultStore(tmp_path / "r" / "search").records()) == 14
    table = ResultStore(tmp_path / "r").records()
    assert len(table) == 2 * 2 * 3  # 2 datasets x 3 algorithms x 2 permutations
    searched = {json.dumps(r["params"]["eta"]) for r in table if r["algorithm"] == "fogd"}
    assert searched <= {"0.2", "0.002"}
    # --no-search: the config's own values
    res = CliRunner().invoke(app, ["run", str(cfg), "--results", str(tmp_path / "plain"), "-j", "1", "-q",
                                   "--no-search", "-a", "fogd"])
    assert res.exit_code == 0, res.output
    assert {r["params"]["eta"] for r in ResultStore(tmp_path / "plain").records()} == {0.002}
    assert not (tmp_path / "plain" / "search").exists()


def test_refined_values_lie_strictly_between_the_chosen_points_neighbours():
    from lsokl.search import refined_values

    grid = [2, 1, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001, 0.0005, 0.0002]
    nine = range(1, 10)
    assert refined_values(grid, 0.5, nine) == [0.9, 0.8, 0.7, 0.6, 0.4, 0.3]
    assert refined_values(grid, 0.2, nine) == [0.4, 0.3]
    assert refined_values(grid, 0.001, nine) == [0.0009, 0.0008, 0.0007, 0.0006]
    assert refined_values(grid, 0.0002, nine) == [0.0004, 0.0003]  # the grid's end bounds it
    assert refined_values(grid, 2, nine) == []  # nothing m * 10^k between 1 and 2
    assert refined_values([2, 0.2, 0.02], 0.2, [3]) == [0.3, 0.03]
    assert refined_values(grid, 0.3, nine) == []  # not a grid point: nothing to refine around


REFINE = CONFIG.replace("  seed: 8\n", "  seed: 8\n  refine: [3, 6]\n").replace(
    "    fogd: {eta: [0.2, 0.002]}\n", "    fogd: {eta: [0.2, 0.02, 0.002]}\n")


def test_refine_plays_the_values_between_the_best_points_neighbours_and_chooses_among_both(tmp_path):
    exp = _load(tmp_path, REFINE)
    assert exp.search.refine == (3, 6)
    table, choices, summary = run_search(exp, tmp_path / "r", jobs=1)
    recs = ResultStore(tmp_path / "r" / "search").records()
    by_pair: dict = {}
    for r in recs:
        by_pair.setdefault((r["dataset"], r["algorithm"]), []).append(r)
    grids = {"ogd": [2, 0.2, 0.02], "fogd": [0.2, 0.02, 0.002]}
    refined = 0
    for (ds, alg), rs in by_pair.items():
        best = _rule(rs, where=lambda e: e in grids[alg])
        played = {r["params"]["eta"] for r in rs}
        # stage 2 played exactly the m * 10^k (m in {3, 6}) strictly between the best point's neighbours
        # (nothing where no grid point was eligible)
        want = set()
        if best is not None:
            g = sorted(grids[alg])
            i = g.index(best)
            lo, hi = g[max(i - 1, 0)], g[min(i + 1, len(g) - 1)]
            want = {x for x in (3, 6, 0.3, 0.6, 0.03, 0.06, 0.003, 0.006, 0.0003) if lo < x < hi}
        assert played - set(grids[alg]) == want, (ds, alg, best)
        refined += len(want)
        counts: dict = {}
        for r in rs:
            counts[r["params"]["eta"]] = counts.get(r["params"]["eta"], 0) + 1
        assert set(counts.values()) == {2}
    assert refined > 0 and len(recs) == summary.ran["ok"] > 14
    # the choice is the rule over both stages together
    for ch in choices:
        best = _rule(by_pair[(ch.dataset, ch.algorithm)])
        assert ch.chosen == (None if best is None else {"eta": best})
    md = (tmp_path / "r" / "eta_selection.md").read_text()
    assert "Two stages" in md
    again = run_search(exp, tmp_path / "r", jobs=1)[2]
    assert not again.ran and again.skipped_ok == len(recs)


def test_a_malformed_refine_points_at_the_key(tmp_path):
    with pytest.raises(ConfigError, match="search.refine"):
        _load(tmp_path, CONFIG.replace("  seed: 8\n", "  seed: 8\n  refine: [0.5]\n"))
