"""The machine a timing was taken on, printed beside every timing of a reproduction (they come from
a shared machine)."""
from __future__ import annotations


def machine_load() -> str:
    """CPU count, model and load average, printed beside every timing (they come from a shared machine)."""
    import os
    import platform
    import subprocess

    model = platform.processor() or "?"
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    try:
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "?"
    return f"{os.cpu_count()} CPUs ({model}), load average {load} (1, 5, 15 min)"
