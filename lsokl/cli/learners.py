"""`lsokl algorithms`: what can go in a config."""
from __future__ import annotations

from .app import app
from .output import format_option, make_console, print_table

KERNEL_NOTE = (
    "Kernel: k(x, x') = exp(-||x - x'||^2 / (2 sigma^2)) (the approximations take gamma = "
    "1 / (2 sigma^2)). sigma='scale' (the default in Python) is scikit-learn's gamma='scale': "
    "sigma = sqrt(n_features * X.var() / 2), computed from the data of the first fit / "
    "partial_fit / run and kept as the fitted attribute sigma_; a number is used as given. Every "
    "paper config states its sigma (the LSOKL tables: 8).")


@app.command("algorithms", help="List the registered learners per task, and the kernel "
             "approximations (MEKA paper; run by `protocol: approximation`, any task), with their "
             "parameters and defaults.\n\n" + KERNEL_NOTE)
def algorithms(fmt: str = format_option()) -> None:
    from ..learners import registry

    rows = []
    for (task, name), _ in sorted(registry.LEARNERS.items()):
        try:
            cls = registry.get(name, task)
            params = ", ".join(f"{k}={v!r}" for k, v in cls().get_params().items())
        except (ImportError, AttributeError) as exc:  # a module not written yet
            params = f"[red]unavailable: {exc}[/red]"
        rows.append((task, name, params))
    for name in sorted(registry.APPROXIMATIONS):
        try:
            cls = registry.get(name, "approximation")
            params = ", ".join(f"{k}={v!r}" for k, v in cls().get_params().items())
        except (ImportError, AttributeError) as exc:
            params = f"unavailable: {exc}"
        rows.append(("approximation", name, params))
    console = make_console()
    print_table(console, "registered learners",
                [("task", {}), ("name", {}), ("parameters (defaults)", {})], rows, fmt)
    if fmt.lower() == "table":
        console.print(KERNEL_NOTE, highlight=False, markup=False)
