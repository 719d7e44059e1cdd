"""Streaming fetch: parse LIBSVM and CSV text in chunks and write the cache incrementally as memory-mappable files.

Memory is bounded by the chunk (``CHUNK_BYTES`` of text, a few times that once parsed), not by the file, so
mnist8m (8.1M x 784, ~1.6e9 non-zeros) is parsed on a 24 GiB machine. The parsing itself is still the libraries':
each chunk of whole lines goes to scikit-learn's ``load_svmlight_file`` (with ``n_features`` fixed) or to pandas'
``read_csv``. What they do not offer, and this module adds: reading a compressed stream chunk by chunk (they only
take an offset into a plain file), appending to an ``.npy`` file whose final shape is only known at the end
(:class:`NpyAppender`), keeping float32 when every value round-trips exactly (``dtype: auto``), and a bound on
how many bytes a hash-less archive may expand to (:func:`decompressed_bound`).

Cache layout written here: dense ``X.npy`` (rows x d) or CSR ``X.data.npy`` / ``X.indices.npy`` (int32) /
``X.indptr.npy`` (int64), plus ``y.npy``; the data are float64 unless the registry says ``dtype: float32`` or
``dtype: auto`` and every value is a float32 exactly. Entries without ``dtype`` stay float64, so the arrays of the
datasets that reproduce the authors' runs are those of the in-memory reader, bit for bit.

Not streamed (read whole by :mod:`lsokl.data.formats`, as before): ``.mat``, idx, HDF5, CSV with categorical or
coded columns, row ranges or character repairs (they need the whole column first), dense storage without a declared
``d``, and a scaling that turns a CSR matrix dense.
"""
from __future__ import annotations

import errno
import io
import lzma
import os
import shutil
import zipfile
import zlib
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..errors import DataError
from . import formats

#: bytes of decompressed text handed to the parser at a time (monkeypatched small by the tests)
CHUNK_BYTES = 32 << 20
#: rows converted at a time when a scaling is applied to the cached arrays
SCALE_BLOCK_ROWS = 1 << 16
#: the most a file may expand to when the registry declares no n or d (``LSOKL_MAX_DECOMPRESSED`` overrides, bytes)
DEFAULT_DECOMPRESSED_CAP = 64 << 30
#: an upper bound on the text one value takes in any format read here ("1234567:-1.2345678901234567e-300 ")
BYTES_PER_VALUE = 40
BYTES_PER_ROW = 256  # label, newline, comments
MIN_BOUND = 16 << 20
DTYPES = ("float64", "float32", "auto")


#: without a declared n and d, an archive may expand to at most this many times its own size (text data
#: compresses 3-20x; a file expanding 100x more is a bomb or the wrong file)
MAX_RATIO = 100


def decompressed_bound(n: int | None, d: int | None, compressed: int | None = None) -> tuple[int, str]:
    """The most bytes a split's files may decompress to, and how that bound was derived (for the message).
    ``compressed``: the files' size on disk; without a declared n and d the bound is :data:`MAX_RATIO` times it
    (and at most :data:`DEFAULT_DECOMPRESSED_CAP`)."""
    env = os.environ.get("LSOKL_MAX_DECOMPRESSED")
    if env:
        return int(float(env)), "LSOKL_MAX_DECOMPRESSED"
    if n is None or d is None:
        if compressed is not None and MAX_RATIO * compressed < DEFAULT_DECOMPRESSED_CAP:
            bound = max(MIN_BOUND, MAX_RATIO * int(compressed))
            return bound, (f"{MAX_RATIO} times the files' size on disk ({compressed / 2**20:.1f} MiB; the registry "
                           "declares no n or no d, so the ratio bounds it)")
        return DEFAULT_DECOMPRESSED_CAP, (f"the default cap of {DEFAULT_DECOMPRESSED_CAP / 2**30:g} GiB "
                                          "(the registry declares no n or no d)")
    bound = max(MIN_BOUND, n * (d * BYTES_PER_VALUE + BYTES_PER_ROW))
    return bound, (f"the registry's n={n:,} x d={d:,} at {BYTES_PER_VALUE} bytes per value "
                   f"+ {BYTES_PER_ROW} per row")


