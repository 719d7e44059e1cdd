"""Online kernel learners: one protocol (:mod:`.base`), one registry (:mod:`.registry`)."""
from .base import OnlineLearner, Trace
from .randomness import NumpySource, ReplaySource
from .registry import create, get, names

__all__ = ["OnlineLearner", "Trace", "NumpySource", "ReplaySource", "create", "get", "names"]
