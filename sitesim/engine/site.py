"""The site: one SimPy environment, one machine, one scheduler and the user processes.

Same-instant ordering (a promise every test relies on):

1. Arrivals and terminations at time *t* are ordinary SimPy events. They only update state
   (queue, free processors) and request an allocation pass.
2. The allocation pass runs when instant *t* has no event left: the site's event loop runs it
   as soon as the next pending event is later than *t* (as an event of priority below every
   SimPy priority would run). So it runs once, *after* every arrival and termination of
   instant *t* (including a user process that resumes on a completion at *t* and submits at
   once). Processors freed at *t* are therefore reused at *t*; a job ending at *t* and one
   starting at *t* never overlap, as job intervals are half-open ``[start, end)``.
3. A job started by the pass with zero duration ends at *t* after the pass, which requests a
   second pass at *t*.
"""

from __future__ import annotations

import contextlib
import heapq
import math
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import simpy
from simpy.core import StopSimulation
from simpy.events import Event, Process

from sitesim.engine import event_queue
from sitesim.engine.collector import fewer_collections
from sitesim.engine.job import MIN_ESTIMATE, Job, JobState
from sitesim.engine.machine import Machine, OverAllocationError
from sitesim.engine.metrics import Summary, measure
from sitesim.engine.records import job_records
from sitesim.engine.scheduler import Observer, Scheduler
from sitesim.errors import ConfigError, InvalidJobError, JobStateError, SchedulerError

if TYPE_CHECKING:
    from sitesim.platform.boundary import PlatformRecords
    from sitesim.platform.description import Platform
    from sitesim.platform.machine import NodeMachine
    from sitesim.runs.config import RunConfig

ProcessGenerator = Generator[Event, Any, Any]

_INF = math.inf
#: Why the site refuses a submission (the keys of ``Site.rejected``).
AFTER_HORIZON = "submitted after the horizon"


class User(Protocol):
    """Anything that submits jobs: a process generator run on the site."""

    def run(self, site: Site) -> ProcessGenerator: ...


@dataclass(frozen=True)
class SiteResult:
    """What a run produced, as plain data.

    Attributes:
        procs: machine size.
        scheduler: the scheduler's name; ``scheduler_params`` its parameters.
        records: per-job records, a NumPy structured array (see :mod:`sitesim.engine.records`).
        summary: the summary metrics, one flat record (:class:`sitesim.engine.metrics.Summary`).
        per_user: per-user statistics (:func:`sitesim.engine.metrics.per_user`).
        scheduler_stats: counters of the engine (``passes``) and of the scheduler.
        rejected: submissions the site refused, by reason (impossible jobs in lenient mode,
            submissions after the horizon).
        config: the configuration that describes the run (None for a site built by hand).
        workload: facts about the workload a configuration resolved to (for a replay: lines
            skipped, offered loads, scale factor, ...).
        utility: the true utility function of each record that has one (record index -> the
            SWF extension text), for the output trace.
        platform: the platform of nodes the run used (None: ``procs`` processors).
        placement: on a platform, per record: partition, nodes, cores, GPUs and memory held,
            requeues (:mod:`sitesim.platform.boundary`); None otherwise.
        per_partition: on a platform, statistics per partition (None otherwise).
        platform_stats: on a platform, utilization of cores, GPUs and memory, availability,
            outages and their cost (:func:`sitesim.platform.boundary.platform_summary`).
        per_account: under a scheduler with accounts (SLURM), statistics per account
            (:mod:`sitesim.slurm.accounts`); None otherwise.
        decisions: under a scheduler that records them (SLURM), each started job's priority,
            its factors, its last pending reason and what started it; None otherwise.
    """

    procs: int
    scheduler: str
    scheduler_params: dict[str, Any]
    records: np.ndarray
    summary: Summary
    per_user: np.ndarray = field(repr=False)
    scheduler_stats: dict[str, Any] = field(default_factory=dict)
    rejected: dict[str, int] = field(default_factory=dict)
    config: RunConfig | None = None
    workload: dict[str, Any] = field(default_factory=dict)
    utility: dict[int, str] = field(default_factory=dict, repr=False)
    platform: Platform | None = field(default=None, repr=False)
    #: The first job refused for each reason that has a detail: ``(trace row, detail)``
    #: (trace row -1 for a job of no trace), for messages; not stored with the run.
    first_refusals: dict[str, tuple[int, str]] = field(default_factory=dict, repr=False)
    placement: PlatformRecords | None = field(default=None, repr=False)
    per_partition: np.ndarray | None = field(default=None, repr=False)
    platform_stats: dict[str, Any] = field(default_factory=dict)
    per_account: np.ndarray | None = field(default=None, repr=False)
    decisions: np.ndarray | None = field(default=None, repr=False)
    #: The scheduler's name with its parameters, e.g. ``CREASY alpha=6000``.
    label: str = ""


