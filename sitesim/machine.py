"""The machine: N identical processors, space slicing, no preemption, no time sharing."""

from __future__ import annotations

from array import array
from bisect import bisect_left, insort
from collections.abc import Callable
from heapq import heappush
from typing import Any, TypeAlias

import numpy as np
import simpy
from simpy.events import NORMAL

from sitesim import event_queue
from sitesim.errors import require
from sitesim.event_queue import Notice
from sitesim.job import Job, JobState

#: The running jobs as schedulers see them: ``(estimated end, job id, size)`` tuples in
#: ascending order of estimated end (ties by id). A policy reads it; only the machine changes it.
Running: TypeAlias = list[tuple[float, int, int]]

# The transitions of Job.mark_started and Job.mark_ended, made here without the call.
_WAITING, _RUNNING = JobState.WAITING, JobState.RUNNING
_COMPLETED, _KILLED = JobState.COMPLETED, JobState.KILLED


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
        # the free processors after each start and end (typed arrays: 16 bytes a change,
        # however long the run); see busy()
        self._times = array("d", [0.0])
        self._frees = array("q", [procs])
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
        if job.state is not _WAITING:
            job.mark_started(now)  # (raises: the transition is checked here, not called)
        job.start, job.state = now, _RUNNING
        size, estimate, runtime = job.size, job.estimate, job.runtime
        self.free = free = self.free - size
        insort(self.running, (now + estimate, job.id, size))
        self._times.append(now)
        self._frees.append(free)
        duration = runtime if runtime <= estimate else estimate  # (Job.duration, inlined)
        queue = self._queue
        if queue is not None:  # (a timeout's place in the queue, without the timeout)
            end = Notice()
            end.callbacks, end._value = self._end_callbacks, job
            heappush(queue, (now + duration, NORMAL, next(env._eid), end))
        else:
            env.timeout(duration, job).callbacks.append(self._end)

    def _end(self, event: Notice | simpy.Event) -> None:
        job: Job = event._value
        now = self.env.now
        size = job.size
        running = self.running
        if job.state is not _RUNNING:
            job.mark_ended(now)  # (raises)
        estimate = job.estimate
        job.end, job.state = now, _KILLED if job.runtime > estimate else _COMPLETED
        del running[bisect_left(running, (job.start + estimate, job.id, size))]
        self.free = free = self.free + size
        self._times.append(now)
        self._frees.append(free)
        self._on_end(job)

    def busy(self) -> tuple[np.ndarray, np.ndarray]:
        """The busy processors over time, a step function: ``(times, levels)``, ``levels[k]``
        processors busy from ``times[k]`` on (one step per instant where a job started or
        ended, with the level after the instant's last change; the first step at 0)."""
        times = np.frombuffer(self._times, dtype=np.float64)
        last = np.append(times[1:] != times[:-1], True)  # the last change of each instant
        levels = self.procs - np.frombuffer(self._frees, dtype=np.int64)[last]
        return times[last].copy(), levels
