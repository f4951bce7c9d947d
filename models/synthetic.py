"""The synthetic workload of experiment 5 (Stoica & Pothen): Poisson arrivals in three classes.

Jobs arrive in a Poisson process of rate λ and fall into three classes (experiments.md §5):

- class 1: sizes 1–16, service times with coefficient of variation (CV) 4;
- class 2: sizes 17–32, CV 2.5;
- class 3: sizes 33–64, CV 1.8.

Sizes are whole numbers, uniform in the class's range; service times are two-phase
hyperexponential (:class:`~sitesim.workload.distributions.Hyperexponential2`, balanced means) with
the class's mean and CV. The five configurations of the experiment set each class's mean service
time (minutes) and share of the arrivals (:data:`CONFIGURATIONS`). λ follows from the target
offered load ρ on P processors::

    ρ = λ · E[size · service] / P,   E[size · service] = Σ_c share_c · E[size_c] · mean_c

(size and service time are independent within a class), so λ = ρ P / E[size · service].

The arrivals are spread over the site's users: user *u* of *n* is a Poisson process of rate
λ / n, and the n processes together are the Poisson process of rate λ whose every job belongs
to a user drawn uniformly from 1..n. Each user draws from its own streams (inter-arrival
``gap``, ``size`` and ``runtime``, one uniform per job each; spec README §3) in blocks, so the
same seed gives the same jobs under every scheduler, and the k-th job of a user has the same
size and service time at every load (only the arrival times scale with 1 / λ).

The time unit of the experiment is one minute; the engine counts seconds, so mean service
times are converted once, here. Runtimes and inter-arrival times are rounded to whole seconds,
as every duration of a site-level run. Jobs have no dependencies and no sessions.
"""

from __future__ import annotations

import math
from collections.abc import Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from simpy.events import Event

from sitesim.engine.job import MIN_ESTIMATE, Job
from sitesim.errors import require
from sitesim.workload.distributions import Discrete, Hyperexponential2

from .streams import stream
from .workpool import EstimateModel

if TYPE_CHECKING:
    from sitesim.engine.site import Site

ProcessGenerator = Generator[Event, Any, Any]

MINUTE = 60.0
#: Sizes of the three classes: (smallest, largest), processors.
SIZE_RANGES = ((1, 16), (17, 32), (33, 64))
#: Coefficient of variation of each class's service times.
SERVICE_CVS = (4.0, 2.5, 1.8)
#: Per configuration of experiment 5, each class's (mean service time in minutes, share of the
#: arrivals). Configuration 4's shares (0.33 each) are normalized to a third each.
CONFIGURATIONS: dict[int, tuple[tuple[float, float], ...]] = {
    1: ((50, 0.7), (100, 0.2), (200, 0.1)),
    2: ((100, 0.7), (100, 0.2), (100, 0.1)),
    3: ((200, 0.7), (100, 0.2), (50, 0.1)),
    4: ((50, 0.33), (100, 0.33), (200, 0.33)),
    5: ((50, 0.9), (100, 0.09), (200, 0.01)),
}
#: The largest job: a synthetic workload needs a machine at least this large.
LARGEST = SIZE_RANGES[-1][1]
#: Offered loads a synthetic run accepts: (0, MAX_LOAD]. Above 1 the queue grows for as long
#: as arrivals last; the machine still drains after the horizon.
MAX_LOAD = 1.5
#: Jobs drawn at once per user (the draws do not depend on it).
BLOCK = 1024


@dataclass(frozen=True, slots=True)
class JobClass:
    """One class of jobs.

    Attributes:
        low, high: sizes are uniform in ``low..high`` (whole numbers).
        share: the class's share of the arrivals (the shares sum to 1).
        service: service times in seconds.
    """

    low: int
    high: int
    share: float
    service: Hyperexponential2

    @property
    def mean_size(self) -> float:
        return (self.low + self.high) / 2

    @property
    def mean_work(self) -> float:
        """E[size · service] of the class, processor-seconds (size and service independent)."""
        return self.mean_size * self.service.mean


