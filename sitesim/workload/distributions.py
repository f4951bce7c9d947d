"""Distributions: the building blocks of workloads.

Small objects, validated at construction, printable, and sampled in vectorized blocks with one
uniform number per draw (``sample(rng, n)`` is ``from_uniform(rng.random(n))``), so that a
stream's values do not depend on the block size. Two empirical kinds make up a workload
profile:

- :class:`Discrete`: values with probabilities (job sizes, batch widths, repetition counts);
- :class:`Quantiles`: a continuous distribution as a quantile table, sampled by inverse CDF
  with linear interpolation between the tabulated points (runtimes, think times, gaps).

Both are built from (optionally weighted) samples with :meth:`Discrete.fit` and
:meth:`Quantiles.fit`, and round-trip through plain dicts for JSON. One parametric kind serves
synthetic workloads:

- :class:`Hyperexponential2`: a two-phase hyperexponential given by its mean and coefficient of
  variation (the service times of experiment 5, :mod:`sitesim.models.synthetic`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from sitesim.errors import ConfigError, require

#: Default probability grid of a quantile table: every 0.2 %, plus finer tails.
DEFAULT_GRID = np.unique(np.concatenate([np.linspace(0, 1, 501), [0.0001, 0.0005, 0.9995, 0.9999]]))


def _weights(values: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    if weights is None:
        return np.ones(len(values))
    weights = np.asarray(weights, dtype=np.float64)
    require(weights.shape == values.shape, "weights must match the values one to one")
    require(bool((weights >= 0).all()), "weights must be >= 0")
    return weights


class Discrete:
    """A distribution over a finite set of values.

    Args:
        values: the distinct values, ascending.
        probabilities: their probabilities (>= 0; normalized to sum 1).
    """

    __slots__ = ("_cumulative", "probabilities", "values")

    def __init__(self, values: Any, probabilities: Any) -> None:
        values = np.asarray(values, dtype=np.float64)
        probabilities = np.asarray(probabilities, dtype=np.float64)
        require(values.ndim == 1 and len(values) > 0, "a discrete distribution needs values")
        require(values.shape == probabilities.shape, "values and probabilities differ in length")
        require(bool(np.isfinite(values).all()), "values must be finite")
        require(bool((np.diff(values) > 0).all()), "values must be distinct and ascending")
        require(
            bool((probabilities >= 0).all()) and probabilities.sum() > 0,
            "probabilities must be >= 0 and not all 0",
        )
        self.values = values
        self.probabilities = normalized(probabilities)
        self._cumulative = np.cumsum(self.probabilities)
        self._cumulative[-1] = 1.0

    @classmethod
    def fit(cls, samples: Any, weights: Any = None) -> Discrete:
        """The (weighted) empirical distribution of ``samples``."""
        samples = np.asarray(samples, dtype=np.float64)
        require(len(samples) > 0, "cannot fit a distribution to no samples")
        values, index = np.unique(samples, return_inverse=True)
        mass = np.bincount(index, weights=_weights(samples, weights), minlength=len(values))
        return cls(values, mass)

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` independent draws."""
        return self.from_uniform(rng.random(n))

    def from_uniform(self, u: np.ndarray) -> np.ndarray:
        """The values at cumulative probabilities ``u`` (inverse CDF): one uniform, one draw."""
        index = np.searchsorted(self._cumulative, u, side="right")
        return self.values[np.minimum(index, len(self.values) - 1)]

    def restricted(self, high: float) -> Discrete:
        """The distribution conditioned on values <= ``high`` (e.g. sizes <= the machine)."""
        keep = self.values <= high
        if not keep.any() or self.probabilities[keep].sum() == 0:
            raise ConfigError(f"no value of {self!r} is <= {high:g}")
        return Discrete(self.values[keep], self.probabilities[keep])

    def cdf(self, x: Any) -> np.ndarray:
        """P(X <= x)."""
        index = np.searchsorted(self.values, np.asarray(x, dtype=np.float64), side="right")
        return np.where(index > 0, self._cumulative[np.maximum(index - 1, 0)], 0.0)

    @property
    def mean(self) -> float:
        return float(self.values @ self.probabilities)

    @property
    def mode(self) -> float:
        return float(self.values[np.argmax(self.probabilities)])

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "discrete",
            "values": [_number(v) for v in self.values.tolist()],
            "probabilities": self.probabilities.tolist(),
        }

    def __repr__(self) -> str:
        shown = ", ".join(f"{v:g}" for v in self.values[:6])
        more = ", ..." if len(self.values) > 6 else ""
        return (
            f"Discrete(values=[{shown}{more}], n={len(self.values)}, mode={self.mode:g}, "
            f"mean={self.mean:.4g})"
        )


