"""The machine: N identical processors, space slicing, no preemption, no time sharing."""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Callable
from typing import Any, TypeAlias

from sitesim.engine.event_queue import SiteEnvironment
from sitesim.engine.job import Job
from sitesim.errors import SchedulerError, require

#: The running jobs as schedulers see them: ``(estimated end, job id, size)`` tuples in
#: ascending order of estimated end (ties by id). A policy reads it; only the machine changes it.
Running: TypeAlias = list[tuple[float, int, int]]


class OverAllocationError(SchedulerError):
    """A job was started on fewer free processors than it needs."""


class Machine:
    """N processors shared by rigid jobs.

    Starting a job takes ``size`` processors for the job's duration (its runtime, cut at its
    estimate: :meth:`Job.mark_started`) and calls ``on_end(job)`` when it ends. The machine
    keeps the running jobs sorted by *estimated* end, what backfilling needs. How busy it was
    over time is computed from the records (:func:`sitesim.results.timeline.busy`).
    """

    def __init__(self, env: SiteEnvironment, procs: int, on_end: Callable[[Job], None]) -> None:
        require(
            isinstance(procs, int) and procs >= 1, f"procs must be an integer >= 1, got {procs!r}"
        )
        self.env = env
        self.procs = procs
        self.free = procs
        self.running: Running = []
        self._on_end = on_end
        self._end_callbacks: list[Callable[[Any], None]] = [self._end]

    def start(self, job: Job) -> None:
        """Start ``job`` now.

        Raises:
            OverAllocationError: the job needs more processors than are free.
            JobStateError: the job is not waiting, or was changed since it was submitted.
        """
        size = job.size
        if size > self.free:
            raise OverAllocationError(
                f"at t = {self.env.now:g} s job {job.id} was started on {size} processors "
                f"when {self.free} were free"
            )
        env = self.env
        now = env.now
        duration = job.mark_started(now)
        self.free -= size
        insort(self.running, (now + job.estimate, job.id, size))
        env.after(duration, self._end_callbacks, job)

    def _end(self, event: Any) -> None:
        job: Job = event._value
        job.mark_ended(self.env.now)
        size = job.size
        running = self.running
        del running[bisect_left(running, (job.start + job.estimate, job.id, size))]
        self.free += size
        self._on_end(job)
