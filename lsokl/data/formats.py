"""Readers: one function per on-disk format, each turning plain (already decompressed) files into raw arrays.

A reader returns :class:`Parsed` with features (dense float64 or CSR) and labels as found in the file; label
normalisation and preprocessing happen later (labels.py, preprocess.py) so every format shares them. Errors name the
file and, where it makes sense, the line.
"""
from __future__ import annotations

import bz2
import errno
import gzip
import lzma
import re
import shutil
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..errors import DataError


@dataclass
class Parsed:
    X: np.ndarray | sp.csr_matrix
    y: np.ndarray  # raw labels: numbers or strings, as in the file
    permutations: np.ndarray | None = None
    info: dict = field(default_factory=dict)  # what a test split must re-use (one-hot categories)


# --- decompression ------------------------------------------------------------------------------------------------

_MAGIC = ((b"\x1f\x8b", "gz"), (b"BZh", "bz2"), (b"\xfd7zXZ\x00", "xz"), (b"PK\x03\x04", "zip"), (b"\x1f\x9d", "Z"))


def zip_member(zf, path, member: str | None) -> str:
    """The file of a zip archive to read: ``member`` (the registry's ``parse.member``), or the
    archive's only file; a clear error otherwise."""
    names = [n for n in zf.namelist() if not n.endswith("/")]
    if member is None:
        if len(names) != 1:
            raise DataError(f"{path}: zip archive holds {len(names)} files {names[:5]}; "
                            "the registry must name one with parse.member")
        return names[0]
    if member not in names:
        raise DataError(f"{path}: zip archive has no member {member!r} (it has {names[:5]})")
    return member


def refuse_lzw(path: Path) -> None:
    """Unix ``compress`` (.Z, LZW) has no reader in Python's standard library or the project's dependencies."""
    raise DataError(f"{path}: a Unix-compress (.Z) archive, which lsokl cannot read; run `uncompress` on it (or "
                    "`gzip -d`) and fetch the plain file from a mirror folder (`lsokl fetch NAME --mirror DIR`)")


def detect_compression(path: Path) -> str:
    """From the file's first bytes, not its name: a mirror may store a file compressed differently from upstream."""
    with open(path, "rb") as fh:
        head = fh.read(8)
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    return "none"


_NAME_SUFFIXES = {".gz": "gz", ".tgz": "gz", ".bz2": "bz2", ".xz": "xz", ".zip": "zip", ".z": "Z"}


def expected_compression(path: Path, declared: str | None = None) -> str:
    """What the registry (or else the file's name) says the file is; only used to word errors, never to decode."""
    if declared and declared != "none":
        return declared
    return _NAME_SUFFIXES.get(Path(path).suffix.lower(), "none")


def sniff_html(head: bytes) -> str | None:
    """A short description when ``head`` (a file's first bytes) is an HTML page, e.g. a server's error page
    answered with status 200: its <title>, or else its first line. None when it is not HTML."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n").decode("utf-8", "replace")
    lowered = text[:1024].lower()
    if not (lowered.startswith(("<!doctype html", "<html")) or "<html" in lowered or "<head" in lowered
            or "<body" in lowered):
        return None
    m = re.search(r"<title[^>]*>(.*?)</title>", text, re.I | re.S)
    what = " ".join((m.group(1) if m else text.splitlines()[0] if text else "").split())
    return (what[:77] + "...") if len(what) > 80 else what


def _looks_like_text(head: bytes) -> bool:
    if b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not just a multi-byte character cut at the end of the sample
            return False
    return True


def check_plain(path: Path, declared: str | None = None) -> None:
    """Refuse an uncompressed file that is an HTML page, or binary junk under an archive's name."""
    with open(path, "rb") as fh:
        head = fh.read(4096)
    expected = expected_compression(path, declared)
    what = f"a {expected} archive" if expected != "none" else "a data file"
    html = sniff_html(head)
    if html is not None:
        raise DataError(f"{path}: this is not {what} (it looks like an HTML page: {html!r}); the server "
                        "probably sent an error or login page instead of the file. Nothing was cached.")
    if expected != "none" and not _looks_like_text(head):
        raise DataError(f"{path}: this is not {what} (it starts with {head[:16]!r}, which is neither a known "
                        "archive nor text)")


