#!/usr/bin/env python
"""Large data end to end: streaming fetch of mnist8m- and covtype-shaped files from a local mirror, then one pass.

    python benchmarks/large_data.py [--mnist-rows 500000,2000000] [--covtype-rows 5000000] [--pass-rows 200000]
                                    [--workdir /tmp/lsokl-large] [--keep]

What is measured (each step in a fresh process under ``/usr/bin/time -v``):

* **fetch**: ``lsokl.data.fetch.fetch`` of a generated file served over http by ``http.server`` on 127.0.0.1 (a
  thread of this script): download, sha256, chunked parsing (lsokl.data.streaming) and the cache written as memory
  maps. Wall and CPU (user + system) time, peak RSS of the process (``Maximum resident set size``), cache size.
* **pass**: one online pass (``Learner.run``) of FOGD (B = 100: D = 400), NOGD (B = 100, k = 20) and BSGD-M (B = 100) over
  the first ``--pass-rows`` rows of the largest mnist-shaped set, read from the cache's memory maps (``order`` =
  those rows, so nothing is sliced or copied by the benchmark). us/sample = the pass's own timer / rows (numba
  compilation excluded: an untimed pass over 500 rows first). Peak RSS from ``time -v``; peak anonymous RSS
  (``RssAnon`` of /proc/self/status, sampled every 20 ms by a thread) excludes the page cache of the memory maps.
  The full mnist8m pass (8.1M rows) is extrapolated linearly: the per-sample cost of these learners does not
  grow with n (budgeted).

The files: mnist8m-shaped LIBSVM, 784 features, ~19% non-zero (150 of 784, MNIST's density), integer pixel
values 1..255 (so ``dtype: auto`` caches float32, exactly), 10 classes; covtype-shaped dense LIBSVM, 54 features
(10 integer-valued "numeric" columns, one of 4 and one of 40 one-hot columns), 7 classes. Rows repeat a
20,000-row block with fresh labels (parsing cost does not depend on distinct rows; generation stays fast).
"""
from __future__ import annotations

import argparse
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

BLOCK = 20_000


def _mnist_block(seed: int) -> list[bytes]:
    import numpy as np

    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(BLOCK):
        cols = np.sort(rng.choice(784, 150, replace=False)) + 1
        vals = rng.integers(1, 256, 150)
        rows.append(" ".join(f"{c}:{v}" for c, v in zip(cols, vals)).encode())
    return rows


def _covtype_block(seed: int) -> list[bytes]:
    import numpy as np

    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(BLOCK):
        numeric = rng.integers(0, 4000, 10)
        feats = [f"{j + 1}:{v}" for j, v in enumerate(numeric) if v]
        feats.append(f"{11 + rng.integers(0, 4)}:1")
        feats.append(f"{15 + rng.integers(0, 40)}:1")
        rows.append(" ".join(feats).encode())
    return rows


def generate(path: Path, rows: int, kind: str, classes: int) -> None:
    if path.exists() and path.stat().st_size > 0:
        return
    import numpy as np

    block = _mnist_block(0) if kind == "mnist" else _covtype_block(0)
    rng = np.random.default_rng(1)
    tmp = path.with_suffix(".part")
    with open(tmp, "wb") as fh:
        done = 0
        while done < rows:
            k = min(BLOCK, rows - done)
            labels = rng.integers(1, classes + 1, k)
            fh.write(b"".join(b"%d %s\n" % (lab, row) for lab, row in zip(labels, block[:k])))
            done += k
    os.replace(tmp, path)


def registry_entry(name: str, rel: str, n: int, d: int, classes: int, storage: str) -> dict:
    return {"name": name, "aliases": [], "task": "multiclass", "source": "libsvm", "description": "generated",
            "format": "libsvm", "d": d, "classes": classes, "storage": storage, "dtype": "auto",
            "preprocessing": {"features": "none", "target": "none"}, "paper": "benchmark",
            "splits": {"train": {"n": n, "files": [{"url": f"http://127.0.0.1:9/{rel}", "sha256": None,
                                                    "mirror": rel, "compression": "none"}]}}}


def serve(root: Path) -> tuple[str, http.server.ThreadingHTTPServer]:
    handler = type("H", (http.server.SimpleHTTPRequestHandler,), {"log_message": lambda *a: None})

    def make(*a, **k):
        return handler(*a, directory=str(root), **k)

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), make)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{httpd.server_address[1]}", httpd


