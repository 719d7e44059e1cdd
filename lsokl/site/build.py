"""``lsokl site``: a static, offline site of every reproduction, generated from the committed
results and the item declarations (the same sources as ``REPRODUCTIONS.md``).

Pages: ``index.html`` (the four papers, every item with status, provenance, declared and strict
counts, claim verdict; filters by paper and status), ``items/<paper>-<item>.html`` (the comparison
table in the paper's layout, coloured by the item's tolerance rule, with Delta/sigma; the committed
plots; the notes; the config, datasets with provenance, machine and time, and the re-run command)
and ``learners/<name>.html`` (family, papers, tasks, parameters with defaults from the registry).

HTML is written with f-strings and :func:`html.escape` (a template engine would be one more
dependency for five page shapes); Markdown (NOTES.md, the generated tables) is rendered with
markdown-it-py, which rich already depends on. Plots are the committed images, copied (SVG when it
is not much larger than the PNG beside it, else the PNG); SVGs lose matplotlib's metadata and the
digits past 0.01 pt, and a plot saved twice is copied once, so that the site stays small (today's
results: under 8 MB, built in about 15 s on 2 cores). A small regex minifier rather than a library
(scour and the like): the three changes above are all the site needs.
"""
from __future__ import annotations

import functools
import hashlib
import html
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional

from ..papers import PROVENANCE, STATUSES, Item, items
from . import cells as C
from .static import CSS, JS

#: where ``lsokl site`` writes by default (git-ignored, like every ``runs/`` folder)
DEFAULT_OUT = Path("runs") / "site"
IMAGE_EXT = (".svg", ".png")
#: the file that marks a folder as a site lsokl built (so a rebuild may replace it)
MARK = ".lsokl-site"
#: an SVG is kept when it is at most this many times its PNG's size (else the PNG is copied)
SVG_OVER_PNG = 1.5
#: text files a note links to are copied when smaller than this; larger ones are not linked
MAX_LINKED = 512 * 1024


def page_name(item: Item) -> str:
    return "items/" + item.id.replace(":", "-") + ".html"


def learner_page(name: str) -> str:
    return "learners/" + re.sub(r"[^A-Za-z0-9_.-]", lambda m: f"_{ord(m.group()):x}", name) + ".html"


#: a coordinate's digits past the second decimal (dropped: 0.01 pt is far below a pixel)
_SVG_DIGITS = re.compile(r"(\.\d\d)\d+")
_SVG_SPACE = re.compile(r"\s+")
#: matplotlib's generated ids and the references to them (``id="m777ec2ac8d"``, ``href="#m77..."``, ``url(#p1f...)``)
_SVG_IDS = re.compile(r'(\bid="[^"]*"|href="#[^"]*"|url\(#[^)]*\))')
_SVG_GEOMETRY = re.compile(r'(\bd|\bx|\by|\bpoints)="([^"]*)"')


def _geometry(m: re.Match) -> str:
    return f'{m.group(1)}="' + _SVG_SPACE.sub(" ", _SVG_DIGITS.sub(r"\1", m.group(2))).strip() + '"'


def minify_svg(text: str) -> str:
    """A matplotlib SVG, smaller: no metadata block, coordinates (path data, x, y) cut to 0.01 pt,
    indentation dropped. Transforms and styles are left as they are (glyph scales are small
    numbers that cutting would break)."""
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)
    text = _SVG_GEOMETRY.sub(_geometry, text)
    return re.sub(r"\n\s+", "\n", text)


def esc(text) -> str:
    return html.escape(str(text), quote=True)


