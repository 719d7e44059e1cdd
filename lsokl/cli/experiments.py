"""`lsokl run` and `lsokl report`: parse arguments, call lsokl.runner / lsokl.report, print."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from ..errors import LsoklError
from .app import app
from .output import check_format, format_option, make_console, rule

console = make_console()  # full width when not on a terminal: tables and summaries never cut


#: where `lsokl run` and `lsokl report` write unless told: git-ignored, never a committed reproduction
RUNS = Path("runs")


def default_results(name: str) -> Path:
    """``runs/<name>``: user runs never touch the committed ``results/`` folders (``lsokl reproduce``
    writes those)."""
    return RUNS / name


def _fail(exc: Exception) -> None:
    from rich.markup import escape

    # one line however long (a log or a terminal wraps it, not rich), and "[...]" in it is text, not markup
    console.print(f"[bold red]error:[/bold red] {escape(str(exc))}", highlight=False, soft_wrap=True)
    raise typer.Exit(2)


class _Bar:
    """One rich progress bar over cells, with ETA; failures are printed as they happen."""

    def __init__(self):
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                   TimeElapsedColumn, TimeRemainingColumn)

        self.progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("eta"),
                                 TimeRemainingColumn(), console=console, transient=False)

    def start(self, total: int) -> None:
        self.task = self.progress.add_task("cells", total=total)
        self.progress.start()

    def advance(self, rec: dict) -> None:
        if rec["status"] != "ok":
            err = rec.get("error") or {}
            why = f"{err.get('type')}: {err.get('message')}" if err else ""
            from rich.markup import escape

            self.progress.console.print(  # escaped: a message like "fogd[eta=2]" is not markup
                f"[red]{rec['status']}[/red] " + escape(f"{rec['dataset']} {rec['algorithm']} "
                                                        f"perm {rec['permutation']} {why}".rstrip()),
                highlight=False)
        self.progress.advance(self.task)

    def stop(self) -> None:
        self.progress.stop()


def _print_grid(exp) -> None:
    from ..config import grid_counts

    counts = grid_counts(exp.cells)
    labels = list(exp.algorithms)
    table = Table(title=f"{exp.name}: {len(exp.cells)} cells (settings x permutations)")
    table.add_column("dataset")
    for label in labels:
        table.add_column(label, justify="right")
    table.add_column("total", justify="right", style="bold")
    for ds, row in counts.items():
        table.add_row(ds, *[str(row.get(lab, 0)) for lab in labels], str(sum(row.values())))
    totals = [sum(r.get(lab, 0) for r in counts.values()) for lab in labels]
    table.add_row("total", *map(str, totals), str(len(exp.cells)), style="bold")
    console.print(table)
    for spec in exp.datasets.values():
        console.print(f"  {spec.name}: {spec.permutations} permutations ({spec.permutation_source}), "
                      f"scale={spec.scale}, max_samples={spec.max_samples}", highlight=False)


def _print_memory(exp, memory_limit, jobs) -> None:
    """--dry-run: the settings the memory estimate would refuse, from the registry's declared shapes."""
    from ..runner.backends import default_jobs
    from ..runner.resources import dry_run_estimates

    limit = None if memory_limit is None else (float("inf") if memory_limit == 0 else memory_limit * 2**30)
    refused, largest = dry_run_estimates(exp, exp.cells, limit, workers=jobs or default_jobs())
    from rich.markup import escape

    from ..runner.resources import cell_estimates

    for est in cell_estimates(exp, exp.cells):  # one line per setting (its permutations share it)
        console.print(f"  memory: {escape(est.line())}", highlight=False, soft_wrap=True)
    if largest:
        console.print(f"  {escape(largest)}", highlight=False, soft_wrap=True)
    for line in refused:
        console.print(f"[yellow]would not start:[/yellow] {escape(line)}", highlight=False, soft_wrap=True)


#: options of `lsokl run` that the printed resume command leaves out: --dry-run never reaches a cell
RESUME_DROPS = ("dry_run",)


