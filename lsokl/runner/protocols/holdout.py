"""The train/test (holdout) protocol of BPegasosM Table 1, LSOKL Table 3, DSG and MEKA's BKA-SVM.

One cell = fit a learner on a permutation of the training split (``epochs`` passes), then score
the held-out test split with the final model.

Config keys (top level; ``test_fraction`` also per dataset)::

    protocol: holdout
    epochs: 1              # passes over the training split (online learners; a fresh permutation each)
    test_fraction: 0.2     # no test split in the dataset: a seeded stratified split of it (fixed per
                           # dataset and seed, so every repetition and learner sees the same test set)
    test_at: [10000, 100000]  # also score the test set after these many training steps (untimed):
                              # a learning curve from one pass, in ``holdout.test_curve``
    datasets:
      waveform: {draws: {n_train: 100000, n_test: 100000}}  # a built-in generator, drawn afresh
                              # for every repetition (training and test points)
    scale: zscore          # fitted on the training rows only, applied to both (= `standard`)

The test set is the dataset's own ``test`` split unless ``test_fraction`` is given; a dataset with
neither is refused before anything runs. ``max_samples`` subsamples the training rows only.

What a learner must offer:

* an **online learner** (``lsokl.learners.base.OnlineLearner``) offers ``run(X, y, order, ...)``:
  the training pass is ``run`` over the epochs' permutations concatenated (so ``t`` keeps counting
  across epochs, as BudgetedSVM does), timed inside ``run``; the record keeps its online mistake
  rate and checkpoint curve;
* a **batch learner** (no ``run``) offers ``fit(X, y)``; it is given the permuted training rows
  once (``epochs`` must be 1) and ``fit`` is timed by wall clock;
* both offer ``predict(X)`` (labels in the data's convention: +-1 binary, 0..m-1 multiclass) and,
  for regression, ``predict`` returns the real-valued prediction. Optional: ``support_size_``
  (or scikit-learn's ``n_support_``) for the support size.

The record (``lsokl.results.record``): ``metric`` = ``test_accuracy`` (classification) or
``test_rmse`` (regression) and ``value`` its value (a fraction, not %); ``time_s`` = training time;
``support_size``; ``mistake_rate`` = the online mistake rate of the training pass (None for batch
learners); and ``holdout`` = {n_train, n_test, epochs, steps, train_time_s, test_time_s,
test_accuracy, test_rmse, train_mistake_rate, evaluated_on, selection}.

Hyper-parameter selection (``select:``) is in :mod:`lsokl.runner.selection`; its inner cells are
holdout cells on a validation cut (``evaluated_on: validation``), which reports leave out.

Where to extend: a test-error curve at checkpoints belongs in :func:`_train_online` (score the test
set between ``run`` segments); a batch learner needs nothing here beyond ``fit``/``predict``.
"""
from __future__ import annotations

import time

import numpy as np

from ... import protocol_options as _options
from ...compute.epochs import EpochOrder
from ...compute.xp import to_numpy
from ...errors import ConfigError, DataError
from . import Outcome, Prepared

# test_with: `final` (the model after the pass) or `average` (KOL's option: the mean of w over the
# updates; binary FOGD and NOGD; applied after the pass, so test_at curves use the running model)
OPTIONS = _options.OPTIONS["holdout"]  # the config keys, validated by the config layer
check_learner = _options.CHECK_LEARNER["holdout"]
has_test_split = _options.has_test_split