# ----------------------------------------------------------------------------- the build
@dataclass
class Site:
    root: Path
    out: Path
    copied: dict = field(default_factory=dict)  # repo-relative path -> site-relative path
    pages: list = field(default_factory=list)
    drawings: dict = field(default_factory=dict)  # an SVG's drawing (ids aside) -> its site-relative path

    def asset(self, rel: str) -> str:
        """Copy ``root/rel`` into ``out/assets/rel`` once; the site-relative path. An SVG that
        draws the same as one copied already (the same plot saved twice, e.g. report/plots/ and
        figures/convergence/, which differ only in matplotlib's random ids) is not copied again."""
        if rel not in self.copied:
            dest = self.out / "assets" / rel
            if dest.suffix == ".svg":
                text = minify_svg((self.root / rel).read_text(encoding="utf-8"))
                key = hashlib.sha256(_SVG_IDS.sub("", text).encode()).hexdigest()
                if key in self.drawings:
                    self.copied[rel] = self.drawings[key]
                    return self.copied[rel]
                self.drawings[key] = f"assets/{rel}"
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_text(text, encoding="utf-8")
            else:
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(self.root / rel, dest)
            self.copied[rel] = f"assets/{rel}"
        return self.copied[rel]

    def write(self, rel: str, title: str, body: str, depth: int, script: str = "") -> None:
        up = "../" * depth
        text = (f"<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                f"<title>{esc(title)} · lsokl reproductions</title><link rel=\"stylesheet\" href=\"{up}style.css\"></head>\n<body>"
                f"<header class=\"top\"><a class=\"brand\" href=\"{up}index.html\">lsokl reproductions</a>"
                f"<a href=\"{up}index.html#items\">items</a><a href=\"{up}learners/index.html\">learners</a></header>\n"
                f"<main>{body}</main>" + (f"<script>{script}</script>" if script else "") + "</body></html>\n")
        path = self.out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        self.pages.append(rel)


def build(root: Path = Path("."), out: Optional[Path] = None) -> Path:
    """Write the site for the results under ``root`` into ``out`` (default ``root/runs/site``),
    replacing what was there; returns the index page."""
    root = Path(root).resolve()
    out = Path(out) if out is not None else root / DEFAULT_OUT
    out = out.resolve()
    if out.exists():
        if not out.is_dir() or (not (out / MARK).exists() and any(out.iterdir())):
            from ..errors import LsoklError

            raise LsoklError(f"--out {out}: exists and is not a site lsokl built (no {MARK}); give an empty or new folder")
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / MARK).write_text("written by `lsokl site`; replaced on each build\n")
    (out / "style.css").write_text(CSS, encoding="utf-8")
    site = Site(root, out)
    rows = C.rows(root)
    learners = _learners()
    uses = _uses(rows)
    for row in rows:
        _item_page(site, row, learners)
    _learner_pages(site, learners, uses)
    _index(site, rows)
    return out / "index.html"


# ----------------------------------------------------------------------------- index
def _status_badge(status: str) -> str:
    return f"<span class=\"badge st-{esc(status)}\" title=\"{esc(STATUSES[status])}\">{esc(status)}</span>"


def _claim_badge(row: C.Row) -> str:
    cls = {True: "claim-yes", False: "claim-no", None: "claim-none"}[row.claim]
    word = {True: "held", False: "not held", None: "no verdict" if row.item.runnable else "—"}[row.claim]
    return f"<span class=\"badge {cls}\">{word}</span>"


def _datasets(item: Item) -> str:
    return " ".join(f"<span class=\"badge pv-{esc(d.provenance)}\" title=\"{esc(PROVENANCE[d.provenance])}"
                     f"{': ' + esc(d.note) if d.note else ''}\">{esc(d.label())}</span>" for d in item.datasets) or "—"


