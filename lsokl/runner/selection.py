"""Choosing a hyper-parameter per cell (holdout protocol): ``select: {param: [...], by: ...}``.

Example (top level, or inside one algorithm's entry, which then wins)::

    select: {sigma: [0.5, 1, 2], by: validation, validation_fraction: 0.1}

Several parameters give their product grid. ``sigma: grid`` takes the candidates from the list the
parameter has for that dataset (e.g. ``datasets.usps.defaults.sigma``), so one entry serves datasets
with different grids. ``by: validation`` cuts a seeded stratified
``validation_fraction`` (default 0.1) of the training rows (fixed per dataset and seed), fits every
candidate on the rest and scores it on the cut; the best (highest accuracy, lowest RMSE; the first
in grid order on ties; failed or diverged candidates never win) is then fitted on the whole
training split and tested. The inner fits are cells too: each has its own key and record (the
holdout record of the inner split), so a rerun resumes them, and the outer record lists every
candidate's score in ``holdout.selection``.

Adding a method (the batch-table helper adds ``by: cv``) = one class with ``name``, ``OPTIONS``
and three methods, plus one line in :data:`METHODS`:

* ``splits(prepared, options, seed) -> {suffix: Prepared}``: the inner training/evaluation data,
  built once per dataset in the main process (``validation``: one split; ``cv``: k folds);
* ``inner(cell, options) -> [(Cell, suffix)]``: the inner cells of one outer cell;
* ``score(candidate_records) -> float``: one number per candidate from its inner records;
* optional ``check_option(v, key, name, value) -> value``: validate an option (``v.fail(key, ...)``
  on a bad one); without it float defaults must lie in (0, 1) and int defaults be >= 2.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np

SELECT_KEY = "select"
GRID = "grid"  # `select: {sigma: grid, ...}`: the candidates are the sigma list the cell's dataset gives


class Validation:
    """``by: validation``. Option ``once`` (default false): true makes one choice per setting, on
    repetition 0's fits (the inner cells all use repetition 0, as ``by: cv`` does), which every
    repetition then uses; false chooses again in each repetition."""

    name = "validation"
    OPTIONS = {"validation_fraction": 0.1, "once": False}

    def check_option(self, v, key: str, name: str, value):
        if name == "once":
            if not isinstance(value, bool):
                v.expected(key, "true or false", value)
            return value
        if not (isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < 1):
            v.expected(key, "a number strictly between 0 and 1", value)
        return float(value)

    def splits(self, prepared, options: dict, seed: int) -> dict:
        from .protocols import Prepared
        from .protocols.holdout import _stratified_split

        f = options["validation_fraction"]
        inner, X_val, y_val = _stratified_split(prepared.train, f, seed + 7919, "validation")  # not the test cut's seed
        return {f"validation={f:g}": Prepared(train=inner, X_test=X_val, y_test=y_val,
                                              info={"evaluated_on": f"validation {f:g}"})}

    def inner(self, cell, options: dict) -> list:
        f = options["validation_fraction"]
        extra = {"evaluate": "validation", "validation_fraction": f}
        out = []
        for cand in candidates(cell):
            params = dict(cell.params)
            params.update(cand)
            opts = dict(cell.protocol_options)
            opts.update(extra)
            once = {"permutation": 0} if options.get("once") else {}
            out.append((replace(cell, params=tuple(sorted(params.items())), select=(),
                                protocol_options=tuple(sorted(opts.items())), **once),
                        f"validation={f:g}"))
        return out

    def score(self, records: list) -> float:
        return records[0]["value"]


class CrossValidation:
    """``by: cv``: stratified k-fold cross-validation on the training split (LSOKL Table 3).

    Options: ``folds`` (5); ``subsample`` (null: every training row; an integer n: the folds are
    cut from a seeded stratified subsample of n training rows, a *reduced* CV); ``reduced`` (free
    text saying why a CV was reduced, kept in the records and printed by the report).

    The folds are StratifiedKFold(folds, shuffle=True) with a state derived from the run's seed
    and the dataset's name, so every learner of a dataset sees the same folds; inside each part
    the rows keep their file order. One selection serves every repetition of a setting: the inner
    cells all use repetition 0, so the outer cells of repetitions 1.. find them already run (the
    same key) and choose the same candidate, as the authors ran one CV per dataset and algorithm.
    A candidate's score is its mean accuracy (or RMSE) over the folds; a candidate with any fold
    failed never wins.
    """

    name = "cv"
    OPTIONS = {"folds": 5, "subsample": None, "reduced": None}

    def check(self, v, key: str, options: dict) -> dict:
        from ..config import _join

        sub = options.get("subsample")
        if sub is not None:
            options["subsample"] = v.int_(_join(key, "subsample"), sub, low=2 * options["folds"])
        why = options.get("reduced")
        if why is not None and not isinstance(why, str):
            v.expected(_join(key, "reduced"), "a sentence saying why the CV is reduced", why)
        return options

    @staticmethod
    def suffix(options: dict, fold: int) -> str:
        sub = options.get("subsample")
        return f"cv{options['folds']}" + (f"-sub{sub}" if sub else "") + f"-fold{fold}"

    def fold_indices(self, ds, options: dict, seed: int) -> list:
        """[(train rows, evaluation rows)] of the training split, each sorted (file order)."""
        from sklearn.model_selection import StratifiedKFold, KFold, train_test_split

        from .seeds import name_entropy

        state = np.random.SeedSequence([seed, 3, name_entropy(ds.name)]).generate_state(2)
        y = np.asarray(ds.y)
        rows = np.arange(len(y))
        classification = ds.task != "regression"
        sub = options.get("subsample")
        if sub is not None and sub < len(y):
            rows, _ = train_test_split(rows, train_size=sub, random_state=int(state[0]),
                                       stratify=y if classification else None)
            rows = np.sort(rows)
        k = options["folds"]
        splitter = (StratifiedKFold if classification else KFold)(k, shuffle=True,
                                                                 random_state=int(state[1]))
        return [(rows[np.sort(tr)], rows[np.sort(te)]) for tr, te in splitter.split(rows, y[rows])]

    def splits(self, prepared, options: dict, seed: int) -> dict:
        from .protocols import Prepared

        ds = prepared.train
        out = {}
        for i, (tr, te) in enumerate(self.fold_indices(ds, options, seed)):
            train = replace(ds, X=ds.X[tr], y=np.asarray(ds.y)[tr], permutations=None)
            out[self.suffix(options, i)] = Prepared(
                train=train, X_test=ds.X[te], y_test=np.asarray(ds.y)[te],
                info={"evaluated_on": f"cv fold {i + 1}/{options['folds']}"})
        return out

    def inner(self, cell, options: dict) -> list:
        out = []
        for cand in candidates(cell):
            params = dict(cell.params)
            params.update(cand)
            for i in range(options["folds"]):
                opts = dict(cell.protocol_options)
                opts.update(evaluate="cv", folds=options["folds"], fold=i,
                            subsample=options.get("subsample"))
                out.append((replace(cell, params=tuple(sorted(params.items())), select=(),
                                    permutation=0, protocol_options=tuple(sorted(opts.items()))),
                            self.suffix(options, i)))
        return out

    def score(self, records: list) -> float:
        return float(np.mean([r["value"] for r in records]))


METHODS = {"validation": Validation(), "cv": CrossValidation()}


def options_of(cell) -> tuple[str, dict, dict]:
    """(method name, method options, {param: candidate values}) of a cell's ``select``."""
    sel = dict(cell.select)
    method = sel.pop("by")
    m = METHODS[method]
    opts = {k: sel.pop(k, default) for k, default in m.OPTIONS.items()}
    return method, opts, {k: list(v) for k, v in sel.items()}


