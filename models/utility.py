"""Utility functions: the value a user attaches to a job's completion time (utility.md).

A job's utility u(t), t = time since submission (turnaround), is piecewise linear through
points (t0, v0), (t1, v1), ...: t0 = 0 and v0 is the job's start (maximum) value, times strictly
increase, values never increase, u is linear between points and 0 after the last point. A jump is
two points :data:`EPS` apart.

- :class:`UtilityFunction`: one function, validated, evaluated, scaled, read and written as the
  SWF extension (``t0 v0 t1 v1 ...`` after field 18).
- :class:`UtilityColumns`: many functions as padded arrays, evaluated for many jobs at once.
- :class:`LeeSnavely`: the synthetic generation of Lee & Snavely, to augment any trace.
- :func:`kind_function`: the kinds of the robustness study (linear, convex, flat, mix).
- :func:`uncertain_values` and :func:`wealth`: the information-inaccuracy models.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from sitesim.errors import ConfigError, require

#: Seconds between the two points of a jump (a drop of value at one instant).
EPS = 1.0


@dataclass(frozen=True, slots=True)
class UtilityFunction:
    """u(t) through the points ``(times[k], values[k])``; 0 after the last point."""

    times: tuple[float, ...]
    values: tuple[float, ...]

    def __post_init__(self) -> None:
        times, values = self.times, self.values
        require(len(times) >= 1, "a utility function needs at least one point")
        require(len(times) == len(values), "a utility function needs as many times as values")
        require(
            all(math.isfinite(x) for x in (*times, *values)),
            "utility times and values must be finite",
        )
        require(times[0] == 0, f"a utility function's first time must be 0, got {times[0]:g}")
        for k in range(1, len(times)):
            require(
                times[k] > times[k - 1],
                f"utility times must increase: {times[k]:g} after {times[k - 1]:g}",
            )
            require(
                values[k] <= values[k - 1],
                f"utility values must not increase: {values[k]:g} after {values[k - 1]:g}",
            )
        require(values[-1] >= 0, f"utility values must be >= 0, got {values[-1]:g}")

    @classmethod
    def of(cls, times: Sequence[float], values: Sequence[float]) -> UtilityFunction:
        return cls(tuple(float(t) for t in times), tuple(float(v) for v in values))

    @property
    def start_value(self) -> float:
        return self.values[0]

    @property
    def deadline(self) -> float:
        """The last point's time: no value is earned after it."""
        return self.times[-1]

    def __call__(self, t: float) -> float:
        """The value earned by a job completing ``t`` seconds after its submission."""
        if not t <= self.times[-1]:
            return 0.0
        return float(np.interp(t, self.times, self.values))

    def scaled(self, start_value: float) -> UtilityFunction:
        """The same deadline and shape, from ``start_value`` instead."""
        factor = start_value / self.start_value if self.start_value > 0 else 0.0
        return UtilityFunction(self.times, tuple(v * factor for v in self.values))

    def to_text(self) -> str:
        """The SWF extension: ``t0 v0 t1 v1 ...``."""
        return " ".join(
            f"{_short(t)} {_short(v)}" for t, v in zip(self.times, self.values, strict=True)
        )

    @classmethod
    def parse(cls, text: str, where: str = "extension after field 18") -> UtilityFunction:
        """From the SWF extension; errors name ``where``."""
        tokens = text.split()
        if not tokens or len(tokens) % 2:
            raise ConfigError(
                f"{where}: a utility function is pairs 't v', got {len(tokens)} numbers"
            )
        try:
            numbers = [float(token) for token in tokens]
        except ValueError as err:
            raise ConfigError(f"{where}: {err}") from None
        try:
            return cls.of(numbers[0::2], numbers[1::2])
        except ConfigError as err:
            raise ConfigError(f"{where}: {err}") from None


