"""numba's cache folder follows the compiled sources (``lsokl.compiled_cache``)."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lsokl import compiled_cache


def _package(root: Path) -> Path:
    for sub, text in (("learners/a.py", "X = 1\n"), ("learners/deep/b.py", "Y = 2\n"),
                      ("approx/c.py", "Z = 3\n"), ("report/d.py", "W = 4\n")):
        path = root / sub
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_hash_follows_the_compiled_packages_only(tmp_path):
    pkg = _package(tmp_path)
    first = compiled_cache.source_hash(pkg)
    assert compiled_cache.source_hash(pkg) == first
    (pkg / "report/d.py").write_text("W = 5\n")  # no compiled code there
    assert compiled_cache.source_hash(pkg) == first
    (pkg / "learners/deep/b.py").write_text("Y = 3\n")  # an inlined helper changes
    second = compiled_cache.source_hash(pkg)
    assert second != first
    (pkg / "learners/deep/b.py").rename(pkg / "learners/deep/b2.py")  # same bytes, new name
    assert compiled_cache.source_hash(pkg) not in (first, second)


def _env(tmp_path, **extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", compiled_cache.MARK)}
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    env.update(extra)
    return env


def _cache_dir_in_child(env, pre_import_numba=False):
    code = ("import numba\n" if pre_import_numba else "") + (
        "import lsokl, numba, os\n"
        "print(numba.config.CACHE_DIR)\n"
        "print(os.environ.get('LSOKL_NUMBA_SOURCES', ''))\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, cwd=str(Path(__file__).parent))
    return out.stdout.split("\n")[:2]


@pytest.mark.parametrize("pre_import_numba", [False, True])
def test_numba_uses_the_folder_of_this_version(tmp_path, pre_import_numba):
    folder, mark = _cache_dir_in_child(_env(tmp_path), pre_import_numba)
    digest = compiled_cache.source_hash()
    assert mark == digest
    assert Path(folder) == tmp_path / "xdg" / "lsokl" / ".numba" / digest
    assert Path(folder).is_dir()


def test_a_users_numba_cache_dir_is_kept(tmp_path):
    mine = tmp_path / "mine"
    folder, mark = _cache_dir_in_child(_env(tmp_path, NUMBA_CACHE_DIR=str(mine)))
    assert Path(folder) == mine and mark == ""


def test_a_child_of_another_version_makes_its_own_folder(tmp_path):
    """A NUMBA_CACHE_DIR that lsokl set for other sources is replaced; for these, kept."""
    other = tmp_path / "other"
    folder, mark = _cache_dir_in_child(
        _env(tmp_path, NUMBA_CACHE_DIR=str(other), LSOKL_NUMBA_SOURCES="0123456789abcdef"))
    assert Path(folder).name == compiled_cache.source_hash() and mark != "0123456789abcdef"
    same = tmp_path / "same"
    folder, _ = _cache_dir_in_child(
        _env(tmp_path, NUMBA_CACHE_DIR=str(same),
             LSOKL_NUMBA_SOURCES=compiled_cache.source_hash()))
    assert Path(folder) == same


def test_stale_folders_of_other_versions_are_removed(tmp_path):
    now = time.time()
    ages = {"current": 30, "young": 1, **{f"old{i}": 10 + i for i in range(6)}}
    for name, days in ages.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "x.nbi").write_text("")
        os.utime(tmp_path / name, (now - days * 86400,) * 2)
    removed = compiled_cache.remove_stale(tmp_path, keep="current", now=now)
    left = sorted(p.name for p in tmp_path.iterdir())
    # the KEEP newest others are spared (young, old0..old2), older than STALE_DAYS go
    assert compiled_cache.KEEP == 4 and compiled_cache.STALE_DAYS < 10
    assert left == ["current", "old0", "old1", "old2", "young"]
    assert sorted(p.name for p in removed) == ["old3", "old4", "old5"]
    assert compiled_cache.remove_stale(tmp_path / "missing", keep="x") == []
