"""Issue 26 item 3: the paper configs list the papers' large sets with the tables' settings, so
`lsokl run` / `lsokl reproduce` run them where their files are present and report them absent, one
line each with how to get them, otherwise. The real tables are not run here: a tiny config in a
temporary folder stands for them."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lsokl.config import grid_counts, load_config

REPO = Path(__file__).resolve().parents[1]
CONFIGS = REPO / "configs"

#: config -> the large sets its paper column uses (registry names)
LARGE = {
    "table3": ("kddcup99-full",),
    "table5": ("ijcnn1", "kddcup99-full"),
    "table7": ("shuttle", "acoustic", "covtype", "poker-full"),
    "table9": ("casp", "slice", "year"),
    "bpegasosm-table1": ("covtype",),
    "dsg-forest": ("covtype-binary",),
    "meka-table2-paper": ("ijcnn1", "covtype-binary", "census-income"),
    "meka-table5": ("ijcnn1", "covtype-binary"),
    "meka-table7": ("ijcnn1", "covtype-binary"),
    "meka-table8": ("covtype-binary", "mnist2m"),
}


@pytest.mark.parametrize("config", sorted(LARGE))
def test_paper_configs_list_the_large_sets_by_registry_name(config):
    from lsokl.data import registry

    exp = load_config(CONFIGS / f"{config}.yaml")  # validates every setting
    counts = grid_counts(exp.cells)
    for name in LARGE[config]:
        assert registry.get(name).name == name  # the canonical name, not an alias
        assert counts.get(name), (config, name)  # it expands to cells


def _one(exp, dataset, algorithm) -> dict:
    params = {json.dumps(c.param_dict, sort_keys=True) for c in exp.cells
              if c.dataset == dataset and c.algorithm == algorithm}
    assert len(params) == 1, (dataset, algorithm, params)
    return json.loads(params.pop())


def test_large_sets_get_the_tables_protocol_settings():
    t5 = load_config(CONFIGS / "table5.yaml")
    assert t5.datasets["ijcnn1"].split == "all"  # the paper's 141,691 rows = train + test
    for ds in ("ijcnn1", "kddcup99-full"):
        assert _one(t5, ds, "fogd")["sigma"] == 8 and _one(t5, ds, "fogd")["budget"] == 100
        assert grid_counts(t5.cells)[ds]["fogd"] == 20
    assert t5.datasets["kddcup99-full"].scale == t5.datasets["kddcup99"].scale == "minmax"
    assert t5.search.overrides["kddcup99-full"] == t5.search.overrides["kddcup99"]

    t7 = load_config(CONFIGS / "table7.yaml")
    row = grid_counts(t7.cells)["poker-full"]
    assert "perceptron" not in row and "ogd" not in row and row["fogd"] == 20
    assert _one(t7, "poker-full", "nogd")["budget"] == 100

    t3 = load_config(CONFIGS / "table3.yaml")
    assert t3.datasets["kddcup99-full"].test_fraction == 0.2
    assert _one(t3, "kddcup99-full", "fogd")["n_fourier"] == 400

    t8 = load_config(CONFIGS / "meka-table8.yaml")
    row = grid_counts(t8.cells)["mnist2m"]
    assert "fastfood" not in row  # "na" in the paper: k = 256 < d = 784
    p = _one(t8, "mnist2m", "meka")
    assert (p["rank"], p["gamma"], p["clusters"]) == (256, 2 ** -5, 40)


def test_paper_declarations_name_every_dataset_of_their_configs():
    """A table's provenance list covers every dataset its configs run, and an absent set its
    configs list (a large set not in the offline mirror) says how to get it. (Figures may show a
    part of a table's datasets.)"""
    from lsokl.papers.registry import items

    for item in (i for i in items().values() if i.kind == "table"):
        declared = {d.name: d for d in item.datasets}
        listed = {name for config in item.configs for name in load_config(CONFIGS / f"{config}.yaml").datasets}
        for name in listed:
            assert name in declared, (item.id, name)
            if declared[name].provenance == "absent":
                assert f"lsokl fetch {name}" in declared[name].note, (item.id, name)


TINY = """
name: tiny-large
task: multiclass
permutations: 2
seed: 3
budgets: 10
defaults: {sigma: 1}
datasets:
  iris: {}
  poker-full: {exclude: [perceptron]}
algorithms:
  perceptron: {}
  rbp: {}
"""


def test_absent_large_set_is_reported_with_the_fetch_hint_and_present_ones_run(tmp_path, monkeypatch):
    from lsokl.cli import app
    from lsokl.report import build_report
    from lsokl.results import ResultStore

    mirror = tmp_path / "mirror"
    mirror.mkdir()
    monkeypatch.setenv("LSOKL_DATA_MIRROR", str(mirror))
    monkeypatch.setenv("LSOKL_DATA_DIR", str(tmp_path / "cache"))
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(TINY)
    res = CliRunner().invoke(app, ["run", str(cfg), "--results", str(tmp_path / "res"), "-j", "1", "-q"],
                             terminal_width=80)  # a narrow terminal: the line must not wrap
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.output.splitlines() if "missing:" in ln]
    assert len(lines) == 1 and "poker-full" in lines[0], res.output
    assert "`lsokl fetch poker-full`" in lines[0] and "mirror" in lines[0]
    records = list(ResultStore(tmp_path / "res").records())
    assert {r["dataset"] for r in records} == {"iris"} and len(records) == 4
    assert all(r["status"] == "ok" for r in records)

    missing = json.loads((tmp_path / "res" / "missing.json").read_text())
    assert set(missing) == {"poker-full"} and missing["poker-full"]["cells"] == 2
    assert "`lsokl fetch poker-full`" in missing["poker-full"]["message"]
    assert str(tmp_path) not in json.dumps(missing)  # committed folders hold no machine paths
    rep = build_report(tmp_path / "res", plots=False)
    assert "`lsokl fetch poker-full`" in (rep.out / "missing.md").read_text()




