"""The machine: N identical processors, space slicing, no preemption, no time sharing."""

from __future__ import annotations

from array import array
from bisect import bisect_left, insort
from collections.abc import Callable
from heapq import heappush
from typing import Any, TypeAlias

import simpy
from simpy.events import NORMAL

from sitesim import event_queue
from sitesim.errors import require
from sitesim.event_queue import Notice
from sitesim.job import Job

#: The running jobs as schedulers see them: ``(estimated end, job id, size)`` tuples in
#: ascending order of estimated end (ties by id). A policy reads it; only the machine changes it.
Running: TypeAlias = list[tuple[float, int, int]]


class Machine:
    """N processors shared by rigid jobs.

    Starting a job takes ``size`` processors for the job's duration (its runtime, cut at its
    estimate) and calls ``on_end(job)`` when it ends. The machine keeps the running jobs sorted
    by *estimated* end (what backfilling needs) and the busy-processor level over time.
    """

    def __init__(self, env: simpy.Environment, procs: int, on_end: Callable[[Job], None]) -> None:
        require(
            isinstance(procs, int) and procs >= 1, f"procs must be an integer >= 1, got {procs!r}"
        )
        self.env = env
        self.procs = procs
        self.free = procs
        self.running: Running = []
        #: busy-processor level: ``busy_levels[k]`` processors from ``busy_times[k]`` on
        #: (typed arrays: 16 bytes a step, however long the run).
        self.busy_times = array("d", [0.0])
        self.busy_levels = array("q", [0])
        self._on_end = on_end
        self._end_callbacks: list[Callable[[Any], None]] = [self._end]
        self._queue: list[Any] | None = env._queue if event_queue.direct(env) else None

    def start(self, job: Job) -> None:
        """Start ``job`` now; it must fit in the free processors."""
        if job.size > self.free:
            raise RuntimeError(
                f"over-allocation: job {job.id} needs {job.size} processors, {self.free} are free"
            )
        env = self.env
        now = env.now
        job.mark_started(now)
        size = job.size
        self.free -= size
        insort(self.running, (now + job.estimate, job.id, size))
        self._log_level(now)
        queue = self._queue
        if queue is not None:  # (a timeout's place in the queue, without the timeout)
            end = Notice()
            end.callbacks, end._value = self._end_callbacks, job
            heappush(queue, (now + job.duration, NORMAL, next(env._eid), end))
        else:
            env.timeout(job.duration, job).callbacks.append(self._end)

    def _end(self, event: Notice | simpy.Event) -> None:
        job: Job = event._value
        now = self.env.now
        size = job.size
        running = self.running
        del running[bisect_left(running, (job.start + job.estimate, job.id, size))]
        self.free += size
        job.mark_ended(now)
        self._log_level(now)
        self._on_end(job)

    def _log_level(self, now: float) -> None:
        busy = self.procs - self.free
        if self.busy_times[-1] == now:
            self.busy_levels[-1] = busy
        else:
            self.busy_times.append(now)
            self.busy_levels.append(busy)
