"""`lsokl algorithms`: what can go in a config."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table

from . import app


@app.command("algorithms")
def algorithms() -> None:
    """List the registered learners per task, and the kernel approximations (MEKA paper; run by
    `protocol: approximation`, any task), with their parameters and defaults."""
    from ..learners import registry

    table = Table(title="registered learners")
    for col in ("task", "name", "parameters (defaults)"):
        table.add_column(col)
    for (task, name), _ in sorted(registry.LEARNERS.items()):
        try:
            cls = registry.get(name, task)
            params = ", ".join(f"{k}={v!r}" for k, v in cls().get_params().items())
        except (ImportError, AttributeError) as exc:  # a module not written yet
            params = f"[red]unavailable: {exc}[/red]"
        table.add_row(task, name, params)
    for name in sorted(registry.APPROXIMATIONS):
        try:
            cls = registry.get(name, "approximation")
            params = ", ".join(f"{k}={v!r}" for k, v in cls().get_params().items())
        except (ImportError, AttributeError) as exc:
            params = f"unavailable: {exc}"
        table.add_row("approximation", name, params)
    Console().print(table)
