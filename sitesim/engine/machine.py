"""The machine: N identical processors, space slicing, no preemption, no time sharing.

:class:`Machine` starts jobs and ends them; :class:`ProcessorResources` is what a scheduler's
pass decides against on it (:mod:`sitesim.engine.resources`): ``where`` is a number of
processors, and the plan is the :class:`~sitesim.engine.profile.AvailabilityProfile` of the
running jobs' estimated ends. EASY's backfilling is answered here in a few integers (the
shadow time and the extra processors), the same decisions the profile would give.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left, insort
from collections.abc import Callable, Iterable, Sequence
from itertools import accumulate
from typing import TYPE_CHECKING, Any

import numpy as np

from sitesim.engine.event_queue import SiteEnvironment
from sitesim.engine.profile import AvailabilityProfile, shadow_time
from sitesim.engine.resources import Releases, Resources, Running
from sitesim.errors import JobStateError, SchedulerError, require

if TYPE_CHECKING:
    from sitesim.engine.job import Job
    from sitesim.engine.scheduler import Scheduler


class OverAllocationError(SchedulerError):
    """A job was started on fewer free processors than it needs."""


def started_twice(err: JobStateError, started: list[Job]) -> JobStateError:
    """``err``, saying so if the scheduler returned a job twice in one pass."""
    if len(set(map(id, started))) < len(started):
        return JobStateError(f"{err} (the scheduler returned it twice)")
    return err


class Machine:
    """N processors shared by rigid jobs.

    Starting a job takes ``size`` processors for the job's duration (its runtime, cut at its
    estimate: :meth:`Job.mark_started`) and calls ``on_end(job)`` when it ends. The machine
    keeps the running jobs sorted by *estimated* end, what backfilling needs. How busy it was
    over time is computed from the records (:func:`sitesim.results.timeline.busy`).

    Attributes:
        procs: processors in all.
        free: processors free now.
        running: ``(estimated end, id, size)`` of the running jobs, ascending.
    """

    #: A machine of processors: no platform of nodes.
    platform = None

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
        #: What the scheduler's passes decide against (one object, begun anew each pass).
        self.resources = ProcessorResources(procs, self.running)

    def run_pass(self, scheduler: Scheduler, now: float) -> None:
        """One allocation pass: the scheduler chooses on the resources of the pass, and the
        jobs it chose start (each checked again as it starts)."""
        resources = self.resources
        resources.now = now  # (ProcessorResources.begin, inlined: once a pass)
        resources.free = self.free
        if resources._taken:
            resources._taken = []
        if resources._dirty:
            resources._forget()
        if scheduler.plain_allocate:  # (Scheduler.allocate, inlined: once a pass)
            started = scheduler.select(now, resources)
            if started:
                scheduler.dequeue(started)
        else:
            started = scheduler.allocate(now, resources)
        if started:
            start = self.start
            try:
                for job in started:
                    start(job)
            except JobStateError as err:
                raise started_twice(err, started) from None

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
        self.resources.resumable = False  # (processors came back: no pass resumes the last)
        self._on_end(job)


#: Queues longer than this (behind the reserved job) are screened in NumPy for backfilling
#: (measured: a plain Python scan costs about 30 ns a job, the NumPy screen about 6 µs a pass).
SCREEN_QUEUE = 200
#: A long queue is screened from its head in chunks, the first this long, each next one twice as
#: long (measured on a day of 100,000 users: the machine is full again after a median of 651
#: jobs of a queue of 18,000, and a NumPy screen costs about 3 ns a job).
SCREEN_CHUNK = 1024
#: With more running jobs than this, the jobs a pass started are merged into them as a shadow
#: time reads them (:func:`heapq.merge`), not inserted into a copy (measured: at 128 running
#: jobs the copy costs about 1 µs and the merge 12 µs, the same near 1,000; at 4,096 the copy
#: costs 48 µs).
MERGE_RUNNING = 1024


class ProcessorResources(Resources):
    """The resources of a pass on N processors (:class:`~sitesim.engine.resources.Resources`);
    ``where`` is a number of processors.

    Until the pass makes a reservation, what is free now is one integer. The first question
    about the future builds the pass's :class:`~sitesim.engine.profile.AvailabilityProfile`
    from the running jobs and those the pass started; EASY's :meth:`backfill` needs none (its one
    reservation is the shadow time and the extra processors).

    Args:
        procs: processors in all.
        running: the running jobs, ``(estimated end, id, size)`` ascending (read, never changed).
    """

    #: One partition.
    partitions = 1
    #: What a plan planned starts as planned; ends at estimates are foreseen.
    carries_plans = True

    def __init__(self, procs: int, running: Running) -> None:
        self.procs = procs
        self._running = running
        #: The last blocked pass of EASY's backfilling (:meth:`resume`): set with
        #: :attr:`resumable`, which no profile outlives (:meth:`_profile` clears it).
        self._kept: tuple[Job | None, int, float, int, int] = (None, 0, 0.0, 0, 0)
        self.resumable = False
        #: The jobs this pass started.
        self._taken: list[Job] = []
        self.profile: AvailabilityProfile | None = None
        self._level: tuple[list[float], list[int]] | None = None
        #: This pass built a profile or a level (:meth:`_forget` them).
        self._dirty = False
        self.begin(0.0, procs)

    @classmethod
    def of(cls, now: float, free: int, running: Running) -> ProcessorResources:
        """The resources of a pass at ``now`` with ``free`` processors free and ``running``
        jobs (for a scheduler tried by hand, without a site)."""
        resources = cls(free + sum(size for _, _, size in running), running)
        resources.begin(now, free)
        return resources

    def begin(self, now: float, free: int) -> None:
        """A new pass at ``now`` with ``free`` processors free (:meth:`Machine.run_pass`
        does the same, inlined)."""
        self.now = now
        self.free = free
        if self._taken:
            self._taken = []
        if self._dirty:
            self._forget()

    def _forget(self) -> None:
        """Forget the profile and the level the last pass built."""
        self.profile = None
        self._level = None
        self._dirty = False

    @property
    def running(self) -> Running:
        return self._running

    # -- the four questions --------------------------------------------------------------------
    def fits_now(self, job: Job, duration: float | None = None) -> Any | None:
        size = job.size
        if self.profile is None:
            return size if size <= self.free else None
        length = job.estimate if duration is None else duration
        return size if self.profile.earliest(size, length) <= self.now else None

    def take_now(self, job: Job, where: Any) -> None:
        self.free -= where
        self._taken.append(job)
        if self.profile is not None:
            self.profile.take(self.now, where, job.estimate)

    def free_now(self, where: Any) -> bool:
        return bool(where <= self.free)

    def earliest(
        self,
        job: Job,
        duration: float | None = None,
        before: float = math.inf,
        releases: Releases | None = None,
    ) -> tuple[float, Any | None]:
        if releases is not None:
            raise ValueError("processors count resources back at the estimated ends")
        length = job.estimate if duration is None else duration
        return self._profile().earliest(job.size, length), job.size

    def reserve(
        self,
        job: Job,
        start: float,
        where: Any,
        duration: float | None = None,
        closed: bool = False,
    ) -> None:
        length = job.estimate if duration is None else duration
        self._profile().take(start, where, length, closed)

    def adopt(self, profile: AvailabilityProfile | None) -> None:
        """Plan this pass on ``profile`` (None: none yet), the plan of an earlier pass that no
        start or end has changed since (SLURM's backfill cycle, resumed): none of its steps
        falls between then and now, and it is moved to start now."""
        if profile is not None:
            profile.advance(self.now)
            self.profile = profile
            self._dirty = True
            self.resumable = False

    def _profile(self) -> AvailabilityProfile:
        profile = self.profile
        if profile is None:
            self._dirty = True
            self.resumable = False  # (a plan is held: no later pass resumes this one)
            profile = self.profile = AvailabilityProfile(self.now, self.free, self._with_taken())
        return profile

    def _with_taken(self) -> Running:
        """The running jobs and those this pass started, by estimated end (before the profile
        is built, which then holds those started later)."""
        if not self._taken:
            return self._running
        running = self._running.copy()
        now = self.now
        for job in self._taken:
            insort(running, (now + job.estimate, job.id, job.size))
        return running

    def new_plan(self) -> ProcessorPlan:
        return ProcessorPlan(AvailabilityProfile(self.now, self.free, self._with_taken()))

    # -- bounds ------------------------------------------------------------------------------------
    def could_start_now(self, job: Job) -> bool:
        return job.size <= self.free

    def first_release(self) -> float:
        running = self._running
        soonest = min((job.estimate for job in self._taken), default=math.inf) + self.now
        return min(running[0][0], soonest) if running else soonest

    def lower_bound(self, job: Job) -> float:
        if self._level is None:  # (the running jobs' ends, and what is free after each)
            self._dirty = True
            running = self._running
            before = self.free + sum(job.size for job in self._taken)  # (at the pass's start)
            self._level = (
                [end for end, _, _ in running],
                list(accumulate((size for _, _, size in running), initial=before)),
            )
        ends, level = self._level
        k = bisect_left(level, job.size)
        if not k:
            return self.now
        return max(self.now, ends[k - 1]) if k <= len(ends) else math.inf

    # -- bulk operations, in integers --------------------------------------------------------------
    def start_prefix(self, jobs: Sequence[Job], started: list[Job]) -> int:
        if self.profile is not None:
            return super().start_prefix(jobs, started)
        free = self.free
        k = 0
        for job in jobs:
            size = job.size
            if size > free:
                break
            free -= size
            k += 1
        if k:
            took = jobs[:k]
            started.extend(took)
            self._taken.extend(took)
            self.free = free
        return k

    def start_fitting(
        self, jobs: Sequence[Job], first: int, started: list[Job], blocked: set[int] | None = None
    ) -> None:
        if self.profile is not None:
            return super().start_fitting(jobs, first, started, blocked)
        if blocked is not None:  # (one partition: list scheduling stops at the first)
            self.start_prefix(jobs[first:], started)
            return None
        free = self.free
        took = []
        for job in jobs[first:]:
            if job.size <= free:
                took.append(job)
                free -= job.size
                if not free:
                    break
        if took:
            started.extend(took)
            self._taken.extend(took)
            self.free = free
        return None

    def backfill(
        self,
        jobs: Sequence[Job],
        first: int,
        started: list[Job],
        size: np.ndarray | None = None,
        estimate: np.ndarray | None = None,
        appended_only: bool = False,
    ) -> list[tuple[Job, float]]:
        """EASY's backfilling (:meth:`Resources.backfill`) in integers: the head's shadow time
        and extra processors (:func:`~sitesim.engine.profile.shadow_time`) are its reservation;
        a later job fits clear of it if it ends by its estimate no later than the shadow time,
        or uses no more than the extra processors (which it then consumes). With ``size`` and
        ``estimate`` given, a long queue is screened in NumPy for the jobs that could be
        backfilled at all.
        """
        if self.profile is not None:
            self.resumable = False
            return super().backfill(jobs, first, started)
        self.resumable = appended_only
        now, free = self.now, self.free
        head = jobs[first]
        taken = len(started)
        ends: Iterable[tuple[float, int, int]] = self._running
        if not self._taken:
            pass
        elif len(self._running) <= MERGE_RUNNING:
            ends = self._with_taken()
        else:  # (what _with_taken holds, merged as read: a shadow time reads a few)
            ends = heapq.merge(
                ends, sorted((now + job.estimate, job.id, job.size) for job in self._taken)
            )
        shadow, extra = shadow_time(head.size, free, ends)
        n = len(jobs)
        if size is not None and estimate is not None and n - first - 1 > SCREEN_QUEUE:
            # (a chunk at a time from the head, each twice the last: the machine is often full
            # again long before the end of a deep queue)
            low, chunk = first + 1, SCREEN_CHUNK
            while low < n and free:
                high = min(n, low + chunk)
                short = now + estimate[low:high] <= shadow
                free, extra = backfill_screened(
                    now, free, shadow, extra, started, jobs, low, size[low:high], short
                )
                low, chunk = high, 2 * chunk
        else:  # (a copy iterates faster than islice)
            free, extra = backfill_jobs(now, free, shadow, extra, started, jobs[first + 1 :])
        if len(started) > taken:  # (they start now)
            self._taken.extend(started[taken:])
        self.free = free
        if appended_only:
            self._kept = (head, free, shadow, extra, n - len(started))
        return [(head, shadow)]

    def resume(self, jobs: Sequence[Job], started: list[Job]) -> bool:
        """Resume the backfilling of the last pass, if it was EASY's (:meth:`backfill`, with
        ``appended_only``) and blocked on ``jobs[0]``, and nothing changed since but jobs
        appended to ``jobs`` (no job ended: the machine forgets the kept pass then; no
        processor taken): every job it turned down
        would be turned down again, so only the new jobs are looked at, under its shadow time
        and extra processors. False (nothing done) if it cannot."""
        kept = self._kept
        if not self.resumable or kept[0] is not jobs[0] or kept[1] != self.free:
            return False
        head, free, shadow, extra, seen = kept
        taken = len(started)
        free, extra = backfill_jobs(self.now, free, shadow, extra, started, jobs[seen:])
        if len(started) > taken:  # (they start now)
            self._taken.extend(started[taken:])
        self.free = free
        self._kept = (head, free, shadow, extra, len(jobs) - len(started))
        return True


class ProcessorPlan:
    """A plan on processors (:class:`~sitesim.engine.resources.Plan`): an
    :class:`~sitesim.engine.profile.AvailabilityProfile`; ``where`` is a number of
    processors."""

    __slots__ = ("advance", "profile")

    def __init__(self, profile: AvailabilityProfile) -> None:
        self.profile = profile
        #: The clock moved to ``now`` (:meth:`Plan.advance`): the profile forgets the past
        #: (its own method, bound once: a planning policy advances its plan every pass).
        self.advance = profile.advance

    def earliest(self, job: Job, duration: float | None = None) -> tuple[float, Any | None]:
        length = job.estimate if duration is None else duration
        return self.profile.earliest(job.size, length), job.size

    def reserve(self, job: Job, start: float, where: Any, duration: float | None = None) -> None:
        self.profile.take(start, where, job.estimate if duration is None else duration)

    def place(self, job: Job) -> tuple[float, Any | None]:
        profile, size, length = self.profile, job.size, job.estimate
        start = profile.earliest(size, length)  # (AvailabilityProfile.place, inlined)
        profile.take(start, size, length)
        return start, size

    def move_up(self, job: Job, start: float, where: Any) -> tuple[float, Any]:
        return self.earliest(job)  # (any processors: the earliest is never later)

    def freed(self, wheres: Sequence[Any | None]) -> None:
        pass  # (every move_up searches: processors are interchangeable)


def backfill_jobs(
    now: float, free: int, shadow: float, extra: int, started: list[Job], candidates: Iterable[Job]
) -> tuple[int, int]:
    """EASY's backfilling rule on processors.

    Each candidate, in order, that fits now is started (appended to ``started``) if it ends by
    its estimate no later than the shadow time, or if it uses no more than the extra
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
    jobs: Sequence[Job],
    low: int,
    size: np.ndarray,
    short: np.ndarray,
) -> tuple[int, int]:
    """:func:`backfill_jobs` on the jobs of ``jobs`` from position ``low`` on, as many as
    ``size`` holds, for a long queue.

    ``size`` holds their sizes and ``short`` whether each ends by its estimate no later than
    the shadow time (``now + estimate <= shadow``, the same arithmetic). NumPy keeps only the
    candidates that pass the backfilling test with the free and extra processors left; Python
    visits them 32 at a time, and after a block that started a job the rest are screened again
    (free and extra processors only shrink, so a job screened out stays out). The jobs started
    are exactly those of :func:`backfill_jobs`, without visiting every job of the queue in
    Python once the machine is nearly full.
    """
    # (short jobs, and those within the extra processors; then those of them that fit now: a
    # deep queue the machine keeps full has few of either)
    keep = np.flatnonzero(short | (size <= min(free, extra)) if extra else short)
    keep = keep[size[keep] <= free]
    while len(keep):
        block, keep = keep[:32], keep[32:]
        before = free
        free, extra = backfill_jobs(
            now, free, shadow, extra, started, map(jobs.__getitem__, (block + low).tolist())
        )
        if free == 0:
            break
        if free != before and len(keep):
            fits = size[keep]
            keep = keep[(fits <= free) & (short[keep] | (fits <= extra))]
    return free, extra
