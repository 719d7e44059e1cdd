"""Streaming fetch (lsokl.data.streaming): small generated files served from 127.0.0.1, parsed in chunks of a few
hundred bytes, must give exactly the arrays the libraries give on the whole file; compressed inputs, dtypes, a
killed fetch, a decompression bomb and a full disk."""
from __future__ import annotations

import bz2
import errno
import gzip
import io
import lzma
import os
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from lsokl.data import cache, load, streaming
from lsokl.data.fetch import fetch
from lsokl.errors import DataError

from test_data_fetch import cached_files, entry, own_cache, put, server, use_registry  # noqa: F401 (fixtures)

pytestmark = pytest.mark.filterwarnings("ignore::lsokl.data.fetch.UnverifiedFileWarning")


def _memory_mapped(a) -> bool:
    import mmap

    while a is not None:
        if isinstance(a, (np.memmap, mmap.mmap)):
            return True
        a = getattr(a, "base", None)
    return False


COMPRESS = {"none": lambda b: b, "gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}


def libsvm_text(n: int, d: int, seed: int = 0, density: float = 0.3, integers: bool = False) -> bytes:
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(n):
        cols = np.flatnonzero(rng.random(d) < density) + 1
        vals = rng.integers(1, 255, cols.size) if integers else np.round(rng.normal(size=cols.size), 6)
        feats = " ".join(f"{c}:{v}" for c, v in zip(cols, vals))
        lines.append(f"{'+1' if i % 3 else '-1'} {feats}".rstrip())
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of 256 bytes, and a record of every chunk handed to a parser."""
    monkeypatch.setattr(streaming, "CHUNK_BYTES", 256)
    seen = []
    original = streaming.line_chunks

    def spy(stream, chunk_bytes=None):
        for lineno, chunk in original(stream, chunk_bytes):
            seen.append(len(chunk))
            yield lineno, chunk

    monkeypatch.setattr(streaming, "line_chunks", spy)
    return seen


@pytest.mark.parametrize("compression", ["none", "gz", "bz2", "xz"])
@pytest.mark.parametrize("storage", ["dense", "csr"])
def test_chunked_libsvm_equals_the_whole_file(server, use_registry, small_chunks, compression, storage):
    base, root, _ = server
    text = libsvm_text(300, 20)
    put(root, "toy/toy.data", COMPRESS[compression](text))
    use_registry(entry(url=f"{base}/toy/toy.data", sha256=None, mirror="toy/toy.data", n=300, d=20,
                       compression=compression) | {"storage": storage})
    fetch("toy", retries=0, progress=False)
    ds = load("toy")
    X_ref, y_ref = load_svmlight_file(io.BytesIO(text), n_features=20, zero_based=False)
    assert len(small_chunks) > 10  # many chunks were parsed ...
    longest_line = max(len(line) for line in text.splitlines()) + 1
    assert max(small_chunks) <= 256 + longest_line  # ... each bounded by the chunk size, not the file
    X = ds.X.toarray() if sp.issparse(ds.X) else np.asarray(ds.X)
    assert X.dtype == np.float64 and np.array_equal(X, X_ref.toarray())
    assert np.array_equal(ds.y, np.where(y_ref > 0, 1.0, -1.0))
    if storage == "csr":
        folder = cache.split_dir("toy", "train")
        assert np.load(folder / "X.indptr.npy").dtype == np.int64
        assert np.load(folder / "X.indices.npy").dtype == np.int32
        # the loaded matrix reads the memory maps, no copy
        assert _memory_mapped(ds.X.data) and _memory_mapped(ds.X.indices) and ds.X.indices.dtype == np.int32
    else:
        assert isinstance(ds.X, np.memmap) and ds.X.flags.c_contiguous


def test_chunked_dense_text_and_comments(server, use_registry, small_chunks):
    base, root, _ = server
    rng = np.random.default_rng(1)
    rows = rng.normal(size=(200, 4)).round(5)
    lines = ["# a comment line", ""] + [f"{1 if i % 2 else -1} " + " ".join(map(str, r)) for i, r in enumerate(rows)]
    put(root, "toy/toy.txt", ("\n".join(lines) + "\n").encode())
    use_registry(entry(url=f"{base}/toy/toy.txt", sha256=None, n=200, d=4))
    fetch("toy", retries=0, progress=False)
    assert len(small_chunks) > 10
    assert np.array_equal(np.asarray(load("toy").X), rows)


def test_chunked_csv_with_header_equals_pandas(server, use_registry, small_chunks):
    base, root, _ = server
    rng = np.random.default_rng(2)
    df = pd.DataFrame(rng.normal(size=(250, 3)).round(4), columns=["a", "b", "c"])
    df["label"] = rng.integers(0, 3, 250)
    text = df.to_csv(index=False).encode()
    put(root, "toy/toy.csv.gz", gzip.compress(text))
    e = entry(url=f"{base}/toy/toy.csv.gz", sha256=None, mirror="toy/toy.csv.gz", n=250, d=3, task="multiclass",
              compression="gz")
    e.update(format="csv", source="uci", classes=3, parse={"sep": ",", "header": True, "label": "label"})
    use_registry(e)
    fetch("toy", retries=0, progress=False)
    ds = load("toy")
    assert len(small_chunks) > 10
    ref = pd.read_csv(io.BytesIO(text))
    assert np.array_equal(np.asarray(ds.X), ref[["a", "b", "c"]].to_numpy())
    assert np.array_equal(ds.y, ref["label"].to_numpy())


def test_error_in_a_later_chunk_names_the_line_of_the_whole_file(tmp_path, use_registry, small_chunks):
    text = libsvm_text(100, 5).decode().splitlines()
    text[77] = "+1 1:0.5 x:2"
    mirror = tmp_path / "mirror"
    put(mirror, "toy/toy.txt", "\n".join(text) + "\n")
    use_registry(entry(url="http://127.0.0.1:9/x", sha256=None, n=100, d=5))
    with pytest.raises(DataError, match=r"toy\.txt:78: 'x:2' is not index:value"):
        fetch("toy", mirror=mirror, progress=False)


# --- precision -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("storage", ["dense", "csr"])
def test_dtype_float32_and_auto(tmp_path, use_registry, small_chunks, storage):
    mirror = tmp_path / "mirror"
    ints = libsvm_text(120, 6, integers=True)  # every value is a float32 exactly
    decimals = libsvm_text(120, 6, seed=3)  # 6-digit decimals are not
    # the inexact rows come after several exact chunks: auto must switch the rows already written to float64
    put(mirror, "toy/ints.txt", ints)
    put(mirror, "toy/mixed.txt", ints + decimals)
    X_ints = load_svmlight_file(io.BytesIO(ints), n_features=6, zero_based=False)[0].toarray()
    X_mixed = load_svmlight_file(io.BytesIO(ints + decimals), n_features=6, zero_based=False)[0].toarray()
    cases = [("ints", "toy/ints.txt", 120, "auto", np.float32, X_ints),
             ("mixed", "toy/mixed.txt", 240, "auto", np.float64, X_mixed),
             ("forced", "toy/mixed.txt", 240, "float32", np.float32, X_mixed.astype(np.float32)),
             ("default", "toy/ints.txt", 120, None, np.float64, X_ints)]
    entries = []
    for name, rel, n, dtype, _, _ in cases:
        e = entry(name, url=f"http://127.0.0.1:9/{name}", sha256=None, mirror=rel, n=n, d=6) | {"storage": storage}
        if dtype:
            e["dtype"] = dtype
        entries.append(e)
    use_registry(*entries)
    for name, _, _, dtype, expected_dtype, expected in cases:
        fetch(name, mirror=mirror, progress=False)
        ds = load(name)
        data = ds.X.data if sp.issparse(ds.X) else ds.X
        assert data.dtype == expected_dtype, name
        X = ds.X.toarray() if sp.issparse(ds.X) else np.asarray(ds.X)
        assert np.array_equal(X, expected), name
        assert ds.meta.get("dtype") == (np.dtype(expected_dtype).name if dtype else None)


def test_registry_refuses_an_unknown_dtype(use_registry):
    from lsokl.data import registry

    use_registry(entry(url="http://127.0.0.1:9/x", sha256=None) | {"dtype": "float16"})
    with pytest.raises(DataError, match=r"toy.*dtype must be one of"):
        registry.specs()


# --- a killed fetch, a bomb, a full disk --------------------------------------------------------------------------

def test_fetch_killed_while_writing_leaves_nothing_cached(tmp_path, use_registry, own_cache):
    mirror = tmp_path / "mirror"
    put(mirror, "toy/toy.txt", libsvm_text(400, 8))
    registry_file = use_registry(entry(url="http://127.0.0.1:9/x", sha256=None, n=400, d=8))
    script = textwrap.dedent(f"""
        import os, signal
        from lsokl.data import streaming
        streaming.CHUNK_BYTES = 300
        calls = []
        original = streaming.NpyAppender.append
        def append(self, block):
            original(self, block)
            calls.append(1)
            if len(calls) == 5:  # some chunks are on disk: die as `kill -9` would
                os.kill(os.getpid(), signal.SIGKILL)
        streaming.NpyAppender.append = append
        from lsokl.data.fetch import fetch
        fetch("toy", mirror={str(mirror)!r}, progress=False)
    """)
    env = {**os.environ, "LSOKL_REGISTRY": str(registry_file), "LSOKL_DATA_DIR": str(own_cache)}
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, timeout=120)
    assert proc.returncode == -9, proc.stderr.decode()
    left = [p for p in cached_files(own_cache) if p.suffix == ".npy"]
    assert left and all(".tmp-" in str(p) for p in left)  # partial arrays, only in a temporary folder
    assert not (cache.split_dir("toy", "train") / "meta.json").exists()
    with pytest.raises(DataError, match="not cached"):
        cache.read_split("toy", "train")
    res = fetch("toy", mirror=mirror, progress=False)  # the next fetch removes the leftovers and completes
    assert res.fetched == ["train"] and any("interrupted fetch" in w for w in res.warnings)
    assert not any(".tmp-" in str(p) for p in cached_files(own_cache))
    assert load("toy").X.shape == (400, 8)


@pytest.mark.parametrize("fmt", ["libsvm", "csv-categorical"])
def test_decompression_bomb_stops_at_the_bound_from_n_and_d(tmp_path, use_registry, own_cache, monkeypatch, fmt):
    """A hash-less entry declaring 4 x 3 whose gz expands to 64 MiB: stopped at the 16 MiB floor, with the reason,
    whether the format is streamed (libsvm) or decompressed to a file first (CSV with categorical columns)."""
    read = []
    real_gzip_open = gzip.open

    def counting_open(*a, **k):
        fh = real_gzip_open(*a, **k)
        real_read = fh.read

        def read_(size=-1):
            out = real_read(size)
            read.append(len(out))
            return out
        fh.read = read_
        return fh

    monkeypatch.setattr(gzip, "open", counting_open)
    mirror = tmp_path / "mirror"
    line = b"+1 1:0.5 2:1\n" if fmt == "libsvm" else b"a,0.5,1\n"
    put(mirror, "toy/toy.gz", gzip.compress(line * (64 * 2**20 // len(line)), compresslevel=1))
    e = entry(url="http://127.0.0.1:9/x", sha256=None, mirror="toy/toy.gz", compression="gz", n=4, d=3)
    if fmt != "libsvm":
        e.update(format="csv", source="uci", d=None, parse={"sep": ",", "header": False, "label": -1,
                                                           "categorical": [0]})
    use_registry(e)
    with pytest.raises(DataError, match=r"expands to more than 16,777,216 bytes, the bound from the registry's "
                                        r"n=4 x d=3.*decompression bomb") if fmt == "libsvm" else \
            pytest.raises(DataError, match=r"expands to more than .* bytes, the bound from the default cap"):
        if fmt != "libsvm":  # d is unknown before the one-hot encoding: the documented cap applies
            monkeypatch.setattr(streaming, "DEFAULT_DECOMPRESSED_CAP", 16 << 20)
        fetch("toy", mirror=mirror, progress=False)
    assert sum(read) <= (16 << 20) + (2 << 20)  # stopped at the bound, not after the 64 MiB
    assert cached_files(own_cache) == [] or not any(p.suffix == ".npy" for p in cached_files(own_cache))


def _disk_full(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


def test_full_disk_while_streaming_is_one_line_naming_the_folder(tmp_path, use_registry, own_cache, monkeypatch):
    from typer.testing import CliRunner

    from lsokl.cli import app

    mirror = tmp_path / "mirror"
    put(mirror, "toy/toy.txt", libsvm_text(50, 4))
    use_registry(entry(url="http://127.0.0.1:9/x", sha256=None, n=50, d=4))
    monkeypatch.setattr(streaming.NpyAppender, "append", _disk_full)
    with pytest.raises(DataError, match=rf"the disk holding {own_cache} is full \(.* free\): nothing was cached"):
        fetch("toy", mirror=mirror, progress=False)
    assert not any(p.suffix == ".npy" for p in cached_files(own_cache))
    with pytest.raises(DataError, match="is full"):
        load("toy", mirror=str(mirror))  # the auto-fetch of load() says the same
    res = CliRunner(env={"COLUMNS": "300"}).invoke(app, ["fetch", "toy", "--mirror", str(mirror), "-q"])
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1 and "is full" in res.output, res.output


def test_numpys_requested_and_written_says_the_disk_is_full(tmp_path, use_registry, own_cache, monkeypatch):
    """numpy reports a short write as 'N requested and M written' (no errno): the message says the disk is full."""
    e = entry(url="http://127.0.0.1:9/x", sha256=None, mirror="toy/toy.csv", n=2, d=None)
    e.update(format="csv", source="uci", parse={"sep": ",", "header": False, "label": -1, "categorical": [0]})
    mirror = tmp_path / "mirror"
    put(mirror, "toy/toy.csv", "a,1\nb,-1\n")
    use_registry(e)

    def short_write(*a, **k):
        raise OSError("451592 requested and 262128 written")

    monkeypatch.setattr(cache.np, "save", short_write)
    with pytest.raises(DataError, match=r"is full \(.* free\): nothing was cached"):
        fetch("toy", mirror=mirror, progress=False)
    assert cached_files(own_cache) == [] or not any(p.suffix == ".npy" for p in cached_files(own_cache))


# --- registry: the papers' large sets, other mirror names, row ranges, .Z -----------------------------------------

LARGE_SETS = ["covtype-binary", "covtype", "kddcup99-full", "mnist8m", "mnist2m", "census-income", "poker-full",
              "year", "acoustic", "slice", "casp", "shuttle", "shuttle-uci", "ijcnn1"]


def test_registry_knows_the_papers_large_sets_and_lists_them_as_not_cached(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from lsokl.cli import app
    from lsokl.data import registry

    monkeypatch.delenv("LSOKL_REGISTRY", raising=False)
    monkeypatch.setenv("LSOKL_DATA_DIR", str(tmp_path / "empty-cache"))
    sizes = {"kddcup99-full": 4898431, "mnist8m": 8100000, "mnist2m": 2000000, "poker-full": 1000000,
             "covtype": 581012, "year": 463715}
    for name in LARGE_SETS:
        spec = registry.get(name)
        assert all(f.url for s in spec.splits.values() for f in s.files), name
        if name in sizes:
            assert spec.splits["train"].n == sizes[name], name
    assert registry.get("kddcup99-full").splits["test"].n == 311029
    assert registry.get("mnist2m").parse_options("train")["rows"] == [0, 2000000]
    res = CliRunner(env={"COLUMNS": "400"}).invoke(app, ["datasets"])
    assert res.exit_code == 0, res.output
    rows = {line.split("│")[1].strip(): line for line in res.output.splitlines() if line.count("│") > 3}
    for name in LARGE_SETS:
        assert name in rows and rows[name].rstrip().rstrip("│").rstrip().endswith("no"), (name, rows.get(name))


@pytest.mark.parametrize("kind", ["folder", "http"])
def test_a_mirror_may_hold_a_file_under_another_common_name(tmp_path, server, use_registry, own_cache, kind):
    base, root, log = server
    mirror = root if kind == "http" else tmp_path / "mirror"
    put(mirror, "toy/toy.trn", libsvm_text(4, 3))  # plain, where the registry names toy.bz2
    e = entry(url="http://127.0.0.1:9/x", sha256=None, mirror="toy/toy.bz2", compression="bz2",
              mirror_alternatives=["toy/toy.tr", "toy/toy.trn"])
    use_registry(e)
    res = fetch("toy", mirror=base if kind == "http" else mirror, retries=0, progress=False)
    assert res.fetched == ["train"] and res.unverified[0]["split"] == "train"
    assert load("toy").X.shape == (4, 3)
    if kind == "http":
        assert log == ["/toy/toy.bz2", "/toy/toy.tr", "/toy/toy.trn"]


def test_a_missing_file_names_the_alternatives_it_tried(tmp_path, use_registry):
    from lsokl.data.fetch import MissingFileError

    (tmp_path / "mirror").mkdir()
    use_registry(entry(url="http://127.0.0.1:9/x", sha256=None, mirror="toy/toy.bz2",
                       mirror_alternatives=["toy/toy.trn"]))
    with pytest.raises(MissingFileError, match=r"expected at `toy/toy.bz2` or `toy/toy.trn`"):
        fetch("toy", mirror=tmp_path / "mirror", progress=False)


def test_row_range_of_a_libsvm_file_stops_reading_at_its_end(tmp_path, use_registry, small_chunks):
    text = libsvm_text(2000, 5)
    mirror = tmp_path / "mirror"
    put(mirror, "toy/toy.bz2", bz2.compress(text))
    e = entry(url="http://127.0.0.1:9/x", sha256=None, mirror="toy/toy.bz2", compression="bz2", n=30, d=5)
    e["splits"]["train"]["parse"] = {"rows": [10, 40]}
    e["storage"] = "csr"
    use_registry(e)
    fetch("toy", mirror=mirror, progress=False)
    X_ref, _ = load_svmlight_file(io.BytesIO(text), n_features=5, zero_based=False)
    assert np.array_equal(load("toy").X.toarray(), X_ref[10:40].toarray())
    assert sum(small_chunks) < len(text) // 4  # the rest of the file was never decompressed
    e["splits"]["train"]["parse"] = {"rows": [0, 5000]}
    e["splits"]["train"]["n"] = 5000
    use_registry(e)
    with pytest.raises(DataError, match=r"needs rows 0\.\.5000 but the file has 2000"):
        fetch("toy", mirror=mirror, progress=False, force=True)


def test_unix_compress_is_refused_with_advice(tmp_path, use_registry):
    mirror = tmp_path / "mirror"
    put(mirror, "toy/toy.trn.Z", b"\x1f\x9d\x90" + bytes(20))
    use_registry(entry(url="http://127.0.0.1:9/x", sha256=None, mirror="toy/toy.trn.Z", compression="Z"))
    with pytest.raises(DataError, match=r"Unix-compress \(\.Z\) archive.*uncompress"):
        fetch("toy", mirror=mirror, progress=False)


def test_zip_member_is_streamed_and_a_truncated_zip_is_named(tmp_path, use_registry, small_chunks):
    import zipfile

    text = libsvm_text(200, 4)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("other.txt", b"junk\n")
        zf.writestr("data.txt", text)
    mirror = tmp_path / "mirror"
    put(mirror, "toy/toy.zip", buf.getvalue())
    e = entry(url="http://127.0.0.1:9/x", sha256=None, mirror="toy/toy.zip", compression="zip", n=200, d=4,)
    e["parse"] = {"member": "data.txt"}
    use_registry(e)
    fetch("toy", mirror=mirror, progress=False)
    assert len(small_chunks) > 10
    assert np.array_equal(np.asarray(load("toy").X), load_svmlight_file(io.BytesIO(text), n_features=4,
                                                                         zero_based=False)[0].toarray())
    put(mirror, "toy/toy.zip", buf.getvalue()[: len(buf.getvalue()) // 2])
    with pytest.raises(DataError, match=r"toy\.zip: corrupt or truncated zip archive"):
        fetch("toy", mirror=mirror, progress=False, force=True)


@pytest.mark.parametrize("fmt", ["libsvm", "csv-categorical"])
def test_archive_without_a_declared_shape_is_bounded_by_its_compression_ratio(tmp_path, use_registry, own_cache,
                                                                             monkeypatch, fmt):
    """No n / d in the entry: a gz of ~0.1 MiB expanding to 64 MiB stops at MAX_RATIO x its size on disk (here
    a ratio of 50, floor 1 MiB), whether streamed (libsvm) or decompressed to a file (categorical CSV)."""
    monkeypatch.setattr(streaming, "MAX_RATIO", 50)
    monkeypatch.setattr(streaming, "MIN_BOUND", 1 << 20)
    mirror = tmp_path / "mirror"
    line = b"+1 1:0.5 2:1\n" if fmt == "libsvm" else b"a,0.5,1\n"
    packed = gzip.compress(line * (64 * 2**20 // len(line)), compresslevel=9)
    put(mirror, "toy/toy.gz", packed)
    e = entry(url="http://127.0.0.1:9/x", sha256=None, mirror="toy/toy.gz", compression="gz", n=None, d=None)
    if fmt != "libsvm":
        e.update(format="csv", source="uci", parse={"sep": ",", "header": False, "label": -1, "categorical": [0]})
    use_registry(e)
    bound = max(1 << 20, 50 * len(packed))
    assert bound < 64 * 2**20
    with pytest.raises(DataError, match=rf"expands to more than {bound:,} bytes, the bound from 50 times the files' "
                                        r"size on disk"):
        fetch("toy", mirror=mirror, progress=False)


def test_decompressed_copy_is_bounded_by_the_free_disk(tmp_path, monkeypatch):
    import shutil
    from collections import namedtuple

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage(10 << 30, 0, streaming.DISK_MARGIN + (5 << 20)))
    limit, why = streaming.disk_bound(1 << 30, "the registry's n x d", tmp_path)
    assert limit == 5 << 20 and why.startswith(f"the free disk space in {tmp_path} (5 MiB")
    assert streaming.disk_bound(1 << 20, "x", tmp_path) == (1 << 20, "x")  # enough room: unchanged


def test_block_parallel_bz2_gives_the_same_bytes(tmp_path, monkeypatch):
    """bz2 is decompressed on several threads where the fast-fetch extra is installed (concatenated streams
    too); the bytes are the standard library's, and a truncated archive is the same one-line error."""
    from lsokl.data import formats

    pytest.importorskip("indexed_bzip2", reason="the fast-fetch extra")
    rng = np.random.default_rng(0)
    text = "".join(f"{int(t):+d} 1:{a:.6f} 7:{b:.6f}\n" for t, a, b in
                   zip(np.sign(rng.normal(size=20000)), rng.random(20000), rng.random(20000))).encode()
    path = tmp_path / "x.bz2"
    path.write_bytes(bz2.compress(text[:300_000]) + bz2.compress(text[300_000:]))  # two streams
    monkeypatch.setenv("LSOKL_FETCH_THREADS", "2")
    with formats.open_archive(path, "bz2") as fh:
        assert type(fh).__module__.split(".")[0] == "indexed_bzip2"
        assert fh.read() == text
    monkeypatch.setenv("LSOKL_FETCH_THREADS", "1")  # one thread: the standard library
    with formats.open_archive(path, "bz2") as fh:
        assert type(fh).__module__.split(".")[0] == "bz2" and fh.read() == text
    monkeypatch.setenv("LSOKL_FETCH_THREADS", "2")
    broken = tmp_path / "broken.bz2"
    broken.write_bytes(path.read_bytes()[: len(bz2.compress(text[:300_000])) // 2])
    with pytest.raises(DataError, match=r"broken.bz2: corrupt or truncated bz2 archive"):
        with streaming.open_text_stream(broken, 1 << 30, "test") as fh:
            fh.read()


def test_chunks_parsed_by_worker_processes_give_the_same_cache(tmp_path, monkeypatch):
    """A sparse LIBSVM file above the size threshold is parsed by worker processes, chunk by chunk, in the file's
    order: the same rows, labels and values as one process (the workers run the one-process chunk parser,
    errors included). Spawning the two workers takes most of this test's time."""
    from lsokl.data import formats

    rng = np.random.default_rng(3)
    lines = [f"{int(rng.integers(1, 4))} " + " ".join(f"{j}:{rng.integers(1, 255)}" for j in
                                                      sorted(rng.choice(np.arange(1, 51), 8, replace=False)))
             for _ in range(3000)]
    path = tmp_path / "x.txt"
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(streaming, "CHUNK_BYTES", 8 << 10)  # ~10 chunks

    def parse(workers):
        with streaming.open_text_stream(path, 1 << 30, "test") as fh:
            parts = list(streaming._libsvm_chunks(fh, path, 50, workers))
        return sp.vstack([X for X, _ in parts]).tocsr(), np.concatenate([y for _, y in parts]), len(parts)

    X1, y1, n1 = parse(1)
    X2, y2, n2 = parse(2)
    assert n1 == n2 >= 8 and X1.shape == X2.shape == (3000, 50)
    assert (X1 != X2).nnz == 0 and np.array_equal(y1, y2)
    assert formats.fetch_threads() >= 1 and streaming.parse_workers() >= 1
