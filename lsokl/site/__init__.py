"""``lsokl site``: a static, offline site of the reproductions (:mod:`.build`), generated from the
committed results and the item declarations (:mod:`.cells`)."""
from __future__ import annotations

from .build import DEFAULT_OUT
from .build import build as build_site

__all__ = ["DEFAULT_OUT", "build_site"]