def _index(site: Site, rows: list[C.Row]) -> None:
    papers = C.papers()
    statuses = sorted({r.item.status for r in rows}, key=list(STATUSES).index)
    counts = {s: sum(r.item.status == s for r in rows) for s in statuses}
    held = sum(r.claim is True for r in rows)
    judged = sum(r.claim is not None for r in rows)
    body = ["<h1>Reproductions of four kernel-learning papers</h1>",
            f"<p class=\"sub\">{len(rows)} declared tables and figures; "
            + ", ".join(f"{n} {esc(s)}" for s, n in counts.items())
            + f"; headline claim held on {held} of {judged} judged items. Generated by <code>lsokl site</code> from "
              "the committed results and the declarations in <code>lsokl/papers/</code> (the same sources as "
              "REPRODUCTIONS.md).</p>",
            "<p class=\"sub\"><b>declared</b>: cells within the item's own tolerance rule, of the cells it applies "
            "to. <b>strict</b>: cells within 2 published std, or 1.5 points where the published std is below 0.75 "
            "(percentages only), of every cell with a published value. <b>claim</b>: the paper's headline claim, "
            "checked on lsokl's numbers.</p>",
            "<div class=\"filters\" id=\"items\"><label for=\"f-paper\">paper</label><select id=\"f-paper\">"
            "<option value=\"\">all</option>"
            + "".join(f"<option value=\"{esc(p)}\">{esc(p)}</option>" for p in papers)
            + "</select><label for=\"f-status\">status</label><select id=\"f-status\"><option value=\"\">all</option>"
            + "".join(f"<option value=\"{esc(s)}\">{esc(s)}</option>" for s in statuses)
            + "</select><span class=\"count\" id=\"f-count\"></span></div>"]
    for paper, title in papers.items():
        its = [r for r in rows if r.item.paper == paper]
        body.append(f"<section data-paper=\"{esc(paper)}\"><h2 id=\"{esc(paper)}\">{esc(paper)}: {esc(title)}</h2>"
                    "<div class=\"wrap\"><table><thead><tr><th>item</th><th>status</th><th>datasets (provenance)</th>"
                    "<th class=\"num\">declared</th><th class=\"num\">strict</th><th>claim</th><th>verdict</th>"
                    "</tr></thead><tbody>")
        for r in its:
            it = r.item
            body.append(f"<tr data-paper=\"{esc(paper)}\" data-status=\"{esc(it.status)}\">"
                        f"<td><a href=\"{page_name(it)}\">{esc(it.title)}</a><br><code>{esc(it.id)}</code></td>"
                        f"<td>{_status_badge(it.status)}</td><td>{_datasets(it)}</td>"
                        f"<td class=\"num\">{esc(r.declared)}</td><td class=\"num\">{esc(r.strict)}</td>"
                        f"<td>{_claim_badge(r)}</td><td>{esc(r.verdict)}</td></tr>")
        body.append("</tbody></table></div></section>")
    body.append("<h2>Legend</h2><p>Status: " + "; ".join(f"{_status_badge(k)} {esc(v)}" for k, v in STATUSES.items())
                + ".</p><p>Dataset provenance: " + "; ".join(
                    f"<span class=\"badge pv-{esc(k)}\">{esc(k)}</span> {esc(v)}" for k, v in PROVENANCE.items()) + ".</p>")
    site.write("index.html", "Index", "\n".join(body), depth=0, script=JS)


# ----------------------------------------------------------------------------- item pages
def _fmt(v: Optional[float]) -> str:
    if v is None:
        return "—"
    a = abs(v)
    if a == 0:
        return "0"
    if a >= 100:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.4g}"


def _pm(v: float, std: Optional[float]) -> str:
    """``v ± std`` with the std printed to the mean's decimals (as the paper's tables)."""
    text = _fmt(v)
    if std is None:
        return text
    decimals = len(text.split(".")[1]) if "." in text and "e" not in text else 0
    return f"{text} ± {std:.{decimals}f}" if decimals or abs(v) >= 1 else f"{text} ± {_fmt(std)}"


def _cell_html(c: C.Cell) -> str:
    cls = C.shade(c) + ("" if c.counted else " indicative")
    ours = _pm(c.ours, c.ours_std)
    if c.paper is None:
        return f"<td class=\"num {cls}\" title=\"no published value\"><span class=\"ours\">{esc(ours)}</span></td>"
    paper = _pm(c.paper, c.paper_std)
    ds = c.delta_sigma
    dist = "" if c.distance is None else f"; |Δ| = {c.distance:.2f} × tolerance ({c.tolerance})"
    word = {True: "within", False: "outside", None: "no verdict"}[c.within]
    extra = "" if c.counted else "; indicative only (not counted: not the paper's file or split)"
    title = f"{word}: Δ = {c.delta:+.4g}{dist}{extra}"
    return (f"<td class=\"num {cls}\" title=\"{esc(title)}\"><span class=\"ours\">{esc(ours)}</span>"
            f"<span class=\"paper\">paper {esc(paper)}</span>"
            f"<span class=\"ds\">Δ {_signed(c.delta, ours)}" + (f" · Δ/σ {ds:+.1f}" if ds is not None else "")
            + "</span></td>")


