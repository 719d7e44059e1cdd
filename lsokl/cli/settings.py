"""`lsokl config`: show or set persistent settings (today: the data mirror)."""
from __future__ import annotations

from typing import Optional

import typer

from ..errors import LsoklError
from .app import app
from .output import make_console

console = make_console()


@app.command("config")
def config(
    name: Optional[str] = typer.Argument(None, help="setting to show or set: mirror"),
    value: Optional[str] = typer.Argument(None, help="new value (a folder or URL for mirror)"),
    unset: bool = typer.Option(False, "--unset", help="remove the setting (without NAME: every setting)"),
    keep: bool = typer.Option(False, "--keep", help="set only if not set yet (used by `make install`)"),
) -> None:
    """Show settings (no argument), show one (NAME) or set one (NAME VALUE), kept in the user
    config folder so later commands use them; an environment variable (LSOKL_DATA_MIRROR) wins.

    Example: `lsokl config mirror ../shared/data` makes every fetch and run offline-capable."""
    from ..packaged import SETTINGS, read_settings, setting, settings_path, write_setting

    try:
        if name is not None and name not in SETTINGS:
            write_setting(name, None)  # raises with the closest valid name
        if name is not None and (value is not None or unset):
            if keep and read_settings().get(name):
                console.print(f"{name} already set: {read_settings()[name]} (kept)", highlight=False)
                return
            path = write_setting(name, None if unset else value)
            console.print(f"{name} = {read_settings().get(name, '(unset)')}  (in {path})", highlight=False, markup=False)
            return
        if name is None and unset:  # `lsokl config --unset`: every setting
            for key in SETTINGS:
                path = write_setting(key, None)
            console.print(f"unset {', '.join(SETTINGS)}  (in {path})", highlight=False, markup=False)
            return
        stored = read_settings()
        for key in ([name] if name else SETTINGS):
            env, meaning = SETTINGS[key]
            source = (f"from ${env}" if setting(key) and setting(key) != stored.get(key)
                      else "from the settings file" if stored.get(key) else "not set")
            console.print(f"{key} = {setting(key) or ''}  ({source}; {meaning})", highlight=False)
        console.print(f"settings file: {settings_path()}", highlight=False)
    except LsoklError as exc:
        console.print(f"[bold red]error:[/bold red] {exc}", highlight=False)
        raise typer.Exit(2)
