"""Shared fixtures: tiny sites built from plain job lists, and the real traces when present."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import settings

from sitesim.engine.machine import ProcessorResources
from sitesim.engine.resources import Running
from sitesim.engine.site import Site, SiteResult
from sitesim.models.trace_user import TraceUser, TraceWorkload
from sitesim.schedulers.base import Scheduler

# Hypothesis budgets: the default keeps the test run short; HYPOTHESIS_PROFILE=thorough digs.
settings.register_profile("default", max_examples=60, deadline=None)
settings.register_profile("thorough", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

#: ../shared/traces beside the project folder (absent on a fresh clone elsewhere).
TRACES = Path(__file__).resolve().parents[1].parent / "shared" / "traces"
SDSC_SP2 = TRACES / "SDSC-SP2-1998-4.2-cln.swf.gz"


def trace_path(name: str) -> Path:
    """Path of a real trace, skipping the test with a clear reason when it is absent."""
    path = TRACES / name
    if not path.exists():
        pytest.skip(f"needs the real trace {name} in {TRACES} (not part of the project)")
    return path


def on_procs(now: float, free: int, running: Running) -> ProcessorResources:
    """The resources of a pass at ``now`` on processors, ``free`` of them free and the
    ``running`` jobs ``(estimated end, id, size)`` ascending (a policy tried by hand)."""
    return ProcessorResources.of(now, free, running)


def run_jobs(
    jobs: Sequence[tuple[float, int, float] | tuple[float, int, float, float]],
    procs: int,
    scheduler: Scheduler,
) -> SiteResult:
    """Run ``(submit, size, runtime[, estimate])`` jobs open-loop on a tiny site."""
    submit = [j[0] for j in jobs]
    size = [j[1] for j in jobs]
    runtime = [j[2] for j in jobs]
    estimate = [j[3] if len(j) > 3 else j[2] for j in jobs]  # type: ignore[misc]
    site = Site(procs, scheduler)
    site.add_user(TraceUser(TraceWorkload.from_jobs(submit, size, runtime, estimate)))
    return site.run()


@pytest.fixture
def sigint_as_from_a_terminal() -> Iterator[None]:
    """A command started from a background job (``pytest ... &`` in a script) inherits an
    ignored SIGINT: the shell ignores it in such jobs, exec keeps it ignored, and a program
    that finds SIGINT ignored rightly leaves it so. While a test that asks for this runs, the
    process gets Python's usual handler instead, and the commands it starts SIGINT's
    default, as from a terminal."""
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
