"""Queue-order schedulers: FCFS, SJF, LJF, SCDF, EASY backfilling on top of them, and
Priority-FIFO (EASY within priority levels).

``FCFS`` starts jobs in queue order while the head fits; the head blocks everyone behind it.
SJF, LJF and SCDF are the same list scheduler with another static order (and can starve a job).
``EASY`` (Lifka's aggressive backfilling) adds :meth:`EASY.backfill`: the first job that does not
fit gets a reservation at its shadow time and later jobs may jump ahead if they do not delay it.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Callable, Iterable
from itertools import islice
from typing import Any

from sitesim.job import Job
from sitesim.machine import Running

from .base import Scheduler, shadow_time

#: A dynamic priority: ``priority(job, now)``; higher starts first, ties by arrival.
Priority = Callable[[Job, float], float]


class FCFS(Scheduler):
    """First come, first served: start jobs in order while the head of the queue fits.

    Subclasses change the order with :meth:`sort_key` (a static key, kept sorted on arrival)
    or :meth:`ordered` (a dynamic order, recomputed at every pass).
    """

    name = "FCFS"
    #: True when the queue is in arrival order (no sort key).
    arrival_order = True

    def sort_key(self, job: Job) -> float:
        """Static order key, ascending (used when :attr:`arrival_order` is False)."""
        return job.id

    def submit(self, job: Job, now: float) -> None:
        if self.arrival_order:
            self.queue.append(job)
        else:
            insort(self.queue, job, key=self.sort_key)  # after equal keys: FIFO among ties

    def ordered(self, now: float) -> list[Job]:
        """The waiting jobs in the order this pass considers them."""
        return self.queue

    def select(self, now: float, free: int, running: Running) -> list[Job]:
        if free == 0 or not self.queue:
            return []  # nothing can start
        queue = self.ordered(now)
        started: list[Job] = []
        for job in queue:
            if job.size > free:
                break
            started.append(job)
            free -= job.size
        if free > 0 and len(started) < len(queue):
            self.backfill(now, free, running, queue, started)
        return started

    def backfill(
        self, now: float, free: int, running: Running, queue: list[Job], started: list[Job]
    ) -> None:
        """Start more jobs behind a blocked head (appending them to ``started``). FCFS: none."""


class SJF(FCFS):
    """Shortest (estimated) job first, no backfilling. Can starve long jobs."""

    name = "SJF"
    arrival_order = False
    starves = True

    def sort_key(self, job: Job) -> float:
        return job.estimate


class LJF(FCFS):
    """Longest (estimated) job first, no backfilling. Can starve short jobs."""

    name = "LJF"
    arrival_order = False
    starves = True

    def sort_key(self, job: Job) -> float:
        return -job.estimate


class SCDF(FCFS):
    """Smallest cumulative demand (size × estimate) first, no backfilling. Can starve jobs."""

    name = "SCDF"
    arrival_order = False
    starves = True

    def sort_key(self, job: Job) -> float:
        return job.size * job.estimate


class EASY(FCFS):
    """EASY (aggressive) backfilling with a pluggable priority.

    Jobs are considered in priority order (default: arrival). Jobs start in order while they
    fit; the first job that does not fit is *reserved* at its shadow time, the earliest time
    enough processors are free by the running jobs' estimated ends. Every later job that fits
    now starts if it ends (by estimate) no later than the shadow time, or if it uses no more
    than the processors left over at the shadow time (the *extra* processors).

    Args:
        priority: optional ``priority(job, now)``; higher first, ties by arrival. It is
            evaluated at every pass, so it may change with time.
    """

    name = "EASY"

    def __init__(self, priority: Priority | None = None) -> None:
        super().__init__()
        self.priority = priority
        #: The reservation of the last pass that made one: ``(job, shadow time)``.
        self.reservation: tuple[Job, float] | None = None

    def ordered(self, now: float) -> list[Job]:
        if self.priority is None:
            return self.queue
        priority = self.priority
        return sorted(self.queue, key=lambda job: (-priority(job, now), job.id))

    def backfill(
        self, now: float, free: int, running: Running, queue: list[Job], started: list[Job]
    ) -> None:
        first = len(started)
        head = queue[first]
        shadow, extra = reserve(head, now, free, running, started)
        self.reservation = (head, shadow)
        backfill_jobs(now, free, shadow, extra, started, islice(queue, first + 1, None))

    def params(self) -> dict[str, Any]:
        if self.priority is None:
            return {}
        return {"priority": getattr(self.priority, "__name__", repr(self.priority))}

    @property
    def describable(self) -> bool:
        """A priority function cannot be named in a configuration; subclasses that set their
        own priority from their parameters (CREASY) can."""
        return self.priority is None or type(self) is not EASY


def reserve(
    head: Job, now: float, free: int, running: Running, started: list[Job]
) -> tuple[float, int]:
    """EASY's reservation for ``head``, the first job in priority order that does not fit:
    its shadow time and the extra processors free then beyond its need. The jobs in
    ``started`` (started in this pass) return their processors at their estimates."""
    if started:
        running = sorted(running + [(now + j.estimate, j.id, j.size) for j in started])
    return shadow_time(head.size, free, running)


def backfill_jobs(
    now: float, free: int, shadow: float, extra: int, started: list[Job], candidates: Iterable[Job]
) -> None:
    """EASY's backfilling rule, shared by every EASY-based scheduler.

    Each candidate, in priority order, that fits now is started (appended to ``started``) if it
    ends by its estimate no later than the shadow time, or if it uses no more than the extra
    processors (which it then consumes).
    """
    for job in candidates:
        size = job.size
        if size > free:
            continue
        if now + job.estimate <= shadow:
            pass  # done before the reserved job needs the processors
        elif size <= extra:
            extra -= size  # runs past the shadow time on processors the head won't need
        else:
            continue
        started.append(job)
        free -= size
        if free == 0:
            break


class PriorityFIFO(EASY):
    """Priority-FIFO: every job of a higher priority level before any job of a lower one, FIFO
    within a level, EASY backfilling within those constraints (schedulers.md).

    A job's level is :attr:`Job.priority` (higher is more urgent; a replay takes it from the
    trace's queue number, a lower number being a higher priority). With one level it is exactly
    EASY. Jobs of lower levels can wait long behind a stream of higher ones.
    """

    name = "PRIORITY"
    arrival_order = False

    def __init__(self) -> None:
        super().__init__()

    def level(self, job: Job) -> float:
        """The job's priority level (higher first)."""
        return job.priority

    def sort_key(self, job: Job) -> tuple[float, int]:  # type: ignore[override]
        return (-self.level(job), job.id)
