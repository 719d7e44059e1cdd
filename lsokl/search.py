"""The step-size search: one reusable step of a reproduction, declared in its config.

The LSOKL paper chooses each gradient learner's step size "through random search in {2, 0.2, ...,
0.0002}" (sec. 7.2.1) and follows "the same setup" for multi-class and regression. A config
declares that search beside the grid it feeds::

    search:
      algorithms:                       # label -> the grid of each searched parameter
        ogd: {eta: [2, 0.2, 0.02, 0.002, 0.0002]}
        fogd: {eta: [2, 0.2, 0.02, 0.002, 0.0002]}
      permutations: 3                   # passes per setting ...
      seed: 5                           # ... on seeded streams that are not the reported ones
      rule: lowest-mean                 # the only rule: lowest mean mistake rate / squared loss
      refine: [1, 2, 3, 4, 5, 6, 7, 8, 9]   # optional: then try m * 10^k between the best point's
                                        # grid neighbours (see below) [default: no refinement]
      datasets: [abalone, cadata]       # optional: only these datasets [default: all of the config]
      overrides:                        # optional, per dataset and label (grid, permutations)
        kddcup99: {ogd: {permutations: 1, eta: [2, 0.2, 0.02]}}

How it runs (``lsokl run`` does it before the table's own cells; ``--no-search`` skips it):

1. :func:`search_experiment` derives a config from the table's own: same datasets, scaling and
   other parameters, only the searched labels with their grid, ``permutations`` seeded passes
   with ``seed`` on every dataset (never the authors' stored orders, which are the reported
   streams). Its cells are ordinary cells: written to ``<results>/search/records`` and resumable.
2. :func:`select` applies the rule per (dataset, label): among the settings whose passes all
   finished ``ok`` and none of which was degenerate (a constant or nearly constant predictor, or
   no better than the constant predictor: :func:`lsokl.compute.degenerate.classify`), the lowest
   mean wins; ties go to the larger value. A setting with a failed, diverged or degenerate pass is
   never chosen; when none is eligible the config's own value stays, and the selection and the
   table's cells say so.
3. :func:`apply` writes the chosen values into the table's config (``datasets.<d>.algorithms.
   <label>``), which is then expanded into the table's cells as usual, and
   :func:`selection_markdown` writes ``<results>/eta_selection.md``: the whole grid, the choice,
   and why each excluded setting was excluded.

``refine`` (mantissas m in [1, 10)) makes the search two-stage, coarse then fine: after the grid,
for every (dataset, label) with a single searched parameter, the values m * 10^k that lie strictly
between the chosen value's two neighbours in the grid (and that the grid does not hold) are played
the same way, and the rule picks among the grid and these values together. With the 1-2-5 grid and
m = 1..9, a choice of 0.5 adds 0.3, 0.4, 0.6, ..., 0.9. It stands for the resolution of the LSOKL
paper's "random search" (the step sizes stored in the authors' files, 0.3 and 0.4, are such points)
at a fraction of the cost of the whole 1..9 grid.

A parameter the config fixes for one dataset (``datasets.housing.algorithms.ogd.eta``: the step
size stored in the authors' data file) is not searched on that dataset.
"""
from __future__ import annotations

import copy
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from .config import RULES, SEARCH_KEYS, SearchSpec, parse_search  # noqa: F401  (the config layer parses it)

SEARCH_DIR = "search"
SELECTION_FILE = "eta_selection.md"


def _entry(raw: dict, dataset: str) -> dict:
    return dict((raw.get("datasets") or {}).get(dataset) or {})


def fixed_by_config(raw: dict, spec: SearchSpec, dataset: str, label: str) -> list[str]:
    """The searched parameters the config sets itself for this dataset and label."""
    given = (_entry(raw, dataset).get("algorithms") or {}).get(label) or {}
    return [p for p in spec.grids.get(label, {}) if p in given]