def _copy_bounded(src, dst, limit: int | None, why: str, path: Path) -> None:
    done = 0
    while True:
        block = src.read(1 << 20)
        if not block:
            return
        done += len(block)
        if limit is not None and done > limit:
            raise DataError(f"{path}: expands to more than {limit:,} bytes, the bound from {why}; stopped "
                            "decompressing (a decompression bomb or the wrong file?). Nothing was cached.")
        dst.write(block)


def usable_cpus(env: str) -> int:
    """The number the environment variable ``env`` gives, else the CPUs this process may use."""
    import os

    value = os.environ.get(env)
    if value:
        return max(1, int(value))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def fetch_threads() -> int:
    """Threads that decompress one gz or bz2 file: ``LSOKL_FETCH_THREADS`` or the CPUs this process may use."""
    return usable_cpus("LSOKL_FETCH_THREADS")


#: what the block-parallel reader raises on a corrupt or truncated archive, besides the stdlib's errors
PARALLEL_ERRORS = (RuntimeError, ValueError)


def open_archive(path: Path, kind: str):
    """A binary reader of a gz / bz2 / xz file's decompressed bytes. bz2 (the format of the largest files, e.g.
    MNIST8M) is decompressed block-parallel on :func:`fetch_threads` threads by indexed_bzip2 (the `fast-fetch`
    extra) where installed and more than one thread is allowed; gz and xz, and bz2 without it, by the standard
    library on one core. The bytes are the same either way (tests/test_data_streaming.py). rapidgzip, the same
    authors' parallel gz reader, is not used: on a truncated gz it returned short data without an error."""
    threads = fetch_threads()
    if threads > 1 and kind == "bz2":
        try:
            import indexed_bzip2

            return indexed_bzip2.open(str(path), parallelization=threads)
        except ImportError:
            pass
    return {"gz": gzip.open, "bz2": bz2.open, "xz": lzma.open}[kind](path, "rb")


def decompress(path: Path, workdir: Path, member: str | None = None, declared: str | None = None,
               limit: int | None = None, why: str = "") -> Path:
    """A plain copy of ``path`` in ``workdir``, chosen by the file's magic bytes, never by its name.

    ``declared`` is the registry's ``compression``; it only words the error when the content is not what it
    says. A plain text file under an archive name (a mirror copy kept decompressed) is read as it is; an HTML page
    or binary junk where data was expected is refused with a message saying what it looks like. Readers always
    get a path whose name carries no compression suffix, so libraries that guess from the name (pandas,
    scikit-learn) cannot try to decompress it again. Truncated or corrupt archives raise :class:`DataError` naming
    the file; the partial output is removed. ``limit`` bounds the decompressed size (``why`` says where the
    bound comes from, see :func:`lsokl.data.streaming.decompressed_bound`).
    """
    kind = detect_compression(path)
    if kind == "none":
        check_plain(path, declared)
        if Path(path).suffix.lower() not in _NAME_SUFFIXES:
            return path
        # a plain file under an archive's name: give the readers a neutral name
        link = workdir / (Path(path).name + ".plain")
        link.unlink(missing_ok=True)
        try:
            link.symlink_to(Path(path).resolve())
        except OSError:
            shutil.copyfile(path, link)
        return link
    if kind == "Z":
        refuse_lzw(path)
    out = workdir / (path.name + ".plain")
    try:
        if kind == "zip":
            with zipfile.ZipFile(path) as zf:
                member = zip_member(zf, path, member)
                with zf.open(member) as src, open(out, "wb") as dst:
                    _copy_bounded(src, dst, limit, why, path)
        else:
            with open_archive(path, kind) as src, open(out, "wb") as dst:
                _copy_bounded(src, dst, limit, why, path)
    except (DataError, MemoryError):
        out.unlink(missing_ok=True)
        raise
    except OSError as exc:
        out.unlink(missing_ok=True)
        if getattr(exc, "errno", None) in (errno.ENOSPC, errno.EDQUOT):  # the disk is full, the archive is fine
            raise
        raise DataError(f"{path}: corrupt or truncated {kind} archive ({type(exc).__name__}: {exc})") from None
    except (OSError, EOFError, zipfile.BadZipFile, lzma.LZMAError, *PARALLEL_ERRORS) as exc:
        out.unlink(missing_ok=True)
        raise DataError(f"{path}: corrupt or truncated {kind} archive ({type(exc).__name__}: {exc})") from None
    return out


