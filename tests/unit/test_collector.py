"""The garbage collector's settings during a run, and after it."""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterator

import pytest

from sitesim.engine import collector
from sitesim.engine.collector import (
    MIDDLE_THRESHOLD,
    OLD_THRESHOLD,
    YOUNG_THRESHOLD,
    fewer_collections,
)
from sitesim.engine.job import Job
from sitesim.engine.site import Site
from sitesim.schedulers import create


@pytest.fixture(autouse=True)
def _restore_gc() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.set_threshold(*thresholds)
    gc.unfreeze()


def test_run_raises_the_young_threshold_stops_older_scans_and_freezes_then_restores() -> None:
    gc.set_threshold(700, 10, 10)
    seen = []

    class Watcher:
        def run(self, site: Site):  # type: ignore[no-untyped-def]
            seen.append((gc.get_threshold(), gc.get_freeze_count() > 0))
            site.submit(Job(1, 5.0, 10.0))
            yield site.env.timeout(1.0)

    site = Site(4, create("FCFS"))
    site.add_user(Watcher())
    site.run()
    assert seen == [((YOUNG_THRESHOLD, MIDDLE_THRESHOLD, OLD_THRESHOLD), True)]
    assert gc.get_threshold() == (700, 10, 10)
    assert gc.get_freeze_count() == 0


def test_restored_when_the_run_fails() -> None:
    gc.set_threshold(700, 10, 10)
    with pytest.raises(RuntimeError), fewer_collections():
        assert gc.get_threshold()[0] == YOUNG_THRESHOLD
        raise RuntimeError("boom")
    assert gc.get_threshold() == (700, 10, 10)
    assert gc.get_freeze_count() == 0


def test_a_programs_own_settings_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    gc.set_threshold(50_000, 5, 5)  # a larger young threshold than ours: kept
    gc.freeze()  # the program's own freeze: neither redone nor undone
    # (watched by the calls, not by the freeze count: another thread of the test process, as
    # pytest-xdist's, may free frozen objects meanwhile, and the count falls)
    calls: list[str] = []
    for name in ("freeze", "unfreeze"):
        real = getattr(gc, name)
        monkeypatch.setattr(gc, name, lambda real=real, name=name: [calls.append(name), real()][1])
    with fewer_collections():
        assert gc.get_threshold() == (50_000, MIDDLE_THRESHOLD, OLD_THRESHOLD)
    assert calls == []
    assert gc.get_freeze_count() > 0
    gc.set_threshold(0)  # automatic collection off: stays off
    with fewer_collections():
        assert gc.get_threshold()[0] == 0
    assert gc.get_threshold()[0] == 0


def test_nested_and_concurrent_runs_restore_once_the_last_ends() -> None:
    gc.set_threshold(700, 10, 10)
    inside, leave = threading.Event(), threading.Event()

    def other_run() -> None:
        with fewer_collections():
            inside.set()
            leave.wait(5)

    thread = threading.Thread(target=other_run)
    with fewer_collections():
        thread.start()
        inside.wait(5)
        with fewer_collections():
            pass
        assert gc.get_threshold()[0] == YOUNG_THRESHOLD  # (the other run still going)
    assert gc.get_threshold()[0] == YOUNG_THRESHOLD
    leave.set()
    thread.join()
    assert gc.get_threshold() == (700, 10, 10)
    assert gc.get_freeze_count() == 0
    assert collector._runs == 0


def test_an_earlier_runs_garbage_is_freed_not_frozen_by_the_next_run(monkeypatch) -> None:
    """Each run leaves cycles (jobs, events, processes); the next run must not freeze them with
    the live objects, or they outlive every later run (a sweep worker grew by the size of each
    run it made, to 14 GB)."""
    from sitesim import simulate

    def jobs() -> int:
        return sum(type(o) is Job for o in gc.get_objects())

    monkeypatch.setattr(collector, "COLLECT_AFTER", 0.0)  # (these runs are tiny)
    gc.set_threshold(700, 10, 10)
    gc.collect()
    before = jobs()  # alive elsewhere in the test session
    simulate(users=5, days=14, warmup_days=0, seed=1)
    second = simulate(users=5, days=14, warmup_days=0, seed=2)
    # at most the second run's own jobs, not yet collected; never the first run's as well
    assert jobs() - before <= len(second.records)


def test_a_run_made_in_parts_collects_before_its_first_part_only(monkeypatch) -> None:
    """A site stepped part by part (advance, or sitesim.gym's one part per decision) is one
    run: a full collection before each part would scan the heap at every step and free
    nothing of the run."""
    collections: list[int] = []
    real = gc.collect
    monkeypatch.setattr(gc, "collect", lambda *a: [collections.append(1), real(*a)][1])
    monkeypatch.setattr(collector, "COLLECT_AFTER", 0.0)  # (every separate run collects)
    gc.set_threshold(700, 10, 10)

    class Submitter:
        def run(self, site: Site):  # type: ignore[no-untyped-def]
            for _ in range(10):
                site.submit(Job(1, 5.0, 10.0))
                yield site.env.timeout(10.0)

    site = Site(4, create("FCFS"))
    site.add_user(Submitter())
    for t in (15.0, 35.0, 55.0, 75.0):
        site.advance(t)
    site.run()
    assert len(collections) == 1
    other = Site(4, create("FCFS"))
    other.add_user(Submitter())
    other.run()  # a separate run: collects first
    assert len(collections) == 2


def test_building_a_run_does_not_count_toward_the_collection_before_the_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What a run is built of lives on: a long build does not make the run that follows it
    start with a full collection (only runs' own time does)."""
    monkeypatch.setattr(collector, "_ran_seconds", 0.0)
    monkeypatch.setattr(collector, "COLLECT_AFTER", 1e-9)
    collections: list[int] = []
    monkeypatch.setattr(gc, "collect", lambda *args: collections.append(1) or 0)
    with fewer_collections(building=True):
        time.sleep(0.001)
    assert collector._ran_seconds == 0.0
    with fewer_collections():  # (no run before it: nothing to collect)
        time.sleep(0.001)
    assert collections == []
    with fewer_collections():  # (a run before it)
        pass
    assert collections == [1]