def search_config(raw: dict, spec: SearchSpec) -> dict:
    """The raw config of the search: the table's own, reduced to the searched labels and grids."""
    out = {k: copy.deepcopy(v) for k, v in raw.items() if k != "search"}
    out["name"] = f"{raw.get('name', 'experiment')}-search"
    out["seed"] = spec.seed
    out["permutations"] = spec.permutations
    out["permutation_source"] = "seed"
    algos = {}
    for label, grid in spec.grids.items():
        entry = dict((raw.get("algorithms") or {}).get(label) or {})
        entry.update(copy.deepcopy(grid))
        algos[label] = entry
    out["algorithms"] = algos
    datasets = {}
    for name, entry in (raw.get("datasets") or {}).items():
        if spec.datasets is not None and name not in spec.datasets:
            continue
        if spec.only is not None and name not in spec.only:
            continue
        entry = copy.deepcopy(dict(entry or {}))
        entry.pop("permutations", None)
        entry.pop("permutation_source", None)
        exclude = [lab for lab in entry.pop("exclude", None) or [] if lab in spec.grids]
        per = {}
        for label, given in (entry.pop("algorithms", None) or {}).items():
            if label not in spec.grids:
                continue
            if fixed_by_config(raw, spec, name, label):
                exclude.append(label)  # fixed here (e.g. the authors' stored eta): not searched
                continue
            given = dict(given or {})
            given.pop("permutations", None)
            if given:
                per[label] = given
        for label, extra in spec.overrides.get(name, {}).items():
            per.setdefault(label, {}).update(copy.deepcopy(extra))
        if per:
            entry["algorithms"] = per
        if spec.only is not None:
            exclude += [lab for lab in spec.grids if lab not in spec.only[name]]
        exclude = list(dict.fromkeys(exclude))
        if set(exclude) >= set(spec.grids):
            continue  # nothing left to search on this dataset
        if exclude:
            entry["exclude"] = exclude
        datasets[name] = entry
    out["datasets"] = datasets
    return out


def search_experiment(exp):
    """The search's Experiment (ordinary cells), or None when the config declares no search or
    leaves nothing to search."""
    from .config import parse_config

    spec = getattr(exp, "search", None)
    if spec is None:
        return None
    raw = search_config(exp.raw, spec)
    if not raw["datasets"]:
        return None
    return parse_config(raw, f"{exp.path} (search:)")


# --------------------------------------------------------------------------- refinement
def refined_values(grid: list, chosen, mantissas) -> list:
    """The values m * 10^k strictly between ``chosen``'s neighbours in ``grid`` that the grid does
    not hold, largest first (at either end of the grid, the end itself bounds the interval)."""
    vals = sorted({float(g) for g in grid})
    c = float(chosen)
    if c not in vals or not mantissas:
        return []
    i = vals.index(c)
    lo, hi = vals[max(i - 1, 0)], vals[min(i + 1, len(vals) - 1)]
    if lo <= 0:
        return []
    out = set()
    for k in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1):
        for m in mantissas:
            x = float(f"{m}e{k}")  # 3e-1 == 0.3 exactly as a config would spell it
            if lo < x < hi and x not in vals:
                out.add(x)
    return sorted(out, reverse=True)


def refine_spec(spec: SearchSpec, choices: list) -> SearchSpec | None:
    """The second stage: per (dataset, label) with one searched parameter and a choice, the
    refined values around it (None when there is nothing to add)."""
    if not spec.refine:
        return None
    overrides: dict = {}
    only: dict = {}
    for ch in choices:
        if ch.chosen is None or len(ch.params) != 1:
            continue
        (param,) = ch.params
        grid = (spec.overrides.get(ch.dataset, {}).get(ch.algorithm, {}) or {}).get(param)
        grid = grid if isinstance(grid, list) else spec.grids[ch.algorithm][param]
        try:
            extra = refined_values(grid, ch.chosen[param], spec.refine)
        except (TypeError, ValueError):
            continue  # a non-numeric grid has nothing between its points
        if not extra:
            continue
        given = {k: v for k, v in (spec.overrides.get(ch.dataset, {}).get(ch.algorithm) or {}).items()
                 if not isinstance(v, list)}  # keep e.g. its own permutations
        overrides.setdefault(ch.dataset, {})[ch.algorithm] = {**given, param: extra}
        only.setdefault(ch.dataset, set()).add(ch.algorithm)
    if not only:
        return None
    return SearchSpec(grids=spec.grids, permutations=spec.permutations, seed=spec.seed, rule=spec.rule,
                      datasets=spec.datasets, overrides=overrides, refine=(), only=only)


