"""Lu, Hoi, Wang, Zhao, Liu: Large Scale Online Kernel Learning (JMLR 2016).

Its items are declared in :mod:`.items`; :mod:`.report` draws what the generic tables and plots
of :mod:`lsokl.report` cannot (Table 3's holdout comparison against LIBSVM)."""
from __future__ import annotations

from .items import ITEMS

__all__ = ["ITEMS"]
