"""Free resources of a platform's nodes over future time, with concrete reservations.

The node counterpart of :class:`~sitesim.schedulers.availability.AvailabilityProfile`: it
starts from the resources free now and a sorted list of *changes*, each an allocation that
comes back (a running job's estimated end, the end of a reservation or of a maintenance
window) or is taken (the start of a reservation or of a maintenance window). Intervals are
half-open: what comes back at *t* can be used from *t* on.

:meth:`NodeProfile.earliest` finds the earliest time a job fits for its whole estimate and
where, :meth:`NodeProfile.reserve` holds it there. A reservation prefers nodes that are busy
now, so that the free ones stay for backfilling (on N one-core nodes this is exactly the
"extra processors" of EASY's shadow time).
"""

from __future__ import annotations

import math
from bisect import insort
from itertools import count

import numpy as np

from sitesim.placement import Alloc, Demand, Free, Partitions, place

_SEQ = count()


class NodeProfile:
    """Resources free from ``now`` on.

    Args:
        parts: the platform's partitions.
        now: the clock.
        free: resources free now (the profile keeps this object and changes it).
        changes: ``(time, sign, alloc)``: ``+1`` resources come back at ``time``, ``-1`` they
            are taken then; any order.
    """

    __slots__ = ("_changes", "_negative", "base", "now", "parts")

    def __init__(
        self,
        parts: Partitions,
        now: float,
        free: Free,
        changes: list[tuple[float, int, Alloc]],
    ) -> None:
        self.parts = parts
        self.now = now
        self.base = free
        self._changes: list[tuple[float, int, int, Alloc]] = sorted(
            (t, next(_SEQ), sign, alloc) for t, sign, alloc in changes
        )
        self._negative = sum(1 for c in self._changes if c[2] < 0)

    def fits_now(self, demand: Demand, duration: float) -> Alloc | None:
        """Where ``demand`` can start now and run ``duration`` seconds without touching a
        reservation, or None."""
        return place(self.parts, demand, self._window(self.base, 0, self.now + duration))

    def earliest(self, demand: Demand, duration: float) -> tuple[float, Alloc | None]:
        """The earliest start of ``demand`` for ``duration`` seconds and where; ``(inf,
        None)`` if it never fits (nodes down with no known return)."""
        changes = self._changes
        n = len(changes)
        free_now = self.base.cores > 0  # (used last)
        cur = self.base.copy()
        i = 0
        t = self.now
        while True:
            while i < n and changes[i][0] <= t:
                _apply(cur, changes[i])
                i += 1
            free = self._window(cur, i, t + duration) if self._negative else cur
            alloc = place(self.parts, demand, free, last=free_now)
            if alloc is not None:
                return t, alloc
            while i < n and changes[i][2] < 0:  # the next time something comes back
                _apply(cur, changes[i])
                i += 1
            if i == n:
                return math.inf, None
            t = changes[i][0]

    def _window(self, cur: Free, i: int, end: float) -> Free:
        """Resources free throughout [time of ``cur``, ``end``): ``cur`` lowered by what
        changes ``i``, ... take before ``end``."""
        changes = self._changes
        if i >= len(changes) or changes[i][0] >= end or not self._negative:
            return cur
        low = cur.copy()
        run = cur.copy()
        for time, _, sign, alloc in changes[i:]:
            if time >= end:
                break
            if sign > 0:
                run.give(alloc)
            else:
                run.take(alloc)
                nodes = alloc.nodes
                low.cores[nodes] = np.minimum(low.cores[nodes], run.cores[nodes])
                low.gpus[nodes] = np.minimum(low.gpus[nodes], run.gpus[nodes])
                low.memory[nodes] = np.minimum(low.memory[nodes], run.memory[nodes])
        return low

    def reserve(self, start: float, duration: float, alloc: Alloc) -> None:
        """Hold ``alloc`` on ``[start, start + duration)``."""
        if start <= self.now:
            self.base.take(alloc)
        else:
            insort(self._changes, (start, next(_SEQ), -1, alloc))
            self._negative += 1
        insort(self._changes, (start + duration, next(_SEQ), 1, alloc))


def _apply(free: Free, change: tuple[float, int, int, Alloc]) -> None:
    if change[2] > 0:
        free.give(change[3])
    else:
        free.take(change[3])
