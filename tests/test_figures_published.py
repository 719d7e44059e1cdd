"""Plots a reader compares at a glance (issue 25, item 7): the published value marked on every
reproduction plot where the paper gives one, time on a log axis, one legend entry per drawn
style. The figures are inspected as matplotlib Axes (``plt.close`` is held back to keep them)."""
from __future__ import annotations

import numpy as np
import pytest

from lsokl.results import ResultStore
from test_figures import _record, _sweep_records


@pytest.fixture
def kept_figures(monkeypatch):
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.close("all")
    monkeypatch.setattr(plt, "close", lambda *a, **k: None)
    yield lambda: [plt.figure(n) for n in plt.get_fignums()]
    monkeypatch.undo()
    plt.close("all")


def _stars(ax):
    """(x, y) of every published marker drawn on ``ax``."""
    return [(float(x), float(y)) for line in ax.lines if line.get_marker() == "*"
            for x, y in zip(line.get_xdata(), line.get_ydata())]


def _legend_texts(fig):
    return [t.get_text() for legend in fig.legends for t in legend.get_texts()]


def test_convergence_plot_marks_the_published_end_point(tmp_path, kept_figures):
    """Table 7, dna: FOGD 20.8 +- 0.7 % (0.887 s); the star sits at the last sample."""
    from lsokl.report.figures import make_figures

    store = ResultStore(tmp_path / "res").ensure()
    for i, (alg, params) in enumerate([("fogd", {"sigma": 8.0, "budget": 200, "eta": 0.005, "rho_f": 4.0}),
                                       ("nogd", {"sigma": 8.0, "budget": 200, "eta": 0.5, "rho_n": 0.2})]):
        for perm in range(2):
            store.write(_record(10 * i + perm, dataset="dna", task="multiclass", algorithm=alg,
                                params=params, perm=perm, value=0.2, time_s=0.5))
    make_figures(tmp_path / "res", tmp_path / "out", convergence=True, paper="lsokl2016:table7",
                 dpi=30)
    (fig,) = kept_figures()
    ax1, ax2 = fig.axes
    assert (30.0, 20.8) in _stars(ax1) and (30.0, 20.7) in _stars(ax1)  # FOGD, NOGD end points
    assert (30.0, pytest.approx(0.887)) in _stars(ax2)
    assert ax2.get_yscale() == "log"
    texts = _legend_texts(fig)
    assert texts.count("published (paper), ±1 std") == 1  # one entry for all the stars
    assert len(texts) == 3  # FOGD's and NOGD's lines and the marker


def test_convergence_plot_without_a_paper_has_no_marker(tmp_path, kept_figures):
    from lsokl.report.figures import make_figures

    store = ResultStore(tmp_path / "res").ensure()
    store.write(_record(0, dataset="dna", task="multiclass", algorithm="fogd",
                        params={"sigma": 8.0, "budget": 200}, perm=0, value=0.2, time_s=0.5))
    make_figures(tmp_path / "res", tmp_path / "out", convergence=True, dpi=30)
    (fig,) = kept_figures()
    assert _stars(fig.axes[0]) == [] and fig.axes[1].get_yscale() == "log"
    assert not any("published" in t for t in _legend_texts(fig))


def test_budget_sweep_marks_each_table_value_at_its_own_budget(tmp_path, kept_figures):
    """Fig. 4's datasets come from two tables: german from Table 5 (FOGD 29.9 at B = 100), dna
    from Table 7 (FOGD 20.8 at B = 200)."""
    from lsokl.report.figures import make_figures

    res = _sweep_records(tmp_path / "res", ("dna", "german"))
    make_figures(res, tmp_path / "out", sweep=["budget"], dpi=30,
                 paper="lsokl2016:table5,lsokl2016:table7")
    figs = {fig.axes[0].get_title().split(":")[0]: fig for fig in kept_figures()}
    german, dna = figs["german"], figs["dna"]
    assert (100.0, 29.9) in _stars(german.axes[0])
    assert (200.0, 20.8) in _stars(dna.axes[0])
    assert all(ax.get_yscale() == "log" for ax in (german.axes[1], dna.axes[1]))
    assert not any(line.get_linestyle() == "--" for line in german.axes[0].lines)  # no dashed line
    texts = _legend_texts(german)
    assert sum(t.startswith("published (paper)") for t in texts) == 1


def test_rho_f_sweep_marks_the_value_at_d_over_b(tmp_path, kept_figures):
    """Fig. 3: Table 7's dna FOGD has D = 800 at B = 200, i.e. rho_f = 4."""
    from lsokl.report.figures import make_figures

    res = _sweep_records(tmp_path / "res", ("dna",))
    make_figures(res, tmp_path / "out", sweep=["rho_f"], dpi=30, paper="lsokl2016:table7")
    (fig,) = kept_figures()
    assert _stars(fig.axes[0]) == [(4.0, 20.8)]
    assert fig.axes[1].get_yscale() == "log"
    assert np.all(np.asarray(fig.axes[1].lines[0].get_ydata()) > 0)  # seconds, not log10 seconds


def test_step_size_sweep_keeps_the_dashed_line_with_its_own_legend_entry(tmp_path, kept_figures):
    """No eta in the table: the published value is a dashed line (and one legend entry says so)."""
    from lsokl.report.figures import make_figures

    store = ResultStore(tmp_path / "res").ensure()
    for i, eta in enumerate((0.2, 0.02, 0.002)):
        store.write(_record(i, dataset="dna", task="multiclass", algorithm="fogd",
                            params={"sigma": 8.0, "budget": 200, "eta": eta, "rho_f": 4.0}, perm=0,
                            value=0.2, time_s=0.1))
    make_figures(tmp_path / "res", tmp_path / "out", sweep=["eta"], paper="lsokl2016:table7", dpi=30)
    (fig,) = kept_figures()
    assert any(line.get_linestyle() == "--" and line.get_ydata()[0] == 20.8
               for line in fig.axes[0].lines)
    assert _stars(fig.axes[0]) == []
    assert [t for t in _legend_texts(fig) if "published" in t] == [
        "published (paper), ±2 std band (lsokl2016:table7)"]
