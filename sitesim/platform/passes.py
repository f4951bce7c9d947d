"""The allocation pass on a platform of nodes: which jobs start, and where.

Every scheduler states how it runs on a platform (``Scheduler.platform_mode``) and gives its
order of the waiting jobs (``Scheduler.platform_order``); the pass applies the policy to the
nodes each job may use, with reservations for concrete resources (:mod:`sitesim.platform.profile`):

- ``list`` (FCFS, SJF, LJF, SCDF): jobs start in order while they fit; the first job of a
  partition that does not fit blocks the jobs of its partition behind it (Slurm's main
  scheduler does the same per partition). With one partition this is the list scheduler.
- ``greedy`` (FirstPrice): every job that fits starts, in order.
- ``easy`` (EASY, Priority-FIFO, PRIO, CREASY, GA, ECON): in order, jobs start while they fit;
  the first job of each partition that does not fit is reserved at its earliest start, on
  concrete nodes; every later job starts if it fits now without touching a reservation for its
  whole estimate. With one partition this is EASY (on N one-core nodes, exactly).
- ``conservative``: every waiting job, in order of its current reservation (new arrivals
  last, by arrival), is placed at its earliest start; those placed now start. No job is ever
  placed later than its previous reservation (its old slot is still free when its turn comes),
  unless nodes went down.
- ``plan`` (PLAN, dynP): the scheduler's own planning, on the nodes (its planner is replaced by
  one that plans on the node profile); jobs planned now start where the plan put them.
- ``slurm`` (SLURM): the scheduler runs its own pass (``schedule(now, resources)``) on
  :class:`~sitesim.slurm.nodes.SlurmNodes`, what is free now and its backfill plan (whole nodes
  reserved, as Slurm's backfill reserves them).

No job starts if its estimate overlaps a maintenance window on its nodes: the windows are
reservations in the profile. Nodes down after a failure hold nothing, with no known return.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from operator import is_
from typing import TYPE_CHECKING, Any

import numpy as np

from sitesim.engine.job import Job
from sitesim.errors import SchedulerError
from sitesim.platform.placement import Alloc, Demand, place
from sitesim.platform.profile import NodeProfile
from sitesim.slurm.nodes import SlurmNodes, levels

if TYPE_CHECKING:
    from sitesim.platform.downtime import Outages
    from sitesim.platform.machine import NodeMachine
    from sitesim.schedulers.base import Scheduler

MODES = ("list", "greedy", "easy", "conservative", "plan", "slurm")


class NodePass:
    """Runs a scheduler's passes on a :class:`~sitesim.platform.machine.NodeMachine`.

    Args:
        machine: the nodes.
        scheduler: the policy (its ``platform_mode`` must be one of :data:`MODES`).
        maintenance: the maintenance windows (outages known in advance), or None.
    """

    def __init__(
        self, machine: NodeMachine, scheduler: Scheduler, maintenance: Outages | None = None
    ) -> None:
        mode = scheduler.platform_mode
        if mode not in MODES:
            raise SchedulerError(
                f"scheduler {scheduler.name or type(scheduler).__name__} cannot run on a "
                "platform of nodes (it sets no platform_mode); run it with --procs"
            )
        self.machine = machine
        self.scheduler = scheduler
        self.mode = mode
        self.parts = machine.parts
        self._windows = self._window_allocs(maintenance)
        #: Where PLAN and dynP planned each job: (job id, planned start) -> resources.
        self._planned: dict[tuple[int, float], Alloc] = {}
        self._reserved: dict[Job, tuple[float, Alloc]] = {}  # (conservative)
        self._kept: _Pass | None = None
        #: The SLURM plan's partition levels (:func:`sitesim.slurm.nodes.levels`), by
        #: partition, as of ``_changes`` (starts only take: an older level is still an upper
        #: bound until something ends or a node comes back).
        self._levels: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._bounds: dict[tuple[int, int], float] = {}
        self._levels_at = -1
        #: Counts what changes the machine (job ends, kills, outages): a kept pass is stale
        #: once it moved.
        self._changes = 0
        if mode == "plan":
            scheduler.planner = self._plan  # type: ignore[attr-defined]

    # -- the pass ----------------------------------------------------------------------------
    def run(self, now: float) -> list[tuple[Job, Alloc]]:
        """One pass: the jobs to start now, each with its allocation (taken off the queue)."""
        scheduler = self.scheduler
        if not scheduler.queue and self.mode != "conservative":  # (its arrivals wait apart)
            return []
        if self.mode == "plan":
            return self._planning(now)
        if self.mode == "slurm":
            started = scheduler.schedule(now, SlurmNodes(self, now))  # type: ignore[attr-defined]
            if started:
                scheduler.dequeue([job for job, _ in started])
            return started
        free, running = self.pool() if scheduler.platform_pool else (0, [])
        order = scheduler.platform_order(now, free, running)
        if self.mode == "conservative":
            started = self._conservative(now, order)
        else:
            started = self._in_order(now, order)
        if started:
            scheduler.dequeue([job for job, _ in started])
        return started

    def _in_order(self, now: float, order: Sequence[Job]) -> list[tuple[Job, Alloc]]:
        """The list, greedy and EASY passes.

        A pass that follows one which started nothing, with nothing changed since but new
        arrivals at the end of the order (no job ended, no node went down or came back, the
        same jobs ahead in the same order), resumes it: every job it turned down would be
        turned down again (nothing came back, and a later window only holds more), so only
        the new jobs are looked at, against the same reservations.
        """
        parts = self.parts
        mode = self.mode
        kept, self._kept = self._kept, None
        reach = now + max(job.estimate for job in order) if order else now
        if kept is not None and kept.resumes(order, reach, self._changes):
            profile, work, ended = kept.profile, kept.work, kept.ended
            blocked, failed, first = kept.blocked, kept.failed, len(kept.order)
            assert profile is not None
            profile.advance(now)
        else:
            work = self.machine.free.copy()
            profile = None
            if self._windows and self._windows[0][0] < reach:
                profile = self._profile(now, work, [], reach)
            ended = []  # releases of the jobs started so far
            blocked = set()  # partitions with a job that did not fit (list, easy)
            # demands that did not fit since the last start, with the shortest estimate tried
            # (a longer one cannot fit either: its window only holds more reservations)
            failed = {}
            first = 0
        started: list[tuple[Job, Alloc]] = []
        for job in order[first:] if first else order:
            demand = job.demand
            part = demand.part
            if part in blocked and mode == "list":
                continue
            tried = failed.get(demand)
            if tried is not None and job.estimate >= tried:
                alloc = None
            elif profile is None:
                alloc = place(parts, demand, work)
            else:
                alloc = profile.fits_now(demand, job.estimate)
            if alloc is None:
                failed[demand] = job.estimate if profile is not None else 0.0
            else:
                failed.clear()
                started.append((job, alloc))
                if profile is None:
                    work.take(alloc)
                    ended.append((now + job.estimate, 1, alloc))
                else:
                    profile.reserve(now, job.estimate, alloc)
                continue
            if mode == "greedy" or part in blocked:
                continue
            blocked.add(part)
            if mode == "easy":
                if profile is None:
                    profile = self._profile(now, work, ended, reach)
                start, where = profile.earliest(demand, job.estimate)
                if where is not None:
                    profile.reserve(start, job.estimate, where)
                    failed.clear()  # (those tried before had no reservation to respect)
                    self.scheduler.reservation = (job, start)  # type: ignore[attr-defined]
        if not started and profile is not None:
            self._kept = _Pass(
                list(order), reach, self._changes, profile, work, ended, blocked, failed
            )
        return started

    def _conservative(self, now: float, order: Sequence[Job]) -> list[tuple[Job, Alloc]]:
        """Every waiting job keeps its reservation (on the nodes it was given) until the
        schedule is compressed: then each, in order, moves to the earliest start at which
        the resources it holds are free (no later than its reservation: what the jobs before
        it hold only moved earlier on the same resources, so its slot is still free). New
        arrivals are placed at their earliest start anywhere in their partition. (A job
        whose nodes went down is placed anew.)"""
        scheduler: Any = self.scheduler
        kept = self._reserved
        compress = scheduler.compress_due or any(kept[job][0] < now for job in order if job in kept)
        scheduler.compress_due = False
        reach = math.inf  # (every window: its reservations are started as they are)
        profile = self._profile(now, self.machine.free.copy(), [], reach)
        started: list[tuple[Job, Alloc]] = []
        for job in order:
            entry = kept.get(job)
            if entry is not None and compress:
                moved = profile.earliest_on(entry[1], job.estimate, max(entry[0], now))
                entry = None if moved is None else (moved, entry[1])
            if entry is None:
                start, where = profile.earliest(job.demand, job.estimate)
            else:
                start, where = entry
            if where is None:
                scheduler.reservation[job] = math.inf
                continue
            profile.reserve(start, job.estimate, where)
            scheduler.promised.setdefault(job.id, start)
            if start <= now:
                started.append((job, where))
                scheduler.reservation.pop(job, None)
                kept.pop(job, None)
            else:
                scheduler.reservation[job] = start
                kept[job] = (start, where)
        return started

    def _planning(self, now: float) -> list[tuple[Job, Alloc]]:
        free, running = self.pool()
        jobs = self.scheduler.allocate(now, free, running)
        work = self.machine.free.copy()
        started = []
        profile: NodeProfile | None = None
        for job in jobs:
            alloc = self._planned.get((job.id, now))
            if alloc is None or not work.holds(alloc):  # (a plan made on other nodes)
                if profile is None:
                    profile = self._profile(now, work, [], math.inf)
                alloc = profile.fits_now(job.demand, job.estimate)
            if alloc is None:  # back to the queue; plan again at the next pass
                self.scheduler.submit(job, now)
                self.scheduler.nodes_changed()
                continue
            if profile is None:
                work.take(alloc)
            else:
                profile.reserve(now, job.estimate, alloc)
            started.append((job, alloc))
        return started

    def _plan(self, order: Sequence[Job], now: float, free: int, running: Any) -> list[float]:
        """The planner of PLAN and dynP on the nodes: each job of ``order`` at its earliest
        start, every maintenance window respected (remembering where each job is planned)."""
        if len(self._planned) > 4 * len(order) + 64:  # (forget the plans of long ago)
            self._planned = {key: a for key, a in self._planned.items() if key[1] >= now}
        profile = self._profile(now, self.machine.free.copy(), [], math.inf)
        starts = []
        for job in order:
            start, where = profile.earliest(job.demand, job.estimate)
            if where is not None:
                profile.reserve(start, job.estimate, where)
                self._planned[(job.id, start)] = where  # (dynP plans under three policies)
            starts.append(start)
        return starts

    def bound(self, part: int, cores: int) -> float:
        """The first time partition ``part`` has ``cores`` cores free by
        :func:`sitesim.slurm.nodes.levels` (-inf: now; inf: never), kept while nothing ends."""
        if self._levels_at != self._changes:
            self._levels.clear()
            self._bounds.clear()
            self._levels_at = self._changes
        found = self._bounds.get((part, cores))
        if found is None:
            level = self._levels.get(part)
            if level is None:
                level = self._levels[part] = levels(self, part)
            times, cumulative = level
            k = int(np.searchsorted(cumulative, cores))  # (never falls)
            found = -math.inf if not k else float(times[k - 1]) if k <= len(times) else math.inf
            self._bounds[(part, cores)] = found
        return found

    # -- views -------------------------------------------------------------------------------
    def pool(self) -> tuple[int, list[tuple[float, int, int]]]:
        """The platform as one pool of cores (for policies that reason about one pool: GA's
        fitness, the planners' arguments): cores free now, and the running jobs as
        ``(estimated end, id, cores held)``."""
        machine = self.machine
        running = [(end, jid, int(job.alloc.cores.sum())) for end, jid, job in machine.running]
        return int(machine.free.cores.sum()), running

    def _profile(
        self, now: float, work: Any, ended: list[tuple[float, int, Alloc]], reach: float
    ) -> NodeProfile:
        """The profile from ``work`` (free now), the running jobs' and ``ended``'s estimated
        ends, and the maintenance windows that begin before ``reach``."""
        changes = list(ended)
        for down, up, alloc in self._windows:
            if down >= reach:
                break
            if up <= now:
                continue
            if down > now:
                changes.append((down, -1, alloc))
            changes.append((up, 1, alloc))  # (a window under way: its nodes come back then)
        return NodeProfile(self.parts, now, work, changes, self.machine.releases)

    def _window_allocs(self, outages: Outages | None) -> list[tuple[float, float, Alloc]]:
        """The maintenance windows as (down, up, the whole nodes it takes), each node's
        overlapping windows merged (a node is down while any covers it)."""
        if outages is None or not len(outages):
            return []
        platform = self.parts.platform
        node, down, up = merged_intervals(outages.node, outages.down, outages.up)
        order = np.lexsort((node, up, down))  # (by window, each window's nodes together)
        node, down, up = node[order], down[order], up[order]
        first = np.flatnonzero(np.r_[True, (down[1:] != down[:-1]) | (up[1:] != up[:-1])])
        allocs = []
        for low, high in zip(first.tolist(), [*first[1:].tolist(), len(node)], strict=True):
            nodes = node[low:high]  # (ascending, once each: merged intervals do not overlap)
            gpus, memory = platform.gpus[nodes], platform.memory[nodes]
            whole = Alloc(nodes, platform.cores[nodes], gpus, memory)
            allocs.append((float(down[low]), float(up[low]), whole))
        return allocs

    def forget_past_windows(self, now: float) -> None:
        """Drop the windows that ended (the profile never needs them again)."""
        if self._windows and self._windows[0][1] <= now:
            self._windows = [w for w in self._windows if w[1] > now]


def merged_intervals(
    node: np.ndarray, down: np.ndarray, up: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each node's intervals ``[down, up)`` merged where they overlap or touch (``up`` may be
    ``math.inf``: a node that never comes back)."""
    order = np.lexsort((down, node))
    node, down, up = node[order], down[order], up[order]
    endless = np.isinf(up)
    never = float(np.max(up, where=~endless, initial=float(down.max()))) + 1.0
    up = np.where(endless, never, up)  # (as a finite time after every other; put back below)
    span = never + 1.0  # (each node's times shifted into its own range)
    shift = node * span
    reach = np.maximum.accumulate(up + shift)
    begins = np.ones(len(node), dtype=bool)
    begins[1:] = down[1:] + shift[1:] > reach[:-1]
    starts = np.flatnonzero(begins)
    ends = np.append(starts[1:], len(node)) - 1
    merged_up = np.where(np.add.reduceat(endless, starts) > 0, math.inf, reach[ends] - shift[ends])
    return node[starts], down[starts], merged_up


class _Pass:
    """What a pass that started nothing leaves for the next one to resume."""

    __slots__ = ("blocked", "changes", "ended", "failed", "order", "profile", "reach", "work")

    def __init__(
        self,
        order: list[Job],
        reach: float,
        changes: int,
        profile: NodeProfile,
        work: Any,
        ended: list[tuple[float, int, Alloc]],
        blocked: set[int],
        failed: dict[Demand, float],
    ) -> None:
        self.order, self.reach, self.changes = order, reach, changes
        self.profile, self.work, self.ended = profile, work, ended
        self.blocked, self.failed = blocked, failed

    def resumes(self, order: Sequence[Job], reach: float, changes: int) -> bool:
        """True if the pass with ``order`` can resume this one (see ``_in_order``)."""
        kept = self.order
        n = len(kept)
        return (
            changes == self.changes
            and reach <= self.reach
            and len(order) >= n
            and all(map(is_, order[:n], kept))
        )