def candidates(cell) -> list[dict]:
    _, _, grid = options_of(cell)
    keys = list(grid)
    return [dict(zip(keys, combo)) for combo in itertools.product(*(grid[k] for k in keys))]


def inner_cells(cell) -> list:
    """[(inner cell, data suffix)], one per candidate (times folds for k-fold methods)."""
    method, opts, _ = options_of(cell)
    return METHODS[method].inner(cell, opts)


def splits(cell, prepared, seed: int) -> dict:
    method, opts, _ = options_of(cell)
    return METHODS[method].splits(prepared, opts, seed)


def choose(cell, inner: list, records: list) -> tuple[dict | None, dict]:
    """The winning candidate (None when none finished ok) and the summary the record keeps.

    ``inner``: the output of :func:`inner_cells`; ``records``: their records (None if absent)."""
    method, opts, grid = options_of(cell)
    m = METHODS[method]
    regression = cell.task == "regression"
    by_cand: dict = {}
    for (icell, _), rec in zip(inner, records):
        cand = {k: dict(icell.params)[k] for k in grid}
        by_cand.setdefault(_canon(cand), (cand, []))[1].append(rec)
    rows, best, best_score = [], None, None
    for cand, recs in by_cand.values():
        ok = all(r is not None and r["status"] == "ok" and r["value"] is not None for r in recs)
        s = float(m.score(recs)) if ok else None
        rows.append({"params": cand, "score": s,
                     "status": "ok" if ok else ",".join(sorted({(r or {}).get("status") or "missing"
                                                                for r in recs}))})
        if s is not None and math.isfinite(s):
            better = best_score is None or (s < best_score if regression else s > best_score)
            if better:
                best, best_score = cand, s
    summary = {"by": method, **opts, "grid": grid, "candidates": rows, "chosen": best,
               "score": best_score, "metric": "validation " + ("rmse" if regression else "accuracy")}
    return best, summary