class BoundedReader(io.RawIOBase):
    """A decompressing reader that refuses to produce more than ``limit`` bytes (a decompression bomb, or a
    registry entry pointing at the wrong file) and says why."""

    def __init__(self, raw, limit: int, why: str, path: Path, kind: str = "none"):
        self._raw, self._limit, self._why, self._path, self._kind = raw, limit, why, path, kind
        self.produced = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        buf = memoryview(buf)[:1 << 20]  # check the bound every MiB, whatever the caller asked for
        try:
            n = self._raw.readinto(buf) if hasattr(self._raw, "readinto") else _readinto(self._raw, buf)
        except (EOFError, zlib.error, lzma.LZMAError, zipfile.BadZipFile, OSError, *formats.PARALLEL_ERRORS) as exc:
            if self._kind == "none":
                raise
            raise DataError(f"{self._path}: corrupt or truncated {self._kind} archive "
                            f"({type(exc).__name__}: {exc})") from None
        self.produced += n
        if self.produced > self._limit:
            raise DataError(f"{self._path}: expands to more than {self._limit:,} bytes, the bound from {self._why}; "
                            "stopped decompressing (a decompression bomb or the wrong file?). Nothing was cached.")
        return n

    def close(self) -> None:
        try:
            self._raw.close()
        finally:
            super().close()


def _readinto(raw, buf) -> int:
    data = raw.read(len(buf))
    buf[:len(data)] = data
    return len(data)


#: left free on the disk when a file is decompressed to a temporary copy
DISK_MARGIN = 256 << 20


def disk_bound(limit: int, why: str, folder: Path) -> tuple[int, str]:
    """``limit`` lowered to the space free in ``folder`` (less :data:`DISK_MARGIN`) when that is smaller: a
    decompressed copy that cannot fit stops with a message naming the disk instead of filling it."""
    import shutil

    try:
        free = shutil.disk_usage(folder).free - DISK_MARGIN
    except OSError:
        return limit, why
    if free >= limit:
        return limit, why
    return max(free, 0), f"the free disk space in {folder} ({max(free, 0) / 2**20:,.0f} MiB after a 256 MiB margin)"


def open_text_stream(path: Path, limit: int, why: str, member: str | None = None):
    """A buffered binary stream of ``path``'s decompressed bytes (compression from the magic bytes), bounded."""
    kind = formats.detect_compression(path)
    if kind == "none":
        formats.check_plain(path)
        raw = open(path, "rb")
        limit = 1 << 62  # a plain file is as large as it is; the bound is on what an archive expands to
    elif kind == "Z":
        formats.refuse_lzw(path)
    elif kind == "zip":
        try:
            zf = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise DataError(f"{path}: corrupt or truncated zip archive ({type(exc).__name__}: {exc})") from None
        raw = zf.open(formats.zip_member(zf, path, member))
    else:
        raw = formats.open_archive(path, kind)
    return io.BufferedReader(BoundedReader(raw, limit, why, path, kind), buffer_size=1 << 20)


def line_chunks(stream, chunk_bytes: int | None = None):
    """(first line number, bytes) chunks of whole lines, about ``chunk_bytes`` each."""
    size = chunk_bytes or CHUNK_BYTES
    rest, lineno = b"", 1
    while True:
        block = stream.read(size)
        if not block:
            break
        block = rest + block
        cut = block.rfind(b"\n")
        if cut < 0:
            rest = block
            continue
        chunk, rest = block[:cut + 1], block[cut + 1:]
        yield lineno, chunk
        lineno += chunk.count(b"\n")
    if rest.strip():
        yield lineno, rest + b"\n"