# --------------------------------------------------------------------------- main process
def load(spec, seed: int, options: dict) -> Prepared:
    """Training rows and test rows of one dataset, scaled with training statistics only."""
    from ... import data
    from ...data.preprocess import apply_scale, fit_scale, subsample

    fraction = options.get("test_fraction")
    where = f"datasets.{spec.name}"
    if spec.split not in (None, "train"):
        raise ConfigError(f"{where}.split: the holdout protocol trains on the train split and tests "
                          f"on the test split (or a test_fraction); split={spec.split!r} is not allowed")
    if getattr(spec, "draws", None):
        return _fresh_draws(spec, seed)
    labels = getattr(spec, "labels", ()) or None  # `labels: [8, 6]`: the same filter on both splits
    train = data.load(spec.name, split="train", labels=labels)
    if fraction is not None:
        train, X_test, y_test = _stratified_split(train, fraction, seed)
        source = f"stratified test_fraction={fraction} of the train split (seed {seed})"
    else:
        if not has_test_split(spec.name):
            raise ConfigError(f"{where}: dataset {spec.name!r} has no test split; set "
                              f"`test_fraction` (e.g. 0.2) for it or at the top of the config")
        test = data.load(spec.name, split="test", labels=labels)
        X_test, y_test = test.X, test.y
        source = "the dataset's test split"
    if X_test.shape[1] != train.X.shape[1]:
        raise DataError(f"{where}: the test split has {X_test.shape[1]} features but the training "
                        f"split has {train.X.shape[1]}")
    if spec.task != train.task:
        raise ConfigError(f"dataset {spec.name} is a {train.task} dataset but the config runs it as "
                          f"{spec.task}; set `task: {train.task}` for it")
    train = subsample(train, spec.max_samples, 0)
    if spec.scale not in (None, "none"):
        params = fit_scale(train.X, spec.scale)
        from dataclasses import replace

        train = replace(train, X=apply_scale(train.X, params), permutations=train.permutations)
        X_test = apply_scale(X_test, params)
    if spec.permutation_source == "authors" and train.permutations is None:
        raise DataError(f"dataset {spec.name} has no authors' permutation matrix; "
                        "use `permutation_source: seed`")
    return Prepared(train=train, X_test=X_test, y_test=np.asarray(y_test),
                    info={"test_source": source, "n_test": int(X_test.shape[0])})


def _fresh_draws(spec, seed: int) -> Prepared:
    """A built-in generator drawn afresh for every repetition: ``draws: {n_train, n_test}``.

    The returned Prepared holds repetition 0 and ``draw(p)`` makes repetition p (training rows
    then test rows from one seeded call, z-scored with the training statistics when asked)."""
    from ... import data
    from ...data.preprocess import apply_scale, fit_scale
    from ..seeds import name_entropy

    from ..resources import default_limit, too_much_memory

    draws = dict(spec.draws)
    n_train, n_test = int(draws["n_train"]), int(draws["n_test"])
    need, what = draws_memory(spec)
    limit, how = default_limit(1)
    why = too_much_memory({what: need}, limit, how)
    if why:  # the main process draws repetition 0 here: refuse before allocating it
        raise ConfigError(f"datasets.{spec.name}.draws: {why.replace(' a cell may use', ' the data may use')}")

    def draw(p: int) -> Prepared:
        from dataclasses import replace

        s = int(np.random.SeedSequence([seed, 3, name_entropy(spec.name), p]).generate_state(1)[0])
        full = data.load(spec.name, n=n_train + n_test, seed=s)
        train = replace(full, X=full.X[:n_train], y=np.asarray(full.y)[:n_train],
                        meta={**full.meta, "draw": {"repetition": p, "n_train": n_train,
                                                    "n_test": n_test, "seed": s}})
        X_test, y_test = full.X[n_train:], np.asarray(full.y)[n_train:]
        if spec.scale not in (None, "none"):
            params = fit_scale(train.X, spec.scale)
            train = replace(train, X=apply_scale(train.X, params))
            X_test = apply_scale(X_test, params)
        return Prepared(train=train, X_test=X_test, y_test=y_test,
                        info={"test_source": f"fresh draw {p} of {n_test} test points"})

    first = draw(0)
    first.draw = draw
    return first


def memory_estimate(spec, n_samples: int, n_features: int, n_outputs: int) -> dict:
    """What a holdout cell holds beside the learner (lsokl.runner.resources): the training order of one epoch at
    a time (int64, and its checked copy; online learners, lsokl.compute.epochs) or of every epoch concatenated
    (a mini-batch learner's ``fit_curve``, when ``spec`` names the learner), and with ``draws`` a fresh draw of
    training and test rows per repetition (float64, with its scaled copy). So ``draws: {n_train: 1e9}``, or
    ``epochs: 1000000`` of a mini-batch learner, is refused with its estimate before the cell starts."""
    epochs = int(spec.get("epochs") or 1)
    if epochs > 1 and _reads_whole_stream(spec):
        parts = {f"training order ({epochs:,} epochs x {n_samples:,} rows, int64)": 8.0 * (epochs + 1) * n_samples}
    else:
        parts = {f"training order (one epoch at a time: {n_samples:,} rows, int64)": 2 * 8.0 * n_samples}
    draws = dict(spec.get("draws") or ())
    if draws:
        rows = int(draws.get("n_train", 0)) + int(draws.get("n_test", 0))
        parts[f"a fresh draw per repetition ({rows:,} x {n_features:,}, and its scaled copy)"] = \
            2 * 8.0 * rows * n_features
    return parts