def _signed(delta: float, like: str) -> str:
    """Delta to the decimals of our printed value (``like``)."""
    head = like.split(" ")[0]
    decimals = len(head.split(".")[1]) if "." in head and "e" not in head else 0
    return f"{delta:+.{decimals}f}" if decimals or abs(delta) >= 1 else f"{delta:+.3g}"


def _comparison(found: list[C.Cell], order: list[str]) -> str:
    rows_, cols, at = C.grid(found, order)
    unit = found[0].unit
    head = "".join(f"<th>{esc(c)}</th>" for c in cols)
    body = []
    for r in rows_:
        body.append(f"<tr><th>{esc(r)}</th>" + "".join(
            _cell_html(at[(r, c)]) if (r, c) in at else "<td class=\"na\"></td>" for c in cols) + "</tr>")
    n_in = sum(c.within is True and c.counted for c in found)
    n_of = sum(c.within is not None and c.counted for c in found)
    legend = ("<p class=\"legend\"><span class=\"in\" style=\"background:var(--in)\">within the tolerance</span>"
              "<span style=\"background:var(--near)\">outside, within twice it</span>"
              "<span style=\"background:var(--out)\">beyond twice it</span>"
              "<span style=\"background:var(--na)\">no verdict (no published value or no rule)</span>"
              "<span style=\"opacity:.6;font-style:italic\">indicative (not counted)</span></p>")
    unit = f"; unit: {esc(unit)}" if unit else ""
    return (f"<p>Ours (bold, ± our std over the repetitions) beside the published value{unit}. {n_in} of {n_of} counted cells within "
            f"the tolerance; hover a cell for its distance in tolerance units.</p>" + legend
            + f"<div class=\"wrap\"><table class=\"cmp\"><thead><tr><th></th>{head}</tr></thead><tbody>"
            + "".join(body) + "</tbody></table></div>")


def _layout_files(item: Item, folder: Path) -> list[Path]:
    """The files the item's ``layout`` names (``report/table.md|csv``, ``fig3-rho_f-<dataset>.png|svg``,
    ``report/plots/``), in the order named, that exist."""
    found: list[Path] = []
    for piece in re.split(r"[,;]", item.layout):
        words = piece.strip().split()
        if not words:
            continue
        token = words[0]
        if token.endswith("/"):
            if (folder / token).is_dir():
                found += sorted(p for p in (folder / token).rglob("*") if p.is_file())
            continue
        m = re.match(r"^(.*?)\.([A-Za-z|]+)$", token)
        names = [f"{m.group(1)}.{e}" for e in m.group(2).split("|")] if m else [token]
        for name in names:
            pattern = re.sub(r"<[^>]+>", "*", name)
            found += sorted(folder.glob(pattern)) if "*" in pattern else ([folder / name] if (folder / name).is_file() else [])
    seen, out = set(), []
    for p in found:
        if p not in seen and p.is_file():
            seen.add(p)
            out.append(p)
    return out


def _images(site: Site, files: list[Path]) -> list[tuple[str, str]]:
    """One image per plot: the SVG unless it is much larger than the PNG beside it."""
    stems: dict[Path, dict] = {}
    for p in files:
        if p.suffix in IMAGE_EXT:
            stems.setdefault(p.with_suffix(""), {})[p.suffix] = p
    out = []
    for _, by in stems.items():
        svg, png = by.get(".svg"), by.get(".png")
        pick = svg if svg and (not png or svg.stat().st_size <= SVG_OVER_PNG * png.stat().st_size) else png
        rel = pick.relative_to(site.root).as_posix()
        out.append((site.asset(rel), rel))
    return out


