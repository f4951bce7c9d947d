"""What a scheduler decides against: the resources of one allocation pass.

A policy never reads the machine itself. At each pass the site hands the scheduler a
:class:`Resources` view of its machine (N processors: :class:`~sitesim.engine.machine.
ProcessorResources`; a platform's nodes: :mod:`sitesim.platform.resources`), and every policy is
written once against it. The view answers where a job could run and records what the pass
decides:

- :meth:`~Resources.fits_now`: where a job could start now and run for a duration (its
  estimate) clear of every reservation this pass made; None if nowhere;
- :meth:`~Resources.take_now`: the job starts now there: later questions see it hold those
  resources until its estimated end;
- :meth:`~Resources.earliest`: the earliest start of a job in this pass's plan (the running
  jobs give their resources back at their estimated ends), and where;
- :meth:`~Resources.reserve`: the plan holds those resources for a job from a later start;
  later jobs must stay clear of them.

``where`` is whatever the machine uses for what a job holds: a number of processors, or an
:class:`~sitesim.platform.placement.Alloc` of nodes. Policies that reason about one pool of
cores (a genetic algorithm's fitness, an economic charge) read :attr:`~Resources.free` and
:attr:`~Resources.running`, the same on both machines. Jobs are in partitions
(:meth:`~Resources.part`; processors have one) and partitions that share nodes are in one group
(:attr:`~Resources.groups`): what is planned in one group never touches another's resources.

The bulk operations (:meth:`~Resources.start_prefix`, :meth:`~Resources.start_fitting`,
:meth:`~Resources.backfill`) are the list scheduling and the backfilling every queue-order policy
uses. This class defines them by the four questions above, once; a machine may answer them
faster, giving the same decisions (the property tests compare them on random workloads).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    import numpy as np

    from sitesim.engine.job import Job

#: The running jobs as one pool: ``(estimated end, job id, cores held)`` ascending.
Running = list[tuple[float, int, int]]

#: When a plan counts running jobs' resources back, from their estimated ends (ascending, an
#: array): the same length, never earlier, never out of order (a scheduler's estimate, as
#: Slurm's of a pending job's start).
Releases = Callable[["np.ndarray"], "np.ndarray"]


class Plan(Protocol):
    """Free resources from now on and the reservations made in them, kept by a planning
    policy (conservative backfilling, the planners) from one pass to the next while the
    machine carries it (:attr:`Resources.carries_plans`)."""

    def earliest(self, job: Job, duration: float | None = None) -> tuple[float, Any | None]:
        """The earliest start of ``job`` for ``duration`` seconds (its estimate if None), and
        where; ``(inf, None)`` if it never fits."""
        ...

    def reserve(self, job: Job, start: float, where: Any, duration: float | None = None) -> None:
        """Hold ``where`` for ``job`` on ``[start, start + duration)``."""
        ...

    def place(self, job: Job) -> tuple[float, Any | None]:
        """:meth:`earliest` for the job's estimate, and :meth:`reserve` it there if it fits
        anywhere."""
        ...

    def move_up(self, job: Job, start: float, where: Any) -> tuple[float, Any]:
        """For a job reserved at ``start`` on ``where`` and taken out of the plan, its
        earliest start no later than ``start`` on resources that keep every later
        reservation's promise: on processors any (they are interchangeable), on nodes the
        same ones."""
        ...

    def advance(self, now: float) -> None:
        """The clock moved to ``now``, and nothing changed but what the plan foresaw."""
        ...

    def freed(self, wheres: Sequence[Any | None]) -> None:
        """Told once, of a new plan made to compress the last one's: the resources at each
        of ``wheres`` (None: any) came back earlier than the last plan foresaw (a job ended
        early or was withdrawn, nodes came back), and nothing else did. The plan may then
        answer :meth:`move_up` for a job as the last plan's compression did where nothing
        freed or moved since touches its resources; untold, it searches for every job."""
        ...


class Resources:
    """The resources of one allocation pass (see the module docstring).

    Attributes:
        now: the clock.
        free: cores free now, in all, after the jobs this pass started.
        groups: per partition, its group.
    """

    #: How a plan holds a reservation: ``exact`` (the resources it was given) or
    #: ``whole_nodes`` (the nodes it was given, whole, as Slurm's backfill does; on
    #: processors the two are the same).
    reservations: ClassVar[str] = "exact"

    now: float
    free: int
    groups: Sequence[int] = (0,)

    @property
    def running(self) -> Running:
        """The running jobs as one pool, ``(estimated end, id, cores held)`` ascending (jobs
        this pass started not included)."""
        raise NotImplementedError

    #: How many partitions jobs can be in.
    partitions: int = 1
    #: False if :meth:`resume` would do nothing (no pass is kept to resume): a policy need
    #: not ask.
    resumable: bool = False

    def part(self, job: Job) -> int:
        """The partition of ``job`` (0 on processors)."""
        return 0

    # -- the four questions --------------------------------------------------------------------
    def fits_now(self, job: Job, duration: float | None = None) -> Any | None:
        """Where ``job`` could start now and run ``duration`` seconds (its estimate if None)
        clear of what this pass reserved; None if nowhere."""
        raise NotImplementedError

    def take_now(self, job: Job, where: Any) -> None:
        """``job`` starts now on ``where`` (it holds it until its estimated end)."""
        raise NotImplementedError

    def fits_now_outside(self, job: Job, parts: set[int]) -> Any | None:
        """:meth:`fits_now` on the nodes of no partition in ``parts`` (Slurm's main scheduler
        keeps a partition's nodes from the rest of its pass once a job of it cannot start);
        asked only of plans on nodes whose reservations hold whole nodes."""
        raise NotImplementedError

    def free_now(self, where: Any) -> bool:
        """True if ``where`` is free now (what this pass started holds its resources)."""
        raise NotImplementedError

    def earliest(
        self,
        job: Job,
        duration: float | None = None,
        before: float = math.inf,
        releases: Releases | None = None,
    ) -> tuple[float, Any | None]:
        """The earliest start of ``job`` for ``duration`` seconds (its estimate if None) in
        this pass's plan, and where; ``(inf, None)`` if it never fits. If the earliest start
        is not before ``before``, ``(inf, None)`` may be returned instead. ``releases``: when
        the running jobs (and those the pass started) give their resources back, from their
        estimated ends (by default then); one function for the whole pass, asked of the plans
        holding whole nodes only (:mod:`sitesim.platform.whole_nodes`)."""
        raise NotImplementedError

    def reserve(
        self,
        job: Job,
        start: float,
        where: Any,
        duration: float | None = None,
        closed: bool = False,
    ) -> None:
        """Hold ``where`` for ``job`` on ``[start, start + duration)`` in this pass's plan
        (``duration``: its estimate if None). ``closed``: a job that would end exactly at
        ``start`` collides with it too (as Slurm's backfill tests its reservations); only the
        plans on processors and those holding whole nodes make them."""
        raise NotImplementedError

    # -- plans kept from pass to pass --------------------------------------------------------------
    def new_plan(self) -> Plan:
        """A plan of the resources free from now on (the running jobs and those this pass
        started give theirs back at their estimated ends), with no reservation."""
        raise NotImplementedError

    #: True if a plan made at an earlier pass still describes the machine once advanced to
    #: now, provided that every job it planned to start did start and that no job ended
    #: earlier than its estimate (the policy knows those: :meth:`job_ended`); False: a
    #: planning policy makes a new plan each pass. (An attribute: asked at every pass.)
    carries_plans: ClassVar[bool] = False

    # -- bounds, for policies that test many jobs in a pass --------------------------------------
    def could_start_now(self, job: Job) -> bool:
        """False if ``job`` cannot start now even with no reservation in its way."""
        raise NotImplementedError

    def first_release(self) -> float:
        """The first time after now that resources come back (a running job's or a job
        started in this pass's estimated end, a maintenance window's end): a job that cannot
        start now cannot start before it."""
        raise NotImplementedError

    def lower_bound(self, job: Job) -> float:
        """A time before which ``job`` cannot start in any plan of this pass (what the running
        jobs give back is too little before it; what the pass starts or reserves only delays
        it)."""
        raise NotImplementedError

    # -- bulk operations ---------------------------------------------------------------------------
    def start_prefix(self, jobs: Sequence[Job], started: list[Job]) -> int:
        """List scheduling: start ``jobs`` in order while they fit (appending them to
        ``started``); returns the position of the first that does not (``len(jobs)`` if
        every one started)."""
        for k, job in enumerate(jobs):
            where = self.fits_now(job)
            if where is None:
                return k
            self.take_now(job, where)
            started.append(job)
        return len(jobs)

    def start_fitting(
        self, jobs: Sequence[Job], first: int, started: list[Job], blocked: set[int] | None = None
    ) -> None:
        """From position ``first`` on, start every job of ``jobs`` that fits now, in order.

        With ``blocked`` (a set of partitions, updated as the pass goes), a job that does not
        fit blocks its partition and later jobs of a blocked partition are not tried (list
        scheduling on several partitions); without, none blocks (greedy first fit).
        """
        for job in jobs[first:]:
            part = self.part(job)
            if blocked is not None and part in blocked:
                continue
            where = self.fits_now(job)
            if where is not None:
                self.take_now(job, where)
                started.append(job)
            elif blocked is not None:
                blocked.add(part)
                if len(blocked) == self.partitions:
                    return

    def backfill(
        self,
        jobs: Sequence[Job],
        first: int,
        started: list[Job],
        size: np.ndarray | None = None,
        estimate: np.ndarray | None = None,
        appended_only: bool = False,
    ) -> list[tuple[Job, float]]:
        """EASY's backfilling from position ``first`` on (the first job that did not fit):
        in order, the first job of each partition that does not fit now is reserved at its
        earliest start, and every job that fits now clear of the reservations starts.

        Returns the reservations made, ``(job, start)``. ``size`` and ``estimate`` (the jobs'
        sizes and estimates, aligned with ``jobs``) and ``appended_only`` (``jobs`` only grew
        at its end since the last pass, and nothing else changed in it) let a machine answer
        faster; they never change the answer.
        """
        del size, estimate, appended_only  # (hints for faster machines)
        reserved: list[tuple[Job, float]] = []
        blocked: set[int] = set()
        for job in jobs[first:]:
            where = self.fits_now(job)
            if where is not None:
                self.take_now(job, where)
                started.append(job)
                continue
            part = self.part(job)
            if part in blocked:
                continue
            blocked.add(part)
            start, where = self.earliest(job)
            if where is not None:
                self.reserve(job, start, where)
                reserved.append((job, start))
        return reserved

    def resume(self, jobs: Sequence[Job], started: list[Job]) -> bool:
        """Continue the last pass's :meth:`backfill` (given ``appended_only``) over the jobs
        appended to ``jobs`` since, if it blocked on ``jobs[0]`` and nothing else changed:
        every job it turned down would be turned down again. False (nothing done) if this
        machine cannot tell; the caller then runs a whole pass."""
        del jobs, started
        return False
