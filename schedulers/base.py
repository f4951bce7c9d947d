"""The scheduler contract shared by every policy.

A scheduler is a plain object, testable without SimPy. The site tells it about arrivals
(:meth:`Scheduler.submit`) and terminations (:meth:`Scheduler.job_ended`), and once per instant,
after all of that instant's arrivals and terminations, asks it which waiting jobs to start now
(:meth:`Scheduler.select`). The policy sees sizes, estimates, submit times, the running jobs'
estimated ends and the clock, never a job's actual runtime.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any, ClassVar

from sitesim.job import Job
from sitesim.machine import Running


class Scheduler(ABC):
    """Base class of all scheduling policies.

    Subclasses set :attr:`name` (the name the CLI knows them by) and implement :meth:`select`.
    The waiting jobs are kept in :attr:`queue`; ``select`` removes the jobs it starts.
    """

    name: ClassVar[str] = ""
    #: True for policies that can starve a job (documented per scheduler).
    starves: ClassVar[bool] = False

    def __init__(self) -> None:
        self.queue: list[Job] = []

    def submit(self, job: Job, now: float) -> None:
        """A job arrived; it waits in the queue until :meth:`select` starts it."""
        self.queue.append(job)

    def job_ended(self, job: Job, now: float) -> None:  # noqa: B027 - optional hook
        """A running job ended (possibly earlier than its estimate)."""

    @abstractmethod
    def select(self, now: float, free: int, running: Running) -> list[Job]:
        """Return the waiting jobs to start now, in start order, removing them from the queue.

        Args:
            now: the clock, in seconds.
            free: processors free now.
            running: running jobs as ``(estimated end, id, size)``, ascending.
        """

    def params(self) -> dict[str, Any]:
        """The scheduler's parameters, stored with every result."""
        return {}

    def stats(self) -> dict[str, Any]:
        """Scheduler-specific counters reported with the result (empty by default)."""
        return {}

    def _remove(self, started: Iterable[Job]) -> None:
        """Drop started jobs from the queue, keeping the order of the others."""
        gone = set(started)
        self.queue = [job for job in self.queue if job not in gone]

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({args})"


def shadow_time(need: int, free: int, running: Running) -> tuple[float, int]:
    """When will ``need`` processors be free, and how many beyond ``need`` are free then?

    ``free`` processors are free now; each running job returns its processors at its estimated
    end. Returns ``(shadow time, extra processors)``. ``need`` must not exceed the machine.
    """
    avail = free
    for end, _, size in running:
        avail += size
        if avail >= need:
            return end, avail - need
    raise RuntimeError(f"{need} processors never become free: the job is larger than the machine")
