"""Simulated users: SimPy processes whose next job depends on how the last one was served.

A user works in sessions of batches (users.md §2–§3). A batch submits its jobs with
inter-submission gaps and completes when its last-submitted job ends; the user then thinks and
submits the next batch. Sessions and batches are generator methods run inside the user's
process (``yield from``): the same semantics as separate processes, without a process start
event per batch.

- :class:`StaticUser` (the simple model) is always active and never leaves: one endless session
  with short think times between batches.
- :class:`CompleteUser` (the enhanced model) adds session dynamics (continue with p_cont of the
  last response, otherwise take a break and start a new session) and activity cycles (outside
  the working window, sleep until the window opens, and start a new session there).

Every job records the job it depended on, the last-submitted job of the previous batch of the
same session, and the think time since that job's end (SWF fields 17 and 18).

A third kind, ``"synthetic"``, takes no profile and gets no feedback: the Poisson workload of
experiment 5 (:mod:`sitesim.models.synthetic`), spread over the users.
"""

from __future__ import annotations

import math
from collections.abc import Generator
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from simpy.events import Event

from sitesim.engine.job import Job
from sitesim.errors import require
from sitesim.workload.profile import WorkloadProfile

from .cycles import ActivityCycle, CycleShares
from .dynamics import PCONT_A, PCONT_B, SessionDynamics, check_pcont
from .streams import Streams, StreamTable, Transform, stream
from .submittal import Submittal
from .synthetic import SyntheticUser, SyntheticWorkload
from .utility import LeeSnavely
from .workpool import EstimateModel, Workpool

if TYPE_CHECKING:
    from sitesim.engine.site import Site, User

ProcessGenerator = Generator[Event, Any, Any]
UserKind = Literal["static", "complete", "synthetic"]
USER_KINDS = ("complete", "static", "synthetic")
SessionStarts = Literal["after_break", "scheduled", "clocked"]
SESSION_STARTS = ("after_break", "scheduled", "clocked")


