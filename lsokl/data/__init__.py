"""Datasets: registry (datasets.yaml) -> fetch -> parse -> cache -> :func:`load`.

Modules: registry (the YAML, validated), fetch (download/mirror + verify), formats (readers), labels (per-task
label normalisation), preprocess (scaling, subsampling), cache (.npy + meta.json), builtin (no-file datasets),
loading (:func:`load`).
"""
from .dataset import Dataset

from .loading import load
from .preprocess import scale, subsample

__all__ = ["Dataset", "load", "scale", "subsample"]  # fetch: lsokl.data.fetch.fetch
