"""Runner: cells -> worker processes (joblib/loky, or Dask) -> one record per cell."""
from .backends import BACKENDS, default_jobs
from .run import Summary, run_experiment

__all__ = ["BACKENDS", "Summary", "default_jobs", "run_experiment"]
