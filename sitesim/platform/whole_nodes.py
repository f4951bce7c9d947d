"""The resources of a pass on nodes whose reservations hold whole nodes, as Slurm's backfill
scheduler plans.

Slurm's backfill scheduler plans on a map of the nodes available over time (the node-space map
of its backfill plugin): the running jobs hold their cores, GPUs and memory until their time
limits; a job it reserves takes its nodes whole, from its planned start to its planned end, and
so does a maintenance window. A job may start now only on nodes that no reservation or window
holds before it ends (a reservation made *closed* holds its nodes from its start on for a job
that ends exactly then, too: Slurm tests ``node_space[j].begin_time <= end_time``,
src/plugins/sched/backfill/backfill.c:2417 in Slurm 22.05.8). :class:`WholeNodeResources` is
that plan for one pass (the :class:`~sitesim.engine.resources.Resources` of a scheduler whose
:attr:`~sitesim.engine.scheduler.Scheduler.reservations` are ``whole_nodes``, such as SLURM):

- :meth:`~WholeNodeResources.fits_now`: where a job starts now, touching no window or
  reservation;
- :meth:`~WholeNodeResources.earliest`: a job's earliest start for a duration, and where: the
  first time from now at which it fits on what is free then (free now, plus what the running
  jobs, the jobs started in this pass and the windows under way have given back by then) on
  nodes that no window or reservation (a *block*) holds during its run;
- :meth:`~WholeNodeResources.lower_bound`: a time before which no plan of this pass can start
  the job (the cores free in its partition as the running jobs end, blocks ignored).

The earliest start is found by a sweep over time from the lower bound: what the partition's
unblocked nodes could give the job (their free cores; on an exclusive partition, the cores of
its idle nodes) rises as resources come back and falls as blocks begin. It is tracked in NumPy
between the blocks' boundaries, and placement is tried only at the times it first covers the
job: a necessary condition, so the placement, the exact test, runs once or a few times.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from sitesim.engine.resources import Releases, Resources, Running
from sitesim.platform.placement import Alloc, Demand, Free, place
from sitesim.platform.profile import _add_rows

if TYPE_CHECKING:
    from sitesim.engine.job import Job
    from sitesim.platform.machine import NodeMachine

#: A partition's returns over time: times (ascending), nodes, what each gives the sweep, and
#: what every node gives now (zero outside the partition).
Returns = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


class WholeNodeResources(Resources):
    """The nodes as one pass plans on them, reservations holding whole nodes (see the module
    docstring).

    Args:
        machine: the nodes.
        now: the clock.

    Attributes:
        taken: where each job this pass started runs.
    """

    reservations = "whole_nodes"

    def __init__(self, machine: NodeMachine, now: float) -> None:
        self.machine, self.now, self.parts = machine, now, machine.parts
        self.groups = self.parts.group
        self.partitions = len(self.groups)
        self.free = machine.free
        self.taken: dict[Job, Alloc] = {}
        #: Free now (the machine's own arrays until the first start of the pass copies them).
        self.work: Free = machine.available
        self._own = False
        self.soonest = math.inf  # (the first end of a job started in this pass)
        #: What comes back during the plan besides the running jobs, by time: the jobs started
        #: in this pass, the nodes of the windows under way.
        self._gives: list[tuple[float, Alloc]] = []
        #: Whole nodes held over [start, end) (windows, reservations), by group of partitions;
        #: and per node, the first start of a block holding it.
        self._blocks: dict[int, _Blocks] = {}
        self._first_block = np.full(len(self.parts.node_group), math.inf)
        #: Per node, the first start of a closed block holding it (None while there is none).
        self._first_closed: np.ndarray | None = None
        #: The nodes of the partitions :meth:`fits_now_outside` last kept out, as a mask.
        self._outside: tuple[frozenset[int], np.ndarray] | None = None
        #: Per partition, the cores a plain demand can have now (see could_start_now).
        self._usable: dict[int, int] = {}
        #: Per partition, its returns (:meth:`_returns_of`), until a start changes them; and
        #: per partition and count k, what each node gives once its first k returns are back,
        #: and its sum.
        self._returns: dict[int, Returns] = {}
        self._have_at: dict[tuple[int, int], tuple[np.ndarray, int]] = {}
        #: Slurm's sweeps of this pass (:meth:`slurm_start`) by demand, lower bound, end and
        #: the blocks held throughout, until a start changes the returns.
        self._sweeps: dict[tuple[Any, ...], tuple[float, Alloc | None]] = {}
        #: When the running jobs give back, from their ends (:meth:`earliest`'s ``releases``).
        self._releases: Releases | None = None
        for down, up, alloc in machine.windows:  # (by start)
            if up <= now:
                continue
            self._block(
                down, up, alloc.nodes, set(self.parts.node_group[alloc.nodes].tolist()) - {-1}
            )
            if down <= now:  # (down now: its nodes come back whole at its end)
                self._gives.append((up, alloc))
        self._gives.sort(key=_first)

    @property
    def running(self) -> Running:
        held = self.machine.held
        return [(end, jid, held[jid]) for end, jid, _ in self.machine.running]

    def part(self, job: Job) -> int:
        return int(job.demand.part)

    # -- now ---------------------------------------------------------------------------------
    def fits_now(self, job: Job, duration: float | None = None) -> Alloc | None:
        end = self.now + (job.estimate if duration is None else duration)
        return place(self.parts, job.demand, self._clear(end, job.demand))

    def fits_now_outside(self, job: Job, parts: set[int]) -> Alloc | None:
        key = frozenset(parts)
        if self._outside is None or self._outside[0] != key:
            off = np.zeros(len(self.parts.node_group), dtype=bool)
            for part in parts:
                off |= self.parts.member[part]
            self._outside = (key, off)
        demand = job.demand
        free = _without(self._clear(self.now + job.estimate, demand), self._outside[1])
        return place(self.parts, demand, free)

    def could_start_now(self, job: Job) -> bool:
        demand = job.demand
        if demand.nodes or demand.gpus or demand.memory or demand.nodeset:
            return place(self.parts, demand, self.work) is not None
        # a plain demand (cores only) fits if its partition has as many cores free (shared) or
        # on idle nodes (exclusive): placement takes them node after node
        part = demand.part
        usable = self._usable.get(part)
        if usable is None:
            parts = self.parts
            free = self.work.cores[parts.select[part]]
            if parts.exclusive[part]:
                capacity = parts._caps[part][0]
                usable = int(capacity[free == capacity].sum())
            else:
                usable = int(free.sum())
            self._usable[part] = usable
        return demand.cores <= usable

    def free_now(self, where: Any) -> bool:
        return self.work.holds(where)

    def first_release(self) -> float:
        running = self.machine.running
        first = min(running[0][0], self.soonest) if running else self.soonest
        return min(first, self._gives[0][0]) if self._gives else first

    def take_now(self, job: Job, where: Any) -> None:
        alloc: Alloc = where
        self.taken[job] = alloc
        self.free -= int(alloc.cores.sum())
        end = self.now + job.estimate
        if not self._own:
            self.work, self._own = self.work.copy(), True
        self.work.take(alloc)
        self.soonest = min(self.soonest, end)
        self._gives.insert(bisect_right(self._gives, end, key=_first), (end, alloc))
        self._returns_changed()
        self._usable.clear()

    def _clear(self, end: float, demand: Demand) -> Free:
        """Free now on the nodes no block holds before ``end`` (what placing ``demand``
        reads: cores, and GPUs and memory if it asks for them on shared nodes)."""
        held = self._first_block < end
        if self._first_closed is not None:
            held |= self._first_closed <= end
        if not np.count_nonzero(held):
            return self.work
        if demand.gpus or demand.memory:
            return _without(self.work, held)
        cores = self.work.cores.copy()
        cores[held] = 0
        return Free(cores, self.work.gpus, self.work.memory)

    # -- the plan ----------------------------------------------------------------------------
    def lower_bound(self, job: Job) -> float:
        """No plan of this pass starts ``job`` before this time."""
        demand = job.demand
        return max(self.now, self.machine.bound(demand.part, demand.cores))

    def reserve(
        self,
        job: Job,
        start: float,
        where: Any,
        duration: float | None = None,
        closed: bool = False,
    ) -> None:
        alloc: Alloc = where
        end = start + (job.estimate if duration is None else duration)
        group = int(self.parts.node_group[alloc.nodes[0]])
        self._block(start, end, alloc.nodes, {group}, closed)

    def _block(
        self, start: float, end: float, nodes: np.ndarray, groups: set[int], closed: bool = False
    ) -> None:
        """Hold ``nodes`` whole over ``[start, end)`` in the plan of each of ``groups``
        (``closed``: from ``start`` on for a job that ends at ``start``, too)."""
        for group in groups:
            blocks = self._blocks.get(group)
            if blocks is None:
                blocks = self._blocks[group] = _Blocks()
            blocks.add(start, end, nodes, closed)
        if closed:
            if self._first_closed is None:
                self._first_closed = np.full(len(self._first_block), math.inf)
            np.minimum.at(self._first_closed, nodes, start)
        else:
            np.minimum.at(self._first_block, nodes, start)

    def earliest(
        self,
        job: Job,
        duration: float | None = None,
        before: float = math.inf,
        releases: Releases | None = None,
    ) -> tuple[float, Alloc | None]:
        if releases != self._releases:
            self._releases = releases
            self._returns_changed()
        demand = job.demand
        duration = job.estimate if duration is None else duration
        now = self.now
        alloc = place(self.parts, demand, self._clear(now + duration, demand))
        if alloc is not None:
            return now, alloc
        first = self.lower_bound(job)
        if first >= before:
            return math.inf, None  # (not before ``before``; never if inf)
        blocks = self._blocks.get(self.groups[demand.part]) or _Blocks()
        return _Sweep(self, demand, duration, first, blocks, before).run()

    def slurm_start(
        self,
        job: Job,
        duration: float,
        before: float,
        releases: Releases,
        round_down: Callable[[float], float],
    ) -> tuple[float, Alloc | None]:
        """A job's start as Slurm 22.05.8's backfill scheduler plans it (``_attempt_backfill``,
        src/plugins/sched/backfill/backfill.c:2361-2895), and where; ``(inf, None)`` if not
        before ``before``. From ``start_res`` (now at first):

        - the nodes no block holds over ``[start_res, start_res + duration]`` (closed at the
          end, backfill.c:2417; unless none fits, backfill.c:2448-2456);
        - on them, the job's start as the running jobs end (``releases``: Slurm's estimate,
          the blocks ignored: the select plugin's will-run test) and the nodes;
        - the start is no earlier than ``start_res``; if it is later than the first end of a
          block after ``start_res`` (``later_start``, backfill.c:2390-2412), that block's end
          is tried instead (backfill.c:2880-2888);
        - a later start whose reservation, rounded down (``round_down``: to bf_resolution on
          the clock), overlaps a block on its nodes (half-open: backfill.c:3391-3421) is tried
          again from that start (backfill.c:2905-2918).

        Each try moves ``start_res`` later, to the end of a block or past one.
        """
        if releases != self._releases:
            self._releases = releases
            self._returns_changed()
        demand = job.demand
        now = self.now
        found = self._blocks.get(self.groups[demand.part]) or _Blocks()
        mine = self.parts.member[demand.part]
        # (a cycle's blocks, a few dozen: each read in Python, cheaper than NumPy's calls)
        blocks = list(
            zip(found.starts, found.ends, found.closed, found.touching(demand.part, mine),
                found.nodes, strict=True)
        )  # fmt: skip
        first = self.lower_bound(job)
        start_res = now
        while start_res < before:
            end = start_res + duration
            over = [  # (a job may end as a window begins, not as a reservation does: 2417)
                k
                for k, (begins, ends, closed, _, _) in enumerate(blocks)
                if ends > start_res and (begins < end or (closed and begins == end))
            ]
            later_start = min(
                (ends for _, ends, _, touches, _ in blocks if touches and ends > start_res),
                default=math.inf,
            )
            # (a sweep with no block beginning or ending during it reads no duration)
            key = (demand, first, before, *over)
            swept = self._sweeps.get(key)
            if swept is None:
                held = None  # (held throughout: no block begins or ends)
                if over:
                    held = np.zeros(len(mine), dtype=bool)
                    held[np.concatenate([blocks[k][-1] for k in over])] = True  # (their nodes)
                sweep = _Sweep(self, demand, duration, first, _Blocks(), before, held)
                swept = self._sweeps[key] = sweep.run()
            at, alloc = swept
            if alloc is None:
                start_res = later_start  # (nowhere on these nodes: after the next block)
                continue
            start = max(at, start_res)
            if start > later_start:
                start_res = later_start
                continue
            if start > now:
                begin, stop = round_down(start), round_down(start + duration)
                hit = [
                    nodes for begins, ends, _, _, nodes in blocks if ends > begin and begins < stop
                ]
                taken = np.zeros(len(mine), dtype=bool)
                taken[alloc.nodes] = True
                if hit and np.count_nonzero(taken[np.concatenate(hit)]):
                    start_res = start if start > start_res else later_start
                    continue
            return start, alloc
        return math.inf, None

    def _returns_of(self, part: int) -> Returns:
        """What partition ``part``'s nodes give the sweep over time. On a shared partition,
        cores: each node's free cores now, then each return of the running jobs and of this
        pass. On an exclusive one, whole idle nodes: a node's cores once nothing holds any of
        its resources (its last return; now if idle now; never if down with no known
        return)."""
        found = self._returns.get(part)
        if found is not None:
            return found
        parts, work = self.parts, self.work
        member = parts.member[part]
        ends, nodes, cores, _, _ = self.machine.releases.by_end(self.groups[part])
        inside = member[nodes]
        ends, nodes, cores = ends[inside], nodes[inside], cores[inside]
        if self._gives:
            more = [(t, a.nodes, a.cores) for t, a in self._gives]
            ends = np.concatenate([ends, *[np.full(len(n), t) for t, n, _ in more]])
            nodes = np.concatenate([nodes, *[n for _, n, _ in more]])
            cores = np.concatenate([cores, *[c for _, _, c in more]])
            inside = member[nodes]
            ends, nodes, cores = ends[inside], nodes[inside], cores[inside]
            order = ends.argsort(kind="stable")
            ends, nodes, cores = ends[order], nodes[order], cores[order]
        if self._releases is not None and len(ends):  # (on the partition's nodes)
            ends = self._releases(ends)
        base = np.where(member, work.cores, 0)
        if parts.exclusive[part]:
            capacity = parts.platform.cores
            n = len(member)
            total = work.cores + np.bincount(nodes, cores, n).astype(np.int64)
            last = np.full(n, -math.inf)
            np.maximum.at(last, nodes, ends)
            idle = member & (work.cores == capacity)
            later = (member & ~idle & (total == capacity)).nonzero()[0]
            nodes = later[last[later].argsort(kind="stable")]
            ends, cores = last[nodes], capacity[nodes]
            base = np.where(idle, capacity, 0)
        found = self._returns[part] = (ends, nodes, cores, base)
        return found

    def _returns_changed(self) -> None:
        """What comes back over time changed: every partition's returns are read again."""
        self._returns.clear()
        self._have_at.clear()
        self._sweeps.clear()

    def _have_after(self, part: int, k: int) -> tuple[np.ndarray, int]:
        """What each node gives a sweep of partition ``part`` once its first ``k`` returns
        are back (a copy: the sweep adds the later ones; every sweep of a job from its lower
        bound begins there), and the sum."""
        found = self._have_at.get((part, k))
        if found is None:
            _, nodes, gains, base = self._returns_of(part)
            have = base + np.bincount(nodes[:k], gains[:k], len(base)).astype(np.int64)
            found = self._have_at[part, k] = (have, int(have.sum()))
        return found[0].copy(), found[1]

    def _walk(self) -> Callable[[float], Free]:
        """The resources free at ascending times (one state, updated in place)."""
        state = self.work.copy()
        table = self.machine.releases.by_end()
        gives = self._gives
        if self._releases is not None and (len(table[0]) or gives):
            # (the rows and the jobs of the pass together, as the running jobs they all are)
            every = np.sort(np.concatenate([table[0], [t for t, _ in gives]]))
            released = self._releases(every)
            table = (_released(table[0], every, released), *table[1:])
            later = _released(np.array([t for t, _ in gives]), every, released).tolist()
            gives = [(t, alloc) for t, (_, alloc) in zip(later, gives, strict=True)]
        done = [0, 0]  # rows of the table, entries of gives, applied

        def at(t: float) -> Free:
            k = int(table[0].searchsorted(t, side="right"))
            if k > done[0]:
                _add_rows(state, table[1:], done[0], k)
                done[0] = k
            while done[1] < len(gives) and gives[done[1]][0] <= t:
                state.give(gives[done[1]][1])
                done[1] += 1
            return state

        return at


