#!/usr/bin/env python
"""Reproduce one published table: fetch its datasets, run its config, report beside the paper.

    python scripts/reproduce.py table5 [--jobs N] [--results DIR] [-d DATASET ...] [-a ALGO ...]

Reads configs/<table>.yaml, writes results/<table>/ (records, then report/ with the tables and
plots). Resumable: rerunning skips finished cells. The published numbers come from
lsokl2016:<table> unless the config's name says otherwise (--paper).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("table", help="table5, table7, table9, ... (reads configs/<table>.yaml)")
    ap.add_argument("--config", type=Path, help="another config instead of configs/<table>.yaml")
    ap.add_argument("--results", type=Path, help="results folder [default: results/<table>]")
    ap.add_argument("--paper", help="published table to compare with [default: lsokl2016:<table>]")
    ap.add_argument("--jobs", "-j", type=int)
    ap.add_argument("--backend", choices=("loky", "dask"))
    ap.add_argument("--scheduler")
    ap.add_argument("-d", "--dataset", action="append", default=[])
    ap.add_argument("-a", "--algorithm", action="append", default=[])
    ap.add_argument("--retry-failed", action="store_true")
    args = ap.parse_args(argv)

    config = args.config or REPO / "configs" / f"{args.table}.yaml"
    if not config.exists():
        print(f"error: {config} does not exist; write the config for {args.table} first", file=sys.stderr)
        return 2
    results = args.results or REPO / "results" / args.table
    paper = args.paper or f"lsokl2016:{args.table}"

    from lsokl.config import load_config
    from lsokl.errors import LsoklError

    try:
        exp = load_config(config)
        _fetch([d for d in exp.datasets if not args.dataset or d in args.dataset])
    except LsoklError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    run = ["run", str(config), "--results", str(results)]
    if args.jobs:
        run += ["--jobs", str(args.jobs)]
    if args.backend:
        run += ["--backend", args.backend]
    if args.scheduler:
        run += ["--scheduler", args.scheduler]
    if args.retry_failed:
        run.append("--retry-failed")
    for d in args.dataset:
        run += ["-d", d]
    for a in args.algorithm:
        run += ["-a", a]
    code = _lsokl(run)
    # report even when some cells failed: the table shows which
    rcode = _lsokl(["report", str(results), "--paper", paper, "--compact"])
    table = results / "report" / "table.md"
    if table.exists():  # the headline file: results/<table>/<table>.md
        (results / f"{args.table}.md").write_text(table.read_text())
    return code or rcode


def _fetch(names: list[str]) -> None:
    """Download (or copy from the mirror) before any worker starts; built-ins need nothing."""
    try:
        from lsokl.data import builtin
        from lsokl.data.fetch import fetch
    except ImportError:  # a data layer without fetch: `lsokl run` loads (and fetches) itself
        return
    from lsokl.data.fetch import MissingFileError

    for name in names:
        if name in getattr(builtin, "BUILTINS", {}):
            continue
        print(f"fetching {name} ...", flush=True)
        try:
            fetch(name)
        except MissingFileError as exc:  # `lsokl run` skips it and the report lists it as missing
            print(f"  missing: {exc}", flush=True)


def _lsokl(args: list[str]) -> int:
    """``lsokl ARGS`` in this process, returning its exit code: one interpreter start and one
    import of lsokl and its compiled loops for fetch, run and report instead of three (~2 s
    each of ``make reproduce-table5``'s wall time)."""
    from lsokl.cli import main

    try:
        main(args)
    except SystemExit as exc:
        if exc.code is None:
            return 0
        return exc.code if isinstance(exc.code, int) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