# --- incremental .npy files -------------------------------------------------------------------------------------------

_HEADER_LEN = 128  # room for any 2-d shape: rewritten in place once the final row count is known


def _header(dtype: np.dtype, shape: tuple) -> bytes:
    d = {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False, "shape": tuple(shape)}
    text = repr(d).encode("latin1")
    pad = _HEADER_LEN - 10 - len(text) - 1
    if pad < 0:
        raise ValueError(f"shape {shape} does not fit the header")
    return b"\x93NUMPY\x01\x00" + (_HEADER_LEN - 10).to_bytes(2, "little") + text + b" " * pad + b"\n"


def _exact_in_float32(block: np.ndarray, step: int = 1 << 20) -> bool:
    """Whether every value of ``block`` is a float32 exactly (checked in slices: no full-size temporaries)."""
    flat = block.reshape(-1)
    for i in range(0, flat.size, step):
        part = flat[i:i + step]
        if not np.array_equal(part.astype(np.float32).astype(part.dtype), part):
            return False
    return True


class NpyAppender:
    """An ``.npy`` file written by appending row blocks; ``np.load(..., mmap_mode='r')`` reads it once closed.

    ``policy`` ``auto`` starts in float32 and switches the whole file to float64 (rewriting what was written) at
    the first block whose values are not all float32 exactly; ``float32`` casts; ``float64`` keeps."""

    def __init__(self, path: Path, row_shape: tuple = (), dtype=np.float64, policy: str | None = None):
        self.path, self.row_shape, self.policy = Path(path), tuple(row_shape), policy
        if policy is not None:
            dtype = np.float64 if policy == "float64" else np.float32
        self.dtype = np.dtype(dtype)
        self.rows = 0
        self._fh = open(self.path, "wb")
        self._fh.write(_header(self.dtype, (0, *self.row_shape)))

    def append(self, block: np.ndarray) -> None:
        block = np.asarray(block)
        if self.policy == "auto" and self.dtype == np.float32 and not _exact_in_float32(block):
            self._widen()
        self._fh.write(np.ascontiguousarray(block, dtype=self.dtype).data)
        self.rows += block.shape[0]

    def _widen(self) -> None:
        """float32 so far, float64 from now on: rewrite the rows written (exact, they round-tripped)."""
        self._fh.close()
        old = self.path.with_name(self.path.name + ".f32")
        os.replace(self.path, old)
        self._fh = open(self.path, "wb")
        self.dtype = np.dtype(np.float64)
        self._fh.write(_header(self.dtype, (0, *self.row_shape)))
        width = int(np.prod(self.row_shape)) if self.row_shape else 1
        step = max(1, (1 << 22) // width)
        with open(old, "rb") as src:
            src.seek(_HEADER_LEN)
            left = self.rows * width
            while left:
                k = min(left, step * width)
                part = np.frombuffer(src.read(4 * k), dtype=np.float32)
                self._fh.write(part.astype(np.float64).tobytes())
                left -= k
        old.unlink()

    def close(self) -> None:
        self._fh.seek(0)
        self._fh.write(_header(self.dtype, (self.rows, *self.row_shape)))
        self._fh.close()

    def abort(self) -> None:
        self._fh.close()


class CsrWriter:
    """CSR written by row blocks: ``X.data.npy`` (policy dtype), ``X.indices.npy`` int32, ``X.indptr.npy`` int64."""

    def __init__(self, folder: Path, d: int | None, policy: str):
        self.d_seen = 0
        self.index_dtype = np.int32 if (d or 0) < np.iinfo(np.int32).max else np.int64
        self.data = NpyAppender(folder / "X.data.npy", policy=policy)
        self.indices = NpyAppender(folder / "X.indices.npy", dtype=self.index_dtype)
        self.indptr = NpyAppender(folder / "X.indptr.npy", dtype=np.int64)
        self.indptr.append(np.zeros(1, dtype=np.int64))
        self.nnz = 0

    @property
    def rows(self) -> int:
        return self.indptr.rows - 1

    def append(self, X: sp.csr_matrix) -> None:
        self.data.append(X.data)
        self.indices.append(X.indices.astype(self.index_dtype, copy=False))
        self.indptr.append(X.indptr[1:].astype(np.int64) + self.nnz)
        self.nnz += int(X.nnz)
        self.d_seen = max(self.d_seen, X.shape[1])

    def close(self) -> None:
        for a in (self.data, self.indices, self.indptr):
            a.close()

    def abort(self) -> None:
        for a in (self.data, self.indices, self.indptr):
            a.abort()


class DenseWriter:
    def __init__(self, folder: Path, d: int, policy: str):
        self.array = NpyAppender(folder / "X.npy", (d,), policy=policy)
        self.d_seen = d

    @property
    def rows(self) -> int:
        return self.array.rows

    def append(self, X) -> None:
        if not sp.issparse(X):
            self.array.append(X)
            return
        step = max(1, (1 << 22) // max(1, X.shape[1]))  # densify 4M values (32 MB) at a time
        for i in range(0, X.shape[0], step):
            self.array.append(X[i:i + step].toarray())

    def close(self) -> None:
        self.array.close()

    def abort(self) -> None:
        self.array.abort()


# --- what streams -----------------------------------------------------------------------------------------------------

_CSV_WHOLE_FILE_OPTIONS = ("categorical", "codes", "rows", "delete_chars", "_categories")


def can_stream(fmt: str, opts: dict, storage: str, d: int | None) -> bool:
    if fmt not in ("libsvm", "csv"):
        return False
    if fmt == "csv" and any(opts.get(k) for k in _CSV_WHOLE_FILE_OPTIONS):
        return False
    return not (storage == "dense" and d is None)


def dense_is_refused(n: int | None, d: int | None) -> str | None:
    return formats.dense_refusal((n, d)) if n is not None and d is not None else None


# --- parsing chunks ---------------------------------------------------------------------------------------------------

#: a sparse LIBSVM file at least this large (on disk) is parsed by worker processes, chunk by chunk, in order
PARALLEL_PARSE_BYTES = 16 << 20


def parse_workers() -> int:
    """Processes that parse one file's chunks: ``LSOKL_PARSE_WORKERS``, else the CPUs this process may use."""
    return formats.usable_cpus("LSOKL_PARSE_WORKERS")


def _parse_libsvm_chunk(chunk: bytes, path: Path, d: int | None, lineno: int):
    """One chunk of sparse LIBSVM lines -> (CSR float64 with sorted indices, raw labels); a worker's task."""
    from sklearn.datasets import load_svmlight_file

    try:
        X, y = load_svmlight_file(io.BytesIO(chunk), n_features=d, dtype=np.float64, zero_based=False)
    except ValueError as exc:
        where = formats.find_libsvm_error_in(chunk.splitlines(keepends=True), path, d, lineno)
        raise DataError(where or f"{path}: not a valid LIBSVM file ({exc}) in lines from {lineno}") from None
    X = X.tocsr()
    X.sort_indices()
    return X, y


def _parsed_in_order(chunks, path: Path, d: int | None, workers: int):
    """(X, y) of each (lineno, chunk), parsed by ``workers`` processes (spawned: the decompressing threads make
    fork unsafe), at most 2 x workers chunks in flight so memory stays flat, yielded in the file's order."""
    import concurrent.futures as cf
    import multiprocessing as mp
    from collections import deque

    with cf.ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn")) as pool:
        pending: deque = deque()
        for lineno, chunk in chunks:
            pending.append(pool.submit(_parse_libsvm_chunk, chunk, path, d, lineno))
            if len(pending) >= 2 * workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def _libsvm_chunks(stream, path: Path, d: int | None, workers: int = 1):
    """(X chunk as CSR or dense float64, raw labels) per chunk of a LIBSVM (or label-first dense text) stream.
    ``workers`` > 1: sparse chunks are parsed by that many processes (:func:`_parsed_in_order`)."""
    dense_text = None
    rows = 0
    lines = line_chunks(stream)
    for lineno, chunk in lines:
        if dense_text is None:
            first = _first_data_line(chunk)
            if first is None:  # only comments and blank lines so far
                continue
            tokens = first.split()
            dense_text = len(tokens) > 1 and b":" not in tokens[1]
        if dense_text:
            X, y = _dense_text_chunk(chunk, path, d, lineno)
            rows += X.shape[0]
            yield X, y
            continue
        if workers > 1:  # this chunk and the rest of the file, in worker processes
            import itertools

            for X, y in _parsed_in_order(itertools.chain([(lineno, chunk)], lines), path, d, workers):
                formats.check_finite(X, path, rows)
                rows += X.shape[0]
                yield X, y
            break
        X, y = _parse_libsvm_chunk(chunk, path, d, lineno)
        formats.check_finite(X, path, rows)
        rows += X.shape[0]
        yield X, y
    if dense_text is None:
        raise DataError(f"{path}: no data lines")


def _first_data_line(chunk: bytes) -> bytes | None:
    for raw in chunk.splitlines():
        line = raw.split(b"#", 1)[0].strip()
        if line:
            return line
    return None


def _dense_text_chunk(chunk: bytes, path: Path, d: int | None, lineno: int):
    import pandas as pd

    try:
        df = pd.read_csv(io.BytesIO(chunk), sep=r"\s+", header=None, dtype=np.float64, engine="c", comment="#")
    except (ValueError, UnicodeDecodeError) as exc:
        where = _chunk_error_line(chunk, path, lineno, exc)
        raise DataError(where or f"{path}: lines from {lineno}: cannot parse as whitespace-separated numbers "
                        f"({str(exc).strip()})") from None
    return formats.label_and_rows(df.to_numpy(dtype=np.float64), path, lineno, d)


def _chunk_error_line(chunk: bytes, path: Path, first_line: int, exc: Exception) -> str | None:
    """'path:line: reason' for a chunk that pandas refused (line numbers of the whole file)."""
    import re

    for offset, raw in enumerate(chunk.splitlines()):
        for tok in raw.split(b"#", 1)[0].split():
            try:
                float(tok)
            except ValueError:
                return f"{path}:{first_line + offset}: {tok.decode('utf-8', 'replace')!r} is not a number"
    m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(exc))
    if m:
        return f"{path}:{first_line - 1 + int(m.group(2))}: {m.group(3)} fields, but the lines before have {m.group(1)}"
    return None


def _csv_chunks(stream, path: Path, d: int | None, opts: dict, storage: str):
    """(X, raw labels) per chunk of whole lines of a CSV stream; the first chunk's header names the columns of all."""
    import pandas as pd

    header = 0 if opts.get("header") else None
    first_row, names = 0, None
    for lineno, chunk in line_chunks(stream):
        try:
            df = pd.read_csv(io.BytesIO(chunk), sep=opts.get("sep", ","), engine="c",
                             header=header if names is None else None, names=names,
                             skipinitialspace=bool(opts.get("skipinitialspace", False)), comment=opts.get("comment"),
                             low_memory=False, compression=None)
        except pd.errors.EmptyDataError:
            continue
        except (ValueError, pd.errors.ParserError, UnicodeDecodeError) as exc:
            raise DataError(_csv_chunk_error(chunk, path, lineno, exc)) from None
        if names is None:
            names = list(df.columns)
        if df.shape[0] == 0:
            continue
        X, y, _ = formats.csv_frame(df, opts, path, storage, header, d, first_row)
        yield X, y
        first_row += df.shape[0]
    if first_row == 0:
        raise DataError(f"{path}: no data rows")


def _csv_chunk_error(chunk: bytes, path: Path, first_line: int, exc: Exception) -> str:
    import re

    if isinstance(exc, UnicodeDecodeError):
        for offset, raw in enumerate(chunk.splitlines()):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as bad:
                return f"{path}:{first_line + offset}: bytes that are not text ({bad.reason})"
        return f"{path}: bytes that are not text ({exc.reason}) in the lines from {first_line}"
    m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(exc))
    if m:
        return f"{path}:{first_line - 1 + int(m.group(2))}: {m.group(3)} fields, but the lines before have {m.group(1)}"
    return f"{path}: cannot parse as CSV ({str(exc).strip()}) in the lines from {first_line}"


