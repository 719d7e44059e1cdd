"""Commands (filled in by their issue)."""
from . import app  # noqa: F401