_MD = None


def _markdown():
    global _MD
    if _MD is None:
        from markdown_it import MarkdownIt

        _MD = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
    return _MD


_LINK = re.compile(r'(href|src)="([^"]*)"')


def _render_md(site: Site, path: Path, depth: int, item_pages: dict) -> str:
    """A Markdown file as HTML; its relative links point into the site (item pages for results
    folders, copied files for small files) or are dropped when the target is not in the site."""
    text = _markdown().render(path.read_text(encoding="utf-8", errors="replace"))
    up = "../" * depth

    def fix(m):
        attr, url = m.group(1), html.unescape(m.group(2))
        if re.match(r"^[a-z][a-z0-9+.-]*:", url) or url.startswith("#"):
            return m.group(0)
        target, _, anchor = url.partition("#")
        try:
            rel = (path.parent / target).resolve().relative_to(site.root).as_posix()
        except ValueError:
            return f'data-dropped="{esc(url)}"'
        if rel in item_pages:
            return f'{attr}="{up}{item_pages[rel]}"'
        full = site.root / rel
        if full.is_file() and full.stat().st_size <= MAX_LINKED:
            return f'{attr}="{up}{site.asset(rel)}"' if not anchor else f'{attr}="{up}{site.asset(rel)}#{esc(anchor)}"'
        return f'data-dropped="{esc(url)}"'

    return _LINK.sub(fix, text)


def _config_text(name: str) -> tuple[str, str]:
    from ..packaged import resolve_config

    try:
        path = resolve_config(name)
    except Exception as exc:  # noqa: BLE001 - a config being written elsewhere: say so on the page
        return name, f"(not found: {exc})"
    return name, path.read_text(encoding="utf-8")


@functools.lru_cache(maxsize=None)
def _config_algorithms(name: str) -> tuple[str, ...]:
    """The registry names a shipped config runs (for the links to the learner pages)."""
    import yaml

    from ..packaged import resolve_config

    try:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        raw = yaml.load(resolve_config(name).read_text(encoding="utf-8"), Loader=loader) or {}
    except Exception:  # noqa: BLE001
        return ()
    algos = raw.get("algorithms") or {}
    if isinstance(algos, list):
        return tuple(str(a) for a in algos)
    return tuple(str(spec.get("learner") or label) if isinstance(spec, dict) else str(label)
                 for label, spec in algos.items())


def _machine(item: Item, folder: Path, md_files: Iterable[Path], root: Path) -> str:
    parts = []
    m = folder / "machine.txt"
    if m.is_file():
        parts.append(f"<pre>{esc(m.read_text(encoding='utf-8', errors='replace').strip())}</pre>")
    runs = []
    for p in md_files:
        for para in p.read_text(encoding="utf-8", errors="replace").split("\n\n"):
            flat = " ".join(para.split())
            if "UTC" in flat and re.search(r"\b(run|re-run|measured)\b", flat, re.I):
                flat = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", flat)  # links out of the excerpt: its text stays
                runs.append((p.name, flat[:360] + ("…" if len(flat) > 360 else "")))
    if runs:
        parts.append("<ul>" + "".join(f"<li><b>{esc(n)}</b>: {_markdown().renderInline(t)}</li>" for n, t in runs[:6])
                     + "</ul>")
    when = _git_date(root, item.folder)
    if when:
        parts.append(f"<p>Committed results last changed: {esc(when)} (git).</p>")
    return "".join(parts) or "<p>Not recorded in the committed folder.</p>"


def _registry_entry(name: str) -> str:
    """Source, rows, features and where the file comes from, as the dataset registry declares them."""
    from ..data import builtin, registry

    if name in getattr(builtin, "BUILTINS", {}):
        return "built in (generated or shipped with scikit-learn; no file)"
    try:
        spec = registry.get(name)
    except Exception:  # noqa: BLE001 - not registered (a file that is not public): the note says so
        return "not in the registry"
    rows = ", ".join(f"{split} {s.n:,}" for split, s in spec.splits.items() if s.n)
    urls = [f.url for s in spec.splits.values() for f in s.files if f.url]
    where = (f"<a href=\"{esc(urls[0])}\">{esc(urls[0].rsplit('/', 1)[-1])}</a>" if urls
             else esc(", ".join(spec.mirror_paths)))
    return (f"{esc(spec.source)}: {where}; {esc(rows)} rows" + (f", d = {spec.d:,}" if spec.d else "")
            + (f", {esc(spec.task)}" if spec.task else ""))


