"""Dai et al.: Scalable Kernel Methods via Doubly Stochastic Gradients (NIPS 2014).

Its items are declared in :mod:`.items`; :mod:`.report` draws what the generic tables and plots
of :mod:`lsokl.report` cannot (the DSG experiments and their figures)."""
from __future__ import annotations

from .items import ITEMS

__all__ = ["ITEMS"]
