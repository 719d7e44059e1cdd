"""Kernel approximations of the MEKA paper (Si, Hsieh, Dhillon, JMLR 2017): one module per method
behind one protocol (:mod:`lsokl.approx.base`): ``fit(X)``, ``matvec``, ``solve(lam, y)``,
``rows``, ``cross``/``cross_matvec``, ``memory_`` and ``timings_``.

The methods are registered with the learners in :mod:`lsokl.learners.registry` (one registry);
``create("meka", rank=128, gamma=2, clusters=5)`` builds one. The kernel maths is shared with the
online learners: :func:`lsokl.compute.kernels.gaussian_block` (every Gaussian block),
:class:`lsokl.compute.features.NystromMap` (NOGD's map = every Nystrom factor here) and
:class:`lsokl.compute.features.FourierMap` (FOGD's map = RKS).
"""
from __future__ import annotations

from .base import KernelApproximation, LowRankApproximation


def create(name: str, **params) -> KernelApproximation:
    """An approximation by its registered name (``nystrom``, ``rnys``, ``knys``, ``enys``, ``rks``,
    ``fastfood``, ``meka``)."""
    from ..learners import registry

    return registry.create(name, "approximation", **params)


__all__ = ["KernelApproximation", "LowRankApproximation", "create"]
