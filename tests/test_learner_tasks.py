"""Asking for a task a learner lacks names the learners that have it (no look-alike guess), and a
learner that fits m classes (LIBSVM, SVC's one-vs-one) is registered for the multi-class task."""
from __future__ import annotations

import numpy as np
import pytest

from lsokl.errors import UnknownNameError
from lsokl.learners import registry


def test_missing_task_names_the_learners_that_have_it():
    with pytest.raises(UnknownNameError) as info:
        registry.get("llsvm", "multiclass")
    msg = str(info.value)
    assert "'llsvm' has no multiclass task (it exists for binary)" in msg
    have = sorted(n for (t, n) in registry.LEARNERS if t == "multiclass")
    assert f"multiclass learners: {', '.join(have)}." in msg
    assert "Did you mean" not in msg


def test_libsvm_is_a_multiclass_learner():
    rng = np.random.default_rng(0)
    y = np.arange(150) % 3
    X = rng.standard_normal((150, 2)) * 0.3 + np.stack([y, -y], axis=1)
    model = registry.create("libsvm", "multiclass").fit(X, y)
    assert model.task == "multiclass" and model.classes_.tolist() == [0, 1, 2]
    assert np.mean(model.predict(X) == y) > 0.9