# --------------------------------------------------------------------------- the rule
@dataclass
class Candidate:
    values: dict  # searched param -> value
    runs: int
    expected: int
    ok: int
    degenerate: int
    mean: float
    why_not: str | None = None  # why it cannot be chosen (None: eligible)


@dataclass
class Choice:
    dataset: str
    algorithm: str
    task: str
    params: list[str]
    candidates: list[Candidate] = field(default_factory=list)
    chosen: dict | None = None  # searched param -> value; None: the config's own value stays

    @property
    def reason(self) -> str:
        if self.chosen is not None:
            return "lowest mean among the eligible settings"
        return "no eligible setting (every one failed, diverged or was degenerate): the config's value is used"


def select(search_exp, records, spec: SearchSpec) -> list[Choice]:
    """Apply the rule to the search's records (only those of the search's own settings count)."""
    expected: dict = {}  # (dataset, label) -> {settings json: {permutations}}
    tasks = {}
    for c in search_exp.cells:
        key = json.dumps(c.param_dict, sort_keys=True)
        expected.setdefault((c.dataset, c.algorithm), {}).setdefault(key, set()).add(c.permutation)
        tasks[(c.dataset, c.algorithm)] = c.task
    seen: dict = {}
    for r in records:
        pair = (r.get("dataset"), r.get("algorithm"))
        key = json.dumps(r.get("params"), sort_keys=True)
        if pair in expected and key in expected[pair] and r.get("permutation") in expected[pair][key]:
            seen.setdefault(pair, {}).setdefault(key, {})[r["permutation"]] = r
    # a pair without a single record was not run (its dataset's files are absent): no choice
    return [choose(dataset, label, tasks[(dataset, label)], list(spec.grids[label]),
                   {key: (perms, list(seen.get((dataset, label), {}).get(key, {}).values()))
                    for key, perms in settings.items()})
            for (dataset, label), settings in expected.items() if (dataset, label) in seen]


def choose(dataset: str, label: str, task: str, names: list[str], settings: dict) -> Choice:
    """The rule for one (dataset, label). ``settings``: params json -> (expected permutations,
    records). Lowest mean over settings whose passes all finished ok and none degenerate
    (:func:`excluded_as_degenerate`); ties go to the larger values of ``names`` (in that order)."""
    choice = Choice(dataset, label, task, names)
    for key, (perms, recs) in settings.items():
        params = json.loads(key)
        ok = [r for r in recs if r["status"] == "ok"]
        degenerate = sum(bool(r.get("degenerate")) for r in ok)
        vals = [float(r["value"]) for r in ok if r.get("value") is not None]
        mean = float(sum(vals) / len(vals)) if vals else float("nan")
        cand = Candidate({p: params.get(p) for p in names}, len(recs), len(perms), len(ok),
                         degenerate, mean)
        if len(recs) < len(perms):
            cand.why_not = f"only {len(recs)} of {len(perms)} passes ran"
        elif len(ok) < len(perms):
            bad = sorted({r["status"] for r in recs if r["status"] != "ok"})
            cand.why_not = f"{len(perms) - len(ok)} of {len(perms)} passes {'/'.join(bad)}"
        elif excluded_as_degenerate(degenerate, len(perms)):
            cand.why_not = f"degenerate in {degenerate} of {len(perms)} passes"
        elif not math.isfinite(mean):
            cand.why_not = "no finite value"
        choice.candidates.append(cand)
    choice.candidates.sort(key=lambda c: tuple(-_num(c.values[p]) for p in names))
    eligible = [c for c in choice.candidates if c.why_not is None]
    if eligible:  # min keeps the first of equal means: the list is sorted largest values first
        best = min(eligible, key=lambda c: c.mean)
        choice.chosen = dict(best.values)
    return choice


def excluded_as_degenerate(degenerate: int, passes: int) -> bool:
    """A setting is excluded when any of its passes was degenerate. An earlier rule excluded it only when
    most passes were (2 of 3): with 3 search passes it let BOGD's eta 0.02 through on one stalled pass,
    and 13 of that setting's 20 reported passes then predicted a constant (16 published std from the
    paper, whose eta 0.2 was within 0.3). A step size that stalls the learner on one seeded stream in
    three is not safe on the 20 reported ones. The count per setting is in eta_selection.md."""
    return int(degenerate) > 0


