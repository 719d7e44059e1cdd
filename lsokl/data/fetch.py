"""``fetch(name)``: get a registered dataset's files (upstream or a mirror), verify, parse, preprocess, cache.

Nothing unverified reaches the cache: downloads land in a temporary folder (pooch writes to a temporary file and
moves it only after the hash check), the split is parsed into a temporary folder next to its final place
(cache.begin_split; text formats chunk by chunk, lsokl.data.streaming) and renamed into the cache only when
complete and checked (cache.commit_split).
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import numpy as np
import scipy.sparse as sp

from ..errors import DataError, DownloadError
from . import cache, formats, labels, registry, streaming
from .preprocess import apply_scale, apply_scale_target, fit_scale
from .registry import DatasetSpec, FileSpec

MIRROR_ENV = "LSOKL_DATA_MIRROR"
DEFAULT_RETRIES = 3
DEFAULT_TIMEOUT = 60.0


class MissingFileError(DownloadError):
    """The file is not at the mirror or URL (as opposed to a network failure or a bad file)."""


@dataclass
class FetchResult:
    name: str
    fetched: list[str] = field(default_factory=list)  # splits parsed and cached by this call
    cached: list[str] = field(default_factory=list)  # splits already complete in the cache
    skipped: dict[str, str] = field(default_factory=dict)  # optional splits not available: split -> reason
    warnings: list[str] = field(default_factory=list)  # unverified files (sha256 null), stale folders removed
    unverified: list[dict] = field(default_factory=list)  # {split, index, mirror, sha256, via_mirror}


class UnverifiedFileWarning(UserWarning):
    """A registry file without a hash (``sha256: null``) was accepted as downloaded; the hash seen is in the
    message, and ``lsokl fetch NAME --pin`` records it."""


# --- leftovers of interrupted fetches -------------------------------------------------------------------------------

LOCK_NAME = ".owner.lock"
#: a temporary folder without a lock (written by an older lsokl, or killed before locking) counts as stale
#: after this long; one with a lock is stale as soon as no process holds the lock
UNLOCKED_STALE_AFTER_S = 3600.0


def _hold_lock(folder: Path):
    """An open file holding an exclusive lock that marks ``folder`` as in use (released when the process dies)."""
    fh = open(folder / LOCK_NAME, "w")
    try:
        import fcntl

        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except (ImportError, OSError):
        pass  # no flock here: age decides instead
    return fh


def _in_use(folder: Path) -> bool:
    lock = folder / LOCK_NAME
    if not lock.exists():
        try:
            age = time.time() - folder.stat().st_mtime
        except OSError:
            return True
        return age < UNLOCKED_STALE_AFTER_S
    try:
        import fcntl
    except ImportError:
        return time.time() - lock.stat().st_mtime < UNLOCKED_STALE_AFTER_S
    try:
        with open(lock, "a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(fh, fcntl.LOCK_UN)
    except OSError:
        return True  # a live fetch holds it
    return False


def _size(folder: Path) -> int:
    total = 0
    for p in folder.rglob("*"):
        try:
            if p.is_file() and not p.is_symlink():
                total += p.stat().st_size
        except OSError:
            pass
    return total


def remove_stale_temporaries(root: Path | None = None) -> list[tuple[Path, int]]:
    """Remove what interrupted fetches left in the cache: ``.fetch-*`` download folders (a killed ``lsokl fetch``
    of kddcup99 leaves 72 MB) and half-written ``<name>/.tmp-*`` / ``.old-*`` split folders. A folder still used by
    a running fetch (its lock is held) is kept. Returns (folder, bytes freed) for each one removed."""
    root = cache.root() if root is None else Path(root)
    if not root.is_dir():
        return []
    candidates = [p for p in root.glob(".fetch-*") if p.is_dir()]
    candidates += [p for p in root.glob("*/.tmp-*") if p.is_dir()]
    candidates += [p for p in root.glob("*/.old-*") if p.is_dir()]
    removed = []
    for folder in candidates:
        if _in_use(folder):
            continue
        size = _size(folder)
        shutil.rmtree(folder, ignore_errors=True)
        if not folder.exists():
            removed.append((folder, size))
    return removed


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n / 1e3:.1f} kB"


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


#: ``mirror=NO_MIRROR``: the upstream hosts, whatever the environment or the settings file say
NO_MIRROR = ""


def mirror_setting(mirror: str | os.PathLike | None) -> str | None:
    if mirror is None:  # $LSOKL_DATA_MIRROR, else the persistent `lsokl config mirror` setting
        from ..packaged import setting

        mirror = setting("mirror")
    if mirror is not None and str(mirror) == NO_MIRROR:
        return None
    return str(mirror) if mirror is not None else None


def upstream_hint(name: str) -> str:
    """How to get a file the mirror lacks from its upstream host instead."""
    return (f"`lsokl fetch {name} --no-mirror` downloads it from its upstream URL instead "
            "(`lsokl config mirror --unset` removes a mirror setting; LSOKL_DATA_MIRROR overrides it)")


def _is_http(location: str) -> bool:
    return location.startswith(("http://", "https://"))


# --- getting one file ---------------------------------------------------------------------------------------------

class _RichBar:
    """The progress-bar protocol pooch expects (total, update, reset, close), drawn with rich (no tqdm needed)."""

    def __init__(self, label: str):
        from rich.progress import BarColumn, DownloadColumn, Progress, TransferSpeedColumn

        self._progress = Progress("[progress.description]{task.description}", BarColumn(), DownloadColumn(),
                                  TransferSpeedColumn(), transient=False)
        self._label = label
        self._task = None
        self.total = 0

    def update(self, n: int) -> None:
        if self._task is None:
            self._progress.start()
            self._task = self._progress.add_task(self._label, total=self.total or None)
        self._progress.update(self._task, advance=n)

    def reset(self) -> None:
        if self._task is not None:
            self._progress.reset(self._task, total=self.total or None)

    def close(self) -> None:
        if self._task is not None:
            self._progress.stop()


def _download(url: str, known: str | None, workdir: Path, fname: str, *, retries: int, timeout: float,
              progress: bool, name: str) -> Path:
    import pooch
    import requests

    # pooch's INFO lines advise calling pooch.retrieve with the hash; lsokl records unknown hashes in meta.json
    pooch.get_logger().setLevel("WARNING")
    store = pooch.create(path=workdir, base_url="", registry={fname: f"sha256:{known}" if known else None},
                         urls={fname: url}, retry_if_failed=retries)
    label = f"{name}: {url.rsplit('/', 1)[-1]}"
    if progress:
        import sys

        from ..progress import ByteProgress

        # a redrawn bar on a terminal; whole lines every few seconds in a log (CI, nohup, a pipe)
        bar = _RichBar(label) if sys.stderr.isatty() else ByteProgress(label)
    else:
        bar = False
    downloader = pooch.HTTPDownloader(progressbar=bar, timeout=timeout)
    hint = (f"check the network, or fetch from a mirror: `lsokl fetch {name} --mirror URL_OR_DIR` "
            f"(or set {MIRROR_ENV})")
    try:
        return Path(store.fetch(fname, downloader=downloader))
    except requests.exceptions.HTTPError as exc:
        status = exc.response.status_code if exc.response is not None else "?"
        cls = MissingFileError if status == 404 else DownloadError
        raise cls(f"{url}: HTTP {status}; {hint}") from None
    except (requests.exceptions.ChunkedEncodingError, requests.exceptions.ContentDecodingError) as exc:
        raise DownloadError(f"download of {url} was interrupted ({exc}); nothing was cached. Retry, or {hint}") \
            from None
    except (requests.exceptions.ConnectionError, requests.exceptions.Timeout) as exc:
        raise DownloadError(f"cannot reach {url} ({type(exc).__name__}); {hint}") from None
    except requests.exceptions.RequestException as exc:
        raise DownloadError(f"download of {url} failed ({exc}); {hint}") from None
    except ValueError as exc:  # pooch's hash mismatch
        if "hash" not in str(exc).lower():
            raise
        seen = _mismatch_hash(str(exc))
        raise DataError(f"sha256 mismatch for {url}: expected {known}, got {seen or 'something else'}. "
                        "The file changed upstream or was corrupted in transit; nothing was cached.") from None


def _mismatch_hash(message: str) -> str | None:
    import re

    found = [h for h in re.findall(r"[0-9a-f]{64}", message)]
    return found[-1] if found else None


def obtain(f: FileSpec, mirror: str | None, workdir: Path, *, name: str, index: int, retries: int,
           timeout: float, progress: bool, say=None) -> tuple[Path, str, str, bool]:
    """(local path, sha256 seen, where it came from, whether a known hash was checked) for one registry file."""
    if mirror is not None and not _is_http(mirror):
        base = Path(mirror[len("file://"):] if mirror.startswith("file://") else mirror).expanduser()
        if not base.is_dir():
            raise DownloadError(f"mirror folder {base} does not exist")
        src = base / f.mirror
        alternative = False
        if not src.is_file():
            found = [base / a for a in f.mirror_alternatives if (base / a).is_file()]
            if not found:
                also = f" or {', '.join(f'`{a}`' for a in f.mirror_alternatives)}" if f.mirror_alternatives else ""
                raise MissingFileError(f"{src} is not in the mirror {base} (expected at `{f.mirror}`{also}); "
                                       + upstream_hint(name))
            src, alternative = found[0], True
        if say is not None:
            from ..progress import size

            say(f"verifying {src} ({size(src.stat().st_size)})")
        seen = sha256_of(src)
        if f.mirror_hash and seen != f.mirror_hash and not alternative:
            raise DataError(f"sha256 mismatch for {src}: expected {f.mirror_hash}, got {seen}; nothing was cached")
        # a copy under another common name (ijcnn1.trn) may be stored differently (uncompressed): verified only
        # when it has the registry's bytes, else recorded like a hash-less file
        return src, seen, str(src), bool(f.mirror_hash) and seen == f.mirror_hash
    if mirror is not None:
        known = f.mirror_hash
        for i, rel in enumerate((f.mirror, *f.mirror_alternatives)):
            url = mirror.rstrip("/") + "/" + quote(rel)
            try:
                path = _download(url, known if i == 0 else None, workdir, f"{index}-{Path(rel).name}",
                                 retries=retries, timeout=timeout, progress=progress, name=name)
            except MissingFileError:
                if i == len(f.mirror_alternatives):
                    raise
                continue
            seen = sha256_of(path)
            return path, seen, url, bool(known) and seen == known
    else:
        if f.url is None:
            raise MissingFileError(f"`{f.mirror}` has no upstream URL ({f.derived_from}); fetch it from a mirror "
                                   f"laid out like the shared data folder: `lsokl fetch {name} --mirror DIR`")
        url, known = f.url, f.sha256
    path = _download(url, known, workdir, f"{index}-{f.filename}", retries=retries, timeout=timeout,
                     progress=progress, name=name)
    return path, sha256_of(path), url, bool(known)


# --- one split ----------------------------------------------------------------------------------------------------

def _combined_hash(hashes: list[str]) -> str:
    return hashes[0] if len(hashes) == 1 else hashlib.sha256("".join(hashes).encode()).hexdigest()


def _build_split(spec: DatasetSpec, split: str, files: list[tuple[Path, str, str, bool]], workdir: Path,
                 folder: Path, train_meta: dict | None, say=None) -> tuple:
    """Parse one split's files into ``folder`` (a split folder being built, see cache.begin_split): streamed chunk
    by chunk where the format allows (lsokl.data.streaming), else read whole. Returns (X, y, permutations, meta)
    with X memory-mapped from ``folder`` and meta carrying its storage and shape."""
    s = spec.splits[split]
    opts = spec.parse_options(split)
    if train_meta and train_meta.get("categories"):
        opts["_categories"] = train_meta["categories"]
    from ..progress import size

    say = say or (lambda text: None)
    storage = spec.storage
    if train_meta and train_meta.get("storage_note"):
        storage = "csr"  # the train split was kept sparse (too wide for dense): the test split follows it
    policy = spec.dtype
    limit, why = streaming.decompressed_bound(s.n, spec.d, sum(p.stat().st_size for p, *_ in files))
    t0 = time.perf_counter()
    parsed_info: dict = {}
    permutations = None
    if streaming.can_stream(spec.format, opts, storage, spec.d):
        packed = [(path, formats.detect_compression(path)) for path, *_ in files]
        if any(kind != "none" for _, kind in packed):
            say(f"{split}: decompressing {size(sum(p.stat().st_size for p, _ in packed))} "
                f"({', '.join(sorted({k for _, k in packed if k != 'none'}))}) while parsing")
        say(f"{split}: parsing {size(sum(p.stat().st_size for p, *_ in files))} ({spec.format}) in chunks of "
            f"{size(streaming.CHUNK_BYTES)}")
        try:
            writer, y_raw, stored = streaming.parse_split(spec.format, [p for p, *_ in files], folder, d=spec.d,
                                                          n=s.n, opts=opts, storage=storage, policy=policy)
        except (DataError, MemoryError, OSError):
            raise
        except Exception as exc:  # noqa: BLE001 - a reader library's own error on a bad file: say which file
            names = ", ".join(str(p) for p, *_ in files)
            raise DataError(f"{names}: cannot parse as {spec.format} ({type(exc).__name__}: {exc})") from None
        if stored != storage:
            parsed_info["storage_note"] = streaming.dense_is_refused(s.n, spec.d)
        shape = [writer.rows, spec.d if spec.d is not None else writer.d_seen]
        x_meta = {"storage": stored, "shape": shape}
    else:
        packed = [(path, formats.detect_compression(path)) for path, *_ in files]
        if any(kind != "none" for _, kind in packed):
            say(f"{split}: decompressing {size(sum(p.stat().st_size for p, _ in packed))} "
                f"({', '.join(sorted({k for _, k in packed if k != 'none'}))})")
        plain = []
        limit, why = streaming.disk_bound(limit, why, workdir)  # the decompressed copies go to workdir
        try:
            for (path, *_), f in zip(files, s.files):
                plain.append(formats.decompress(path, workdir, opts.get("member"), f.compression,
                                                limit=limit, why=why))
            if any(p != path and not p.is_symlink() for p, (path, *_) in zip(plain, files)):
                say(f"{split}: decompressed to {size(sum(p.stat().st_size for p in plain))} "
                    f"in {time.perf_counter() - t0:.1f} s")
            say(f"{split}: parsing {size(sum(p.stat().st_size for p in plain))} ({spec.format})")
            t0 = time.perf_counter()
            try:
                parsed = formats.read(spec.format, plain, spec.d, opts, storage)
            except (DataError, MemoryError, OSError):
                raise
            except Exception as exc:  # noqa: BLE001 - a reader library's own error on a bad file: say which file
                names = ", ".join(str(p) for p, *_ in files)
                raise DataError(f"{names}: cannot parse as {spec.format} ({type(exc).__name__}: {exc})") from None
        finally:
            for p in plain:
                if p.parent == workdir and p.name.endswith(".plain"):
                    p.unlink(missing_ok=True)
        y_raw, permutations, parsed_info = parsed.y, parsed.permutations, parsed.info
        x_meta = cache.write_x(folder, parsed.X)
        del parsed
    X = cache.open_x(folder, x_meta["storage"], x_meta["shape"])
    where = f"{spec.name} ({split}: {', '.join(src for _, _, src, _ in files)})"
    say(f"{split}: parsed {X.shape[0]:,} rows x {X.shape[1]:,} features in {time.perf_counter() - t0:.1f} s")
    if s.n is not None and X.shape[0] != s.n:
        raise DataError(f"{where}: {X.shape[0]} rows, but the registry declares n={s.n} (truncated or wrong file?)")
    if spec.d is not None and X.shape[1] != spec.d:
        raise DataError(f"{where}: {X.shape[1]} features, but the registry declares d={spec.d}")
    y, label_info = labels.normalise(y_raw, spec.task, opts, where,
                                     info=(train_meta or {}).get("labels") or None, n_classes=spec.classes)

    pre = spec.preprocessing
    fitted = (train_meta or {}).get("preprocessing_fitted") or {}
    feat = fitted.get("features") or fit_scale(X, pre["features"])
    if feat["how"] != "none":
        X, x_meta = _scale_cached(X, feat, folder, x_meta, policy)
    targ = None
    if spec.task == "regression":
        targ = fitted.get("target") or fit_scale(y.reshape(-1, 1), pre["target"])
        y = apply_scale_target(y, targ)
    meta = {
        "name": spec.name, "split": split, "task": spec.task, "source": spec.source, "format": spec.format,
        "n": int(X.shape[0]), "d": int(X.shape[1]),
        "sha256": _combined_hash([h for _, h, _, _ in files]),
        # sha256 is what was seen; verified says whether it was checked against a registry hash (when not,
        # the recorded hash is the trust-on-first-use reference for later fetches)
        "files": [{"from": src, "sha256": h, "mirror_path": f.mirror, "verified": ok}
                  for (_, h, src, ok), f in zip(files, s.files)],
        "preprocessing": {**pre, "fitted_on": "train"},
        "preprocessing_fitted": {"features": feat, "target": targ},
        "labels": label_info,
        "spec_hash": spec.spec_hash,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    if targ and targ.get("how") == "minmax":
        # kept so results can be reported in raw units: y_raw = y * (max - min) + min
        meta["target_range"] = [targ["lo"][0], targ["hi"][0]]
    if parsed_info.get("categories"):
        meta["categories"] = parsed_info["categories"]
    if parsed_info.get("storage_note"):
        meta["storage_note"] = f"{where}: {parsed_info['storage_note']}"
    if permutations is not None:
        meta["permutations"] = {"key": parsed_info.get("permutation_key"), "runs": int(permutations.shape[0]),
                                "base": 0}
    meta.update(x_meta)
    data = X.data if sp.issparse(X) else X
    if spec.dtype != "float64":
        meta["dtype"] = str(data.dtype)  # what `dtype: float32 | auto` gave
    return X, y, permutations, meta


def _scale_cached(X, params: dict, folder: Path, x_meta: dict, policy: str):
    """Apply a fitted scaling to the cached X in ``folder``: dense row blocks (the same elementwise arithmetic as
    apply_scale on the whole array, so the values are identical), CSR in memory (a small set's scaling)."""
    if sp.issparse(X):
        scaled = apply_scale(X, params)
        del X
        for f in folder.glob("X*.npy"):
            f.unlink()
        x_meta = cache.write_x(folder, scaled)
        return cache.open_x(folder, x_meta["storage"], x_meta["shape"]), x_meta
    out = streaming.NpyAppender(folder / "X.scaled.npy", (X.shape[1],), policy=policy)
    try:
        for start in range(0, X.shape[0], streaming.SCALE_BLOCK_ROWS):
            out.append(apply_scale(np.asarray(X[start:start + streaming.SCALE_BLOCK_ROWS]), params))
    except BaseException:
        out.abort()
        raise
    out.close()
    del X
    os.replace(folder / "X.scaled.npy", folder / "X.npy")
    return cache.open_x(folder, "dense", x_meta["shape"]), x_meta



# --- the public entry point -----------------------------------------------------------------------------------------

def _fetch(name: str, *, mirror: str | os.PathLike | None = None, splits: list[str] | None = None,
           force: bool = False, retries: int = DEFAULT_RETRIES, timeout: float = DEFAULT_TIMEOUT,
           progress: bool = True) -> FetchResult:
    spec = registry.get(name)
    mirror = mirror_setting(mirror)
    wanted = list(splits) if splits else list(spec.splits)
    for s in wanted:
        if s not in spec.splits:
            raise DataError(f"dataset {spec.name!r} has no {s!r} split (it has {', '.join(spec.splits)})")
    required = set(splits) if splits else {"train"}
    result = FetchResult(spec.name)
    # every fetch, even of a cached dataset, clears what killed fetches left behind
    for folder, freed in remove_stale_temporaries():
        result.warnings.append(f"removed {folder.name} ({_mb(freed)}), left in the cache by an interrupted fetch")
    todo = []
    for s in wanted:
        if not force and cache.is_complete(spec.name, s, spec.spec_hash):
            result.cached.append(s)
        else:
            todo.append(s)
    if not todo:
        return result
    # A test split re-uses the train split's label mapping, categories and scaling, so train goes first.
    if "train" not in todo and not cache.is_complete(spec.name, "train", spec.spec_hash):
        todo.insert(0, "train")
    todo.sort(key=lambda s: s != "train")

    root = cache.root()
    root.mkdir(parents=True, exist_ok=True)
    if progress:
        from ..progress import Steps

        say = Steps(spec.name)
    else:
        say = None
    # the lock marks the folder as in use, so a concurrent fetch's clean-up leaves it alone
    with tempfile.TemporaryDirectory(dir=root, prefix=f".fetch-{spec.name}-") as tmp, _hold_lock(Path(tmp)):
        workdir = Path(tmp)
        obtained: dict[tuple, tuple[Path, str, str, bool]] = {}  # one download per file even if splits share it
        train_meta = None if "train" in todo else cache.read_meta(spec.name, "train")
        for s in todo:
            try:
                files = []
                for i, f in enumerate(spec.splits[s].files):
                    key = (f.url, f.mirror)
                    if key not in obtained:
                        obtained[key] = obtain(f, mirror, workdir, name=spec.name, index=len(obtained),
                                               retries=retries, timeout=timeout, progress=progress,
                                               say=say)
                    files.append(obtained[key])
            except MissingFileError as exc:
                if s in required:
                    raise
                result.skipped[s] = str(exc)
                continue
            for j, ((_, seen, src, verified), f) in enumerate(zip(files, spec.splits[s].files)):
                if verified:
                    continue
                via_mirror = src != f.url
                result.unverified.append({"split": s, "index": j, "mirror": f.mirror, "sha256": seen,
                                          "via_mirror": via_mirror})
                message = (f"{spec.name}: {f.filename} is not verified (the registry has no sha256 for "
                           f"{'its mirror copy' if via_mirror else 'it'}); the sha256 seen is {seen}. "
                           f"If you trust this copy, `lsokl fetch {spec.name} --pin` records it in your registry.")
                result.warnings.append(message)
                warnings.warn(message, UnverifiedFileWarning, stacklevel=3)
            folder = cache.begin_split(spec.name, s)
            lock = _hold_lock(folder)  # a concurrent fetch's clean-up leaves a split being written alone
            try:
                X, y, perms, meta = _build_split(spec, s, files, workdir, folder,
                                                 train_meta if s != "train" else None, say=say)
                del X
                lock.close()
                (folder / LOCK_NAME).unlink(missing_ok=True)
                cache.commit_split(spec.name, s, folder, y, perms, meta)
            except BaseException:
                lock.close()
                cache.abort_split(folder)
                raise
            if meta.get("storage_note"):
                result.warnings.append(meta["storage_note"])
            if s == "train":
                train_meta = meta
            result.fetched.append(s)
            del y, perms
    return result


def fetch(name: str, **kwargs) -> FetchResult:
    """Make ``name``'s splits available in the cache; no network access when they already are.

    ``splits=None`` means the train split plus the test split when its files can be found (a missing test file is
    reported in ``FetchResult.skipped``, not raised). Naming splits makes each of them required.
    ``mirror`` (default ``$LSOKL_DATA_MIRROR``) replaces every upstream URL: a local folder laid out like the shared
    data folder, or an http(s) base URL joined with each file's mirror path. Text formats (LIBSVM, CSV) are parsed
    and cached chunk by chunk (lsokl.data.streaming), so memory does not grow with the file.

    A full disk is one :class:`DataError` line naming the cache folder and its free space; nothing is cached.
    """
    try:
        return _fetch(name, **kwargs)
    except OSError as exc:
        if isinstance(exc, DownloadError):
            raise
        message = streaming.disk_full_message(cache.root(), exc)
        if message is None:
            raise
        raise DataError(f"{name}: {message}") from None


def is_cached(name: str, split: str = "train") -> bool:
    spec = registry.get(name)
    return cache.is_complete(spec.name, split, spec.spec_hash)


def clear(name: str) -> None:
    """Remove a dataset's cached arrays (the next fetch rebuilds them)."""
    shutil.rmtree(cache.root() / registry.get(name).name, ignore_errors=True)


