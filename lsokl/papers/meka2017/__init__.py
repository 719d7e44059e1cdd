"""Si, Hsieh, Dhillon: Memory Efficient Kernel Approximation (JMLR 2017).

Its items are declared in :mod:`.items`; :mod:`.report` draws what the generic tables and plots
of :mod:`lsokl.report` cannot (the MEKA tables and Fig. 7)."""
from __future__ import annotations

from .items import ITEMS

__all__ = ["ITEMS"]
