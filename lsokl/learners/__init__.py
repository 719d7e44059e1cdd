"""Kernel learners by family (:mod:`.online`, :mod:`.pegasos`, :mod:`.batch`, :mod:`.stochastic`)
over the shared compute layer (:mod:`lsokl.compute`): one protocol (:mod:`.base`), one registry
(:mod:`.registry`).
"""
from .base import OnlineLearner, Trace
from ..compute.randomness import NumpySource, ReplaySource
from .registry import create, get, names

__all__ = ["OnlineLearner", "Trace", "NumpySource", "ReplaySource", "create", "get", "names"]
