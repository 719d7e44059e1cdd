"""datasets.yaml: every entry well-formed and unique; names resolve; unknown names suggest the closest."""
from __future__ import annotations

import copy

import pytest
import yaml

from lsokl.data import builtin, registry
from lsokl.errors import UnknownNameError


@pytest.fixture(scope="module")
def raw():
    return yaml.safe_load(registry.REGISTRY_PATH.read_text())


def test_every_registry_entry_is_valid_and_unique(raw):
    assert registry.validate(raw, builtin.BUILTINS) == []
    specs = registry.specs()
    assert len(specs) == len(raw["datasets"]) >= 30
    labels = [label.lower() for s in specs.values() for label in (s.name, *s.aliases)] + list(builtin.BUILTINS)
    assert len(labels) == len(set(labels))
    pairs = [(f.url, f.sha256) for s in specs.values() for f in {f for sp in s.splits.values() for f in sp.files}
             if f.url is not None]
    assert len(pairs) == len(set(pairs))


def test_every_file_can_be_verified_or_records_its_hash(raw):
    for spec in registry.specs().values():
        for split in spec.splits.values():
            for f in split.files:
                # a file with a known hash anywhere is checked; otherwise fetch records what it saw (meta.json)
                assert f.url or f.mirror_sha256, spec.name
                assert f.mirror and not f.mirror.startswith("/"), spec.name


def test_regression_entries_declare_the_authors_minmax_scaling():
    for spec in registry.specs().values():
        if spec.task != "regression" or spec.name == "wine-quality":
            continue  # wine-quality is MEKA's, not an LSOKL regression set
        pre = spec.preprocessing
        already = "already" in pre.get("note", "")
        assert already or (pre["features"] == "minmax" and pre["target"] == "minmax"), spec.name


@pytest.mark.parametrize("mutate, message", [
    (lambda r: r["datasets"].append(copy.deepcopy(r["datasets"][0])), "already used"),
    (lambda r: r["datasets"][1]["aliases"].append(r["datasets"][0]["name"].upper()), "already used"),
    (lambda r: r["datasets"][0].pop("task"), "missing keys"),
    (lambda r: r["datasets"][0]["splits"]["train"]["files"][0].update(sha256="abc"), "64 lowercase hex"),
    (lambda r: r["datasets"][0]["splits"]["train"]["files"][0].update(url=None), "url may be null"),
    (lambda r: r["datasets"][0].update(task="ranking"), "task must be"),
    (lambda r: r["datasets"][0]["splits"].pop("train"), "train"),
    (lambda r: r["datasets"][0]["splits"]["train"]["files"][0].update(mirror="../x"), "relative path"),
    (lambda r: r["datasets"][3]["splits"]["train"]["files"].append(
        copy.deepcopy(r["datasets"][0]["splits"]["train"]["files"][0])), "also used by"),
])
def test_validate_reports_each_kind_of_problem(raw, mutate, message):
    bad = copy.deepcopy(raw)
    mutate(bad)
    problems = registry.validate(bad, builtin.BUILTINS)
    assert any(message in p for p in problems), problems


def test_builtin_names_cannot_be_reused(raw):
    bad = copy.deepcopy(raw)
    bad["datasets"][0]["aliases"].append("checkerboard")
    assert any("built-in checkerboard" in p for p in registry.validate(bad, builtin.BUILTINS))


def test_aliases_resolve_case_insensitively():
    assert registry.resolve("cod-rna") == "codrna"
    assert registry.resolve("KDDCUP99") == "kddcup99"
    assert registry.resolve("YearPredictionMSD") == "year"
    assert registry.resolve("no-such-set") is None


def test_unknown_name_suggests_the_closest():
    from lsokl.data import load

    with pytest.raises(UnknownNameError, match="Did you mean 'a9a'"):
        load("a9b")
    with pytest.raises(UnknownNameError, match="Did you mean 'checkerboard'"):
        load("checkerbord")


def test_lsokl_mat_entries_are_the_authors_files():
    for name in ("german", "spambase", "dna", "satimage", "housing", "mg"):
        spec = registry.get(name)
        (f,) = spec.splits["train"].files
        assert spec.source == "lsokl-mat" and spec.format == "mat"
        assert f.mirror == f"lsokl-mat/{name}.mat"
        assert "jingcoco/Online-Kernel-Learning" in f.url and f.sha256


def test_registry_hashes_match_the_shared_manifest(shared_data):
    manifest = {f["path"]: f for f in yaml.safe_load((shared_data / "MANIFEST.yaml").read_text())["files"]}
    checked = 0
    for spec in registry.specs().values():
        for split in spec.splits.values():
            for f in split.files:
                if f.mirror in manifest:
                    assert f.mirror_hash == manifest[f.mirror]["sha256"], (spec.name, f.mirror)
                    checked += 1
                else:
                    assert not (shared_data / f.mirror).exists(), f.mirror
    assert checked >= 35