class Quantiles:
    """A continuous distribution given by its quantile table.

    ``x[i]`` is the ``p[i]`` quantile; ``p`` runs from 0 to 1, strictly increasing, and ``x`` is
    non-decreasing. Sampling draws u ~ U(0, 1) and interpolates linearly.
    """

    __slots__ = ("p", "x")

    def __init__(self, p: Any, x: Any) -> None:
        p = np.asarray(p, dtype=np.float64)
        x = np.asarray(x, dtype=np.float64)
        require(p.ndim == 1 and len(p) >= 2, "a quantile table needs at least two points")
        require(p.shape == x.shape, "p and x differ in length")
        require(p[0] == 0.0 and p[-1] == 1.0, "quantile probabilities must run from 0 to 1")
        require(bool((np.diff(p) > 0).all()), "quantile probabilities must increase strictly")
        require(bool(np.isfinite(x).all()), "quantiles must be finite")
        require(bool((np.diff(x) >= 0).all()), "quantiles must not decrease")
        self.p = p
        self.x = x

    @classmethod
    def fit(cls, samples: Any, weights: Any = None, grid: Any = DEFAULT_GRID) -> Quantiles:
        """The quantile table of the (weighted) samples at probabilities ``grid``.

        The weighted empirical CDF puts each sample at the middle of its weight's step; the
        extreme quantiles are the smallest and largest samples.
        """
        samples = np.asarray(samples, dtype=np.float64)
        require(len(samples) > 0, "cannot fit a distribution to no samples")
        weights = _weights(samples, weights)
        order = np.argsort(samples, kind="stable")
        values, w = samples[order], weights[order]
        cumulative = np.cumsum(w)
        require(cumulative[-1] > 0, "weights must not all be 0")
        position = (cumulative - w / 2) / cumulative[-1]
        grid = np.asarray(grid, dtype=np.float64)
        x = np.interp(grid, position, values)
        x[0], x[-1] = values[0], values[-1]
        return cls(grid, np.maximum.accumulate(x))

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` independent draws."""
        return self.from_uniform(rng.random(n))

    def from_uniform(self, u: np.ndarray) -> np.ndarray:
        """The quantiles at probabilities ``u`` (inverse CDF): one uniform, one draw."""
        return np.interp(u, self.p, self.x)

    def quantile(self, q: Any) -> np.ndarray:
        return self.from_uniform(np.asarray(q, dtype=np.float64))

    def cdf(self, x: Any) -> np.ndarray:
        """P(X <= x), the inverse of the interpolated quantile function.

        At a flat stretch of the table (an atom, many equal samples) it is the stretch's top.
        """
        x = np.asarray(x, dtype=np.float64)
        above = np.searchsorted(self.x, x, side="right")  # table points <= x
        k = np.clip(above, 1, len(self.x) - 1)
        low, high = self.x[k - 1], self.x[k]
        frac = np.clip((x - low) / np.where(high > low, high - low, 1.0), 0.0, 1.0)
        inside = self.p[k - 1] + frac * (self.p[k] - self.p[k - 1])
        return np.where(above == 0, 0.0, np.where(above == len(self.x), 1.0, inside))

    @property
    def mean(self) -> float:
        """∫ Q(u) du of the piecewise-linear quantile function."""
        return float(np.sum(np.diff(self.p) * (self.x[1:] + self.x[:-1]) / 2))

    @property
    def median(self) -> float:
        return float(self.quantile(0.5))

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "quantiles",
            "p": self.p.tolist(),
            "x": [_number(v) for v in self.x.tolist()],
        }

    def __repr__(self) -> str:
        return (
            f"Quantiles(points={len(self.p)}, min={self.x[0]:.4g}, median={self.median:.4g}, "
            f"max={self.x[-1]:.4g}, mean={self.mean:.4g})"
        )


class Hyperexponential2:
    """A two-phase hyperexponential distribution, given by its mean and coefficient of variation.

    A draw is exponential with rate ``rate1`` with probability ``p1``, else exponential with
    rate ``rate2``. Its coefficient of variation (standard deviation / mean) is at least 1, the
    exponential's. Mean and CV leave one of the three parameters free; it is fixed by
    *balanced means*, ``p1 / rate1 = p2 / rate2`` (each phase contributes half the mean), the
    standard two-moment fit (e.g. H. C. Tijms, *A First Course in Stochastic Models*, 2003)::

        p1 = (1 + sqrt((c² - 1) / (c² + 1))) / 2
        rate1 = 2 p1 / mean,  rate2 = 2 (1 - p1) / mean

    Then E[X²] = mean² (1 + c²), so the variance is (c · mean)². CV 1 is the exponential
    distribution (p1 = 1/2, both rates 1 / mean).

    Args:
        mean: the mean, a finite number > 0 (in the unit of the draws).
        cv: the coefficient of variation c, a finite number >= 1.

    Raises:
        ConfigError: a mean <= 0 or a CV < 1 (or either not a finite number).
    """

    __slots__ = ("cv", "mean", "p1", "rate1", "rate2")

    def __init__(self, mean: float, cv: float) -> None:
        mean, cv = _finite("hyperexponential mean", mean), _finite("hyperexponential CV", cv)
        require(mean > 0, f"hyperexponential mean must be > 0, got {mean!r}")
        require(
            cv >= 1,
            f"hyperexponential CV must be >= 1 (a mixture of exponentials varies at least as "
            f"much as one), got {cv!r}",
        )
        self.mean = mean
        self.cv = cv
        self.p1 = (1 + math.sqrt((cv * cv - 1) / (cv * cv + 1))) / 2
        self.rate1 = 2 * self.p1 / mean
        self.rate2 = 2 * (1 - self.p1) / mean

    @property
    def variance(self) -> float:
        return (self.cv * self.mean) ** 2

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` independent draws."""
        return self.from_uniform(rng.random(n))

    def from_uniform(self, u: np.ndarray) -> np.ndarray:
        """One draw per uniform in ``u``.

        Not the inverse CDF (a mixture's has no closed form): ``u < p1`` picks phase 1, and
        ``u`` rescaled to its phase's interval, ``u / p1`` or ``(u - p1) / (1 - p1)``, gives
        the exponential draw by inversion. The rescaled uniform keeps all but a few of ``u``'s 53
        bits, so no draw exceeds about 33 means of its phase (an exponential does so with
        probability below 1e-14).
        """
        u = np.asarray(u, dtype=np.float64)
        p1 = self.p1
        first = u < p1
        v = np.where(first, u / p1, (u - p1) / (1 - p1))
        v = np.minimum(v, _BELOW_ONE)  # rounding must not reach 1 (an infinite draw)
        return -np.log1p(-v) / np.where(first, self.rate1, self.rate2)

    def cdf(self, x: Any) -> np.ndarray:
        """P(X <= x)."""
        x = np.maximum(np.asarray(x, dtype=np.float64), 0.0)
        return 1.0 - self.p1 * np.exp(-self.rate1 * x) - (1 - self.p1) * np.exp(-self.rate2 * x)

    def __repr__(self) -> str:
        return f"Hyperexponential2(mean={self.mean!r}, cv={self.cv!r})"


_BELOW_ONE = float(np.nextafter(1.0, 0.0))


def _finite(name: str, value: Any) -> float:
    """``value`` as a finite float (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        raise ConfigError(f"{name} must be a number, got {value!r}")
    value = float(value)
    require(math.isfinite(value), f"{name} must be finite, got {value!r}")
    return value


#: The empirical distributions a workload profile is made of.
Distribution = Discrete | Quantiles


def from_dict(data: Mapping[str, Any], where: str = "distribution") -> Distribution:
    """A distribution from :meth:`to_dict` output; errors name ``where``."""
    try:
        kind = data["kind"]
        if kind == "discrete":
            return Discrete(data["values"], data["probabilities"])
        if kind == "quantiles":
            return Quantiles(data["p"], data["x"])
    except KeyError as err:
        raise ConfigError(f"{where}: missing key {err}") from None
    except (TypeError, ValueError) as err:
        raise ConfigError(f"{where}: {err}") from None
    raise ConfigError(f"{where}: unknown kind {kind!r} (expected 'discrete' or 'quantiles')")


def normalized(weights: np.ndarray) -> np.ndarray:
    """``weights`` scaled to sum 1 (left alone when they already do, so JSON round trips
    are exact)."""
    total = weights.sum()
    return weights if abs(total - 1.0) <= 1e-12 else weights / total


def checked_shares(values: Any, length: int, where: str) -> np.ndarray:
    """``values`` as ``length`` shares (>= 0, not all 0), normalized; else ConfigError naming
    ``where``."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        array = np.full(1, np.nan)
    if array.shape != (length,) or not (array >= 0).all() or not array.sum() > 0:
        text = repr(values)
        text = text if len(text) <= 60 else text[:57] + "..."
        raise ConfigError(f"{where}: expected {length} non-negative shares, got {text}")
    return normalized(array)


def _number(v: float) -> float | int:
    """Whole numbers as int (compact JSON), others exactly."""
    return int(v) if float(v).is_integer() else v