class Site:
    """A parallel machine, its scheduler and its users.

    The site is the boundary every job crosses. :meth:`submit` checks each job: a job the
    machine cannot run (size not in 1..procs, negative or unknown runtime, estimate below
    :data:`~sitesim.engine.job.MIN_ESTIMATE` or not finite) is rejected and counted by reason, or,
    with ``strict=True``, stops the run with :class:`~sitesim.errors.InvalidJobError`. Submissions
    at or after the horizon are refused; at the horizon every user process is interrupted, and
    the run ends once the machine has drained, so no user can keep a run going. A scheduler
    that leaves jobs waiting on an idle machine when no submission can come any more raises
    :class:`~sitesim.errors.SchedulerError`.

    With ``cancel_expired``, a waiting job whose stated utility function (``Job.bid``) can no
    longer earn anything, because even started now it would end after the function's last
    point, is cancelled at the next allocation pass: recorded as cancelled, its completion
    event fired, the scheduler told (:meth:`Scheduler.withdraw`).

    Args:
        procs: number of processors, or a :class:`~sitesim.platform.description.Platform` of
            nodes (one of N one-core nodes in one partition with no downtime runs as N
            processors): the site builds its machine from it.
        scheduler: the scheduling policy: a fresh one, as it keeps state (a scheduler that
            already served a site is refused with :class:`~sitesim.errors.SchedulerError`).
        strict: raise on an impossible job instead of rejecting and counting it.
        cancel_expired: cancel waiting jobs past their deadline (utility studies).
        keep_jobs: keep every job object in :attr:`jobs`. With False (an open replay, where
            nothing looks back at a job once it ended) ended jobs are turned into records a
            block at a time and their places in :attr:`jobs` hold None, so a long trace is
            never held as job objects at once; the result is the same.
        seed: the run's seed, for what the site itself draws (on a platform with partition
            shares, the partition of each job that names none).
        observers: what else to collect into the result
            (:class:`~sitesim.engine.scheduler.Observer`), besides the scheduler's own.
    """

    def __init__(
        self,
        procs: int | Platform,
        scheduler: Scheduler,
        *,
        strict: bool = False,
        cancel_expired: bool = False,
        keep_jobs: bool = True,
        seed: int = 0,
        observers: tuple[Observer, ...] = (),
    ) -> None:
        if scheduler._served:
            raise SchedulerError(
                f"this {scheduler.name or type(scheduler).__name__} scheduler object already "
                "served a site: a scheduler keeps state (its queue, reservations, counters), "
                "so a second run would start where the first ended; give each run a new one"
            )
        scheduler._served = True
        self.seed = seed
        self.env = event_queue.environment()
        self.scheduler = scheduler
        #: The machine: N processors (:class:`~sitesim.engine.machine.Machine`) or a
        #: platform's nodes (:class:`~sitesim.platform.machine.NodeMachine`).
        self.machine: Machine | NodeMachine
        if isinstance(procs, int):
            self.machine = Machine(self.env, procs, self._job_ended)
        else:
            self.machine = procs.build_machine(
                self.env,
                seed=seed,
                reservations=scheduler.reservations,
                on_end=self._job_ended,
                on_requeue=self._requeue,
                on_change=self._machine_changed,
            )
        #: The platform of nodes (None: plain processors).
        self.platform: Platform | None = self.machine.platform
        #: Why the machine cannot run a job beyond its size, if it can say (a platform).
        self._refuse = getattr(self.machine, "refuse", None)
        cls = type(scheduler)
        if cls.on_site is not Scheduler.on_site:
            scheduler.on_site(self.machine)
        self._observers = (*scheduler.observers(), *observers)
        #: The scheduler's admission check, if it has one.
        self._admit = scheduler.admit if cls.admit is not Scheduler.admit else None
        #: The scheduler's hook on a job's end, if it has one.
        self._told_end = scheduler.job_ended if cls.job_ended is not Scheduler.job_ended else None
        #: A timed scheduler's next wanted pass (:meth:`Scheduler.next_pass`), if one is set.
        self._wake_at = math.inf if cls.timed else None
        self._wake_callbacks: event_queue.Callbacks = [self._woken]
        self.strict = strict
        #: Cancel a waiting job once it can no longer end before its (stated) deadline.
        self.cancel_expired = cancel_expired
        self._expiry: list[tuple[float, int, Job]] = []  # (latest useful start, id, job)
        #: Users submit jobs only before the horizon; then the machine drains.
        self.horizon = math.inf
        #: Every accepted job, in submit order (``jobs[i].id == i + 1``); None for an ended
        #: job already turned into a record (``keep_jobs=False``).
        self.jobs: list[Job | None] = []
        self._retired: RecordBlocks | None = None if keep_jobs else RecordBlocks()
        #: Refused submissions by reason.
        self.rejected: dict[str, int] = {}
        self._first_refusals: dict[str, tuple[int, str]] = {}
        self.passes = 0
        self._users: list[Process] = []
        self._live_users = 0
        self._unfinished = 0  # accepted jobs not yet ended
        #: True once no submission can come any more (the horizon passed, or every user
        #: process ended). (An attribute, read by the users at every arrival: do not set it.)
        self.closed = False
        self._drained = self.env.event()  # closed and every job ended: the run is over
        self._resumed = False  # run before (advance, or a run a Decision stopped): a later part
        self._drained.callbacks.append(StopSimulation.callback)
        #: An allocation pass is due at this instant: the event loop
        #: (:meth:`~sitesim.engine.event_queue.Environment.run_instants`) runs it once the instant's
        #: other events are done.
        self.pass_due = False

    @property
    def now(self) -> float:
        return float(self.env.now)

    # -- what users call --------------------------------------------------------------------
    def add_user(self, user: User) -> None:
        """Start a user process."""
        process = self.env.process(user.run(self))
        process.callbacks.append(self._user_ended)
        self._users.append(process)
        self._live_users += 1

    def submit(self, job: Job) -> bool:
        """Submit ``job`` now; True if accepted.

        An accepted job gets the next id and joins the scheduler's queue. A refused one is
        marked REJECTED and counted in :attr:`rejected` (its completion event fires at once).

        Raises:
            InvalidJobError: in strict mode, for a job the machine cannot run.
        """
        size, runtime, estimate = job.size, job.runtime, job.estimate
        if not (
            1 <= size <= self.machine.procs
            and 0.0 <= runtime < _INF
            and MIN_ESTIMATE <= estimate < _INF
            and size == int(size)
        ):
            return self._reject(job, self._problem(job))
        if self._refuse is not None and (problem := self._refuse(job)) is not None:
            return self._reject(job, problem)
        if self.closed:
            return self._reject(job, AFTER_HORIZON)
        if self._admit is not None and (refusal := self._admit(job)) is not None:
            return self._reject(job, refusal)
        now = self.env.now
        job.mark_submitted(now)
        jobs = self.jobs
        jobs.append(job)
        job.id = len(jobs)
        self._unfinished += 1
        if self.cancel_expired and (bid := job.bid) is not None:
            heapq.heappush(self._expiry, (now + bid.deadline - estimate, job.id, job))
        self.scheduler.submit(job, now)
        self.pass_due = True
        return True

    def completion(self, job: Job) -> Event:
        """The event that fires (with the job as value) when ``job`` ends (at once for a
        rejected job)."""
        if job.done is None:
            job.done = self.env.event()
            if job.state is JobState.REJECTED:
                job.done.succeed(job)
        return job.done

    def cancel(self, job: Job) -> bool:
        """Cancel ``job`` if it is still waiting (a user who gives up); True if it was.

        The job leaves the scheduler's queue without starting and is recorded as cancelled
        (SWF status 5, ``jobs_cancelled`` in the summary); its completion event fires with the
        job as value. A job that already started or ended is left alone (False)::

            done = site.completion(job)
            yield done | env.timeout(3600)  # wait an hour at most
            if not done.triggered:
                site.cancel(job)
        """
        if job.state is not JobState.WAITING:
            return False
        self._withdraw([job])
        self.pass_due = True  # (the queue changed: a pass may start other jobs now)
        return True

    def _problem(self, job: Job) -> tuple[str, str]:
        """Why the machine cannot run ``job``: (reason, detail)."""
        size, runtime, estimate = job.size, job.runtime, job.estimate
        procs = self.machine.procs
        if not (isinstance(size, int | float) and size >= 1 and float(size).is_integer()):
            return "size below 1 or fractional", f"has size {size}; sizes are whole numbers >= 1"
        if size > procs:
            return "larger than the machine", f"needs {size} processors; the machine has {procs}"
        if not runtime >= 0 or runtime == math.inf:
            return "unknown or negative runtime", f"has runtime {runtime}; it must be >= 0 s"
        return (
            "estimate below 1 s or not finite",
            f"has estimate {estimate}; it must be a finite number >= {MIN_ESTIMATE:g} s",
        )

    def _reject(self, job: Job, problem: tuple[str, str] | str) -> bool:
        if isinstance(problem, tuple):
            reason, detail = problem
            if reason not in self._first_refusals:
                self._first_refusals[reason] = (job.trace_row, detail)
            if self.strict:
                raise InvalidJobError(
                    f"job of user {job.user} submitted at t = {self.env.now:g} s {detail}"
                )
        else:
            reason = problem
        self.rejected[reason] = self.rejected.get(reason, 0) + 1
        job.mark_rejected(self.env.now)
        if job.done is not None:
            job.done.succeed(job)
        return False

    # -- the scheduler ----------------------------------------------------------------------
    def allocation_pass(self) -> None:
        """One allocation pass: ask the scheduler which waiting jobs to start, start them.

        Raises:
            SchedulerError: the scheduler started a job that was not waiting (or started it
                twice), that was changed since its submission, or that does not fit.
        """
        self.pass_due = False
        self.passes += 1
        now = self.env.now
        if self._expiry and self._expiry[0][0] < now:
            self._cancel_expired()
        if self._wake_at is not None:
            self._wake_at = math.inf if self._wake_at <= now else self._wake_at
        machine = self.machine
        if (machine.free and self._unfinished > len(machine.running)) or not (
            self.scheduler.skip_idle_passes
        ):
            try:
                machine.run_pass(self.scheduler, now)
            except (JobStateError, OverAllocationError) as err:
                raise SchedulerError(f"scheduler {self.scheduler.name}: {err}") from None
        if self._wake_at is not None:
            self._wake(now)
        if self.closed:
            self._check_end()

    def _wake(self, now: float) -> None:
        """Give a timed scheduler the pass it wants next (one pending at a time, the
        earliest)."""
        at = self.scheduler.next_pass(now)
        if now < at < self._wake_at:  # type: ignore[operator]
            self._wake_at = at
            self.env.after(at - now, self._wake_callbacks, None)

    def _woken(self, _notice: Any) -> None:
        if not self._drained.triggered:
            self.pass_due = True

    def _cancel_expired(self) -> None:
        """Cancel the waiting jobs that can no longer end before their deadline."""
        now, expired = self.env.now, []
        while self._expiry and self._expiry[0][0] < now:
            job = heapq.heappop(self._expiry)[2]
            if job.state is JobState.WAITING:
                expired.append(job)
        if expired:
            self._withdraw(expired)

    def _withdraw(self, jobs: list[Job]) -> None:
        """Waiting ``jobs`` leave the queue without starting: cancelled, their completion
        events fired."""
        now = self.env.now
        self.scheduler.withdraw(jobs)
        for job in jobs:
            job.mark_cancelled(now)
            self._unfinished -= 1
            if job.done is not None:
                job.done.succeed(job)

    def _requeue(self, job: Job) -> None:
        """A job killed by a node failure waits again (its id and records kept)."""
        self.scheduler.submit(job, self.env.now)
        self.pass_due = True

    def _machine_changed(self) -> None:
        """Nodes went down or came back: the scheduler forgets its plans; a pass is due."""
        self.scheduler.nodes_changed()
        self.pass_due = True

    def _job_ended(self, job: Job) -> None:
        self._unfinished -= 1
        retired = self._retired
        if retired is not None:  # (gathered here, turned into records a block at a time)
            retired.ended.append(job)
            if len(retired.ended) >= retired.BLOCK:
                retired.retire_ended(self.jobs)
        if self._told_end is not None:
            self._told_end(job, self.env.now)
        self.pass_due = True
        if job.done is not None:
            job.done.succeed(job)

    # -- the end of a run -------------------------------------------------------------------
    def _user_ended(self, _event: Event) -> None:
        self._live_users -= 1
        if not self._live_users and self.horizon == math.inf:
            self._close()

    def _close(self, _event: Event | None = None) -> None:
        """No submission can come any more: stop the users, end once the machine drains."""
        self.closed = True
        for process in self._users:
            if process.is_alive:
                process.callbacks.append(_defuse_interrupt)
                process.interrupt("horizon")
        self._check_end()

    def _check_end(self) -> None:
        """After the last submission: end the run once drained, or find a stalled scheduler.
        With a pass pending at this instant, the pass checks instead."""
        if self.pass_due:
            return
        if not self._unfinished:
            if not self._drained.triggered:
                self._drained.succeed()
        elif not self.machine.running and not self._changes_to_come() and not self._woken_later():
            stalled = getattr(self.machine, "stalled", None)  # (a machine that can say why)
            if stalled is not None and (why := stalled(self._unfinished)) is not None:
                raise ConfigError(why)
            raise SchedulerError(
                f"scheduler {self.scheduler.name} leaves {self._unfinished} jobs waiting on an "
                "idle machine after the last submission: they would never start"
            )

    def _woken_later(self) -> bool:
        """A timed scheduler has asked for a pass to come (it waits on purpose: SLURM's main
        scheduler runs a few seconds after a submission, as slurmctld does)."""
        return self._wake_at is not None and self._wake_at < math.inf

    def _changes_to_come(self) -> bool:
        """On a platform: outages are still to come (jobs may wait for nodes to come back; a
        node down once none is to come is down for good)."""
        changes = getattr(self.machine, "changes_to_come", None)
        return changes is not None and bool(changes())

    # -- running ------------------------------------------------------------------------------
    def run(
        self,
        until: float | None = None,
        *,
        warmup: float = 0.0,
        progress: Callable[[float], None] | None = None,
        progress_step: float = 86_400.0,
    ) -> SiteResult:
        """Run the site and return its result.

        Users submit jobs only before ``until`` (the horizon); at the horizon they are stopped
        and the machine drains, so every accepted job runs to its end. Without a horizon the
        run ends when every user process has ended and the machine has drained.

        Args:
            until: the horizon in seconds, or ``None``.
            warmup: seconds at the start excluded from the measurement window.
            progress: called with the simulated time every ``progress_step`` seconds.
            progress_step: simulated seconds between progress calls.
        """
        env = self.env
        if until is not None:
            if not until > env.now:
                raise ValueError(f"the horizon must be after now ({env.now}), got {until}")
            self.horizon = float(until)
            env.timeout(self.horizon - env.now).callbacks.append(self._close)
        elif not self._users:
            self._close()
        # (the drained machine stops the run)
        with fewer_collections(not self._resumed), contextlib.suppress(StopSimulation):
            self._resumed = True
            env.run_instants(self, progress, progress_step)
        if self._unfinished:
            raise SchedulerError(
                f"the run ended with {self._unfinished} jobs that never ended under scheduler "
                f"{self.scheduler.name}"
            )
        return self.result(warmup=warmup)

    def advance(self, until: float) -> None:
        """Run the site up to time ``until`` and pause there, before the events of that instant
        (every earlier instant's allocation pass done): a tiny site can be stepped through,
        its queue (``site.scheduler.queue``), machine and users inspected between the steps::

            for t in range(3600, 86_400, 3600):
                site.advance(t)
                print(t, [job.id for job in site.scheduler.queue])
            result = site.run(until=86_400)  # then on to the horizon, and drain

        The users' horizon is set by :meth:`run` alone; a run that drains before ``until``
        (every user ended and every job with it) stops there.
        """
        env = self.env
        if not until > env.now:
            raise ValueError(f"advance needs a time after now ({env.now}), got {until}")
        pause = env.event()
        pause._ok, pause._value = True, None  # (triggered: the loop stops on it at ``until``)
        pause.callbacks.append(StopSimulation.callback)
        env.schedule(pause, simpy.events.URGENT, until - env.now)
        with fewer_collections(not self._resumed), contextlib.suppress(StopSimulation):
            self._resumed = True
            env.run_instants(self, None, math.inf)

    def release(self) -> None:
        """Let go of the run's users and jobs, once its result is made (by a caller that keeps
        only the result). The site, its machine and the users' processes refer to one another,
        so without this they would wait for the collector's next full scan, which costs about a
        second per gigabyte; their users and jobs are now freed at once (the memory of the run
        that writes its folder next, or of a sweep's next run)."""
        self._users.clear()
        self.jobs.clear()

    def result(self, *, warmup: float = 0.0) -> SiteResult:
        """Collect records and metrics of the jobs submitted so far."""
        if self._retired is None:
            records = job_records(self.jobs)  # type: ignore[arg-type]  # (no None kept)
        else:
            records = self._retired.records(self.jobs)
        if math.isfinite(self.horizon):
            window = (warmup, self.horizon)
        elif len(records):  # a replay: from the first to the last submission
            window = (float(records["submit"][0]) + warmup, float(records["submit"][-1]))
        else:
            window = (0.0, 0.0)
        skipped = sum(n for reason, n in self.rejected.items() if reason != AFTER_HORIZON)
        summary, users = measure(records, self.machine.procs, window, skipped=skipped)
        extra: dict[str, Any] = {}
        collect = getattr(self.machine, "collect", None)
        if collect is not None:
            extra.update(collect(records, window, self.jobs))
        for observer in self._observers:
            extra.update(observer.collect(records, window))
        return SiteResult(
            procs=self.machine.procs,
            scheduler=self.scheduler.name,
            scheduler_params=self.scheduler.params(),
            records=records,
            summary=summary,
            per_user=users,
            scheduler_stats={"passes": self.passes, **self.scheduler.stats()},
            rejected=dict(sorted(self.rejected.items())),
            utility=self._utility_texts(),
            platform=self.platform,
            first_refusals=dict(self._first_refusals),
            label=self.scheduler.label,
            **extra,
        )

    def _utility_texts(self) -> dict[int, str]:
        """The SWF extension text of every job that carries a utility function, by record."""
        texts = {} if self._retired is None else dict(self._retired.utility)
        for k, job in enumerate(self.jobs):
            if job is not None and job.utility is not None:
                texts[k] = job.utility.to_text()
        return dict(sorted(texts.items()))


