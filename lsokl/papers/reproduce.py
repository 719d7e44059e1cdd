"""``lsokl reproduce``: fetch -> run (the config's search included) -> report, for any declared item.

One generic path with a few recipes (``RECIPES``), chosen by the item:

* ``online-table``: ``lsokl run CONFIG`` into the item's folder, ``lsokl report --paper`` and the
  headline ``<config name>.md`` (LSOKL Tables 5, 7, 9);
* ``batch-table``: the same run, then the holdout comparison (``lsokl2016/report.py``; LSOKL Table 3);
* ``sweep-figure``: the run, then ``lsokl figure --sweep`` (LSOKL Figs. 3, 4; MEKA Fig. 12), with the
  item's ``paper`` option as ``--paper``;
* ``convergence-figure``: the source table's run (resumable: finished cells are skipped), then
  ``lsokl figure --convergence`` and the search curves (LSOKL Figs. 1-2, 5-6);
* ``meka``: the run, then the MEKA report named by the item (``meka2017/report.py``, or for
  the figures ``meka2017/figures.py``);
* ``bpegasosm``: the runs, then the Table 1 report, or with ``report: time-vs-length`` the Fig. 3
  time curves (``bpegasosm2010/report.py``);
* ``dsg``: the DSG experiments (``dsg2014/report.py``), then ``dsg.md``.

The last four call the reporting of the item's paper folder (``lsokl/papers/<paper>/report.py``):
what the generic tables and plots of :mod:`lsokl.report` cannot draw.

Configs are the shipped ones (``lsokl/configs``), so a wheel install reproduces too. Committed folders
are relative to ``root`` (the clone's top folder; the current folder by default), and after the
items ran the scoreboard ``REPRODUCTIONS.md`` is regenerated there. Only this command writes the
committed folders; ``lsokl run`` and ``lsokl report`` default to ``runs/``.
"""
from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Callable, Iterable, Optional

from .declare import Item
from .registry import get


#: ``lsokl ARGS`` as a function returning the exit code; the CLI sets it (``lsokl.cli.reproduce``), so
#: that this layer does not import the command line (no import circle) and the commands run in this process
COMMAND: Optional[Callable[[list], int]] = None


def _lsokl(args: list) -> int:
    if COMMAND is None:
        raise RuntimeError("lsokl.papers.reproduce.COMMAND is not set: run items through `lsokl reproduce`")
    return COMMAND([str(a) for a in args])


def _fetch(names: Iterable[str], echo: Callable) -> None:
    """Download (or copy from the mirror) before any worker starts; built-ins need nothing; a missing
    file is reported and the run lists the dataset as missing."""
    from ..data import builtin
    from ..data.fetch import MissingFileError, fetch

    for name in names:
        if name in getattr(builtin, "BUILTINS", {}):
            continue
        echo(f"fetching {name} ...")
        try:
            fetch(name)
        except MissingFileError:
            # said once, by the run's `missing:` line (with how to get it) and in missing.json
            echo(f"  {name} is absent: the run below skips it and says how to get it")


def _config(name: str) -> Path:
    from ..packaged import resolve_config

    return resolve_config(name)


def _run(config: str, folder: Path, opts: dict, echo: Callable, quiet: bool = False, several: bool = False) -> int:
    """Fetch the config's datasets (those selected with -d), then ``lsokl run`` it into ``folder``.
    ``several``: one of an item's several configs, so a -d dataset may belong to another of them."""
    from ..config import load_config

    path = _config(config)
    if opts.get("redraw"):  # only the report: from the records already in the folder
        if not _has_records(folder):
            from ..errors import LsoklError

            raise LsoklError(f"--redraw: no records in {folder} to draw from; run the item first "
                             "(without --redraw)")
        return 0
    exp = load_config(path)
    if several and opts.get("datasets"):
        keep = tuple(d for d in opts["datasets"] if d in exp.datasets)
        if not keep:
            echo(f"  {config}: none of the selected datasets, skipped")
            return 0
        opts = {**opts, "datasets": keep}
    _fetch([d for d in exp.datasets if not opts.get("datasets") or d in opts["datasets"]], echo)
    args = ["run", path, "--results", folder]
    if opts.get("jobs"):
        args += ["--jobs", opts["jobs"]]
    if opts.get("retry_failed"):
        args.append("--retry-failed")
    for d in opts.get("datasets") or ():
        args += ["-d", d]
    for a in opts.get("algorithms") or ():
        args += ["-a", a]
    if quiet:
        args.append("-q")
    return _lsokl(args)


