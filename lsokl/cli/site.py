"""`lsokl site`: the reproductions as a static, offline site (lsokl/site), optionally served locally."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape

from ..errors import LsoklError
from .app import app

console = Console()


@app.command("site")
def site(
    root: Path = typer.Option(Path("."), "--root", show_default=False,
                              help="the folder holding results/ [default: the current folder, the clone's top]"),
    out: Optional[Path] = typer.Option(None, "--out", help="where the site goes [default: ROOT/runs/site, git-ignored]; "
                                                           "replaced on each build"),
    serve: bool = typer.Option(False, "--serve", help="after building, serve it on http://127.0.0.1:PORT until Ctrl-C"),
    port: int = typer.Option(8000, "--port", min=0, max=65535, help="the port for --serve (0: any free port)"),
) -> None:
    """Build a browsable report of every reproduction from the committed results: an index of the
    four papers' items (status, provenance, declared and strict counts, claim verdict), one page per
    item (its table beside the published one, coloured by the tolerance rule, its plots, notes,
    config, data, machine and the command that re-runs it) and one page per learner. Open
    OUT/index.html in a browser: no server or network is needed."""
    from ..site.build import timed_build

    if not (root / "results").is_dir():
        console.print(f"[bold red]error:[/bold red] --root {escape(str(root))}: no results/ folder there "
                      "(run from the clone's top folder, or give --root)", highlight=False)
        raise typer.Exit(2)
    try:
        index, seconds, nbytes = timed_build(root, out)
    except LsoklError as exc:
        console.print(f"[bold red]error:[/bold red] {escape(str(exc))}", highlight=False)
        raise typer.Exit(2)
    console.print(f"wrote {escape(str(index))} ({nbytes / 1e6:.1f} MB, {seconds:.1f} s)", highlight=False)
    if serve:
        _serve(index.parent, port)


def _serve(folder: Path, port: int) -> None:
    from ..site.serve import server

    try:
        httpd = server(folder, port)
    except OSError as exc:
        console.print(f"[bold red]error:[/bold red] --port {port}: {escape(str(exc))} (another port: --port 0 picks a "
                      "free one)", highlight=False)
        raise typer.Exit(2)
    with httpd:
        host, real = httpd.server_address[:2]
        console.print(f"serving on http://{host}:{real}/ (Ctrl-C stops)", highlight=False)
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            console.print("stopped", highlight=False)