def _reads_whole_stream(spec) -> bool:
    """Whether the cell's learner trains on every epoch's order at once (a mini-batch ``fit_curve``); unknown
    (no learner named) counts as yes, the safe side of an estimate."""
    try:
        from ...learners import registry

        cls = registry.get(spec["learner"], spec.get("task", "binary"))
    except Exception:  # noqa: BLE001 - no learner in the spec (or not importable): assume the larger need
        return True
    return callable(getattr(cls, "fit_curve", None))


def draws_memory(spec) -> tuple[float, str]:
    """(bytes, what) of one fresh draw of ``spec.draws`` (training + test rows, float64, and the scaled copy),
    from the generator's width on two rows: counted before the first draw is made."""
    from ... import data

    draws = dict(spec.draws)
    rows = int(draws["n_train"]) + int(draws["n_test"])
    d = int(data.load(spec.name, n=2, seed=0).X.shape[1])
    return 2 * 8.0 * rows * d, f"a fresh draw of {spec.name} ({rows:,} x {d:,} float64, and its scaled copy)"


def _stratified_split(ds, fraction: float, seed: int, what: str = "test"):
    from dataclasses import replace

    from sklearn.model_selection import train_test_split

    from ...splits import classes_needed, split_problem
    from ..seeds import name_entropy

    classes = None if ds.task == "regression" else len(np.unique(np.asarray(ds.y)))
    why = split_problem(ds.n_samples, fraction, classes_needed(ds.task, classes), what=what)
    if why:  # the config layer refuses this when it knows the size; a loaded dataset says it here
        raise ConfigError(f"datasets.{ds.name}: {what}_fraction {why}")

    rs = np.random.RandomState(np.random.SeedSequence([seed, 2, name_entropy(ds.name)]).generate_state(1)[0])
    idx = np.arange(ds.n_samples)
    stratify = ds.y if ds.task != "regression" else None
    tr, te = train_test_split(idx, test_size=fraction, random_state=rs, stratify=stratify)
    tr, te = np.sort(tr), np.sort(te)  # keep file order inside each part
    meta = {**ds.meta, "holdout": {"test_fraction": fraction, "seed": seed}}
    train = replace(ds, X=ds.X[tr], y=np.asarray(ds.y)[tr], meta=meta, permutations=None)
    return train, ds.X[te], np.asarray(ds.y)[te]


# --------------------------------------------------------------------------- worker
def run_cell(job, data) -> Outcome:
    from ..worker import build

    learner = build(job)
    epochs = int(job.spec.get("epochs", 1))
    n = data.X.shape[0]
    if callable(getattr(learner, "fit_curve", None)):
        return _train_with_curve(job, learner, data, epochs)
    if callable(getattr(learner, "run", None)):
        trace, train_time = _train_online(job, learner, data, epochs)
    else:
        if epochs != 1:
            raise ValueError(f"{job.spec['learner']} is a batch learner; `epochs` must be 1")
        trace, train_time = None, _train_batch(job, learner, data)
    return evaluate(job, learner, data, trace=trace, train_time=train_time, n_train=n, epochs=epochs)