def timed(code: str, env: dict) -> dict:
    """Run ``python -c code`` under /usr/bin/time -v; its last stdout line is JSON."""
    proc = subprocess.run(["/usr/bin/time", "-v", sys.executable, "-c", code], env=env, capture_output=True,
                          text=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-3000:])
    err = proc.stderr

    def field(label):
        m = re.search(rf"{re.escape(label)}: (.+)", err)
        return m.group(1).strip() if m else None

    wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)")
    parts = [float(p) for p in wall.split(":")]
    wall_s = sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
    out = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.stdout.strip() else {}
    out.update(wall_s=wall_s, cpu_s=float(field("User time (seconds)")) + float(field("System time (seconds)")),
               max_rss_mib=int(field("Maximum resident set size (kbytes)")) / 1024)
    return out


FETCH = """
import json, warnings
warnings.simplefilter("ignore")
from lsokl.data.fetch import fetch
fetch({name!r}, mirror={mirror!r}, progress=False)
print(json.dumps({{}}))
"""

PASS = """
import json, threading, time, warnings
warnings.simplefilter("ignore")
import numpy as np
peak = [0]
def watch():
    while True:
        for line in open("/proc/self/status"):
            if line.startswith("RssAnon:"):
                peak[0] = max(peak[0], int(line.split()[1]))
        time.sleep(0.02)
threading.Thread(target=watch, daemon=True).start()
from threadpoolctl import threadpool_limits
from lsokl.data import load
from lsokl.learners import registry
ds = load({name!r})
params = {params!r}
with threadpool_limits(1):
    registry.create({learner!r}, "multiclass", **params).run(ds.X, ds.y, np.arange(500))  # compile
    m = registry.create({learner!r}, "multiclass", **params)
    cpu0 = time.process_time()
    trace = m.run(ds.X, ds.y, np.arange({rows}))
    cpu = time.process_time() - cpu0
time.sleep(0.05)
print(json.dumps({{"us_per_sample": trace.elapsed / {rows} * 1e6, "cpu_us_per_sample": cpu / {rows} * 1e6,
                   "mistake_rate": trace.mistakes / {rows},
                   "peak_anon_mib": peak[0] / 1024, "dtype": str((ds.X.data if hasattr(ds.X, "indptr") else ds.X).dtype)}}))
"""

DSG_PASS = """
import json, threading, time, warnings
warnings.simplefilter("ignore")
import numpy as np
peak = [0]
def watch():
    while True:
        for line in open("/proc/self/status"):
            if line.startswith("RssAnon:"):
                peak[0] = max(peak[0], int(line.split()[1]))
        time.sleep(0.02)
threading.Thread(target=watch, daemon=True).start()
from threadpoolctl import threadpool_limits
from lsokl.data import load
from lsokl.learners import registry
ds = load({name!r})
params = {params!r}
Xt, yt = ds.X[:16], ds.y[:16]  # a token test split: fit_curve needs one (16 rows, sliced)
with threadpool_limits(1):
    registry.create({learner!r}, "multiclass", **params).fit_curve(ds.X, ds.y, Xt, yt, order=np.arange(2048))
    m = registry.create({learner!r}, "multiclass", **params)
    cpu0 = time.process_time()
    m.fit_curve(ds.X, ds.y, Xt, yt, order=np.arange({rows}))
    cpu = time.process_time() - cpu0
time.sleep(0.05)
print(json.dumps({{"us_per_sample": m.train_time_ / {rows} * 1e6, "cpu_us_per_sample": cpu / {rows} * 1e6,
                   "n_blocks": int(m.n_blocks_),
                   "peak_anon_mib": peak[0] / 1024, "dtype": str((ds.X.data if hasattr(ds.X, "indptr") else ds.X).dtype)}}))
"""

LEARNERS = {"fogd": {"sigma": 8.0, "budget": 100}, "nogd": {"sigma": 8.0, "budget": 100},
            "bsgd-m": {"sigma": 8.0, "budget": 100},
            # bounded DSG: max_blocks x block_features = 5,120 random features (issue 26 item 8)
            "dsg": {"sigma": 8.0, "batch_size": 1024, "block_features": 256, "max_blocks": 20}}