class RecordBlocks:
    """Ended jobs turned into records a block at a time
    (:func:`~sitesim.engine.records.job_records`, the same rows), their places in the site's job
    list then cleared."""

    #: Ended jobs gathered before they are turned into records.
    BLOCK = 16_384

    def __init__(self) -> None:
        #: Ended jobs not yet turned into records.
        self.ended: list[Job] = []
        self._blocks: list[np.ndarray] = []  # records of retired jobs, in the order they ended
        #: The SWF extension text of each retired job with a utility function, by record.
        self.utility: dict[int, str] = {}

    def retire_ended(self, jobs: list[Job | None]) -> None:
        """Turn the ended jobs gathered so far into records (the site appends each ended job
        to :attr:`ended` and calls this when :data:`BLOCK` have gathered); ``jobs`` is the
        site's list of jobs."""
        self._retire(self.ended, jobs)
        self.ended = []

    def records(self, jobs: list[Job | None]) -> np.ndarray:
        """The records of every job in ``jobs``, retired or not, in order."""
        self.ended = []  # (still in ``jobs``: retired with the others)
        self._retire(list(filter(None, jobs)), jobs)  # (a job is never false)
        records = job_records([])
        records.resize(len(jobs), refcheck=False)
        while self._blocks:  # each block placed, then let go (never two copies of them all)
            block = self._blocks.pop()
            records[block["id"] - 1] = block
        self._blocks = [records]
        return records

    def _retire(self, block: list[Job], jobs: list[Job | None]) -> None:
        if not block:
            return
        self._blocks.append(job_records(block))
        for job in block:
            if job.utility is not None:
                self.utility[job.id - 1] = job.utility.to_text()
            jobs[job.id - 1] = None


def _defuse_interrupt(process: Event) -> None:
    """A user process stopped at the horizon by an interrupt it did not catch ends quietly."""
    if not process.ok and isinstance(process.value, simpy.Interrupt):
        process.defused = True
