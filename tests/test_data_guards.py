"""Bad files reach the user as one line naming the file (and the line), never as a traceback.

Every file is fetched through the command line from a local mirror folder or a local HTTP server on 127.0.0.1.
"""
from __future__ import annotations

import bz2
import gzip
import hashlib

import pytest
import yaml
from typer.testing import CliRunner

from lsokl.data import load
from lsokl.data.fetch import fetch
from lsokl.errors import DataError

from test_data_fetch import closed_port, entry, own_cache, put, server, use_registry  # noqa: F401 (fixtures)

HTML = ("<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head>\n"
        "<body><h1>Not Found</h1><p>The requested URL was not found.</p></body></html>\n")
LIBSVM = "+1 1:0.5 3:1\n-1 2:2\n+1 1:1 2:1\n-1 3:4\n"
DENSE = "+1 0.5 0 1\n-1 0 2 0\n+1 1 1 0\n-1 0 0 4\n"


def _fetch_cli(tmp_path, use_registry, rel: str, data: bytes, compression: str, **extra):
    from lsokl.cli import app

    mirror = tmp_path / "mirror"
    put(mirror, rel, data)
    use_registry(entry(url="http://127.0.0.1:9/x", sha256=None, mirror=rel, compression=compression, **extra))
    res = CliRunner(env={"COLUMNS": "300"}).invoke(app, ["fetch", "toy", "--mirror", str(mirror), "-q"])
    return res


@pytest.mark.parametrize("rel,compression", [("toy/toy.bz2", "bz2"), ("toy/toy.gz", "gz"), ("toy/toy.zip", "zip")])
def test_html_page_under_an_archive_name_is_named_for_what_it_is(tmp_path, use_registry, own_cache, rel,
                                                                 compression):
    res = _fetch_cli(tmp_path, use_registry, rel, HTML.encode(), compression)
    assert res.exit_code == 1
    assert f"this is not a {compression} archive (it looks like an HTML page: '404 Not Found')" in res.output
    assert rel.split("/")[-1] in res.output and "Traceback" not in res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)


def test_html_page_where_plain_text_was_expected(tmp_path, use_registry, own_cache):
    res = _fetch_cli(tmp_path, use_registry, "toy/toy.txt", HTML.encode(), "none")
    assert res.exit_code == 1 and "this is not a data file (it looks like an HTML page" in res.output


@pytest.mark.parametrize("rel", ["toy/toy.bz2", "toy/toy.gz", "toy/toy.xz"])
@pytest.mark.parametrize("text", [LIBSVM, DENSE], ids=["libsvm", "dense"])
def test_plain_copy_under_an_archive_name_is_read_as_it_is(tmp_path, use_registry, own_cache, rel, text):
    """A mirror may keep a file decompressed under the upstream name: decompression follows the bytes."""
    res = _fetch_cli(tmp_path, use_registry, rel, text.encode(), rel.rsplit(".", 1)[1])
    assert res.exit_code == 0, res.output
    ds = load("toy")
    assert ds.X.shape == (4, 3) and ds.y.tolist() == [1, -1, 1, -1]


def test_archive_under_a_plain_name_is_decompressed(tmp_path, use_registry, own_cache):
    res = _fetch_cli(tmp_path, use_registry, "toy/toy.txt", gzip.compress(DENSE.encode()), "none")
    assert res.exit_code == 0, res.output
    assert load("toy").X.shape == (4, 3)


def test_html_served_with_status_200_over_http(server, use_registry, own_cache):
    base, root, _ = server
    put(root, "toy/toy.bz2", HTML)
    use_registry(entry(url=f"{base}/toy/toy.bz2", sha256=None, mirror="toy/toy.bz2", compression="bz2"))
    with pytest.raises(DataError, match=r"toy\.bz2: this is not a bz2 archive \(it looks like an HTML page: "
                                        r"'404 Not Found'\)"):
        fetch("toy", retries=0, progress=False)
    assert not list(own_cache.rglob("*.npy")) if own_cache.exists() else True


BAD_FILES = [
    # (id, file name, bytes, declared compression, what the message must say)
    ("binary-junk-as-gz", "toy.gz", bytes(range(256)) * 4, "gz", r"toy\.gz: this is not a gz archive"),
    ("truncated-bz2", "toy.bz2", bz2.compress("".join(f"+1 1:{i * 0.37 % 1:.6f}\n" for i in range(5000)).encode())[:300],
     "bz2",
     r"toy\.bz2: corrupt or truncated bz2 archive"),
    ("bad-token", "toy.txt", b"+1 1:0.5\n-1 2:1\n+1 3:x\n-1 1:1\n", "none", r"toy\.txt:3: '3:x' is not index:value"),
    ("bad-label", "toy.txt", b"+1 1:0.5\nyes 2:1\n+1 3:1\n-1 1:1\n", "none", r"toy\.txt:2: label 'yes'"),
    ("ragged-dense", "toy.txt", b"+1 1 2 3\n-1 1 2 3\n+1 1 2 3 4\n-1 1 2 3\n", "none", r"toy\.txt:3: "),
    ("word-in-dense", "toy.txt", b"+1 1 2 3\n-1 1 two 3\n", "none", r"toy\.txt:2: 'two' is not a number"),
    ("binary-as-text", "toy.txt", b"+1 1:1\n" + bytes(range(1, 256)), "none", r"toy\.txt:2"),
    ("empty", "toy.txt", b"", "none", r"toy\.txt: no data lines"),
    ("decreasing-index", "toy.txt", b"+1 3:1 1:1\n", "none", r"toy\.txt:1: feature indices must increase"),
]


@pytest.mark.parametrize("name,blob,compression,message", [c[1:] for c in BAD_FILES], ids=[c[0] for c in BAD_FILES])
def test_bad_file_gets_one_line_naming_the_file(tmp_path, use_registry, own_cache, name, blob, compression,
                                                message):
    import re

    res = _fetch_cli(tmp_path, use_registry, f"toy/{name}", blob, compression, n=None)
    assert res.exit_code == 1, res.output
    assert "Traceback" not in res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert re.search(message, res.output), res.output
    assert not list(own_cache.rglob("*.npy")) if own_cache.exists() else True


def test_csv_bytes_that_are_not_text_name_the_line(tmp_path, use_registry, own_cache):
    e = entry(url="http://127.0.0.1:9/x", sha256=None, mirror="toy/toy.csv", n=None)
    e.update(format="csv", source="uci")
    mirror = tmp_path / "mirror"
    put(mirror, "toy/toy.csv", b"1,2,3,1\n4,5,6,0\n7,\xff\xfe,9,1\n")
    use_registry(e)
    with pytest.raises(DataError, match=r"toy\.csv:3: bytes that are not text"):
        fetch("toy", mirror=mirror, progress=False)
