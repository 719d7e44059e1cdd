"""``check_estimator(create(name))`` passes with no extra arguments, for every learner at its
defaults: no learner may rely on a documented expected-failure list at its default settings.

The full scikit-learn check suite runs on every learner in ``test_sklearn_contract.py`` (strict:
a declared failure that passes is an error there); here we pin that no learner declares one at its
defaults, and run ``check_estimator`` itself, plainly, on DSG (whose float32 scores used to differ
with the rows predicted together: check_methods_subset_invariance).
"""
from __future__ import annotations

import pytest
from sklearn.utils.estimator_checks import check_estimator

from lsokl.learners import registry
from lsokl.learners.base import expected_failed_checks


@pytest.mark.parametrize("task, name", sorted(registry.LEARNERS))
def test_no_expected_failures_at_defaults(task, name):
    learner = registry.create(name, task)
    assert expected_failed_checks(learner) == {}, (task, name)


@pytest.mark.parametrize("task", ["binary", "multiclass"])
def test_plain_check_estimator_passes_for_dsg(task):
    check_estimator(registry.create("dsg", task))


def test_dsg_scores_do_not_depend_on_the_rows_predicted_together():
    import numpy as np

    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 4)) * 3
    y = np.where(X[:, 0] + X[:, 1] ** 2 > 2, 1, -1)
    learner = registry.create("dsg", "binary", random_state=0).fit(X, y)
    whole = learner.decision_function(X)
    parts = np.concatenate([learner.decision_function(X[a:a + 7]) for a in range(0, 300, 7)])
    assert np.array_equal(whole, parts) or np.max(np.abs(whole - parts)) <= 1e-12 * np.max(np.abs(whole))