def _train_online(job, learner, data, epochs: int):
    """The training pass (``run``); with ``test_at`` the pass is cut at those step counts and the
    test set is scored at each cut (untimed), giving a learning curve from one run."""
    from ..worker import _alarm, random_source, warm_up

    n = data.X.shape[0]
    # each epoch's order is made when the pass reaches it: memory does not grow with `epochs`
    order = EpochOrder(lambda e: job.order(n, data.permutations, epoch=e), n, epochs)
    stream = order if epochs > 1 else order.epoch(0)  # one epoch: the plain array, as always
    if callable(getattr(learner, "tune", None)):
        # a learner that tunes a setting on one stream (PRJTRN++'s threshold, searched to end at
        # B SVs) tunes it on permutation 1 and keeps it for every permutation (untimed)
        learner.tune(data.X, data.y, job.order(n, data.permutations, permutation=0))
    warm_up(job, data.X, data.y)
    average = job.spec.get("test_with", "final") == "average"
    if average:
        if not callable(getattr(learner, "use_average", None)):
            raise ValueError(f"`test_with: average` needs a learner that averages its weights over "
                             f"the updates (binary fogd, nogd); {job.spec['learner']} does not")
        learner.track_average = True
    cuts = sorted({int(c) for c in job.spec.get("test_at") or () if 0 < int(c) < len(order)})
    curve = {"n": [], "test_value": [], "train_time_s": [], "support": []}
    with _alarm(job.timeout):
        if not cuts:  # one run over every epoch (t keeps counting across them)
            trace = learner.run(data.X, data.y, stream, n_checkpoints=job.spec["n_checkpoints"],
                                random_source=random_source(job, learner))
            elapsed = trace.elapsed
        else:  # the pass cut at the test steps (and at each epoch's end): one run, then partial_fit
            scored = set(cuts) | {len(order)}
            for a, b, rows in order.segments(cuts):
                if a == 0:
                    trace = learner.run(data.X, data.y, np.array(rows), n_checkpoints=job.spec["n_checkpoints"],
                                        random_source=random_source(job, learner))
                    elapsed = trace.elapsed
                else:  # continue the same pass (same model, t keeps counting)
                    Xs, ys = data.X[rows], np.asarray(data.y)[rows]  # the copy is not training time
                    t0 = time.perf_counter()
                    learner.partial_fit(Xs, ys)
                    elapsed += time.perf_counter() - t0
                if b in scored:
                    curve["n"].append(int(b))
                    curve["test_value"].append(_score(job, learner, data))
                    curve["train_time_s"].append(float(elapsed))
                    curve["support"].append(int(getattr(learner, "support_size_", -1)))
    if cuts:
        # the trace covers the first piece only; the counts cover the whole pass
        counts = getattr(learner, "counts_", None)
        if counts is not None:
            trace.mistakes, trace.n_samples = int(counts[1]), int(counts[0])
        trace.support_size = int(learner.support_size_)
        trace.elapsed = elapsed
        learner.test_curve_ = curve
    if average:
        learner.use_average()
    return trace, elapsed


def _score(job, learner, data) -> float:
    pred = to_numpy(learner.predict(data.X_test))
    y = np.asarray(data.y_test)
    if job.spec["task"] == "regression":
        return float(np.sqrt(np.mean((pred.astype(float) - y) ** 2)))
    return float(np.mean(pred == y))


def _train_with_curve(job, learner, data, epochs: int) -> Outcome:
    """Mini-batch learners (DSG and its baselines, ``lsokl.learners.stochastic.minibatch``): one call trains
    over the epochs' permutations and keeps **running test scores**, so the record gets the test
    error (RMSE and MAE for regression) at ~15 log-spaced checkpoints of "training samples seen"
    (``holdout.curve``) at the cost of one extra block product per step. Training time excludes
    the test scoring (``holdout.curve_test_time_s``)."""
    from ...compute.xp import check_device, put_device
    from ..worker import _alarm, build

    if "random_state" in learner.get_params() and learner.random_state is None:
        learner.set_params(random_state=np.random.SeedSequence(list(job.seed_entropy)))  # the cell's seed
    n = data.X.shape[0]
    # the mini-batch pass reads the whole stream at once: every epoch's order, concatenated
    order = EpochOrder(lambda e: job.order(n, data.permutations, epoch=e), n, epochs).materialise()
    warm = min(n, 2 * int(getattr(learner, "batch_size", 64)))  # compile before timing
    build(job).fit_curve(data.X[:warm], data.y[:warm], data.X[:8], np.asarray(data.y)[:8])
    ckpts = None  # default: ~15 log-spaced ends of mini-batches
    if job.spec.get("test_at"):
        ckpts = sorted({int(c) for c in job.spec["test_at"] if 0 < int(c) < len(order)} | {len(order)})
    device = job.spec.get("device")  # e.g. cuda: the data on that device, DSG computes there
    check_device(device)
    X, X_test = (data.X, data.X_test) if device is None else \
        (put_device(_dense(data.X), device), put_device(_dense(data.X_test), device))
    with _alarm(job.timeout):
        curve = learner.fit_curve(X, data.y, X_test, data.y_test, order=order, checkpoints=ckpts)
    out = evaluate(job, learner, data, trace=None, train_time=curve.elapsed, n_train=n, epochs=epochs)
    out.fields["holdout"]["minibatch_steps"] = int(curve.steps)
    out.fields["holdout"]["curve"] = curve.as_dict()
    out.fields["holdout"]["curve_test_time_s"] = float(curve.test_time)
    if not np.all(np.isfinite(curve.test_error)):
        out.status = "diverged"
    return withhold_diverged(out)


