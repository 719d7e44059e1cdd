"""The benchmark page, benchmarks/RESULTS.md, shared by every benchmark script.

The page is a header (what it is, how to regenerate it) plus one section per script. A script
owns its section and rewrites only that one, between the markers

    <!-- section: NAME -->
    ...
    <!-- end: NAME -->

so scripts can be re-run alone and in any order. To add a benchmark: write
``benchmarks/<yours>.py``, build your Markdown, call ``write_section("yours", markdown)``, and add
the script to the ``bench`` target of the Makefile. Put ``machine()`` and ``load()`` beside
your numbers: this machine is shared, so every timing needs its load next to it.
"""
from __future__ import annotations

import os
import platform
import re
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
PAGE = HERE / "RESULTS.md"

HEADER = """# lsokl benchmarks

Every section below is written by one script in `benchmarks/` (named in the section) and says
what it times and what it compares against. `make bench` regenerates all of them; each script
can also be run alone. The machine they ran on is shared: each section records the CPU, the
BLAS kernel and the load average (`uptime`) at the time, and compares only numbers measured in
the same run.
"""


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def blas() -> str:
    """The BLAS libraries NumPy/SciPy loaded, with the kernel OpenBLAS selected (threadpoolctl)."""
    from threadpoolctl import threadpool_info

    seen = set()
    for info in threadpool_info():
        if info.get("user_api") != "blas":
            continue
        seen.add(f"{info.get('internal_api')} {info.get('version')} (kernel {info.get('architecture')}, "
                 f"{info.get('threading_layer')} threads)")
    return "; ".join(sorted(seen)) or "none found"


def load() -> str:
    """The 1/5/15-minute load averages and how many CPUs share them."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} / {fifteen:.1f} on {os.cpu_count()} CPUs"


def machine() -> str:
    import numba
    import numpy
    import scipy

    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (f"{cpu_model()}, {os.cpu_count()} CPUs, {mem:.0f} GiB; {platform.platform()}; "
            f"Python {platform.python_version()}, numpy {numpy.__version__}, scipy {scipy.__version__}, "
            f"numba {numba.__version__}; BLAS: {blas()}")


def git_revision(path: Path = HERE) -> str:
    try:
        return subprocess.run(["git", "-C", str(path), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def write_section(name: str, markdown: str, page: Path = PAGE) -> None:
    """Replace (or append) section ``name`` of the page with ``markdown``."""
    text = page.read_text() if page.exists() else HEADER
    if not text.startswith("# "):
        text = HEADER + "\n" + text
    block = f"<!-- section: {name} -->\n{markdown.rstrip()}\n<!-- end: {name} -->"
    pattern = re.compile(rf"<!-- section: {re.escape(name)} -->.*?<!-- end: {re.escape(name)} -->", re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: block, text)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    page.write_text(text if text.endswith("\n") else text + "\n")