# --- one split --------------------------------------------------------------------------------------------------------

def disk_full_message(folder: Path, exc: OSError) -> str | None:
    """One line for a full disk (ENOSPC/EDQUOT, or numpy's 'N requested and M written'), else None."""
    text = str(exc)
    full = getattr(exc, "errno", None) in (errno.ENOSPC, errno.EDQUOT) or ("requested and" in text
                                                                          and "written" in text)
    if not full:
        return None
    try:
        free = shutil.disk_usage(folder).free
        free_text = f"{free / 2**30:.2f} GiB free" if free >= 2**30 else f"{free / 2**20:.1f} MiB free"
    except OSError:
        free_text = "free space unknown"
    return (f"the disk holding {folder} is full ({free_text}): nothing was cached. Free some space, or point "
            "LSOKL_DATA_DIR at a larger disk, and fetch again")


def parse_split(fmt: str, paths: list[Path], folder: Path, *, d: int | None, n: int | None, opts: dict,
                storage: str, policy: str):
    """Parse ``paths`` chunk by chunk into ``folder`` (X files); returns (writer, raw labels, storage used)."""
    stored = "csr" if storage == "csr" or dense_is_refused(n, d) else "dense"
    writer = CsrWriter(folder, d, policy) if stored == "csr" else DenseWriter(folder, d, policy)
    # `rows: [start, stop]`: a row range of the file (e.g. the first 2M rows of mnist8m); reading stops at `stop`
    start, stop = opts.get("rows") or (0, None)
    on_disk = sum(Path(p).stat().st_size for p in paths)
    if stop is not None:
        limit, why = decompressed_bound(stop, d, on_disk)
    else:
        limit, why = decompressed_bound(n, d, on_disk)
    ys = []
    seen = 0
    try:
        produced = 0
        for path in paths:
            with open_text_stream(path, max(1, limit - produced), why, opts.get("member")) as stream:
                workers = parse_workers() if Path(path).stat().st_size >= PARALLEL_PARSE_BYTES else 1
                chunks = (_libsvm_chunks(stream, path, d, workers) if fmt == "libsvm"
                          else _csv_chunks(stream, path, d, opts, stored))
                for X, y in chunks:
                    if stored == "dense" and X.shape[1] != d:
                        raise DataError(f"{path}: {X.shape[1]} features per row, but the registry declares d={d}")
                    lo, hi = max(0, start - seen), X.shape[0] if stop is None else min(X.shape[0], stop - seen)
                    seen += X.shape[0]
                    if hi > lo:
                        writer.append(X[lo:hi] if (lo, hi) != (0, X.shape[0]) else X)
                        ys.append(np.asarray(y)[lo:hi])
                    if stop is not None and seen >= stop:
                        break
                produced += stream.raw.produced
            if stop is not None and seen >= stop:
                break
    except BaseException:
        writer.abort()
        raise
    if stop is not None and seen < stop:
        writer.abort()
        raise DataError(f"{paths[0]}: the split needs rows {start}..{stop} but the file has {seen}")
    writer.close()
    y = np.concatenate(ys) if ys else np.empty(0)
    return writer, y, stored