def withhold_diverged(out: Outcome) -> Outcome:
    """A diverged cell keeps no test accuracy or RMSE: its predictions came from a non-finite
    model (a NaN score predicts the first class), so no report may show a number for it."""
    if out.status == "diverged":
        out.fields["value"] = None
        out.fields["holdout"]["test_accuracy"] = None
        out.fields["holdout"]["test_rmse"] = None
    return out


def _dense(X):
    return X.toarray() if hasattr(X, "toarray") else X


def _train_batch(job, learner, data) -> float:
    from ..worker import _alarm

    if getattr(learner, "trains_in_file_order", False):  # LLSVM reads its chunks in file order
        order = np.arange(data.X.shape[0])
    else:
        order = job.order(data.X.shape[0], data.permutations)
    X, y = data.X[order], np.asarray(data.y)[order]
    if job.timeout is not None and getattr(learner, "time_limit", False) is None:
        # a C solver (libsvm, LIBLINEAR) never returns to Python, so the alarm cannot stop it:
        # the learner's own hard limit does (lsokl.learners.batch.common), failing the cell with the reason
        learner.set_params(time_limit=job.timeout)
    if "random_state" in learner.get_params() and learner.random_state is None:
        learner.set_params(random_state=np.random.SeedSequence(list(job.seed_entropy)))  # the cell's seed
    with _alarm(job.timeout):
        t0 = time.perf_counter()
        learner.fit(X, y)
        return time.perf_counter() - t0


def evaluate(job, learner, data, *, trace, train_time: float, n_train: int, epochs: int) -> Outcome:
    """Score the fitted learner on the test rows and build the holdout record fields."""
    task = job.spec["task"]
    t0 = time.perf_counter()
    pred = np.asarray(learner.predict(data.X_test))
    test_time = time.perf_counter() - t0
    y_test = np.asarray(data.y_test)
    status = "ok"
    if task == "regression":
        pred = pred.astype(np.float64)
        if not np.all(np.isfinite(pred)):
            status = "diverged"
        rmse = float(np.sqrt(np.mean((pred - y_test) ** 2))) if len(y_test) else float("nan")
        acc, metric, value = None, "test_rmse", rmse
    else:
        acc = float(np.mean(pred == y_test)) if len(y_test) else float("nan")
        rmse, metric, value = None, "test_accuracy", acc
        try:
            scores = np.asarray(learner.decision_function(data.X_test[: min(len(y_test), 8)]), float)
            if not np.all(np.isfinite(scores)):
                status = "diverged"
        except (AttributeError, NotImplementedError, ValueError):
            pass
    if job.timeout is not None and train_time > job.timeout:
        status = "timeout"
    support = getattr(learner, "support_size_", None)
    if support is None and hasattr(learner, "n_support_"):
        support = int(np.sum(learner.n_support_))
    steps = trace.n_samples if trace is not None else n_train
    # a learner may stop early (PegasosM's max_support): the rate is over the steps it took
    steps = int(getattr(learner, "n_trained_", steps) or steps)
    rate = trace.mistakes / steps if trace is not None and steps else None
    fields = {
        "metric": metric, "value": value if np.isfinite(value) else None, "time_s": float(train_time),
        "support_size": None if support is None else int(support), "n_samples": int(n_train),
        "mistake_rate": rate, "mistakes": None if trace is None else int(trace.mistakes),
        "holdout": {
            "n_train": int(n_train), "n_test": int(len(y_test)), "epochs": epochs, "steps": int(steps),
            "train_time_s": float(train_time), "test_time_s": float(test_time),
            "test_accuracy": acc, "test_rmse": rmse, "train_mistake_rate": rate,
            # "validation": an inner cell of `select` (scored on a validation cut; reports skip it)
            "evaluated_on": job.spec.get("evaluate", "test"),
        },
    }
    if job.selection is not None:
        fields["holdout"]["selection"] = job.selection
    if getattr(learner, "threshold_search_", None) is not None:
        fields["holdout"]["threshold_search"] = learner.threshold_search_
    if getattr(learner, "test_curve_", None) is not None:
        fields["holdout"]["test_curve"] = learner.test_curve_
    if getattr(learner, "model_form_", None) is not None:  # e.g. DSG's max_blocks="auto": which form ran
        fields["holdout"]["model_form"] = learner.model_form_
    if task == "regression" and trace is not None:
        fields["squared_loss"] = None  # the training pass's loss stays in the curve; value is the test RMSE
    return withhold_diverged(Outcome(status=status, trace=trace, fields=fields))