def test_reproduce_of_absent_sets_only_reports_them_one_line_each(tmp_path, monkeypatch):
    """`lsokl reproduce ITEM -d <absent sets>`: one `missing:` line per set with the fetch hint (not
    wrapped on a narrow terminal), nothing run, nothing to report, and the partial run stays in
    runs/partial (the committed folders are not touched)."""
    from lsokl.cli import app

    (tmp_path / "mirror").mkdir()
    monkeypatch.setenv("LSOKL_DATA_MIRROR", str(tmp_path / "mirror"))
    monkeypatch.setenv("LSOKL_DATA_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, ["reproduce", "lsokl2016:table9", "-d", "casp", "-d", "year"], terminal_width=80)
    assert res.exit_code == 0, res.output
    for name in ("casp", "year"):
        hits = [ln for ln in res.output.splitlines() if ln.startswith("missing:") and f"dataset {name} " in ln]
        assert len(hits) == 1 and f"`lsokl fetch {name}`" in hits[0], res.output
        assert sum(f"`lsokl fetch {name}`" in ln for ln in res.output.splitlines()) == 1  # said once
    assert "nothing to report" in res.output
    missing = json.loads((tmp_path / "runs" / "partial" / "results" / "table9" / "missing.json").read_text())
    assert set(missing) == {"casp", "year"}
    assert not (tmp_path / "results").exists()


def test_reproduce_of_a_two_config_item_runs_each_config_on_its_own_selected_sets(tmp_path, monkeypatch):
    """MEKA Table 2 runs its stand-in config and the paper's: `-d ijcnn1` (only in the paper's config)
    runs that config and skips the other instead of failing on an unknown dataset."""
    from lsokl.cli import app

    (tmp_path / "mirror").mkdir()
    monkeypatch.setenv("LSOKL_DATA_MIRROR", str(tmp_path / "mirror"))
    monkeypatch.setenv("LSOKL_DATA_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, ["reproduce", "meka2017:table2", "-d", "ijcnn1"], terminal_width=80)
    assert res.exit_code == 0, res.output
    assert "meka-table2: none of the selected datasets, skipped" in res.output
    hits = [ln for ln in res.output.splitlines() if ln.startswith("missing:") and "dataset ijcnn1 " in ln]
    assert len(hits) == 1 and "`lsokl fetch ijcnn1`" in hits[0], res.output
    folder = tmp_path / "runs" / "partial" / "results" / "meka-table2"
    assert set(json.loads((folder / "missing.json").read_text())) == {"ijcnn1"}
