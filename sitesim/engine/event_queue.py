"""The site's SimPy environment: the engine's own events, and the loop that runs a site.

A site needs two things of its environment besides SimPy's usual ones: :meth:`after`, a
notice that calls the engine's callbacks at a later time (a job's end, the next trace arrival),
ordered exactly as a timeout made at that moment would be; and :meth:`run_instants`, the event
loop that runs the site's allocation pass once each instant's other events are done. Two
environments provide them, and :func:`environment` chooses one, once per site:

- :class:`Environment`, the engine's own. SimPy 4 keeps its pending events in a heap,
  ``env._queue``, of ``(time, priority, event id, event)`` entries, the ids drawn from
  ``env._eid``, its clock in ``env._now``, and processes an event by calling its
  ``callbacks`` (then checking ``_ok``). This environment keeps the clock as a plain
  attribute, ``now`` (read on every event of the engine and of the users; a property read is a
  function call), pushes the engine's notices onto the heap as light objects, and runs the loop
  itself, inlined: the order is exactly the one SimPy's own methods give, with fewer calls and
  objects per event.
- :class:`PublicEnvironment`, SimPy's environment used through its public methods only
  (timeouts, ``peek`` and ``step``): what every run gets should SimPy ever keep another layout.
  The same runs give the same results on both (a test checks it).
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable
from heapq import heappush
from typing import Any, Protocol

import simpy
from simpy.core import BoundClass, SimTime
from simpy.events import NORMAL, Event, EventPriority

#: Called with the clock every so many simulated seconds (a progress bar).
Progress = Callable[[float], None]
#: The callbacks of a notice: each is called with the notice (its value in ``_value``).
Callbacks = list[Callable[[Any], None]]


class Instants(Protocol):
    """What :meth:`Environment.run_instants` runs at the end of an instant (the site)."""

    #: An allocation pass is due at this instant (set by arrivals and terminations).
    pass_due: bool

    def allocation_pass(self) -> None:
        """Run the pass (it clears :attr:`pass_due`; it may schedule events at this instant)."""


class Notice:
    """A light event that fires once: its ``callbacks`` and value, nothing else (what SimPy's
    event loop reads). Only the engine's own callbacks listen to it; they may share one list
    (the loop never changes it)."""

    __slots__ = ("_value", "callbacks")
    _ok = True
    _value: Any
    callbacks: Callbacks


class Environment(simpy.Environment):
    """SimPy's environment with its clock a plain attribute, ``now``, the engine's notices
    pushed straight onto its queue, and the site's event loop inlined. SimPy's own code reads
    and writes the clock as ``_now``, an alias."""

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

    def after(self, delay: float, callbacks: Callbacks, value: Any) -> None:
        """Call ``callbacks`` with a notice holding ``value`` ``delay`` seconds from now, in
        the order a timeout made now would fire (same priority, the next event id)."""
        notice = Notice()
        notice.callbacks, notice._value = callbacks, value
        queue: list[Any] = self._queue
        heappush(queue, (self.now + delay, NORMAL, next(self._eid), notice))

    def run_instants(self, site: Instants, progress: Progress | None, step: float) -> None:
        """Process events until none is left, and the site's allocation pass of each instant
        once its other events are done, calling ``progress`` with the clock every ``step``
        simulated seconds.

        This is :meth:`simpy.Environment.step` in a loop, inlined (one function call less per
        event, a tenth of a replay's time). The pass is no event: it needs no scheduling.
        """
        checkpoint = self.now + step if progress is not None else math.inf
        queue: list[Any] = self._queue  # (events of SimPy's and the engine's own notices)
        pop = heapq.heappop
        while True:
            if site.pass_due and (not queue or queue[0][0] > self.now):
                site.allocation_pass()  # (may schedule events at this instant: look again)
                continue
            if not queue:
                return
            now, _, _, event = pop(queue)
            if now >= checkpoint and progress is not None:
                progress(now)
                checkpoint = now + step
            self.now = now
            callbacks, event.callbacks = event.callbacks, None
            for callback in callbacks:
                callback(event)
            if not event._ok and not hasattr(event, "_defused"):  # a failure nobody handled
                failure = event._value
                error = type(failure)(*failure.args)  # (as SimPy raises it)
                error.__cause__ = failure
                raise error


class PublicEnvironment(simpy.Environment):
    """SimPy's environment, used through its public methods only: notices are timeouts, and
    the loop steps SimPy's own way."""

    def after(self, delay: float, callbacks: Callbacks, value: Any) -> None:
        """As :meth:`Environment.after`, with a timeout."""
        self.timeout(delay, value).callbacks.extend(callbacks)

    def run_instants(self, site: Instants, progress: Progress | None, step: float) -> None:
        """As :meth:`Environment.run_instants`, with :meth:`simpy.Environment.step`."""
        checkpoint = self.now + step if progress is not None else math.inf
        while (t := self.peek()) < math.inf or site.pass_due:
            if site.pass_due and t > self.now:
                site.allocation_pass()
                continue
            if t >= checkpoint and progress is not None:
                progress(t)
                checkpoint = t + step
            self.step()


#: A site's environment: either kind, with :meth:`after` and :meth:`run_instants`.
SiteEnvironment = Environment | PublicEnvironment


def _simpy_layout() -> bool:
    """True if SimPy keeps its queue, clock and event ids as SimPy 4 does."""
    attrs = vars(simpy.Environment())
    return (
        isinstance(attrs.get("_queue"), list)
        and isinstance(attrs.get("_now"), int | float)
        and isinstance(attrs.get("_eid"), itertools.count)
    )


_LAYOUT = _simpy_layout()


def environment() -> SiteEnvironment:
    """A new environment for a site: :class:`Environment` if SimPy keeps the layout it reads,
    else :class:`PublicEnvironment`."""
    return Environment() if _LAYOUT else PublicEnvironment()
