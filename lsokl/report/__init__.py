"""Report: read the records of a results folder, aggregate over permutations, write tables in the
papers' layout (Markdown, CSV, LaTeX), optionally beside published numbers, and convergence plots."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import LsoklError
from ..results import ResultStore
from .aggregate import aggregate, attach_paper, records_frame
from .paper import available as available_papers
from .paper import load_table
from .plots import convergence_plots
from .tables import to_latex, to_markdown, wide_table

__all__ = ["Report", "build_report", "available_papers"]


@dataclass
class Report:
    out: Path
    markdown: dict[str, str] = field(default_factory=dict)  # task -> Markdown table
    tables: dict = field(default_factory=dict)  # task -> the wide table (DataFrame of strings)
    files: list[Path] = field(default_factory=list)
    n_records: int = 0


def build_report(results: str | Path, out: str | Path | None = None, *, paper: str | None = None,
                 compact: bool = False, plots: bool = True) -> Report:
    """Write ``table*.md|csv|tex``, ``summary.csv`` and ``plots/<dataset>.png|svg`` under
    ``out`` (default ``<results>/report``)."""
    results = Path(results)
    records = ResultStore(results).records()
    if not records:
        raise LsoklError(f"{results}: no records found (run `lsokl run CONFIG --results {results}` first)")
    out = Path(out) if out else results / "report"
    out.mkdir(parents=True, exist_ok=True)
    frame = records_frame(records)
    agg = aggregate(frame)
    order = None
    if paper:
        published = load_table(paper)
        agg = attach_paper(agg, published)
        order = list(dict.fromkeys(published["dataset"]))
    rep = Report(out=out, n_records=len(records))

    missing = _missing(results)
    note = ("\n\nNot run, dataset files absent (see missing.md): " + ", ".join(missing) + "\n"
            if missing else "")
    note += _model_form_note(records)
    (out / "missing.md").unlink(missing_ok=True)
    if missing:
        rep.files.append(_write(out / "missing.md", "# Datasets not run: files absent\n\n" + "".join(
            f"* **{n}** ({m.get('cells', '?')} cells): {m.get('message', '')}\n"
            for n, m in missing.items())))
    summary = agg.drop(columns=["params"]).assign(params=agg["params"])
    rep.files.append(_write(out / "summary.csv", summary.to_csv(index=False)))
    tasks = list(dict.fromkeys(agg["task"]))
    for task in tasks:
        table = wide_table(agg, task, with_paper=bool(paper), dataset_order=order)
        stem = "table" if len(tasks) == 1 else f"table-{task}"
        md = to_markdown(table)
        rep.markdown[task] = md
        rep.tables[task] = table
        cap = (f"{task} results: mean ± sample std over permutations, mean time per pass"
               + (f"; published values from {paper}, deviation in published stds" if paper else ""))
        rep.files += [_write(out / f"{stem}.md", md + note),
                      _write(out / f"{stem}.csv", table.to_csv(index=False)),
                      _write(out / f"{stem}.tex", to_latex(table, caption=cap, label=f"tab:{task}"))]
    if plots:
        rep.files += convergence_plots(frame, agg, out / "plots")
    if compact:
        rep.files += _compact(frame, out)
    return rep


def _missing(results: Path) -> dict:
    """The datasets `lsokl run` skipped because their files are absent (runner's missing.json)."""
    import json

    path = results / "missing.json"
    return json.loads(path.read_text()) if path.exists() else {}


def _model_form_note(records: list[dict]) -> str:
    """A line per (algorithm, dataset) whose model form was chosen by size (DSG's
    ``max_blocks: auto`` above its row limit runs the bounded form): the tables say so."""
    forms = {}
    for r in records:
        form = (r.get("holdout") or {}).get("model_form")
        if form and form.startswith("bounded (max_blocks: auto"):
            forms.setdefault((str(r.get("algorithm")), str(r.get("dataset"))), form)
    return "".join(f"\n\nModel form chosen by size: {a} on {d}: {f}." for (a, d), f in sorted(forms.items()))


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _compact(frame, out: Path) -> list[Path]:
    """All records in one file: parquet when pyarrow is there, CSV always."""
    files = [out / "records.csv"]
    frame.to_csv(files[0], index=False)
    try:
        frame.to_parquet(out / "records.parquet", index=False)
        files.append(out / "records.parquet")
    except ImportError:
        pass
    return files
