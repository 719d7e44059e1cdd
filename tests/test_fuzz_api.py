"""Fuzz the Python API (issue 23, "Done when"): every registered learner and approximation over
malformed and duplicate CSR, NaN/inf, empty, one-sample, one-class and wrong-width inputs, in
subprocesses (one per family, many cases each), asserting no crash (no death by a signal) and no
silent non-finite output (a NaN or inf result must come with a NonFiniteWarning, or the call must
raise an exception). A refusal is an exception a user can act on: never an AttributeError,
NotImplementedError or numpy's raw MemoryError; an approximation used before ``fit`` raises
NotFittedError, and a size parameter of 10^12 (budget, rank, ...) is refused before allocation.

The subprocess prints one JSON line with what it found; a segfault shows as a negative return
code naming the signal, and the family, learner and case it was playing are on its stderr."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

FAMILIES = ["online", "pegasos", "batch", "stochastic", "approx"]

SCRIPT = textwrap.dedent(r'''
    import json, sys, warnings
    import numpy as np, scipy.sparse as sp
    from lsokl.learners import registry
    from lsokl.compute.validation import NonFiniteWarning
    from lsokl.compute.memory import TooLargeError
    from sklearn.exceptions import NotFittedError

    family = sys.argv[1]
    rng = np.random.default_rng(0)

    def raw_csr(X, edit):
        A = sp.csr_matrix(X)
        B = sp.csr_matrix(X.shape)
        d, i, p = A.data.copy(), A.indices.copy(), A.indptr.copy()
        edit(d, i, p)
        B.data, B.indices, B.indptr = d, i, p
        return B

    def cases(task):
        n, dim = 24, 4
        X = rng.normal(size=(n, dim)); X[rng.random(X.shape) < 0.3] = 0
        y = {"binary": np.where(X[:, 0] > 0, 1, -1), "multiclass": np.arange(n) % 3,
             "regression": X[:, 0] + 0.1}[task]
        def big(i): i[2] = 10 ** 6
        def neg(i): i[2] = -3
        out = {
            "dense": (X, y, X),
            "csr-index-too-large": (raw_csr(X, lambda d, i, p: big(i)), y, X),
            "csr-index-negative": (raw_csr(X, lambda d, i, p: neg(i)), y, X),
            "csr-indptr-decreasing": (raw_csr(X, lambda d, i, p: p.__setitem__(slice(3, 5), p[3:5][::-1])), y, X),
            "csr-duplicates": (sp.csr_matrix((np.r_[X[X != 0] / 2, X[X != 0] / 2],
                                              (np.r_[np.nonzero(X)[0], np.nonzero(X)[0]],
                                               np.r_[np.nonzero(X)[1], np.nonzero(X)[1]])), shape=X.shape), y, X),
            "nan-X": (np.where(np.eye(n, dim) > 0, np.nan, X), y, X),
            "inf-X": (np.where(np.eye(n, dim) > 0, np.inf, X), y, X),
            "huge-X": (X * 1e200, y, X * 1e200),
            "empty": (X[:0], y[:0], X),
            "one-sample": (X[:1], y[:1], X),
            "one-class": (X, np.full(n, y[0]), X),
            "wrong-width": (X, y, X[:, :3]),
            "csr-bad-at-predict": (X, y, raw_csr(X, lambda d, i, p: big(i))),
            "csr-negative-at-predict": (X, y, raw_csr(X, lambda d, i, p: neg(i))),
            "nan-y": (X, np.where(np.arange(n) == 2, np.nan, y.astype(float)), X),
            "short-y": (X, y[:10], X),
        }
        return out

    def checked(call, what):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = call()
        vals = [out] if not isinstance(out, (list, tuple)) else out
        for v in vals:
            a = np.asarray(getattr(v, "test_error", v))
            if a.dtype.kind in "fc" and not np.all(np.isfinite(a)):
                if not any(issubclass(x.category, NonFiniteWarning) for x in w):
                    silent.append(what)
        return out

    def params(cls):
        p = {"sigma": 1.5, "random_state": 0, "batch_size": 8, "n_components": 8, "budget": 6,
             "dtype": "float64", "clusters": 2, "n_frequencies": 8, "gamma": 0.5, "rank": 8}
        return {k: v for k, v in p.items() if k in cls._get_param_names()}

    SIZES = ("budget", "rank", "n_components", "n_fourier", "n_frequencies")

    def odd(exc, what):
        """An exception no user can act on: the API's bug, not a refusal."""
        if isinstance(exc, (AttributeError, NotImplementedError)) or \
                (isinstance(exc, MemoryError) and not isinstance(exc, TooLargeError)):
            unexpected.append(f"{what}: {type(exc).__name__}: {str(exc)[:120]}")

    def attempt(call, what):
        try:
            return call()
        except Exception as exc:
            odd(exc, what)
            return None

    silent, unexpected, played = [], [], 0
    if family == "approx":
        targets = [("binary", n) for n in sorted(registry.APPROXIMATIONS)]
    else:
        mods = {"online": ".online.", "pegasos": ".pegasos.", "batch": ".batch.", "stochastic": ".stochastic."}
        targets = [(t, n) for (t, n), path in sorted(registry.LEARNERS.items()) if mods[family] in path]
    for task, name in targets:
        cls = registry.get(name, task)
        X0, y0, _ = cases(task)["dense"]
        if family == "approx":  # before fit: scikit-learn's NotFittedError
            played += 1
            for op, call in (("matvec", lambda m: m.matvec(np.ones(4))), ("solve", lambda m: m.solve(0.1, np.ones(4))),
                             ("rows", lambda m: m.rows([0]))):
                try:
                    call(cls(**params(cls)))
                    unexpected.append(f"approx:{name}:before-fit:{op}: no error")
                except NotFittedError:
                    pass
                except Exception as exc:
                    unexpected.append(f"approx:{name}:before-fit:{op}: {type(exc).__name__}")
        sizes = [k for k in SIZES if k in cls._get_param_names()]
        if sizes:  # 10^12: refused before allocation (a ValueError naming the size), never a raw MemoryError
            played += 1
            what = f"{family}:{task}:{name}:huge-size"
            print(what, file=sys.stderr, flush=True)
            p = {**params(cls), **{k: 10 ** 12 for k in sizes}}
            try:
                model = cls(**p)
                model.fit(X0) if family == "approx" else model.fit(X0, y0)
            except (ValueError, TypeError):
                pass
            except Exception as exc:
                odd(exc, what)
        for case, (X, y, Xt) in cases(task).items():
            what = f"{family}:{task}:{name}:{case}"
            print(what, file=sys.stderr, flush=True)
            played += 1
            try:
                if family == "approx":
                    model = cls(**params(cls)).fit(X)
                    checked(lambda: model.matvec(np.ones(model.n_samples_)), what + ":matvec")
                    checked(lambda: model.cross_matvec(Xt, np.ones(model.n_samples_)), what + ":cross_matvec")
                    continue
                model = cls(**params(cls)).fit(X, y)
            except Exception as exc:
                odd(exc, what + ":fit")
                continue
            if task != "regression":
                attempt(lambda: checked(lambda: model.decision_function(Xt), what + ":decision_function"),
                        what + ":decision_function")
            attempt(lambda: checked(lambda: model.predict(Xt), what + ":predict"), what + ":predict")
            if hasattr(cls, "run") and family in ("online", "pegasos"):
                try:
                    yy = np.asarray(y, dtype=float)
                    if task == "multiclass":
                        yy = np.asarray(y)
                    trace = checked(lambda: cls(**params(cls)).run(X, yy), what + ":run")
                    if task == "regression" and not np.isfinite(trace.squared_loss):
                        pass  # checked() saw sq_loss through the warning path
                except Exception:
                    pass
    print(json.dumps({"silent": silent, "unexpected": unexpected, "played": played}))
''')


@pytest.mark.parametrize("family", FAMILIES)
def test_fuzz_no_crash_no_silent_non_finite(family, tmp_path):
    env = dict(os.environ)
    proc = subprocess.run([sys.executable, "-c", SCRIPT, family], capture_output=True, text=True,
                          env=env, timeout=600)
    last = proc.stderr.strip().splitlines()[-3:] if proc.stderr else []
    assert proc.returncode >= 0, f"{family}: killed by signal {-proc.returncode} at {last}"
    assert proc.returncode == 0, f"{family}: exit {proc.returncode}: {proc.stderr[-2000:]}"
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found["played"] > 0
    assert not found["silent"], f"silent non-finite outputs: {found['silent']}"
    assert not found["unexpected"], f"errors no user can act on: {found['unexpected']}"