def _short(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


class UtilityColumns:
    """Many utility functions as padded arrays (jobs × points): vectorized evaluation."""

    __slots__ = ("points", "times", "values")

    def __init__(self, functions: Sequence[UtilityFunction]) -> None:
        width = max((len(f.times) for f in functions), default=1)
        self.times = np.full((len(functions), width + 1), np.inf)
        self.values = np.zeros((len(functions), width + 1))
        self.points = np.zeros(len(functions), dtype=np.int64)
        for k, f in enumerate(functions):
            n = len(f.times)
            self.times[k, :n] = f.times
            self.values[k, :n] = f.values
            self.points[k] = n

    def __len__(self) -> int:
        return len(self.points)

    @property
    def start_values(self) -> np.ndarray:
        return self.values[:, 0]

    def evaluate(self, rows: np.ndarray, t: np.ndarray) -> np.ndarray:
        """u_rows[i](t[i]) for arrays of function rows and times (any matching shapes)."""
        rows, t = np.broadcast_arrays(np.asarray(rows), np.asarray(t, dtype=np.float64))
        times, values = self.times[rows], self.values[rows]
        above = (times <= t[..., None]).sum(axis=-1)  # points at or before t
        k = np.clip(above, 1, times.shape[-1] - 1)
        t0 = np.take_along_axis(times, (k - 1)[..., None], -1)[..., 0]
        t1 = np.take_along_axis(times, k[..., None], -1)[..., 0]
        v0 = np.take_along_axis(values, (k - 1)[..., None], -1)[..., 0]
        v1 = np.take_along_axis(values, k[..., None], -1)[..., 0]
        last = np.take_along_axis(times, (self.points[rows] - 1)[..., None], -1)[..., 0]
        with np.errstate(invalid="ignore", divide="ignore"):
            u = v0 + (v1 - v0) * (t - t0) / (t1 - t0)
        return np.where((t >= 0) & (t <= last), np.where(np.isfinite(u), u, v0), 0.0)


# -- Lee & Snavely's synthetic generation -----------------------------------------------------
Decay = Literal["linear", "exponential", "step"]
DECAYS: tuple[Decay, ...] = ("linear", "exponential", "step")


@dataclass(frozen=True)
class LeeSnavely:
    """The synthetic utility functions of Lee & Snavely, for any job (utility.md §2).

    - start value = unscaled × size × requested minutes, unscaled ~ Normal(mean, sd) truncated
      at 0, mean = ((P − priority − 0.5) / P) · globmax (priority 0, the highest, gets the
      highest value: the spec's intent; the original text maps it to the lowest bin),
      sd = ``sd`` (default globmax / (2P));
    - the value is kept until the job's requested runtime has passed (a job that does not wait
      earns all of it), then decays over a *slack* of max(factor × the job's wait, 10 s) and is 0
      after it: the spec's deadline, measured after the runtime (decisions.md);
    - the decay is ``linear`` (``points`` random times in the slack, values uniform in [0, v]
      sorted decreasing), ``exponential`` (values drawn one after the other uniform between the
      previous value and 0) or ``step`` (flat at v, a drop at one random time to a value uniform
      in [0, v), flat until the deadline); each a third of the jobs unless ``decay`` is fixed.

    Attributes:
        levels: P, the number of priority levels.
        globmax: the largest mean value per processor-minute.
        sd: the value's standard deviation per processor-minute (None: globmax / (2P)).
        factor: the deadline factor (1, 2, 3 studied).
        decay: one decay type for every job, or None for a third each.
        points: the random times of the linear and exponential decays.
    """

    levels: int = 4
    globmax: float = 1.0
    sd: float | None = None
    factor: float = 2.0
    decay: Decay | None = None
    points: int = 3

    def __post_init__(self) -> None:
        require(self.levels >= 1, f"priority levels must be >= 1, got {self.levels}")
        require(self.globmax > 0, f"globmax must be > 0, got {self.globmax}")
        require(self.sd is None or self.sd >= 0, f"the value sd must be >= 0, got {self.sd}")
        require(self.factor > 0, f"the deadline factor must be > 0, got {self.factor}")
        require(self.decay in (None, *DECAYS), f"decay must be one of {DECAYS}, got {self.decay}")
        require(self.points >= 1, f"decay points must be >= 1, got {self.points}")

    def function(
        self, rng: np.random.Generator, priority: int, size: int, requested: float, wait: float
    ) -> UtilityFunction:
        """One job's function: ``priority`` 0 (highest) .. levels − 1, ``requested`` and
        ``wait`` in seconds."""
        p = min(max(int(priority), 0), self.levels - 1)
        mean = (self.levels - p - 0.5) / self.levels * self.globmax
        sd = self.globmax / (2 * self.levels) if self.sd is None else self.sd
        unscaled = max(rng.normal(mean, sd), 0.0)
        value = unscaled * size * requested / 60.0
        slack = max(self.factor * max(wait, 0.0), 10.0)
        decay = self.decay or DECAYS[int(rng.integers(3))]
        offsets, values = _decay(rng, decay, value, slack, self.points)
        run = max(requested, 0.0)
        times = [0.0, *(run + t for t in offsets)] if run > 0 else list(offsets)
        values = [value, *values] if run > 0 else values
        return UtilityFunction.of(times, values)


def _decay(
    rng: np.random.Generator, decay: Decay, v: float, slack: float, k: int
) -> tuple[list[float], list[float]]:
    """The points of a decay from value ``v`` at offset 0 to 0 after ``slack`` seconds."""
    if decay == "step":
        at = float(rng.uniform(EPS, max(slack - EPS, EPS)))
        low = float(rng.uniform(0.0, v))
        return [0.0, at, at + EPS, slack + 2 * EPS, slack + 3 * EPS], [v, v, low, low, 0.0]
    drawn = np.sort(rng.uniform(0.0, slack, k))
    if decay == "linear":
        levels = np.sort(rng.uniform(0.0, v, k))[::-1]
    else:  # exponential: each value uniform between the previous one and 0
        levels = np.empty(k)
        previous = v
        for i in range(k):
            previous = levels[i] = rng.uniform(0.0, previous)
    times = np.maximum.accumulate(np.maximum(drawn, EPS) + EPS * np.arange(k))  # strictly later
    end = max(slack, float(times[-1]) + EPS)
    return [0.0, *times.tolist(), end], [v, *levels.tolist(), 0.0]


# -- the kinds of the robustness study ----------------------------------------------------------
Kind = Literal["linear", "convex", "flat", "mix"]
KINDS: tuple[Kind, ...] = ("linear", "convex", "flat", "mix")


def kind_function(kind: Kind, v: float, deadline: float, runtime: float) -> UtilityFunction:
    """A robustness-study function with start value ``v`` and zero value after ``deadline``
    (seconds since submission): ``linear`` (v until the runtime has passed, then linear to 0 at
    the deadline), ``convex`` (v · (1 − t/D)² from submission, 8 segments) or ``flat`` (v
    until the deadline). ``mix`` is chosen per job by the caller."""
    require(
        kind in ("linear", "convex", "flat"), f"kind must be linear, convex or flat, got {kind}"
    )
    deadline = max(deadline, EPS)
    if kind == "flat":
        return UtilityFunction.of([0.0, deadline, deadline + EPS], [v, v, 0.0])
    if kind == "convex":
        times = np.linspace(0.0, deadline, 9)
        return UtilityFunction.of(times.tolist(), (v * (1 - times / deadline) ** 2).tolist())
    if 0 < runtime < deadline:
        return UtilityFunction.of([0.0, runtime, deadline], [v, v, 0.0])
    return UtilityFunction.of([0.0, deadline], [v, 0.0])


# -- information inaccuracy --------------------------------------------------------------------
def uncertain_values(values: np.ndarray, k: float, rng: np.random.Generator) -> np.ndarray:
    """User uncertainty: each true start value v at percentile f of ``values`` is stated as the
    value at percentile f' ~ Normal(f, k/2), clipped to [0, 1]. k = 0 states the truth."""
    require(0 <= k <= 1, f"uncertainty k must be in [0, 1], got {k}")
    values = np.asarray(values, dtype=np.float64)
    if k == 0 or not len(values):
        return values.copy()
    order = np.sort(values)
    f = (np.searchsorted(order, values, side="right") - 0.5) / len(values)
    stated = np.clip(rng.normal(f, k / 2), 0.0, 1.0)
    return np.quantile(order, stated)


def wealth(
    users: Sequence[int], gini: float, rng: np.random.Generator, poor: float = 1e-6
) -> dict[int, float]:
    """Wealth inequity: of n users, round(gini · n), drawn at random, get wealth ``poor``
    (about 0), the others 1, so the Gini coefficient of the wealths is gini (for gini · n whole).
    At least one user stays rich: with everyone poor, wealth would be equal again (Gini 0), so
    k = 1 gives the most unequal wealths n users can have, Gini (n − 1) / n. A stated value is
    the user's wealth times the true value."""
    require(0 <= gini <= 1, f"wealth Gini k must be in [0, 1], got {gini}")
    unique = sorted(set(int(u) for u in users))
    count = min(round(gini * len(unique)), len(unique) - 1)
    poor_users = set(rng.permutation(unique)[:count].tolist())
    return {u: poor if u in poor_users else 1.0 for u in unique}


def gini(values: Sequence[float]) -> float:
    """The Gini coefficient of ``values``: mean absolute difference / (2 × mean)."""
    x = np.asarray(values, dtype=np.float64)
    if not len(x) or x.mean() == 0:
        return 0.0
    return float(np.abs(x[:, None] - x[None, :]).mean() / (2 * x.mean()))