def _num(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return 0.0


def apply(exp, choices: list[Choice]):
    """The table's Experiment with the chosen values written into its config."""
    from .config import parse_config

    raw = copy.deepcopy(exp.raw)
    datasets = raw.setdefault("datasets", {})
    for ch in choices:
        if ch.chosen is None:
            continue
        entry = datasets.get(ch.dataset) or {}
        datasets[ch.dataset] = entry
        algos = entry.get("algorithms") or {}
        entry["algorithms"] = algos
        given = algos.get(ch.algorithm) or {}
        algos[ch.algorithm] = given
        given.update(ch.chosen)
    return parse_config(raw, exp.path)


# --------------------------------------------------------------------------- report
def _fmt_value(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def selection_markdown(exp, choices: list[Choice], missing=()) -> str:
    spec = exp.search
    lines = [f"# Step-size selection for {exp.name}", "",
             f"Written by `lsokl run {_shown(exp.path)}` (the config's `search:` step; records in "
             f"`{SEARCH_DIR}/records`, ignored by git). Rule `{spec.rule}`: per dataset and algorithm, the "
             f"setting with the lowest mean {'squared loss' if _task(choices) == 'regression' else 'mistake rate'} "
             f"over {spec.permutations} seeded passes (seed {spec.seed}; not the reported streams); ties go to "
             "the larger value. A setting is never chosen if any of its passes failed, diverged or was "
             "**degenerate**: a constant predictor (the mistakes of always predicting one class in every "
             "checkpoint segment, or in segments holding most of the pass; a constant squared loss; no update "
             "at all), or a mistake rate (squared loss) within the spread of the best constant predictor's "
             "on the same stream (`lsokl/compute/degenerate.py`).",
             *(["", "Two stages: the grid, then (`refine`) the values m x 10^k with m in "
                f"{{{', '.join(_fmt_value(m) for m in spec.refine)}}} strictly between the grid's best point "
                "and its two neighbours; the rule chooses among both stages' settings. Blank cells were "
                "not played (outside the refined interval)."] if spec.refine else []),
             "", "Cells: mean over the passes (mistake rate in %, squared loss as is); **bold** = chosen; "
             "`const k/n` = k of the setting's n passes were degenerate (excluded when k > 0); "
             "`—` = failed or diverged.", ""]
    lines += grid_markdown(choices)
    fixed = []
    for name in exp.datasets:
        for label in spec.grids:
            if label in exp.algorithms and fixed_by_config(exp.raw, spec, name, label):
                params = fixed_by_config(exp.raw, spec, name, label)
                given = _entry(exp.raw, name)["algorithms"][label]
                fixed.append(f"* {name} {label}: " + ", ".join(f"{p}={_fmt_value(given[p])}" for p in params)
                             + " (set in the config, not searched)")
    if fixed:
        lines += ["Fixed by the config:", ""] + fixed + [""]
    if missing:
        lines += [f"Not run, dataset files absent: {', '.join(missing)}.", ""]
    if spec.datasets is not None:
        rest = [d for d in exp.datasets if d not in spec.datasets]
        if rest:
            lines += [f"Not searched (the config's values): {', '.join(rest)}.", ""]
    return "\n".join(lines)


def grid_markdown(choices: list[Choice]) -> list[str]:
    """The grid of every (dataset, label) with its choice, and why each setting was excluded."""
    lines: list[str] = []
    by_task: dict = {}
    for ch in choices:
        by_task.setdefault((ch.task, tuple(ch.params)), []).append(ch)
    for (task, params), group in by_task.items():
        cols, order = [], {}
        for ch in group:
            for c in ch.candidates:
                label = ", ".join(f"{p}={_fmt_value(c.values[p])}" for p in params)
                if label not in cols:
                    cols.append(label)
                    order[label] = tuple(-_num(c.values[p]) for p in params)
        cols.sort(key=lambda lab: order[lab])  # largest first, refined values between grid points
        lines += [f"| dataset | algorithm | {' | '.join(cols)} | chosen |",
                  "|---|---|" + "---|" * (len(cols) + 1)]
        for ch in group:
            cells = {}
            for c in ch.candidates:
                label = ", ".join(f"{p}={_fmt_value(c.values[p])}" for p in params)
                val = c.mean * (1 if task == "regression" else 100)
                text = _fmt_mean(val, task)
                if c.ok == c.expected and c.degenerate:
                    text = f"{text} const {c.degenerate}/{c.expected}"
                elif c.why_not:
                    text = "—"
                if ch.chosen is not None and c.values == ch.chosen:
                    text = f"**{text}**"
                cells[label] = text
            chosen = (", ".join(f"{p}={_fmt_value(v)}" for p, v in ch.chosen.items())
                      if ch.chosen is not None else "none eligible: config value")
            lines.append(f"| {ch.dataset} | {ch.algorithm} | "
                         + " | ".join(cells.get(c, "") for c in cols) + f" | {chosen} |")
        lines.append("")
    excluded = [(ch, c) for ch in choices for c in ch.candidates if c.why_not]
    if excluded:
        lines += ["Settings excluded by the rule:", ""]
        for ch, c in excluded:
            vals = ", ".join(f"{p}={_fmt_value(v)}" for p, v in c.values.items())
            lines.append(f"* {ch.dataset} {ch.algorithm} {vals}: {c.why_not}")
        lines.append("")
    none = [ch for ch in choices if ch.chosen is None]
    if none:
        lines += ["No eligible setting (the config's own value is used in the table):", ""]
        lines += [f"* {ch.dataset} {ch.algorithm}" for ch in none] + [""]
    return lines


def _shown(path: str) -> str:
    """The config's path as a reader can use it: relative to the clone, never a machine's."""
    p = Path(path)
    parts = p.parts
    return str(Path(*parts[parts.index("configs"):])) if "configs" in parts else p.name


def _fmt_mean(val: float, task: str) -> str:
    if not math.isfinite(val):
        return ""
    if abs(val) >= 1000:  # a step size that blew the model up
        return f"{val:.2e}"
    return f"{val:.5f}" if task == "regression" else f"{val:.2f}"


def _task(choices) -> str:
    return choices[0].task if choices else "binary"


# --------------------------------------------------------------------------- the step
@dataclass
class _Cells:
    """Both stages' cells, as :func:`select` reads them."""
    cells: list


def run_search(exp, results, *, datasets=(), algorithms=(), progress=None, **run_kwargs):
    """Run the search's cells into ``<results>/search``, select, write ``eta_selection.md``; return
    ``(table experiment with the chosen values, choices, search summary)``. Without a search: exp."""
    from .results import ResultStore
    from .runner import run_experiment

    search_exp = search_experiment(exp)
    if search_exp is None:
        return exp, [], None
    ds = [d for d in datasets if d in search_exp.datasets]
    al = [a for a in algorithms if a.split("[")[0] in search_exp.algorithms]
    if (datasets and not ds) or (algorithms and not al):
        return exp, [], None  # the filters keep nothing searched: the config's values apply
    store_dir = Path(results) / SEARCH_DIR
    summary = run_experiment(search_exp, store_dir, datasets=ds, algorithms=al, progress=progress,
                             **run_kwargs)
    choices = select(search_exp, ResultStore(store_dir).records(), exp.search)
    fine = refine_spec(exp.search, choices)
    if fine is not None:  # the second stage: the values between the chosen point's neighbours
        from .config import parse_config

        fine_exp = parse_config(search_config(exp.raw, fine), f"{exp.path} (search: refine)")
        ds2 = [d for d in ds if d in fine_exp.datasets]
        al2 = [a for a in al if a.split("[")[0] in fine_exp.algorithms]
        if not ((ds and not ds2) or (al and not al2)):
            more = run_experiment(fine_exp, store_dir, datasets=ds2, algorithms=al2, progress=progress,
                                  **run_kwargs)
            summary.selected += more.selected
            summary.ran.update(more.ran)
            summary.skipped_ok += more.skipped_ok
            summary.kept_failed.update(more.kept_failed)
            summary.failures += more.failures
            both = _Cells(search_exp.cells + fine_exp.cells)
            choices = select(both, ResultStore(store_dir).records(), exp.search)
    if not datasets and not algorithms:  # a partial run does not rewrite the committed file
        Path(results).mkdir(parents=True, exist_ok=True)
        (Path(results) / SELECTION_FILE).write_text(selection_markdown(exp, choices, sorted(summary.missing)))
    return apply(exp, choices), choices, summary