def _canon(d: dict) -> str:
    import json

    return json.dumps(d, sort_keys=True, default=lambda o: o.item() if isinstance(o, np.generic) else str(o))


def parse(v, key: str, value, cls, lname: str) -> tuple:
    """Validate a ``select`` mapping; returns the sorted tuple stored on the cell."""
    from ..config import _join, describe_rule

    if not isinstance(value, dict):
        v.expected(key, "a mapping like {sigma: [1, 4], by: validation}", value)
    value = dict(value)
    method = value.pop("by", None)
    if method is None:
        v.fail(_join(key, "by"), "is required (one of " + ", ".join(METHODS) + ")")
    v.choice(_join(key, "by"), method, tuple(METHODS))
    m = METHODS[method]
    out = {"by": method}
    for opt, default in m.OPTIONS.items():
        val = value.pop(opt, default)
        if hasattr(m, "check_option"):  # a method's own validation: check_option(v, key, name, value)
            out[opt] = m.check_option(v, _join(key, opt), opt, val)
            continue
        if isinstance(default, float):
            if not (isinstance(val, (int, float)) and not isinstance(val, bool) and 0 < val < 1):
                v.expected(_join(key, opt), "a number strictly between 0 and 1", val)
            val = float(val)
        elif isinstance(default, int):
            val = v.int_(_join(key, opt), val, low=2)
        out[opt] = val
    if hasattr(m, "check"):  # options a method validates itself (cv: subsample, reduced)
        out = m.check(v, key, out)
    if not value:
        v.fail(key, "names no parameter to select (e.g. `sigma: [1, 4]`)")
    accepted = set(cls._get_param_names()) if cls is not None else None
    for pname, vals in value.items():
        pkey = _join(key, pname)
        if accepted is not None and pname not in accepted:
            from ..errors import closest

            guess = closest(pname, accepted | set(m.OPTIONS))
            hint = f" Did you mean {guess[0]!r}?" if guess else ""
            v.fail(pkey, f"{lname} has no parameter {pname!r} and `by: {method}` has no option "
                         f"{pname!r}.{hint} Options of `by: {method}`: {', '.join(m.OPTIONS)}.")
        if vals == GRID:
            out[pname] = GRID  # resolved per dataset from the parameter's list (config expansion)
            continue
        if not isinstance(vals, list) or not vals:
            v.expected(pkey, f"a non-empty list of candidate values (or {GRID!r})", vals)
        rule = getattr(cls, "_params", {}).get(pname) if cls is not None else None
        for i, val in enumerate(vals):
            if rule is not None:
                try:
                    rule.check(cls.__name__, pname, val)
                except ValueError:
                    v.expected(f"{pkey}[{i}]", describe_rule(rule) or "a valid value", val)
        out[pname] = tuple(vals)
    return tuple(sorted(out.items()))
