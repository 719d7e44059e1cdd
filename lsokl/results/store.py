"""A results folder: ``records/<key>.json`` plus the configs that produced them.

Each record is written to a temporary file in the same folder and moved into place with
``os.replace``, which is atomic on POSIX and Windows: a reader (or a rerun after SIGKILL) sees
either no record or a complete one, never half a file.
"""
from __future__ import annotations

import errno
import json
import math
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ..errors import LsoklError
from .record import validate_record

#: Folders a results folder may never be or live in: writing records there is always a mistake (a typo, or a
#: shell variable that was empty) and some of them would only fail halfway through a run.
SYSTEM_ROOTS = ("/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/proc", "/sbin", "/sys", "/usr")


class ResultsDirError(LsoklError):
    """A --results / --out folder that cannot or must not hold results."""


def check_results_dir(path: str | Path, *, what: str = "--results") -> Path:
    """``path`` as a results folder that exists (created if needed) and is writable, or one clear error.

    Refused: a system path (``/``, ``/proc``, ``/dev/null``, ``/etc``... see :data:`SYSTEM_ROOTS`), an existing
    file, a folder that cannot be created or written.
    """
    given = Path(path)
    resolved = given.expanduser().resolve()
    text = resolved.as_posix()
    if resolved == Path(resolved.anchor) or any(text == r or text.startswith(r + "/") for r in SYSTEM_ROOTS):
        raise ResultsDirError(f"{what} {given}: refusing to write results into a system folder ({text}); "
                              "choose a folder of your own, e.g. results/<name>")
    if resolved.exists() and not resolved.is_dir():
        raise ResultsDirError(f"{what} {given}: exists and is not a folder")
    try:
        resolved.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write-test-", dir=resolved)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ResultsDirError(f"{what} {given}: not a writable folder ({exc.strerror or exc})") from None
    return given


def _not_a_record(path: Path) -> ResultsDirError:
    return ResultsDirError(f"{path} is a folder, not a record file; move it out of {path.parent} "
                           "(a rerun writes the record again)")


class ResultStore:
    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.records_dir = self.root / "records"

    def ensure(self) -> "ResultStore":
        check_results_dir(self.root)
        self.records_dir.mkdir(parents=True, exist_ok=True)
        return self

    def path(self, key: str) -> Path:
        return self.records_dir / f"{key}.json"

    def write(self, record: dict) -> Path:
        path = self.path(record["key"])
        if path.is_dir():
            raise _not_a_record(path)
        return atomic_write_json(path, record)

    def read(self, key: str) -> dict | None:
        """The record for ``key``, or None if absent or unreadable (then the cell reruns); a folder in
        its place raises :class:`ResultsDirError` (one line naming it)."""
        path = self.path(key)
        try:
            rec = json.loads(path.read_text())
        except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
            return None
        except IsADirectoryError:
            raise _not_a_record(path) from None
        return restore_nonfinite(rec) if not validate_record(rec) else None

    def status(self, key: str) -> str | None:
        rec = self.read(key)
        return rec["status"] if rec else None

    def __iter__(self) -> Iterator[dict]:
        if not self.records_dir.is_dir():
            return
        for p in sorted(self.records_dir.glob("*.json")):
            try:
                rec = json.loads(p.read_text())
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue
            except IsADirectoryError:
                raise _not_a_record(p) from None
            if not validate_record(rec):
                yield restore_nonfinite(rec)

    def records(self) -> list[dict]:
        return list(self)

    def save_config(self, config_hash: str, text: str) -> Path:
        """Keep the config that produced the records, named by its hash, for provenance."""
        return atomic_write_text(self.root / "configs" / f"{config_hash[:16]}.yaml", text)


class DiskFullError(LsoklError, OSError):
    """No space (or quota) left where results are written; nothing was half-written."""


#: errno values that mean "the filesystem is full" (ENOSPC; EDQUOT: the user's quota)
DISK_FULL = tuple(e for e in (getattr(errno, "ENOSPC", None), getattr(errno, "EDQUOT", None)) if e is not None)


def disk_full(folder: Path, what: str) -> DiskFullError:
    """The one-line error for a full disk: the folder, what could not be written, the space left."""
    import shutil

    from ..progress import size

    try:
        free = f"{size(shutil.disk_usage(folder).free)} free"
    except OSError:
        free = "free space unknown"
    return DiskFullError(f"no space left on the disk of {folder} ({free}) to write {what}; nothing was "
                         "half-written: free some space (or choose another --results) and run the same command "
                         "again, finished cells are kept")


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


#: the mode files are written with: 0644 under the usual umask, so that others sharing a results folder can
#: read the records (``mkstemp`` alone makes them 0600)
FILE_MODE = 0o666 & ~_umask()


def atomic_write_text(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file and ``os.replace``: a reader sees the old file or the
    whole new one, with mode :data:`FILE_MODE` (0644 under the usual umask). A full disk raises :class:`DiskFullError` (one line: the folder and its free space) after
    removing the temporary file."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        if exc.errno in DISK_FULL:
            raise disk_full(path.parent, path.name) from None
        raise
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            if hasattr(os, "fchmod"):
                os.fchmod(fh.fileno(), FILE_MODE)
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError) and exc.errno in DISK_FULL:
            raise disk_full(path.parent, path.name) from None
        raise
    return path


def atomic_write_json(path: Path, obj: dict) -> Path:
    return atomic_write_text(path, json.dumps(_strict(obj), indent=1, allow_nan=False) + "\n")