# --- checks shared by the readers ---------------------------------------------------------------------------------

def check_finite(X, path, first_row: int = 0) -> None:
    """NaN or inf in features would poison every kernel value; name the first offending row and column."""
    if sp.issparse(X):
        bad = ~np.isfinite(X.data)
        if bad.any():
            k = int(np.argmax(bad))
            row = int(np.searchsorted(X.indptr, k, side="right") - 1)
            col = int(X.indices[k])
            raise DataError(f"{path}: non-finite feature value {X.data[k]} at row {row + 1 + first_row}, "
                            f"feature {col + 1}")
        return
    bad = ~np.isfinite(X)
    if bad.any():
        row, col = (int(v) for v in np.argwhere(bad)[0])
        raise DataError(f"{path}: non-finite feature value {X[row, col]} at row {row + 1 + first_row}, "
                        f"feature {col + 1}")


def _check_columns(path, got: int, d: int | None) -> None:
    if d is not None and got != d:
        raise DataError(f"{path}: {got} features per row, but the registry declares d={d}")


# --- LIBSVM text ----------------------------------------------------------------------------------------------------

def _first_data_line(path: Path) -> str:
    with open(path, "rb") as fh:
        for raw in fh:
            line = raw.split(b"#", 1)[0].strip()
            if line:
                return line.decode("ascii", "replace")
    raise DataError(f"{path}: no data lines")


def find_libsvm_error(path: Path, d: int | None) -> str | None:
    """The first malformed line of a LIBSVM file as 'path:line: reason', or None. Only run after a parse failed,
    since scikit-learn's fast parser does not say where the problem is."""
    with open(path, "rb") as fh:
        return find_libsvm_error_in(fh, path, d, 1)


def find_libsvm_error_in(lines, path, d: int | None, first_line: int) -> str | None:
    """:func:`find_libsvm_error` over ``lines`` (bytes) numbered from ``first_line`` (a chunk of the file)."""
    for lineno, raw in enumerate(lines, start=first_line):
        text = raw.split(b"#", 1)[0].decode("utf-8", "replace").strip()
        if not text:
            continue
        tokens = text.split()
        shown = text if len(text) <= 80 else text[:77] + "..."
        try:
            float(tokens[0])
        except ValueError:
            return f"{path}:{lineno}: label {tokens[0]!r} is not a number: {shown!r}"
        last = 0
        for tok in tokens[1:]:
            idx, sep, val = tok.partition(":")
            try:
                i = int(idx)
                float(val)
            except ValueError:
                return f"{path}:{lineno}: {tok!r} is not index:value: {shown!r}"
            if not sep:
                return f"{path}:{lineno}: {tok!r} is not index:value: {shown!r}"
            if i < 1:
                return f"{path}:{lineno}: feature index {i} < 1 (LIBSVM indices are 1-based): {shown!r}"
            if i <= last:
                return f"{path}:{lineno}: feature indices must increase ({last} then {i}): {shown!r}"
            if d is not None and i > d:
                return (f"{path}:{lineno}: feature index {i} exceeds the registry's d={d} "
                        f"(wrong feature count): {shown!r}")
            last = i
    return None


