"""`lsokl fetch` and `lsokl datasets`: parse arguments, call lsokl.data, print."""
from __future__ import annotations

from typing import Optional

import typer
from rich.console import Console

from ..errors import LsoklError
from .app import app
from .output import format_option, make_console, print_table



def _consoles() -> tuple[Console, Console]:
    # created per call, not at import, so the terminal width (COLUMNS) is read when the command runs
    # not cut to 80 columns when the output is a pipe or a log (lsokl.cli.output)
    return make_console(), make_console(stderr=True)


@app.command("fetch")
def fetch(
    names: Optional[list[str]] = typer.Argument(
        None, metavar="NAME...", help="Registered dataset names or aliases (see `lsokl datasets`)."),
    mirror: Optional[str] = typer.Option(
        None, "--mirror", envvar="LSOKL_DATA_MIRROR", metavar="URL_OR_DIR",
        help="Get files from a mirror instead of the upstream hosts: a local folder laid out like the shared data "
             "folder (files are verified in place) or an http(s) base URL joined with each file's mirror path."),
    no_mirror: bool = typer.Option(False, "--no-mirror", help="Download from the upstream hosts even when a "
                                   "mirror is set (LSOKL_DATA_MIRROR or `lsokl config mirror`)."),
    all_: bool = typer.Option(False, "--all", help="Fetch every registered dataset (continues past failures)."),
    split: Optional[list[str]] = typer.Option(
        None, "--split", help="Only these splits (train, test); each becomes required. "
                              "Default: train, plus test when its file exists."),
    force: bool = typer.Option(False, "--force", help="Re-download and re-parse even if cached."),
    retries: int = typer.Option(3, "--retries", min=0, help="Retries per file after a network or hash failure."),
    timeout: float = typer.Option(60.0, "--timeout", min=1.0, help="Seconds without data before a download fails."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars."),
    pin: bool = typer.Option(
        False, "--pin", help="Write the sha256 of files the registry has no hash for (sha256: null) into the user "
                             "registry $LSOKL_REGISTRY, so later fetches verify them (comments and layout are kept)."),
    verify: bool = typer.Option(
        False, "--verify", help="Check every cached array's full sha256 against the one recorded when it was cached "
                                "(every read checks sizes, dtypes and a sample of the bytes; "
                                "LSOKL_VERIFY_CACHE=1 makes every read check the sha256 too)."),
) -> None:
    """Download, verify (sha256), parse and cache datasets as memory-mapped .npy arrays.

    The cache folder is $LSOKL_DATA_DIR (default: the platform's user cache folder). Already cached datasets are
    not downloaded again. Run this before `lsokl run`: workers only read the cache.

    LIBSVM and CSV text (plain, gz, bz2, xz, zip) is parsed in chunks and cached as it goes, so memory stays
    bounded (about 0.3-0.6 GB) whatever the file's size; a registry `dtype: float32` or `auto` halves the cache.
    An archive expanding past a bound derived from the registry's n x d (or the $LSOKL_MAX_DECOMPRESSED cap) is
    stopped; a full disk is one line naming the cache folder and its free space. A killed fetch leaves nothing
    half-cached (the next fetch clears its leftovers).

    Examples: `lsokl fetch a9a w7a`, `lsokl fetch --all --mirror ../shared/data`.
    """
    import warnings

    from ..data import registry
    from ..data.fetch import NO_MIRROR, UnverifiedFileWarning
    from ..data.fetch import fetch as do_fetch
    from ..data.pin import pin as pin_hashes

    console, err_console = _consoles()
    try:
        targets = list(registry.specs()) if all_ else list(names or [])
        if not targets:
            err_console.print("[bold red]error:[/bold red] name at least one dataset, or pass --all "
                              "(see `lsokl datasets`)")
            raise typer.Exit(2)
        specs = [registry.get(n) for n in targets]  # unknown names fail before any download
    except LsoklError as exc:
        err_console.print(f"[bold red]error:[/bold red] {exc}", highlight=False)
        raise typer.Exit(2) from None

    failures = 0
    for spec in specs:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UnverifiedFileWarning)  # printed below, once, from res.warnings
                res = do_fetch(spec.name, mirror=NO_MIRROR if no_mirror else mirror, splits=split or None, force=force, retries=retries,
                               timeout=timeout, progress=not quiet)
            for line in res.warnings:
                err_console.print(f"[yellow]warning:[/yellow] {line}", highlight=False)
            if verify:
                for s in (*res.fetched, *res.cached):
                    _verify_cached(spec.name, s)
                    console.print(f"verified {spec.name} {s}: every array's sha256 is the one recorded", highlight=False)
            if pin:
                where, pinned = pin_hashes(spec.name)
                for p in pinned:
                    console.print(f"pinned {spec.name} {p.split} {p.mirror}: {p.key}: {p.sha256} in {where}",
                                  highlight=False)
        except (LsoklError, MemoryError, OSError) as exc:
            failures += 1
            what = str(exc) if isinstance(exc, LsoklError) else f"{type(exc).__name__}: {exc}"
            err_console.print(f"[bold red]error:[/bold red] {spec.name}: {what}", highlight=False)
            if not all_:
                break
            continue
        done = ", ".join(f"{s} fetched" for s in res.fetched) or ""
        cached = ", ".join(f"{s} already cached" for s in res.cached)
        console.print(f"[green]ok[/green] {spec.name}: {', '.join(x for x in (done, cached) if x)}", highlight=False)
        for s, why in res.skipped.items():
            console.print(f"  [yellow]note[/yellow] {s} split not available: {why}", highlight=False)
    if failures:
        raise typer.Exit(1)


