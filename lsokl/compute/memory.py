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