@dataclass(frozen=True)
class UserModel:
    """Everything that defines the simulated users of a site-level run.

    Attributes:
        kind: ``"complete"`` (session dynamics and activity cycles), ``"static"``, or
            ``"synthetic"`` (the Poisson workload of experiment 5; of the settings below only
            ``estimates``, exact or factor, and ``synthetic`` apply to it).
        pcont_a, pcont_b: p_cont(r) = a / (b r + 1), r in minutes.
        cycles: shares of day and weekday workers, largest personal shift.
        estimates: how users estimate runtimes.
        correlated: draw runtimes conditioned on the size class.
        runtime_scale: a workload transform: every runtime drawn is multiplied by it ("what if
            our jobs were ten times shorter?"); estimates follow the scaled runtimes.
        max_batch_width: a workload transform: batches are at most this wide (None: as drawn).
        session_starts: when a complete user starts a session: ``"after_break"`` (the
            thesis' model and users.md §3: a break after the session's last job ended; the
            default). The other two are sensitivity options, **not the thesis' model**:
            ``"scheduled"`` (a break after the session's *first* submission, or at once when
            the session ended later) and ``"clocked"`` (a session starts at each window
            opening and then every ``start_gap_scale`` × a break, whatever the sessions
            already open do; docs/results/creasy.md, part 5).
        start_gap_scale: ``"clocked"`` only: the gap between two session starts is a break
            drawn from the profile times this.
        utility: give every job a Lee & Snavely utility function (None: no values).
        deadline_wait: the wait (seconds) its deadline is a multiple of; None draws it from the
            profile's recorded waits, per job.
        synthetic: the configuration and offered load of the synthetic workload.
    """

    kind: UserKind = "complete"
    pcont_a: float = PCONT_A
    pcont_b: float = PCONT_B
    cycles: CycleShares = field(default_factory=CycleShares)
    estimates: EstimateModel = field(default_factory=EstimateModel)
    correlated: bool = False
    runtime_scale: float = 1.0
    max_batch_width: int | None = None
    session_starts: SessionStarts = "after_break"
    start_gap_scale: float = 1.0
    utility: LeeSnavely | None = None
    deadline_wait: float | None = None
    synthetic: SyntheticWorkload = field(default_factory=SyntheticWorkload)

    def __post_init__(self) -> None:
        require(
            self.kind in USER_KINDS,
            f"user model must be 'complete', 'static' or 'synthetic', got {self.kind!r}",
        )
        check_pcont(self.pcont_a, self.pcont_b)
        require(
            self.session_starts in SESSION_STARTS,
            f"session starts must be 'after_break', 'scheduled' or 'clocked', "
            f"got {self.session_starts!r}",
        )
        require(
            math.isfinite(self.start_gap_scale) and self.start_gap_scale > 0,
            f"start gap scale must be > 0, got {self.start_gap_scale}",
        )
        require(
            self.start_gap_scale == 1.0 or self.session_starts == "clocked",
            f"a start gap scale ({self.start_gap_scale:g}) needs session starts 'clocked'",
        )
        require(
            math.isfinite(self.runtime_scale) and self.runtime_scale > 0,
            f"runtime scale must be > 0, got {self.runtime_scale}",
        )
        require(
            self.max_batch_width is None or self.max_batch_width >= 1,
            f"largest batch width must be >= 1 (or none), got {self.max_batch_width}",
        )
        if self.kind == "synthetic":
            self._check_synthetic()

    def _check_synthetic(self) -> None:
        """The workload settings the synthetic model cannot honour are refused, not ignored
        (the session-behaviour settings, like a static user's, simply do not apply)."""
        refused = (
            (self.estimates.kind == "ratio", "estimates = ratio (no profile ratios; use exact "
             "or factor:F)"),
            (self.correlated, "correlated = true (its classes set sizes and runtimes)"),
            (self.runtime_scale != 1.0, "a runtime_scale other than 1 (set the offered load)"),
            (self.max_batch_width is not None, "a max_batch_width (it submits no batches)"),
            (self.utility is not None, "utility = true (no profile waits to set deadlines)"),
        )  # fmt: skip
        for set_, what in refused:
            require(not set_, f"the synthetic model does not take {what}")

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["estimates"] = str(self.estimates)
        return data

    def users(self, count: int, profile: WorkloadProfile, procs: int, seed: int) -> list[User]:
        """Users 1..count of this model (the synthetic model does not use ``profile``).

        Their streams are one table (:class:`~sitesim.models.streams.StreamTable`): the first
        values of each purpose are drawn for all of them at once.
        """
        require(count >= 1, f"users must be >= 1, got {count}")
        if self.kind == "synthetic":
            ids = range(1, count + 1)
            return [self.user(uid, profile, procs, seed, users=count) for uid in ids]
        table = StreamTable(seed, range(1, count + 1), self.transforms(profile, procs))
        kind = CompleteUser if self.kind == "complete" else StaticUser
        return [kind(uid, profile, procs, seed, self, table.of(uid)) for uid in range(1, count + 1)]

    def transforms(self, profile: WorkloadProfile, procs: int) -> dict[str, Transform]:
        """The maps from uniforms to values of every stream of this model's users."""
        return {
            **Workpool.transforms(profile, procs, self.correlated, self.runtime_scale),
            **Submittal.transforms(profile),
            **SessionDynamics.transforms(profile),
        }

    def user(
        self, uid: int, profile: WorkloadProfile, procs: int, seed: int, *, users: int = 0
    ) -> User:
        """User ``uid`` (1-based) of this model, alone: the same user, with the same draws, as
        in :meth:`users` (every user draws from streams of its own id and the seed).

        With its first four arguments this is a user factory (``simulate(model=...)``), so a
        population can mix built-in users with users of one's own::

            def population(uid, profile, procs, seed):
                if uid % 3:
                    return MyUser(uid)
                return UserModel(kind="static").user(uid, profile, procs, seed)

        Args:
            uid: the user's id, >= 1.
            profile: the workload profile to draw jobs from (unused by the synthetic model).
            procs: machine size.
            seed: the run's root seed.
            users: the synthetic model only: how many users its Poisson workload is spread
                over (the population's size).
        """
        require(uid >= 1, f"user ids start at 1, got {uid}")
        if self.kind == "synthetic":
            require(
                users >= uid,
                f"a synthetic user needs users, the population's size (>= {uid}), got {users}",
            )
            return SyntheticUser(
                uid, self.synthetic, procs, seed, users=users, estimates=self.estimates
            )
        kind = CompleteUser if self.kind == "complete" else StaticUser
        streams = StreamTable.alone(seed, uid, self.transforms(profile, procs))
        return kind(uid, profile, procs, seed, self, streams)


