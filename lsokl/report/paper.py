"""Published numbers, shipped as data (``paper_tables/*.csv``, extracted from the CSV blocks of
PAPER_TABLES.md), and the mapping from the papers' names to lsokl's."""
from __future__ import annotations

import re
from importlib import resources

import pandas as pd

from ..errors import UnknownNameError

#: published tables of one value per cell and no std (MEKA's): the value column read as ``mean``, and the
#: papers' dataset names that differ from lsokl's (Table 8's ``wine`` is lsokl's ``wine-quality``)
VALUE_TABLES = {"meka2017:table8": ("method", "test_rmse", {"wine": "wine-quality"})}

# How the papers print algorithm names -> lsokl config names (when not just lower-case).
PAPER_ALGORITHMS = {"BPA-S": "bpas", "Norma": "norma", "NORMA": "norma", "BSGD-M": "bsgd-m",
                    "BSGD-R": "bsgd-r", "Nys": "nystrom"}


def available() -> list[str]:
    """``lsokl2016:table5`` style identifiers of the shipped tables."""
    folder = resources.files(__package__) / "paper_tables"
    return sorted(p.name[:-4].replace("_", ":", 1) for p in folder.iterdir() if p.name.endswith(".csv"))


def norm_dataset(name: str) -> str:
    """Compare dataset names loosely: ``KDDCUP08`` = ``kddcup08``, ``cod-rna`` = ``codrna``."""
    return re.sub(r"[^a-z0-9]", "", str(name).lower())


def algorithm_name(paper_name: str) -> str:
    return PAPER_ALGORITHMS.get(paper_name, paper_name.strip().lower())


def _value_table(ident: str, df: pd.DataFrame) -> pd.DataFrame:
    """A :data:`VALUE_TABLES` table in the results-table form (``algorithm``, ``mean``, ``std`` = NaN)."""
    if ident not in VALUE_TABLES:
        return df
    method, value, datasets = VALUE_TABLES[ident]
    return df.assign(algorithm=df[method], mean=pd.to_numeric(df[value], errors="coerce"), std=float("nan"),
                     dataset=df["dataset"].map(lambda d: datasets.get(d, d)))


def load_table(ident: str) -> pd.DataFrame:
    """A published results table with lsokl names added (``learner``, ``dataset_key``)."""
    choices = available()
    if ident not in choices:
        raise UnknownNameError("published table", ident, choices)
    path = resources.files(__package__) / "paper_tables" / (ident.replace(":", "_", 1) + ".csv")
    with resources.as_file(path) as p:
        df = pd.read_csv(p)
    df = _value_table(ident, df)
    missing = {"dataset", "algorithm", "mean", "std"} - set(df.columns)
    if missing:
        raise UnknownNameError(f"results table (this one lacks {sorted(missing)})", ident,
                               [c for c in choices if c.startswith("lsokl2016:table")])
    df["learner"] = df["algorithm"].map(algorithm_name)
    df["dataset_key"] = df["dataset"].map(norm_dataset)
    return df
