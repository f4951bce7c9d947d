"""Users' sessions and batches as a scheduler sees them, as jobs arrive and end.

A scheduler sees who submits what and when, and when jobs end; not the sessions of a user
model. The definitions of trace analysis (:mod:`sitesim.workload.activity`, users.md), applied
online: a job submitted before the same user's previous job ended (a negative think time)
joins that job's batch; one submitted at most :data:`~sitesim.workload.activity.
SESSION_THRESHOLD` (20 min) after it ended starts a new batch in the same session; later, a new
session. So an open replay and a site of complete users are seen alike, and a policy learned
on one reads the same features on the other.
"""

from __future__ import annotations

import math

import numpy as np

from sitesim.engine.job import Job
from sitesim.workload.activity import SESSION_THRESHOLD


class Sessions:
    """Each waiting or running job's session start and batch, and each batch's counts.

    Each batch (by index) has two counts (:meth:`table`): its jobs submitted so far, and
    those not ended yet (waiting or running: what its user still waits for).
    """

    def __init__(self, threshold: float = SESSION_THRESHOLD) -> None:
        self.threshold = threshold
        self._counts = np.zeros((64, 2))
        self._batches = 0
        # user -> [id of the user's latest job, its end (NaN: not ended), session start, batch]
        self._users: dict[int, list[float]] = {}
        self._jobs: dict[int, tuple[float, int]] = {}  # job id -> (session start, batch)

    def submit(self, job: Job, now: float) -> tuple[float, int]:
        """A job arrived: its session's start and its batch's index. A job that waits again
        (requeued after a node failure) keeps its own."""
        known = self._jobs.get(job.id)
        if known is not None:
            return known
        state = self._users.get(job.user)
        if state is None:
            state = self._users[job.user] = [job.id, math.nan, now, self._new_batch()]
        else:
            end = state[1]
            if end == end:  # the latest job ended: not a batch any more (think time >= 0)
                if now - end > self.threshold:
                    state[2] = now  # a break: a new session
                state[3] = self._new_batch()
            state[0], state[1] = job.id, math.nan
        batch = int(state[3])
        counts = self._counts[batch]
        counts += 1.0
        known = self._jobs[job.id] = (state[2], batch)
        return known

    def ended(self, job: Job, now: float) -> None:
        """A job ended (or left the queue without starting)."""
        known = self._jobs.pop(job.id, None)
        if known is None:
            return
        self._counts[known[1], 1] -= 1.0
        state = self._users[job.user]
        if state[0] == job.id:
            state[1] = now

    def table(self) -> np.ndarray:
        """Per batch (row), its jobs submitted so far and those not ended yet."""
        return self._counts

    def _new_batch(self) -> int:
        if self._batches == len(self._counts):
            self._counts = np.concatenate([self._counts, np.zeros_like(self._counts)])
        self._batches += 1
        return self._batches - 1
