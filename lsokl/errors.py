"""Exceptions with messages a researcher can act on, and closest-name suggestions."""
from __future__ import annotations

import difflib
from collections.abc import Iterable


class LsoklError(Exception):
    """Base class: the CLI prints these without a traceback."""


class UnknownNameError(LsoklError, KeyError):
    """A dataset, algorithm or parameter name that is not registered."""

    def __init__(self, kind: str, name: str, choices: Iterable[str]):
        self.kind, self.name, self.choices = kind, name, sorted(set(choices))
        super().__init__(unknown_name_message(kind, name, self.choices))

    def __str__(self) -> str:  # KeyError would wrap the message in quotes
        return self.args[0]


class ConfigError(LsoklError, ValueError):
    """A malformed experiment config; the message names the file and the key path."""


class DataError(LsoklError, ValueError):
    """A dataset file that cannot be used (corrupt, mismatched, malformed)."""


class DownloadError(LsoklError, OSError):
    """A file that could not be fetched."""


def closest(name: str, choices: Iterable[str], n: int = 1) -> list[str]:
    """The registered names that look most like ``name`` (case-insensitive)."""
    choices = list(choices)
    lowered = {c.lower(): c for c in choices}
    hits = difflib.get_close_matches(name.lower(), list(lowered), n=n, cutoff=0.5)
    return [lowered[h] for h in hits]


def unknown_name_message(kind: str, name: str, choices: Iterable[str]) -> str:
    choices = sorted(set(choices))
    guess = closest(name, choices)
    hint = f" Did you mean {guess[0]!r}?" if guess else ""
    return f"unknown {kind} {name!r}.{hint} Known: {', '.join(choices)}."
