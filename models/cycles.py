"""Activity cycles: when a user works (users.md §3).

At start each complete user draws, once: a day worker (p = 0.7) or a night worker; a weekday
worker (p = 0.8) or a weekend worker; and a personal shift uniform in [−60, +60] minutes. The
day window is 07:30–17:30 and the night window 17:30–07:30 the next morning, both moved by the
shift; weekday workers work Monday to Friday, weekend workers Saturday and Sunday, and a night
window belongs to the day it starts on. Simulation time 0 is Monday 00:00.

Whenever the user is about to submit and the time is outside the user's window, the user sleeps
until the next window opens and starts a new session there, submitting at the opening.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sitesim.errors import require

DAY = 86_400.0
HOUR = 3_600.0
#: Window openings and lengths (seconds after midnight / seconds).
DAY_OPEN, DAY_LENGTH = 7.5 * HOUR, 10 * HOUR
NIGHT_OPEN, NIGHT_LENGTH = 17.5 * HOUR, 14 * HOUR


@dataclass(frozen=True)
class CycleShares:
    """How workers are drawn: share of day workers, of weekday workers, the largest shift."""

    day: float = 0.7
    weekday: float = 0.8
    max_shift_minutes: float = 60.0

    def __post_init__(self) -> None:
        require(0 <= self.day <= 1, f"day-worker share must be in [0, 1], got {self.day}")
        require(
            0 <= self.weekday <= 1, f"weekday-worker share must be in [0, 1], got {self.weekday}"
        )
        require(
            0 <= self.max_shift_minutes <= 12 * 60,
            f"largest shift must be in [0, 720] minutes, got {self.max_shift_minutes}",
        )


@dataclass(frozen=True)
class ActivityCycle:
    """One user's working windows."""

    day_worker: bool
    weekday_worker: bool
    shift: float  # whole seconds

    @classmethod
    def draw(cls, rng: np.random.Generator, shares: CycleShares | None = None) -> ActivityCycle:
        """Draw a worker type and shift (three uniforms from the user's cycle stream)."""
        return cls.from_uniforms(rng.random(3).tolist(), shares)

    @classmethod
    def from_uniforms(cls, u: Sequence[float], shares: CycleShares | None = None) -> ActivityCycle:
        """The worker type and shift of three uniforms (day, weekday, shift), as :meth:`draw`."""
        shares = shares or CycleShares()
        day, weekday, shift = u
        return cls(
            day_worker=day < shares.day,
            weekday_worker=weekday < shares.weekday,
            shift=round((2 * shift - 1) * shares.max_shift_minutes * 60.0),
        )

    def _window(self, day: int) -> tuple[float, float] | None:
        """The window that starts on ``day`` (0 = the first Monday), if the user works then."""
        if (day % 7 < 5) != self.weekday_worker:
            return None
        opens = day * DAY + (DAY_OPEN if self.day_worker else NIGHT_OPEN) + self.shift
        return opens, opens + (DAY_LENGTH if self.day_worker else NIGHT_LENGTH)

    def in_window(self, t: float) -> bool:
        """Is ``t`` inside one of the user's windows?"""
        today = math.floor(t / DAY)
        for day in (today - 1, today, today + 1):  # windows are shorter than a day
            window = self._window(day)
            if window is not None and window[0] <= t < window[1]:
                return True
        return False

    def next_open(self, t: float) -> float:
        """The first window opening at or after ``t``."""
        day = math.floor(t / DAY) - 1
        while True:
            window = self._window(day)
            if window is not None and window[0] >= t:
                return window[0]
            day += 1
