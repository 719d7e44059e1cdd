"""The degenerate-pass detector, where the runner has always imported it from; it lives in
:mod:`lsokl.compute.degenerate` so that a learner's ``fit`` can warn with it too (issue 25)."""
from ..compute.degenerate import MIN_SLACK, RTOL_LOSS, SLACK, check  # noqa: F401
