"""Every reproduction plot marks the published values, checked from the plot's own data: each plot
is saved with a ``.marks.json`` sidecar read back from the figure's artists
(lsokl.report.plots.published_marks), and the marks must be the published table's numbers.
``lsokl reproduce ITEM --redraw`` redraws an item's plots from the records in its folder, running
and fetching nothing."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from lsokl.report.paper import load_table
from lsokl.results import ResultStore
from test_figures import _record


def _published(table, dataset, learner, column="mean"):
    df = load_table(table)
    return float(df[(df["dataset_key"] == dataset) & (df["learner"] == learner)][column].iloc[0])


def _table7_records(folder):
    store = ResultStore(folder).ensure()
    for i, (alg, params) in enumerate([("fogd", {"sigma": 8.0, "budget": 200, "eta": 0.005, "rho_f": 4.0}),
                                       ("nogd", {"sigma": 8.0, "budget": 200, "eta": 0.5, "rho_n": 0.2})]):
        for perm in range(2):
            store.write(_record(10 * i + perm, dataset="dna", task="multiclass", algorithm=alg,
                                params=params, perm=perm, value=0.2, time_s=0.5))


def test_sidecar_lists_the_published_points_of_a_convergence_plot(tmp_path):
    from lsokl.report.figures import make_figures

    _table7_records(tmp_path / "res")
    make_figures(tmp_path / "res", tmp_path / "out", convergence=True, paper="lsokl2016:table7", dpi=30)
    (sidecar,) = (tmp_path / "out").rglob("dna.marks.json")
    marks = json.loads(sidecar.read_text())["published"]
    points = {(m["x"], m["y"]) for m in marks if m["kind"] == "point"}
    for learner in ("fogd", "nogd"):
        assert (30.0, _published("lsokl2016:table7", "dna", learner)) in points  # mistake rate, end point
        t = _published("lsokl2016:table7", "dna", learner, "time_s")  # time panel, end point
        assert any(x == 30.0 and np.isclose(y, t) for x, y in points)


def test_published_lines_are_read_back():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    from lsokl.report.plots import PUBLISHED_GID, mark_published, published_marks

    fig, ax = plt.subplots()
    ax.set_title("panel")
    ax.plot([1, 2], [3, 4])  # a data line is not a mark
    ax.axhline(7.5, gid=PUBLISHED_GID)
    ax.axhline(9.0)  # an unmarked reference line is not a published value
    mark_published(ax, 2.0, 4.5, 0.1, "red")
    assert published_marks(fig) == [{"axes": "panel", "kind": "line", "x": None, "y": 7.5},
                                    {"axes": "panel", "kind": "point", "x": 2.0, "y": 4.5}]
    plt.close(fig)


def test_redraw_draws_the_convergence_figure_from_records_with_published_marks(tmp_path, monkeypatch):
    from lsokl.cli.reproduce import _command
    from lsokl.papers import get
    from lsokl.papers import reproduce as rep

    def no_fetch(*a, **k):
        raise AssertionError("--redraw must not fetch")

    monkeypatch.setattr(rep, "_fetch", no_fetch)
    folder = tmp_path / "results" / "table7"
    _table7_records(folder)
    shutil.copy(Path(__file__).resolve().parents[1] / "REPRODUCTIONS.md", tmp_path)  # a results root lsokl made (--root refuses any other)
    rows = rep.reproduce([get("lsokl2016:fig1")], tmp_path, command=_command, redraw=True,
                         scoreboard=False, echo=lambda m: None)
    assert rows[0][3] == 0
    marks = json.loads((folder / "figures" / "convergence" / "dna.marks.json").read_text())["published"]
    assert {m["y"] for m in marks} >= {_published("lsokl2016:table7", "dna", "fogd"),
                                       _published("lsokl2016:table7", "dna", "nogd")}
    # the records are what was drawn: nothing was run, so no record was added
    assert len(ResultStore(folder).records()) == 4


def test_redraw_without_records_says_to_run_first(tmp_path):
    from lsokl.cli.reproduce import _command
    from lsokl.errors import LsoklError
    from lsokl.papers import get
    from lsokl.papers import reproduce as rep

    with pytest.raises(LsoklError, match="no records in .* run the item first"):
        rep.reproduce([get("lsokl2016:fig1")], tmp_path, command=_command, redraw=True, scoreboard=False,
                      echo=lambda m: None)


def test_committed_plots_with_a_sidecar_mark_published_values():
    """Every committed plot redrawn since the sidecars exist: its marks are non-empty where the
    item has a published table. (Plots drawn before have no sidecar yet: `lsokl reproduce ITEM
    --redraw` writes it.)"""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "results"
    for sidecar in root.rglob("*.marks.json"):
        if any(k in sidecar.name for k in ("time-vs-length", "e5-", "search-", "fig4-budget")):
            continue  # figures whose paper gives no number to mark (LSOKL Fig. 4's budget sweep: none printed)
        if sidecar.relative_to(root).parts[0].startswith("meka-") and not sidecar.name.startswith("fig7a"):
            continue  # MEKA's figures print no numbers; its tables do (Table 7's cells are marked on Fig. 7(a))
        data = json.loads(sidecar.read_text())
        assert data["published"], f"{sidecar} marks no published value"



def test_every_committed_plot_has_its_marks_sidecar():
    """Every committed plot was drawn through save_figure: its .marks.json (the published values read
    back from the figure) lies beside it."""
    root = Path(__file__).resolve().parents[1] / "results"
    missing = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.png")
                     if not p.with_name(p.stem + ".marks.json").exists())
    assert missing == [], f"plots without a marks sidecar (redraw them with `lsokl reproduce ITEM`): {missing}"


def test_every_plot_is_saved_through_save_figure():
    """No reproduction code saves a figure around save_figure (which writes the marks sidecar)."""
    import re

    pkg = Path(__file__).resolve().parents[1] / "lsokl"
    offenders = [f"{p.relative_to(pkg)}:{i + 1}" for p in pkg.rglob("*.py") if p.name != "plots.py"
                 for i, line in enumerate(p.read_text().splitlines()) if re.search(r"\.savefig\(", line)]
    assert offenders == []
