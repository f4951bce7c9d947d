"""The resources of a pass on a platform's nodes: where each job fits, and the plan.

:class:`NodeResources` answers a scheduler's questions (:mod:`sitesim.engine.resources`) on the
nodes of a :class:`~sitesim.platform.machine.NodeMachine`; ``where`` is an
:class:`~sitesim.platform.placement.Alloc`: the nodes and what the job holds on each, placed by
:func:`~sitesim.platform.placement.place` on the nodes of the job's partition.

Until a question needs the future, what is free now is the machine's own arrays (copied at the
first start of the pass). The plan is a :class:`~sitesim.platform.profile.NodeProfile`, made when
the pass reserves a job or when a maintenance window begins before the longest estimate of the
jobs the pass looks at ends: a reservation holds the very resources it was given, and no job
starts now that would run into a reservation or a window on its nodes. With one partition on N
one-core nodes the decisions are those of N processors.

Two shortcuts keep a pass cheap without changing a decision. Demands that did not fit since
the last start are remembered with the shortest estimate tried (a longer one cannot fit
either: its window only holds more). And a pass that follows one which started nothing, with
nothing changed since but new jobs at the end of the order (no job ended, no node went down or
came back, the same jobs ahead in the same order), resumes it: every job it turned down would be
turned down again, so only the new jobs are looked at, against the same reservations.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from operator import is_
from typing import TYPE_CHECKING, Any

import numpy as np

from sitesim.engine.resources import Releases, Resources, Running
from sitesim.platform.placement import Alloc, Demand, Free, Partitions, place
from sitesim.platform.profile import NodeProfile

if TYPE_CHECKING:
    from sitesim.engine.job import Job
    from sitesim.platform.machine import NodeMachine


class NodeResources(Resources):
    """The resources of a pass on a platform's nodes, reservations held exactly (see the
    module docstring).

    Attributes:
        taken: where each job this pass started runs.
    """

    #: A plan kept from pass to pass reads the running jobs as they are now and what is free
    #: now (:meth:`NodePlan.advance`).
    carries_plans = True

    def __init__(self, machine: NodeMachine) -> None:
        self.machine = machine
        self.parts = machine.parts
        self.groups = machine.parts.group
        self.partitions = len(self.groups)
        self._kept: _Pass | None = None
        #: Per group of partitions, and per job, its earliest start as last found on the
        #: group's running jobs alone (:meth:`earliest`), brought up to date by the starts
        #: since (:meth:`started`).
        self._found: dict[int, dict[Job, _Found]] = {}
        #: The last plan :meth:`new_plan` made (the next one may reuse its answers).
        self._plan_made: NodePlan | None = None
        self.begin(0.0)

    def begin(self, now: float) -> None:
        """A new pass at ``now``."""
        self._last, self._kept = self._kept, None
        self.now = now
        self.free = self.machine.free
        self._part_free = self.machine.part_free.copy()
        self._part_idle = self.machine.part_idle.copy()
        self.taken: dict[Job, Alloc] = {}
        self._work: Free | None = None  # (the machine's arrays until the first start)
        self.profile: NodeProfile | None = None
        self._reach = now  # windows that begin before it are in the profile
        self._reach_of: Sequence[Job] | None = None
        self._ended: list[tuple[float, int, Alloc]] = []  # jobs started before the profile
        self._blocked: set[int] = set()
        #: Per group of partitions, the jobs that did not fit, first of their partitions,
        #: whose reservations are not placed yet (placed when a later job of the group could
        #: start now: only then do they matter).
        self._pending: dict[int, list[Job]] = {}
        self._failed: dict[Demand, float] = {}
        self._running: Running | None = None
        self._resumed: _Pass | None = None
        #: The groups of partitions this pass started or reserved a job on.
        self._touched: set[int] = set()

    @property
    def work(self) -> Free:
        """What is free now, after the jobs this pass started (without the plan)."""
        return self.machine.available if self._work is None else self._work

    @property
    def running(self) -> Running:
        if self._running is None:
            held = self.machine.held
            self._running = [(end, jid, held[jid]) for end, jid, _ in self.machine.running]
        return self._running

    def part(self, job: Job) -> int:
        return int(job.demand.part)

    # -- the four questions --------------------------------------------------------------------
    def fits_now(self, job: Job, duration: float | None = None) -> Alloc | None:
        demand = job.demand
        length = job.estimate if duration is None else duration
        tried = self._failed.get(demand)
        if tried is not None and length >= tried:
            return None
        if self._too_large(demand):
            self._failed[demand] = 0.0
            return None
        self._reach_to(self.now + length)
        profile = self.profile
        if profile is None:
            alloc = place(self.parts, demand, self.work)
        else:
            alloc = profile.fits_now(demand, length)
        if alloc is None:
            self._failed[demand] = length if profile is not None else 0.0
        return alloc

    def _too_large(self, demand: Demand) -> bool:
        """True if the cores free on the partition's nodes now (its idle nodes, for a whole-node
        partition of identical nodes) are too few for a demand of cores only: a screen, exact
        where placement needs nothing else, placement deciding otherwise."""
        if demand.nodes or demand.gpus or demand.memory:
            return False
        part = demand.part
        if not self.parts.exclusive[part]:
            return bool(self._part_free[part] < demand.cores)
        uniform = self.parts.uniform[part]
        return bool(uniform and self._part_idle[part] * uniform < demand.cores)

    def take_now(self, job: Job, where: Any) -> None:
        alloc: Alloc = where
        self._failed.clear()
        group = self.groups[job.demand.part]
        self._touched.add(group)
        self._found.get(group, {}).pop(job, None)
        self.taken[job] = alloc
        cores = int(alloc.cores.sum())
        self.free -= cores
        before = self.work.cores[alloc.nodes]
        self.machine.count(
            self._part_free, self._part_idle, alloc.nodes, before, before - alloc.cores, -cores
        )
        if self.profile is None:
            if self._work is None:
                self._work = self.machine.available.copy()
            self._work.take(alloc)
            self._ended.append((self.now + job.estimate, 1, alloc))
        else:
            self.profile.reserve(self.now, job.estimate, alloc)

    def free_now(self, where: Any) -> bool:
        return self.work.holds(where)

    def earliest(
        self,
        job: Job,
        duration: float | None = None,
        before: float = math.inf,
        releases: Releases | None = None,
    ) -> tuple[float, Any | None]:
        if releases is not None:
            raise ValueError("exact plans on nodes count resources back at estimated ends")
        length = job.estimate if duration is None else duration
        self._reach_to(self.now + length)
        plan = self._plan()
        version = self._untouched(job, length)
        if version is not None:
            found = self._found.get(self.groups[job.demand.part], {}).get(job)
            if found is not None:
                where = found.answer(version, plan)
                if where is not None:
                    plan.expect(found.start, where, found.state.on(where.nodes))
                    return found.start, where
        start, where = plan.earliest(job.demand, length)
        if version is not None and where is not None:
            kept = plan.state_found(start, where)
            if kept is not None:
                found_in = self._found.setdefault(self.groups[job.demand.part], {})
                if len(found_in) > 64:  # (jobs gone long ago)
                    found_in.clear()
                found_in[job] = _Found(job, version, start, where, *kept)
        return start, where

    def started(self, alloc: Alloc, end: float) -> None:
        """The machine started a job on ``alloc`` until ``end`` (estimated): the starts found
        before on its group take it into account (:class:`_Found`)."""
        for found in self._found_on(alloc):
            found.started(alloc, end)

    def ended(self, alloc: Alloc, end: float) -> None:
        """A job that held ``alloc`` until ``end`` (estimated) ended or was killed: the starts
        found before on its group take it into account (:class:`_Found`)."""
        for found in self._found_on(alloc):
            found.ended(alloc, end, self.parts)

    def _found_on(self, alloc: Alloc) -> Iterable[_Found]:
        """The starts found before on the group of ``alloc``'s nodes."""
        found_in = self._found and self._found.get(int(self.parts.node_group[alloc.nodes[0]]))
        return found_in.values() if found_in else ()

    def _untouched(self, job: Job, length: float) -> int | None:
        """The version of the running jobs of ``job``'s group of partitions
        (:meth:`Releases.version`) if its earliest start for its estimate is theirs alone,
        else None. It is for a demand of cores only (no node count, GPUs or memory), no node
        down and no maintenance window, and nothing this pass started or reserved on the group's
        nodes: the plan's answer then depends on what is free on them now and on their
        running jobs' rows (other groups' reservations leave their nodes alone), so it can
        be found again from the answer found before and the starts since (:class:`_Found`)."""
        demand = job.demand
        if length != job.estimate or demand.nodes or demand.gpus or demand.memory:
            return None
        machine, group = self.machine, self.groups[demand.part]
        if demand.nodeset or machine.windows or machine.nodes_down or group in self._touched:
            return None
        return machine.releases.version(group)

    def reserve(
        self,
        job: Job,
        start: float,
        where: Any,
        duration: float | None = None,
        closed: bool = False,
    ) -> None:
        if closed:
            raise ValueError("exact reservations on nodes are half-open: closed=False only")
        length = job.estimate if duration is None else duration
        self._plan().reserve(start, length, where)
        self._touched.add(self.groups[job.demand.part])
        self._failed.clear()  # (those tried before had no reservation to respect)

    def _plan(self) -> NodeProfile:
        if self.profile is None:
            self.profile = self._profile(self._own_work(), self._reach)
        return self.profile

    def _own_work(self) -> Free:
        if self._work is None:
            self._work = self.machine.available.copy()
        return self._work

    def _profile(self, base: Free, reach: float) -> NodeProfile:
        """The profile from ``base`` (what is free now; the profile changes it), the jobs
        started in this pass before it, the running jobs' estimated ends, and the maintenance
        windows that begin before ``reach``."""
        now = self.now
        changes = list(self._ended)
        for down, up, alloc in self.machine.windows:
            if down >= reach:
                break
            if up <= now:
                continue
            if down > now:
                changes.append((down, -1, alloc))
            changes.append((up, 1, alloc))  # (a window under way: its nodes come back then)
        return NodeProfile(self.parts, now, base, changes, self.machine.releases)

    def _reach_to(self, reach: float) -> None:
        """Questions up to ``reach`` are to be answered: the windows that begin before it must
        be in the plan."""
        if reach <= self._reach:
            return
        windows = self.machine.windows
        profile = self.profile
        if profile is not None:
            for down, up, alloc in windows:
                if down >= reach:
                    break
                if down >= self._reach:  # (not yet in the profile)
                    profile.reserve(down, up - down, alloc)
        self._reach = reach
        if profile is None and windows and windows[0][0] < reach:
            self.profile = self._profile(self._own_work(), reach)

    # -- plans kept from pass to pass --------------------------------------------------------------
    def new_plan(self) -> NodePlan:
        last = self._plan_made
        self._plan_made = NodePlan(
            self._profile(self.work.copy(), math.inf),
            self.machine,
            None if last is None else last._answers,
        )
        return self._plan_made

    # -- bounds ------------------------------------------------------------------------------------
    def could_start_now(self, job: Job) -> bool:
        return place(self.parts, job.demand, self.work) is not None

    def first_release(self) -> float:
        running = self.machine.running
        first = running[0][0] if running else math.inf
        for job in self.taken:
            first = min(first, self.now + job.estimate)
        for down, up, _ in self.machine.windows:
            if down <= self.now < up:
                first = min(first, up)
        return first

    def lower_bound(self, job: Job) -> float:
        demand = job.demand
        return max(self.now, self.machine.bound(demand.part, demand.cores))

    # -- bulk operations ---------------------------------------------------------------------------
    def start_prefix(self, jobs: Sequence[Job], started: list[Job]) -> int:
        if self._resume(jobs) is not None:
            return 0  # (the head did not fit then, and nothing changed since)
        return super().start_prefix(jobs, started)

    def start_fitting(
        self, jobs: Sequence[Job], first: int, started: list[Job], blocked: set[int] | None = None
    ) -> None:
        kept = self._resume(jobs) if first == 0 else None
        if kept is not None:
            first = len(kept.order)
            if blocked is not None:
                blocked |= kept.blocked
        taken = len(self.taken)
        Resources.start_fitting(self, jobs, first, started, blocked)
        self._keep(jobs, taken, blocked or set())

    def backfill(
        self,
        jobs: Sequence[Job],
        first: int,
        started: list[Job],
        size: np.ndarray | None = None,
        estimate: np.ndarray | None = None,
        appended_only: bool = False,
    ) -> list[tuple[Job, float]]:
        kept = self._resume(jobs) if first == 0 else None
        blocked = self._blocked
        pending = self._pending
        if kept is not None:
            first = len(kept.order)
            blocked |= kept.blocked
            pending.update((group, list(heads)) for group, heads in kept.pending.items())
        taken = len(self.taken)
        reserved: list[tuple[Job, float]] = []
        groups = self.groups
        for job in jobs[first:]:
            part = job.demand.part
            where = self.fits_now(job)
            heads = pending.get(groups[part])
            if where is not None and heads:  # (the reservations it must stay clear of, first)
                for head in heads:
                    start, at = self.earliest(head)
                    if at is not None:
                        self.reserve(head, start, at)
                        reserved.append((head, start))
                heads.clear()
                where = self.fits_now(job)
            if where is not None:
                self.take_now(job, where)
                started.append(job)
            elif part not in blocked:
                blocked.add(part)
                pending.setdefault(groups[part], []).append(job)
        self._keep(jobs, taken, blocked)
        return reserved

    def _resume(self, jobs: Sequence[Job]) -> _Pass | None:
        """Prepare to look at ``jobs`` (questions up to the longest estimate among them),
        resuming the last pass if it started nothing and this one can (see the module
        docstring): its plan and what it found become this pass's."""
        if jobs is self._reach_of:
            return self._resumed
        self._reach_of = jobs
        reach = self.now + max((job.estimate for job in jobs), default=0.0)
        kept, self._last = self._last, None
        if (
            kept is None
            or self.taken
            or self.profile is not None
            or not kept.resumes(jobs, reach, self.machine.changes)
        ):
            self._reach_to(reach)
            return None
        if kept.profile is not None:
            kept.profile.advance(self.now)
            self._touched.update(self.groups)  # (its reservations are in the plan)
        self.profile, self._work, self._ended = kept.profile, kept.work, kept.ended
        self._reach, self._failed = kept.reach, kept.failed
        self._resumed = kept
        return kept

    def _keep(self, jobs: Sequence[Job], taken: int, blocked: set[int]) -> None:
        """Keep this pass for the next to resume, if it started nothing."""
        if not self.taken and taken == 0:
            pending = {group: list(heads) for group, heads in self._pending.items() if heads}
            self._kept = _Pass(
                list(jobs), self._reach, self.machine.changes, self.profile, self._work,
                self._ended, set(blocked), self._failed, pending,
            )  # fmt: skip


