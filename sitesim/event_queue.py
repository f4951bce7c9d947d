"""The engine's SimPy environment, and its frequent events pushed straight onto SimPy's queue.

SimPy 4 keeps its pending events in a heap, ``env._queue``, of ``(time, priority, event id,
event)`` entries, the ids drawn from ``env._eid``, its clock in ``env._now``, and processes
an event by calling its ``callbacks`` (then checking ``_ok``). The engine's environment
(:func:`environment`) keeps the clock as a plain attribute, ``now`` (read on every event of
the engine and of the users; a property read is a function call); the engine's most frequent
events, job ends and trace arrivals, are pushed onto the queue directly, as light objects; and
the site runs the loop itself (:meth:`sitesim.site.Site.run`). The order is exactly the one
SimPy's own methods would give, with fewer calls and objects per event. Should SimPy keep
another layout, :func:`environment` gives SimPy's own environment, :func:`direct` is False for
it, and everything goes through SimPy's public methods.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from heapq import heappush
from typing import Any, TypeGuard

import simpy
from simpy.core import BoundClass, SimTime
from simpy.events import NORMAL, Event, EventPriority


class Environment(simpy.Environment):
    """SimPy's environment with its clock a plain attribute, ``now``; SimPy's own code reads
    and writes it as ``_now``, an alias."""

    now: float = 0.0  # (shadows SimPy's property; set through ``_now`` by SimPy's __init__)

    def __init__(self, initial_time: SimTime = 0) -> None:
        super().__init__(initial_time)
        # SimPy binds ``timeout``, ``event``, ``process``, ... to the instance, so that using
        # them costs no descriptor call, but only those of the instance's own class: bind
        # SimPy's here (else each ``env.timeout`` makes a bound method in a Python call).
        for name, attr in vars(simpy.Environment).items():
            if type(attr) is BoundClass:
                setattr(self, name, getattr(self, name))

    @property
    def _now(self) -> float:
        return self.now

    @_now.setter
    def _now(self, now: float) -> None:
        self.now = now

    def schedule(self, event: Event, priority: EventPriority = NORMAL, delay: SimTime = 0) -> None:
        """SimPy's own, reading the clock as the attribute (every timeout, succeeded event and
        process start of the users comes through here)."""
        heappush(self._queue, (self.now + delay, priority, next(self._eid), event))


def _simpy_layout() -> bool:
    """True if SimPy keeps its queue, clock and event ids as SimPy 4 does."""
    attrs = vars(simpy.Environment())
    return (
        isinstance(attrs.get("_queue"), list)
        and isinstance(attrs.get("_now"), int | float)
        and isinstance(attrs.get("_eid"), itertools.count)
    )


_LAYOUT = _simpy_layout()


def environment() -> simpy.Environment:
    """A new environment for a site: :class:`Environment` if SimPy keeps the layout the
    engine reads, else SimPy's own."""
    return Environment() if _LAYOUT else simpy.Environment()


def direct(env: simpy.Environment) -> TypeGuard[Environment]:
    """True if the engine may push events onto ``env``'s queue and run its loop itself."""
    return isinstance(env, Environment)


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
            heappush(self._queue, (env.now + delay, NORMAL, next(env._eid), event))
        else:
            env.schedule(event, NORMAL, delay)
