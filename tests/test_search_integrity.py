"""The step-size search's integrity (issue 23 items 17, 18): a non-finite parameter round-trips
through the records so the search finds its setting; a setting is excluded as degenerate when
any of its passes is, and eta_selection.md gives the count per setting."""
from __future__ import annotations

import json
import math
import textwrap

from lsokl.config import load_config
from lsokl.results import ResultStore
from lsokl.results.record import CURVE_KEYS, make_record
from lsokl.search import Choice, choose, grid_markdown, search_experiment, select

CONFIG = """
name: mc
task: multiclass
seed: 1
permutations: 2
budgets: 10
defaults: {sigma: 8}
datasets:
  iris: {}
algorithms:
  bogd: {eta: 0.5, lam: 1.0e-5, gamma: .inf}
search:
  algorithms:
    bogd: {eta: [0.5, 0.05]}
  permutations: 2
  seed: 4
"""


def _record(cell, value, degenerate=None):
    spec = cell.spec("sha", "test")
    return make_record(key=f"{cell.algorithm}-{cell.param_dict['eta']}-{cell.permutation}", spec=spec,
                       status="ok", config_hash="h", config_name="mc", algorithm=cell.algorithm,
                       fields={"value": value, "curve": {k: [] for k in CURVE_KEYS},
                               "degenerate": degenerate})


def test_an_infinite_parameter_reads_back_as_the_float_it_was(tmp_path):
    exp = load_config(_write(tmp_path, CONFIG))
    cell = exp.cells[0]
    assert cell.param_dict["gamma"] == math.inf
    store = ResultStore(tmp_path / "r").ensure()
    store.write(_record(cell, 0.3))
    on_disk = json.loads(next((tmp_path / "r" / "records").glob("*.json")).read_text())
    assert on_disk["params"]["gamma"] == "inf"  # the file stays strict JSON
    back = store.records()[0]
    assert back["params"]["gamma"] == math.inf and isinstance(back["params"]["gamma"], float)
    assert store.read(back["key"])["params"] == cell.param_dict


def test_the_search_finds_multiclass_bogds_choice_with_gamma_inf(tmp_path):
    """Before the fix: records held gamma "inf", the cells gamma inf; nothing matched and BOGD had
    no row in eta_selection.md (results/table7)."""
    exp = load_config(_write(tmp_path, CONFIG))
    sexp = search_experiment(exp)
    store = ResultStore(tmp_path / "s").ensure()
    for c in sexp.cells:
        store.write(_record(c, 0.2 if c.param_dict["eta"] == 0.05 else 0.4))
    choices = select(sexp, store.records(), exp.search)
    assert [(ch.dataset, ch.algorithm, ch.chosen) for ch in choices] == [("iris", "bogd", {"eta": 0.05})]


def _recs(values, degenerate):
    return [{"status": "ok", "value": v, "degenerate": {"reason": "x"} if d else None}
            for v, d in zip(values, degenerate)]


def _choose(settings):
    return choose("d", "nogd", "binary", ["eta"],
                  {json.dumps({"eta": eta}): ({0, 1, 2}, recs) for eta, recs in settings.items()})


def test_one_degenerate_pass_of_three_excludes_a_setting():
    """BOGD's trap: the setting with the lowest mean stalled on one seeded stream in three."""
    ch = _choose({2.0: _recs([0.12, 0.11, 0.12], [0, 0, 0]),
                  0.2: _recs([0.09, 0.10, 0.11], [0, 0, 1])})  # one stalled stream
    assert ch.chosen == {"eta": 2.0}
    cand = next(c for c in ch.candidates if c.values == {"eta": 0.2})
    assert cand.why_not == "degenerate in 1 of 3 passes" and cand.degenerate == 1


def test_degenerate_settings_are_never_chosen_and_the_count_is_reported():
    ch = _choose({2.0: _recs([0.12, 0.11, 0.12], [0, 0, 0]),
                  0.2: _recs([0.09, 0.10, 0.30], [0, 1, 1]),
                  0.02: _recs([0.05, 0.05, 0.05], [1, 0, 0])})
    assert ch.chosen == {"eta": 2.0}
    bad = next(c for c in ch.candidates if c.values == {"eta": 0.2})
    assert bad.why_not == "degenerate in 2 of 3 passes"
    text = "\n".join(grid_markdown([ch]))
    row = next(line for line in text.splitlines() if line.startswith("| d | nogd"))
    assert "const 2/3" in row and "5.00 const 1/3" in row and "**11.67**" in row
    assert "const" not in row.split("|")[3]  # eta=2: no degenerate pass, no mark
    assert isinstance(ch, Choice)


def test_when_every_setting_is_degenerate_none_is_chosen_and_the_grid_says_so():
    ch = _choose({2.0: _recs([0.12, 0.11, 0.12], [1, 0, 0]),
                  0.2: _recs([0.09, 0.10, 0.11], [0, 1, 0])})
    assert ch.chosen is None and "no eligible setting" in ch.reason
    text = "\n".join(grid_markdown([ch]))
    assert "none eligible: config value" in text


def _write(tmp_path, text):
    p = tmp_path / "c.yaml"
    p.write_text(textwrap.dedent(text))
    return p
