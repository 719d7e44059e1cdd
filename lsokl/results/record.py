"""The record schema: what one finished cell leaves on disk.

Every record carries every key (``None`` where a value does not apply), so a reader never has
to guess whether a key is missing because the writer crashed or because it does not apply.
"""
from __future__ import annotations

import functools
import math
import os
import platform
import socket
import sys
from datetime import datetime, timezone

SCHEMA_VERSION = 1
STATUSES = ("ok", "failed", "diverged", "timeout")

RECORD_KEYS = (
    "schema", "key", "config_hash", "config_name", "status",
    # what ran
    "dataset", "dataset_sha256", "task", "n_samples", "n_features", "algorithm", "learner",
    "params", "permutation", "permutation_source", "seed", "max_samples", "scale", "split", "n_checkpoints",
    # what came out
    "metric", "value", "mistakes", "mistake_rate", "squared_loss", "time_s", "support_size",
    "curve", "error",
    # None, or why the pass was a constant predictor (lsokl.compute.degenerate)
    "degenerate",
    # the best constant predictor on the pass's stream: {"prediction", "value", "spread"} (online passes)
    "constant",
    # the protocol (None = online) and its own results (holdout: test accuracy, times, selection)
    "protocol", "holdout", "approximation",
    # where and with what
    "versions", "host", "started_at", "finished_at", "wall_s",
)
# Added after schema 1 was in use: records written before them stay valid without these keys.
OPTIONAL_KEYS = ("protocol", "holdout", "approximation", "degenerate", "constant")
CURVE_KEYS = ("t", "mistakes", "mistake_rate", "support", "time_s", "squared_loss")


def metric_for(task: str) -> str:
    return "squared_loss" if task == "regression" else "mistake_rate"


def versions() -> dict:
    """The versions every record carries (a fresh dict each call)."""
    return dict(_package_versions())


@functools.lru_cache(maxsize=1)
def _package_versions() -> tuple:
    # once per process: importlib.metadata scans the installed distributions on every call (about
    # 10 ms for these six, more than a whole Table 5 pass on german), and a process's versions never change
    from importlib import metadata

    out = [("python", platform.python_version())]
    for pkg in ("lsokl", "numpy", "scipy", "numba", "scikit-learn", "joblib"):
        try:
            out.append((pkg, metadata.version(pkg)))
        except metadata.PackageNotFoundError:
            out.append((pkg, None))
    return tuple(out)


def host() -> dict:
    return {"hostname": socket.gethostname(), "platform": platform.platform(),
            "machine": platform.machine(), "cpu_count": os.cpu_count(), "pid": os.getpid(),
            "executable": sys.executable}


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _finite_or_none(x):
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def make_record(*, key: str, spec: dict, status: str, config_hash: str, config_name: str,
                algorithm: str, n_samples: int | None = None, n_features: int | None = None,
                trace=None, error: dict | None = None, started_at: str | None = None,
                wall_s: float | None = None, fields: dict | None = None) -> dict:
    """Build a complete record from a cell spec and, when the pass ran, its Trace.

    ``fields``: a protocol's own keys (e.g. holdout's ``metric``, ``value`` and ``holdout``),
    applied last so they override what the trace implies."""
    if status not in STATUSES:
        raise ValueError(f"status must be one of {STATUSES}, got {status!r}")
    task = spec["task"]
    rec = {k: None for k in RECORD_KEYS}
    rec.update(
        schema=SCHEMA_VERSION, key=key, config_hash=config_hash, config_name=config_name,
        status=status, dataset=spec["dataset"], dataset_sha256=spec["dataset_sha256"], task=task,
        n_samples=n_samples, n_features=n_features, algorithm=algorithm, learner=spec["learner"],
        params=spec["params"], permutation=spec["permutation"],
        permutation_source=spec["permutation_source"], seed=spec["seed"],
        max_samples=spec["max_samples"], scale=spec["scale"], split=spec.get("split"),
        n_checkpoints=spec["n_checkpoints"], protocol=spec.get("protocol"),
        metric=metric_for(task), error=error, versions=versions(), host=host(),
        started_at=started_at, finished_at=now(), wall_s=wall_s,
    )
    if trace is not None:
        rate = trace.mistakes / trace.n_samples if trace.n_samples else None
        loss = _finite_or_none(trace.squared_loss) if task == "regression" else None
        ck = trace.checkpoints
        rec.update(
            n_samples=int(trace.n_samples), mistakes=int(trace.mistakes), mistake_rate=rate,
            squared_loss=loss, time_s=float(trace.elapsed), support_size=int(trace.support_size),
            value=loss if task == "regression" else rate,
            curve={
                "t": [int(t) for t in ck],
                "mistakes": [int(m) for m in trace.ckpt_mistakes],
                "mistake_rate": [int(m) / max(int(t), 1) for m, t in zip(trace.ckpt_mistakes, ck)],
                "support": [int(s) for s in trace.ckpt_support],
                "time_s": [float(s) for s in trace.ckpt_time],
                "squared_loss": [_finite_or_none(s) for s in trace.ckpt_squared_loss]
                if task == "regression" else None,
            },
        )
    if spec.get("order"):  # `order: block-shuffle` (absent for the default permutation, as in earlier records)
        rec["order"] = dict(spec["order"])
    if fields:
        unknown = set(fields) - set(RECORD_KEYS)
        if unknown:
            raise ValueError(f"protocol fields {sorted(unknown)} are not record keys")
        rec.update(fields)
    return rec


def validate_record(rec) -> list[str]:
    """Problems with a record read from disk (empty list: complete and well-formed)."""
    if not isinstance(rec, dict):
        return ["not a JSON object"]
    problems = [f"missing key {k!r}" for k in RECORD_KEYS if k not in rec and k not in OPTIONAL_KEYS]
    if rec.get("status") not in STATUSES:
        problems.append(f"bad status {rec.get('status')!r}")
    if rec.get("status") == "ok":
        if rec.get("value") is None:
            problems.append("status ok but no value")
        if rec.get("protocol") in (None, "online"):  # other protocols may have no online pass
            curve = rec.get("curve") or {}
            problems += [f"curve lacks {k!r}" for k in CURVE_KEYS if k not in curve]
    if rec.get("status") == "failed" and not rec.get("error"):
        problems.append("status failed but no error")
    return problems
