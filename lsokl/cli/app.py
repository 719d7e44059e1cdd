"""The ``lsokl`` Typer application and its root options; the command modules register on it."""
from __future__ import annotations

import sys

import typer

app = typer.Typer(
    name="lsokl",
    help="Reproduce large-scale online kernel learning papers (FOGD, NOGD and their baselines) "
    "on real data, fast.\n\nTypical use: `lsokl fetch a9a`, `lsokl run configs/table5.yaml` (into runs/table5), "
    "`lsokl report runs/table5`; `lsokl reproduce lsokl2016:table5` rebuilds a committed reproduction "
    "(`lsokl reproduce --list`).\n\nKernels are Gaussian, k(x, x') = exp(-||x - x'||^2 / (2 sigma^2)). "
    "Every paper config states its sigma; in Python a learner's default is sigma=\"scale\", "
    "scikit-learn's gamma='scale' rule (sigma = sqrt(n_features * X.var() / 2), from the data of the "
    "first fit, kept as sigma_). `lsokl algorithms` lists every learner with its defaults.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help texts use literal [brackets] (defaults, fogd[eta=0.002])
)



def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            text = version("lsokl")
        except PackageNotFoundError:  # run from a source tree that was never installed
            from .. import __version__ as text
        typer.echo(f"lsokl {text}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="print the installed lsokl version and exit"),
) -> None:
    """Reproduce large-scale online kernel learning papers on real data, fast."""


def main(argv: list[str] | None = None) -> None:
    """The ``lsokl`` command; ``argv`` (default: the process's arguments) lets a script run a
    command in its own process (``lsokl reproduce``). Exits with the command's code."""
    import warnings

    # library warnings (an unverified file, ...) as one readable line, not file:line plus source
    warnings.formatwarning = lambda message, category, *args, **kwargs: f"warning: {message}\n"
    _note_rich_broken_pipe()
    try:
        app(args=argv, prog_name="lsokl")
    except SystemExit as exc:
        # `lsokl ... | head`: the reader closed the pipe early, and click (it wraps sys.stdout in its
        # PacifyFlushWrapper) or rich (Console.on_broken_pipe) exits 1. The output was wanted only
        # up to there, so that is success. (typer may vendor click: the wrapper is known by name.)
        if exc.code == 1 and (_BROKEN_PIPE or type(sys.stdout).__name__ == "PacifyFlushWrapper"):
            raise SystemExit(0) from None
        raise


#: set when rich met a closed stdout (see :func:`main`)
_BROKEN_PIPE: list = []


def _note_rich_broken_pipe() -> None:
    """Record rich's broken-pipe exit (it redirects stdout to devnull, then exits 1) so that
    :func:`main` can tell it from a command's own failure."""
    from rich.console import Console

    if getattr(Console.on_broken_pipe, "_lsokl", False):
        return
    original = Console.on_broken_pipe

    def on_broken_pipe(self) -> None:
        _BROKEN_PIPE.append(True)
        original(self)

    on_broken_pipe._lsokl = True
    Console.on_broken_pipe = on_broken_pipe
