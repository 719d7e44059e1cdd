"""The ``lsokl`` command line: thin wrappers that parse arguments and call the library."""
from __future__ import annotations

from .app import app, main
from . import data as _data  # noqa: E402,F401  (registers `fetch`, `datasets`)
from . import experiments as _experiments  # noqa: E402,F401  (registers `run`, `report`)
from . import learners as _learners  # noqa: E402,F401  (registers `algorithms`)
from . import reproduce as _reproduce  # noqa: E402,F401  (registers `reproduce`)
from . import settings as _settings  # noqa: E402,F401  (registers `config`)
from . import site as _site  # noqa: E402,F401  (registers `site`)

__all__ = ["app", "main"]
