"""`lsokl reproduce`: the papers' tables and figures (lsokl/papers) into their committed folders."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape

from ..errors import LsoklError
from .app import app

console = Console()


def _command(args: list) -> int:
    """``lsokl ARGS`` in this process, returning its exit code (for lsokl.papers.reproduce)."""
    from .app import main  # the commands are registered: lsokl.cli imported this module

    try:
        main(args)
    except SystemExit as exc:
        if exc.code is None:
            return 0
        return exc.code if isinstance(exc.code, int) else 1
    return 0


@app.command("reproduce")
def reproduce(
    item: list[str] = typer.Argument(
        None, help="items (lsokl2016:table9, meka2017:table7, ...), a paper (meka2017) for all its runnable "
                   "items, or a short id (table9) when unambiguous; see --list"),
    jobs: Optional[int] = typer.Option(None, "-j", "--jobs", min=1, help="worker processes [default: the item's]"),
    dataset: list[str] = typer.Option([], "-d", "--dataset", help="only this dataset (repeatable): a partial run, written to runs/partial/<folder>, not the committed folder"),
    algorithm: list[str] = typer.Option([], "-a", "--algorithm", help="only this algorithm (repeatable): a partial run, like -d"),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="rerun cells whose record is failed/diverged/timeout"),
    list_: bool = typer.Option(False, "--list", help="print every item of the four papers with its status and the "
                                                     "verdict on its headline claim (claim: yes / no; - : no claim), and exit"),
    scoreboard: bool = typer.Option(False, "--scoreboard", help="only regenerate REPRODUCTIONS.md from the committed results"),
    all_: bool = typer.Option(False, "--all", help="every runnable item in turn, timed (make reproduce-all), "
                                                    "except the long ones (BPegasosM at the paper's n: name them)"),
    rescore: bool = typer.Option(False, "--rescore", help="run no cell: rewrite the items' verdicts.md (every cell "
                                                          "under the tolerance rule, the claim's verdict) and "
                                                          "REPRODUCTIONS.md from the committed tables; all items "
                                                          "when none is given"),
    root: Path = typer.Option(Path("."), "--root", help="the folder holding results/ and REPRODUCTIONS.md "
                                                         "[default: the current folder, the clone's top]"),
    redraw: bool = typer.Option(False, "--redraw", help="only rewrite the item's tables and plots (published "
                                "values marked) from the records in its folder; fetch and run nothing"),
    dry_run: bool = typer.Option(False, "--dry-run", help="print the cells, whether each dataset is here, "
                                 "and the estimated CPU and wall time; fetch and run nothing"),
) -> None:
    """Reproduce a paper's table or figure: fetch its datasets, run its config(s) (step-size search
    included), and write the report into the item's committed folder (results/...), then regenerate
    REPRODUCTIONS.md. Resumable: finished cells are skipped. Only this command writes results/;
    `lsokl run` and `lsokl report` write runs/ by default."""
    from ..papers import items, select
    from ..papers import reproduce as rep
    from ..papers import scoreboard as board

    if list_:
        for it in items().values():
            where = it.folder or "-"
            console.print(f"{it.id:<28} {it.status:<16} {where:<26} {board.verdict(it, root):<9} {escape(it.title)}",
                          highlight=False, soft_wrap=True)
        raise typer.Exit(0)
    try:
        if rescore:
            from ..papers import verdicts

            chosen = select(item) if item else [it for it in items().values() if it.runnable]
            for path in verdicts.write(chosen, root):
                console.print(f"wrote {path}", highlight=False)
            console.print(f"wrote {board.write(root)}", highlight=False)
            raise typer.Exit(0)
        if scoreboard:
            path = board.write(root)
            console.print(f"wrote {path}", highlight=False)
            raise typer.Exit(0)
        if all_:
            from ..papers.registry import is_long

            chosen = [it for it in items().values() if it.runnable and not is_long(it)]
        elif item:
            chosen = select(item)
        else:
            raise LsoklError("give an item (e.g. lsokl2016:table9), --all, --list or --scoreboard")
        if dry_run:
            from ..papers import dry_run as dry

            console.print(escape(dry.render([dry.plan(it, root, jobs) for it in chosen])),
                          highlight=False, soft_wrap=True)
            raise typer.Exit(0)
        rows = rep.reproduce(chosen, root, command=_command, jobs=jobs, datasets=dataset, algorithms=algorithm,
                             retry_failed=retry_failed, redraw=redraw, echo=lambda m: console.print(escape(m), highlight=False, soft_wrap=True))
    except LsoklError as exc:
        console.print(f"[bold red]error:[/bold red] {escape(str(exc))}", highlight=False)
        raise typer.Exit(2)
    if len(rows) > 1:
        console.print(escape(rep.summary(rows)), highlight=False)
    if not dataset and not algorithm:  # the committed folders changed: say where to look at them
        where = "" if root == Path(".") else f" --root {root}"
        console.print(escape(f"browse the results: `lsokl site{where}` (or `make site`) writes "
                             f"{root / 'runs' / 'site' / 'index.html'}, a page per item"), highlight=False, soft_wrap=True)
    raise typer.Exit(1 if any(r[3] for r in rows) else 0)
