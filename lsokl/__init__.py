"""lsokl: large-scale online kernel learning, reproduced."""

__version__ = "0.1.0"

# Before any compiled module is imported: numba's cache folder follows the compiled sources
# (a loop compiled with an older version of an inlined helper is never loaded).
from . import compiled_cache as _compiled_cache  # noqa: E402

_compiled_cache.configure()
