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
(its defaults in :data:`lsokl.protocol_options.SELECT_OPTIONS`, where the config layer validates
them) and three methods, plus one line in :data:`METHODS`:

* ``splits(prepared, options, seed) -> {suffix: Prepared}``: the inner training/evaluation data,
  built once per dataset in the main process (``validation``: one split; ``cv``: k folds);
* ``inner(cell, options) -> [(Cell, suffix)]``: the inner cells of one outer cell;
* ``score(candidate_records) -> float``: one number per candidate from its inner records.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np

from ..protocol_options import GRID, SELECT_KEY, SELECT_OPTIONS  # noqa: F401
from ..protocol_options import parse_select as parse  # noqa: F401  (the config layer validates `select`)


class Validation:
    """``by: validation``. Option ``once`` (default false): true makes one choice per setting, on
    repetition 0's fits (the inner cells all use repetition 0, as ``by: cv`` does), which every
    repetition then uses; false chooses again in each repetition."""

    name = "validation"
    OPTIONS = SELECT_OPTIONS["validation"]

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
    OPTIONS = SELECT_OPTIONS["cv"]

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
