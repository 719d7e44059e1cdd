"""What an item of the paper layer is: its datasets' provenance, its tolerance rule, its score and
status (the types every paper module declares its items with; :mod:`lsokl.papers`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional


#: dataset provenance: how the file lsokl runs relates to the paper's
PROVENANCE = {
    "same": "the paper's file (or the same public copy of it)",
    "other-split": "the same data, another file or split of it than the paper's",
    "subset": "a part of the paper's data (fewer rows, or a public excerpt)",
    "stand-in": "another dataset in place of the paper's (the label says for which)",
    "absent": "not run: the file is not available (the note says how to get it)",
}
#: item status, best first
STATUSES = {
    "reproduced": "runs the paper's protocol on the paper's data (or declared substitutes) and is compared cell by cell",
    "partial": "runs, but only part of the item (some datasets absent or on substitutes)",
    "analogue": "runs the paper's method on other data or at another scale: judged by shape and ordering, not level",
    "planned": "a config is being written; no committed result yet",
    "not-implemented": "lsokl cannot run it (reason given)",
}


@dataclass(frozen=True)
class Dataset:
    """One dataset of an item: the name lsokl runs (or the paper's, when absent) and its provenance."""

    name: str
    provenance: str
    paper: str = ""  # the paper's name when it differs (``KDDCUP99``), or the dataset stood in for
    note: str = ""  # one line: what differs, or how to get an absent file

    def __post_init__(self):
        if self.provenance not in PROVENANCE:
            raise ValueError(f"dataset {self.name}: provenance {self.provenance!r} is not one of {list(PROVENANCE)}")
        if self.provenance in ("stand-in", "absent", "other-split", "subset") and not self.note:
            raise ValueError(f"dataset {self.name}: provenance {self.provenance} needs a note")

    def label(self) -> str:
        if self.provenance == "same":
            return self.name
        extra = f" for {self.paper}" if self.provenance == "stand-in" and self.paper else ""
        return f"{self.name} ({self.provenance}{extra})"


@dataclass(frozen=True)
class Tolerance:
    """A rule for when one of lsokl's cells matches the published cell, and why this rule."""

    rule: str
    reason: str


@dataclass(frozen=True)
class Score:
    """Cells of a committed result against the published ones: within the tolerance rule
    (``scoring.within``), within the strict rule (2 published std), and the
    number of comparable cells. ``claim`` is whether the headline claim held (None: the committed
    files lack what the check reads; the note says which)."""

    declared: int = 0
    declared_of: int = 0
    strict: Optional[int] = None
    strict_of: int = 0
    claim: Optional[bool] = None
    claim_detail: str = ""
    note: str = ""


@dataclass(frozen=True)
class Item:
    id: str  # "lsokl2016:table5"
    title: str
    kind: str  # "table" | "figure"
    status: str
    datasets: tuple = ()
    configs: tuple = ()  # shipped config names (lsokl/configs/<name>.yaml)
    folder: str = ""  # committed folder, relative to the repository root
    published: str = ""  # lsokl/report/paper_tables id, e.g. "lsokl2016:table5"
    tolerance: Optional[Tolerance] = None
    layout: str = ""  # what the report writes, relative to the folder
    claim: str = ""  # the paper's headline claim for this item, quoted in its words
    where: str = ""  # the claim's place in the paper (section, paragraph, figure caption)
    variant: str = ""  # which run is scored, and why it is the paper's protocol (items with several)
    recipe: str = ""  # how it runs: a name in lsokl.papers.reproduce.RECIPES
    options: dict = field(default_factory=dict)  # recipe options
    reason: str = ""  # why not-implemented / planned
    score: Optional[Callable] = None  # folder -> Score, from the committed files
    cells: Optional[Callable] = None  # folder -> the cells under the rule (verdicts.md), where cell by cell

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"{self.id}: status {self.status!r} is not one of {list(STATUSES)}")
        if self.status in ("not-implemented", "planned") and not self.reason:
            raise ValueError(f"{self.id}: a {self.status} item needs its reason")
        if self.status not in ("not-implemented", "planned") and not (self.recipe and self.folder):
            raise ValueError(f"{self.id}: a runnable item needs a recipe and a folder")

    @property
    def paper(self) -> str:
        return self.id.split(":", 1)[0]

    @property
    def runnable(self) -> bool:
        return self.status not in ("not-implemented", "planned")


PAPERS = {
    "lsokl2016": "Lu, Hoi, Wang, Zhao, Liu. Large Scale Online Kernel Learning. JMLR 17(47), 2016",
    "bpegasosm2010": "Wang, Crammer, Vucetic. Multi-class Pegasos on a Budget. ICML 2010",
    "dsg2014": "Dai, Xie, He, Liang, Raj, Balcan, Song. Scalable Kernel Methods via Doubly Stochastic Gradients. NIPS 2014",
    "meka2017": "Si, Hsieh, Dhillon. Memory Efficient Kernel Approximation. JMLR 18, 2017",
}