class _Found:
    """A job's earliest start found on the running jobs of its group of partitions alone
    (:meth:`NodeResources.earliest`: a demand of cores only, with no reservation or window on
    the group's nodes), kept up to date as jobs start and end there, and found again without
    a search while that can be shown.

    Such a start is the first time the partition's level
    (:func:`~sitesim.platform.profile.level`: its free cores, or the cores of its idle nodes
    if it gives whole nodes) reaches the job's cores (it only rises from then on), placed
    there with the nodes free now last. Before it, the level falls short by at least what it
    lacked just before it (``short``):

    - a start only takes: no time fits that did not before; what is free at the start found
      is less what the job holds past it;
    - an end gives back from now: if the job was estimated to end before the start found,
      every time before that start holds no more than it did just before it (the end was
      counted from its estimate on); else every time before it may hold the job's nodes'
      level more, and what is free at the start found holds the job's resources too if it
      was estimated to end after it.

    While the level still falls short before the start (``short`` > 0) and placement finds
    the job's cores at it, the start is the same, and where is placement's answer there, as a
    search would give. A job killed where a node went down ends here; it is not asked while a
    node is down (:meth:`NodeResources._untouched`), and a node comes back with nothing
    held."""

    __slots__ = ("demand", "short", "start", "state", "version", "where")

    def __init__(
        self, job: Job, version: int, start: float, where: Alloc, state: Free, before: int
    ) -> None:
        self.demand = job.demand
        #: The version of the group's running jobs it holds for (:meth:`Releases.version`).
        self.version = version
        self.start = start
        #: Where it was placed (None: to be placed again since a start or an end).
        self.where: Alloc | None = where
        #: What is free at ``start`` on every node (its own copy).
        self.state = state
        #: At least how many cores the partition's level lacks at every time before ``start``.
        self.short = job.demand.cores - before

    def started(self, alloc: Alloc, end: float) -> None:
        """A job started on the group's nodes on ``alloc``, until ``end`` (estimated)."""
        self.version += 1
        self.where = None  # (the nodes free now changed: placement's order may)
        if end > self.start:
            self.state.take(alloc)

    def ended(self, alloc: Alloc, end: float, parts: Partitions) -> None:
        """A job that held ``alloc`` on the group's nodes until ``end`` (estimated) ended."""
        self.version += 1
        self.where = None
        if end >= self.start:
            part = self.demand.part
            whole = parts.exclusive[part]  # (then its nodes, idle again, add at most)
            gain = parts.platform.cores[alloc.nodes] if whole else alloc.cores
            self.short -= int(gain[parts.member[part][alloc.nodes]].sum())
            if end > self.start:
                self.state.give(alloc)

    def answer(self, version: int, plan: NodeProfile) -> Alloc | None:
        """Where the job starts at :attr:`start` on ``plan``, the running jobs of its group at
        ``version``; None if a search is needed."""
        if version != self.version or self.short <= 0 or self.start <= plan.now:
            return None
        if self.where is None:
            self.where = place(plan.parts, self.demand, self.state, plan.base.cores > 0)
        return self.where