def resume_command(ctx) -> list[str]:
    """The command line of this `lsokl run` as invoked, rebuilt from every parameter click parsed (so an option
    added to `run` later is carried too): the config as given, then each option whose value differs from its
    default, under its first long name, repeated for a repeatable option."""
    cmd = ["lsokl", ctx.command.name or "run"]
    for param in ctx.command.params:
        if param.name in RESUME_DROPS:
            continue
        value = ctx.params.get(param.name)
        if param.param_type_name == "argument":  # typer's own click: no isinstance against click's classes
            cmd += [str(v) for v in (value if param.multiple else [value]) if v is not None]
            continue
        if value is None or value == param.get_default(ctx) or (param.multiple and not value):
            continue
        name = next((o for o in param.opts if o.startswith("--")), param.opts[0])
        if param.is_flag:
            if param.secondary_opts and not value:
                cmd.append(next((o for o in param.secondary_opts if o.startswith("--")), param.secondary_opts[0]))
            elif value:
                cmd.append(name)
            continue
        for v in (value if param.multiple else [value]):
            cmd += [name, str(v)]
    return cmd


def _interrupted(ctx, out, written) -> None:
    """Ctrl-C: say what is safe on disk and the command that carries on from there, then exit 130."""
    import shlex

    if out is None:
        console.print("\ninterrupted before any cell ran; nothing to resume", highlight=False)
        raise typer.Exit(130)
    records = Path(out) / "records"
    saved = len(list(records.glob("*.json"))) if records.is_dir() else 0
    cmd = resume_command(ctx)
    how = ("The same command (it keeps --force, so it reruns the cells this run finished too; without --force "
           "the cells it did not reach would keep their earlier records)" if ctx.params.get("force")
           else "Finished cells are never redone: resume with")
    console.print(f"\ninterrupted: {len(written)} cells finished in this run; {saved} cell records are saved in "
                  f"{records}. {how}\n  {shlex.join(cmd)}", highlight=False, soft_wrap=True)
    raise typer.Exit(130)


