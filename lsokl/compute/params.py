"""Declarative parameter checks with scikit-learn-style messages."""
from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral, Real


@dataclass(frozen=True)
class Num:
    """A real (or, with ``integer=True``, whole) number in an interval."""

    low: float = -math.inf
    high: float = math.inf
    closed: str = "neither"  # which ends are included: "left", "right", "both", "neither"
    integer: bool = False
    allow_none: bool = False

    def check(self, owner: str, name: str, value) -> None:
        if value is None and self.allow_none:
            return
        kind = "an int" if self.integer else "a float"
        ok_type = isinstance(value, Integral) if self.integer else isinstance(value, Real)
        if isinstance(value, bool) or not ok_type or (not self.integer and math.isnan(value)):
            raise ValueError(self._msg(owner, name, kind, value))
        lo_ok = value >= self.low if self.closed in ("left", "both") else value > self.low
        hi_ok = value <= self.high if self.closed in ("right", "both") else value < self.high
        if not (lo_ok and hi_ok):
            raise ValueError(self._msg(owner, name, kind, value))

    def _msg(self, owner, name, kind, value) -> str:
        lb = "[" if self.closed in ("left", "both") else "("
        rb = "]" if self.closed in ("right", "both") else ")"
        lo = "-inf" if self.low == -math.inf else f"{self.low:g}"
        hi = "inf" if self.high == math.inf else f"{self.high:g}"
        none = " or None" if self.allow_none else ""
        return (f"The {name!r} parameter of {owner} must be {kind} in the range "
                f"{lb}{lo}, {hi}{rb}{none}. Got {value!r} instead.")


@dataclass(frozen=True)
class OneOf:
    options: tuple

    def check(self, owner: str, name: str, value) -> None:
        if value not in self.options:
            opts = ", ".join(repr(o) for o in self.options)
            raise ValueError(f"The {name!r} parameter of {owner} must be one of {opts}. "
                             f"Got {value!r} instead.")


@dataclass(frozen=True)
class Seed:
    """None, an int >= 0, or a numpy SeedSequence."""

    def check(self, owner: str, name: str, value) -> None:
        import numpy as np

        if value is None or isinstance(value, np.random.SeedSequence):
            return
        if isinstance(value, Integral) and not isinstance(value, bool) and value >= 0:
            return
        raise ValueError(f"The {name!r} parameter of {owner} must be None, an int >= 0 or a "
                         f"numpy.random.SeedSequence. Got {value!r} instead.")


POSITIVE = Num(0, math.inf, "neither")
NON_NEGATIVE = Num(0, math.inf, "left")
BUDGET = Num(1, math.inf, "left", integer=True)
