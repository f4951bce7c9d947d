"""Conservative backfilling: every waiting job holds a reservation.

On arrival a job is placed at the earliest time it fits for its whole estimated runtime in the
plan of the machine (:class:`~sitesim.engine.resources.Plan`), without disturbing any earlier
reservation; a job starts when its reservation comes. When a job ends earlier than its estimate
(or a job is withdrawn, or nodes go down or come back) the schedule is *compressed*: the
waiting jobs are re-planned one by one in order of their current reservations (ties by
arrival), each at its earliest start no later than its reservation (on nodes, on the resources
it holds). In that order a job's old slot is still free when its turn comes, so no job ever
moves later than its current reservation, and none starts later than the time promised when it
arrived (unless the nodes it was promised went down).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from typing import Any

from sitesim.engine.job import Job
from sitesim.engine.machine import ProcessorPlan
from sitesim.engine.resources import Plan, Resources

from .base import Scheduler


class Conservative(Scheduler):
    """Conservative backfilling with schedule compression."""

    name = "CONSERVATIVE"

    def __init__(self) -> None:
        super().__init__()
        #: The current reservation of each waiting job, and where (None: nowhere yet).
        self.reservation: dict[Job, float] = {}
        self._where: dict[Job, Any] = {}
        #: The start time promised to each job when it arrived, by job id.
        self.promised: dict[int, float] = {}
        self._arrived: list[Job] = []
        self._plan: Plan | None = None
        self._compressions = 0
        #: The waiting jobs are to be re-planned at the next pass (a job ended early, a job
        #: was withdrawn, nodes went down or came back).
        self.compress_due = False
        #: What came back earlier than the plan foresaw, for the next plan (None: anything).
        self._freed: list[Any] = []

    def submit(self, job: Job, now: float) -> None:
        self._arrived.append(job)

    def withdraw(self, jobs: list[Job]) -> None:
        super().withdraw(jobs)
        gone = set(jobs)
        self._arrived = [job for job in self._arrived if job not in gone]
        for job in jobs:
            self.reservation.pop(job, None)
            if (where := self._where.pop(job, None)) is not None:
                self._freed.append(where)
        self._plan = None  # their reservations free processor-time: re-plan
        self.compress_due = True

    def job_ended(self, job: Job, now: float) -> None:
        if not now >= job.start + job.estimate:  # (NaN: a job requeued after a node failed)
            self._plan = None  # ended early: compress at the next pass
            self.compress_due = True
            if job.alloc is not None:  # (None on processors; a job requeued: nodes changed)
                self._freed.append(job.alloc)

    def nodes_changed(self) -> None:
        self._plan = None
        self.compress_due = True
        self._freed.append(None)

    def _order(self, job: Job) -> tuple[float, int]:
        return (self.reservation[job], job.id)

    def select(self, now: float, resources: Resources) -> list[Job]:
        plan = self._plan
        queue = self.queue
        late = bool(queue) and self.reservation[queue[0]] < now  # (a pass came late)
        if plan is not None and not late and resources.carries_plans:
            plan.advance(now)
        else:
            plan = self._plan = resources.new_plan()
            compress = self.compress_due or late
            if compress:
                plan.freed([None] if late else self._freed)
            self._freed.clear()
            if queue and compress:
                self._compressions += 1
            if compress and isinstance(plan, ProcessorPlan):
                self._compress_on_processors(plan, queue)
            else:
                for job in queue:  # in reservation order
                    start, where = self.reservation[job], self._where[job]
                    if where is None:
                        start, where = plan.earliest(job)
                    elif compress:
                        start, where = plan.move_up(job, max(start, now), where)
                    self._hold(plan, job, start, where)
            if compress:
                queue.sort(key=self._order)
            self.compress_due = False  # (set only with the plan forgotten)
        reservation, wheres = self.reservation, self._where
        if self._arrived:
            promised = self.promised
            for job in self._arrived:
                start, where = plan.place(job)
                reservation[job] = start
                wheres[job] = where
                promised[job.id] = start
                self._insert(queue, job, start)
            self._arrived.clear()
        if not queue or reservation[queue[0]] > now:
            return []  # (no reservation has come)
        due = 0
        for job in queue:
            if reservation[job] > now:
                break
            due += 1
        started = queue[:due]  # a prefix: allocate() dequeues it
        for job in started:
            resources.take_now(job, wheres.pop(job))
            del reservation[job]
        return started

    def _insert(self, queue: list[Job], job: Job, start: float) -> None:
        """Insert ``job``, reserved at ``start``, into ``queue`` in reservation order, ties by
        arrival (where ``insort(queue, job, key=self._order)`` would): searched by
        reservation alone (no call of Python a step), then moved before the jobs reserved at
        the same time with a larger id (none but for a job requeued on nodes, which keeps its
        id)."""
        reservation = self.reservation
        k = bisect_right(queue, start, key=reservation.__getitem__)
        while k and reservation[queue[k - 1]] == start and queue[k - 1].id > job.id:
            k -= 1
        queue.insert(k, job)

    def _compress_on_processors(self, plan: ProcessorPlan, queue: list[Job]) -> None:
        """The compression on processors in one call: each waiting job, in reservation order,
        at its earliest start (what :meth:`ProcessorPlan.move_up` gives: processors are
        interchangeable), reserved there."""
        starts = plan.profile.place_all([(job.size, job.estimate) for job in queue])
        reservation, wheres = self.reservation, self._where
        for job, start in zip(queue, starts, strict=True):
            reservation[job] = start
            wheres[job] = job.size

    def _hold(self, plan: Plan, job: Job, start: float, where: Any) -> None:
        """Reserve ``job`` at ``start`` on ``where`` (nowhere: at no time, yet)."""
        if where is None:
            start = math.inf
        else:
            plan.reserve(job, start, where)
        self.reservation[job] = start
        self._where[job] = where

    def stats(self) -> dict[str, Any]:
        return {"compressions": self._compressions}
