"""The site: one SimPy environment, one machine, one scheduler and the user processes.

Same-instant ordering (a promise every test relies on):

1. Arrivals and terminations at time *t* are ordinary SimPy events. They only update state
   (queue, free processors) and request an allocation pass.
2. The allocation pass is an event scheduled at *t* with a priority below ``simpy`` NORMAL, so
   it runs once, *after* every arrival and termination of instant *t* (including a user
   process that resumes on a completion at *t* and submits at once). Processors freed at *t*
   are therefore reused at *t*; a job ending at *t* and one starting at *t* never overlap, as
   job intervals are half-open ``[start, end)``.
3. A job started by the pass with zero duration ends at *t* after the pass, which requests a
   second pass at *t*.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import simpy
from simpy.events import NORMAL, Event, EventPriority

from sitesim import __version__
from sitesim.job import MIN_ESTIMATE, Job
from sitesim.machine import Machine
from sitesim.metrics import summarize
from sitesim.records import job_records
from sitesim.schedulers.base import Scheduler

ProcessGenerator = Generator[Event, Any, Any]

#: Priority of the allocation pass: after every NORMAL event of the same instant.
LATE = EventPriority(NORMAL + 1)


class User(Protocol):
    """Anything that submits jobs: a process generator run on the site."""

    def run(self, site: Site) -> ProcessGenerator: ...


class _Wakeup(Event):
    """An event that, once triggered, is processed after all NORMAL events of its instant."""

    def trigger_late(self) -> None:
        self._ok = True
        self._value = None
        self.env.schedule(self, LATE)


@dataclass(frozen=True)
class SiteResult:
    """What a run produced, as plain data.

    Attributes:
        config: the fully resolved configuration (procs, scheduler and parameters, users, ...).
        records: per-job records, a NumPy structured array (see :mod:`sitesim.records`).
        summary: the summary metrics (see :func:`sitesim.metrics.summarize`).
        busy_times, busy_levels: busy processors over time (a step function).
        scheduler_stats: counters specific to the scheduler.
    """

    config: dict[str, Any]
    records: np.ndarray
    summary: dict[str, Any]
    busy_times: np.ndarray = field(repr=False)
    busy_levels: np.ndarray = field(repr=False)
    scheduler_stats: dict[str, Any] = field(default_factory=dict)


class Site:
    """A parallel machine, its scheduler and its users.

    Args:
        procs: number of processors.
        scheduler: the scheduling policy.
        config: extra configuration stored with the result (users, trace, seed, ...).
    """

    def __init__(
        self, procs: int, scheduler: Scheduler, config: dict[str, Any] | None = None
    ) -> None:
        self.env = simpy.Environment()
        self.machine = Machine(self.env, procs, self._job_ended)
        self.scheduler = scheduler
        self.config: dict[str, Any] = dict(config or {})
        #: Users submit jobs only before the horizon; then the machine drains.
        self.horizon = math.inf
        #: Every submitted job, in submit order (``jobs[i].id == i + 1``).
        self.jobs: list[Job] = []
        self.passes = 0
        self._wakeup = _Wakeup(self.env)
        self.env.process(self.serve())

    @property
    def now(self) -> float:
        return float(self.env.now)

    # -- what users call --------------------------------------------------------------------
    def add_user(self, user: User) -> None:
        """Start a user process."""
        self.env.process(user.run(self))

    def submit(self, job: Job) -> None:
        """Submit ``job`` now: it gets the next id and joins the scheduler's queue."""
        if not job.estimate >= MIN_ESTIMATE:
            raise ValueError(f"job estimate {job.estimate} is below {MIN_ESTIMATE} s")
        job.id = len(self.jobs) + 1
        self.jobs.append(job)
        now = self.env.now
        job.mark_submitted(now)
        self.scheduler.submit(job, now)
        if not self._wakeup.triggered:
            self._wakeup.trigger_late()

    def completion(self, job: Job) -> Event:
        """The event that fires (with the job as value) when ``job`` ends."""
        if job.done is None:
            job.done = self.env.event()
        return job.done

    # -- the scheduler process --------------------------------------------------------------
    def serve(self) -> ProcessGenerator:
        """Sleep until an arrival or termination requests a pass, then run one allocation pass."""
        machine, scheduler, env = self.machine, self.scheduler, self.env
        while True:
            yield self._wakeup
            self._wakeup = _Wakeup(env)
            self.passes += 1
            for job in scheduler.allocate(env.now, machine.free, machine.running):
                machine.start(job)

    def _job_ended(self, job: Job) -> None:
        self.scheduler.job_ended(job, self.env.now)
        if not self._wakeup.triggered:
            self._wakeup.trigger_late()
        if job.done is not None:
            job.done.succeed(job)

    # -- running ------------------------------------------------------------------------------
    def run(
        self,
        until: float | None = None,
        *,
        warmup: float = 0.0,
        progress: Callable[[float], None] | None = None,
        progress_step: float = 86_400.0,
    ) -> SiteResult:
        """Run the site and return its result.

        Users submit jobs only before ``until`` (the horizon; ``None``: until they run out of
        jobs); afterwards the machine drains, so every submitted job runs to its end.

        Args:
            until: the horizon in seconds, or ``None``.
            warmup: seconds at the start excluded from the measurement window.
            progress: called with the simulated time every ``progress_step`` seconds.
            progress_step: simulated seconds between progress calls.
        """
        env = self.env
        if until is not None:
            self.horizon = float(until)
        if progress is None:
            env.run()
        else:  # step by hand: run(until=...) would leave its stop event in the queue
            step, peek = env.step, env.peek
            checkpoint = env.now + progress_step
            while (t := peek()) < math.inf:
                if t >= checkpoint:
                    progress(t)
                    checkpoint = t + progress_step
                step()
        return self.result(warmup=warmup)

    def result(self, *, warmup: float = 0.0) -> SiteResult:
        """Collect records and metrics of the jobs submitted so far."""
        records = job_records(self.jobs)
        if math.isfinite(self.horizon):
            window = (warmup, self.horizon)
        elif len(records):  # a replay: from the first to the last submission
            window = (float(records["submit"][0]) + warmup, float(records["submit"][-1]))
        else:
            window = (0.0, 0.0)
        config = {
            "sitesim_version": __version__,
            "procs": self.machine.procs,
            "scheduler": self.scheduler.name,
            "scheduler_params": self.scheduler.params(),
            "horizon": self.horizon if math.isfinite(self.horizon) else None,
            "warmup": warmup,
            **self.config,
        }
        stats = {"passes": self.passes, **self.scheduler.stats()}
        return SiteResult(
            config=config,
            records=records,
            summary=summarize(records, self.machine.procs, window),
            busy_times=np.asarray(self.machine.busy_times, dtype=np.float64),
            busy_levels=np.asarray(self.machine.busy_levels, dtype=np.int64),
            scheduler_stats=stats,
        )
