"""One table from the names used in configs to learner classes.

Entries are import paths, so importing the registry is cheap and a learner module is only
loaded (and compiled) when it is used. Adding an algorithm = one module + one line here.
"""
from __future__ import annotations

import importlib

from ..errors import UnknownNameError

# (task, config name) -> "module:Class"
LEARNERS: dict[tuple[str, str], str] = {
    ("binary", "perceptron"): "lsokl.learners.perceptron:KernelPerceptron",
    ("binary", "ogd"): "lsokl.learners.ogd:KernelOGD",
    ("binary", "rbp"): "lsokl.learners.rbp:RBP",
    ("binary", "forgetron"): "lsokl.learners.forgetron:Forgetron",
    ("binary", "projectron"): "lsokl.learners.projectron:Projectron",
    ("binary", "projectron++"): "lsokl.learners.projectron:ProjectronPP",
    ("binary", "bpas"): "lsokl.learners.bpas:BPAS",
    ("binary", "bogd"): "lsokl.learners.bogd:BOGD",
    ("binary", "fogd"): "lsokl.learners.fogd:FOGD",
    ("binary", "nogd"): "lsokl.learners.nogd:NOGD",
    ("binary", "libsvm"): "lsokl.learners.libsvm:LIBSVM",  # batch: holdout protocol only
    ("binary", "llsvm"): "lsokl.learners.llsvm:LLSVM",  # batch: holdout protocol only
    # BPegasosM (ICML 2010) and BudgetedSVM's BSGD: binary data as 2 classes (spec BUDGETED_PEGASOS.md)
    ("binary", "pegasos"): "lsokl.learners.bpegasos:BinaryPegasos",
    ("binary", "bpegasos"): "lsokl.learners.bpegasos:BinaryBPegasos",
    ("binary", "bsgd-m"): "lsokl.learners.bpegasos:BinaryBSGDM",
    ("binary", "bsgd-r"): "lsokl.learners.bpegasos:BinaryBSGDR",
    ("binary", "prjtrn++"): "lsokl.learners.prjtrn:BinaryPRJTRNpp",  # DOGMA's, threshold tuned to B
    ("binary", "bka-svm"): "lsokl.learners.bkasvm:BKASVM",  # batch (MEKA Table 2)
    ("binary", "libsvm-subsample"): "lsokl.learners.libsvm_subsample:LIBSVMSubsample",  # batch
    ("binary", "fastfood-svm"): "lsokl.learners.fastfood_svm:FastfoodSVM",  # batch (MEKA Table 2)
    # DSG (Dai et al. 2014) and its Fig. 1 baselines: mini-batch learners, holdout protocol.
    ("binary", "dsg"): "lsokl.learners.dsg:DSG",
    ("binary", "norma"): "lsokl.learners.kernel_sgd:KernelNORMA",
    ("binary", "ksdca"): "lsokl.learners.kernel_sgd:KernelSDCA",
    ("binary", "rpegasos"): "lsokl.learners.feature_linear:RandomFeaturePegasos",
    ("binary", "rsdca"): "lsokl.learners.feature_linear:RandomFeatureSDCA",
    ("binary", "npegasos"): "lsokl.learners.feature_linear:NystromPegasos",
    ("binary", "nsdca"): "lsokl.learners.feature_linear:NystromSDCA",
    # Multi-class (spec section 2): one shared support set, one coefficient per (class, SV).
    ("multiclass", "perceptron"): "lsokl.learners.perceptron:MulticlassPerceptron",
    ("multiclass", "ogd"): "lsokl.learners.ogd:MulticlassOGD",
    ("multiclass", "rbp"): "lsokl.learners.rbp:MulticlassRBP",
    ("multiclass", "forgetron"): "lsokl.learners.forgetron:MulticlassForgetron",
    ("multiclass", "projectron"): "lsokl.learners.projectron:MulticlassProjectron",
    ("multiclass", "projectron++"): "lsokl.learners.projectron:MulticlassProjectronPP",
    ("multiclass", "bpas"): "lsokl.learners.bpas:MulticlassBPAS",
    ("multiclass", "bogd"): "lsokl.learners.bogd:MulticlassBOGD",
    ("multiclass", "fogd"): "lsokl.learners.fogd:MulticlassFOGD",
    ("multiclass", "nogd"): "lsokl.learners.nogd:MulticlassNOGD",
    ("multiclass", "pegasos"): "lsokl.learners.bpegasos:Pegasos",
    ("multiclass", "bpegasos"): "lsokl.learners.bpegasos:BPegasos",
    ("multiclass", "bsgd-m"): "lsokl.learners.bpegasos:BSGDM",
    ("multiclass", "bsgd-r"): "lsokl.learners.bpegasos:BSGDR",
    ("multiclass", "prjtrn++"): "lsokl.learners.prjtrn:PRJTRNpp",  # not LSOKL's projectron++
    ("multiclass", "dsg"): "lsokl.learners.dsg:MulticlassDSG",
    # Regression (spec section 3): update when |y - f| > epsilon, report the squared loss.
    ("regression", "perceptron"): "lsokl.learners.perceptron:RegressionPerceptron",
    ("regression", "ogd"): "lsokl.learners.ogd:RegressionOGD",
    ("regression", "norma"): "lsokl.learners.norma:NORMA",
    ("regression", "rbp"): "lsokl.learners.rbp:RegressionRBP",
    ("regression", "forgetron"): "lsokl.learners.forgetron:RegressionForgetron",
    ("regression", "projectron"): "lsokl.learners.projectron:RegressionProjectron",
    ("regression", "bogd"): "lsokl.learners.bogd:RegressionBOGD",
    ("regression", "fogd"): "lsokl.learners.fogd:RegressionFOGD",
    ("regression", "nogd"): "lsokl.learners.nogd:RegressionNOGD",
    ("regression", "dsg"): "lsokl.learners.dsg:RegressionDSG",
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
            tasks = sorted(t for (t, n) in LEARNERS if n == key)
            raise UnknownNameError(f"{task} algorithm (it exists for {', '.join(tasks)})", name,
                                   names(task))
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