def _verify_cached(name: str, split: str) -> None:
    """The full check of a cached split (sizes, dtypes, sample and full sha256); DataError names what differs."""
    from ..data import cache
    from ..errors import DataError

    meta = cache.read_meta(name, split)
    if meta is None:
        raise DataError(f"split {split!r} is not cached")
    cache.verify_split(name, split, meta, full=True)


_SOURCE_LABELS = {
    "lsokl-mat": "LSOKL authors' .mat",
    "libsvm": "LIBSVM",
    "uci": "UCI",
    "mlbench": "UCI (R mlbench CSV)",
}


@app.command("datasets")
def datasets(
    task: Optional[str] = typer.Option(None, "--task", help="Only this task: binary, multiclass or regression."),
    fmt: str = format_option(),
) -> None:
    """List the registered and built-in datasets: task, n, d, source, mirror file and cache status.

    Source: "LSOKL authors' .mat" = the authors' own file, with their 20 permutations (how the paper's numbers
    were made); LIBSVM / UCI = those sites' data; "UCI (R mlbench CSV)" = raw UCI values converted from an R
    package (mirror only); scikit-learn / generated = built-in, nothing to fetch. n is the train split (+ the test
    split when there is one; `load(name, split="test" | "all")`).
    """
    from ..data import builtin, cache, registry

    console, err_console = _consoles()
    try:
        specs = registry.specs()
    except LsoklError as exc:
        err_console.print(f"[bold red]error:[/bold red] {exc}", highlight=False)
        raise typer.Exit(2) from None
    columns = [("name", {"style": "bold", "no_wrap": True}), ("aliases", {}), ("task", {}), ("n", {"justify": "right"}),
               ("d", {"justify": "right"}), ("classes", {"justify": "right"}), ("source", {}),
               ("mirror file(s)", {}), ("cached", {})]
    rows = []
    for name, spec in specs.items():
        if task and spec.task != task:
            continue
        n = spec.splits["train"].n
        n_text = f"{n:,}" if n else "?"
        if "test" in spec.splits and spec.splits["test"].n:
            n_text += f" + {spec.splits['test'].n:,}"
        status = [s for s in spec.splits if cache.is_complete(name, s, spec.spec_hash)]
        rows.append((name, ", ".join(spec.aliases), spec.task, n_text, str(spec.d or "?"),
                     str(spec.classes or ""), _SOURCE_LABELS.get(spec.source, spec.source), "\n".join(spec.mirror_paths),
                     "[green]" + ", ".join(status) + "[/green]" if status else "[dim]no[/dim]"))
    for name, (fn, btask, source) in builtin.BUILTINS.items():
        if task and btask != task:
            continue
        rows.append((name, "", btask, "", "", "", source, "", "[dim]built-in[/dim]"))
    print_table(console, f"datasets (cache: {cache.root()})", columns, rows, fmt)