@app.command("run")
def run(
    ctx: typer.Context,
    config: Path = typer.Argument(..., help="experiment config: a YAML file, or the name of a shipped one (table5, binary, ...)"),
    dataset: list[str] = typer.Option([], "-d", "--dataset", help="only this dataset (repeatable)"),
    algorithm: list[str] = typer.Option(
        [], "-a", "--algorithm", help="only this algorithm, e.g. fogd or 'fogd[eta=0.002]' (repeatable)"),
    jobs: Optional[int] = typer.Option(None, "-j", "--jobs", min=1, help="worker processes [default: all cores]"),
    backend: str = typer.Option("loky", "--backend", help="loky (this machine) or dask"),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="Dask scheduler address, tcp://HOST:PORT (implies --backend dask). Workers open the datasets "
         "themselves, by name: give them the same LSOKL_DATA_DIR (a shared filesystem) or LSOKL_DATA_MIRROR, and "
         "LSOKL_REGISTRY if you use your own registry"),
    results: Optional[Path] = typer.Option(
        None, "--results", help="results folder [default: runs/<config name>, git-ignored; the committed "
                                "results/ folders are written by `lsokl reproduce` only]"),
    force: bool = typer.Option(False, "--force", help="rerun the selected cells even if finished"),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="rerun cells whose record is failed/diverged/timeout"),
    dry_run: bool = typer.Option(False, "--dry-run", help="print the expanded grid and exit"),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="no progress bar"),
    max_cells: int = typer.Option(
        200_000, "--max-cells", min=1, help="refuse a config whose grid expands to more cells than this "
                                           "(counted before expanding; also with --dry-run)"),
    memory_limit: Optional[float] = typer.Option(
        None, "--memory-limit", metavar="GIB", min=0.0,
        help="refuse (record as failed, not started) cells whose estimated memory exceeds this many GiB "
             "[default: the memory available when the run starts; 0 = no check]"),
    no_search: bool = typer.Option(
        False, "--no-search", help="skip the config's `search:` step (the config's own values are used)"),
    search_only: bool = typer.Option(
        False, "--search-only", help="run the config's `search:` step and write eta_selection.md, not the cells"),
) -> None:
    """Run every cell of a config (dataset x algorithm x parameters x permutation); resumable.

    A config with a `search:` block first runs its step-size search (ordinary, resumable cells in
    RESULTS/search), writes the choice to RESULTS/eta_selection.md, then runs the table with it."""
    from ..config import load_config
    from ..runner import run_experiment

    from ..packaged import resolve_config

    out, written, lock = results, [], None
    try:
        config = resolve_config(config)  # a path, or a shipped config's name; a miss lists them
        exp = load_config(config, max_cells=max_cells)
        for w in exp.warnings:
            console.print(f"[yellow]warning:[/yellow] {w}", highlight=False)
        if dry_run:
            if exp.search is not None and not no_search:
                from ..search import search_experiment

                sexp = search_experiment(exp)
                if sexp is not None:
                    console.print("first, the step-size search (`search:`):", highlight=False)
                    _print_grid(sexp)
                    console.print("then the config's cells, with the values it chooses:", highlight=False)
            exp.cells = exp.select(dataset, algorithm)
            _print_grid(exp)
            _print_memory(exp, memory_limit, jobs)
            raise typer.Exit(0)
        out = results or default_results(exp.name)
        from ..results.store import ResultsLock, ResultStore

        ResultStore(out).ensure()
        lock = ResultsLock(out).acquire()  # the search and the table: one run per results folder
        from ..progress import CellProgress

        # a redrawn bar on a terminal; plain lines every few seconds in a log (CI, nohup, a pipe)
        bar = None if quiet else (_Bar() if console.is_terminal else CellProgress())
        if exp.search is not None and not no_search:
            from ..search import SELECTION_FILE, run_search

            console.print(f"[bold]step-size search[/bold] of {config} (records in {out}/search)",
                          highlight=False)
            exp, choices, ssum = run_search(
                exp, out, datasets=dataset, algorithms=algorithm, jobs=jobs, backend=backend,
                scheduler=scheduler, force=force, retry_failed=retry_failed,
                progress=None if quiet else (_Bar() if console.is_terminal else CellProgress()),
                memory_limit=None if memory_limit is None else (float("inf") if memory_limit == 0
                                                                else memory_limit * 2**30))
            if ssum is not None:
                console.print(f"search: {ssum.selected} cells, {ssum.ran['ok']} done, {ssum.skipped_ok} "
                              f"skipped (already done); choice in {out / SELECTION_FILE}", highlight=False)
            for ch in choices:
                if ch.chosen is None:
                    console.print(f"[yellow]search:[/yellow] {ch.dataset} {ch.algorithm}: {ch.reason}",
                                  highlight=False)
        if search_only:
            raise typer.Exit(0)
        summary = run_experiment(
            exp, out, datasets=dataset, algorithms=algorithm, jobs=jobs, backend=backend,
            scheduler=scheduler, force=force, retry_failed=retry_failed,
            config_text=config.read_text(), progress=bar, on_record=written.append,
            memory_limit=None if memory_limit is None else (float("inf") if memory_limit == 0
                                                            else memory_limit * 2**30))
    except LsoklError as exc:
        _fail(exc)
    except KeyboardInterrupt:
        _interrupted(ctx, out, written)
    finally:
        if lock is not None:
            lock.release()
    ran = sum(summary.ran.values())
    from rich.markup import escape

    for line in summary.notes:  # choices the run made on its own (an order for data larger than memory)
        console.print(f"[yellow]note:[/yellow] {escape(line)}", highlight=False, soft_wrap=True)
    for name, why in summary.missing.items():
        console.print(f"[yellow]missing:[/yellow] dataset {name} skipped, its files are absent ({escape(why)})",
                      highlight=False, soft_wrap=True)  # one line each, however long
    console.print(
        f"[bold]{summary.selected} cells[/bold]: {summary.ran['ok']} done, {summary.skipped_ok} skipped "
        f"(already done), {summary.ran['failed']} failed, {summary.ran['diverged']} diverged, "
        f"{summary.ran['timeout']} timed out"
        + (f"; kept from earlier runs: {dict(summary.kept_failed)} (--retry-failed reruns them)"
           if summary.kept_failed else "")
        + f". Records in {out}/records ({ran} written).", highlight=False)
    raise typer.Exit(summary.exit_code)


