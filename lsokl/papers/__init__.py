"""The paper layer: every table and figure of the four seed papers, declared once.

An :class:`Item` says *what* is reproduced (``lsokl2016:table5``): the config(s) that run it, the
published table it is compared with (``lsokl/report/paper_tables/``), the tolerance rule with its
reason, the report it writes, the committed folder it lives in, the provenance of every dataset
(:data:`PROVENANCE`) and the paper's headline claim. *How* it runs is one of a few generic recipes
(:mod:`lsokl.papers.reproduce`); the scoreboard (``REPRODUCTIONS.md``) is computed from the
committed files (:mod:`lsokl.papers.scoreboard`). Items the paper has but lsokl cannot run are
declared too, with ``status="not-implemented"`` and the reason; figure configs that are being
written elsewhere are ``status="planned"``.

A paper is one folder: :mod:`.lsokl2016`, :mod:`.bpegasosm2010`, :mod:`.dsg2014`, :mod:`.meka2017`,
each with its declarations (``items.py``) and the reporting that the generic tables and plots of
:mod:`lsokl.report` cannot draw (``report.py``, called by its recipe). :mod:`lsokl.report` holds only
what all papers share and never imports a paper. Adding a reproduction is one :class:`Item` in the
paper's ``items.py`` plus one config (``lsokl/configs/``); code goes into the paper's folder only when
the generic reporting cannot draw it. Hand-written notes that explain misses stay Markdown
(``NOTES.md``) next to the generated tables.
"""
from __future__ import annotations

from .declare import PAPERS, PROVENANCE, STATUSES, Dataset, Item, Score, Tolerance
from .registry import get, items, select

__all__ = ["PAPERS", "PROVENANCE", "STATUSES", "Dataset", "Item", "Score", "Tolerance", "get", "items",
           "select"]
