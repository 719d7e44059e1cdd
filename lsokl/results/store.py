"""A results folder: ``records/<key>.json`` plus the configs that produced them.

Each record is written to a temporary file in the same folder and moved into place with
``os.replace``, which is atomic on POSIX and Windows: a reader (or a rerun after SIGKILL) sees
either no record or a complete one, never half a file.
"""
from __future__ import annotations

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
        return atomic_write_json(self.path(record["key"]), record)

    def read(self, key: str) -> dict | None:
        """The record for ``key``, or None if absent or unreadable (then the cell reruns)."""
        try:
            rec = json.loads(self.path(key).read_text())
        except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
            return None
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
            if not validate_record(rec):
                yield restore_nonfinite(rec)

    def records(self) -> list[dict]:
        return list(self)

    def save_config(self, config_hash: str, text: str) -> Path:
        """Keep the config that produced the records, named by its hash, for provenance."""
        return atomic_write_text(self.root / "configs" / f"{config_hash[:16]}.yaml", text)


def atomic_write_text(path: Path, text: str) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
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
