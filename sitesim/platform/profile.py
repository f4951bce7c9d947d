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
resources at a future time are ``base`` plus every change up to it, summed in NumPy over the
changes' nodes at once (:meth:`state_at`), and candidate times are screened first by the cores
free in the job's partition, a necessary condition, so the exact test runs once or twice.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right, insort
from collections.abc import Callable
from typing import Any

import numpy as np

from sitesim.platform.placement import Alloc, Demand, Free, Partitions, place
from sitesim.platform.releases import Releases


class _Taking:
    """A change that takes resources at ``time`` (a reservation or a maintenance window), and
    what is left on its nodes right after it."""

    __slots__ = ("after", "alloc", "time")

    def __init__(self, time: float, alloc: Alloc, after: Free) -> None:
        self.time = time
        self.alloc = alloc
        self.after = after  # (arrays aligned with alloc.nodes)


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
        "_allocs", "_flat", "_now_windows", "_part_cores", "_signs", "_sorted", "_table_cores",
        "_taking", "_times", "base", "now", "parts", "table",
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
        self._sorted: tuple[Any, ...] | None = None
        changes = sorted(changes, key=lambda c: c[0])  # (stable: the order given at ties)
        self._times = [c[0] for c in changes]
        self._signs = [c[1] for c in changes]
        self._allocs = [c[2] for c in changes]
        self._flat: tuple[np.ndarray, ...] | None = None
        #: Per partition: each change's signed cores in it, and the running jobs' cumulated.
        self._part_cores: dict[int, list[int]] = {}
        self._table_cores: dict[int, np.ndarray] = {}
        #: Windows from now, by how many taking changes they hold (until the next change).
        self._now_windows: dict[int, Free] = {}
        self._taking: list[_Taking] = []
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

    def state_at(self, t: float) -> Free:
        """Resources free at ``t`` (every change up to ``t`` applied to ``base``)."""
        state = self.base.copy()
        n = len(state.cores)
        if self.table is not None:
            ends, nodes, cores, gpus, memory = self._table_by_end()
            k = int(np.searchsorted(ends, t, side="right"))
            if k:
                state.cores[:] += np.bincount(nodes[:k], cores[:k], n).astype(np.int64)
                if gpus is not None:
                    state.gpus[:] += np.bincount(nodes[:k], gpus[:k], n).astype(np.int64)
                if memory is not None:
                    state.memory[:] += np.bincount(nodes[:k], memory[:k], n).astype(np.int64)
        upto = bisect_right(self._times, t)
        if upto:
            which, nodes, cores, gpus, memory = self._flatten()
            end = int(np.searchsorted(which, upto))
            state.cores[:] += np.bincount(nodes[:end], cores[:end], n).astype(np.int64)
            if gpus[:end].any():
                state.gpus[:] += np.bincount(nodes[:end], gpus[:end], n).astype(np.int64)
            if memory[:end].any():
                state.memory[:] += np.bincount(nodes[:end], memory[:end], n).astype(np.int64)
        return state

    def _walk(self) -> Callable[[float], Free]:
        """:meth:`state_at` for ascending times, each state from the last one plus the
        changes in between (the state returned is reused: read it before the next call)."""
        state = self.base.copy()
        table = self._table_by_end() if self.table is not None else None
        flat = self._flatten() if self._times else None
        done = [0, 0]  # rows of the table, entries of the changes, applied

        def at(t: float) -> Free:
            if table is not None:
                k = int(np.searchsorted(table[0], t, side="right"))
                if k > done[0]:
                    _add_rows(state, table[1:], done[0], k)
                    done[0] = k
            if flat is not None:
                end = int(np.searchsorted(flat[0], bisect_right(self._times, t)))
                if end > done[1]:
                    _add_rows(state, flat[1:], done[1], end)
                    done[1] = end
            return state

        return at

    def _new_taking(self, time: float, alloc: Alloc) -> _Taking:
        state = self.state_at(time)  # (the change itself included)
        nodes = alloc.nodes
        after = Free(state.cores[nodes], state.gpus[nodes], state.memory[nodes])
        return _Taking(time, alloc, after)

    def _window(self, state: Free, start: float, end: float) -> Free:
        """``state`` (free at ``start``) lowered to what stays free until ``end``."""
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
            low.gpus[nodes] = np.minimum(low.gpus[nodes], after.gpus)
            low.memory[nodes] = np.minimum(low.memory[nodes], after.memory)
            return low
        nodes = np.concatenate([taking.alloc.nodes for taking in inside])
        for k, target in enumerate(low):  # (cores, GPUs, memory: each node's lowest)
            np.minimum.at(target, nodes, np.concatenate([t.after[k] for t in inside]))
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
        return place(self.parts, demand, window)

    def earliest(self, demand: Demand, duration: float) -> tuple[float, Alloc | None]:
        """The earliest start of ``demand`` for ``duration`` seconds and where; ``(inf,
        None)`` if it never fits (nodes down with no known return)."""
        now = self.now
        free_now = self.base.cores > 0  # (used last)
        alloc = place(self.parts, demand, self._window(self.base, now, now + duration), free_now)
        if alloc is not None:
            return now, alloc
        times, level = self._levels(demand.part)
        state_at = self._walk()
        for t in times[level >= demand.cores].tolist():
            state = self._window(state_at(t), t, t + duration)
            alloc = place(self.parts, demand, state, free_now)
            if alloc is not None:
                return t, alloc
        return math.inf, None

    def earliest_on(self, alloc: Alloc, duration: float, latest: float) -> float | None:
        """The earliest start, no later than ``latest``, at which ``alloc`` (those very
        resources) is free for ``duration`` seconds; None if there is none."""
        times = [self.now] + [t for t in sorted(set(self._times)) if self.now < t <= latest]
        if self.table is not None:
            ends = self._table_by_end()[0]
            times += ends[(ends > self.now) & (ends <= latest)].tolist()
        for t in sorted(set(times)):
            state = self.state_at(t) if t > self.now else self.base
            if self._window(state, t, t + duration).holds(alloc):
                return t
        return None

    def _levels(self, part: int) -> tuple[np.ndarray, np.ndarray]:
        """The times something changes, and the cores free in partition ``part`` then (a
        necessary condition for a start: a window only lowers it)."""
        member = self.parts.member[part]
        base = int(self.base.cores[self.parts.nodes[part]].sum())
        extra_times = np.array(self._times)
        extra = self._part_cores.get(part)
        if extra is None:  # (kept up to date as changes are added)
            extra = self._part_cores[part] = [
                sign * int(a.cores[member[a.nodes]].sum())
                for sign, a in zip(self._signs, self._allocs, strict=True)
            ]
        if self.table is not None:
            ends, nodes, cores, _, _ = self._table_by_end()
            times = np.unique(np.concatenate([ends, extra_times]))
            inside = self._table_cores.get(part)
            if inside is None:
                inside = np.concatenate([[0], np.cumsum(cores * member[nodes])])
                self._table_cores[part] = inside
            level = base + inside[np.searchsorted(ends, times, side="right")]
        else:
            times = np.unique(extra_times)
            level = np.full(len(times), base, dtype=np.int64)
        if extra:
            extras = np.concatenate([[0], np.cumsum(extra)])
            level = level + extras[np.searchsorted(extra_times, times, side="right")]
        return times, level

    def _table_by_end(self) -> tuple[np.ndarray, ...]:
        """The running jobs' rows by estimated end (:meth:`Releases.by_end`)."""
        if self._sorted is None:
            assert self.table is not None
            self._sorted = self.table.by_end()
        return self._sorted

    # -- changes ---------------------------------------------------------------------------
    def advance(self, now: float) -> None:
        """The clock moved to ``now`` with nothing changed before it (no change is due)."""
        self.now = now

    def reserve(self, start: float, duration: float, alloc: Alloc) -> None:
        """Hold ``alloc`` on ``[start, start + duration)``."""
        self._now_windows.clear()
        end = start + duration
        for taking in self._taking:  # those it overlaps have less left after them
            if start <= taking.time < end:
                _lower(taking, alloc)
        if start <= self.now:
            self.base.take(alloc)
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
        member = self.parts.member
        for part, extra in self._part_cores.items():
            extra.insert(k, sign * int(alloc.cores[member[part][alloc.nodes]].sum()))


def _lower(taking: _Taking, alloc: Alloc) -> None:
    """``alloc`` holds resources at ``taking.time``: less is left on the nodes they share."""
    nodes = taking.alloc.nodes
    common, here, there = np.intersect1d(nodes, alloc.nodes, return_indices=True)
    if len(common):
        after = taking.after
        after.cores[here] -= alloc.cores[there]
        after.gpus[here] -= alloc.gpus[there]
        after.memory[here] -= alloc.memory[there]


def _add_rows(state: Free, rows: tuple[Any, ...], start: int, stop: int) -> None:
    """Add rows ``start:stop`` of ``(nodes, cores, GPUs, memory)`` (GPUs or memory None: none)
    to ``state``."""
    nodes = rows[0][start:stop]
    for target, values in zip(state, rows[1:], strict=True):
        if values is None:
            continue
        part = values[start:stop]
        if len(part) > 256:
            target += np.bincount(nodes, part, len(target)).astype(np.int64)
        else:
            np.add.at(target, nodes, part)


def _time(taking: _Taking) -> float:
    return taking.time