class NodePlan:
    """A plan on nodes (:class:`~sitesim.engine.resources.Plan`): a
    :class:`~sitesim.platform.profile.NodeProfile` with every maintenance window, on
    ``machine``'s nodes.

    A compression (:meth:`move_up` for each waiting job in reservation order), once told
    what was freed since the last (:meth:`freed`), answers a job as the last plan's
    compression did, without a search, when that answer is its reservation still and nothing
    since has freed resources or moved a reservation on its nodes (what :meth:`freed` names,
    and the jobs moved or placed anew before it in this one): on its
    nodes the plan then holds at every time at least what it held when the job was last
    searched for (the running jobs end as foreseen; the reservations before it are where
    they were, or started there, or new ones), so no earlier start is free there now."""

    __slots__ = ("_answers", "_changed", "_last", "_previous", "machine", "profile")

    def __init__(
        self,
        profile: NodeProfile,
        machine: NodeMachine,
        last: dict[Job, tuple[float, Any]] | None = None,
    ) -> None:
        self.profile = profile
        self.machine = machine
        #: The last plan's compression's answers (kept once :meth:`freed` is told), and this
        #: one's, by job.
        self._last: dict[Job, tuple[float, Any]] = {}
        self._previous = {} if last is None else last
        self._answers: dict[Job, tuple[float, Any]] = {}
        #: Per node, True once something freed or moved there.
        self._changed = np.zeros(len(machine.platform.cores), dtype=bool)

    def freed(self, wheres: Sequence[Any | None]) -> None:
        self._last = self._previous
        for where in wheres:
            if where is None:
                self._changed[:] = True
            else:
                self._changed[where.nodes] = True

    def earliest(self, job: Job, duration: float | None = None) -> tuple[float, Any | None]:
        start, where = self.profile.earliest(
            job.demand, job.estimate if duration is None else duration
        )
        if where is not None:  # (a job placed anew: its reservation may take a later one's)
            self._changed[where.nodes] = True
        return start, where

    def reserve(self, job: Job, start: float, where: Any, duration: float | None = None) -> None:
        self.profile.reserve(start, job.estimate if duration is None else duration, where)

    def place(self, job: Job) -> tuple[float, Any | None]:
        start, where = self.profile.earliest(job.demand, job.estimate)
        if where is not None:
            self.profile.reserve(start, job.estimate, where)
        return start, where

    def move_up(self, job: Job, start: float, where: Any) -> tuple[float, Any]:
        last = self._last.get(job)
        if (
            last is not None
            and last[0] == start
            and last[1] is where
            and not np.count_nonzero(self._changed[where.nodes])
        ):
            answer = last  # (see the class docstring)
        else:
            moved = self.profile.earliest_on(where, job.estimate, start)
            answer = self.earliest(job) if moved is None else (moved, where)
            if answer[0] != start or answer[1] is not where:  # (its old one is free now)
                self._changed[where.nodes] = True
        self._answers[job] = answer
        return answer

    def advance(self, now: float) -> None:
        self.profile.advance(now, self.machine.available.copy())


class _Pass:
    """What a pass that started nothing leaves for the next one to resume."""

    __slots__ = (
        "blocked", "changes", "ended", "failed", "order", "pending", "profile", "reach", "work",
    )  # fmt: skip

    def __init__(
        self,
        order: list[Job],
        reach: float,
        changes: int,
        profile: NodeProfile | None,
        work: Free | None,
        ended: list[tuple[float, int, Alloc]],
        blocked: set[int],
        failed: dict[Demand, float],
        pending: dict[int, list[Job]],
    ) -> None:
        self.order, self.reach, self.changes = order, reach, changes
        self.profile, self.work, self.ended = profile, work, ended
        self.blocked, self.failed, self.pending = blocked, failed, pending

    def resumes(self, order: Sequence[Job], reach: float, changes: int) -> bool:
        """True if the pass with ``order`` can resume this one."""
        kept = self.order
        n = len(kept)
        return (
            changes == self.changes
            and reach <= self.reach
            and len(order) >= n
            and all(map(is_, order[:n], kept))
        )