@app.command("report")
def report(
    results: Path = typer.Argument(..., help="results folder written by `lsokl run`", exists=True, file_okay=False),
    out: Optional[Path] = typer.Option(
        None, "--out", help="where to write [default: runs/<RESULTS folder name>/report, git-ignored; for "
                            "runs/NAME that is RESULTS/report]"),
    paper: Optional[str] = typer.Option(
        None, "--paper", help="add published values and deviations, e.g. lsokl2016:table5"),
    compact: bool = typer.Option(False, "--compact", help="also write every record to one parquet/CSV file"),
    plots: bool = typer.Option(True, "--plots/--no-plots", help="convergence plots (PNG and SVG)"),
    fmt: str = format_option(),
) -> None:
    """Aggregate over permutations into tables in the papers' layout (Markdown, CSV, LaTeX) and plots."""
    from ..report import build_report
    from ..report.tables import split_for_width

    try:
        if out is not None:
            from ..results.store import check_results_dir

            check_results_dir(out, what="--out")
        else:
            out = default_results(results.resolve().name) / "report"
        rep = build_report(results, out, paper=paper, compact=compact, plots=plots)
    except LsoklError as exc:
        _fail(exc)
    if check_format(fmt) != "table":  # the tables only, as delimited rows (one block per task)
        import sys

        for i, (task, wide) in enumerate(rep.tables.items()):
            if i:
                sys.stdout.write("\n")
            wide.to_csv(sys.stdout, sep="," if fmt.lower() == "csv" else "\t", index=False)
        return
    for task, wide in rep.tables.items():
        rule(console, f"{task} ({rep.n_records} records)")
        for piece in split_for_width(wide, max(console.width - 6, 60)):
            table = Table(show_lines=False)
            for i, col in enumerate(piece.columns):
                table.add_column(col.replace(" ", "\n", 1), justify="left" if i == 0 else "right",
                                 no_wrap=True)
            for row in piece.itertuples(index=False):
                table.add_row(*map(str, row))
            console.print(table)
    if (rep.out / "missing.md").exists():
        console.print(f"[yellow]missing:[/yellow] datasets not run (files absent): "
                      f"see {rep.out / 'missing.md'}", highlight=False)
    console.print(f"wrote {len(rep.files)} files to {rep.out}", highlight=False)


@app.command("figure")
def figure(
    results: Path = typer.Argument(..., help="results folder written by `lsokl run`", exists=True, file_okay=False),
    out: Optional[Path] = typer.Option(None, "--out", help="where to write [default: RESULTS/figures]"),
    sweep: list[str] = typer.Option(
        [], "--sweep", help="plot metric and log10 time against this parameter, e.g. budget, rho_f, rho_n (repeatable)"),
    convergence: bool = typer.Option(False, "--convergence", help="also the convergence plots (Figs. 1-2, 5-6)"),
    prefix: str = typer.Option("", "--prefix", help="file name prefix, e.g. fig4-"),
    title: Optional[str] = typer.Option(None, "--title", help="what the sweep shows, for titles and captions"),
    dpi: int = typer.Option(120, "--dpi", min=20, help="PNG resolution"),
    test_curve: bool = typer.Option(
        False, "--test-curve", help="test error vs training samples seen (log x), mean and ±1 std band over "
        "repetitions, from holdout records with a curve (DSG Fig. 1)"),
    paper: Optional[str] = typer.Option(
        None, "--paper", help="mark each algorithm's published value: a star at its own setting (the last sample "
        "of a convergence curve, B for --sweep budget, D/B for rho_f, k/B for rho_n, k for rank), else a dashed line "
        "with a ±2 std band; e.g. lsokl2016:table7, meka2017:table8 (MEKA's KRR RMSE, no std), or tables joined by "
        "commas (lsokl2016:table5,lsokl2016:table7); "
        "`lsokl figure RESULTS/search --sweep eta --paper ...` draws a step-size search's curves"),
) -> None:
    """The paper's figures: parameter sweeps (Fig. 3: rho_f / rho_n, Fig. 4: budget), convergence
    curves (Figs. 1-2, 5-6) and holdout test-error curves (DSG Fig. 1), as PNG and SVG with a caption line."""
    from ..report.figures import make_figures

    if not sweep and not convergence and not test_curve:
        _fail(LsoklError("nothing to draw: give --sweep PARAM, --convergence and/or --test-curve"))
    try:
        files = make_figures(results, out, sweep=sweep, convergence=convergence, prefix=prefix, title=title,
                             dpi=dpi, test_curve=test_curve, paper=paper)
    except LsoklError as exc:
        _fail(exc)
    if not files:
        console.print("[yellow]no figure:[/yellow] no algorithm sweeps the given parameter(s)", highlight=False)
        raise typer.Exit(1)
    for f in files:
        console.print(f"  {f}", highlight=False)
    console.print(f"wrote {len(files)} files", highlight=False)
