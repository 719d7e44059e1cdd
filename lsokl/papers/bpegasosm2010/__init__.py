"""Wang, Crammer, Vucetic: Multi-class Pegasos on a Budget (ICML 2010).

Its items are declared in :mod:`.items`; :mod:`.report` draws what the generic tables and plots
of :mod:`lsokl.report` cannot (Table 1 and the Fig. 1-3 curves)."""
from __future__ import annotations

from .items import ITEMS

__all__ = ["ITEMS"]
