"""Fetch leaves nothing behind when killed, and never accepts an unverified file without saying so."""
from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time

import pytest
import yaml
from typer.testing import CliRunner

from lsokl.data import load
from lsokl.data.fetch import UnverifiedFileWarning, fetch, remove_stale_temporaries

from test_data_fetch import TRAIN, entry, own_cache, put, server, use_registry  # noqa: F401 (fixtures)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- stale temporary folders ----------------------------------------------------------------------------------------

def test_folder_of_a_killed_fetch_is_removed_by_the_next_fetch(tmp_path, use_registry, own_cache):
    """A real fetch process is killed (SIGKILL) mid-download; the next fetch removes its temporary folder."""
    import http.server
    import threading

    payload = (TRAIN * 50_000).encode()  # ~1 MB

    class Slow(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload[: len(payload) // 2])
            self.wfile.flush()
            time.sleep(20)  # the client is killed while waiting for the rest

        def log_message(self, *a):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/toy.txt"
    reg = use_registry(entry(url=url, sha256=None, n=None))
    env = {**os.environ, "LSOKL_REGISTRY": str(reg), "LSOKL_DATA_DIR": str(own_cache)}
    proc = subprocess.Popen([sys.executable, "-c", "from lsokl.data.fetch import fetch; "
                             "fetch('toy', retries=0, progress=False, timeout=60)"], env=env)
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            left = [p for p in own_cache.glob(".fetch-toy-*") if any(f.stat().st_size > 0 for f in p.rglob("*")
                                                                      if f.is_file() and f.name != ".owner.lock")]
            if left:
                break
            time.sleep(0.1)
        assert left, "the fetch never started writing"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        httpd.shutdown()
        httpd.server_close()
    assert list(own_cache.glob(".fetch-toy-*")), "a killed fetch leaves its folder (what this test is about)"

    mirror = tmp_path / "mirror"
    data = put(mirror, "toy/toy.txt", TRAIN)
    use_registry(entry(url=url, sha256=sha(data)))
    res = fetch("toy", mirror=mirror, progress=False)
    assert not list(own_cache.glob(".fetch-*"))
    assert any("left in the cache by an interrupted fetch" in w for w in res.warnings), res.warnings

    dead = own_cache / ".fetch-toy-killed"  # another killed fetch; its owner's lock is gone
    dead.mkdir()
    (dead / ".owner.lock").write_text("")
    again = fetch("toy", mirror=mirror, progress=False)  # cached: nothing to download, still cleans up
    assert again.cached == ["train"] and not dead.exists()


def test_folders_in_use_or_recent_without_lock_are_kept(own_cache):
    from lsokl.data.fetch import UNLOCKED_STALE_AFTER_S, _hold_lock

    own_cache.mkdir(parents=True, exist_ok=True)
    live = own_cache / ".fetch-live-1"
    live.mkdir()
    held = _hold_lock(live)  # a concurrent fetch in progress
    dead = own_cache / ".fetch-dead-1"
    dead.mkdir()
    (dead / ".owner.lock").write_text("")  # its owner died: nobody holds the lock
    (dead / "0-big.bin").write_bytes(b"x" * 200_000)
    fresh = own_cache / ".fetch-fresh-1"  # no lock (older lsokl), recent: may still be running
    fresh.mkdir()
    old = own_cache / ".fetch-old-1"  # no lock, long untouched
    old.mkdir()
    then = time.time() - 2 * UNLOCKED_STALE_AFTER_S
    os.utime(old, (then, then))
    half_split = own_cache / "toy" / ".tmp-train-abc"
    half_split.mkdir(parents=True)
    os.utime(half_split, (then, then))
    try:
        removed = dict(remove_stale_temporaries(own_cache))
    finally:
        held.close()
    assert set(removed) == {dead, old, half_split}
    assert removed[dead] == 200_000
    assert live.exists() and fresh.exists()


# --- unverified files and --pin -----------------------------------------------------------------------------------

REGISTRY_WITH_COMMENTS = """\
# my own datasets (a comment that must survive pinning)
datasets:
- name: toy
  aliases: []
  task: binary
  source: libsvm
  description: test set   # inline comment
  format: libsvm
  d: 3
  classes: 2
  storage: dense
  preprocessing: {features: none, target: none}
  paper: none
  splits:
    train:
      n: 4
      files:
      - url: URL
        sha256: null   # not known yet
        mirror: toy/toy.txt
        compression: none
"""


def test_unverified_file_warns_with_the_hash_seen(server, use_registry):
    base, root, _ = server
    data = put(root, "toy/toy.txt", TRAIN)
    use_registry(entry(url=f"{base}/toy/toy.txt", sha256=None))
    with pytest.warns(UnverifiedFileWarning, match=rf"toy\.txt is not verified .* the sha256 seen is {sha(data)}"):
        res = fetch("toy", retries=0, progress=False)
    assert res.unverified == [{"split": "train", "index": 0, "mirror": "toy/toy.txt", "sha256": sha(data),
                               "via_mirror": False}]


def test_verified_file_does_not_warn(server, use_registry, recwarn):
    base, root, _ = server
    data = put(root, "toy/toy.txt", TRAIN)
    use_registry(entry(url=f"{base}/toy/toy.txt", sha256=sha(data)))
    res = fetch("toy", retries=0, progress=False)
    assert not res.warnings and not [w for w in recwarn if w.category is UnverifiedFileWarning]


def test_cli_pin_writes_the_hash_back_keeping_comments(server, tmp_path, monkeypatch):
    from lsokl.cli import app

    base, root, log = server
    data = put(root, "toy/toy.txt", TRAIN)
    reg = tmp_path / "my-datasets.yaml"
    reg.write_text(REGISTRY_WITH_COMMENTS.replace("URL", f"{base}/toy/toy.txt"))
    monkeypatch.setenv("LSOKL_REGISTRY", str(reg))
    runner = CliRunner(env={"COLUMNS": "300"})

    first = runner.invoke(app, ["fetch", "toy", "-q"])
    assert first.exit_code == 0, first.output
    assert f"the sha256 seen is {sha(data)}" in first.output and "--pin" in first.output

    pinned = runner.invoke(app, ["fetch", "toy", "-q", "--pin"])
    assert pinned.exit_code == 0, pinned.output
    assert f"pinned toy train toy/toy.txt: sha256: {sha(data)}" in pinned.output
    text = reg.read_text()
    assert f"sha256: {sha(data)}   # not known yet" in text
    assert text.startswith("# my own datasets") and "# inline comment" in text
    assert yaml.safe_load(text)["datasets"][0]["splits"]["train"]["files"][0]["sha256"] == sha(data)

    n_downloads = len(log)
    again = runner.invoke(app, ["fetch", "toy", "-q"])
    assert again.exit_code == 0 and "already cached" in again.output and "warning" not in again.output
    assert len(log) == n_downloads  # pinning re-keyed the cache instead of invalidating it
    assert load("toy").meta["files"][0]["verified"] is True

    put(root, "toy/toy.txt", TRAIN + "+1 1:1\n")  # upstream changes: now it is caught
    changed = runner.invoke(app, ["fetch", "toy", "-q", "--force"])
    assert changed.exit_code == 1 and "sha256 mismatch" in changed.output


def test_pin_from_a_mirror_adds_mirror_sha256(tmp_path, monkeypatch):
    from lsokl.data.pin import pin

    mirror = tmp_path / "mirror"
    data = put(mirror, "toy/toy.txt", TRAIN)
    reg = tmp_path / "my-datasets.yaml"
    reg.write_text(REGISTRY_WITH_COMMENTS.replace("URL", "http://127.0.0.1:9/toy.txt"))
    monkeypatch.setenv("LSOKL_REGISTRY", str(reg))
    with pytest.warns(UnverifiedFileWarning):
        fetch("toy", mirror=mirror, progress=False)
    where, done = pin("toy")
    assert where == reg and [(p.key, p.sha256) for p in done] == [("mirror_sha256", sha(data))]
    f = yaml.safe_load(reg.read_text())["datasets"][0]["splits"]["train"]["files"][0]
    assert f["sha256"] is None and f["mirror_sha256"] == sha(data)
    assert fetch("toy", mirror=mirror, progress=False).cached == ["train"]


def test_pin_refuses_the_packaged_registry(monkeypatch):
    from lsokl.data.pin import pin
    from lsokl.errors import DataError

    monkeypatch.delenv("LSOKL_REGISTRY", raising=False)
    with pytest.raises(DataError, match="--pin writes to a user registry"):
        pin("german")
