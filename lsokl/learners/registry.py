"""One table from the names used in configs to learner classes.

Entries are import paths, so importing the registry is cheap and a learner module is only
loaded (and compiled) when it is used. Adding an algorithm = one module + one line here.
"""
from __future__ import annotations

import importlib

from ..errors import UnknownNameError

# (task, config name) -> "module:Class"
LEARNERS: dict[tuple[str, str], str] = {
    ("binary", "perceptron"): "lsokl.learners.online.perceptron:KernelPerceptron",
    ("binary", "ogd"): "lsokl.learners.online.ogd:KernelOGD",
    ("binary", "rbp"): "lsokl.learners.online.rbp:RBP",
    ("binary", "forgetron"): "lsokl.learners.online.forgetron:Forgetron",
    ("binary", "projectron"): "lsokl.learners.online.projectron:Projectron",
    ("binary", "projectron++"): "lsokl.learners.online.projectron:ProjectronPP",
    ("binary", "bpas"): "lsokl.learners.online.bpas:BPAS",
    ("binary", "bogd"): "lsokl.learners.online.bogd:BOGD",
    ("binary", "fogd"): "lsokl.learners.online.fogd:FOGD",
    ("binary", "nogd"): "lsokl.learners.online.nogd:NOGD",
    ("binary", "libsvm"): "lsokl.learners.batch.libsvm:LIBSVM",  # batch: holdout protocol only
    ("binary", "llsvm"): "lsokl.learners.batch.llsvm:LLSVM",  # batch: holdout protocol only
    # BPegasosM (ICML 2010) and BudgetedSVM's BSGD: binary data as 2 classes (spec BUDGETED_PEGASOS.md)
    ("binary", "pegasos"): "lsokl.learners.pegasos.bpegasos:BinaryPegasos",
    ("binary", "bpegasos"): "lsokl.learners.pegasos.bpegasos:BinaryBPegasos",
    ("binary", "bsgd-m"): "lsokl.learners.pegasos.bpegasos:BinaryBSGDM",
    ("binary", "bsgd-r"): "lsokl.learners.pegasos.bpegasos:BinaryBSGDR",
    ("binary", "prjtrn++"): "lsokl.learners.pegasos.prjtrn:BinaryPRJTRNpp",  # DOGMA's, threshold tuned to B
    ("binary", "bka-svm"): "lsokl.learners.batch.bkasvm:BKASVM",  # batch (MEKA Table 2)
    ("binary", "libsvm-subsample"): "lsokl.learners.batch.libsvm_subsample:LIBSVMSubsample",  # batch
    ("binary", "fastfood-svm"): "lsokl.learners.batch.fastfood_svm:FastfoodSVM",  # batch (MEKA Table 2)
    # DSG (Dai et al. 2014) and its Fig. 1 baselines: mini-batch learners, holdout protocol.
    ("binary", "dsg"): "lsokl.learners.stochastic.dsg:DSG",
    ("binary", "norma"): "lsokl.learners.stochastic.kernel_sgd:KernelNORMA",
    ("binary", "ksdca"): "lsokl.learners.stochastic.kernel_sgd:KernelSDCA",
    ("binary", "rpegasos"): "lsokl.learners.stochastic.feature_linear:RandomFeaturePegasos",
    ("binary", "rsdca"): "lsokl.learners.stochastic.feature_linear:RandomFeatureSDCA",
    ("binary", "npegasos"): "lsokl.learners.stochastic.feature_linear:NystromPegasos",
    ("binary", "nsdca"): "lsokl.learners.stochastic.feature_linear:NystromSDCA",
    # Multi-class (spec section 2): one shared support set, one coefficient per (class, SV).
    ("multiclass", "perceptron"): "lsokl.learners.online.perceptron:MulticlassPerceptron",
    ("multiclass", "ogd"): "lsokl.learners.online.ogd:MulticlassOGD",
    ("multiclass", "rbp"): "lsokl.learners.online.rbp:MulticlassRBP",
    ("multiclass", "forgetron"): "lsokl.learners.online.forgetron:MulticlassForgetron",
    ("multiclass", "projectron"): "lsokl.learners.online.projectron:MulticlassProjectron",
    ("multiclass", "projectron++"): "lsokl.learners.online.projectron:MulticlassProjectronPP",
    ("multiclass", "bpas"): "lsokl.learners.online.bpas:MulticlassBPAS",
    ("multiclass", "bogd"): "lsokl.learners.online.bogd:MulticlassBOGD",
    ("multiclass", "fogd"): "lsokl.learners.online.fogd:MulticlassFOGD",
    ("multiclass", "nogd"): "lsokl.learners.online.nogd:MulticlassNOGD",
    ("multiclass", "pegasos"): "lsokl.learners.pegasos.bpegasos:Pegasos",
    ("multiclass", "bpegasos"): "lsokl.learners.pegasos.bpegasos:BPegasos",
    ("multiclass", "bsgd-m"): "lsokl.learners.pegasos.bpegasos:BSGDM",
    ("multiclass", "bsgd-r"): "lsokl.learners.pegasos.bpegasos:BSGDR",
    ("multiclass", "prjtrn++"): "lsokl.learners.pegasos.prjtrn:PRJTRNpp",  # not LSOKL's projectron++
    ("multiclass", "dsg"): "lsokl.learners.stochastic.dsg:MulticlassDSG",
    ("multiclass", "libsvm"): "lsokl.learners.batch.libsvm:MulticlassLIBSVM",  # SVC's one-vs-one; holdout only
    # Regression (spec section 3): update when |y - f| > epsilon, report the squared loss.
    ("regression", "perceptron"): "lsokl.learners.online.perceptron:RegressionPerceptron",
    ("regression", "ogd"): "lsokl.learners.online.ogd:RegressionOGD",
    ("regression", "norma"): "lsokl.learners.online.norma:NORMA",
    ("regression", "rbp"): "lsokl.learners.online.rbp:RegressionRBP",
    ("regression", "forgetron"): "lsokl.learners.online.forgetron:RegressionForgetron",
    ("regression", "projectron"): "lsokl.learners.online.projectron:RegressionProjectron",
    ("regression", "bogd"): "lsokl.learners.online.bogd:RegressionBOGD",
    ("regression", "fogd"): "lsokl.learners.online.fogd:RegressionFOGD",
    ("regression", "nogd"): "lsokl.learners.online.nogd:RegressionNOGD",
    ("regression", "dsg"): "lsokl.learners.stochastic.dsg:RegressionDSG",
}

