"""Utility-based schedulers: FirstPrice and PRIO (utility.md §4).

Both see what users *state*: a job's stated utility function (:attr:`Job.bid`), never the true
one. A job's value density is its stated start value / (size × estimate in minutes).

- ``FIRSTPRICE`` (Chun & Culler): at each pass, start waiting jobs greedily in decreasing value
  density, first-fit, no reservation. Jobs of low density can starve.
- ``PRIO``: four priority levels, EASY backfilling within levels (Priority-FIFO's rules):
  ``static`` levels from fixed charge rates, ``demand`` levels from a Gaussian mixture fitted to
  the value densities seen so far. A job's level is fixed when it arrives.
"""

from __future__ import annotations

from bisect import insort
from typing import Any, ClassVar

import numpy as np

from sitesim.engine.job import Job
from sitesim.engine.resources import Resources
from sitesim.errors import require
from sitesim.workload.mixture import GaussianMixture, fit_mixture

from .base import Scheduler
from .queue_order import PriorityFIFO


def value_density(job: Job) -> float:
    """Stated start value per processor-minute of estimated runtime (0 without a function)."""
    bid = job.bid
    if bid is None:
        return 0.0
    return bid.start_value / (job.size * job.estimate / 60.0)


class FirstPrice(Scheduler):
    """FirstPrice: start jobs in decreasing stated value density, first-fit, no reservation."""

    name = "FIRSTPRICE"
    starves = True

    def submit(self, job: Job, now: float) -> None:
        """The queue is kept in decreasing density (ties by arrival)."""
        insort(self.queue, job, key=_by_density)

    def select(self, now: float, resources: Resources) -> list[Job]:
        started: list[Job] = []
        if resources.free:
            resources.start_fitting(self.queue, 0, started)
        return started


def _by_density(job: Job) -> tuple[float, int]:
    return (-value_density(job), job.id)


#: PRIO+static's levels, highest first: (name, charge rate × the median value density).
STATIC_LEVELS: tuple[tuple[str, float], ...] = (
    ("express", 1.8), ("high", 2.0), ("normal", 1.0), ("low", 0.5),
)  # fmt: skip


class PRIO(PriorityFIFO):
    """Four priority levels chosen by value, EASY backfilling within levels.

    ``static``: a level's charge is its rate (express 1.8, high 2, normal 1, low 0.5) × the
    median value density of the jobs seen so far × the job's size × estimate; a job takes the
    highest level whose charge its stated start value covers; express is open only to short jobs
    (estimate ≤ ``express_hours``); a job that covers none takes the lowest. ``demand``: the
    four levels are the components of a 4-component Gaussian mixture fitted (EM) to the log value
    densities seen so far, refitted every ``refit`` arrivals; a job takes the level of its most
    likely component (a higher mean, a higher level); before 20 jobs, one level.

    Args:
        levels: ``"static"`` or ``"demand"``.
        express_hours: the longest estimate of an express job, hours (static).
        refit: arrivals between two mixture fits (demand).
    """

    name = "PRIO"
    MIN_FIT: ClassVar[int] = 20

    def __init__(
        self, levels: str = "static", express_hours: float = 2.0, refit: int = 200
    ) -> None:
        require(
            levels in ("static", "demand"), f"PRIO levels must be static or demand, got {levels!r}"
        )
        require(express_hours >= 0, f"express_hours must be >= 0, got {express_hours}")
        require(refit >= 1, f"refit must be >= 1, got {refit}")
        super().__init__()
        self.levels = levels
        self.express_hours = float(express_hours)
        self.refit = int(refit)
        self._level: dict[Job, int] = {}
        self._densities: list[float] = []  # sorted, for the running median
        self._seen: list[float] = []  # log densities in arrival order, for the fit
        self._mixture: GaussianMixture | None = None
        self._counts = [0, 0, 0, 0]

    def submit(self, job: Job, now: float) -> None:
        density = value_density(job)
        insort(self._densities, density)
        self._seen.append(float(np.log(max(density, 1e-300))))
        level = (
            self._static_level(job, density) if self.levels == "static" else self._demand_level()
        )
        self._level[job] = level
        self._counts[level] += 1
        super().submit(job, now)

    def level(self, job: Job) -> float:
        return self._level.get(job, 0)

    def _static_level(self, job: Job, density: float) -> int:
        median = self._densities[len(self._densities) // 2]
        area = job.size * job.estimate / 60.0
        value = density * area
        for rank, (name, rate) in enumerate(STATIC_LEVELS):
            if name == "express" and job.estimate > self.express_hours * 3600:
                continue
            if value >= rate * median * area:
                return len(STATIC_LEVELS) - 1 - rank
        return 0

    def _demand_level(self) -> int:
        n = len(self._seen)
        if n >= self.MIN_FIT and (self._mixture is None or n % self.refit == 0):
            self._mixture = fit_mixture(np.array(self._seen), 4)
        if self._mixture is None:
            return 0
        return int(self._mixture.predict(np.array(self._seen[-1:]))[0])

    def dequeue(self, started: list[Job]) -> None:
        super().dequeue(started)
        for job in started:
            self._level.pop(job, None)

    def params(self) -> dict[str, Any]:
        return {"levels": self.levels, "express_hours": self.express_hours, "refit": self.refit}

    def stats(self) -> dict[str, Any]:
        return {"jobs_per_level": self._counts}
