"""State shared by the learners that keep support vectors (everything but FOGD).

``sv_`` (capacity x d) holds the vectors, ``sv_sqn_`` their squared norms, ``order_`` the occupied
slots oldest first, ``size_[0]`` how many are stored, ``alpha_`` their coefficients in slot
coordinates: shape (capacity,) for binary and regression, (capacity, m) for multi-class.
Budget learners allocate ``budget`` slots once; unbudgeted ones grow by doubling. ``sv_`` is
column-major (Fortran order): kernel rows walk it feature by feature, each feature's values over
all slots contiguous (see ``kernels.dots_with_svs``).
"""
from __future__ import annotations

import numpy as np

from .base import OnlineLearner
from ..compute.kernels import gaussian_gram
from ..compute.memory import refuse_if_too_big
from ..compute.stream import Stream, float64_rows


class SupportVectorLearner(OnlineLearner):
    def _alpha_shape(self, capacity: int) -> tuple:
        if self.task == "multiclass":
            return (capacity, self.n_classes_)
        return (capacity,)

    def _capacity_for(self, n_steps: int) -> int:
        return int(self.budget) if self.budgeted else max(int(n_steps), 1)

    def _allocate_support(self, n_features: int, n_steps: int) -> None:
        cap = self._capacity_for(n_steps)
        width = int(np.prod(self._alpha_shape(1)))
        # a budget of 10^12 is one line with its size, not numpy's MemoryError from inside np.zeros
        refuse_if_too_big(self, {f"support vectors (slots x d = {cap:,} x {n_features:,})":
                                 8.0 * cap * (n_features + width + 3)})
        self.sv_ = np.zeros((cap, n_features), dtype=np.float64, order="F")
        self.sv_sqn_ = np.zeros(cap, dtype=np.float64)
        self.order_ = np.zeros(cap, dtype=np.int64)
        self.alpha_ = np.zeros(self._alpha_shape(cap), dtype=np.float64)
        self.size_ = np.zeros(1, dtype=np.int64)
        self.krow_ = np.zeros(cap, dtype=np.float64)  # scratch: the current kernel row

    def _ensure_capacity(self, extra: int) -> None:
        if self.budgeted:
            return
        need = int(self.size_[0]) + int(extra)
        cap = self.sv_.shape[0]
        if need <= cap:
            return
        new_cap = max(need, 2 * cap)
        grow = new_cap - cap
        sv = np.zeros((new_cap, self.sv_.shape[1]), dtype=np.float64, order="F")
        sv[:cap] = self.sv_
        self.sv_ = sv
        self.sv_sqn_ = np.concatenate([self.sv_sqn_, np.zeros(grow)])
        self.order_ = np.concatenate([self.order_, np.zeros(grow, dtype=np.int64)])
        self.alpha_ = np.concatenate([self.alpha_, np.zeros((grow,) + self.alpha_.shape[1:])])
        self.krow_ = np.zeros(new_cap)

    @property
    def support_size_(self) -> int:
        return int(self.size_[0])

    def support_vectors(self) -> np.ndarray:
        """The stored vectors, oldest first."""
        return self.sv_[self.order_[: self.support_size_]]

    def _scores(self, stream: Stream) -> np.ndarray:
        m = self.support_size_
        X = stream.csr if stream.is_sparse else stream.dense
        if m == 0:
            return np.zeros((stream.n_samples,) + self.alpha_.shape[1:])
        K = gaussian_gram(float64_rows(X), self.sv_[:m], self.sigma_)
        return K @ self.alpha_[:m]
