"""CREASY: EASY backfilling with a user-aware priority (criticality + seniority).

    priority(j)    = α · criticality(j) + seniority(j)
    criticality(j) = 0.04 / (0.05 · R(j) + 1)²      (|d p_cont / dr|, users.md §3)
    seniority(j)   = minutes job j has waited so far
    R(j)           = waited so far + estimate, in minutes

A job whose response is still short is critical: delaying it is most likely to end its owner's
session. Criticality is at most 0.04 while seniority grows without bound, so every job
eventually has the highest priority and EASY's guarantee against starvation holds for every α.
α = 0 is exactly EASY.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, TypeVar, overload

import numpy as np

from sitesim.engine.job import Job
from sitesim.engine.resources import Resources
from sitesim.errors import require

from .queue_order import EASY, ArrivalColumns

Minutes = TypeVar("Minutes", float, np.ndarray)


def priority(alpha: float, waited: float | Minutes, estimate: Minutes) -> Minutes:
    """CREASY's priority, α · criticality(waited + estimate) + waited (minutes), of one job or
    of arrays of jobs: the same arithmetic, so a long queue (NumPy) and a short one (Python)
    are ordered alike. (The formula's one home; one call a job.)"""
    root = 0.05 * (waited + estimate) + 1.0
    return alpha * (0.04 / (root * root)) + waited


def criticality(response_minutes: Minutes) -> Minutes:
    """|d p_cont / dr| of p_cont(r) = 0.8 / (0.05 r + 1), r in minutes (a number or an array):
    :func:`priority`'s criticality term alone (α = 1, nothing waited yet; exact)."""
    return priority(1.0, 0.0, response_minutes)


#: Queues up to this length are ordered in plain Python; longer ones with NumPy.
SHORT_QUEUE = 16


class CREASY(EASY):
    """EASY with priority α · criticality + seniority, recomputed at every pass.

    The waiting jobs' submit times, estimates, sizes and ids are kept beside EASY's queue list
    (:class:`~sitesim.schedulers.queue_order.ArrivalColumns`). Long queues are handled in
    NumPy: all priorities come from one vectorized expression, and the machine is given the
    sizes and estimates in that order, so that on processors only the jobs that pass EASY's
    backfilling test with the pass's initial free and extra processors (a necessary condition,
    since both only shrink) are visited one by one. Short queues are sorted in plain Python,
    which is faster there. Either way the rules are EASY's
    (:meth:`~sitesim.engine.resources.Resources.backfill`).

    Args:
        alpha: weight of criticality against seniority (minutes), ``alpha >= 0``.
    """

    name = "CREASY"
    skip_idle_passes = True  # (select returns at once)

    def __init__(self, alpha: float = 6000.0) -> None:
        require(alpha >= 0, f"alpha must be >= 0, got {alpha}")
        super().__init__(priority=self.job_priority)
        self.alpha = float(alpha)
        self.waiting = ArrivalColumns()

    def job_priority(self, job: Job, now: float) -> float:
        """α · criticality(R) + seniority, in minutes (:func:`priority`)."""
        return priority(self.alpha, (now - job.submit) / 60.0, job.estimate / 60.0)

    def ordered(self, now: float) -> list[Job]:
        """The waiting jobs by priority, highest first, ties by arrival: the order of a short
        queue's pass."""
        queue = self.queue
        if len(queue) < 2:
            return queue  # (mostly one job, on a machine with room)
        alpha = self.alpha
        keyed = [
            (-priority(alpha, (now - job.submit) / 60.0, job.estimate / 60.0), job.id, job)
            for job in queue
        ]
        keyed.sort()  # (ids differ: jobs themselves are never compared)
        return [entry[2] for entry in keyed]

    def priorities(self, now: float) -> np.ndarray:
        """:meth:`job_priority` of every waiting job, in arrival order."""
        w = self.waiting
        waited = (now - w.column("submit")) / 60.0
        return priority(self.alpha, waited, w.column("estimate") / 60.0)

    def submit(self, job: Job, now: float) -> None:
        self.queue.append(job)
        self.waiting.append(job)

    def _order(self, now: float) -> np.ndarray:
        """Queue positions by priority, highest first, ties by arrival."""
        return np.lexsort((self.waiting.column("id"), -self.priorities(now)))

    def select(self, now: float, resources: Resources) -> list[Job]:
        queue = self.queue
        if not resources.free or not queue:
            return []
        if len(queue) <= SHORT_QUEUE:
            return EASY.select(self, now, resources)  # EASY's pass, on ordered()
        order = self._order(now)
        jobs = _InOrder(queue, order.tolist())
        started: list[Job] = []
        first = resources.start_prefix(jobs, started)
        if first < len(queue) and resources.free:
            size, estimate = self.waiting.arrays()
            size, estimate = size[order], estimate[order]
            reserved = resources.backfill(jobs, first, started, size=size, estimate=estimate)
            if reserved:
                self.reservation = reserved[0]
        return started

    def dequeue(self, started: list[Job]) -> None:
        self.waiting.remove(self.queue, started)

    def params(self) -> dict[str, Any]:
        return {"alpha": self.alpha}


class _InOrder(Sequence[Job]):
    """The waiting jobs in a pass's order, read through their positions in the queue (a long
    queue's pass looks at a few of them only)."""

    __slots__ = ("_order", "_queue")

    def __init__(self, queue: list[Job], order: list[int]) -> None:
        self._queue, self._order = queue, order

    def __len__(self) -> int:
        return len(self._order)

    @overload
    def __getitem__(self, k: int) -> Job: ...
    @overload
    def __getitem__(self, k: slice) -> list[Job]: ...
    def __getitem__(self, k: int | slice) -> Job | list[Job]:
        if isinstance(k, slice):
            return list(map(self._queue.__getitem__, self._order[k]))
        return self._queue[self._order[k]]

    def __iter__(self) -> Iterator[Job]:
        return map(self._queue.__getitem__, self._order)