#: how :func:`_strict` writes the floats JSON cannot hold, and what :func:`restore_nonfinite` reads back
NONFINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


def restore_nonfinite(rec: dict) -> dict:
    """Undo :func:`_strict` where a value is a number by construction: the learner parameters (``params``) and
    the candidates of a holdout selection. So ``gamma: .inf`` (multi-class BOGD) reads back as the float inf that
    the config's cells carry, and a reader matching records to cells by their parameters finds it. No learner
    parameter takes the strings ``"inf"``/``"nan"`` (those are floats in YAML too), so the inverse is exact."""
    if isinstance(rec.get("params"), dict):
        rec["params"] = _numbers(rec["params"])
    sel = (rec.get("holdout") or {}).get("selection") if isinstance(rec.get("holdout"), dict) else None
    if isinstance(sel, dict):
        for k in ("chosen", "grid"):
            if isinstance(sel.get(k), dict):
                sel[k] = _numbers(sel[k])
        for cand in sel.get("candidates") or ():
            if isinstance(cand, dict) and isinstance(cand.get("params"), dict):
                cand["params"] = _numbers(cand["params"])
    return rec


def _numbers(obj):
    if isinstance(obj, str):
        return NONFINITE.get(obj, obj)
    if isinstance(obj, dict):
        return {k: _numbers(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_numbers(v) for v in obj]
    return obj


def _strict(obj):
    """Non-finite floats (a parameter set to inf, say) as strings, so the file stays strict JSON
    (:func:`restore_nonfinite` reads the parameters back as floats)."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    if isinstance(obj, dict):
        return {k: _strict(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_strict(v) for v in obj]
    return obj


# --------------------------------------------------------------------------------------------- the folder lock
#: the lock file of a results folder, beside its records (git-ignored with them)
LOCK_NAME = ".lsokl-run.lock"


class ResultsLockedError(LsoklError):
    """Another live `lsokl run` holds the results folder."""


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    except OSError:
        return False
    return True


_HELD: dict[str, list] = {}  # resolved lock path -> [fd, depth]: a process may take its own lock again


class ResultsLock:
    """One `lsokl run` per results folder: ``records/.lsokl-run.lock`` holds the owner's pid, host, start time
    and command line, under an exclusive ``flock`` (the kernel drops it when the process dies, however it
    dies). A second run is refused with who holds it; a lock file left by a dead run (kill -9, a crash) is
    taken over with a warning. Where ``flock`` is not supported (some network filesystems), the pid in the
    file decides. Re-entrant within one process (the step-size search and the table share the CLI's lock)."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.path = self.root / "records" / LOCK_NAME
        self.key = str(self.path.resolve())

    @staticmethod
    def describe(info: dict) -> str:
        pid, host = info.get("pid"), info.get("host")
        since, cmd = info.get("started_at"), info.get("command")
        return (f"pid {pid}" + (f" on {host}" if host else "") + (f", since {since}" if since else "")
                + (f": {cmd}" if cmd else ""))

    def _read(self, fd: int) -> dict:
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            raw = os.read(fd, 1 << 16)
            return json.loads(raw.decode("utf-8")) if raw.strip() else {}
        except (OSError, ValueError):
            return {}

    def _refuse(self, info: dict):
        raise ResultsLockedError(
            f"results folder {self.root} is in use by another lsokl run ({self.describe(info)}); wait for it to "
            f"finish, stop it, or give this run another --results folder")

    def acquire(self) -> "ResultsLock":
        import socket
        import sys
        import warnings
        from datetime import datetime, timezone

        held = _HELD.get(self.key)
        if held is not None:
            held[1] += 1
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(10):
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                locked = _flock(fd)
            except BaseException:
                os.close(fd)
                raise
            if locked is False:
                info = self._read(fd)
                os.close(fd)
                self._refuse(info)
            try:  # the file may have been removed by its releasing owner after we opened it: open it again
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        else:  # pragma: no cover - ten releases in a row in between
            raise ResultsLockedError(f"results folder {self.root}: could not take its lock {self.path}")
        old = self._read(fd)
        host = socket.gethostname()
        pid = old.get("pid")
        if isinstance(pid, int) and pid != os.getpid():
            if locked is None and (old.get("host") in (None, host)) and _pid_alive(pid):
                os.close(fd)  # no flock here: the pid decides
                self._refuse(old)
            warnings.warn(f"results folder {self.root}: taking over the lock left by a run that is no longer "
                          f"running ({self.describe(old)})", stacklevel=2)
        info = {"pid": os.getpid(), "host": host,
                "started_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "command": " ".join(sys.argv) if sys.argv and sys.argv[0] else None}
        try:
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, (json.dumps(info) + "\n").encode())
        except OSError as exc:  # the flock holds without the text; a full disk is said as such
            if exc.errno not in DISK_FULL:
                os.close(fd)
                raise
        _HELD[self.key] = [fd, 1]
        return self

    def release(self) -> None:
        held = _HELD.get(self.key)
        if held is None:
            return
        held[1] -= 1
        if held[1] > 0:
            return
        del _HELD[self.key]
        try:
            os.unlink(self.path)  # before unlocking: a waiting run then opens a fresh file
        except OSError:
            pass
        os.close(held[0])

    def __enter__(self) -> "ResultsLock":
        return self.acquire()

    def __exit__(self, *exc) -> bool:
        self.release()
        return False


def _flock(fd: int):
    """True: locked; False: another process holds it; None: this filesystem (or OS) has no flock."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:  # ENOLCK, EOPNOTSUPP: a filesystem without locks
        return None
    return True
