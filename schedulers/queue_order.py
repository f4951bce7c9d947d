"""Queue-order schedulers: FCFS, SJF, LJF, SCDF, EASY backfilling on top of them, and
Priority-FIFO (EASY within priority levels).

``FCFS`` starts jobs in queue order while the head fits; the head blocks everyone behind it.
SJF, LJF and SCDF are the same list scheduler with another static order (and can starve a job).
``EASY`` (Lifka's aggressive backfilling) adds :meth:`EASY.backfill`: the first job that does not
fit gets a reservation at its shadow time and later jobs may jump ahead if they do not delay it.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, insort
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from sitesim.engine.job import Job
from sitesim.engine.machine import Running

from .base import Scheduler, shadow_time

#: A dynamic priority: ``priority(job, now)``; higher starts first, ties by arrival.
Priority = Callable[[Job, float], float]


class FCFS(Scheduler):
    """First come, first served: start jobs in order while the head of the queue fits.

    Subclasses change the order with :meth:`sort_key` (a static key, kept sorted on arrival)
    or :meth:`ordered` (a dynamic order, recomputed at every pass).
    """

    name = "FCFS"
    platform_mode = "list"
    #: True when the queue is in arrival order (no sort key).
    arrival_order = True
    skip_idle_passes = True  # (select returns at once)

    def __init__(self) -> None:
        super().__init__()
        #: :meth:`ordered` is the queue itself: a pass need not ask for it.
        self._queue_is_order = type(self).ordered is FCFS.ordered

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
        queue = self.queue if self._queue_is_order else self.ordered(now)
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

    In arrival order (no priority), two shortcuts keep a long queue cheap without changing a
    decision. A pass that follows a blocked pass with nothing new but arrivals (same head, no
    processor returned) reuses its shadow time and extra processors and looks only at the new
    jobs, since every job the last pass turned down would be turned down again (free and extra
    processors have not grown, the shadow time has not moved, the clock has only advanced).
    And while the queue is longer than :data:`SCREEN_QUEUE` jobs, the sizes and estimates of
    the waiting jobs are kept beside it (:class:`ArrivalColumns`), so NumPy screens it for the
    jobs that could be backfilled at all.

    Args:
        priority: optional ``priority(job, now)``; higher first, ties by arrival. It is
            evaluated at every pass, so it may change with time.
    """

    name = "EASY"
    platform_mode = "easy"
    # (a skipped pass leaves the last blocked pass's state, which stays right: the next pass
    # with a processor free follows a job's end, which clears it; one with a job waiting after
    # none did has another head)
    skip_idle_passes = True

    def __init__(self, priority: Priority | None = None) -> None:
        super().__init__()
        self.priority = priority
        #: The reservation of the last pass that made one: ``(job, shadow time)``.
        self.reservation: tuple[Job, float] | None = None
        self._queue_is_order = priority is None and type(self).ordered is EASY.ordered
        #: The pass considers the queue as it stands (arrival order): the shortcuts apply.
        self._in_arrival_order = self._queue_is_order and self.arrival_order
        #: Kept only while the queue is long (they cost more than they save on a short one).
        self._columns: ArrivalColumns | None = None
        #: What the last pass left if it blocked (in arrival order): the reserved head, the
        #: free and extra processors after backfilling, the shadow time, and how many jobs it
        #: had looked at (the queue's length after the pass). A plain tuple: set every pass.
        self._blocked: tuple[Job, int, float, int, int] | None = None

    def submit(self, job: Job, now: float) -> None:
        FCFS.submit(self, job, now)  # (explicit: cheaper than super() on the hot path)
        if self._columns is not None:
            self._columns.append(job)
        elif self._in_arrival_order and len(self.queue) > SCREEN_QUEUE:
            self._columns = ArrivalColumns.of(self.queue)

    def job_ended(self, job: Job, now: float) -> None:
        self._blocked = None  # processors came back: the next pass looks at every job

    def ordered(self, now: float) -> list[Job]:
        if self.priority is None or len(self.queue) < 2:
            return self.queue
        priority = self.priority
        return sorted(self.queue, key=lambda job: (-priority(job, now), job.id))

    def select(self, now: float, free: int, running: Running) -> list[Job]:
        blocked = self._blocked
        if blocked is not None:
            self._blocked = None  # (set again by a pass that blocks)
            head, last_free, shadow, extra, seen = blocked
            queue = self.queue
            if free == last_free and free and queue and queue[0] is head:
                started: list[Job] = []  # only the jobs that arrived since can start
                free, extra = backfill_jobs(now, free, shadow, extra, started, queue[seen:])
                self._blocked = (head, free, shadow, extra, len(queue) - len(started))
                return started
        return FCFS.select(self, now, free, running)

    def backfill(
        self, now: float, free: int, running: Running, queue: list[Job], started: list[Job]
    ) -> None:
        first = len(started)
        head = queue[first]
        if started:
            shadow, extra = reserve(head, now, free, running, started)
        else:
            shadow, extra = shadow_time(head.size, free, running)
        self.reservation = (head, shadow)
        columns = self._columns
        if columns is not None and len(queue) - first > SCREEN_QUEUE:
            free, extra = columns.backfill(queue, first + 1, now, free, shadow, extra, started)
        else:  # (a copy iterates faster than islice)
            free, extra = backfill_jobs(now, free, shadow, extra, started, queue[first + 1 :])
        if self._in_arrival_order:
            self._blocked = (head, free, shadow, extra, len(queue) - len(started))

    def dequeue(self, started: list[Job]) -> None:
        if self._columns is None:
            Scheduler.dequeue(self, started)
        else:
            self._columns.remove(self.queue, started)
            if len(self.queue) < SCREEN_QUEUE // 2:  # short again (half, not to flap)
                self._columns = self._blocked = None

    def withdraw(self, jobs: list[Job]) -> None:
        self._blocked = None
        super().withdraw(jobs)

    def nodes_changed(self) -> None:
        self._blocked = None

    def params(self) -> dict[str, Any]:
        if self.priority is None:
            return {}
        return {"priority": getattr(self.priority, "__name__", repr(self.priority))}

    @property
    def describable(self) -> bool:
        """A priority function cannot be named in a configuration; subclasses that set their
        own priority from their parameters (CREASY) can."""
        return self.priority is None or type(self) is not EASY


