"""fetch/load against a real HTTP server on 127.0.0.1 and local mirrors; bad input never leaves a corrupt cache."""
from __future__ import annotations

import gzip
import hashlib
import http.server
import socket
import threading
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from lsokl.data import cache, load
from lsokl.data.fetch import fetch
from lsokl.errors import DataError, DownloadError

TRAIN = "+1 1:0.5 3:1\n-1 2:2\n+1 1:1 2:1\n-1 3:4\n"
TEST = "-1 1:1\n+1 2:3\n"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class _Handler(http.server.BaseHTTPRequestHandler):
    root: Path
    log: list

    def do_GET(self):  # noqa: N802
        self.log.append(self.path)
        interrupted = self.path.startswith("/interrupt/")
        path = self.root / self.path.removeprefix("/interrupt/").lstrip("/")
        if not path.is_file():
            self.send_error(404)
            return
        body = path.read_bytes()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if interrupted:  # promise the whole file, send half, hang up
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def server(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    handler = type("H", (_Handler,), {"root": root, "log": []})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    yield base, root, handler.log
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LSOKL_DATA_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("LSOKL_DATA_MIRROR", raising=False)
    return tmp_path / "cache"


def put(root: Path, rel: str, data: bytes | str) -> bytes:
    data = data.encode() if isinstance(data, str) else data
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_bytes(data)
    return data


def entry(name="toy", *, url, sha256, mirror="toy/toy.txt", test=None, n=4, task="binary", d=3, **extra):
    e = {"name": name, "aliases": [], "task": task, "source": "libsvm", "description": "test set", "format": "libsvm",
         "d": d, "classes": 2 if task == "binary" else None, "storage": "dense",
         "preprocessing": {"features": "none", "target": "none"}, "paper": "none",
         "splits": {"train": {"n": n, "files": [{"url": url, "sha256": sha256, "mirror": mirror,
                                                  "compression": "none", **extra}]}}}
    if test is not None:
        e["splits"]["test"] = test
    return e


@pytest.fixture
def use_registry(tmp_path, monkeypatch):
    def write(*entries):
        path = tmp_path / f"datasets-{len(list(tmp_path.glob('datasets-*')))}.yaml"
        path.write_text(yaml.safe_dump({"datasets": list(entries)}))
        monkeypatch.setenv("LSOKL_REGISTRY", str(path))
        return path
    return write


def cached_files(cache_dir: Path) -> list[Path]:
    return [p for p in cache_dir.rglob("*") if p.is_file()] if cache_dir.exists() else []


# --- success paths --------------------------------------------------------------------------------------------------

def test_fetch_downloads_verifies_caches_and_load_memory_maps(server, use_registry, own_cache):
    base, root, log = server
    data = put(root, "toy/toy.txt", TRAIN)
    use_registry(entry(url=f"{base}/toy/toy.txt", sha256=sha(data)))
    res = fetch("toy", retries=0, progress=False)
    assert res.fetched == ["train"] and len(log) == 1
    ds = load("toy")
    assert isinstance(ds.X, np.memmap) and ds.X.shape == (4, 3) and ds.X.flags.c_contiguous
    assert ds.X[0].tolist() == [0.5, 0.0, 1.0] and ds.y.tolist() == [1, -1, 1, -1]
    assert ds.meta["sha256"] == sha(data) and ds.meta["files"][0]["verified"] is True
    assert fetch("toy", retries=0, progress=False).cached == ["train"] and len(log) == 1


def test_download_with_progress_bar(server, use_registry):
    base, root, _ = server
    data = put(root, "toy/toy.txt", TRAIN)
    use_registry(entry(url=f"{base}/toy/toy.txt", sha256=sha(data)))
    assert fetch("toy", retries=0, progress=True).fetched == ["train"]


def test_load_never_downloads_when_the_cache_is_complete(server, use_registry):
    base, root, log = server
    data = put(root, "toy/toy.txt", TRAIN)
    use_registry(entry(url=f"{base}/toy/toy.txt", sha256=sha(data)))
    load("toy")  # fetches
    (root / "toy/toy.txt").unlink()  # upstream gone: a second download would now fail
    log.clear()
    assert load("toy").n_samples == 4 and log == []


def test_load_fetches_on_demand_from_the_mirror_env(tmp_path, use_registry, monkeypatch, closed_port):
    mirror = tmp_path / "mirror"
    data = put(mirror, "toy/toy.txt", TRAIN)
    use_registry(entry(url=f"http://127.0.0.1:{closed_port}/toy", sha256=sha(data)))
    monkeypatch.setenv("LSOKL_DATA_MIRROR", str(mirror))
    assert load("toy").n_samples == 4  # offline: the upstream port is closed


def test_http_mirror_replaces_the_upstream_host(server, use_registry, closed_port):
    base, root, log = server
    data = put(root, "mirror-root/toy/toy.crlf", TRAIN.replace("\n", "\r\n"))
    use_registry(entry(url=f"http://127.0.0.1:{closed_port}/toy", sha256=None, mirror="toy/toy.crlf",
                       mirror_sha256=sha(data)))
    fetch("toy", mirror=f"{base}/mirror-root/", retries=0, progress=False)
    assert log == ["/mirror-root/toy/toy.crlf"]
    assert load("toy").X.shape == (4, 3)


def test_unknown_hash_is_recorded(server, use_registry):
    base, root, _ = server
    data = put(root, "toy/toy.txt", TRAIN)
    use_registry(entry(url=f"{base}/toy/toy.txt", sha256=None))
    fetch("toy", retries=0, progress=False)
    f = load("toy").meta["files"][0]
    assert f["sha256"] == sha(data) and f["verified"] is False


def test_test_split_uses_train_mapping_and_missing_optional_split_is_skipped(tmp_path, use_registry):
    mirror = tmp_path / "mirror"
    data = put(mirror, "toy/toy.txt", TRAIN)
    test_file = {"url": "http://127.0.0.1:9/toy.t", "sha256": None, "mirror": "toy/toy.t", "compression": "none"}
    use_registry(entry(url="http://127.0.0.1:9/toy", sha256=sha(data), test={"n": 2, "files": [test_file]}))
    res = fetch("toy", mirror=mirror, progress=False)
    assert res.fetched == ["train"] and "toy/toy.t" in res.skipped["test"]
    with pytest.raises(DownloadError, match="not in the mirror"):
        load("toy", split="test", mirror=str(mirror))
    put(mirror, "toy/toy.t", TEST)
    assert load("toy", split="test", mirror=str(mirror)).y.tolist() == [-1, 1]
    both = load("toy", split="all")
    assert both.n_samples == 6 and both.permutations is None


def test_regression_targets_min_max_scaled_with_train_statistics(tmp_path, use_registry):
    mirror = tmp_path / "mirror"
    put(mirror, "r/train", "10 1:0\n30 1:2\n20 1:4\n")
    put(mirror, "r/test", "40 1:8\n")
    e = entry("reg", url=None, sha256=None, mirror="r/train", task="regression", d=1, n=3,
              derived_from="test", mirror_sha256=sha(b"10 1:0\n30 1:2\n20 1:4\n"))
    e["preprocessing"] = {"features": "minmax", "target": "minmax"}
    e["splits"]["test"] = {"n": 1, "files": [{"url": None, "derived_from": "test", "sha256": None, "mirror": "r/test",
                                              "mirror_sha256": sha(b"40 1:8\n"), "compression": "none"}]}
    use_registry(e)
    tr = load("reg", mirror=str(mirror))
    assert tr.y.tolist() == [0.0, 1.0, 0.5] and tr.X[:, 0].tolist() == [0.0, 0.5, 1.0]
    assert tr.meta["target_range"] == [10.0, 30.0]
    assert tr.meta["preprocessing"]["target"] == "minmax"
    te = load("reg", split="test", mirror=str(mirror))
    assert te.y.tolist() == [1.5] and te.X[0, 0] == 2.0  # train's min/max, not its own


def test_changed_registry_entry_invalidates_the_cache(tmp_path, use_registry):
    mirror = tmp_path / "mirror"
    data = put(mirror, "toy/toy.txt", TRAIN)
    use_registry(entry(url="http://127.0.0.1:9/t", sha256=sha(data)))
    assert fetch("toy", mirror=mirror, progress=False).fetched == ["train"]
    use_registry(entry(url="http://127.0.0.1:9/t", sha256=sha(data), d=4))
    res = fetch("toy", mirror=mirror, progress=False)
    assert res.fetched == ["train"] and load("toy").n_features == 4


# --- failures: clear error, nothing cached ----------------------------------------------------------------------

def test_hash_mismatch_from_http(server, use_registry, own_cache):
    base, root, _ = server
    put(root, "toy/toy.txt", TRAIN)
    use_registry(entry(url=f"{base}/toy/toy.txt", sha256="0" * 64))
    with pytest.raises(DataError, match=rf"sha256 mismatch for {base}/toy/toy.txt: expected 0+, got [0-9a-f]{{64}}"):
        fetch("toy", retries=0, progress=False)
    assert cached_files(own_cache) == []


def test_hash_mismatch_in_a_local_mirror(tmp_path, use_registry, own_cache):
    mirror = tmp_path / "mirror"
    put(mirror, "toy/toy.txt", TRAIN)
    use_registry(entry(url="http://127.0.0.1:9/t", sha256="1" * 64))
    with pytest.raises(DataError, match=r"sha256 mismatch for .*mirror/toy/toy\.txt"):
        fetch("toy", mirror=mirror, progress=False)
    assert cached_files(own_cache) == []


def test_truncated_archive(server, use_registry, own_cache):
    base, root, _ = server
    rng = np.random.default_rng(0)
    blob = gzip.compress("".join(f"+1 1:{v}\n" for v in rng.random(3000)).encode())
    put(root, "toy/toy.gz", blob[: len(blob) // 2])
    use_registry(entry(url=f"{base}/toy/toy.gz", sha256=None, mirror="toy/toy.gz"))
    with pytest.raises(DataError, match="corrupt or truncated gz archive"):
        fetch("toy", retries=0, progress=False)
    assert cached_files(own_cache) == []


def test_interrupted_download(server, use_registry, own_cache):
    base, root, _ = server
    put(root, "toy/toy.txt", TRAIN * 500)
    use_registry(entry(url=f"{base}/interrupt/toy/toy.txt", sha256=None, n=2000))
    with pytest.raises(DownloadError, match="was interrupted"):
        fetch("toy", retries=0, progress=False)
    assert cached_files(own_cache) == []


def test_unreachable_host_names_the_url_and_suggests_a_mirror(use_registry, closed_port, own_cache):
    url = f"http://127.0.0.1:{closed_port}/toy/toy.txt"
    use_registry(entry(url=url, sha256=None))
    with pytest.raises(DownloadError, match=rf"cannot reach {url} .*--mirror"):
        fetch("toy", retries=0, progress=False, timeout=5)
    assert cached_files(own_cache) == []


def test_missing_file_upstream(server, use_registry):
    base, _, _ = server
    use_registry(entry(url=f"{base}/nope.txt", sha256=None))
    with pytest.raises(DownloadError, match=rf"{base}/nope.txt: HTTP 404"):
        fetch("toy", retries=0, progress=False)


def test_wrong_row_count_is_not_cached(tmp_path, use_registry, own_cache):
    mirror = tmp_path / "mirror"
    data = put(mirror, "toy/toy.txt", TRAIN)
    use_registry(entry(url="http://127.0.0.1:9/t", sha256=sha(data), n=5))
    with pytest.raises(DataError, match="4 rows, but the registry declares n=5"):
        fetch("toy", mirror=mirror, progress=False)
    assert cached_files(own_cache) == []


def test_malformed_line_and_wrong_feature_count_reach_the_user(tmp_path, use_registry, own_cache):
    mirror = tmp_path / "mirror"
    bad = put(mirror, "toy/toy.txt", TRAIN + "+1 1:0.5 9:1\n")
    use_registry(entry(url="http://127.0.0.1:9/t", sha256=sha(bad), n=5))
    with pytest.raises(DataError, match=r"toy\.txt:5: feature index 9 exceeds the registry's d=3"):
        fetch("toy", mirror=mirror, progress=False)
    assert cached_files(own_cache) == []


def test_file_without_upstream_needs_a_mirror(use_registry):
    use_registry(entry(url=None, sha256=None, derived_from="converted from an .rda", mirror_sha256="2" * 64))
    with pytest.raises(DownloadError, match=r"no upstream URL \(converted from an \.rda\).*--mirror"):
        fetch("toy", progress=False)


# --- the command line -------------------------------------------------------------------------------------------------

def test_cli_fetch_and_datasets(tmp_path, use_registry):
    from lsokl.cli import app

    mirror = tmp_path / "mirror"
    data = put(mirror, "toy/toy.txt", TRAIN)
    use_registry(entry(url="http://127.0.0.1:9/t", sha256=sha(data)))
    runner = CliRunner(env={"COLUMNS": "200"})
    listed = runner.invoke(app, ["datasets"])
    assert listed.exit_code == 0 and "toy" in listed.output and "checkerboard" in listed.output
    ok = runner.invoke(app, ["fetch", "toy", "--mirror", str(mirror), "-q"])
    assert ok.exit_code == 0, ok.output
    assert "ok toy: train fetched" in ok.output
    assert "train" in runner.invoke(app, ["datasets", "--task", "binary"]).output
    bad = runner.invoke(app, ["fetch", "tyo"])
    assert bad.exit_code == 2 and "Did you mean 'toy'" in bad.output


def test_cli_help_texts():
    from lsokl.cli import app

    runner = CliRunner()
    top = runner.invoke(app, ["--help"])
    assert top.exit_code == 0 and "fetch" in top.output and "datasets" in top.output
    sub = runner.invoke(app, ["fetch", "--help"])
    assert sub.exit_code == 0
    for flag in ("--mirror", "--all", "--split", "--force", "--retries", "--timeout", "LSOKL_DATA_MIRROR"):
        assert flag in sub.output, flag
    assert "--task" in runner.invoke(app, ["datasets", "--help"]).output


def test_cache_write_is_all_or_nothing(tmp_path, own_cache, monkeypatch):
    import lsokl.data.cache as c

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(c.np, "save", boom)
    with pytest.raises(OSError):
        cache.write_split("x", "train", np.ones((2, 2)), np.ones(2), None, {"spec_hash": "h"})
    assert cached_files(own_cache) == [] and not cache.is_complete("x", "train", "h")