def read_libsvm(paths: list[Path], d: int | None, opts: dict) -> Parsed:
    """LIBSVM/SVMlight text; also the 'dense' variant 'label v1 v2 ...' without k: prefixes (the cod-rna copy)."""
    from sklearn.datasets import load_svmlight_file

    Xs, ys = [], []
    for path in paths:
        tokens = _first_data_line(path).split()
        if len(tokens) > 1 and ":" not in tokens[1]:
            X, y = _read_dense_text(path, d)
        else:
            try:
                X, y = load_svmlight_file(str(path), n_features=d, dtype=np.float64, zero_based=False)
            except ValueError as exc:
                where = find_libsvm_error(path, d)
                raise DataError(where or f"{path}: not a valid LIBSVM file ({exc})") from None
            X = X.tocsr()
            check_finite(X, path)
        Xs.append(X)
        ys.append(y)
    if len(Xs) == 1:
        return Parsed(Xs[0], ys[0])
    X = sp.vstack(Xs, format="csr") if sp.issparse(Xs[0]) else np.vstack(Xs)
    return Parsed(X, np.concatenate(ys))


def _read_dense_text(path: Path, d: int | None):
    import pandas as pd

    try:
        df = pd.read_csv(path, sep=r"\s+", header=None, dtype=np.float64, engine="c", comment="#",
                         compression=None)
    except (ValueError, UnicodeDecodeError) as exc:
        bad = _first_bad_dense_line(path) or _pandas_error_line(path, exc)
        raise DataError(bad or f"{path}: cannot parse as whitespace-separated numbers ({exc})") from None
    return label_and_rows(df.to_numpy(dtype=np.float64), path, 1, d)


def label_and_rows(values: np.ndarray, path, first_line: int, d: int | None):
    """(X, y) of parsed whitespace-separated lines ``label x_1 ... x_d`` whose first line is line
    ``first_line`` of the file: X C-contiguous, checked for ragged rows (pandas fills the short
    ones with NaN), the declared width ``d`` and finite values."""
    if values.shape[1] < 2:
        raise DataError(f"{path}: expected a label and features per line, found {values.shape[1]} column(s)")
    X = np.ascontiguousarray(values[:, 1:])
    if np.isnan(X).any():
        row = int(np.argwhere(np.isnan(X))[0][0])
        raise DataError(f"{path}:{first_line + row}: missing or non-finite value (rows must all have "
                        f"{X.shape[1]} values)")
    _check_columns(path, X.shape[1], d)
    check_finite(X, path, first_line - 1)
    return X, values[:, 0].copy()


def _pandas_error_line(path: Path, exc: Exception) -> str | None:
    """'path:line: reason' from a pandas tokenizer error ("Expected 3 fields in line 7, saw 4") or a decoding
    error (the line found by counting newlines before the bad byte)."""
    if isinstance(exc, UnicodeDecodeError):
        with open(path, "rb") as fh:
            data = fh.read()
        bad = data.find(exc.object[exc.start:exc.end]) if exc.object else -1
        if bad >= 0:
            lineno = data.count(b"\n", 0, bad) + 1
            return f"{path}:{lineno}: bytes that are not text ({exc.reason})"
        return f"{path}: bytes that are not text ({exc.reason})"
    m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(exc))
    if m:
        return f"{path}:{m.group(2)}: {m.group(3)} fields, but the lines before have {m.group(1)}"
    return None


def _first_bad_dense_line(path: Path) -> str | None:
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            for tok in raw.split(b"#", 1)[0].split():
                try:
                    float(tok)
                except ValueError:
                    return f"{path}:{lineno}: {tok.decode('utf-8', 'replace')!r} is not a number"
    return None


# --- the LSOKL authors' .mat files --------------------------------------------------------------------------------