class StaticUser:
    """Always active: an endless session of batches separated by short think times.

    ``streams``: the user's random streams (None: its own, as a user alone).
    """

    def __init__(
        self,
        uid: int,
        profile: WorkloadProfile,
        procs: int,
        seed: int,
        model: UserModel,
        streams: Streams | None = None,
    ) -> None:
        self.id = uid
        if streams is None:
            streams = StreamTable.alone(seed, uid, model.transforms(profile, procs))
        self.workpool = Workpool(
            profile, procs, seed, uid, correlated=model.correlated, estimates=model.estimates,
            runtime_scale=model.runtime_scale, streams=streams,
        )  # fmt: skip
        self.submittal = Submittal(
            profile, seed, uid, max_width=model.max_batch_width, streams=streams
        )
        self.valuer = (
            None
            if model.utility is None
            else Valuer(profile, seed, uid, model.utility, model.deadline_wait)
        )
        self.session = 0
        self.batch = 0
        self._batches_in_session = 0

    def run(self, site: Site) -> ProcessGenerator:
        """Submit batch after batch, thinking in between, until the horizon."""
        previous: Job | None = None
        while True:
            last = yield from self.submit_batch(site, previous)
            if last is None:
                return
            yield site.completion(last)
            yield site.env.timeout(self.submittal.think())
            previous = last

    def submit_batch(
        self, site: Site, previous: Job | None, session: int | None = None
    ) -> Generator[Event, Any, Job | None]:
        """Submit one batch; return its last-submitted job (None if the horizon has passed).

        Each job depends on ``previous``, the last-submitted job of the session's previous
        batch (None for a session's first batch). ``session``: the session's id (None: the
        user's current session).
        """
        env = site.env
        session = self.session if session is None else session
        last = None
        for k in range(self.submittal.width()):
            if k:
                yield env.timeout(self.submittal.gap())
            if env.now >= site.horizon:
                break
            size, runtime, estimate = self.workpool.next_shape()
            job = Job(size, runtime, estimate, user=self.id, session=session, batch=self.batch)
            job.ask = self.workpool.ask
            if self.valuer is not None:
                self.valuer.value(job)
            if previous is not None:
                job.preceding = previous.id
                job.think = env.now - previous.end
            site.submit(job)
            last = job
        self.batch += 1
        self._batches_in_session += 1
        return last

    def new_session(self) -> None:
        """The next batch starts a new session (unless the current one is still empty)."""
        if self._batches_in_session:
            self.session += 1
            self._batches_in_session = 0


