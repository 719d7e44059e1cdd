"""The default memory estimate of a learner that does not declare its own ``memory_estimate``
(read by the runner's resource guard, :mod:`lsokl.runner.resources`, and by learners that add
their own parts to it). It only reads parameters, never data.
"""
from __future__ import annotations

F64 = 8.0
#: rows of the blocks the compiled loops batch into BLAS calls (features.BLOCK; kept apart to avoid the import)
BLOCK_ROWS = 256


def support_switch_estimate(n_features: int, budget: int) -> dict[str, float]:
    """The Nystrom switch of NOGD (learners.online.nogd): the B stored vectors (kept column-major)
    are gathered into a new B x d array, made row-major for the map, which also keeps its transpose:
    three B x d arrays beside the learner's own store (measured: tests/test_memory_estimates.py)."""
    return {f"the switch's B x d copies: gathered, row-major, transposed (B = {int(budget):,}, d = {n_features:,})":
            3 * F64 * float(budget) * float(n_features)}


def default_learner_estimate(learner, n_samples: int, n_features: int, n_outputs: int) -> dict[str, float]:
    """The big arrays of a learner that does not declare ``memory_estimate``, from its common parameters."""
    d, m = float(n_features), float(max(n_outputs, 1))
    parts: dict[str, float] = {}
    D = None
    try:
        D = getattr(learner, "n_components_", None)
    except Exception:  # noqa: BLE001 - a property that validates parameters; the config layer reports those
        D = None
    if D is None and getattr(learner, "n_fourier", None) is not None:
        D = learner.n_fourier
    if D is not None:
        D = float(D)
        # drawn, then copied onto an aligned buffer (compute.features.FourierMap): two at the peak
        parts[f"random features U (d x D = {n_features:,} x {int(D):,}) and its aligned copy"] = 2 * F64 * d * D
        parts[f"projection blocks (2 x {BLOCK_ROWS} x D)"] = 2 * F64 * BLOCK_ROWS * D
        parts["weights (2D x outputs)"] = F64 * 2 * D * m
        return parts
    budget = getattr(learner, "budget", None)
    budgeted = getattr(learner, "budgeted", True)
    if budget is not None and budgeted:
        B = float(budget)
        parts[f"support vectors (B x d = {int(B):,} x {n_features:,})"] = F64 * B * (d + m + 3)
        parts[f"B x B matrices (B = {int(B):,}: Gram, inverse, eigenvectors)"] = 3 * F64 * B * B
        parts[f"dense copies of input rows (2 x d = 2 x {n_features:,})"] = 2 * F64 * d
        return parts
    if hasattr(learner, "run"):  # an unbudgeted online learner: the support set can grow to every sample
        n = float(n_samples)
        parts[f"support vectors (up to n x d = {n_samples:,} x {n_features:,})"] = F64 * n * (d + m + 3)
        parts["kernel rows (n)"] = F64 * n
        parts[f"dense copies of input rows (2 x d = 2 x {n_features:,})"] = 2 * F64 * d
        return parts
    # a batch learner without its own estimate: assume it copies the training data once
    parts[f"a copy of the training data (n x d = {n_samples:,} x {n_features:,})"] = F64 * n_samples * d
    return parts


# --- the Python API's guard: refuse an allocation the machine cannot hold, before making it ----------------------

class TooLargeError(MemoryError, ValueError):
    """A fit whose arrays, estimated from its parameters, exceed the machine's memory: refused before any
    allocation, with the estimate (a ValueError for scikit-learn users, a MemoryError for the rest)."""


def _machine_bytes() -> int | None:
    """This machine's memory, RAM plus swap (psutil where installed, else Linux /proc/meminfo), or None.

    The guard compares with this, not with the memory available now: numpy's zeroed arrays are allocated
    lazily, so a support-vector buffer larger than what is free but smaller than the machine can still
    serve a run that fills only part of it (and the runner's own guard, lsokl.runner.resources, already
    weighs each cell against what is available). An estimate above RAM plus swap can never be served."""
    try:
        import psutil

        return int(psutil.virtual_memory().total) + int(psutil.swap_memory().total)
    except Exception:  # noqa: BLE001 - not installed or unsupported platform
        pass
    try:
        found = {}
        with open("/proc/meminfo") as fh:
            for line in fh:
                key = line.split(":")[0]
                if key in ("MemTotal", "SwapTotal"):
                    found[key] = int(line.split()[1]) * 1024
        return sum(found.values()) if "MemTotal" in found else None
    except OSError:
        return None


def _gib(n: float) -> str:
    if n >= 2**40:
        return f"{n / 2**40:,.3g} TiB"
    return f"{n / 2**30:,.1f} GiB" if n >= 2**30 else f"{n / 2**20:,.1f} MiB"


def refuse_if_too_big(owner, parts: dict, available: float | None = None) -> None:
    """Raise :class:`TooLargeError` (one line: the total, the largest part, the memory there is) when the
    named parts (bytes) add up to more than ``available`` (default: this machine's RAM plus swap,
    :func:`_machine_bytes`). Called by the learners and approximations before they allocate, with what
    their size parameters (budget, rank, n_components, ...) make them allocate."""
    parts = {k: float(v) for k, v in parts.items() if v}
    if not parts:
        return
    available = _machine_bytes() if available is None else available
    total = sum(parts.values())
    if available is None or total <= available:
        return
    name = owner if isinstance(owner, str) else type(owner).__name__
    biggest = max(parts, key=parts.get)
    raise TooLargeError(f"{name}: these parameters need about {_gib(total)} of memory (largest: {biggest}, "
                        f"{_gib(parts[biggest])}), more than the {_gib(available)} this machine has; lower the "
                        "parameter that sets that size (budget, rank, n_components, ...)")


def estimate_of(learner, n_samples: int, n_features: int, n_outputs: int = 1) -> dict:
    """The learner's own ``memory_estimate`` or :func:`default_learner_estimate`; {} when the estimate itself
    fails (a parameter the learner's checks then report)."""
    try:
        own = getattr(learner, "memory_estimate", None)
        return dict(own(n_samples, n_features, n_outputs) if callable(own)
                    else default_learner_estimate(learner, n_samples, n_features, n_outputs))
    except Exception:  # noqa: BLE001 - estimates read parameters only; the learner validates them itself
        return {}