#: Queues longer than this (behind the reserved job) are screened in NumPy for backfilling
#: (measured: a plain Python scan costs about 30 ns a job, the NumPy screen about 6 µs a pass).
SCREEN_QUEUE = 200


class ArrivalColumns:
    """The size, estimate, submit time and id of every job of a queue kept in arrival order, in
    typed arrays beside it: appends and removals at C speed, and NumPy views (made and dropped
    within a pass: a live view would stop the arrays from growing) to screen a long queue."""

    __slots__ = ("estimate", "id", "size", "submit")

    def __init__(self) -> None:
        self.size = array("q")
        self.estimate = array("d")
        self.submit = array("d")
        self.id = array("q")

    @classmethod
    def of(cls, queue: list[Job]) -> ArrivalColumns:
        """The columns of the jobs of ``queue``."""
        columns = cls()
        for job in queue:
            columns.append(job)
        return columns

    def append(self, job: Job) -> None:
        self.size.append(int(job.size))
        self.estimate.append(job.estimate)
        self.submit.append(job.submit)
        self.id.append(job.id)

    def backfill(
        self,
        queue: list[Job],
        start: int,
        now: float,
        free: int,
        shadow: float,
        extra: int,
        started: list[Job],
    ) -> tuple[int, int]:
        """:func:`backfill_jobs` on the jobs of ``queue`` from position ``start`` on, screened
        in NumPy (:func:`backfill_screened`)."""
        # (no view of the columns outlives these lines: they must stay free to grow)
        size = np.frombuffer(self.size, dtype=np.int64)[start:].copy()
        short = now + np.frombuffer(self.estimate, dtype=np.float64)[start:] <= shadow
        positions = np.arange(start, start + len(size))
        return backfill_screened(now, free, shadow, extra, started, queue, positions, size, short)

    def remove(self, queue: list[Job], jobs: list[Job]) -> None:
        """Take ``jobs`` off ``queue`` and the columns (jobs not in the queue are ignored)."""
        if len(jobs) == 1 and queue and queue[0] is jobs[0]:
            positions = [0]  # the head started, the most common case
        else:
            positions = []
            ids = self.id
            for job in jobs:
                k = bisect_left(ids, job.id)  # ids grow with arrival
                if not (k < len(queue) and queue[k] is job):
                    try:  # jobs given ids by hand
                        k = queue.index(job)
                    except ValueError:
                        continue
                positions.append(k)
            positions.sort(reverse=True)
        for k in positions:
            del queue[k], self.size[k], self.estimate[k], self.submit[k], self.id[k]


def reserve(
    head: Job, now: float, free: int, running: Running, started: list[Job]
) -> tuple[float, int]:
    """EASY's reservation for ``head``, the first job in priority order that does not fit:
    its shadow time and the extra processors free then beyond its need. The jobs in
    ``started`` (started in this pass) return their processors at their estimates."""
    if started:
        running = running.copy()
        for job in started:
            insort(running, (now + job.estimate, job.id, job.size))
    return shadow_time(head.size, free, running)


def backfill_jobs(
    now: float, free: int, shadow: float, extra: int, started: list[Job], candidates: Iterable[Job]
) -> tuple[int, int]:
    """EASY's backfilling rule, shared by every EASY-based scheduler.

    Each candidate, in priority order, that fits now is started (appended to ``started``) if it
    ends by its estimate no later than the shadow time, or if it uses no more than the extra
    processors (which it then consumes). Returns the free and extra processors left.
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
    return free, extra


def backfill_screened(
    now: float,
    free: int,
    shadow: float,
    extra: int,
    started: list[Job],
    queue: list[Job],
    positions: np.ndarray,
    size: np.ndarray,
    short: np.ndarray,
) -> tuple[int, int]:
    """:func:`backfill_jobs` on the jobs ``queue[positions]``, in that order, for a long queue.

    ``size`` holds their sizes and ``short`` whether each ends by its estimate no later than
    the shadow time (``now + estimate <= shadow``, the same arithmetic). NumPy keeps only the
    candidates that pass the backfilling test with the free and extra processors left; Python
    visits them 32 at a time, and after a block that started a job the rest are screened again
    (free and extra processors only shrink, so a job screened out stays out). The jobs started
    are exactly those of :func:`backfill_jobs`, without visiting every job of the queue in
    Python once the machine is nearly full.
    """
    keep = np.flatnonzero((size <= free) & (short | (size <= extra)))
    while len(keep):
        block, keep = keep[:32], keep[32:]
        before = free
        free, extra = backfill_jobs(
            now, free, shadow, extra, started, map(queue.__getitem__, positions[block].tolist())
        )
        if free == 0:
            break
        if free != before and len(keep):
            fits = size[keep]
            keep = keep[(fits <= free) & (short[keep] | (fits <= extra))]
    return free, extra


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
