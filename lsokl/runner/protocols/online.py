"""The online (prequential) protocol of LSOKL Tables 5/7/9: one pass over a permutation of the
data, predict then update, mistake rate (or squared loss) at checkpoints. The learner must offer
``run(X, y, order, n_checkpoints=, random_source=) -> Trace`` (see lsokl.learners.base)."""
from __future__ import annotations

from ... import protocol_options as _options
from ...compute.degenerate import classify as check_degenerate
from ...compute.degenerate import constant_reference
from . import Outcome, Prepared

OPTIONS: dict = _options.OPTIONS["online"]  # no keys beyond the common ones
check_learner = _options.CHECK_LEARNER["online"]


def load(spec, seed: int, options: dict) -> Prepared:
    from ..run import load_dataset

    return Prepared(train=load_dataset(spec))


def run_cell(job, data) -> Outcome:
    from ..worker import _alarm, build, diverged, random_source, warm_up

    order = job.order(data.X.shape[0], data.permutations)
    learner = build(job)
    warm_up(job, data.X, data.y)
    with _alarm(job.timeout):
        trace = learner.run(data.X, data.y, order, n_checkpoints=job.spec["n_checkpoints"],
                            random_source=random_source(job, learner))
    status, fields = "ok", {}
    if job.timeout is not None and trace.elapsed > job.timeout:
        status = "timeout"  # no alarm available here (e.g. a Dask worker thread)
    elif diverged(learner, trace, data.X):
        status = "diverged"
    else:  # a constant predictor is flagged in the record (and never chosen by a step-size search)
        fields["degenerate"] = check_degenerate(trace, data.y, order)
    if trace.n_samples:  # the best constant predictor on the same stream: the tables' reference row
        fields["constant"] = constant_reference(data.y, order, trace.n_samples, trace.task)
    return Outcome(status=status, trace=trace, fields=fields)