# ----------------------------------------------------------------------------- recipes
def online_table(item: Item, folder: Path, opts: dict, echo: Callable) -> int:
    config = item.configs[0]
    code = _run(config, folder, opts, echo)
    if not _has_records(folder):  # e.g. a partial run (-d) of datasets that are all absent
        echo(f"no records in {folder}: nothing to report (the missing datasets are listed above)")
        return code
    # report even when some cells failed: the table shows which
    rcode = _lsokl(["report", folder, "--out", folder / "report", "--paper", item.published, "--compact"])
    table = folder / "report" / "table.md"
    if table.exists():  # the headline file: results/<table>/<table>.md
        (folder / f"{config}.md").write_text(table.read_text())
    if item.options.get("convergence"):  # a variant's own convergence figures, published values marked
        rcode = rcode or _lsokl(["figure", folder, "--convergence", "--paper", item.published,
                                 "--out", folder / "figures"])
    return code or rcode


def _has_records(folder: Path) -> bool:
    from ..results import ResultStore

    return (folder / "records").is_dir() and next(iter(ResultStore(folder).records()), None) is not None


def batch_table(item: Item, folder: Path, opts: dict, echo: Callable) -> int:
    from .lsokl2016 import report as batch

    folder.mkdir(parents=True, exist_ok=True)
    machine = folder / "machine.txt"
    if not opts.get("redraw"):  # a redraw keeps the load lines of the run it draws
        machine.write_text(_machine_line("before the run") + "\n")
    code = _run(item.configs[0], folder, opts, echo)  # exits 1 when a cell failed: reported all the same
    if not opts.get("redraw"):
        with machine.open("a") as fh:
            fh.write(_machine_line("after the run") + "\n")
    batch.write_report(folder, _config(item.configs[0]), item.published,
                       reference=item.options.get("reference", "libsvm"), machine_file=machine)
    return code


def _machine_line(when: str) -> str:
    from ..report.machine import machine_load

    return f"{when}: {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}; {machine_load()}"


def sweep_figure(item: Item, folder: Path, opts: dict, echo: Callable) -> int:
    code = 0
    for config in item.configs:  # e.g. Fig. 3's dna/satimage config and a later one for usps/letter
        code = _run(config, folder, {**opts, "jobs": opts.get("jobs") or 2}, echo, quiet=True) or code
    args = ["figure", folder, "--prefix", item.options["prefix"], "--out", folder, "--title", item.options["title"]]
    for s in item.options["sweeps"]:
        args += ["--sweep", s]
    if item.options.get("paper"):  # published values marked on the panels (``lsokl figure --paper``)
        args += ["--paper", item.options["paper"]]
    return code or _lsokl(args)


def convergence_figure(item: Item, folder: Path, opts: dict, echo: Callable) -> int:
    source = get(item.options["source"])
    code = _run(source.configs[0], folder, opts, echo)  # resumable: nothing reruns when the table ran
    # the table's published end points marked on every curve (``lsokl figure --paper``)
    args = ["figure", folder, "--convergence", "--out", folder / "figures"]
    fcode = _lsokl(args + (["--paper", source.published] if source.published else []))
    if (folder / "search").is_dir():
        fcode = fcode or _lsokl(["figure", folder / "search", "--sweep", "eta", "--paper", source.published,
                                 "--prefix", "search-", "--out", folder / "figures" / "search"])
    return code or fcode


def meka(item: Item, folder: Path, opts: dict, echo: Callable) -> int:
    from ..report.machine import machine_load
    from .meka2017 import figures, report

    before = f"Measured on {machine_load()}."
    code = 0
    for config in item.configs:  # e.g. Table 2's stand-in and the paper's own (large, absent here) datasets
        code = _run(config, folder, {**opts, "jobs": opts.get("jobs") or 1}, echo, quiet=True,
                    several=len(item.configs) > 1) or code
    which = item.options["report"]
    if which == "table5" and opts.get("redraw"):
        from ..errors import LsoklError

        raise LsoklError(f"{item.id}: --redraw would lose the machine load measured during the run "
                         "(Table 5 is a timing table); run it without --redraw")
    fn = report.TABLES[which] if which in report.TABLES else figures.FIGURES[which]
    configs = tuple(_config(c) for c in item.configs)
    configs = configs[0] if len(configs) == 1 else configs
    if which == "table5":
        fn(folder, folder / "report", load=f"{before} (at the start of the run)", config=configs)
    else:
        fn(folder, folder / "report", config=configs)
    shutil.copy(folder / "report" / "table.md", folder / f"{folder.name}.md")
    return code


def bpegasosm(item: Item, folder: Path, opts: dict, echo: Callable) -> int:
    from .bpegasosm2010 import report

    t0, c0, load = time.perf_counter(), _children_cpu(), " ".join(f"{x:.1f}" for x in os.getloadavg())
    code = 0
    for config in item.configs:
        code = _run(config, folder, opts, echo, several=len(item.configs) > 1) or code
    which = item.options.get("report", "table1")
    if which in ("table1", "table1+time-vs-length"):
        report.report(folder)
    if which in ("time-vs-length", "table1+time-vs-length"):  # Fig. 3
        report.time_vs_length(folder)
    if item.options.get("long") and not (opts.get("datasets") or opts.get("algorithms") or opts.get("redraw")):
        from .dry_run import write_run_time  # what `--dry-run` reports next time (a redraw runs nothing:
        # it keeps the run's own time)

        write_run_time(folder, time.perf_counter() - t0, _children_cpu() - c0, load)
    return code


