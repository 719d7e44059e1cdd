"""What the protocols' and the selection methods' config keys are, and how they are validated.

The config layer (:mod:`lsokl.config`) validates a config with these tables and checks; the runner's protocol
modules (:mod:`lsokl.runner.protocols`) and selection methods (:mod:`lsokl.runner.selection`) read their options
from here. Living below both, they keep the layering one-way (issue 24 item 6): config parses and validates,
the runner runs, and config never imports the runner (it used to, for these tables, while the runner imported
config: a circle config -> runner.selection / runner.resources / search -> config).

Adding a protocol: its keys in :data:`OPTIONS` (and :data:`DATASET_OPTIONS`, :data:`CHECK_OPTIONS`,
:data:`CHECK_LEARNER` when it has them) and its module in ``lsokl.runner.protocols.PROTOCOLS``.
"""
from __future__ import annotations

import math
from numbers import Integral, Real

from .errors import closest

# --------------------------------------------------------------------------- stream orders
#: ``order:`` the row order of a pass (lsokl.runner.seeds): a full permutation, or blocks of rows for
#: data larger than memory
ORDERS = ("permutation", "block-shuffle")
#: rows per block of ``order: block-shuffle`` unless ``block_rows`` says otherwise (65536 x 784 float32 = 196 MiB)
DEFAULT_BLOCK_ROWS = 1 << 16

# --------------------------------------------------------------------------- protocols
DEFAULT = "online"
#: protocol -> the config keys it reads (besides the common ones), with their defaults
OPTIONS: dict[str, dict] = {
    "online": {},
    "holdout": {"epochs": 1, "test_fraction": None, "test_at": None, "test_with": "final", "device": None},
    "approximation": {"rows": "auto", "krr": None, "block_ranks": None, "device": None},
}
PROTOCOL_NAMES = tuple(OPTIONS)
#: protocol -> the keys that may also be set per dataset
DATASET_OPTIONS: dict[str, tuple] = {"approximation": ("rows", "krr")}
KRR_KEYS = ("lambda", "test_fraction", "target")


def check_approximation_options(fail, key: str, options: dict) -> dict:
    """Validated protocol options; ``fail(key, message)`` raises the config error."""
    out = {}
    if "rows" in options:
        rows = options["rows"]
        if rows is None:
            rows = "none"
        ok = rows in ("full", "auto", "none") or (isinstance(rows, Integral) and not isinstance(rows, bool)
                                                  and rows >= 1)
        if not ok:
            fail(_join(key, "rows"), f"expected `full`, `auto`, `none` or an integer >= 1 "
                                     f"(sampled rows), got {rows!r}")
        out["rows"] = rows
    if options.get("krr") is not None:
        krr = options["krr"]
        where = _join(key, "krr")
        if not isinstance(krr, dict):
            fail(where, f"expected a mapping with `lambda` (e.g. {{lambda: 0.0625}}), got {krr!r}")
        for k in krr:
            if k not in KRR_KEYS:
                fail(_join(where, k), f"unknown key. Allowed: {', '.join(KRR_KEYS)}.")
        if "lambda" not in krr:
            fail(where, "needs `lambda` (the ridge added to the diagonal), e.g. {lambda: 0.0625}")
        lam = krr["lambda"]
        if not _positive(lam):
            fail(_join(where, "lambda"), f"expected a number > 0, got {lam!r}")
        frac = krr.get("test_fraction", 0.2)
        if not _positive(frac) or not frac < 1:
            fail(_join(where, "test_fraction"), f"expected a number strictly between 0 and 1, got {frac!r}")
        target = krr.get("target", "as_loaded")
        if target not in ("as_loaded", "raw"):
            fail(_join(where, "target"), f"expected `as_loaded` or `raw`, got {target!r}")
        out["krr"] = {"lambda": float(lam), "test_fraction": float(frac), "target": target}
    if options.get("block_ranks") is not None:
        br = options["block_ranks"]
        where = _join(key, "block_ranks")
        if br is True:
            br = {}
        if not isinstance(br, dict) or set(br) - {"delta"}:
            fail(where, f"expected a mapping {{delta: 1.0e-6}} or true, got {br!r}")
        delta = br.get("delta", 1e-6)
        if not _positive(delta):
            fail(_join(where, "delta"), f"expected a number > 0, got {delta!r}")
        out["block_ranks"] = {"delta": float(delta)}
    return out


def _positive(v) -> bool:
    return isinstance(v, Real) and not isinstance(v, bool) and math.isfinite(v) and v > 0


def _join(key: str, sub) -> str:
    """``a.b`` / ``a[3]``: a config key path."""
    if isinstance(sub, int):
        return f"{key}[{sub}]"
    return f"{key}.{sub}" if key else str(sub)


def _online_learner(cls) -> str | None:
    if not callable(getattr(cls, "run", None)):
        return "it has no online `run` (it is a batch learner); use `protocol: holdout`"
    return None


def _holdout_learner(cls) -> str | None:
    if not callable(getattr(cls, "predict", None)):
        return "it has no `predict`"
    if not (callable(getattr(cls, "run", None)) or callable(getattr(cls, "fit", None))):
        return "it has neither `run` nor `fit`"
    return None