def _git_date(root: Path, rel: str) -> str:
    try:
        res = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%cd", "--date=format:%Y-%m-%d %H:%M %z",
                              "--", rel], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return res.stdout.strip() if res.returncode == 0 else ""


def _item_page(site: Site, row: C.Row, learners: dict) -> None:
    item = row.item
    up = "../"
    folder = site.root / item.folder if item.folder else None
    item_pages = {}
    for it in items().values():  # a results folder links to the first item that lives in it
        if it.folder:
            item_pages.setdefault(it.folder, page_name(it))
    body = [f"<p class=\"sub\"><a href=\"{up}index.html#{esc(item.paper)}\">{esc(item.paper)}</a> · "
            f"<code>{esc(item.id)}</code></p>", f"<h1>{esc(item.title)}</h1>"]
    toc = ["<a href=\"#table\">table</a>", "<a href=\"#plots\">plots</a>", "<a href=\"#notes\">notes</a>",
           "<a href=\"#config\">config</a>", "<a href=\"#data\">data</a>", "<a href=\"#machine\">machine and time</a>",
           "<a href=\"#rerun\">re-run</a>"]
    if item.kind == "figure":
        toc[0], toc[1] = toc[1], toc[0]
    if item.runnable:  # the sections below exist only for an item that runs
        body.append("<nav class=\"toc\">" + "".join(toc) + "</nav>")
    meta = [("status", f"{_status_badge(item.status)} {esc(STATUSES[item.status])}"),
            ("headline claim", esc(item.claim or "—")),
            ("verdict", f"{_claim_badge(row)} {esc(row.verdict)}"),
            ("declared", esc(row.declared)), ("strict", esc(row.strict))]
    if item.tolerance:
        meta.append(("tolerance", f"{esc(item.tolerance.rule)}. <i>Why:</i> {esc(item.tolerance.reason)}."))
    if item.folder:
        meta.append(("folder", f"<code>{esc(item.folder)}/</code>"))
    body.append("<dl class=\"meta\">" + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in meta) + "</dl>")
    if not item.runnable:
        body.append(f"<p>{esc(item.status)}: {esc(item.reason)}</p>")
        site.write(page_name(item), item.title, "\n".join(body), depth=1)
        return
    files = _layout_files(item, folder) if folder and folder.is_dir() else []
    main_body, body = body, []
    # --- table
    body.append("<h2 id=\"table\">Table</h2>")
    try:
        found = C.cells(item, site.root)
    except (KeyError, ValueError, AttributeError, TypeError) as exc:  # a results file of another shape: say so
        found = []
        body.append(f"<p>The comparison file of <code>{esc(item.folder)}</code> could not be read "
                    f"({esc(type(exc).__name__)}: {esc(exc)}); the committed tables follow.</p>")
    if found:
        body.append(_comparison(found, [d.name for d in item.datasets]))
    md_files = [p for p in files if p.suffix == ".md"]
    extra = [folder / n for n in ("NOTES.md", "README.md") if folder and (folder / n).is_file()]
    shown = set()
    for p in md_files:
        if p in extra:
            continue
        text = p.read_text(encoding="utf-8", errors="replace")
        if text in shown:
            continue
        shown.add(text)
        body.append(f"<h3>{esc(p.relative_to(site.root).as_posix())}</h3><div class=\"md\">"
                    f"{_render_md(site, p, 1, item_pages)}</div>")
    if not found and not md_files:
        body.append("<p>No table: a figure (see its plots).</p>")
    data_files = [p for p in files if p.suffix in (".csv", ".json", ".tex", ".txt") and p.stat().st_size <= MAX_LINKED]
    if data_files:
        body.append("<p>Data files: " + ", ".join(
            f"<a href=\"{up}{site.asset(p.relative_to(site.root).as_posix())}\">{esc(p.relative_to(folder).as_posix())}</a>"
            for p in data_files) + "</p>")
    table, body = body, []
    # --- plots
    body.append("<h2 id=\"plots\">Plots</h2>")
    imgs = _images(site, files)
    if imgs:
        body.append("<p>The committed plots (published values marked where the paper prints them).</p><div class=\"figs\">"
                    + "".join(f"<figure><a href=\"{up}{esc(a)}\"><img src=\"{up}{esc(a)}\" alt=\"{esc(Path(rel).name)}\">"
                              f"</a><figcaption>{esc(rel)}</figcaption></figure>" for a, rel in imgs) + "</div>")
    else:
        body.append("<p>No plot for this item.</p>")
    plots = body
    body = main_body + (plots + table if item.kind == "figure" else table + plots)  # a figure's plots first
    # --- notes
    body.append("<h2 id=\"notes\">Notes</h2>")
    if extra:
        for p in extra:
            body.append(f"<h3>{esc(p.relative_to(site.root).as_posix())}</h3><div class=\"md\">"
                        f"{_render_md(site, p, 1, item_pages)}</div>")
    else:
        body.append("<p>No NOTES.md in the folder.</p>")
    # --- config
    body.append("<h2 id=\"config\">Config</h2>")
    names = []
    for cfg in item.configs:
        n, text = _config_text(cfg)
        names += _config_algorithms(cfg)
        body.append(f"<h3><code>lsokl/configs/{esc(n)}.yaml</code></h3><pre>{esc(text)}</pre>")
    links = [n for n in dict.fromkeys(names) if n in learners]
    if links:
        body.append("<p>Learners: " + ", ".join(f"<a href=\"{up}{learner_page(n)}\">{esc(n)}</a>" for n in links) + "</p>")
    # --- data
    body.append("<h2 id=\"data\">Data and provenance</h2><div class=\"wrap\"><table><thead><tr><th>dataset</th>"
                "<th>provenance</th><th>paper's name</th><th>note</th><th>file (lsokl's registry)</th></tr></thead><tbody>"
                + "".join(f"<tr><td>{esc(d.name)}</td><td><span class=\"badge pv-{esc(d.provenance)}\">{esc(d.provenance)}"
                          f"</span></td><td>{esc(d.paper or '')}</td><td>{esc(d.note)}</td><td>{_registry_entry(d.name)}</td></tr>"
                          for d in item.datasets)
                + "</tbody></table></div>")
    # --- machine
    body.append("<h2 id=\"machine\">Machine and time</h2>")
    body.append(_machine(item, folder, [p for p in md_files + extra], site.root) if folder else "<p>—</p>")
    # --- rerun
    ran = [d.name for d in item.datasets if d.provenance != "absent"] if item.recipe != "dsg" else []  # dsg runs all
    body.append("<h2 id=\"rerun\">Re-run</h2><p>From a clone (with <code>make install</code>), this rewrites "
                f"<code>{esc(item.folder)}/</code> and REPRODUCTIONS.md; finished cells are skipped:</p>"
                f"<pre class=\"cmd\">lsokl reproduce {esc(item.id)}</pre>"
                + (f"<p>One dataset only (a partial run, written to <code>runs/partial/</code>, not the committed folder):"
                   f"</p><pre class=\"cmd\">lsokl reproduce {esc(item.id)} -d {esc(ran[0])}</pre>" if ran else ""))
    site.write(page_name(item), item.title, "\n".join(body), depth=1)


