"""A one-dimensional Gaussian mixture fitted by expectation-maximization (EM).

Small and deterministic (the components start at evenly spaced quantiles of the data; nothing
is random), for PRIO+demand's four demand levels (utility.md §4). scikit-learn would do the
same; the dependency is not worth one 1-D fit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sitesim.errors import require

#: The smallest standard deviation a component keeps (relative to the data's spread).
FLOOR = 1e-3


@dataclass(frozen=True)
class GaussianMixture:
    """Weights, means and standard deviations of the components, ascending by mean."""

    weights: np.ndarray
    means: np.ndarray
    sds: np.ndarray

    def log_densities(self, x: np.ndarray) -> np.ndarray:
        """log(weight_k · N(x; mean_k, sd_k)) for every x (rows) and component (columns)."""
        x = np.asarray(x, dtype=np.float64)[:, None]
        z = (x - self.means) / self.sds
        return np.log(self.weights) - np.log(self.sds) - 0.5 * np.log(2 * np.pi) - 0.5 * z * z

    def predict(self, x: np.ndarray) -> np.ndarray:
        """The most likely component of each x (0 = the lowest mean)."""
        return np.argmax(self.log_densities(x), axis=1)

    def log_likelihood(self, x: np.ndarray) -> float:
        return float(np.logaddexp.reduce(self.log_densities(x), axis=1).sum())


def fit_mixture(
    x: np.ndarray, components: int = 4, *, iterations: int = 500, tolerance: float = 1e-9
) -> GaussianMixture:
    """The maximum-likelihood mixture of ``components`` Gaussians for samples ``x`` (EM).

    Components start at the (k + 0.5)/K quantiles with equal weights and the data's standard
    deviation / K; EM stops when the mean log-likelihood improves by less than ``tolerance``.
    """
    x = np.asarray(x, dtype=np.float64)
    x = x[np.isfinite(x)]
    require(len(x) >= components, f"a {components}-component fit needs as many samples")
    spread = float(x.std()) or 1.0
    floor = FLOOR * spread
    means = np.quantile(x, (np.arange(components) + 0.5) / components)
    sds = np.full(components, max(spread / components, floor))
    weights = np.full(components, 1.0 / components)
    previous = -np.inf
    for _ in range(iterations):
        mixture = GaussianMixture(weights, means, sds)
        logs = mixture.log_densities(x)
        total = np.logaddexp.reduce(logs, axis=1)
        mean_ll = float(total.mean())
        resp = np.exp(logs - total[:, None])  # responsibilities
        mass = resp.sum(axis=0) + 1e-300
        weights = np.maximum(mass / len(x), 1e-12)
        means = (resp * x[:, None]).sum(axis=0) / mass
        sds = np.sqrt((resp * (x[:, None] - means) ** 2).sum(axis=0) / mass)
        sds = np.maximum(sds, floor)
        if mean_ll - previous < tolerance:
            break
        previous = mean_ll
    order = np.argsort(means)
    return GaussianMixture(weights[order], means[order], sds[order])
