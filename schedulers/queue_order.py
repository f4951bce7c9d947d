"""Queue-order schedulers: FCFS, SJF, LJF, SCDF, EASY backfilling on top of them, and
Priority-FIFO (EASY within priority levels).

``FCFS`` starts jobs in queue order while the head fits; the head blocks everyone behind it.
SJF, LJF and SCDF are the same list scheduler with another static order (and can starve a job).
``EASY`` (Lifka's aggressive backfilling) adds :meth:`EASY.backfill`: the first job that does not
fit gets a reservation at its shadow time and later jobs may jump ahead if they do not delay it.
Each is written once, against the resources of a pass (:mod:`sitesim.engine.resources`), and
runs on processors and on a platform's nodes alike.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, insort
from collections.abc import Callable
from typing import Any

import numpy as np

from sitesim.engine.job import Job
from sitesim.engine.machine import SCREEN_QUEUE
from sitesim.engine.resources import Resources
from sitesim.engine.scheduler import Scheduler

#: A dynamic priority: ``priority(job, now)``; higher starts first, ties by arrival.
Priority = Callable[[Job, float], float]


class FCFS(Scheduler):
    """First come, first served: start jobs in order while the head of the queue fits.

    Subclasses change the order with :meth:`sort_key` (a static key, kept sorted on arrival)
    or :meth:`ordered` (a dynamic order, recomputed at every pass), and what happens behind a
    head that does not fit with :meth:`backfill`. On several partitions (a platform of nodes)
    a job that does not fit blocks the jobs of its own partition behind it (Slurm's main
    scheduler does the same); jobs of other partitions may still start.
    """

    name = "FCFS"
    #: True when the queue is in arrival order (no sort key).
    arrival_order = True
    skip_idle_passes = True  # (select returns at once)
    #: A job left the queue without starting since the last backfilling (EASY's).
    _withdrawn = False

    def __init__(self) -> None:
        super().__init__()
        #: :meth:`ordered` is the queue itself: a pass need not ask for it.
        self._queue_is_order = type(self).ordered is FCFS.ordered
        #: :meth:`backfill` is FCFS's: it starts nothing on one partition.
        self._lists_only = type(self).backfill is FCFS.backfill
        #: A pass may resume the last one (:meth:`Resources.resume`): EASY's, in arrival order.
        self._resumes = False

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

    def select(self, now: float, resources: Resources) -> list[Job]:
        if not resources.free or not self.queue:
            return []  # nothing can start
        started: list[Job] = []
        if (
            self._resumes
            and resources.resumable
            and not self._withdrawn
            and resources.resume(self.queue, started)
        ):
            return started  # (a pass with only new jobs)
        queue = self.queue if self._queue_is_order else self.ordered(now)
        # (a head that needs more cores than are free cannot start: no need to ask where)
        first = 0 if queue[0].size > resources.free else resources.start_prefix(queue, started)
        if (
            first < len(queue)
            and resources.free
            and not (self._lists_only and resources.partitions == 1)
        ):
            self.backfill(now, resources, queue, first, started)
        return started

    def backfill(
        self, now: float, resources: Resources, queue: list[Job], first: int, started: list[Job]
    ) -> None:
        """Start more jobs behind ``queue[first]``, the first that did not fit (appending them
        to ``started``). FCFS: on several partitions, the jobs of the other partitions, in
        order, while each partition's first job that does not fit blocks its own."""
        if resources.partitions > 1:
            resources.start_fitting(queue, first, started, blocked=set())


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
    fit; the first job that does not fit is *reserved* at its earliest start, its shadow time
    (the earliest time enough processors are free by the running jobs' estimated ends). Every
    later job that fits now starts if it stays clear of the reservation: on processors, if it
    ends (by estimate) no later than the shadow time, or if it uses no more than the
    processors left over at the shadow time (the *extra* processors). On several partitions
    the first job of each partition that does not fit is reserved
    (:meth:`~sitesim.engine.resources.Resources.backfill`).

    In arrival order, while the queue is longer than
    :data:`~sitesim.engine.machine.SCREEN_QUEUE` jobs, the sizes and estimates of the waiting
    jobs are kept beside it (:class:`ArrivalColumns`), so the machine can screen it in NumPy
    for the jobs that could be backfilled at all.

    Args:
        priority: optional ``priority(job, now)``; higher first, ties by arrival. It is
            evaluated at every pass, so it may change with time.
    """

    name = "EASY"
    skip_idle_passes = True

    def __init__(self, priority: Priority | None = None) -> None:
        super().__init__()
        self.priority = priority
        #: The reservation of the last pass that made one: ``(job, shadow time)``.
        self.reservation: tuple[Job, float] | None = None
        self._queue_is_order = priority is None and type(self).ordered is EASY.ordered
        #: The pass considers the queue as it stands (arrival order): it only grows at its
        #: end between passes, unless a job is withdrawn.
        self._in_arrival_order = self._queue_is_order and self.arrival_order
        #: A pass may resume the last one (:meth:`Resources.resume`): in arrival order, and
        #: backfilling as EASY does.
        self._resumes = self._in_arrival_order and type(self).backfill is EASY.backfill
        self._withdrawn = False
        #: Kept only while the queue is long (they cost more than they save on a short one).
        self._columns: ArrivalColumns | None = None

    def submit(self, job: Job, now: float) -> None:
        if not self._in_arrival_order:
            FCFS.submit(self, job, now)  # (explicit: cheaper than super() on the hot path)
            return
        queue = self.queue
        queue.append(job)  # (FCFS.submit in arrival order, inlined: once a job)
        if self._columns is not None:
            self._columns.append(job)
        elif len(queue) > SCREEN_QUEUE:
            self._columns = ArrivalColumns.of(queue)

    def ordered(self, now: float) -> list[Job]:
        if self.priority is None or len(self.queue) < 2:
            return self.queue
        priority = self.priority
        return sorted(self.queue, key=lambda job: (-priority(job, now), job.id))

    def backfill(
        self, now: float, resources: Resources, queue: list[Job], first: int, started: list[Job]
    ) -> None:
        columns = self._columns
        size = estimate = None
        if columns is not None and queue is self.queue:
            size, estimate = columns.arrays()
        # (withdrawals before this pass do not matter: it considered the queue as it stands)
        reserved = resources.backfill(queue, first, started, size, estimate, self._in_arrival_order)
        self._withdrawn = False
        if reserved:
            self.reservation = reserved[0]

    def dequeue(self, started: list[Job]) -> None:
        if self._columns is None:
            Scheduler.dequeue(self, started)
        else:
            self._columns.remove(self.queue, started)
            if len(self.queue) < SCREEN_QUEUE // 2:  # short again (half, not to flap)
                self._columns = None

    def withdraw(self, jobs: list[Job]) -> None:
        self._withdrawn = True
        super().withdraw(jobs)

    def params(self) -> dict[str, Any]:
        if self.priority is None:
            return {}
        return {"priority": getattr(self.priority, "__name__", repr(self.priority))}

    @property
    def describable(self) -> bool:
        """A priority function cannot be named in a configuration; subclasses that set their
        own priority from their parameters (CREASY) can."""
        return self.priority is None or type(self) is not EASY


class ArrivalColumns:
    """The size, estimate, submit time and id of every job of a queue kept in arrival order, in
    typed arrays beside it: appends and removals at C speed, and NumPy views (made and dropped
    within a pass: a live view would stop the arrays from growing) to screen a long queue.

    The columns start at an offset: a job taken off moves the jobs ahead of it one place back
    (not the jobs behind it), so taking off the jobs near the head of a long queue, where a pass
    starts them, costs what lies ahead of them; the space freed at the front is given back once
    it is half of the arrays.
    """

    __slots__ = ("_estimate", "_id", "_lo", "_size", "_submit")

    def __init__(self) -> None:
        self._size = array("q")
        self._estimate = array("d")
        self._submit = array("d")
        self._id = array("q")
        self._lo = 0  # (the columns' first position in the arrays)

    @classmethod
    def of(cls, queue: list[Job]) -> ArrivalColumns:
        """The columns of the jobs of ``queue``."""
        columns = cls()
        for job in queue:
            columns.append(job)
        return columns

    def append(self, job: Job) -> None:
        self._size.append(int(job.size))
        self._estimate.append(job.estimate)
        self._submit.append(job.submit)
        self._id.append(job.id)

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The sizes and estimates as NumPy views, for one pass: a view that outlives it would
        stop the columns from growing."""
        return self.column("size"), self.column("estimate")

    def column(self, name: str) -> np.ndarray:
        """The column ``name`` (size, estimate, submit or id) as a NumPy view, aligned with the
        queue, for one pass (as :meth:`arrays`)."""
        values = getattr(self, "_" + name)
        return np.frombuffer(
            values, dtype=np.dtype(values.typecode), offset=values.itemsize * self._lo
        )

    def remove(self, queue: list[Job], jobs: list[Job]) -> None:
        """Take ``jobs`` off ``queue`` and the columns (jobs not in the queue are ignored)."""
        lo = self._lo
        if len(jobs) == 1 and queue and queue[0] is jobs[0]:
            positions = [0]  # the head started, the most common case
        else:
            positions = []
            ids = self._id
            for job in jobs:
                k = bisect_left(ids, job.id, lo) - lo  # ids grow with arrival
                if not (0 <= k < len(queue) and queue[k] is job):
                    try:  # jobs given ids by hand
                        k = queue.index(job)
                    except ValueError:
                        continue
                positions.append(k)
            positions.sort(reverse=True)
        columns: tuple[array[Any], ...] = self._size, self._estimate, self._submit, self._id
        for k in positions:  # (from the last: those ahead keep their positions)
            at = lo + k
            if 2 * k < len(queue):  # (nearer the head: those ahead move back one place)
                if k:
                    for values in columns:
                        values[lo + 1 : at + 1] = values[lo:at]
                lo += 1
            else:  # (nearer the end: those behind move forward one place)
                for values in columns:
                    del values[at]
            del queue[k]
        if lo > len(self._id) // 2:  # (the front is half the arrays: give it back)
            for values in columns:
                del values[:lo]
            lo = 0
        self._lo = lo


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