# ----------------------------------------------------------------------------- learners
FAMILIES = {
    "online": "online kernel learner (budget or not), one pass over a stream",
    "batch": "batch learner (holdout protocol)",
    "pegasos": "Pegasos family: multi-class SVM by stochastic sub-gradient, budget maintenance",
    "stochastic": "mini-batch stochastic learner (holdout protocol)",
    "approx": "kernel approximation (approximation protocol)",
}


def _learners() -> dict[str, list[tuple[str, str]]]:
    """name -> [(task, "module:Class")] from the one registry."""
    from ..learners import registry

    out: dict[str, list] = {}
    for (task, name), target in registry.LEARNERS.items():
        out.setdefault(name, []).append((task, target))
    for name, target in registry.APPROXIMATIONS.items():
        out.setdefault(name, []).append(("approximation", target))
    return out


def _uses(rows: list[C.Row]) -> dict[str, list[Item]]:
    """learner name -> the items whose configs run it."""
    out: dict[str, list] = {}
    for r in rows:
        for cfg in r.item.configs:
            for n in _config_algorithms(cfg):
                lst = out.setdefault(n, [])
                if r.item not in lst:
                    lst.append(r.item)
    return out


def _family(target: str) -> str:
    mod = target.split(":")[0].split(".")
    return mod[2] if mod[1] == "learners" else mod[1]


