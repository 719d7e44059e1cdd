"""NORMA with the nu-adaptive epsilon-insensitive loss, as the authors' ``regression/Epsilon.m``
(spec section 3; Kivinen, Smola and Williamson's NORMA, "nu" variant).

At every step, after predicting and recording the squared loss, all coefficients decay by
(1 - lambda eta). If |y - f| > epsilon_t the instance is appended with eta sign(y - f) and
epsilon grows by (1 - nu) eta; otherwise epsilon shrinks by nu eta. Epsilon is not bounded
below (the authors' code lets it go negative, after which every step is an event). No budget:
the decay, not removal, keeps old coefficients small. Defaults are the authors' script values
(Epsilon_eta = 0.03, lambda = 0.03, nu = 0.4, epsl = 0.1).
"""
from __future__ import annotations

from ...compute.params import NON_NEGATIVE, POSITIVE, Num
from .perceptron import RegressionPerceptron


class NORMA(RegressionPerceptron):
    """Kernel NORMA for regression: decayed Perceptron-type steps, nu-adaptive epsilon.

    ``counts_[1]`` counts the |y - f| > epsilon_t events; ``epsilon_[0]`` is the current
    threshold."""

    name = "norma"
    _params = {**RegressionPerceptron._params, "lam": NON_NEGATIVE,
               "nu": Num(0, 1, "both"), "eta": POSITIVE}

    def __init__(self, *, sigma: float | str = "scale", eta: float = 0.03, lam: float = 0.03,
                 nu: float = 0.4, epsilon: float = 0.1):
        super().__init__(sigma=sigma, eta=eta, epsilon=epsilon)
        self.lam = lam
        self.nu = nu

    def _play(self, stream, y, order, start, stop):
        eta = float(self.eta)
        # Written as the authors' expressions so the doubles are theirs: 1 - lambda*eta,
        # (1 - nu)*eta and nu*eta.
        self._play_regression(stream, y, order, start, stop, by_sign=True, eta=eta,
                              decay=1.0 - float(self.lam) * eta,
                              eps_up=(1.0 - float(self.nu)) * eta, eps_down=float(self.nu) * eta)
