"""The README's commands run as written (issue 25): every ```bash and ```python block, from the
repository's root, with the data mirror; a ```yaml block whose first line is ``# NAME.yaml`` is
written to that file first (and removed after). A block preceded by
``<!-- not run by tests/test_readme.py: reason -->`` is skipped, and the reason must be given.
The commands must leave ``git status`` as it was (user runs go to the git-ignored ``runs/``)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
SKIP = re.compile(r"<!--\s*not run by tests/test_readme\.py:\s*(.+?)\s*-->\s*$")
FENCE = re.compile(r"^```(\w+)\s*$")


def blocks(text: str) -> list[tuple[str, str, str | None, int]]:
    """(language, code, skip reason or None, line) of every fenced block."""
    out, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, lang = i, m.group(1)
        j = i + 1
        while j < len(lines) and lines[j].rstrip() != "```":
            j += 1
        prev = next((lines[k] for k in range(start - 1, -1, -1) if lines[k].strip()), "")
        skip = SKIP.match(prev.strip())
        out.append((lang, "\n".join(lines[start + 1:j]), skip.group(1) if skip else None, start + 1))
        i = j + 1
    return out


def _mirror() -> str | None:
    env = os.environ.get("LSOKL_DATA_MIRROR")
    if env:
        return env
    shared = REPO.parent / "shared" / "data"
    return str(shared) if (shared / "MANIFEST.yaml").exists() else None


def test_every_skipped_block_says_why_and_the_runnable_ones_are_most():
    found = blocks(README.read_text())
    assert found, "the README has no code blocks"
    run = [b for b in found if b[0] in ("bash", "python") and b[2] is None]
    skipped = [b for b in found if b[2] is not None]
    assert all(reason.strip() for _, _, reason, _ in skipped)
    assert len(run) >= len(skipped), "most of the README's commands should be checked"


@pytest.mark.slow
@pytest.mark.shared_data
def test_readme_blocks_run_verbatim(tmp_path):
    mirror = _mirror()
    if mirror is None:
        pytest.skip("the README's examples fetch german/spambase: needs ../shared/data (or LSOKL_DATA_MIRROR)")
    lsokl = shutil.which("lsokl", path=str(Path(sys.executable).parent)) or shutil.which("lsokl")
    if lsokl is None:
        pytest.skip("the lsokl command is not installed next to this Python")
    env = dict(os.environ, LSOKL_DATA_MIRROR=mirror, PATH=f"{Path(lsokl).parent}{os.pathsep}{os.environ['PATH']}",
               LSOKL_DATA_DIR=os.environ.get("LSOKL_DATA_DIR", str(tmp_path / "cache")),
               MPLBACKEND="Agg")
    before = subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True, text=True).stdout
    ran, written = 0, []
    own_run = (REPO / "runs" / "my-grid").exists()  # a user's own run of the example is kept
    try:
        for lang, code, skip, line in blocks(README.read_text()):
            if skip is not None:
                continue
            first = code.split("\n", 1)[0].strip()
            if lang == "yaml" and first.startswith("# ") and first.endswith(".yaml"):
                path = REPO / first[2:].strip()
                assert not path.exists(), f"{path.name} would overwrite a file of the repository"
                path.write_text(code)
                written.append(path)
                continue
            if lang == "bash":
                cmd = ["bash", "-euo", "pipefail", "-c", code]
            elif lang == "python":
                cmd = [sys.executable, "-c", code]
            else:
                continue
            proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
            assert proc.returncode == 0, (f"README.md line {line} ({lang}) failed:\n{code}\n--- output ---\n"
                                          f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
            ran += 1
    finally:
        for path in written:
            path.unlink(missing_ok=True)
        if not own_run:
            shutil.rmtree(REPO / "runs" / "my-grid", ignore_errors=True)
    assert ran >= 3
    after = subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True, text=True).stdout
    assert after == before, "the README's commands changed files of the repository"
