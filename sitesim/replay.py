"""Open (conventional) trace replay: a trace's jobs at their timestamps, under any scheduler."""

from __future__ import annotations

from collections.abc import Callable

from sitesim.errors import ConfigError, require
from sitesim.models.trace_user import Estimates, TraceUser, TraceWorkload
from sitesim.schedulers.base import Scheduler
from sitesim.site import Site, SiteResult
from sitesim.swf import SWFTrace


def machine_size(trace: SWFTrace, procs: int | None) -> int:
    """``procs`` if given, else the header's MaxProcs (or MaxNodes)."""
    if procs is not None:
        require(procs >= 1, f"procs must be >= 1, got {procs}")
        return procs
    size = trace.max_procs
    if size is None:
        raise ConfigError(f"{trace.name}: the header names no MaxProcs or MaxNodes; give --procs")
    return size


def replay(
    trace: SWFTrace,
    scheduler: Scheduler,
    *,
    procs: int | None = None,
    scale: float | None = None,
    load: float | None = None,
    estimates: Estimates = "trace",
    strict: bool = False,
    progress: Callable[[float], None] | None = None,
) -> SiteResult:
    """Replay ``trace`` open-loop under ``scheduler``.

    Args:
        trace: the SWF trace.
        scheduler: a fresh scheduler (it keeps state).
        procs: machine size (default: the trace header's MaxProcs).
        scale: multiply inter-arrival times by this factor (< 1 raises the load).
        load: instead of ``scale``, scale to this offered load.
        estimates: ``"trace"`` (requested times) or ``"exact"`` (the actual runtimes).
        strict: fail on the first impossible job instead of skipping and counting it.
        progress: called with the fraction of the submit span simulated so far.
    """
    if scale is not None and load is not None:
        raise ConfigError("give either a scale factor or a target load, not both")
    size = machine_size(trace, procs)
    workload = TraceWorkload.from_swf(trace, size, estimates=estimates, strict=strict)
    original_load = workload.offered_load(size)
    factor = 1.0
    if load is not None:
        workload, factor = workload.at_load(load, size)
    elif scale is not None:
        workload, factor = workload.scaled(scale), scale
    site = Site(
        size,
        scheduler,
        config={
            "mode": "open replay",
            "trace": trace.name,
            "trace_sha256": trace.sha256,
            "trace_jobs": len(trace),
            "jobs_replayed": len(workload),
            "jobs_skipped": workload.skipped,
            "estimates": estimates,
            "estimates_filled_with_runtime": workload.estimates_filled,
            "estimates_raised_to_1s": workload.estimates_raised,
            "strict": strict,
            "scale_factor": factor,
            "offered_load_original": original_load,
            "offered_load": workload.offered_load(size),
            "seed": None,
        },
    )
    site.add_user(TraceUser(workload))
    if progress is None or not len(workload):
        return site.run()
    first, last = float(workload.submit[0]), float(workload.submit[-1])
    span = max(last - first, 1.0)
    return site.run(
        progress=lambda now: progress(min(max((now - first) / span, 0.0), 1.0)),
        progress_step=span / 200,
    )