@dataclass(frozen=True)
class SyntheticWorkload:
    """The synthetic workload of one configuration of experiment 5 at one offered load.

    Attributes:
        configuration: which row of the experiment's table, 1..5 (:data:`CONFIGURATIONS`).
        offered_load: the target offered load ρ, in (0, :data:`MAX_LOAD`].
    """

    configuration: int = 1
    offered_load: float = 0.5

    def __post_init__(self) -> None:
        require(
            self.configuration in CONFIGURATIONS and not isinstance(self.configuration, bool),
            f"synthetic configuration must be one of {', '.join(map(str, CONFIGURATIONS))}, "
            f"got {self.configuration!r}",
        )
        load = self.offered_load
        require(
            isinstance(load, int | float)
            and not isinstance(load, bool)
            and math.isfinite(load)
            and 0 < load <= MAX_LOAD,
            f"offered load must be in (0, {MAX_LOAD:g}], got {load!r}",
        )

    @property
    def classes(self) -> tuple[JobClass, ...]:
        """The three job classes, with service times in seconds."""
        rows = CONFIGURATIONS[self.configuration]
        total = sum(share for _, share in rows)
        return tuple(
            JobClass(low, high, share / total, Hyperexponential2(mean * MINUTE, cv))
            for (low, high), cv, (mean, share) in zip(SIZE_RANGES, SERVICE_CVS, rows, strict=True)
        )

    @property
    def mean_work(self) -> float:
        """E[size · service] of a job, processor-seconds."""
        return sum(c.share * c.mean_work for c in self.classes)

    def arrival_rate(self, procs: int) -> float:
        """λ, jobs per second, that offers ``offered_load`` to ``procs`` processors."""
        return self.offered_load * procs / self.mean_work

    def sizes(self) -> Discrete:
        """The distribution of job sizes: each class's share spread evenly over its range.

        The class ranges do not overlap, so a job's class is the range its size falls in.
        """
        values = np.arange(1, LARGEST + 1)
        probabilities = np.zeros(LARGEST)
        for c in self.classes:
            probabilities[c.low - 1 : c.high] = c.share / (c.high - c.low + 1)
        return Discrete(values, probabilities)


class SyntheticUser:
    """One user of the synthetic workload: a Poisson stream of independent jobs.

    Args:
        uid: the user's id (1-based), also the key of its random streams.
        workload: the configuration and offered load.
        procs: machine size (at least :data:`LARGEST`); λ offers the load to it.
        seed: root seed of the run.
        users: how many users share the arrivals (each submits at rate λ / users).
        estimates: ``exact`` (estimate = runtime, the default) or ``factor`` (F × runtime,
            rounded); never below :data:`~sitesim.engine.job.MIN_ESTIMATE`.
    """

    def __init__(
        self,
        uid: int,
        workload: SyntheticWorkload,
        procs: int,
        seed: int,
        *,
        users: int = 1,
        estimates: EstimateModel | None = None,
    ) -> None:
        require(
            procs >= LARGEST,
            f"the synthetic workload needs at least {LARGEST} processors (its largest jobs), "
            f"got {procs}",
        )
        require(users >= 1, f"users must be >= 1, got {users}")
        self.estimates = estimates or EstimateModel()
        require(
            self.estimates.kind != "ratio",
            "the synthetic workload's estimates are exact or factor:F (it has no profile "
            "ratios), got ratio",
        )
        self.id = uid
        self.workload = workload
        #: Arrivals per second of this user.
        self.rate = workload.arrival_rate(procs) / users
        self._classes = workload.classes
        self._sizes = workload.sizes()
        self._gap = stream(seed, uid, "gap")
        self._size = stream(seed, uid, "size")
        self._runtime = stream(seed, uid, "runtime")

    def draw(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The user's next ``n`` jobs, vectorized, in whole seconds.

        Returns:
            The gaps before each job's submission (exponential, mean 1 / rate), the sizes
            (int), the runtimes and the estimates. One uniform of each stream per job, so the
            jobs do not depend on how they are split into calls.
        """
        gaps = np.rint(-np.log1p(-self._gap.random(n)) / self.rate)
        sizes = self._sizes.from_uniform(self._size.random(n)).astype(np.int64)
        u = self._runtime.random(n)
        runtimes = np.empty(n)
        for c in self._classes:
            mine = (sizes >= c.low) & (sizes <= c.high)
            runtimes[mine] = c.service.from_uniform(u[mine])
        runtimes = np.rint(runtimes)
        estimates = (
            runtimes
            if self.estimates.kind == "exact"
            else np.rint(runtimes * self.estimates.factor)
        )
        return gaps, sizes, runtimes, np.maximum(estimates, MIN_ESTIMATE)

    def run(self, site: Site) -> ProcessGenerator:
        """Submit a job at every arrival until the horizon."""
        env = site.env
        while True:
            gaps, sizes, runtimes, estimates = (a.tolist() for a in self.draw(BLOCK))
            for gap, size, runtime, estimate in zip(gaps, sizes, runtimes, estimates, strict=True):
                yield env.timeout(gap)
                if env.now >= site.horizon:
                    return
                site.submit(Job(size, runtime, estimate, user=self.id))
