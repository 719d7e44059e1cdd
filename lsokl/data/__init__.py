"""Datasets: registry (datasets.yaml) -> fetch -> parse -> cache -> :func:`load`."""
from .dataset import Dataset
from .loading import load

__all__ = ["Dataset", "load"]
