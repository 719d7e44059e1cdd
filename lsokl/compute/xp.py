"""Array API support: the mini-batch and batch families on torch / CuPy arrays (issue 28).

lsokl's per-sample online loops are sequential by definition (predict, count, update, one row at a
time) and stay numba-compiled on the CPU. What is written against the Array API standard, through
the ``array-api-compat`` package, is the work that is already batched into matrix products:

* DSG (:mod:`lsokl.learners.stochastic.dsg`, growing and bounded forms, every loss, with or
  without the preconditioner),
* the low-rank kernel approximations RKS, Nys and KNys with the kernel ridge solve
  (:mod:`lsokl.approx`), and
* MEKA (:mod:`lsokl.approx.meka`): its n x k_s blocks W_s and link matrix L on the device, the
  rows kept sorted by cluster there (the standard has no integer-array assignment: a permutation
  and its inverse through ``take``); its k-means over the sampled rows, the 2k x 2k landmark
  eigendecompositions and the 4k-row link solves run on the host and move over.

Given numpy arrays they run the numpy code they always ran (bit for bit). Given arrays of another
namespace (``torch.Tensor``, ``cupy.ndarray``, ``array_api_strict``) they compute in that namespace,
on that array's device. Random draws (DSG's frequency blocks, RKS's frequencies, Nystrom's landmark
indices, k-means starts, MEKA's landmark and link positions) are always made by numpy from the
same seeds and then moved to the device, so every backend plays the same model; the results agree
with numpy to float32 round-off (the order of a GEMM's sums differs between BLAS libraries), not
bit for bit.

What array-api-compat could not do and is written here: choosing a device by name from a config
(``device: cuda``) with a one-line error when it is absent, and moving a numpy array onto the
device of another array in its dtype.
"""
from __future__ import annotations

import numpy as np

try:  # a hard dependency of lsokl; imported lazily by the hot paths through this module
    import array_api_compat as _compat
except ImportError:  # pragma: no cover - installed with lsokl
    _compat = None


def is_numpy(x) -> bool:
    """True for numpy arrays and scipy sparse matrices (lsokl's native path), scalars, None."""
    if x is None or isinstance(x, (np.ndarray, np.generic, int, float)):
        return True
    if _compat is None:
        return True
    import scipy.sparse as sp

    if sp.issparse(x):
        return True
    return not _compat.is_array_api_obj(x) or _compat.is_numpy_array(x)


def namespace(*arrays):
    """The array namespace of ``arrays`` (array-api-compat's wrapped namespace), or numpy."""
    arrays = [a for a in arrays if a is not None and not is_numpy(a)]
    if not arrays:
        return np
    return _compat.array_namespace(*arrays)


def device(x):
    """The device an array lives on (None for numpy)."""
    return None if is_numpy(x) else _compat.device(x)


def asarray(a, like, dtype=None):
    """``a`` (numpy or a Python scalar) as an array of ``like``'s namespace, on ``like``'s device,
    in ``dtype`` (a dtype of that namespace; default: ``like``'s dtype)."""
    if is_numpy(like):
        return np.asarray(a, dtype=dtype if dtype is not None else getattr(like, "dtype", None))
    xp = namespace(like)
    return xp.asarray(np.ascontiguousarray(a), dtype=dtype if dtype is not None else like.dtype,
                      device=device(like))


def to_numpy(x) -> np.ndarray:
    """A host numpy copy of an array of any namespace (small results: scores, labels, curves)."""
    if is_numpy(x):
        return np.asarray(x)
    if hasattr(x, "detach"):  # torch: leave autograd and the device
        return x.detach().cpu().numpy()
    if hasattr(x, "get"):  # cupy
        return x.get()
    try:  # array_api_strict and other host arrays: DLPack, no copy where possible
        return np.from_dlpack(x)
    except (TypeError, BufferError, RuntimeError, AttributeError):
        return np.asarray(x)


def labels_like(labels: np.ndarray, like):
    """Predicted labels (host numpy, ``classes_``'s dtype) in ``like``'s namespace and on its device,
    scikit-learn's convention for Array API input. Labels the standard cannot hold (strings,
    objects) stay numpy."""
    if is_numpy(like) or np.asarray(labels).dtype.kind not in "biuf":
        return labels
    return namespace(like).asarray(np.ascontiguousarray(labels), device=device(like))


def float_dtype(xp, name: str):
    """The namespace's float32 / float64 dtype."""
    return getattr(xp, name)


def put_device(X, name: str | None):
    """X (numpy) moved to the named device (``cpu``, ``cuda``, ``cuda:1``, ``mps``) through torch;
    ``None`` or ``"cpu-numpy"`` keep numpy. A one-line ValueError when the device is absent."""
    if name is None or name in ("numpy", "cpu-numpy"):
        return X
    check_device(name)
    import torch

    return torch.as_tensor(np.ascontiguousarray(X), device=name)


def check_device(name: str) -> None:
    """Refuse, in one line, a device that torch cannot reach here (or torch itself missing)."""
    if name in (None, "numpy", "cpu-numpy"):
        return
    try:
        import torch
    except ImportError:
        raise ValueError(f"device {name!r} needs torch (pip install 'lsokl[gpu]'); torch is not "
                         "installed") from None
    kind = str(name).split(":")[0]
    if kind == "cpu":
        return
    if kind == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"device {name!r}: no CUDA device is available to torch here "
                             f"(torch {torch.__version__}, built for CUDA {torch.version.cuda})")
        index = int(str(name).split(":")[1]) if ":" in str(name) else 0
        if index >= torch.cuda.device_count():
            raise ValueError(f"device {name!r}: only {torch.cuda.device_count()} CUDA device(s) here")
        return
    if kind == "mps":
        if not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
            raise ValueError(f"device {name!r}: Apple's MPS is not available here")
        return
    raise ValueError(f"unknown device {name!r}: use cpu, cuda, cuda:N or mps")


def take_rows(X, idx):
    """Rows ``idx`` (host integers) of X: numpy fancy indexing, or ``take`` on X's device."""
    if is_numpy(X):
        return X[idx]
    xp = namespace(X)
    return xp.take(X, asarray(np.asarray(idx, dtype=np.int64), X, dtype=xp.int64), axis=0)