def fetch_memory_sentence(fetches: list[dict]) -> str:
    """What the fetch rows measured about peak RSS against n, and the extrapolation to mnist8m, in words
    computed from the rows (one size measured: no claim about how it grows)."""
    wide = sorted((r for r in fetches if r["d"] == 784), key=lambda r: r["rows"])
    if not wide:
        return "No 784-feature set was fetched: no statement on how fetch memory grows with n."
    big = wide[-1]
    tail = (f"Extrapolated linearly to mnist8m (8.1M rows, same density) from the {big['rows']:,}-row fetch: fetch CPU "
            f"{big['cpu_s'] / big['rows'] * 8.1e6 / 60:.1f} min, cache {big['cache_mib'] / big['rows'] * 8.1e6 / 1024:.1f} "
            "GiB (float32 data, int32 indices, int64 indptr).")
    if len({r["rows"] for r in wide}) < 2:
        return f"Peak RSS of the fetch was measured at one size only ({big['rows']:,} rows: {big['max_rss_mib']:,.0f} MiB). " + tail
    small = wide[0]
    growth = big["max_rss_mib"] - small["max_rss_mib"]
    per_row = growth * 2**20 / (big["rows"] - small["rows"])
    return (f"Peak RSS of the fetch: {small['max_rss_mib']:,.0f} MiB at {small['rows']:,} rows, {big['max_rss_mib']:,.0f} MiB "
            f"at {big['rows']:,} rows ({growth:+,.0f} MiB, {per_row:+.1f} bytes per added row). " + tail)


