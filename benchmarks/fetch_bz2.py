#!/usr/bin/env python
"""bz2 fetch: one core (the standard library's bz2) against block-parallel decompression (indexed_bzip2 on every
core), the same file in the same run.

    python benchmarks/fetch_bz2.py [--rows 500000,1000000] [--workdir /tmp/lsokl-fetch-bz2] [--no-page]

An mnist8m-shaped LIBSVM file (benchmarks/large_data.py's generator: 784 features, ~19% non-zero, integer pixels)
is written and compressed with ``bzip2 -9`` (setup, not timed); then ``lsokl.data.fetch.fetch`` reads it from a
local mirror in a fresh process under ``/usr/bin/time -v``, once with ``LSOKL_FETCH_THREADS=1`` (the standard
library and one parsing process, as before) and once with the default (bz2 decompressed on every CPU by
indexed_bzip2, chunks parsed by one worker process per CPU), each into an empty cache, alternating which goes first
between sizes. Reported: wall and CPU time, peak RSS, and the ratio of the two walls. Everything printed is what
this run measured; the section of benchmarks/RESULTS.md is rewritten from it.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", default="500000,1000000")
    ap.add_argument("--workdir", default="/tmp/lsokl-fetch-bz2")
    ap.add_argument("--no-page", action="store_true", help="print the section instead of writing RESULTS.md")
    args = ap.parse_args()
    import os

    import yaml

    import page
    from large_data import FETCH, generate, registry_entry, timed

    load_at_start = page.load()
    work = Path(args.workdir)
    mirror = work / "mirror"
    mirror.mkdir(parents=True, exist_ok=True)
    rows_list = [int(r) for r in args.rows.split(",")]
    entries, sizes = [], {}
    for rows in rows_list:
        name = f"mnist-bz2-{rows // 1000}k"
        text = mirror / f"{name}.txt"
        packed = mirror / f"{name}.txt.bz2"
        if not packed.exists():
            generate(text, rows, "mnist", 10)
            subprocess.run(["bzip2", "-9", "-f", str(text)], check=True)
        e = registry_entry(name, packed.name, rows, 784, 10, "csr")
        e["splits"]["train"]["files"][0]["compression"] = "bz2"
        entries.append(e)
        sizes[name] = packed.stat().st_size
    reg = work / "registry.yaml"
    reg.write_text(yaml.safe_dump({"datasets": entries}))
    results = []
    for i, rows in enumerate(rows_list):
        name = f"mnist-bz2-{rows // 1000}k"
        modes = [("one core (stdlib bz2, one parsing process)", "1"),
                 ("every core (indexed_bzip2, parsing processes)", "")]
        if i % 2:
            modes.reverse()
        for label, threads in modes:
            cache = work / f"cache-{name}-{threads or 'all'}"
            shutil.rmtree(cache, ignore_errors=True)
            env = {**os.environ, "LSOKL_REGISTRY": str(reg), "LSOKL_DATA_DIR": str(cache),
                   "LSOKL_FETCH_THREADS": threads, "LSOKL_PARSE_WORKERS": threads, "PYTHONWARNINGS": "ignore"}
            if not threads:
                env.pop("LSOKL_FETCH_THREADS")
                env.pop("LSOKL_PARSE_WORKERS")
            load = page.load()
            r = timed(FETCH.format(name=name, mirror=str(mirror)), env)
            r.update(name=name, rows=rows, mode=label, bz2_mib=sizes[name] / 2**20, load=load)
            print(json.dumps(r), flush=True)
            results.append(r)
            shutil.rmtree(cache, ignore_errors=True)
    res = {"machine": page.machine(), "load_at_start": load_at_start, "load_at_end": page.load(),
           "fetch": results, "when": time.strftime("%Y-%m-%d")}
    (HERE / "fetch_bz2.json").write_text(json.dumps(res, indent=1) + "\n")
    text = render(res)
    if args.no_page:
        print(text)
    else:
        page.write_section("fetch-bz2", text)


def render(res: dict) -> str:
    lines = ["## bz2 fetch: one core against every core (`benchmarks/fetch_bz2.py`)", "",
             f"{res['machine']}. Shared machine: {res['load_at_start']} when the run started, {res['load_at_end']} "
             "at its end (other sessions' work): wall times are inflated and noisy, compare the two rows of one "
             "size only.", "",
             "An mnist8m-shaped LIBSVM file compressed with `bzip2 -9`, fetched from a local mirror by "
             "`lsokl.data.fetch.fetch` in a fresh process (`/usr/bin/time -v`) into an empty cache: decompression, "
             "sha256, chunked parsing (one process, or one worker process per CPU for files of 16 MiB and more), "
             "memory-mapped cache.", "",
             "| rows x d | bz2 file | decompression | fetch wall | fetch CPU | peak RSS | load at start |",
             "|---|---|---|---|---|---|---|"]
    for r in res["fetch"]:
        lines.append(f"| {r['rows']:,} x 784 | {r['bz2_mib']:,.0f} MiB | {r['mode']} | {r['wall_s']:.1f} s | "
                     f"{r['cpu_s']:.1f} s | {r['max_rss_mib']:,.0f} MiB | {r['load']} |")
    lines.append("")
    by_size: dict = {}
    for r in res["fetch"]:
        by_size.setdefault(r["rows"], {})[r["mode"].split(" (")[0]] = r
    for rows, pair in by_size.items():
        if len(pair) == 2:
            one, every = pair["one core"], pair["every core"]
            lines.append(f"* {rows:,} rows: every core took {every['wall_s'] / one['wall_s']:.0%} of the one-core "
                         f"wall time (target <= 60%: {'met' if every['wall_s'] <= 0.6 * one['wall_s'] else 'missed'}); "
                         f"peak RSS {one['max_rss_mib']:,.0f} MiB one core, {every['max_rss_mib']:,.0f} MiB every core.")
    lines.append("* Peak RSS is `time -v`'s: the largest single process (the main one or a parsing worker), not their sum: the parsing "
                 "workers each hold at most two 32 MiB chunks of text and their parsed rows. On a machine "
                 "this loaded, several processes also win a larger share of the contended CPUs than one does, so the "
                 "wall ratio flatters the parallel fetch; the CPU column is the work done.")
    rss = sorted((r["rows"], r["max_rss_mib"]) for r in res["fetch"] if r["mode"].startswith("every"))
    if len(rss) >= 2:
        lines.append(f"* Peak RSS against n (every core): {rss[0][1]:,.0f} MiB at {rss[0][0]:,} rows, "
                     f"{rss[-1][1]:,.0f} MiB at {rss[-1][0]:,} rows.")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
