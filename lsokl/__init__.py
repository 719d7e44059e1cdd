"""lsokl: large-scale online kernel learning, reproduced."""

__version__ = "0.1.0"
