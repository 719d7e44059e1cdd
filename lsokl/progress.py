"""Progress for logs: plain text lines every few seconds, for when output is not a terminal (CI, nohup, a pipe).

A rich progress bar redraws one line with control characters, which a log file shows as nothing (or as garbage)
until the end. These reporters print whole lines instead, at most every ``LSOKL_PROGRESS_INTERVAL`` seconds
(default 5), so a long run or fetch shows it is alive and how far it got.
"""
from __future__ import annotations

import os
import sys
import threading
import time

DEFAULT_INTERVAL = 5.0


def interval() -> float:
    try:
        return max(float(os.environ.get("LSOKL_PROGRESS_INTERVAL", DEFAULT_INTERVAL)), 0.05)
    except ValueError:
        return DEFAULT_INTERVAL


def clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def size(n: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{int(n)} B"


class CellProgress:
    """The runner's progress protocol (start, advance, stop) as plain lines: cells done, failed, elapsed, ETA.

    A line is printed every ``every`` seconds from a background thread (also while no cell finishes, so a slow
    cell does not look like a hang), one line per failed cell as it happens, and a last line at the end.
    """

    def __init__(self, out=None, every: float | None = None):
        self.out = out or sys.stdout
        self.every = interval() if every is None else every
        self.total = self.done = self.failed = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None

    def line(self) -> str:
        with self._lock:
            done, failed, total = self.done, self.failed, self.total
        elapsed = time.perf_counter() - self.t0
        eta = clock(elapsed / done * (total - done)) if done else "?"
        pct = f"{100 * done / total:.0f}%" if total else "-"
        return (f"cells: {done}/{total} done ({pct}), {failed} failed, elapsed {clock(elapsed)}, eta {eta}")

    def _print(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def start(self, total: int) -> None:
        """Begin a stage of ``total`` cells. One object may serve several stages in turn (a step-size
        search's grid, its refinement, then the table): each starts its counts and clock afresh."""
        with self._lock:
            self.total, self.done, self.failed = total, 0, 0
        self.t0 = time.perf_counter()
        self._stop.clear()
        self._print(f"cells: {total} to run")
        self._thread = threading.Thread(target=self._tick, name="lsokl-progress", daemon=True)
        self._thread.start()

    def _tick(self) -> None:
        while not self._stop.wait(self.every):
            self._print(self.line())

    def advance(self, rec: dict) -> None:
        with self._lock:
            self.done += 1
            if rec.get("status") != "ok":
                self.failed += 1
        if rec.get("status") != "ok":
            err = rec.get("error") or {}
            why = f" {err.get('type')}: {err.get('message')}" if err else ""
            self._print(f"{rec.get('status')} {rec.get('dataset')} {rec.get('algorithm')} "
                        f"perm {rec.get('permutation')}{why}")

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
            self._print(self.line())


class ByteProgress:
    """pooch's progress-bar protocol (total, update, reset, close) as plain lines: bytes so far of the total."""

    def __init__(self, label: str, out=None, every: float | None = None):
        self.label, self.out = label, out or sys.stderr
        self.every = interval() if every is None else every
        self.total = 0
        self.seen = 0
        self._last = time.perf_counter()
        self._t0 = self._last

    def update(self, n: int) -> None:
        self.seen += n
        now = time.perf_counter()
        if now - self._last >= self.every:
            self._last = now
            self._print()

    def _print(self) -> None:
        of = f" of {size(self.total)}" if self.total else ""
        print(f"{self.label}: {size(self.seen)}{of} downloaded ({clock(time.perf_counter() - self._t0)})",
              file=self.out, flush=True)

    def reset(self) -> None:
        self.seen = 0

    def close(self) -> None:
        self._print()


class Steps:
    """One line per step of a fetch (verifying, decompressing, parsing: with bytes and rows)."""

    def __init__(self, name: str, out=None):
        self.name, self.out = name, out or sys.stderr

    def __call__(self, text: str) -> None:
        print(f"{self.name}: {text}", file=self.out, flush=True)
