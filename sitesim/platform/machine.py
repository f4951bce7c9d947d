"""The machine of a platform: nodes with cores, GPUs and memory, jobs placed on them, and
nodes that go down (maintenance windows, failures).

The scheduler decides which jobs start and where, on the resources of its pass
(:mod:`sitesim.platform.resources`: each job placed on concrete resources by
:func:`sitesim.platform.placement.place`); the machine checks, as it starts the job, that no
node, core, GPU or byte of memory is over-allocated and that every node is in the job's
partition and up. A job holds its allocation until it ends.

Outages (:mod:`sitesim.platform.downtime`) take nodes down. A job running on a node that goes
down is killed and requeued (``on_failure = "requeue"``, as Slurm's ``--requeue``) or recorded
as failed; the machine counts requeues, node-seconds down and the core-seconds of work lost.
A node is down while any outage covers it. Maintenance windows are known in advance: the
plans of the passes hold their nodes (:attr:`NodeMachine.windows`).
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, insort
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from sitesim.engine.event_queue import SiteEnvironment
from sitesim.engine.machine import OverAllocationError, started_twice
from sitesim.errors import JobStateError
from sitesim.platform.boundary import PartitionTables, Resolver
from sitesim.platform.downtime import MAINTENANCE, Downtime, Outages, OutageStream, merged_windows
from sitesim.platform.placement import Alloc, Free, Partitions, capacity
from sitesim.platform.releases import Releases
from sitesim.platform.resources import NodeResources
from sitesim.platform.values import format_nodes
from sitesim.platform.whole_nodes import WholeNodeResources

if TYPE_CHECKING:
    from sitesim.engine.job import Job
    from sitesim.engine.scheduler import Scheduler
    from sitesim.platform.description import Platform


class NodeMachine:
    """A platform's nodes shared by jobs.

    Args:
        env: the site's environment.
        platform: the nodes and partitions.
        seed: the run's seed (the partitions of simulated users' jobs are drawn from it).
        reservations: how the plans of the scheduler's passes hold a reservation: ``exact``
            or ``whole_nodes`` (:attr:`~sitesim.engine.scheduler.Scheduler.reservations`).
        on_end: called with each job that ends (or fails, not to be requeued).
        on_requeue: called with each job killed by a node failure, to wait again.
        on_change: called when nodes went down or came back.

    Attributes:
        procs: cores in all (the machine's size for the metrics).
        free: cores free now.
        available: resources free now, per node (down nodes hold nothing free).
        part_free, part_idle: per partition, the cores free on its nodes and its idle nodes.
        running: ``(estimated end, id, job)`` ascending, as schedulers see the running jobs.
        up: True for each node that is up.
        changes: counts what changes the machine besides starts (job ends, kills, nodes down
            or up): a plan made before it moved may be stale.
        windows: the maintenance windows still to come or under way, by start, as ``(down,
            up, the whole nodes it takes)``, each node's overlapping windows merged.
        requeued, failed: jobs requeued and failed after a node went down.
        work_lost: core-seconds of work the killed runs had done.
    """

    def __init__(
        self,
        env: SiteEnvironment,
        platform: Platform,
        *,
        seed: int,
        reservations: str,
        on_end: Callable[[Job], None],
        on_requeue: Callable[[Job], None],
        on_change: Callable[[], None],
    ) -> None:
        self.env = env
        self.platform = platform
        self.parts = parts = Partitions(platform)
        self.procs = platform.total_cores
        self.free = platform.total_cores
        self.available: Free = capacity(platform)
        #: The nodes have GPUs, memory: else no allocation holds any (no call to look).
        self._gpus = bool(platform.gpus.any())
        self._memory = bool(platform.memory.any())
        #: Per partition (rows) and node: 1 where the node is in it.
        self._member = np.array(parts.member, dtype=np.int64)
        #: Per partition, the cores free on its nodes and its idle nodes (every core free):
        #: what a pass screens a job with before placing it.
        self.part_free = self._member @ self.available.cores
        self.part_idle = self._member @ np.ones(platform.nodes, dtype=np.int64)
        #: Nodes in the same partitions form a class, numbered in node order; where each
        #: class is a run of consecutive nodes, each node's class (else None), and per class
        #: its partitions: the counts a job's start or end changes (:meth:`count`).
        signatures, classes = np.unique(self._member.T, axis=0, return_inverse=True)
        classes = classes.ravel()
        runs = np.count_nonzero(classes[1:] != classes[:-1]) + 1
        self._node_class = classes.tolist() if runs == len(signatures) else None
        self._class_parts = [row.nonzero()[0].tolist() for row in signatures]
        self.running: list[tuple[float, int, Job]] = []
        #: The cores each running job holds, by id.
        self.held: dict[int, int] = {}
        self.up = np.ones(platform.nodes, dtype=bool)
        self.changes = 0
        self.windows: list[tuple[float, float, Alloc]] = []
        self._down = np.zeros(platform.nodes, dtype=np.int64)  # outages covering each node
        self._on_end = on_end
        self._on_requeue = on_requeue
        self._on_change = on_change
        self._end_callbacks: list[Callable[[Any], None]] = [self._end]
        self._runs: dict[int, int] = {}  # job id -> run number (a killed run's end is ignored)
        #: What the running jobs hold, by estimated end (rows of each job in ``_rows``).
        self.releases = Releases(parts.node_group)
        self._rows: dict[int, np.ndarray] = {}
        #: Outages are still to come (:meth:`add_outages`).
        self.outages_pending = False
        self.requeued = 0
        self.failed = 0
        self.work_lost = 0.0
        #: Requeues of each job, by id.
        self.requeues: dict[int, int] = {}
        #: Where each job's last run was, by id: partition, nodes, cores, GPUs and memory
        #: held, and the nodes as ranges (``'0-3,17'``).
        self.placed: dict[int, tuple[int, int, int, int, int, str]] = {}
        #: Nodes down, and when that number changed: (time, nodes down from then), for the
        #: node-time down (:meth:`down_seconds`).
        self.nodes_down = 0
        self._down_times = array("d")
        self._down_counts = array("d")
        #: Why a job cannot run here (its partition, limits), and its demand.
        self.refuse = Resolver(parts, seed)
        self._whole_nodes = reservations == "whole_nodes"
        self._resources = NodeResources(self)
        #: Per partition, the levels of :meth:`bound` as of ``_levels_at`` (a value of
        #: ``changes``), and the bounds found.
        self._levels: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._bounds: dict[tuple[int, int], float] = {}
        self._levels_at = -1

    # -- passes ------------------------------------------------------------------------------
    def run_pass(self, scheduler: Scheduler, now: float) -> None:
        """One allocation pass: the scheduler chooses on the resources of the pass, and each
        job it chose starts where it took it (one it did not place, where it fits now)."""
        resources: NodeResources | WholeNodeResources
        if self._whole_nodes:
            resources = WholeNodeResources(self, now)
        else:
            resources = self._resources
            resources.begin(now)
        started = scheduler.allocate(now, resources)
        taken = resources.taken
        try:
            for job in started:
                alloc = taken.get(job)
                if alloc is None:
                    alloc = resources.fits_now(job)
                    if alloc is None:
                        raise OverAllocationError(
                            f"at t = {now:g} s job {job.id} was started where it does not fit "
                            "(nowhere on its partition's free nodes)"
                        )
                    resources.take_now(job, alloc)
                self.start(job, alloc)
        except JobStateError as err:
            raise started_twice(err, started) from None

    def bound(self, part: int, cores: int) -> float:
        """The first time partition ``part`` has ``cores`` cores free as the running jobs end
        and the windows under way end (-inf: now; inf: never), what no plan can beat (what
        starts only takes); kept while nothing ends."""
        if self._levels_at != self.changes:
            self._levels.clear()
            self._bounds.clear()
            self._levels_at = self.changes
        found = self._bounds.get((part, cores))
        if found is None:
            level = self._levels.get(part)
            if level is None:
                level = self._levels[part] = self._level(part)
            times, cumulative = level
            k = int(cumulative.searchsorted(cores))  # (never falls)
            found = -math.inf if not k else float(times[k - 1]) if k <= len(times) else math.inf
            self._bounds[(part, cores)] = found
        return found

    def _level(self, part: int) -> tuple[np.ndarray, np.ndarray]:
        """The times resources come back to partition ``part`` (the running jobs' ends, the
        ends of windows under way), and the cores free in it: ``level[0]`` now, ``level[k +
        1]`` from ``times[k]`` on."""
        member = self.parts.member[part]
        ends, nodes, cores, _, _ = self.releases.by_end(self.parts.group[part])
        inside = member[nodes]
        times, gains = ends[inside], cores[inside]
        now = self.env.now
        back = [
            (up, int(alloc.cores[member[alloc.nodes]].sum()))
            for down, up, alloc in self.windows
            if down <= now < up
        ]
        if back:
            times = np.concatenate([times, [t for t, _ in back]])
            gains = np.concatenate([gains, [c for _, c in back]])
            order = times.argsort(kind="stable")
            times, gains = times[order], gains[order]
        base = int(self.available.cores[self.parts.select[part]].sum())
        return times, np.concatenate([[base], base + gains.cumsum()])

    def changes_to_come(self) -> bool:
        """True if outages are still to come (waiting jobs may wait for nodes to come back; a
        node down once none is to come is down for good)."""
        return self.outages_pending

    def stalled(self, waiting: int) -> str | None:
        """Why ``waiting`` jobs can never start on this idle machine with no outage to come,
        if nodes are down for good (an outage that never ends); None otherwise."""
        if not self.nodes_down:
            return None
        down = format_nodes((~self.up).nonzero()[0])
        return (
            f"{waiting:,} jobs are still waiting on an idle machine after the last submission, "
            f"and nodes {down} are down for good (an outage that never ends, such as a "
            "maintenance window with duration UNLIMITED): jobs that need them would never start"
        )

    # -- jobs --------------------------------------------------------------------------------
    def start(self, job: Job, alloc: Alloc) -> None:
        """Start ``job`` now on ``alloc``.

        Raises:
            OverAllocationError: a node is down, outside the job's partition, or short of a
                resource the allocation takes.
            JobStateError: the job is not waiting, or was changed since it was submitted.
        """
        nodes = alloc.nodes
        available = self.available
        before = available.cores[nodes]
        cores = int(alloc.cores.sum())
        if (
            (self.nodes_down and np.count_nonzero(self.up[nodes]) < len(nodes))
            or np.count_nonzero(before < alloc.cores)
            or (self._gpus and np.count_nonzero(available.gpus[nodes] < alloc.gpus))
            or (self._memory and np.count_nonzero(available.memory[nodes] < alloc.memory))
            or cores < job.size
            or np.count_nonzero(self.parts.member[job.demand.part][nodes]) < len(nodes)
        ):
            raise OverAllocationError(
                f"at t = {self.env.now:g} s job {job.id} was placed on nodes that are down, "
                "outside its partition, or short of the cores, GPUs or memory it takes"
            )
        env = self.env
        now = env.now
        duration = job.mark_started(now)
        self._hold(alloc, -1, before, cores)
        self.free -= cores
        job.alloc = alloc
        insort(self.running, (now + job.estimate, job.id, job))
        self.held[job.id] = cores
        self._rows[job.id] = self.releases.add(alloc, now + job.estimate)
        self._resources.started(alloc, now + job.estimate)
        run = self._runs.get(job.id, 0) + 1
        self._runs[job.id] = run
        env.after(duration, self._end_callbacks, (job, run))

    def _end(self, event: Any) -> None:
        job, run = event._value
        if self._runs.get(job.id) != run:
            return  # this run was killed when its node went down
        del self._runs[job.id]
        job.mark_ended(self.env.now)
        self._release(job)
        self.changes += 1
        self._on_end(job)

    def _release(self, job: Job) -> None:
        running = self.running
        del running[bisect_left(running, (job.start + job.estimate, job.id))]
        self._resources.ended(job.alloc, job.start + job.estimate)
        self.releases.remove(self._rows.pop(job.id))
        alloc: Alloc = job.alloc
        cores = self.held.pop(job.id)
        self.placed[job.id] = (
            job.demand.part, len(alloc.nodes), cores, int(alloc.gpus.sum()) if self._gpus else 0,
            int(alloc.memory.sum()) if self._memory else 0, format_nodes(alloc.nodes),
        )  # fmt: skip
        self._hold(alloc, 1, self.available.cores[alloc.nodes], cores)
        self.free += cores
        down = alloc.nodes[~self.up[alloc.nodes]]
        if len(down):  # (nothing is free on a down node)
            self._zero(down)

    # -- outages ---------------------------------------------------------------------------
    def add_outages(self, outages: Outages | OutageStream, requeue: bool) -> None:
        """Take nodes down and bring them back as ``outages`` say (rows, or a stream of them
        drawn as the run reaches them), requeuing the jobs killed or recording them as failed;
        the plans know the maintenance windows in advance (failures they do not). A node
        whose outage never ends (``up`` infinite) stays down."""
        if isinstance(outages, Outages):
            keep = outages.kind == MAINTENANCE
            maintenance = Outages(
                outages.node[keep], outages.down[keep], outages.up[keep], outages.kind[keep]
            )
            blocks: Iterator[tuple[float, Outages]] = iter([(math.inf, outages)])
        else:  # (every window up to the horizon: the plans hold them)
            windows = Downtime(outages.downtime.windows)
            maintenance = windows.outages(outages.horizon, outages.seed)
            blocks = outages.blocks()
        self.windows = merged_windows(maintenance, self.platform)
        _OutageFeed(self, blocks, requeue).start()

    def changed(self) -> None:
        """Nodes went down or came back: plans made before are stale, past windows are
        forgotten, and the site is told."""
        self.changes += 1
        now = self.env.now
        if self.windows and self.windows[0][1] <= now:  # (the plans never need them again)
            self.windows = [w for w in self.windows if w[1] > now]
        self._on_change()

    def go_down(self, nodes: np.ndarray, requeue: bool) -> list[Job]:
        """Outages begin on ``nodes``: jobs running there are killed (requeued, or failed
        when ``requeue`` is False); returns them."""
        np.add.at(self._down, nodes, 1)  # (a node may begin two outages at once)
        fresh = np.unique(nodes[self.up[nodes]])  # (up until now)
        self.up[nodes] = False
        if not len(fresh):
            return []
        self._count_down(len(fresh))
        hit = np.zeros(len(self.up), dtype=bool)
        hit[fresh] = True
        now = self.env.now
        killed = [  # (a job whose run ends at this instant ends: its end event is due)
            job
            for _, _, job in self.running
            if job.start + job.duration > now and hit[job.alloc.nodes].any()
        ]
        for job in killed:
            self._runs[job.id] = -1
            self.work_lost += (now - job.start) * int(job.alloc.cores.sum())
            self._release(job)
            if requeue:
                job.mark_requeued(now)
                self.requeued += 1
                self.requeues[job.id] = self.requeues.get(job.id, 0) + 1
                job.alloc = None
                self._on_requeue(job)
            else:
                job.mark_failed(now)
                self.failed += 1
                self._on_end(job)
        self._zero(fresh)
        return killed

    def come_up(self, nodes: np.ndarray) -> None:
        """Outages end on ``nodes``; a node no outage covers any more is up again, idle."""
        np.subtract.at(self._down, nodes, 1)
        back = np.unique(nodes[self._down[nodes] == 0])
        if len(back):
            self._count_down(-len(back))
            self.up[back] = True
            platform = self.platform
            before = self.available.cores[back]
            self.available.cores[back] = platform.cores[back]
            self.available.gpus[back] = platform.gpus[back]
            self.available.memory[back] = platform.memory[back]
            self._recount(back, before)
            self.free += int(platform.cores[back].sum())

    def _hold(self, alloc: Alloc, sign: int, before: np.ndarray, cores: int) -> None:
        """Take ``alloc`` (``cores`` in all) from what is free (``sign`` -1: a start) or give
        it back (+1: an end), ``before`` the free cores of its nodes."""
        nodes, available = alloc.nodes, self.available
        after = before - alloc.cores if sign < 0 else before + alloc.cores
        available.cores[nodes] = after
        # (most jobs ask for no GPU, and many for no memory: no call for them)
        if self._gpus and np.count_nonzero(alloc.gpus):
            available.gpus[nodes] += sign * alloc.gpus
        if self._memory and np.count_nonzero(alloc.memory):
            available.memory[nodes] += sign * alloc.memory
        self.count(self.part_free, self.part_idle, nodes, before, after, sign * cores)

    def count(
        self,
        part_free: np.ndarray,
        part_idle: np.ndarray,
        nodes: np.ndarray,
        before: np.ndarray,
        after: np.ndarray,
        change: int,
    ) -> None:
        """Count a change of the free cores of ``nodes`` (ascending) from ``before`` to
        ``after`` (``change`` in all) into per-partition counts of free cores and idle nodes
        (:attr:`part_free` and :attr:`part_idle`, or a pass's copies). On nodes of one class,
        every partition of the class changes by ``change``, and by as many idle nodes."""
        full = self.platform.cores[nodes]
        classes = self._node_class
        if classes is not None and classes[nodes[0]] == classes[nodes[-1]]:
            idle = np.count_nonzero(after == full) - np.count_nonzero(before == full)
            for part in self._class_parts[classes[nodes[0]]]:
                part_free[part] += change
                part_idle[part] += idle
            return
        member = self._member[:, nodes]
        part_free += member @ (after - before)
        became = np.subtract(after == full, before == full, dtype=np.int64)
        if np.count_nonzero(became):
            part_idle += member @ became

    def _recount(self, nodes: np.ndarray, before: np.ndarray) -> None:
        """The free cores of ``nodes`` (ascending) changed from ``before``: count them again
        in :attr:`part_free` and :attr:`part_idle`."""
        after = self.available.cores[nodes]
        change = int(after.sum() - before.sum())
        self.count(self.part_free, self.part_idle, nodes, before, after, change)

    def _count_down(self, change: int) -> None:
        self.nodes_down += change
        now = self.env.now
        if self._down_times and self._down_times[-1] == now:  # (two groups at one instant)
            self._down_counts[-1] = self.nodes_down
        else:
            self._down_times.append(now)
            self._down_counts.append(self.nodes_down)

    def down_seconds(self, until: float) -> float:
        """Node-seconds down from time 0 to ``until``: each node counted once while any
        outage covers it."""
        times = np.frombuffer(self._down_times)
        if not len(times):
            return 0.0
        ends = np.minimum(np.append(times[1:], math.inf), until)
        return float(np.frombuffer(self._down_counts) @ np.maximum(ends - times, 0.0))

    def _zero(self, nodes: np.ndarray) -> None:
        before = self.available.cores[nodes]
        self.free -= int(before.sum())
        self.available.cores[nodes] = 0
        self._recount(nodes, before)
        self.available.gpus[nodes] = 0
        self.available.memory[nodes] = 0

    # -- the result ----------------------------------------------------------------------------
    def collect(
        self, records: np.ndarray, window: tuple[float, float], jobs: list[Job | None]
    ) -> dict[str, Any]:
        """Where each job ran, the platform's statistics and the per-partition table
        (:class:`~sitesim.platform.boundary.PartitionTables`)."""
        return PartitionTables(self).collect(records, window, jobs)


class _OutageFeed:
    """Fires the outages' events in time order: at each instant with events, nodes back up
    first, then nodes going down, each a group (one event) in node order. Events are built a
    block of outages at a time; an outage that outlasts its block comes back in a later one."""

    def __init__(
        self, machine: NodeMachine, blocks: Iterator[tuple[float, Outages]], requeue: bool
    ) -> None:
        self.machine = machine
        self.blocks = blocks
        self.requeue = requeue
        self.callbacks: list[Callable[[Any], None]] = [self.fire]
        self.later = (np.empty(0, np.int64), np.empty(0))  # ups after the block: node, time
        self.times = np.empty(0)  # the block's events: time, going down, node (sorted)
        self.going = np.empty(0, bool)
        self.nodes = np.empty(0, np.int64)
        self.starts = np.zeros(1, np.int64)  # where each group begins (and the end)
        self.group = 0

    def start(self) -> None:
        """Schedule the first group (if any)."""
        self.machine.outages_pending = self._load()
        if self.machine.outages_pending:
            self._schedule()

    def _load(self) -> bool:
        """The events of the next blocks, up to the first block with any; False if none is
        left. An up time of ``math.inf`` is never fired."""
        for end, rows in self.blocks:
            node = np.concatenate([self.later[0], rows.node])
            time = np.concatenate([self.later[1], rows.up])
            now = time < end
            self.later = (node[~now & (time < math.inf)], time[~now & (time < math.inf)])
            times = np.concatenate([time[now], rows.down])
            going = np.concatenate([np.zeros(int(now.sum()), bool), np.ones(len(rows), bool)])
            nodes = np.concatenate([node[now], rows.node])
            if not len(times):
                continue
            order = np.lexsort((nodes, going, times))  # (back before down)
            self.times, self.going, self.nodes = times[order], going[order], nodes[order]
            cut = (
                (self.times[1:] != self.times[:-1]) | (self.going[1:] != self.going[:-1])
            ).nonzero()[0]
            self.starts = np.concatenate([[0], cut + 1, [len(self.times)]])
            self.group = 0
            return True
        return False

    def _schedule(self) -> None:
        env = self.machine.env
        env.after(float(self.times[self.starts[self.group]]) - env.now, self.callbacks, None)

    def fire(self, _event: Any) -> None:
        """The next group: its nodes go down (their jobs killed) or come back."""
        machine = self.machine
        low, high = self.starts[self.group], self.starts[self.group + 1]
        nodes = self.nodes[low:high]
        if self.going[low]:
            machine.go_down(nodes, self.requeue)
        else:
            machine.come_up(nodes)
        machine.changed()
        self.group += 1
        if self.group + 1 < len(self.starts) or self._load():
            self._schedule()
        else:
            machine.outages_pending = False
