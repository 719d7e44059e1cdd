"""Published numbers, shipped as data (``paper_tables/*.csv``, extracted from the CSV blocks of
PAPER_TABLES.md), and the mapping from the papers' names to lsokl's."""
from __future__ import annotations

import re
from importlib import resources

import pandas as pd

from ..errors import UnknownNameError

# How the papers print algorithm names -> lsokl config names (when not just lower-case).
PAPER_ALGORITHMS = {"BPA-S": "bpas", "Norma": "norma", "NORMA": "norma", "BSGD-M": "bsgd-m",
                    "BSGD-R": "bsgd-r"}


def available() -> list[str]:
    """``lsokl2016:table5`` style identifiers of the shipped tables."""
    folder = resources.files(__package__) / "paper_tables"
    return sorted(p.name[:-4].replace("_", ":", 1) for p in folder.iterdir() if p.name.endswith(".csv"))


def norm_dataset(name: str) -> str:
    """Compare dataset names loosely: ``KDDCUP08`` = ``kddcup08``, ``cod-rna`` = ``codrna``."""
    return re.sub(r"[^a-z0-9]", "", str(name).lower())


def algorithm_name(paper_name: str) -> str:
    return PAPER_ALGORITHMS.get(paper_name, paper_name.strip().lower())


def load_table(ident: str) -> pd.DataFrame:
    """A published results table with lsokl names added (``learner``, ``dataset_key``)."""
    choices = available()
    if ident not in choices:
        raise UnknownNameError("published table", ident, choices)
    path = resources.files(__package__) / "paper_tables" / (ident.replace(":", "_", 1) + ".csv")
    with resources.as_file(path) as p:
        df = pd.read_csv(p)
    missing = {"dataset", "algorithm", "mean", "std"} - set(df.columns)
    if missing:
        raise UnknownNameError(f"results table (this one lacks {sorted(missing)})", ident,
                               [c for c in choices if c.startswith("lsokl2016:table")])
    df["learner"] = df["algorithm"].map(algorithm_name)
    df["dataset_key"] = df["dataset"].map(norm_dataset)
    return df
