"""The scheduler contract: what the site asks of every policy, and when.

A scheduler is a plain object, testable without SimPy. The site tells it about arrivals
(:meth:`Scheduler.submit`) and terminations (:meth:`Scheduler.job_ended`), and once per instant,
after all of that instant's arrivals and terminations, asks it which waiting jobs to start
(:meth:`Scheduler.select`), handing it the :class:`~sitesim.engine.resources.Resources` of the
pass: the same questions on N processors and on a platform's nodes, so a policy is written once
and runs on both. The policy sees sizes, estimates, submit times, what the running jobs hold
until their estimated ends and the clock, never a job's actual runtime. The site checks the
answer as it starts the jobs: every job started must be waiting, and together they must fit.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from operator import is_
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    import numpy as np

    from sitesim.engine.job import Job
    from sitesim.engine.resources import Resources


class Observer(Protocol):
    """Something attached to a run that adds to its result (per-account or per-partition
    tables, a log of decisions): asked once, when the result is collected."""

    def collect(self, records: np.ndarray, window: tuple[float, float]) -> dict[str, Any]:
        """Fields of the :class:`~sitesim.engine.site.SiteResult` it fills, by name, from
        the run's records and its measurement window."""
        ...


class Scheduler(ABC):
    """Base class of all scheduling policies.

    Subclasses set :attr:`name` (the name the CLI knows them by) and implement :meth:`select`.
    The waiting jobs are kept in :attr:`queue`. The site calls :meth:`allocate`, which asks
    :meth:`select` for the jobs to start, checks them and takes them off the queue.
    """

    name: ClassVar[str] = ""
    #: True for policies that can starve a job (documented per scheduler).
    starves: ClassVar[bool] = False
    #: True if :meth:`select` does nothing when no core is free or no job waits (no state
    #: changes, no job started): the site then does not ask (half the passes of a lightly
    #: loaded site have nothing waiting). A subclass that defines its own :meth:`select` must
    #: say so again: otherwise this is reset to False for it.
    skip_idle_passes: ClassVar[bool] = False
    #: How the plan of a pass on nodes holds a reservation: ``exact`` (the cores, GPUs and
    #: memory it was given) or ``whole_nodes`` (its nodes whole, as Slurm's backfill plans).
    reservations: ClassVar[str] = "exact"
    #: True if it may want passes with no event (:meth:`next_pass`): a periodic cycle.
    timed: ClassVar[bool] = False
    #: The parameters that name a file: its label shows each by the file's name.
    file_parameters: ClassVar[tuple[str, ...]] = ()
    #: True unless :meth:`allocate` is overridden: a machine's pass may then ask
    #: :meth:`select` and :meth:`dequeue` itself, what :meth:`allocate` does (one call fewer a
    #: pass). Set for each subclass.
    plain_allocate: ClassVar[bool] = True
    #: Set by the site it serves: a scheduler keeps state, so it serves one run only.
    _served: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "select" in vars(cls) and "skip_idle_passes" not in vars(cls):
            cls.skip_idle_passes = False
        cls.plain_allocate = cls.allocate is Scheduler.allocate

    def __init__(self) -> None:
        self.queue: list[Job] = []

    def submit(self, job: Job, now: float) -> None:
        """A job arrived; it waits in the queue until :meth:`select` starts it."""
        self.queue.append(job)

    def job_ended(self, job: Job, now: float) -> None:  # noqa: B027 - optional hook
        """A running job ended (possibly earlier than its estimate)."""

    @abstractmethod
    def select(self, now: float, resources: Resources) -> list[Job]:
        """Return the waiting jobs to start now, in start order.

        A job the policy placed with ``resources.take_now(job, where)`` starts there; one it
        did not is started where it fits now. The policy need not remove the jobs from
        :attr:`queue`: :meth:`allocate` does.

        Args:
            now: the clock, in seconds.
            resources: what is free now and later, and the plan of this pass
                (:class:`~sitesim.engine.resources.Resources`).
        """

    def allocate(self, now: float, resources: Resources) -> list[Job]:
        """One allocation pass, as the site runs it: :meth:`select`, and the jobs it returns
        taken off the queue. The site checks them as it starts them (each must be waiting, and
        together they must fit): one that fails stops the run with a
        :class:`~sitesim.errors.SchedulerError` naming the scheduler, the time and the job."""
        started = self.select(now, resources)
        if started:
            self.dequeue(started)
        return started

    def dequeue(self, started: list[Job]) -> None:
        """Take started jobs off the queue, keeping the order of the others.

        Subclasses that keep more state per waiting job extend this. Jobs a policy already
        removed itself are simply not found.
        """
        queue = self.queue
        n = len(started)
        if n == 1 and queue and queue[0] is started[0]:
            del queue[0]  # the head started, the most common case
        elif n <= 8:
            for job in started:  # a search in C per job (jobs compare by identity)
                try:  # noqa: SIM105 - (suppress() would cost two calls a job)
                    queue.remove(job)
                except ValueError:  # (the policy removed it already)
                    pass
        elif len(queue) >= n and queue[n - 1] is started[-1] and all(map(is_, queue, started)):
            del queue[:n]  # the first n started, in order (FCFS after a burst of ends)
        else:
            gone = set(started)
            self.queue = [job for job in queue if job not in gone]

    def withdraw(self, jobs: list[Job]) -> None:
        """Waiting jobs leave without starting (cancelled by the site): forget them.

        Subclasses that keep more state per waiting job extend this.
        """
        self.dequeue(jobs)

    def nodes_changed(self) -> None:  # noqa: B027 - optional hook
        """Nodes went down or came back: forget what was planned on them."""

    def on_site(self, machine: Any) -> None:  # noqa: B027 - optional hook
        """Told once, before the first job, the machine it schedules: ``machine.procs``
        processors (or cores), and ``machine.platform``, its nodes and partitions (None on
        processors)."""

    def admit(self, job: Job) -> str | None:
        """Asked before a submission is accepted: a reason to refuse it (counted by the site
        under that reason), or None to accept it (the default)."""
        return None

    def next_pass(self, now: float) -> float:
        """For a :attr:`timed` scheduler, asked after each pass: when it wants the next pass
        even if no job arrives or ends (inf: none)."""
        return math.inf

    def use_seed(self, seed: int) -> None:
        """Called with the run's seed before a configured run; a scheduler that draws random
        numbers derives its stream from it, so that replications differ (none by default)."""
        del seed  # the deterministic schedulers draw nothing

    def use_clock(self, unix_time: float) -> None:
        """Called before a replay with the Unix time of the run's time 0 (the trace's
        ``UnixStartTime``) when the trace gives one: a scheduler whose rules follow the wall
        clock takes it (none by default)."""
        del unix_time

    def observers(self) -> list[Observer]:
        """What it adds to the run's result (per-account tables, its decisions): none by
        default."""
        return []

    def params(self) -> dict[str, Any]:
        """The scheduler's parameters, stored with every result."""
        return {}

    @property
    def describable(self) -> bool:
        """True when its name and :meth:`params` rebuild it (nothing like a function inside),
        so that a run configuration can describe it (if the name is registered)."""
        return True

    def stats(self) -> dict[str, Any]:
        """Scheduler-specific counters reported with the result (empty by default)."""
        return {}

    @property
    def label(self) -> str:
        """Its name with its parameters (:func:`scheduler_label`)."""
        return scheduler_label(
            self.name or type(self).__name__, self.params(), self.file_parameters
        )

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({args})"


def scheduler_label(name: str, params: dict[str, Any], files: tuple[str, ...] = ()) -> str:
    """A scheduler's name with its parameters, e.g. ``CREASY alpha=6000``: numbers exactly
    (``1440.0`` as ``1440``), a parameter that names a file (one of ``files``, the scheduler's
    :attr:`Scheduler.file_parameters`) by the file's name, ``SLURM conf=slurm.conf``."""
    return name + "".join(
        f" {k}={_shown(v)}" if k not in files else f" {k}={PurePath(str(v)).name}"
        for k, v in params.items()
    )


def _shown(value: Any) -> str:
    """A parameter's value in a label: numbers exactly, without a needless ``.0``."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)