def _approximation_learner(cls) -> str | None:
    from .approx.base import KernelApproximation

    if not (isinstance(cls, type) and issubclass(cls, KernelApproximation)):
        return ("it is not a kernel approximation; `protocol: approximation` runs "
                "nystrom, rnys, knys, enys, rks, fastfood or meka")
    return None


#: protocol -> check_options(fail, key, options) -> validated options (the protocols that validate their own keys)
CHECK_OPTIONS = {"approximation": check_approximation_options}
#: protocol -> check_learner(cls) -> why the learner class cannot serve it (None: it can)
CHECK_LEARNER = {"online": _online_learner, "holdout": _holdout_learner, "approximation": _approximation_learner}


def has_test_split(name: str) -> bool:
    """Whether a dataset has its own test split (built-in sets and generators have none)."""
    from .data import builtin, registry

    if name in builtin.BUILTINS:
        return False
    spec = registry.resolve(name)
    return spec is not None and "test" in registry.get(name).splits


# --------------------------------------------------------------------------- select (holdout)
SELECT_KEY = "select"
GRID = "grid"  # `select: {sigma: grid, ...}`: the candidates are the sigma list the cell's dataset gives
#: selection method -> its options with their defaults (lsokl.runner.selection runs them)
SELECT_OPTIONS: dict[str, dict] = {
    "validation": {"validation_fraction": 0.1, "once": False},
    "cv": {"folds": 5, "subsample": None, "reduced": None},
}


def _check_validation_option(v, key: str, name: str, value):
    if name == "once":
        if not isinstance(value, bool):
            v.expected(key, "true or false", value)
        return value
    if not (isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < 1):
        v.expected(key, "a number strictly between 0 and 1", value)
    return float(value)


def _check_cv_options(v, key: str, options: dict) -> dict:
    sub = options.get("subsample")
    if sub is not None:
        options["subsample"] = v.int_(_join(key, "subsample"), sub, low=2 * options["folds"])
    why = options.get("reduced")
    if why is not None and not isinstance(why, str):
        v.expected(_join(key, "reduced"), "a sentence saying why the CV is reduced", why)
    return options


def parse_select(v, key: str, value, cls, lname: str) -> tuple:
    """Validate a ``select`` mapping; returns the sorted tuple stored on the cell."""
    if not isinstance(value, dict):
        v.expected(key, "a mapping like {sigma: [1, 4], by: validation}", value)
    value = dict(value)
    method = value.pop("by", None)
    if method is None:
        v.fail(_join(key, "by"), "is required (one of " + ", ".join(SELECT_OPTIONS) + ")")
    v.choice(_join(key, "by"), method, tuple(SELECT_OPTIONS))
    options = SELECT_OPTIONS[method]
    out = {"by": method}
    for opt, default in options.items():
        val = value.pop(opt, default)
        if method == "validation":
            out[opt] = _check_validation_option(v, _join(key, opt), opt, val)
            continue
        if isinstance(default, float):
            if not (isinstance(val, (int, float)) and not isinstance(val, bool) and 0 < val < 1):
                v.expected(_join(key, opt), "a number strictly between 0 and 1", val)
            val = float(val)
        elif isinstance(default, int):
            val = v.int_(_join(key, opt), val, low=2)
        out[opt] = val
    if method == "cv":  # options cv validates itself (subsample, reduced)
        out = _check_cv_options(v, key, out)
    if not value:
        v.fail(key, "names no parameter to select (e.g. `sigma: [1, 4]`)")
    accepted = set(cls._get_param_names()) if cls is not None else None
    for pname, vals in value.items():
        pkey = _join(key, pname)
        if accepted is not None and pname not in accepted:
            guess = closest(pname, accepted | set(options))
            hint = f" Did you mean {guess[0]!r}?" if guess else ""
            v.fail(pkey, f"{lname} has no parameter {pname!r} and `by: {method}` has no option "
                         f"{pname!r}.{hint} Options of `by: {method}`: {', '.join(options)}.")
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
                    v.expected(f"{pkey}[{i}]", describe_rule(rule, val) or "a valid value", val)
        out[pname] = tuple(vals)
    return tuple(sorted(out.items()))


def describe_rule(rule, value=None) -> str | None:
    """A learner parameter rule (lsokl.compute.params) in the words of an error message (for the
    refused ``value``, when the rule words itself: KernelWidth)."""
    if hasattr(rule, "describe"):
        return rule.describe(value)
    name = type(rule).__name__
    if name == "Num":
        kind = "an integer" if rule.integer else "a number"
        lo, hi = rule.low, rule.high
        lo_in = rule.closed in ("left", "both")
        hi_in = rule.closed in ("right", "both")
        if math.isinf(lo) and math.isinf(hi):
            text = kind
        elif math.isinf(hi):
            text = f"{kind} {'>=' if lo_in else '>'} {lo:g}"
        elif math.isinf(lo):
            text = f"{kind} {'<=' if hi_in else '<'} {hi:g}"
        else:
            text = f"{kind} in {'[' if lo_in else '('}{lo:g}, {hi:g}{']' if hi_in else ')'}"
        return text + (" or null" if rule.allow_none else "")
    if name == "OneOf":
        return "one of " + ", ".join(repr(o) for o in rule.options)
    if name == "Seed":
        return "null or an integer >= 0"
    return None
