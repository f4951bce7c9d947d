"""Python's cyclic garbage collector during a run: fewer, cheaper collections.

A run makes and keeps many small container objects (jobs, heap entries, SimPy events and
processes), so the collector's youngest generation fills every 700 net allocations, its
collections scan the same long-lived jobs again and again, and the oldest generation's scan
every object the program made before the run as well (modules, the trace's values). While a
run lasts, :func:`fewer_collections` lets the youngest generation grow to
:data:`YOUNG_THRESHOLD` objects and freezes the objects made before it (:func:`gc.freeze`: not
scanned until the run ends). It changes when garbage cycles are freed, never whether: the
settings are restored when the last concurrent run ends, and the frozen objects return to the
oldest generation. A program that froze objects itself (``gc.get_freeze_count() > 0``) keeps
its own freeze. Once earlier runs have lasted :data:`COLLECT_AFTER` seconds, a full collection
precedes the freeze, so that what they left (their cycles) is freed, not frozen; not before
the later parts of a run made in parts (``collect=False``: a site stepped by
:mod:`sitesim.gym`, one part per decision), whose earlier parts left only the run's own
objects, which no collection during a run frees. Measured
(docs/performance.md): a replay of SDSC-SP2 under EASY 77 collections -> 4 and about 4 % less
CPU time; 250 users for 182 days on 4,096 processors 8-24 % less.

Nor do the scans of the older generations run during a run (:data:`MIDDLE_THRESHOLD`,
:data:`OLD_THRESHOLD`): an object that outlives one collection of the youngest is a run's job,
user, process or pending event, which lives on, so scanning it again frees nothing. The
oldest generation's scan covers every object of the run, 0.7-2.1 s at a 2.7 GB heap, and a
Ctrl-C waits for it to end (the signal is handled between two bytecodes); the middle one's took
2.1 of the 23 s of 100,000 users' day (238 scans). Measured: the same peak memory with and
without either, for 3 users over 300,000 days (3.3 million jobs), a replay of CEA-Curie
(313,000 jobs) and 100,000 users for a day. Building a run's users (:func:`fewer_collections`
with ``building``) is spared the scans too: the full scans that 100,000 users' building
started freed 8 objects in 0.7 s. After the run the collector's settings are restored, and
its scans come when its counts call for them. A program that ends when a run is
interrupted (the command line) sets :data:`exit_on_interrupt`, so that the way out is not held
up by it.
"""

from __future__ import annotations

import gc
import threading
import time
from types import TracebackType

#: Net allocations of container objects between two collections of the youngest generation
#: during a run (Python's default: 700).
YOUNG_THRESHOLD = 10_000
#: Collections of the youngest generation between two of the middle one during a run: never,
#: in effect (Python's default: 10).
MIDDLE_THRESHOLD = 1 << 30
#: Collections of the middle generation between two of the oldest during a run: never, in
#: effect (Python's default: 10).
OLD_THRESHOLD = 1 << 30

#: Seconds of runs after which the next run starts with a full collection. A run's garbage
#: cycles are freed only by a full collection, which none of a run allows, so back-to-back runs
#: (a sweep worker) would keep them all; collecting before every run would cost tiny runs in a
#: large heap (the property tests) three times their time.
COLLECT_AFTER = 1.0

#: Set by a program that ends once a run is interrupted: an interrupted run then leaves the
#: collector as the run had it, sparing the full scan of the run's objects (about a second per
#: gigabyte) that restoring the settings would start on the way out.
exit_on_interrupt = False

_lock = threading.Lock()
_runs = 0  # runs in progress (threads of one process share the collector)
_saved: tuple[tuple[int, int, int], bool] | None = None  # the thresholds, and whether we froze
_ran_seconds = 0.0  # seconds runs have lasted since the last collection before a freeze


class fewer_collections:  # (lower case: used as a function, ``with fewer_collections():``)
    """Run the body with the collector's youngest generation larger, its oldest not scanned and
    the objects made before it frozen; restore all after the last concurrent body ends.

    A class rather than a generator (:func:`contextlib.contextmanager`): a site stepped one
    decision at a time (:mod:`sitesim.gym`) enters it at every step.

    Args:
        collect: allow the full collection that frees what earlier runs left (False for a
            later part of a run made in parts).
        building: the body builds a run (its users and their processes): what it makes
            lives on, so its time does not count toward :data:`COLLECT_AFTER`.
    """

    __slots__ = ("_began", "_building", "_collect")

    def __init__(self, collect: bool = True, building: bool = False) -> None:
        self._collect = collect
        self._building = building
        self._began = 0.0

    def __enter__(self) -> None:
        global _runs, _saved, _ran_seconds
        with _lock:
            if _runs == 0 and _saved is None:  # (not left set by an interrupted run)
                thresholds = gc.get_threshold()
                froze = gc.get_freeze_count() == 0
                if froze:
                    if self._collect and _ran_seconds >= COLLECT_AFTER:
                        gc.collect()  # free what earlier runs left, not freeze it
                        _ran_seconds = 0.0
                    gc.freeze()
                if thresholds[0]:  # (0: automatic collection is off; leave it off)
                    young = max(thresholds[0], YOUNG_THRESHOLD)
                    middle = max(thresholds[1], MIDDLE_THRESHOLD)
                    gc.set_threshold(young, middle, max(thresholds[2], OLD_THRESHOLD))
                _saved = (thresholds, froze)
            _runs += 1
        self._began = time.perf_counter()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        global _runs, _saved, _ran_seconds
        keep = exit_on_interrupt and kind is not None and issubclass(kind, KeyboardInterrupt)
        with _lock:
            if not self._building:
                _ran_seconds += time.perf_counter() - self._began
            _runs -= 1
            if _runs == 0 and _saved is not None and not keep:
                thresholds, froze = _saved
                gc.set_threshold(*thresholds)
                if froze:
                    gc.unfreeze()
                _saved = None