def read_mat(paths: list[Path], d: int | None, opts: dict) -> Parsed:
    """``data`` (label first) + ``ID_all``/``ID_list`` (runs x n, 1-based), or ``X`` (maybe sparse) + ``y``."""
    import scipy.io

    (path,) = paths
    try:
        # mat_dtype=True: the files store doubles compressed as int16/uint8; without it german loads as int16 and
        # X*X overflows.
        m = scipy.io.loadmat(path, mat_dtype=True)
    except Exception as exc:  # scipy raises ValueError, TypeError, zlib.error, ... on a damaged file
        raise DataError(f"{path}: cannot read as a MATLAB .mat file ({type(exc).__name__}: {exc})") from None
    keys = sorted(k for k in m if not k.startswith("__"))
    if "data" in m:
        data = np.asarray(m["data"], dtype=np.float64)
        if data.ndim != 2 or data.shape[1] < 2:
            raise DataError(f"{path}: `data` must be n x (1 + d), got shape {data.shape}")
        X, y = np.ascontiguousarray(data[:, 1:]), data[:, 0].copy()
    elif "X" in m and "y" in m:
        X = m["X"]
        X = sp.csr_matrix(X, dtype=np.float64) if sp.issparse(X) else np.ascontiguousarray(X, dtype=np.float64)
        y = np.asarray(m["y"], dtype=np.float64).reshape(-1)
    else:
        raise DataError(f"{path}: expected keys `data` (label first) or `X` and `y`; found {keys}")
    if X.shape[0] != y.shape[0]:
        raise DataError(f"{path}: {X.shape[0]} feature rows but {y.shape[0]} labels")
    _check_columns(path, X.shape[1], d)
    check_finite(X, path)
    perms = None
    key = "ID_all" if "ID_all" in m else ("ID_list" if "ID_list" in m else None)
    if key is not None:
        raw = np.asarray(m[key], dtype=np.float64)
        n = X.shape[0]
        if raw.ndim != 2 or raw.shape[1] != n or raw.min() < 1 or raw.max() > n or np.any(raw != np.round(raw)):
            raise DataError(f"{path}: `{key}` must be runs x {n} 1-based row indices; got shape {raw.shape}")
        perms = np.ascontiguousarray(raw.astype(np.int64) - 1)  # MATLAB is 1-based
    return Parsed(X, y, perms, {"permutation_key": key} if key else {})


# --- MNIST idx ------------------------------------------------------------------------------------------------------

def _read_idx(path: Path) -> np.ndarray:
    raw = path.read_bytes()
    if len(raw) < 8:
        raise DataError(f"{path}: too short for an idx file")
    magic = int.from_bytes(raw[0:4], "big")
    if magic >> 8 != 0x08:  # unsigned bytes
        raise DataError(f"{path}: not an unsigned-byte idx file (magic {magic:#x})")
    ndim = magic & 0xFF
    dims = [int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim)]
    offset = 4 + 4 * ndim
    expected = int(np.prod(dims))
    if len(raw) - offset != expected:
        raise DataError(f"{path}: idx header says {dims} = {expected} bytes of data, file has {len(raw) - offset}")
    return np.frombuffer(raw, dtype=np.uint8, offset=offset).reshape(dims)


def read_idx(paths: list[Path], d: int | None, opts: dict) -> Parsed:
    """Two idx files, images (n x rows x cols) and labels (n), in either order."""
    arrays = [_read_idx(p) for p in paths]
    images = [a for a in arrays if a.ndim == 3]
    labels = [a for a in arrays if a.ndim == 1]
    if len(images) != 1 or len(labels) != 1:
        raise DataError(f"{paths}: expected one idx image file and one idx label file")
    X = np.ascontiguousarray(images[0].reshape(images[0].shape[0], -1), dtype=np.float64)
    y = labels[0].astype(np.int64)
    if X.shape[0] != y.shape[0]:
        raise DataError(f"{paths}: {X.shape[0]} images but {y.shape[0]} labels")
    _check_columns(paths[0], X.shape[1], d)
    return Parsed(X, y)


# --- HDF5 (the USPS copy) -------------------------------------------------------------------------------------------

def read_hdf5(paths: list[Path], d: int | None, opts: dict) -> Parsed:
    import h5py

    (path,) = paths
    group = opts.get("group", "train")
    data_key, target_key = opts.get("data", "data"), opts.get("target", "target")
    try:
        with h5py.File(path, "r") as f:
            if group not in f:
                raise DataError(f"{path}: no HDF5 group {group!r} (has {sorted(f)})")
            X = np.ascontiguousarray(f[group][data_key][...], dtype=np.float64)
            y = np.asarray(f[group][target_key][...]).reshape(-1)
    except DataError:
        raise
    except (OSError, KeyError) as exc:
        raise DataError(f"{path}: cannot read HDF5 {group}/{data_key}, {group}/{target_key} ({exc})") from None
    X = X.reshape(X.shape[0], -1)
    _check_columns(path, X.shape[1], d)
    check_finite(X, path)
    return Parsed(X, y)