class _Sweep:
    """The earliest start of ``demand`` for ``duration`` seconds, from ``first`` on, off the
    nodes ``blocks`` hold and those in ``held`` (a mask: held throughout)."""

    def __init__(
        self,
        plan: WholeNodeResources,
        demand: Demand,
        duration: float,
        first: float,
        blocks: _Blocks,
        before: float,
        held: np.ndarray | None = None,
    ) -> None:
        self.plan, self.demand, self.duration, self.blocks = plan, demand, duration, blocks
        times, nodes, gains, base = plan._returns_of(demand.part)
        end = int(times.searchsorted(before))  # (no start from ``before`` on is wanted)
        self.times, self.nodes, self.gains = times[:end], nodes[:end], gains[:end]
        self.before = before
        self.need = demand.cores
        #: What each node gives at the sweep's time (from :meth:`run` on), and how many
        #: blocks hold it.
        self.have = base
        self.held = np.zeros(len(base), dtype=np.int64) if held is None else held.astype(np.int64)
        self.first = first
        #: The cores of ``have`` are what is free on the partition's nodes, all placement
        #: reads, unless the job asks for GPUs or memory on shared nodes.
        self.cores_only = plan.parts.exclusive[demand.part] or not (demand.gpus or demand.memory)
        self.state_at: Callable[[float], Free] | None = None
        self.free_now = plan.work.cores > 0  # (a reservation takes nodes busy now first)

    def run(self) -> tuple[float, Alloc | None]:
        first, d = self.first, self.duration
        times = self.times
        i = int(times.searchsorted(first, side="right"))
        self.have, given = self.plan._have_after(self.demand.part, i)
        # blocks held over [first, first + d) now (a closed one over [first, first + d]);
        # the others begin (for starts after start - d; a closed one's from start - d on) or
        # end (for starts from end on) during the sweep; at one time, closed ones begin first,
        # then ends, then the others begin
        blocks = self.blocks
        edges: Iterable[tuple[float, int, int]] = ()
        if blocks.starts:
            starts, ends, closed = blocks.arrays()
            live = (ends > first).nonzero()[0]
            now_held = starts[live] < first + d
            if closed is not None:
                now_held |= closed[live] & (starts[live] == first + d)
            if np.count_nonzero(now_held):
                held = [blocks.nodes[k] for k in live[now_held].tolist()]
                every = held[0] if len(held) == 1 else np.concatenate(held)
                self.held += np.bincount(every, minlength=len(self.held))
            later = live[~now_held]
            times_at = np.concatenate([starts[later] - d, ends[live]])
            kind = np.ones(len(later), np.int64) if closed is None else 1 - 2 * closed[later]
            begins = np.concatenate([kind, np.zeros(len(live), np.int64)])
            which = np.concatenate([later, live])
            order = np.lexsort((begins, times_at))
            edges = zip(
                times_at[order].tolist(), begins[order].tolist(), which[order].tolist(),
                strict=True,
            )  # fmt: skip
        blocked = np.count_nonzero(self.held)
        self.total = int(self.have[self.held == 0].sum()) if blocked else given
        if self.total >= self.need and (alloc := self._try(first)) is not None:
            return first, alloc
        for at, begin, k in edges:
            if at >= self.before:
                break
            nodes = blocks.nodes[k]
            if begin:  # (held for starts after ``at``, or from ``at`` on if closed (-1): the
                # returns up to it, or before it, come first)
                hi = int(times.searchsorted(at, side="right" if begin > 0 else "left"))
                if (found := self._scan(i, hi)) is not None:
                    return found
                i = hi
                newly = nodes[self.held[nodes] == 0]
                self.total -= int(self.have[newly].sum())
                self.held[nodes] += 1
                continue
            hi = int(times.searchsorted(at, side="left"))  # (free again from ``at`` on)
            if (found := self._scan(i, hi)) is not None:
                return found
            self.held[nodes] -= 1
            freed = nodes[self.held[nodes] == 0]
            self.total += int(self.have[freed].sum())
            i, hi = hi, int(times.searchsorted(at, side="right"))
            self.total += self._add(i, hi)
            i = hi
            if self.total >= self.need and (alloc := self._try(at)) is not None:
                return at, alloc
        found = self._scan(i, len(times), last=True)
        return found if found is not None else (math.inf, None)

    def _add(self, lo: int, hi: int) -> int:
        """Apply the returns ``lo:hi``; what the unblocked nodes gain."""
        if hi <= lo:
            return 0
        nodes, gains = self.nodes[lo:hi], self.gains[lo:hi]
        if hi - lo > 64:
            self.have += np.bincount(nodes, gains, len(self.have)).astype(np.int64)
        else:
            np.add.at(self.have, nodes, gains)
        return int(gains[self.held[nodes] == 0].sum())

    def _scan(self, lo: int, hi: int, last: bool = False) -> tuple[float, Alloc] | None:
        """The returns ``lo:hi`` under the same blocks: try each time at which the unblocked
        nodes first cover the job (and later ones while placement fails). ``last``: the
        sweep's last, nothing read after it (what is left of them is not applied)."""
        if hi <= lo:
            return None
        times = self.times[lo:hi]
        unblocked = self.gains[lo:hi] * (self.held[self.nodes[lo:hi]] == 0)
        cumulative = self.total + unblocked.cumsum()
        j = int(cumulative.searchsorted(self.need))
        done = 0
        while j < hi - lo:
            t = float(times[j])
            k = int(times.searchsorted(t, side="right"))  # (every return at t)
            self._add(lo + done, lo + k)
            done = k
            self.total = int(cumulative[k - 1])
            alloc = self._try(t)
            if alloc is not None:
                return t, alloc
            j = k
        if not last:
            self._add(lo + done, hi)
            self.total = int(cumulative[-1])
        return None

    def _try(self, t: float) -> Alloc | None:
        """Place the job at ``t`` on what is free then, off the blocked nodes."""
        plan = self.plan
        blocked = self.held > 0
        if self.cores_only:
            cores = self.have.copy()
            cores[blocked] = 0
            state = Free(cores, plan.work.gpus, plan.work.memory)
        else:
            if self.state_at is None:
                self.state_at = plan._walk()
            state = self.state_at(t)
            if np.count_nonzero(blocked):
                state = _without(state, blocked)
        return place(plan.parts, self.demand, state, self.free_now)


