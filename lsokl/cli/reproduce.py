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
    list_: bool = typer.Option(False, "--list", help="print every item of the four papers with its status and exit"),
    scoreboard: bool = typer.Option(False, "--scoreboard", help="only regenerate REPRODUCTIONS.md from the committed results"),
    all_: bool = typer.Option(False, "--all", help="every runnable item in turn, timed (make reproduce-all)"),
    root: Path = typer.Option(Path("."), "--root", help="the folder holding results/ and REPRODUCTIONS.md "
                                                         "[default: the current folder, the clone's top]"),
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
            console.print(f"{it.id:<28} {it.status:<16} {where:<26} {escape(it.title)}", highlight=False,
                          soft_wrap=True)
        raise typer.Exit(0)
    try:
        if scoreboard:
            path = board.write(root)
            console.print(f"wrote {path}", highlight=False)
            raise typer.Exit(0)
        if all_:
            chosen = [it for it in items().values() if it.runnable]
        elif item:
            chosen = select(item)
        else:
            raise LsoklError("give an item (e.g. lsokl2016:table9), --all, --list or --scoreboard")
        rows = rep.reproduce(chosen, root, command=_command, jobs=jobs, datasets=dataset, algorithms=algorithm,
                             retry_failed=retry_failed, echo=lambda m: console.print(escape(m), highlight=False, soft_wrap=True))
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
