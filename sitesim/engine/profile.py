"""Free processors over future time: the shadow time of EASY, and the availability profile.

:func:`shadow_time` is when a job could start as the running jobs end, with nothing reserved.
The :class:`AvailabilityProfile` is the plan of a pass on processors as a step function: a job is
placed at the earliest time it fits for its whole estimated runtime, then taken off the profile
(planning schedulers keep one from pass to pass). A platform's nodes have their own
(:mod:`sitesim.platform.profile`).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable

from sitesim.engine.resources import Running


class AvailabilityProfile:
    """Free processors from ``now`` on: ``free[k]`` processors on ``[times[k], times[k+1])``;
    the last step lasts forever.

    Args:
        now: the clock.
        free: processors free now.
        running: running jobs ``(estimated end, id, size)`` ascending; each returns its
            processors at its estimated end.
    """

    __slots__ = ("closed", "free", "times")

    def __init__(self, now: float, free: int, running: Running) -> None:
        times = [now]
        avail = [free]
        for end, _, size in running:
            if end <= times[-1]:
                avail[-1] += size
            else:
                times.append(end)
                avail.append(avail[-1] + size)
        self.times = times
        self.free = avail
        #: The starts of closed reservations (:meth:`take`).
        self.closed: set[float] = set()

    def place(self, size: int, duration: float) -> float:
        """Reserve ``size`` processors at the earliest time they are free for ``duration``
        seconds, and return that time."""
        start = self.earliest(size, duration)
        self.take(start, size, duration)
        return start

    def earliest(self, size: int, duration: float) -> float:
        """The earliest time ``size`` processors are free for ``duration`` seconds (and at
        its end, if a closed reservation begins then)."""
        times, free, closed = self.times, self.free, self.closed
        n = len(times)
        k = 0
        while True:  # the earliest fit: step k starts it, step j is the first at or after its end
            while free[k] < size:  # the last step frees every processor, so this stops
                k += 1
            start = times[k]
            end = start + duration
            j = k + 1
            while j < n and (times[j] < end or (times[j] == end and end in closed)):
                if free[j] < size:
                    break
                j += 1
            else:
                return start
            k = j

    def place_all(self, jobs: Iterable[tuple[int, float]]) -> list[float]:
        """:meth:`place` each ``(size, duration)`` of ``jobs`` in turn; their starts.

        The same starts and the same profile as a call of :meth:`place` per job (a
        schedule's compression re-plans every waiting job in one call): :meth:`earliest`'s
        search, and :meth:`take` at the start it found (a step's start) and the first step at
        or after its end, which the search already knows. (With closed reservations, one
        :meth:`place` per job.)
        """
        if self.closed:
            return [self.place(size, duration) for size, duration in jobs]
        times, free = self.times, self.free
        starts = []
        for size, duration in jobs:
            n = len(times)
            k = 0
            while True:  # (earliest)
                while free[k] < size:
                    k += 1
                start = times[k]
                end = start + duration
                j = k + 1
                while j < n and times[j] < end:
                    if free[j] < size:
                        break
                    j += 1
                else:
                    break
                k = j
            starts.append(start)
            if duration > 0:  # (take: j is the first step at or after the end)
                if j == n or times[j] != end:
                    times.insert(j, end)
                    free.insert(j, free[j - 1])
                for i in range(k, j):
                    free[i] -= size
        return starts

    def take(self, start: float, size: int, duration: float, closed: bool = False) -> None:
        """Take ``size`` processors on ``[start, start + duration)`` (free then, but for a
        reservation of Slurm's, whose start is rounded down);
        ``closed``: a job ending at ``start`` does not fit beside it either (Slurm's backfill:
        src/plugins/sched/backfill/backfill.c:2417 in Slurm 22.05.8)."""
        if not duration > 0:
            return
        times, free = self.times, self.free
        end = start + duration
        start = max(start, times[0])  # (rounded down to before the profile begins)
        if closed:
            self.closed.add(start)
        k = bisect_right(times, start) - 1
        if times[k] != start:  # (a start between steps: split the step)
            k += 1
            times.insert(k, start)
            free.insert(k, free[k - 1])
        j = bisect_left(times, end, k)
        if j == len(times) or times[j] != end:  # (times are strictly increasing: split a step)
            times.insert(j, end)
            free.insert(j, free[j - 1])
        for i in range(k, j):
            free[i] -= size

    def advance(self, now: float) -> None:
        """Forget the past: the profile starts at ``now``."""
        times = self.times
        k = bisect_right(times, now) - 1
        if k > 0:
            del times[:k]
            del self.free[:k]
        times[0] = now

    def __repr__(self) -> str:
        steps = ", ".join(f"{t:g}:{f}" for t, f in zip(self.times, self.free, strict=True))
        return f"AvailabilityProfile({steps})"


def shadow_time(
    need: int, free: int, running: Iterable[tuple[float, int, int]]
) -> tuple[float, int]:
    """When will ``need`` processors be free, and how many beyond ``need`` are free then?

    ``free`` processors are free now; each running job returns its processors at its estimated
    end. Returns ``(shadow time, extra processors)``; the extra processors include those of
    every job that ends at the shadow time itself. ``need`` must not exceed the machine.
    """
    avail = free
    jobs = iter(running)
    for end, _, size in jobs:
        avail += size
        if avail >= need:
            for later, _, more in jobs:  # the others ending at the shadow time
                if later != end:
                    break
                avail += more
            return end, avail - need
    raise RuntimeError(f"{need} processors never become free: the job is larger than the machine")
