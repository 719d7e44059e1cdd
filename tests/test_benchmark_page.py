"""The benchmark page's sections (benchmarks/page.py); `make reproduce-all` is `lsokl reproduce --all` (tests/test_papers.py)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _module(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_benchmark_page_sections_are_replaced_in_place(tmp_path):
    page = _module(REPO / "benchmarks" / "page.py")
    path = tmp_path / "RESULTS.md"
    page.write_section("a", "## A\n\nfirst", path)
    page.write_section("b", "## B", path)
    page.write_section("a", "## A\n\nsecond", path)
    text = path.read_text()
    assert text.startswith("# lsokl benchmarks")
    assert "second" in text and "first" not in text
    assert text.index("## A") < text.index("## B")
