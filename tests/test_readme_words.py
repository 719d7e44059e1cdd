"""What the README says in its visible text (not in HTML comments): that `lsokl reproduce`
rewrites the committed folder and that `--root DIR` writes elsewhere; and no link or pointer to a
folder outside the repository."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _visible(text: str) -> str:
    return re.sub(r"<!--.*?-->", "", text, flags=re.S)


def test_readme_says_reproduce_rewrites_and_root_writes_elsewhere():
    text = " ".join(_visible((ROOT / "README.md").read_text()).split())
    assert "rewrites the item's committed folder" in text
    assert "`--root DIR` writes" in text


def test_readme_links_stay_inside_the_repository():
    text = _visible((ROOT / "README.md").read_text())
    for target in re.findall(r"\]\(([^)]+)\)", text):
        if target.startswith(("http://", "https://", "#", "mailto:")):
            continue
        path = (ROOT / target.split("#")[0]).resolve()
        assert path.is_relative_to(ROOT.resolve()) and path.exists(), target
    assert "docs folder beside the clone" not in text
