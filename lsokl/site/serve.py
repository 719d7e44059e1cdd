"""``lsokl site --serve``: the built site over HTTP on 127.0.0.1 (the standard library's server;
the site needs no server, this is only for a quick look from another tab or tool)."""
from __future__ import annotations

import functools
import http.server
from pathlib import Path


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass


def server(folder: Path, port: int = 8000) -> http.server.ThreadingHTTPServer:
    """A server of ``folder`` bound to 127.0.0.1:``port`` (0: any free port); call
    ``serve_forever()`` on it, ``shutdown()`` from another thread to stop."""
    handler = functools.partial(_Quiet, directory=str(folder))
    return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