def dsg(item: Item, folder: Path, opts: dict, echo: Callable) -> int:
    from .dsg2014 import report

    return report.run(folder, item.options["experiments"], jobs=opts.get("jobs") or 2)


RECIPES: dict[str, Callable] = {
    "online-table": online_table, "batch-table": batch_table, "sweep-figure": sweep_figure,
    "convergence-figure": convergence_figure, "meka": meka, "bpegasosm": bpegasosm, "dsg": dsg,
}


#: recipes that cannot redraw from records alone, and why
NO_REDRAW = {"dsg": "its experiments compute their curves in the report step and keep no per-cell records"}

#: where partial runs (``-d``/``-a``) go, relative to the root: never the committed folders
PARTIAL = Path("runs") / "partial"


def run_key(item: Item) -> tuple:
    """Items with the same key do the same work (Figs. 1 and 2 both come from Table 7's records)."""
    return (item.recipe, item.folder, repr(sorted(item.options.items())))


def reproduce(items: list[Item], root: Path, *, command: Callable[[list], int], jobs: Optional[int] = None,
              datasets=(), algorithms=(), retry_failed: bool = False, echo: Callable = print,
              scoreboard: bool = True, redraw: bool = False) -> list[tuple]:
    """Run each item (once per distinct piece of work), timing it; returns (item id, wall s, CPU s,
    exit code) rows. ``command`` runs ``lsokl ARGS`` and returns its exit code. Not-implemented and
    planned items are refused with their reason. With ``datasets`` or ``algorithms`` (a partial run)
    everything goes under ``runs/partial/`` instead of the committed folders. ``redraw``: fetch and
    run nothing, only rewrite the reports and plots from the records in the item's folder (the
    recipes whose experiments write no records, ``dsg``, are refused)."""
    from ..errors import LsoklError

    global COMMAND
    COMMAND = command
    for item in items:
        if not item.runnable:
            raise LsoklError(f"{item.id} is {item.status}: {item.reason}")
    from .scoreboard import check_root

    check_root(root)  # before any work: nothing of the user's under a wrong --root is overwritten
    if redraw:
        for item in items:
            if item.recipe in NO_REDRAW:
                raise LsoklError(f"{item.id}: --redraw is not possible for the {item.recipe!r} recipe "
                                 f"({NO_REDRAW[item.recipe]}); run it without --redraw")
    opts = {"jobs": jobs, "datasets": tuple(datasets), "algorithms": tuple(algorithms), "retry_failed": retry_failed,
            "redraw": redraw}
    # a partial run (-d/-a) is not the committed reproduction: it goes to runs/partial/<folder>, git-ignored
    partial = bool(datasets or algorithms)
    if partial:
        echo(f"partial run (-d/-a): into {PARTIAL}/..., not the committed folders; REPRODUCTIONS.md unchanged")
    rows, done = [], set()
    for item in items:
        if run_key(item) in done:
            echo(f"==> {item.id}: same run as an item above, done")
            continue
        done.add(run_key(item))
        folder = (root / PARTIAL if partial else root) / item.folder
        echo(f"==> {item.id}: {', '.join(item.configs) or item.recipe} -> {item.folder}")
        t0, c0 = time.perf_counter(), _children_cpu()
        code = RECIPES[item.recipe](item, folder, opts, echo)
        rows.append((item.id, time.perf_counter() - t0, _children_cpu() - c0, code))
        echo(f"==> {item.id}: {'ok' if code == 0 else f'exit {code}'} in {fmt(rows[-1][1])}")
    if scoreboard and not partial:
        from . import verdicts
        from .scoreboard import write

        for done_path in verdicts.write(items, root):
            echo(f"wrote {done_path.relative_to(root)}")
        path = write(root, checked=True)
        echo(f"wrote {path.name}")
    return rows


def _children_cpu() -> float:
    """User + system seconds of this process and its finished children (CPU time is the steadier
    number on a shared machine)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def fmt(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    h, m = divmod(m, 60)
    return f"{h}h {m:02d}m {s:02d}s" if h else f"{m}m {s:02d}s"


def summary(rows: list[tuple]) -> str:
    """The timing table printed after several items (``make reproduce-all``)."""
    width = max([len("total wall time"), *(len(r[0]) for r in rows)])
    lines = ["reproduce summary (CPU = user + system of this process and its workers)"]
    for ident, wall, cpu, code in rows:
        lines.append(f"  {ident:<{width}} {fmt(wall):>10}  CPU {fmt(cpu):>10}  {'ok' if code == 0 else f'FAILED (exit {code})'}")
    lines.append(f"  {'total wall time':<{width}} {fmt(sum(r[1] for r in rows)):>10}  CPU "
                 f"{fmt(sum(r[2] for r in rows)):>10}  on {os.cpu_count()} CPUs")
    return "\n".join(lines)
