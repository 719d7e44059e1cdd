"""How the commands print: tables and summaries that are never cut when not on a terminal.

rich sizes its output to the terminal, and to 80 columns when there is none (a pipe, a log file,
``subprocess``): a table of 1,366-cell counts then reads "13…" and a summary wraps mid-phrase.
:func:`make_console` keeps rich's behaviour on a terminal and removes the width limit elsewhere
(``COLUMNS`` still sets a width when given). :func:`print_table` prints one table as a rich table
or, with ``--format csv|tsv``, as plain delimited rows for other programs.
"""
from __future__ import annotations

import csv
import sys
from typing import Iterable, Sequence

import typer
from rich.console import Console, ConsoleDimensions
from rich.table import Table
from rich.text import Text

#: the width of a console that is not a terminal: no table or line of ours comes near it
UNLIMITED = 10_000
FORMATS = ("table", "csv", "tsv")

FORMAT_OPTION_HELP = ("output format: table (rich; full width when not on a terminal), csv or tsv "
                      "(plain rows for other programs)")


class _Console(Console):
    """rich's Console, without the 80-column limit when the output is not a terminal."""

    @property
    def size(self) -> ConsoleDimensions:
        size = super().size
        if self._width is None and not self.is_terminal and not self._environ.get("COLUMNS"):
            return ConsoleDimensions(UNLIMITED, size.height)
        return size

    @size.setter
    def size(self, new_size) -> None:  # as rich's own setter
        Console.size.fset(self, new_size)


def make_console(stderr: bool = False) -> Console:
    return _Console(stderr=stderr)


def format_option():
    return typer.Option("table", "--format", help=FORMAT_OPTION_HELP, case_sensitive=False)


def check_format(fmt: str) -> str:
    fmt = fmt.lower()
    if fmt not in FORMATS:
        from ..errors import UnknownNameError

        raise typer.BadParameter(str(UnknownNameError("format", fmt, FORMATS)), param_hint="--format")
    return fmt


def rule(console: Console, title: str) -> None:
    """A section heading: rich's rule on a terminal, one plain line elsewhere (a rule as wide as
    an unlimited console would be 10,000 characters)."""
    if console.is_terminal:
        console.rule(title)
    else:
        console.print(f"== {title} ==", highlight=False, markup=False)


def print_table(console: Console, title: str | None, columns: Sequence[tuple[str, dict]],
                rows: Iterable[Sequence[str]], fmt: str = "table") -> None:
    """One table: ``columns`` are (header, rich column keywords); cells may hold rich markup,
    which the csv/tsv forms drop (their text is kept)."""
    fmt = check_format(fmt)
    rows = [list(r) for r in rows]
    if fmt == "table":
        table = Table(title=title)
        for name, kw in columns:
            table.add_column(name, **kw)
        for r in rows:
            table.add_row(*r)
        console.print(table)
        return
    writer = csv.writer(sys.stdout, delimiter="," if fmt == "csv" else "\t", lineterminator="\n")
    writer.writerow([name.replace("\n", " ") for name, _ in columns])
    for r in rows:
        writer.writerow([Text.from_markup(c).plain.replace("\n", " ") if isinstance(c, str) else c
                         for c in r])
    sys.stdout.flush()