def render(res: dict) -> str:
    import page

    lines = ["## Large data: streaming fetch and one pass (`benchmarks/large_data.py`)", "",
             f"{page.machine()}. Shared machine: {res.get('load_at_start', '?')} when the run started, "
             f"{res.get('load_at_end', '?')} at its end (other sessions' work), so wall times are inflated and "
             "noisy: compare rows of one table only, and prefer the CPU columns.", "",
             "Generated files served over http by a local `http.server` on 127.0.0.1 and fetched with "
             "`lsokl.data.fetch.fetch` in a fresh process under `/usr/bin/time -v` (download, sha256, chunked "
             "parsing by scikit-learn's `load_svmlight_file` per 32 MiB chunk, cache written as memory maps; "
             f"`dtype: auto` keeps the integer pixels in float32). Generating the files took {res['generate_s']:.0f} s "
             "(not included).", "",
             "| set | rows x d | file | fetch wall | fetch CPU | peak RSS | cache (storage, dtype) |",
             "|---|---|---|---|---|---|---|"]
    for r in res["fetch"]:
        lines.append(f"| {r['name']}{' (earlier run)' if r.get('earlier') else ''} | {r['rows']:,} x {r['d']} | {r['file_mib']:,.0f} MiB | {r['wall_s']:.1f} s | "
                     f"{r['cpu_s']:.1f} s | {r['max_rss_mib']:,.0f} MiB | {r['cache_mib']:,.0f} MiB "
                     f"({r['storage']}, {r['dtype']}) |")
    lines += ["", f"One online pass over the first {res['pass_rows']:,} rows of {res['pass_set']} (read from the cache's "
              "memory maps; numba compilation excluded; one thread). Peak RSS includes the memory-mapped "
              "pages read; peak anonymous RSS does not. The last column extrapolates linearly to mnist8m's 8.1M "
              "rows from the CPU time (budgeted learners: the per-sample cost does not grow with n). Wall time "
              "per sample is the pass's own timer; on a loaded machine it is larger than the CPU time by the "
              "share of the CPU the process got.", "",
              "| learner | us/sample (CPU) | us/sample (wall) | peak RSS | peak anonymous RSS | cached X dtype | "
              "8.1M-row pass (CPU) |",
              "|---|---|---|---|---|---|---|"]
    for r in res["pass"]:
        lines.append(f"| {r['learner']} ({', '.join(f'{k}={v}' for k, v in LEARNERS[r['learner']].items())}) | "
                     f"{r['cpu_us_per_sample']:.1f} | {r['us_per_sample']:.1f} | {r['max_rss_mib']:,.0f} MiB | "
                     f"{r['peak_anon_mib']:,.0f} MiB | "
                     f"{r['dtype']} | {r['full_mnist8m_h'] * 60:.0f} min |")
    lines += ["", fetch_memory_sentence(res["fetch"])]
    if any(r["cpu_us_per_sample"] > r["us_per_sample"] for r in res["pass"]):
        lines[-1] += (" Where a pass's CPU time exceeds its wall time, CPU counts every thread of the process "
                      "(threads outside the one-thread BLAS limit or the RSS sampler), wall is the pass's own timer.")
    lines += ["", "The passes read the float32 values and int32 indices of the cache as they are (no float64/int64 "
              "working copy, which would cost ~16 bytes per non-zero); what remains is the model, the pass's blocks, n-sized float64 arrays (the rows' squared "
              "norms: 8 bytes a row, 65 MB at 8.1M rows) and the interpreter with its libraries. Peak RSS counts "
              "the cache's file pages too: the Stream checks the CSR structure and sums the squared norms of every "
              "row once, so the whole cache is read (page cache, given back under memory pressure). "
              "Bounded DSG (MulticlassDSG, `max_blocks` x `block_features` = 5,120 features, batches of 1,024, "
              "float32 features) is timed by `fit_curve` over the same rows (its training time; a 16-row test "
              "split). Per-sample times of different runs are not comparable on this shared machine (the load "
              "differed); the memory columns are."]
    if any(r.get("earlier") for r in res["fetch"]):
        lines += ["", "Rows marked *earlier run* were not re-fetched by this run (`--fetch-from`): their numbers "
                  "come from the run that last measured them, on the same machine."]
    return "\n".join(lines)


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mnist-rows", default="500000,2000000")
    ap.add_argument("--covtype-rows", type=int, default=5_000_000)
    ap.add_argument("--pass-rows", type=int, default=200_000)
    ap.add_argument("--workdir", default="/tmp/lsokl-large")
    ap.add_argument("--keep", action="store_true", help="keep the generated files and caches")
    ap.add_argument("--no-page", action="store_true", help="print the section instead of writing RESULTS.md")
    ap.add_argument("--render", metavar="JSON", help="only rewrite the section from a saved large_data.json")
    ap.add_argument("--fetch-from", metavar="JSON", help="keep the fetch rows of sets not fetched by this run from "
                    "a saved large_data.json (marked 'earlier run'), e.g. to re-measure only the passes")
    ap.add_argument("--learners", default=",".join(LEARNERS), help="the learners of the pass (comma-separated)")
    args = ap.parse_args()
    import yaml

    import page

    if args.render:
        page.write_section("large-data", render(json.loads(Path(args.render).read_text())))
        return
    load_at_start = page.load()

    work = Path(args.workdir)
    www, cache = work / "www", work / "cache"
    www.mkdir(parents=True, exist_ok=True)
    sets = [(f"mnist-shaped-{int(r) // 1000}k", "mnist", int(r), 784, 10, "csr")
            for r in args.mnist_rows.split(",") if r]
    if args.covtype_rows:
        sets.append((f"covtype-shaped-{args.covtype_rows // 1000}k", "covtype", args.covtype_rows, 54, 7, "dense"))
    entries = []
    t0 = time.perf_counter()
    for name, kind, rows, d, classes, storage in sets:
        generate(www / f"{name}.txt", rows, kind, classes)
        entries.append(registry_entry(name, f"{name}.txt", rows, d, classes, storage))
    gen_s = time.perf_counter() - t0
    reg = work / "datasets.yaml"
    reg.write_text(yaml.safe_dump({"datasets": entries}))
    base, httpd = serve(www)
    env = {**os.environ, "LSOKL_REGISTRY": str(reg), "LSOKL_DATA_DIR": str(cache), "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
    env.pop("LSOKL_DATA_MIRROR", None)
    fetches = []
    for name, kind, rows, d, classes, storage in sets:
        shutil.rmtree(cache / name, ignore_errors=True)
        r = timed(FETCH.format(name=name, mirror=base), env)
        meta = json.loads((cache / name / "train" / "meta.json").read_text())
        r.update(name=name, rows=rows, d=d, file_mib=(www / f"{name}.txt").stat().st_size / 2**20,
                 cache_mib=du(cache / name) / 2**20, storage=meta["storage"], dtype=meta.get("dtype"))
        fetches.append(r)
        print(json.dumps(r), flush=True)
    httpd.shutdown()
    biggest = max((s for s in sets if s[1] == "mnist"), key=lambda s: s[2])
    passes = []
    for learner in args.learners.split(","):
        params = LEARNERS[learner]
        template = DSG_PASS if learner == "dsg" else PASS
        r = timed(template.format(name=biggest[0], learner=learner, params=params, rows=args.pass_rows), env)
        r.update(learner=learner, dataset=biggest[0], rows=args.pass_rows,
                 full_mnist8m_h=r["cpu_us_per_sample"] * 8.1e6 / 1e6 / 3600)
        passes.append(r)
        print(json.dumps(r), flush=True)

    if args.fetch_from:
        done = {r["name"] for r in fetches}
        fetches += [{**r, "earlier": True} for r in json.loads(Path(args.fetch_from).read_text())["fetch"]
                    if r["name"] not in done]
        fetches.sort(key=lambda r: (r["d"] != 784, r["rows"]))
    result = {"fetch": fetches, "pass": passes, "generate_s": gen_s, "pass_rows": args.pass_rows,
              "pass_set": biggest[0], "load_at_start": load_at_start, "load_at_end": page.load()}
    (HERE / "large_data.json").write_text(json.dumps(result, indent=1))
    text = render(result)
    if args.no_page:
        print(text)
    else:
        page.write_section("large-data", text)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