# --- CSV / UCI text -------------------------------------------------------------------------------------------------

def _column(df, key, path):
    """A column by name, or by position (negative counts from the end)."""
    if isinstance(key, str):
        if key not in df.columns:
            raise DataError(f"{path}: no column {key!r} (columns: {list(df.columns)[:12]}...)")
        return key
    try:
        return df.columns[key]
    except IndexError:
        raise DataError(f"{path}: no column {key} (the file has {df.shape[1]})") from None


def read_csv(paths: list[Path], d: int | None, opts: dict, storage: str = "dense") -> Parsed:
    """Delimited text with a label column; text columns can be coded (``codes``) or one-hot encoded
    (``categorical``: list of columns, or ``auto`` for every non-numeric one) with categories re-usable by a test
    split (``_categories``). Several files are concatenated (same layout); ``rows: [start, stop]`` keeps that
    row range (0-based, stop excluded) of the data rows."""
    import pandas as pd

    header = 0 if opts.get("header") else None
    frames = []
    for path in paths:
        source = path
        if opts.get("delete_chars"):
            # a registry-declared repair of stray characters inside fields (see the entry's comment)
            import io

            text = path.read_text(errors="replace")
            for ch in opts["delete_chars"]:
                text = text.replace(ch, "")
            source = io.StringIO(text)
        try:
            frames.append(pd.read_csv(source, sep=opts.get("sep", ","), header=header, engine="c",
                                      skipinitialspace=bool(opts.get("skipinitialspace", False)),
                                      comment=opts.get("comment"), low_memory=False, compression=None))
        except (ValueError, pd.errors.ParserError, UnicodeDecodeError) as exc:
            raise DataError(_pandas_error_line(path, exc) or f"{path}: cannot parse as CSV ({str(exc).strip()})") \
                from None
    where = paths[0] if len(paths) == 1 else f"{paths[0]} (+{len(paths) - 1} more)"
    df = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    if opts.get("rows") is not None:
        # a split defined as a row range of one file (e.g. UCI letter: first 16000 train, last 4000 test)
        start, stop = opts["rows"]
        if stop > df.shape[0]:
            raise DataError(f"{where}: the split needs rows {start}..{stop} but the file has {df.shape[0]}")
        df = df.iloc[start:stop].reset_index(drop=True)
    if df.shape[0] == 0:
        raise DataError(f"{where}: no data rows")
    X, y, categories = csv_frame(df, opts, where, storage, header, d)
    return Parsed(X, y, info={"categories": categories} if categories else {})