def _without(state: Free, held: np.ndarray) -> Free:
    """A copy of ``state`` with nothing free where ``held`` (a mask over the nodes)."""
    out = state.copy()
    out.cores[held] = 0
    out.gpus[held] = 0
    out.memory[held] = 0
    return out


class _Blocks:
    """Blocks (whole nodes held over ``[start, end)``, some closed) in the order they were
    made."""

    __slots__ = ("_arrays", "_touching", "closed", "ends", "nodes", "starts")

    def __init__(self) -> None:
        self.starts: list[float] = []
        self.ends: list[float] = []
        self.nodes: list[np.ndarray] = []
        self.closed: list[bool] = []
        self._arrays: tuple[np.ndarray, np.ndarray, np.ndarray | None] | None = None
        #: Per partition, whether each block holds a node of it (as blocks were added).
        self._touching: dict[int, list[bool]] = {}

    def add(self, start: float, end: float, nodes: np.ndarray, closed: bool = False) -> None:
        self.starts.append(start)
        self.ends.append(end)
        self.nodes.append(nodes)
        self.closed.append(closed)
        self._arrays = None

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """The starts and ends as arrays, and which blocks are closed (None if none is)."""
        if self._arrays is None:
            closed = np.array(self.closed, dtype=bool) if any(self.closed) else None
            self._arrays = (
                np.array(self.starts, dtype=float),
                np.array(self.ends, dtype=float),
                closed,
            )
        return self._arrays

    def touching(self, part: int, mine: np.ndarray) -> list[bool]:
        """Which blocks hold a node of partition ``part`` (``mine``: a mask of its nodes): the
        list kept for the next call, to be read only."""
        flags = self._touching.setdefault(part, [])
        for nodes in self.nodes[len(flags) :]:
            flags.append(bool(np.count_nonzero(mine[nodes])))
        return flags


def _released(ends: np.ndarray, every: np.ndarray, released: np.ndarray) -> np.ndarray:
    """Each of ``ends`` (among ``every``, sorted) at its release (``released``, aligned with
    ``every``; equal ends are released together)."""
    if not len(ends):
        return ends
    return released[every.searchsorted(ends, side="right") - 1]


def _first(entry: tuple[float, Alloc]) -> float:
    return entry[0]
