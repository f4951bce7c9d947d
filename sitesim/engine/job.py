"""The job: a rigid parallel job as a small state machine.

A job is created by a user (or a trace), submitted to the site, started by the scheduler on the
machine, and ends when its runtime has passed, or is killed when its runtime exceeds its
estimate (as real resource managers do). Schedulers only ever look at ``size``, ``estimate``,
``submit`` and the clock, never at ``runtime``.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sitesim.errors import JobStateError

if TYPE_CHECKING:
    from simpy import Event

    from sitesim.models.utility import UtilityFunction


#: The smallest estimate (seconds). Planning schedulers need every job to occupy its
#: processors for some time; SWF counts in whole seconds. A zero *runtime* is fine.
MIN_ESTIMATE = 1.0


class JobState(enum.IntEnum):
    """Where a job is in its life. The legal transitions are
    CREATED → WAITING → RUNNING → COMPLETED | KILLED, WAITING → CANCELLED,
    CREATED → REJECTED (the site refused it: impossible, or submitted after the horizon), and
    on a platform whose nodes fail, RUNNING → WAITING (requeued) or RUNNING → FAILED."""

    CREATED = 0
    WAITING = 1
    RUNNING = 2
    COMPLETED = 3
    KILLED = 4
    CANCELLED = 5
    REJECTED = 6
    FAILED = 7


@dataclass(slots=True, eq=False)
class Job:
    """One rigid job.

    Attributes:
        size: processors the job needs for its whole run.
        runtime: actual runtime in seconds (hidden from schedulers).
        estimate: requested time in seconds (the only duration schedulers see).
        user: id of the submitting user.
        id: 1-based position in submit order, given by the site at submission.
        submit, start, end: times in seconds (NaN until they happen).
        session, batch: ids within the user's activity (-1 when not applicable).
        preceding: id of the job this one depended on (SWF field 17; -1 if none).
        think: think time in seconds after ``preceding`` ended (SWF field 18; NaN if none).
        priority: queue / priority level (higher is more urgent).
        trace_row: row of the SWF trace this job was replayed from (-1 if generated).
        done: completion event, created by whoever waits for the job (see ``Site.completion``).
        data: free slot for model extensions (a budget, ...).
        utility: the value the user attaches to the job's turnaround (the truth, for metrics).
        stated: the utility function the user states (what schedulers see; the truth if None).
        ask: what it asks for beyond its cores on a platform (a
            :class:`~sitesim.platform.placement.Request`; None: cores in the default partition).
        demand: the request resolved by the site on a platform
        (:class:`~sitesim.platform.placement.Demand`). alloc: where it runs on a platform, once
        started (:class:`~sitesim.platform.placement.Alloc`).
    """

    size: int
    runtime: float
    estimate: float
    user: int = 0
    id: int = 0
    submit: float = math.nan
    start: float = math.nan
    end: float = math.nan
    state: JobState = JobState.CREATED
    session: int = -1
    batch: int = -1
    preceding: int = -1
    think: float = math.nan
    priority: int = 0
    trace_row: int = -1
    done: Event | None = None
    data: Any = None
    utility: UtilityFunction | None = None
    stated: UtilityFunction | None = None
    ask: Any = None
    demand: Any = None
    alloc: Any = None

    #: Size, runtime and estimate as submitted: the site runs a job as it was submitted.
    _size: int = field(init=False, repr=False)
    _runtime: float = field(init=False, repr=False)
    _estimate: float = field(init=False, repr=False)
    #: The duration, fixed when the job starts.
    _duration: float = field(init=False, repr=False)

    # -- derived values -------------------------------------------------------------------
    @property
    def duration(self) -> float:
        """How long the job occupies its processors: its runtime, cut at its estimate (a job
        whose runtime exceeds its estimate is killed at its estimate, as real resource managers
        do; :func:`_duration`, the rule, followed by :attr:`killed`, the machine and the
        records)."""
        return _duration(self)

    @property
    def killed(self) -> bool:
        """True when the job's run is cut at its estimate (its runtime exceeds it)."""
        return self.duration < self.runtime

    @property
    def bid(self) -> UtilityFunction | None:
        """The utility function schedulers see: the stated one, else the true one."""
        return self.stated if self.stated is not None else self.utility

    @property
    def wait(self) -> float:
        return self.start - self.submit

    @property
    def response(self) -> float:
        return self.end - self.submit

    # -- transitions: the one place a job's state changes (the site and the machine call
    # them; each checks the state it leaves with one comparison, the message only on failure)
    def mark_submitted(self, now: float) -> None:
        """CREATED -> WAITING: the site accepted the job at ``now``."""
        if self.state is not _CREATED:
            self._refuse(now, JobState.CREATED, "submitted")
        self.submit = now
        self.state = _WAITING
        self._size, self._runtime, self._estimate = self.size, self.runtime, self.estimate

    def mark_started(self, now: float) -> float:
        """WAITING -> RUNNING at ``now``; returns the job's :attr:`duration`, which it keeps."""
        if self.state is not _WAITING:
            self._refuse(now, JobState.WAITING, "started")
        if (
            self.size != self._size
            or self.estimate != self._estimate
            or self.runtime != self._runtime
        ):
            self._changed(now)
        self.start = now
        self.state = _RUNNING
        self._duration = duration = _duration(self)  # (a plain call: a property costs 3 times)
        return duration

    def mark_ended(self, now: float) -> None:
        """RUNNING -> COMPLETED, or KILLED if its run was cut at its estimate."""
        if self.state is not _RUNNING:
            self._refuse(now, JobState.RUNNING, "ended")
        if self.size != self._size or self.estimate != self._estimate:  # (what the machine read)
            self._changed(now)
        self.end = now
        self.state = _KILLED if self._duration < self.runtime else _COMPLETED

    def mark_requeued(self, now: float) -> None:
        """RUNNING -> WAITING: its node failed and it waits to run again from the start."""
        if self.state is not _RUNNING:
            self._refuse(now, JobState.RUNNING, "requeued")
        self.start = math.nan
        self.state = _WAITING

    def mark_failed(self, now: float) -> None:
        """RUNNING -> FAILED: its node failed and it is not requeued."""
        if self.state is not _RUNNING:
            self._refuse(now, JobState.RUNNING, "failed")
        self.end = now
        self.state = JobState.FAILED

    def mark_cancelled(self, now: float) -> None:
        """WAITING -> CANCELLED: it leaves the queue without starting."""
        if self.state is not _WAITING:
            self._refuse(now, JobState.WAITING, "cancelled")
        self.end = now
        self.state = JobState.CANCELLED

    def mark_rejected(self, now: float) -> None:
        """CREATED -> REJECTED: the site refused it."""
        if self.state is not _CREATED:
            self._refuse(now, JobState.CREATED, "rejected")
        self.state = JobState.REJECTED

    def _refuse(self, now: float, state: JobState, action: str) -> None:
        raise JobStateError(
            f"at t = {now:g} s job {self.id} (user {self.user}) cannot be {action}: "
            + (
                "it was never submitted"
                if self.state is JobState.CREATED and state is JobState.WAITING
                else f"it is {self.state.name.lower()}, not {state.name.lower()}"
            )
        )

    def _changed(self, now: float) -> None:
        was = {"size": self._size, "runtime": self._runtime, "estimate": self._estimate}
        changes = ", ".join(
            f"{name} {getattr(self, name)!r} (submitted with {value!r})"
            for name, value in was.items()
            if getattr(self, name) != value
        )
        raise JobStateError(
            f"at t = {now:g} s job {self.id} (user {self.user}) has {changes}: a job runs as "
            "it was submitted, and neither a scheduler nor a user may change it afterwards"
        )


def _duration(job: Job) -> float:
    """The rule, here alone: a job runs its runtime, cut at its estimate."""
    return job.runtime if job.runtime <= job.estimate else job.estimate


# The states as module constants: a global lookup is cheaper than an enum attribute.
_CREATED, _WAITING, _RUNNING = JobState.CREATED, JobState.WAITING, JobState.RUNNING
_COMPLETED, _KILLED = JobState.COMPLETED, JobState.KILLED
