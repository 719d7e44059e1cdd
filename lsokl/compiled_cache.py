"""Where numba keeps lsokl's compiled loops: one folder per version of the compiled sources.

numba's on-disk cache (``cache=True``) checks only the source file of the function it loads
(its modification time and size). A loop that inlined a function from another module keeps the
old machine code after that module changes: ``features.sincos`` is compiled into FOGD's and
DSG's loops, ``kernels.dot`` into every learner's. After a ``git pull`` that edits only
``features.py``, FOGD would go on running the sin/cos it was first compiled with. numba cannot
track such dependencies, so lsokl points numba's cache at a folder named by a hash of every
source file of the packages that hold compiled code (``lsokl/compute``, ``lsokl/learners``, ``lsokl/approx``):
any change there starts from an empty folder, and the loops compile afresh once (about 40 s of
CPU for the whole Table 5 grid).

* The folder is ``<user cache>/lsokl/.numba/<hash>`` (e.g. ``~/.cache/lsokl/.numba/...``),
  apart from ``$LSOKL_DATA_DIR``, so test runs that move the data cache keep their compiled
  loops. Folders of other versions unused for ``STALE_DAYS`` days are removed, keeping the
  ``KEEP`` newest.
* ``NUMBA_CACHE_DIR`` set by the user is left alone (then stale code is the user's to clear);
  the one lsokl sets is marked with ``LSOKL_NUMBA_SOURCES``, so child processes (joblib
  workers) of the same version use the same folder and a different version makes its own.

Hashing the ~60 source files takes ~3 ms; numba is not imported here (``lsokl --help`` stays
fast): numba reads ``NUMBA_CACHE_DIR`` when it is first imported, or, when it already was,
``numba.config.CACHE_DIR`` is set too.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import sys
import time
from pathlib import Path

#: the packages whose sources hold numba-compiled code (hashed together)
COMPILED_PACKAGES = ("compute", "learners", "approx")
#: another version's folder is removed once unused this long, beyond the KEEP newest
STALE_DAYS = 2
KEEP = 4
#: set beside NUMBA_CACHE_DIR when lsokl chose it: the source hash it belongs to
MARK = "LSOKL_NUMBA_SOURCES"


def source_hash(package_dir: Path | None = None) -> str:
    """A hash of the names and bytes of every ``.py`` file under the compiled packages."""
    package_dir = Path(__file__).parent if package_dir is None else package_dir
    h = hashlib.sha256()
    for sub in COMPILED_PACKAGES:
        for path in sorted((package_dir / sub).rglob("*.py")):
            h.update(str(path.relative_to(package_dir)).encode())
            h.update(b"\0")
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


def cache_base() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("lsokl")) / ".numba"


def remove_stale(base: Path, keep: str, now: float | None = None) -> list[Path]:
    """Remove the folders under ``base`` other than ``keep`` that were not modified for
    STALE_DAYS days, sparing the KEEP newest. Returns those removed."""
    now = time.time() if now is None else now
    try:
        folders = [p for p in base.iterdir() if p.is_dir() and p.name != keep]
    except OSError:
        return []
    folders.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    removed = []
    for folder in folders[KEEP:]:
        if now - folder.stat().st_mtime > STALE_DAYS * 86400:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def configure() -> Path | None:
    """Point numba's cache at this version's folder (see the module doc); returns it, or None
    when the user set NUMBA_CACHE_DIR or no folder can be made."""
    chosen = os.environ.get("NUMBA_CACHE_DIR")
    if chosen and MARK not in os.environ:
        return None  # the user's own choice
    try:
        digest = source_hash()
        if chosen and os.environ.get(MARK) == digest:
            folder = Path(chosen)
        else:
            base = cache_base()
            folder = base / digest
            folder.mkdir(parents=True, exist_ok=True)
            os.utime(folder)  # in use: spared by other versions' clean-up for STALE_DAYS
            remove_stale(base, digest)
    except OSError:
        return None  # unreadable sources or no writable cache: numba's default place
    os.environ["NUMBA_CACHE_DIR"] = str(folder)
    os.environ[MARK] = digest
    numba = sys.modules.get("numba")
    if numba is not None:  # imported before lsokl: it has read its configuration already
        numba.config.CACHE_DIR = str(folder)
    return folder