def _params(task: str, name: str) -> str:
    from ..learners import registry

    try:
        cls = registry.get(name, task)
        params = cls().get_params()
    except Exception as exc:  # noqa: BLE001 - an optional dependency missing: say so on the page
        return f"<p>unavailable here: {esc(exc)}</p>"
    doc = (cls.__doc__ or "").strip().split("\n\n")[0]
    return ((f"<p>{esc(' '.join(doc.split()))}</p>" if doc else "")
            + "<table><thead><tr><th>parameter</th><th>default</th></tr></thead><tbody>"
            + "".join(f"<tr><td><code>{esc(k)}</code></td><td><code>{esc(repr(v))}</code></td></tr>" for k, v in params.items())
            + "</tbody></table>")


def _learner_pages(site: Site, learners: dict, uses: dict) -> None:
    up = "../"
    index = ["<h1>Learners</h1><p class=\"sub\">Every name a config can use (the registry of "
             "<code>lsokl/learners/registry.py</code>; <code>lsokl algorithms</code> prints the same).</p>",
             "<table><thead><tr><th>name</th><th>family</th><th>tasks</th><th>items</th></tr></thead><tbody>"]
    for name in sorted(learners):
        entries = learners[name]
        fams = sorted({_family(t) for _, t in entries})
        used = uses.get(name, [])
        papers = sorted({i.paper for i in used})
        index.append(f"<tr><td><a href=\"{Path(learner_page(name)).name}\">{esc(name)}</a></td>"
                     f"<td>{esc(', '.join(fams))}</td><td>{esc(', '.join(t for t, _ in entries))}</td>"
                     f"<td>{len(used)}</td></tr>")
        body = [f"<h1>{esc(name)}</h1>",
                "<dl class=\"meta\">"
                f"<dt>family</dt><dd>{esc('; '.join(f'{f}: {FAMILIES.get(f, f)}' for f in fams))}</dd>"
                f"<dt>tasks</dt><dd>{esc(', '.join(t for t, _ in entries))}</dd>"
                f"<dt>papers</dt><dd>{esc(', '.join(papers) or 'none of the declared items')}</dd></dl>"]
        if used:
            body.append("<h2>Items that run it</h2><ul>" + "".join(
                f"<li><a href=\"{up}{page_name(i)}\">{esc(i.title)}</a> <code>{esc(i.id)}</code></li>" for i in used)
                + "</ul>")
        for task, target in entries:
            body.append(f"<h2>{esc(task)}: <code>{esc(target)}</code></h2>{_params(task, name)}")
        site.write(learner_page(name), name, "\n".join(body), depth=1)
    index.append("</tbody></table>")
    site.write("learners/index.html", "Learners", "\n".join(index), depth=1)


def size(out: Path) -> int:
    """Bytes under the site folder."""
    return sum(p.stat().st_size for p in Path(out).rglob("*") if p.is_file())


def timed_build(root: Path, out: Optional[Path]) -> tuple[Path, float, int]:
    t0 = time.perf_counter()
    index = build(root, out)
    return index, time.perf_counter() - t0, size(index.parent)
