"""Free resources of a platform's nodes over future time, with concrete reservations.

The node counterpart of :class:`~sitesim.schedulers.availability.AvailabilityProfile`: it
starts from the resources free now (``base``) and a list of *changes*, each an allocation that
comes back (``+1``: a running job's estimated end, the end of a reservation or of a
maintenance window) or is taken (``-1``: the start of a reservation or of a maintenance window).
Intervals are half-open: what comes back at *t* can be used from *t* on.

:meth:`NodeProfile.earliest` finds the earliest time a job fits for its whole estimate and
where; :meth:`NodeProfile.reserve` holds it there (a start now takes from ``base``).
:meth:`NodeProfile.fits_now` asks whether a job can start now without touching a reservation.
A reservation prefers nodes that are busy now, so that free ones stay for backfilling (on N
one-core nodes this is exactly the "extra processors" of EASY's shadow time).

The resources free throughout a window are the lower of what is free at its start and, on the
nodes of each change that takes resources inside it, what is left right after that change: a
node's free resources only drop at such a change. So each taking change keeps what is left on
its nodes right after it (``after``), kept up to date as jobs start and reservations are made;
a window then costs one pass over the few taking changes, not over every running job. The free
resources at a future time are ``base`` plus every change and running job's end up to it,
summed in NumPy over their nodes (on every node for placement's search; on a reservation's
nodes alone where only they matter: a taking's ``after``, :meth:`NodeProfile.earliest_on`),
and candidate times are screened first by the cores free in the job's partition, a necessary
condition, so the exact test runs once or twice.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left, bisect_right, insort
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from sitesim.platform.placement import Alloc, Demand, Free, Partitions, place
from sitesim.platform.releases import Releases

#: Events on some nodes (:meth:`NodeProfile._events_on`): times, whether each gives back, the
#: position of its node among them, and its signed cores, GPUs and memory (None: none).
_Events = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Any, Any]


class _Log:
    """The entries of a profile's changes in the order they were added (not by time): time,
    whether it gives back, node, and its signed cores, GPUs and memory. Changes are written
    into the columns when next read, those added since at once; the columns grow by doubling
    (an added change costs its own entries, not a rebuild of every change's)."""

    __slots__ = ("_columns", "_pending", "gpus_seen", "memory_seen", "size")

    def __init__(self, changes: Sequence[tuple[float, int, Alloc]] = ()) -> None:
        self._pending = list(changes)
        self.size = 0
        #: time, gives back, node, cores, GPUs, memory (GPUs and memory zero until seen).
        self._columns: tuple[np.ndarray, ...] = (
            np.empty(0), np.empty(0, dtype=bool), *(np.zeros(0, dtype=np.int64),) * 4,
        )  # fmt: skip
        self.gpus_seen = self.memory_seen = False

    def add(self, time: float, sign: int, alloc: Alloc) -> None:
        self._pending.append((time, sign, alloc))

    def entries(self) -> tuple[Any, ...]:
        """The columns, as many rows as there are entries (GPUs or memory None: none)."""
        if self._pending:
            self._write()
        n = self.size
        time, back, node, cores, gpus, memory = self._columns
        return (
            time[:n], back[:n], node[:n], cores[:n],
            gpus[:n] if self.gpus_seen else None, memory[:n] if self.memory_seen else None,
        )  # fmt: skip

    def _write(self) -> None:
        changes, self._pending = self._pending, []
        sizes = [len(alloc.nodes) for _, _, alloc in changes]
        low = self.size
        high = low + sum(sizes)
        if high > len(self._columns[0]):
            room = max(64, 2 * high)
            self._columns = tuple(
                np.concatenate([c[:low], np.zeros(room - low, dtype=c.dtype)])
                for c in self._columns
            )
        time, back, node, cores, gpus, memory = self._columns
        sign = np.repeat(np.array([c[1] for c in changes], dtype=np.int64), sizes)
        time[low:high] = np.repeat([c[0] for c in changes], sizes)
        back[low:high] = sign > 0
        node[low:high] = np.concatenate([c[2].nodes for c in changes])
        cores[low:high] = np.concatenate([c[2].cores for c in changes]) * sign
        added = np.concatenate([c[2].gpus for c in changes])
        if self.gpus_seen or np.count_nonzero(added):
            self.gpus_seen = True
            gpus[low:high] = added * sign
        added = np.concatenate([c[2].memory for c in changes])
        if self.memory_seen or np.count_nonzero(added):
            self.memory_seen = True
            memory[low:high] = added * sign
        self.size = high


class _Forward:
    """What is free on every node of a profile at ``time``, a time that only moves forward
    (:meth:`at`): ``base``, the running jobs' rows ending by then and the plan's changes by
    then; a change added after ``time`` waits for it in a heap, one added at or before it is
    applied at once."""

    __slots__ = ("_added", "_done", "_rows", "_waiting", "state", "time")

    def __init__(self, profile: NodeProfile) -> None:
        self.state = profile.base.copy()
        self.time = profile.now
        self._rows = profile._table_by_end(None) if profile.table is not None else None
        self._done = 0  # (rows applied)
        changes = zip(profile._times, range(len(profile._times)), profile._signs,
                      profile._allocs, strict=True)  # fmt: skip
        self._waiting = list(changes)  # (by time: a heap)
        self._added = len(self._waiting)

    def add(self, time: float, sign: int, alloc: Alloc) -> None:
        if time <= self.time:
            _change(self.state, sign, alloc)
        else:
            heapq.heappush(self._waiting, (time, self._added, sign, alloc))
            self._added += 1

    def at(self, t: float) -> Free:
        """What is free at ``t`` (no earlier than the last time asked); read it before the
        next call."""
        rows = self._rows
        if rows is not None:
            k = int(rows[0].searchsorted(t, side="right"))
            if k > self._done:
                _add_rows(self.state, rows[1:], self._done, k)
                self._done = k
        waiting = self._waiting
        while waiting and waiting[0][0] <= t:
            _, _, sign, alloc = heapq.heappop(waiting)
            _change(self.state, sign, alloc)
        self.time = t
        return self.state


def _change(state: Free, sign: int, alloc: Alloc) -> None:
    if sign > 0:
        state.give(alloc)
    else:
        state.take(alloc)


class _Taking:
    """A change that takes resources at ``time`` (a reservation or a maintenance window), and
    what is left on its nodes right after it; ``cores_only``: it takes no GPU and no memory
    (what is left of them then is never the least of a window: :meth:`NodeProfile._window`)."""

    __slots__ = ("after", "alloc", "cores_only", "time")

    def __init__(self, time: float, alloc: Alloc, after: Free) -> None:
        self.time = time
        self.alloc = alloc
        self.after = after  # (arrays aligned with alloc.nodes)
        self.cores_only = not (np.count_nonzero(alloc.gpus) or np.count_nonzero(alloc.memory))


class NodeProfile:
    """Resources free from ``now`` on.

    Args:
        parts: the platform's partitions.
        now: the clock.
        free: resources free now (the profile keeps this object and changes it).
        changes: ``(time, sign, alloc)``, times after ``now``: ``+1`` resources come back at
            ``time``, ``-1`` they are taken then.
        releases: what the running jobs hold, coming back at their estimated ends (the
            machine's table, read as it is: it must not change while the profile is used).
    """

    __slots__ = (
        "_allocs", "_begun", "_flat", "_forward", "_log", "_now_cores", "_now_windows",
        "_part_cores", "_read", "_signs", "_sorted", "_state", "_table_cores", "_taking",
        "_times", "_whole", "base", "now", "parts", "table",
    )  # fmt: skip

    def __init__(
        self,
        parts: Partitions,
        now: float,
        free: Free,
        changes: list[tuple[float, int, Alloc]],
        releases: Releases | None = None,
    ) -> None:
        self.parts = parts
        self.now = now
        self.base = free
        self.table = releases
        #: The running jobs' rows by end, per group of partitions read (None: all).
        self._sorted: dict[int | None, tuple[Any, ...]] = {}
        changes = sorted(changes, key=lambda c: c[0])  # (stable: the order given at ties)
        self._times = [c[0] for c in changes]
        self._signs = [c[1] for c in changes]
        self._allocs = [c[2] for c in changes]
        self._flat: tuple[np.ndarray, ...] | None = None
        self._log = _Log(changes)
        #: What reservations began by now took (from ``base``): their jobs start now.
        self._begun: list[Alloc] = []
        #: Every node's state at a time that only moves forward, for takings made in time
        #: order (made at the second taking read on its own nodes' events: ``_read``).
        self._forward: _Forward | None = None
        self._read = 0
        #: Per partition: each change's signed cores in it, and the running jobs' cumulated.
        self._part_cores: dict[int, list[int]] = {}
        self._table_cores: dict[int, np.ndarray] = {}
        #: Windows from now, by how many taking changes they hold (until the next change).
        self._now_windows: dict[int, Free] = {}
        #: The cores free in a partition in those windows, by (takings held, partition).
        self._now_cores: dict[tuple[int, int], int] = {}
        self._taking: list[_Taking] = []
        #: What :meth:`earliest` or :meth:`earliest_on` last found free at its answer: (time,
        #: changes then, state on where's nodes (arrays aligned with them), where).
        self._state: tuple[float, int, Free, Alloc] | None = None
        #: What :meth:`earliest` last found free on every node at its answer, and where.
        self._whole: tuple[Free, Alloc, int] | None = None
        for k, sign in enumerate(self._signs):
            if sign < 0:
                self._taking.append(self._new_taking(self._times[k], self._allocs[k]))

    # -- states ----------------------------------------------------------------------------
    def _flatten(self) -> tuple[np.ndarray, ...]:
        """Every change's entries side by side: change index, node, signed cores, GPUs,
        memory (rebuilt after a change is added)."""
        if self._flat is None:
            allocs = self._allocs
            if allocs:
                sizes = [len(a.nodes) for a in allocs]
                which = np.repeat(np.arange(len(allocs)), sizes)
                sign = np.repeat(np.array(self._signs, dtype=np.int64), sizes)
                nodes = np.concatenate([a.nodes for a in allocs])
                cores = np.concatenate([a.cores for a in allocs]) * sign
                gpus = np.concatenate([a.gpus for a in allocs]) * sign
                memory = np.concatenate([a.memory for a in allocs]) * sign
            else:
                which = nodes = cores = gpus = memory = np.zeros(0, dtype=np.int64)
            self._flat = (which, nodes, cores, gpus, memory)
        return self._flat

    def _walk(self, group: int | None) -> Callable[[float], Free]:
        """Resources free at ascending times (every change and running job's end up to then
        applied to ``base``) on the nodes of ``group`` (None: all; the others without the
        running jobs' ends), each state from the last one plus what changed in between (the
        state returned is reused: read it before the next call)."""
        state = self.base.copy()
        table = self._table_by_end(group) if self.table is not None else None
        flat = self._flatten() if self._times else None
        done = [0, 0]  # rows of the table, entries of the changes, applied

        def at(t: float) -> Free:
            if table is not None:
                k = int(table[0].searchsorted(t, side="right"))
                if k > done[0]:
                    _add_rows(state, table[1:], done[0], k)
                    done[0] = k
            if flat is not None:
                end = int(flat[0].searchsorted(bisect_right(self._times, t)))
                if end > done[1]:
                    _add_rows(state, flat[1:], done[1], end)
                    done[1] = end
            return state

        return at

    def _new_taking(self, time: float, alloc: Alloc) -> _Taking:
        kept = self._state
        if (
            kept is not None
            and kept[3] is alloc
            and kept[0] == time
            and kept[1] + 1 == len(self._times)
        ):  # (what a search found free then for it, and the taking itself: the one change since)
            before = kept[2]
            after = Free(
                before.cores - alloc.cores, before.gpus - alloc.gpus, before.memory - alloc.memory
            )
        elif self._forward is not None and time >= self._forward.time:
            after = self._forward.at(time).on(alloc.nodes)  # (the change itself included)
        else:
            after = self.base.on(alloc.nodes)
            at = self._positions(alloc.nodes)
            events = self._events_on(at, time, by_time=False)  # (the change itself included)
            _add_rows(after, events[2:], 0, len(events[0]))
            self._read += 1
            if self._read == 2:  # (one taking: its own nodes' events were enough; more: one
                self._forward = _Forward(self)  # walk forward may serve them)
        return _Taking(time, alloc, after)

    def _positions(self, nodes: np.ndarray) -> np.ndarray:
        """Per node of the platform, its position in ``nodes`` (-1: not there)."""
        at = np.full(len(self.parts.node_group), -1, dtype=np.int64)
        at[nodes] = np.arange(len(nodes))
        return at

    def _events_on(self, at: np.ndarray, until: float, by_time: bool = True) -> _Events:
        """What comes back to or is taken from some nodes (``at``: :meth:`_positions`) after
        now and up to ``until``: the running jobs' rows and the plan's changes on them, each
        with its node's position; by time if ``by_time`` (ties in no particular order: a
        state is read once all of a time's events are in)."""
        mine = at >= 0
        time, back, where, cores, gpus, memory = self._log.entries()
        on = mine[where] & (time <= until)
        times, back, where, cores = time[on], back[on], where[on], cores[on]
        gpus = None if gpus is None else gpus[on]
        memory = None if memory is None else memory[on]
        if self.table is not None:
            groups = self.parts.node_group[mine]  # (a row of another group frees its nodes)
            group = int(groups[0]) if not np.count_nonzero(groups != groups[0]) else None
            ends, row_nodes, row_cores, row_gpus, row_memory = self._table_by_end(group)
            k = int(ends.searchsorted(until, side="right"))
            rows = mine[row_nodes[:k]]
            if np.count_nonzero(rows):
                before, added = len(times), int(rows.sum())
                times = np.concatenate([times, ends[:k][rows]])
                back = np.concatenate([back, np.ones(added, dtype=bool)])
                where = np.concatenate([where, row_nodes[:k][rows]])
                cores = np.concatenate([cores, row_cores[:k][rows]])
                gpus = _joined(
                    gpus, None if row_gpus is None else row_gpus[:k][rows], before, added
                )
                memory = _joined(
                    memory, None if row_memory is None else row_memory[:k][rows], before, added
                )
        if not by_time:
            return times, back, at[where], cores, gpus, memory
        order = times.argsort(kind="stable")
        return (
            times[order], back[order], at[where[order]], cores[order],
            None if gpus is None else gpus[order], None if memory is None else memory[order],
        )  # fmt: skip

    def _window(self, state: Free, start: float, end: float) -> Free:
        """``state`` (free at ``start``) lowered to what stays free until ``end``: on each
        node, the least of it and of what each taking in between leaves. GPUs and memory
        fall only at the takings that take some, so the others are not read for them."""
        takings = self._taking  # (by time)
        first = bisect_right(takings, start, key=_time)
        inside = takings[first : bisect_left(takings, end, first, key=_time)]
        if not inside:
            return state
        low = state.copy()
        if len(inside) == 1:
            (taking,) = inside
            nodes, after = taking.alloc.nodes, taking.after
            low.cores[nodes] = np.minimum(low.cores[nodes], after.cores)
            if not taking.cores_only:
                low.gpus[nodes] = np.minimum(low.gpus[nodes], after.gpus)
                low.memory[nodes] = np.minimum(low.memory[nodes], after.memory)
            return low
        nodes = np.concatenate([taking.alloc.nodes for taking in inside])
        np.minimum.at(low.cores, nodes, np.concatenate([t.after.cores for t in inside]))
        inside = [taking for taking in inside if not taking.cores_only]
        if inside:
            nodes = np.concatenate([taking.alloc.nodes for taking in inside])
            for k in (1, 2):  # (GPUs, memory: each node's lowest)
                np.minimum.at(low[k], nodes, np.concatenate([t.after[k] for t in inside]))
        return low

    # -- questions -------------------------------------------------------------------------
    def fits_now(self, demand: Demand, duration: float) -> Alloc | None:
        """Where ``demand`` can start now and run ``duration`` seconds without touching a
        reservation, or None."""
        end = self.now + duration
        held = bisect_left(self._taking, end, key=_time)  # (those before it; all after now)
        window = self._now_windows.get(held)
        if window is None:
            window = self._now_windows[held] = self._window(self.base, self.now, end)
        part = demand.part
        if not (demand.nodes or self.parts.exclusive[part]):  # (placement's first test, kept)
            free = self._now_cores.get((held, part))
            if free is None:
                free = self._now_cores[held, part] = self._part_cores_of(window, part)
            if free < demand.cores:
                return None
        return place(self.parts, demand, window)

    def earliest(self, demand: Demand, duration: float) -> tuple[float, Alloc | None]:
        """The earliest start of ``demand`` for ``duration`` seconds and where; ``(inf,
        None)`` if it never fits (nodes down with no known return).

        The times tried are those at which the cores free in the job's partition change and
        reach its cores (a necessary condition). For a demand of cores only on a shared
        partition, at a time with no reservation or window beginning before the job would
        end, they are also enough: placement then succeeds on what is free at that time."""
        now = self.now
        self._state = self._whole = None  # (what it finds free at its answer: for it alone)
        free_now = self.base.cores > 0  # (used last)
        simple = self._cores_only(demand)
        if not (simple and self._clear(now, now + duration)):
            state = self._window(self.base, now, now + duration)
        elif self._part_cores_of(self.base, demand.part) >= demand.cores:
            state = self.base
        else:
            state = None
        if state is not None and (alloc := place(self.parts, demand, state, free_now)):
            return now, alloc
        state_at = self._walk(self.parts.group[demand.part])
        for t in self._candidates(demand.part, demand.cores):
            state = state_at(t)
            if simple and self._clear(t, t + duration):
                alloc = place(self.parts, demand, state, free_now)
                assert alloc is not None  # (the cores are there, on nodes it may use)
            else:
                alloc = place(self.parts, demand, self._window(state, t, t + duration), free_now)
            if alloc is not None:
                self._state = (t, len(self._times), state.on(alloc.nodes), alloc)
                self._whole = (state, alloc, demand.part)  # (the walk's state: not read again)
                return t, alloc
        return math.inf, None

    def free_at(self, t: float, where: Alloc) -> Free | None:
        """What :meth:`earliest` found free at its answer ``(t, where)`` on where's nodes, or
        None if it kept nothing."""
        kept = self._state
        if kept is None or kept[3] is not where or kept[0] != t or kept[1] != len(self._times):
            return None
        return kept[2]

    def state_found(self, t: float, where: Alloc) -> tuple[Free, int] | None:
        """What :meth:`earliest` found free on every node at its answer ``(t, where)`` (the
        caller owns it from then on), and its partition's :func:`level` just before ``t``
        (what the running jobs ending at ``t`` hold taken back: the plan must change nothing
        on its nodes at ``t``), if it kept them and the plan did not change since."""
        whole, self._whole = self._whole, None
        if whole is None or whole[1] is not where or self.free_at(t, where) is None:
            return None
        state, part = whole[0], whole[2]
        cores = state.cores
        if self.table is not None:
            ends, nodes, held, _, _ = self._table_by_end(self.parts.group[part])
            low = int(ends.searchsorted(t))
            high = int(ends.searchsorted(t, side="right"))  # (rows low:high end at t)
            if high > low:
                cores = cores.copy()
                np.subtract.at(cores, nodes[low:high], held[low:high])
        return state, level(self.parts, part, cores)

    def expect(self, t: float, where: Alloc, free: Free) -> None:
        """The reservation of ``where`` at ``t``, where ``free`` is what is free then on
        where's nodes, may come next (an answer of :meth:`earliest` found before, ``free`` as
        :meth:`free_at` gave it: its taking reads ``free``)."""
        self._state = (t, len(self._times), free, where)

    def _cores_only(self, demand: Demand) -> bool:
        """True for a demand of cores only (no node count, GPUs or memory) on a shared
        partition: placement takes any free cores of its nodes."""
        asks = demand.nodes or demand.gpus or demand.memory
        return not (asks or self.parts.exclusive[demand.part])

    def _clear(self, start: float, end: float) -> bool:
        """True if no reservation or window begins in ``(start, end)``."""
        takings = self._taking
        return bisect_right(takings, start, key=_time) == bisect_left(takings, end, key=_time)

    def _part_cores_of(self, state: Free, part: int) -> int:
        return int(state.cores[self.parts.select[part]].sum())

    def earliest_on(self, alloc: Alloc, duration: float, latest: float) -> float | None:
        """The earliest start, no later than ``latest``, at which ``alloc`` (those very
        resources) is free for ``duration`` seconds; None if there is none.

        Only now and the times something comes back on ``alloc``'s nodes are tried: from one
        of them to the next, what is free there only falls, so a later start that fits means
        the earlier one fits too (its window's lowest point is no lower). Everything is read
        on ``alloc``'s nodes alone."""
        now = self.now
        self._state = None
        state = self.base.on(alloc.nodes)
        at = self._positions(alloc.nodes)
        events = self._events_on(at, latest)
        times, back = events[0], events[1]
        done = 0
        for t in [now, *np.unique(times[back & (times > now)]).tolist()]:
            if t > now:
                upto = int(times.searchsorted(t, side="right"))
                _add_rows(state, events[2:], done, upto)
                done = upto
            if self._holds_during(state, t, t + duration, alloc, at):
                if t > now:  # (what is free then: its reservation's taking reads it)
                    self._state = (t, len(self._times), state, alloc)
                return t
        return None

    def _holds_during(
        self, state: Free, start: float, end: float, alloc: Alloc, at: np.ndarray
    ) -> bool:
        """True if ``alloc`` stays free from ``start`` until ``end``, ``state`` being what is
        free at ``start`` on its nodes (arrays aligned with them; ``at``: their positions,
        :meth:`_positions`)."""
        if (
            np.count_nonzero(state.cores < alloc.cores)
            or np.count_nonzero(state.gpus < alloc.gpus)
            or np.count_nonzero(state.memory < alloc.memory)
        ):
            return False  # (not free at its start)
        takings = self._taking
        first = bisect_right(takings, start, key=_time)
        inside = takings[first : bisect_left(takings, end, first, key=_time)]
        if not inside:
            return True
        held = at[np.concatenate([taking.alloc.nodes for taking in inside])]
        shared = held >= 0  # (held nodes among alloc's)
        held = held[shared]
        for k, need in enumerate(alloc[1:]):  # (cores, GPUs, memory: each node's lowest)
            low = state[k].copy()
            np.minimum.at(low, held, np.concatenate([t.after[k] for t in inside])[shared])
            if np.count_nonzero(low < need):
                return False
        return True

    def _candidates(self, part: int, cores: int) -> Iterator[float]:
        """The times, ascending, at which something changes and the cores free in partition
        ``part`` reach ``cores`` (a necessary condition for a start: a window only lowers
        them)."""
        member = self.parts.member[part]
        base = self._part_cores_of(self.base, part)
        extra_times = self._times
        if not extra_times:  # (the running jobs' ends alone: the level only rises)
            if self.table is not None:
                ends = self._table_by_end(self.parts.group[part])[0]
                reached = int(self._table_cores_of(part).searchsorted(cores - base))
                last_time = math.nan
                for t in ends[max(reached - 1, 0) :]:  # (from the row that reaches them)
                    if t != last_time:
                        last_time = t
                        yield float(t)
            return
        extra = self._part_cores.get(part)
        if extra is None:  # (kept up to date as changes are added)
            extra = self._part_cores[part] = [
                sign * int(a.cores[member[a.nodes]].sum())
                for sign, a in zip(self._signs, self._allocs, strict=True)
            ]
        extras = np.concatenate([[0], np.cumsum(extra, dtype=np.int64)])
        changed = np.array(extra_times)
        table: Iterator[float] = iter(())
        if self.table is not None:
            ends = self._table_by_end(self.parts.group[part])[0]
            inside = self._table_cores_of(part)
            if len(ends):  # (the level after the last row ending at each time)
                last = np.ones(len(ends), dtype=bool)
                last[:-1] = ends[1:] != ends[:-1]
                level = base + inside[1:] + extras[changed.searchsorted(ends, side="right")]
                table = iter(ends[last & (level >= cores)])
            level = base + inside[ends.searchsorted(changed, side="right")]
        else:
            level = np.full(len(changed), base, dtype=np.int64)
        level = level + extras[changed.searchsorted(changed, side="right")]
        last_time = math.nan
        for t in heapq.merge(table, changed[level >= cores].tolist()):
            if t != last_time:
                last_time = t
                yield float(t)

    def _table_cores_of(self, part: int) -> np.ndarray:
        """The cores of the first k rows of the table in partition ``part``, k = 0, 1, ..."""
        inside = self._table_cores.get(part)
        if inside is None:
            _, nodes, row_cores, _, _ = self._table_by_end(self.parts.group[part])
            inside = np.concatenate([[0], (row_cores * self.parts.member[part][nodes]).cumsum()])
            self._table_cores[part] = inside
        return inside

    def _table_by_end(self, group: int | None) -> tuple[np.ndarray, ...]:
        """The running jobs' rows of ``group`` (None: all) by estimated end
        (:meth:`Releases.by_end`)."""
        found = self._sorted.get(group)
        if found is None:
            assert self.table is not None
            found = self._sorted[group] = self.table.by_end(group)
        return found

    # -- changes ---------------------------------------------------------------------------
    def advance(self, now: float, base: Free | None = None) -> None:
        """The clock moved to ``now``: with nothing changed before it (no change is due), or,
        given ``base`` (what is free now), as planned: every job reserved to start by the
        last time read has started (the running jobs' table holds it now), those reserved for
        now are about to (taken from ``base``), and no job ended before its estimate."""
        self.now = now
        if base is None:
            return
        self.base = base
        started = {id(alloc) for alloc in self._begun}
        self._begun = []
        changes = []
        for change in zip(self._times, self._signs, self._allocs, strict=True):
            time, sign, alloc = change
            if id(alloc) in started:
                continue
            if sign < 0 and time <= now:  # (due now)
                base.take(alloc)
                self._begun.append(alloc)
                continue
            changes.append(change)
        self._times = [c[0] for c in changes]
        self._signs = [c[1] for c in changes]
        self._allocs = [c[2] for c in changes]
        self._log = _Log(changes)
        self._taking = [taking for taking in self._taking if taking.time > now]
        self._flat = self._state = self._forward = None
        self._read = 0
        for cache in (self._sorted, self._part_cores, self._table_cores, self._now_windows,
                      self._now_cores):  # fmt: skip
            cache.clear()

    def reserve(self, start: float, duration: float, alloc: Alloc) -> None:
        """Hold ``alloc`` on ``[start, start + duration)``."""
        self._now_windows.clear()
        self._now_cores.clear()
        end = start + duration
        for taking in self._taking:  # those it overlaps have less left after them
            if start <= taking.time < end:
                _lower(taking, alloc)
        if start <= self.now:
            self.base.take(alloc)
            self._begun.append(alloc)
            if self._forward is not None:
                self._forward.state.take(alloc)
        else:
            self._add(start, -1, alloc)
            taking = self._new_taking(start, alloc)
            insort(self._taking, taking, key=_time)
        self._add(end, 1, alloc)

    def _add(self, time: float, sign: int, alloc: Alloc) -> None:
        k = bisect_right(self._times, time)
        self._times.insert(k, time)
        self._signs.insert(k, sign)
        self._allocs.insert(k, alloc)
        self._flat = None
        self._log.add(time, sign, alloc)
        if self._forward is not None:
            self._forward.add(time, sign, alloc)
        member = self.parts.member
        for part, extra in self._part_cores.items():
            extra.insert(k, sign * int(alloc.cores[member[part][alloc.nodes]].sum()))


def _lower(taking: _Taking, alloc: Alloc) -> None:
    """``alloc`` holds resources at ``taking.time``: less is left on the nodes they share."""
    nodes, other = taking.alloc.nodes, alloc.nodes  # (each ascending)
    if not len(other) or other[-1] < nodes[0] or other[0] > nodes[-1]:
        return
    at = nodes.searchsorted(other)  # (where each of alloc's nodes is, if it is there)
    there = at < len(nodes)
    there[there] = nodes[at[there]] == other[there]
    if np.count_nonzero(there):
        here, after = at[there], taking.after
        after.cores[here] -= alloc.cores[there]
        after.gpus[here] -= alloc.gpus[there]
        after.memory[here] -= alloc.memory[there]


def level(parts: Partitions, part: int, cores: np.ndarray) -> int:
    """What a demand of cores alone can be given in partition ``part`` when ``cores`` are free
    on each node: the cores free on its nodes, or the cores of its idle nodes if it gives
    whole nodes (placement's test, :func:`~sitesim.platform.placement.place`)."""
    on = cores[parts.select[part]]
    if not parts.exclusive[part]:
        return int(on.sum())
    whole = parts.platform.cores[parts.select[part]]
    return int(whole[on == whole].sum())


def _add_rows(state: Free, rows: tuple[Any, ...], start: int, stop: int) -> None:
    """Add rows ``start:stop`` of ``(nodes, cores, GPUs, memory)`` (GPUs or memory None: none)
    to ``state`` (the nodes as indices into its arrays: a state of some nodes takes their
    positions)."""
    nodes = rows[0][start:stop]
    for target, values in zip(state, rows[1:], strict=True):
        if values is None:
            continue
        part = values[start:stop]
        if len(part) > 256:
            target += np.bincount(nodes, part, len(target)).astype(np.int64)
        else:
            np.add.at(target, nodes, part)


def _joined(first: Any, second: Any, before: int, after: int) -> Any:
    """Two columns of events one after the other (``before`` and ``after`` of them; a
    column of GPUs or memory None: none); None if neither holds any."""
    if first is None and second is None:
        return None
    first = np.zeros(before, dtype=np.int64) if first is None else first
    second = np.zeros(after, dtype=np.int64) if second is None else second
    return np.concatenate([first, second])


def _time(taking: _Taking) -> float:
    return taking.time