class CompleteUser(StaticUser):
    """A user with session dynamics and activity cycles."""

    def __init__(
        self,
        uid: int,
        profile: WorkloadProfile,
        procs: int,
        seed: int,
        model: UserModel,
        streams: Streams | None = None,
    ) -> None:
        if streams is None:
            streams = StreamTable.alone(seed, uid, model.transforms(profile, procs))
        super().__init__(uid, profile, procs, seed, model, streams)
        self.dynamics = SessionDynamics(
            profile, seed, uid, model.pcont_a, model.pcont_b, streams=streams
        )
        cycle = streams.open("cycle")
        self.cycle = ActivityCycle.from_uniforms((cycle(), cycle(), cycle()), model.cycles)
        self.scheduled = model.session_starts == "scheduled"
        self.clocked = model.session_starts == "clocked"
        self.start_gap_scale = model.start_gap_scale

    def run(self, site: Site) -> ProcessGenerator:
        """Work in sessions inside the user's windows; continue or leave after each batch."""
        if self.clocked:
            return (yield from self.start_sessions(site))
        env = site.env
        previous: Job | None = None
        started = 0.0  # the session's first submission
        while True:
            if not self.cycle.in_window(env.now):
                yield env.timeout(self.cycle.next_open(env.now) - env.now)
                self.new_session()
                previous = None
            if previous is None:
                started = env.now
            last = yield from self.submit_batch(site, previous)
            if last is None:
                return
            yield site.completion(last)
            if not self.cycle.in_window(env.now):
                # the window rule (users.md §3): a completion outside the window ends the
                # session with no trial, think or break; the loop sleeps to the next opening
                previous = None
                continue
            if self.dynamics.continues(last.response):
                yield env.timeout(self.submittal.think())
                previous = last
            else:
                pause = self.dynamics.break_length()
                if self.scheduled:  # counted from the session's start
                    pause = max(0.0, started + pause - env.now)
                yield env.timeout(pause)
                self.new_session()
                previous = None

    def start_sessions(self, site: Site) -> ProcessGenerator:
        """Clocked session starts (a sensitivity option, not the thesis' model).

        A session starts at each window opening; the next starts ``start_gap_scale`` × a break
        drawn from the profile later (whole seconds, at least 1). A start that falls outside
        the window is dropped and the clock restarts at the next opening. Each session is a
        process of its own (:meth:`run_session`) and never waits for an earlier one, so the
        start times depend on the user's draws alone, not on the scheduler.
        """
        env = site.env
        while True:
            if not self.cycle.in_window(env.now):
                yield env.timeout(self.cycle.next_open(env.now) - env.now)
            if env.now >= site.horizon:
                return
            env.process(self.run_session(site, self.session))
            self.session += 1
            gap = self.dynamics.break_length() * self.start_gap_scale
            yield env.timeout(max(1.0, round(gap)))

    def run_session(self, site: Site, session: int) -> ProcessGenerator:
        """One clocked session: batches with a continue trial and a short think after each;
        it ends on an abort, when a batch ends outside the window, or when its next
        submission would fall outside the window."""
        env = site.env
        previous: Job | None = None
        while True:
            last = yield from self.submit_batch(site, previous, session)
            if last is None:
                return
            yield site.completion(last)
            if not self.cycle.in_window(env.now) or not self.dynamics.continues(last.response):
                return
            yield env.timeout(self.submittal.think())
            if not self.cycle.in_window(env.now):
                return
            previous = last


class Valuer:
    """Gives a user's jobs their utility functions (Lee & Snavely) and priority levels.

    Each job draws from the user's own "utility" stream in submission order: a priority level
    uniform over the generator's levels, a wait (the profile's recorded waits, or a constant)
    whose multiple is the deadline, then the function's value and decay. The k-th job of a user
    gets the same function under every scheduler.
    """

    def __init__(
        self,
        profile: WorkloadProfile,
        seed: int,
        user: int,
        generator: LeeSnavely,
        wait: float | None,
    ) -> None:
        self.rng = stream(seed, user, "utility")
        self.generator = generator
        self.waits = profile.waits
        self.wait = wait

    def value(self, job: Job) -> None:
        rng, levels = self.rng, self.generator.levels
        priority = int(rng.integers(levels))  # 0 is the highest
        u = rng.random(1)
        wait = self.wait if self.wait is not None else float(self.waits.from_uniform(u)[0])
        job.utility = self.generator.function(rng, priority, job.size, job.estimate, wait)
        job.priority = levels - 1 - priority  # sitesim's levels: higher first