# Kernel approximations (lsokl.approx, MEKA paper): not learners but fitted approximations of the
# Gaussian kernel matrix, run by the `approximation` protocol. They do not depend on the task.
APPROXIMATIONS: dict[str, str] = {
    "nystrom": "lsokl.approx.nystrom:Nystrom",
    "rnys": "lsokl.approx.rnys:RNystrom",
    "knys": "lsokl.approx.knys:KMeansNystrom",
    "enys": "lsokl.approx.enys:EnsembleNystrom",
    "rks": "lsokl.approx.rks:RandomFourier",
    "fastfood": "lsokl.approx.fastfood:Fastfood",
    "meka": "lsokl.approx.meka:MEKA",
}

# Names as the papers' tables print them, for reports.
DISPLAY_NAMES = {
    "perceptron": "Perceptron", "ogd": "OGD", "rbp": "RBP", "forgetron": "Forgetron",
    "projectron": "Projectron", "projectron++": "Projectron++", "bpas": "BPA-S", "bogd": "BOGD",
    "fogd": "FOGD", "nogd": "NOGD", "norma": "NORMA", "libsvm": "LIBSVM", "llsvm": "LLSVM",
    "pegasos": "PegasosM", "bpegasos": "BPegasosM", "bsgd-m": "BSGD-M", "bsgd-r": "BSGD-R", "prjtrn++": "PRJTRN++",
    "nystrom": "Nys", "rnys": "RNys", "knys": "KNys", "enys": "ENys", "rks": "RKS",
    "fastfood": "Fastfood", "meka": "MEKA", "bka-svm": "BKA-SVM", "fastfood-svm": "FastFood",
    "libsvm-subsample": "LIBSVM (subsample)",
    "dsg": "DSG", "ksdca": "k-SDCA",
    "rpegasos": "r-Pegasos", "rsdca": "r-SDCA", "npegasos": "n-Pegasos", "nsdca": "n-SDCA",
}

ALIASES = {"bpa-s": "bpas", "projectronpp": "projectron++", "kernel-perceptron": "perceptron",
           "kernel-ogd": "ogd", "nys": "nystrom"}


def names(task: str | None = None) -> list[str]:
    """Registered config names (for one task, or all); approximations serve every task."""
    return sorted({n for (t, n) in LEARNERS if task is None or t == task} | set(APPROXIMATIONS))


def canonical(name: str) -> str:
    key = name.strip().lower()
    return ALIASES.get(key, key)


def get(name: str, task: str = "binary") -> type:
    """The learner class registered as ``name`` for ``task``; unknown names suggest the closest."""
    key = canonical(name)
    if key in APPROXIMATIONS and (task, key) not in LEARNERS:
        module, cls = APPROXIMATIONS[key].split(":")
        return getattr(importlib.import_module(module), cls)
    if (task, key) not in LEARNERS:
        if any(n == key for (_, n) in LEARNERS):
            # a learner without this task: say which tasks it has and which learners have this one
            # (no look-alike guess: a similar name is not a learner for this task's reason)
            tasks = sorted(t for (t, n) in LEARNERS if n == key)
            err = UnknownNameError(f"{task} algorithm", name, names(task))
            have = sorted(n for (t, n) in LEARNERS if t == task)
            err.args = (f"{name!r} has no {task} task (it exists for {', '.join(tasks)}). "
                        f"{task} learners: {', '.join(have)}.",)
            raise err
        raise UnknownNameError(f"{task} algorithm", name, names(task))
    module, cls = LEARNERS[(task, key)].split(":")
    return getattr(importlib.import_module(module), cls)


def create(name: str, task: str = "binary", **params):
    """Instantiate a registered learner; unknown parameters are reported with the valid ones."""
    cls = get(name, task)
    valid = set(cls._get_param_names())
    bad = [p for p in params if p not in valid]
    if bad:
        raise UnknownNameError(f"parameter of {name}", bad[0], valid)
    return cls(**params)
