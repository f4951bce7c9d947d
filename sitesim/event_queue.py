"""The engine's frequent events, pushed straight onto SimPy's event queue.

SimPy 4 keeps its pending events in a heap, ``env._queue``, of ``(time, priority, event id,
event)`` entries, the ids drawn from ``env._eid``, and processes an event by calling its
``callbacks`` (then checking ``_ok``). The engine's most frequent events, job ends and trace
arrivals, are pushed there directly, as light objects, and the site runs the loop itself
(:meth:`sitesim.site.Site.run`): the order is exactly the one SimPy's own methods would give,
with fewer calls and objects per event. On an environment without that layout
(:func:`direct` is False) everything goes through SimPy's public methods instead.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from heapq import heappush
from typing import Any

import simpy
from simpy.events import NORMAL, Event


def direct(env: simpy.Environment) -> bool:
    """True if ``env`` keeps its queue, clock and event ids as SimPy 4 does."""
    return (
        isinstance(getattr(env, "_queue", None), list)
        and isinstance(getattr(env, "_now", None), int | float)
        and isinstance(getattr(env, "_eid", None), itertools.count)
    )


class Notice:
    """A light event that fires once: its ``callbacks`` and value, nothing else (what SimPy's
    event loop reads). Only the engine's own callbacks listen to it; they may share one list
    (the loop never changes it)."""

    __slots__ = ("_value", "callbacks")
    _ok = True
    _value: Any
    callbacks: list[Callable[[Any], None]]


class Alarm:
    """One event, scheduled again each time it is set, that calls ``callback`` when it fires:
    what a timeout does, without a new event object each time. It fires in the order a
    timeout set at the same moment would (same priority, the next event id)."""

    __slots__ = ("_callbacks", "_env", "_event", "_queue")

    def __init__(self, env: simpy.Environment, callback: Callable[[Event], None]) -> None:
        self._env = env
        self._event = Event(env)
        self._event._ok, self._event._value = True, None
        self._callbacks = [callback]
        self._queue = env._queue if direct(env) else None

    def set(self, delay: float = 0.0) -> None:
        """Fire ``delay`` seconds from now (it must not be pending already)."""
        event, env = self._event, self._env
        event.callbacks = self._callbacks
        if self._queue is not None:
            heappush(self._queue, (env._now + delay, NORMAL, next(env._eid), event))
        else:
            env.schedule(event, NORMAL, delay)