def csv_frame(df, opts: dict, where, storage: str, header, d: int | None, first_row: int = 0):
    """(X, y, one-hot categories) of a data frame read from a CSV file; ``first_row`` numbers the rows of a
    chunk (the streaming reader) in error messages."""
    import pandas as pd

    label = _column(df, opts.get("label", -1), where)
    drop = [_column(df, c, where) for c in opts.get("drop", [])]
    y = df[label].to_numpy()
    if y.dtype == object:
        y = np.array([str(v).strip() for v in y], dtype=object)
    features = [c for c in df.columns if c != label and c not in drop]

    codes = {_column(df, k, where): v for k, v in (opts.get("codes") or {}).items()}
    cat_opt = opts.get("categorical") or []
    if cat_opt == "auto":
        categorical = [c for c in features if df[c].dtype == object and c not in codes]
    else:
        categorical = [_column(df, c, where) for c in cat_opt]
    known = opts.get("_categories") or {}
    header_lines = (1 if header == 0 else 0) + first_row

    blocks, categories = [], {}
    for c in features:
        col = df[c]
        if c in categorical:
            values = col.astype(str).str.strip()
            cats = known.get(str(c)) or sorted(values.unique().tolist())
            categories[str(c)] = cats
            codes_ = pd.Index(cats).get_indexer(values)  # -1 for a category the train split did not have
            blocks.append(("onehot", np.asarray(codes_, dtype=np.int64), len(cats)))
            continue
        if c in codes:
            mapping = codes[c]
            mapped = col.astype(str).str.strip().map(mapping)
            if mapped.isna().any():
                row = int(np.flatnonzero(mapped.isna().to_numpy())[0])
                raise DataError(f"{where}: row {row + 1 + header_lines}, column {c!r}: value {col.iloc[row]!r} "
                                f"is not one of {sorted(mapping)}")
            col = mapped
        num = pd.to_numeric(col, errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isfinite(num)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise DataError(f"{where}: row {row + 1 + header_lines}, column {c!r}: value {col.iloc[row]!r} is not "
                            "a finite number (declare the column categorical or drop it in datasets.yaml)")
        blocks.append(("num", num, 1))

    X = _assemble(blocks, df.shape[0], storage)
    _check_columns(where, X.shape[1], d)
    return X, y, categories


def _assemble(blocks, n: int, storage: str):
    """Numeric columns and one-hot blocks, in column order, as dense or CSR without a dense intermediate."""
    width = sum(w for _, _, w in blocks)
    if storage == "csr":
        parts = []
        for kind, values, w in blocks:
            if kind == "num":
                parts.append(sp.csr_matrix(values.reshape(-1, 1)))
            else:
                rows = np.flatnonzero(values >= 0)  # unseen categories (code -1) encode as all zeros
                parts.append(sp.csr_matrix((np.ones(rows.size), (rows, values[rows])), shape=(n, w)))
        return sp.hstack(parts, format="csr", dtype=np.float64) if parts else sp.csr_matrix((n, 0))
    X = np.zeros((n, width), dtype=np.float64)
    j = 0
    for kind, values, w in blocks:
        if kind == "num":
            X[:, j] = values
        else:
            rows = np.flatnonzero(values >= 0)
            X[rows, j + values[rows]] = 1.0
        j += w
    return X


#: A sparse file is kept sparse, whatever the registry's ``storage: dense`` says, when its dense copy would be wider
#: than this many features or larger than this many bytes: a stray huge feature index (or a wrong declared ``d``)
#: must not become a 6 x 999,999,999 dense matrix in the cache.
DENSE_MAX_FEATURES = 1 << 17
DENSE_MAX_BYTES = 8 * 2**30


def dense_refusal(shape) -> str | None:
    """Why a matrix of ``shape`` is not stored dense (None when it may be)."""
    n, d = int(shape[0]), int(shape[1])
    if d > DENSE_MAX_FEATURES or 8.0 * n * d > DENSE_MAX_BYTES:
        return (f"{n:,} x {d:,} features would take {8.0 * n * d / 2**30:,.1f} GiB dense (limits: "
                f"{DENSE_MAX_FEATURES:,} features, {DENSE_MAX_BYTES / 2**30:g} GiB), so it is stored sparse (CSR) "
                "although the registry says dense; check the registry's d and the file's feature indices")
    return None


READERS = {"libsvm": read_libsvm, "mat": read_mat, "idx": read_idx, "hdf5": read_hdf5, "csv": read_csv}


def read(fmt: str, paths: list[Path], d: int | None, opts: dict, storage: str) -> Parsed:
    """Parse ``paths`` (decompressed) with the reader for ``fmt`` and convert to the declared storage."""
    if fmt == "csv":
        parsed = read_csv(paths, d, opts, storage)
    else:
        parsed = READERS[fmt](paths, d, opts)
    X = parsed.X
    too_wide = dense_refusal(X.shape) if storage != "csr" and sp.issparse(X) else None
    if too_wide:
        parsed.info["storage_note"] = too_wide
    if storage == "csr" or too_wide:
        X = sp.csr_matrix(X, dtype=np.float64)
        X.sort_indices()
    elif sp.issparse(X):
        X = np.ascontiguousarray(X.toarray(), dtype=np.float64)
    else:
        X = np.ascontiguousarray(X, dtype=np.float64)
    parsed.X = X
    return parsed
