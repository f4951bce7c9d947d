"""Conservative backfilling: every waiting job holds a reservation.

On arrival a job is placed at the earliest time it fits for its whole estimated runtime in the
availability profile, without disturbing any earlier reservation; a job starts when its
reservation comes. When a job ends earlier than its estimate the schedule is *compressed*: the
waiting jobs are re-planned one by one in order of their current reservations (ties by
arrival), each at its earliest fit. In that order a job's old slot is still free when its turn
comes, so no job ever moves later than its current reservation, and none starts later than the
time promised when it arrived.
"""

from __future__ import annotations

import math
from bisect import insort
from typing import Any

from sitesim.engine.job import Job
from sitesim.engine.machine import Running

from .availability import AvailabilityProfile
from .base import Scheduler


class Conservative(Scheduler):
    """Conservative backfilling with schedule compression."""

    name = "CONSERVATIVE"
    platform_mode = "conservative"

    def __init__(self) -> None:
        super().__init__()
        #: The current reservation of each waiting job.
        self.reservation: dict[Job, float] = {}
        #: The start time promised to each job when it arrived, by job id.
        self.promised: dict[int, float] = {}
        self._arrived: list[Job] = []
        self._profile: AvailabilityProfile | None = None
        self._compressions = 0
        #: On a platform: the waiting jobs are to be re-planned at the next pass (a job ended
        #: early, a job was withdrawn, nodes went down or came back).
        self.compress_due = False

    def submit(self, job: Job, now: float) -> None:
        self._arrived.append(job)

    def withdraw(self, jobs: list[Job]) -> None:
        super().withdraw(jobs)
        gone = set(jobs)
        self._arrived = [job for job in self._arrived if job not in gone]
        for job in jobs:
            self.reservation.pop(job, None)
        self._profile = None  # their reservations free processor-time: re-plan
        self.compress_due = True

    def job_ended(self, job: Job, now: float) -> None:
        if not now >= job.start + job.estimate:  # (NaN: a job requeued after a node failed)
            self._profile = None  # ended early: compress at the next pass
            self.compress_due = True

    def nodes_changed(self) -> None:
        self.compress_due = True

    def _order(self, job: Job) -> tuple[float, int]:
        return (self.reservation[job], job.id)

    def select(self, now: float, free: int, running: Running) -> list[Job]:
        profile = self._profile
        if self.queue and self.reservation[self.queue[0]] < now:
            profile = None  # a pass came late (the engine never does this): re-plan from now
        if profile is None:
            profile = self._profile = AvailabilityProfile(now, free, running)
            if self.queue:
                self._compressions += 1
                for job in self.queue:  # already in reservation order
                    self.reservation[job] = profile.place(job.size, job.estimate)
                self.queue.sort(key=self._order)
        else:
            profile.advance(now)
        for job in self._arrived:
            start = profile.place(job.size, job.estimate)
            self.reservation[job] = start
            self.promised[job.id] = start
            insort(self.queue, job, key=self._order)
        self._arrived.clear()
        due = 0
        for job in self.queue:
            if self.reservation[job] > now:
                break
            due += 1
        started = self.queue[:due]  # a prefix: allocate() dequeues it
        for job in started:
            del self.reservation[job]
        return started

    def platform_order(self, now: float, free: int, running: Running) -> list[Job]:
        """Every waiting job by its current reservation, new arrivals last (by arrival)."""
        self.queue.extend(self._arrived)
        self._arrived.clear()
        reservation = self.reservation
        self.queue.sort(key=lambda job: (reservation.get(job, math.inf), job.id))
        return list(self.queue)

    def stats(self) -> dict[str, Any]:
        return {"compressions": self._compressions}
