"""Open (conventional) trace replay: a trace's jobs at their timestamps, under any scheduler."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from sitesim import __version__
from sitesim.errors import ConfigError, require
from sitesim.job import JobState
from sitesim.models.trace_user import Estimates, TraceUser, TraceWorkload
from sitesim.schedulers.base import Scheduler
from sitesim.site import Site, SiteResult
from sitesim.swf import COLUMN, SWFTrace

#: SWF status codes written for simulated jobs.
STATUS_COMPLETED, STATUS_KILLED, STATUS_CANCELLED = 1, 0, 5
#: Fields copied unchanged from the source trace into a replay's output.
_COPIED = ("cpu", "memory", "req_procs", "req_memory", "group", "executable", "queue", "partition")


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
            "sitesim_version": __version__,
            "trace": trace.name,
            "trace_sha256": trace.sha256,
            "trace_jobs": len(trace),
            "jobs_replayed": len(workload),
            "jobs_skipped": workload.skipped,
            "estimates": estimates,
            "estimates_filled_with_runtime": workload.estimates_filled,
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


def result_swf(result: SiteResult, source: SWFTrace | None = None) -> np.ndarray:
    """The simulated jobs as SWF rows (jobs × 18).

    Fields the simulation decides (submit, wait, runtime, processors, requested time, status,
    user, preceding job, think time) come from the records; with ``source`` the others (CPU
    time, memory, requested processors, group, application, queue, partition) are copied from
    the job's line in the source trace, and are -1 otherwise.
    """
    rec = result.records
    data = np.full((len(rec), len(COLUMN)), -1.0)
    state = rec["state"]
    ran = np.isfinite(rec["start"])
    data[:, COLUMN["job"]] = rec["id"]
    data[:, COLUMN["submit"]] = rec["submit"]
    data[:, COLUMN["wait"]] = np.where(ran, rec["wait"], -1.0)
    data[:, COLUMN["runtime"]] = np.where(ran, rec["runtime"], -1.0)
    data[:, COLUMN["procs"]] = rec["size"]
    data[:, COLUMN["req_procs"]] = rec["size"]
    data[:, COLUMN["req_time"]] = rec["estimate"]
    data[:, COLUMN["status"]] = np.select(
        [state == JobState.KILLED, state == JobState.CANCELLED],
        [STATUS_KILLED, STATUS_CANCELLED],
        STATUS_COMPLETED,
    )
    data[:, COLUMN["user"]] = rec["user"]
    data[:, COLUMN["preceding"]] = rec["preceding"]
    data[:, COLUMN["think"]] = np.where(np.isfinite(rec["think"]), rec["think"], -1.0)
    if source is not None:
        rows = rec["trace_row"]
        for name in _COPIED:
            data[:, COLUMN[name]] = source.data[rows, COLUMN[name]]
    return data


def result_header(result: SiteResult, source: SWFTrace | None = None) -> list[str]:
    """SWF header lines naming the generator, machine, user model, scheduler and seed."""
    config = result.config
    params = config.get("scheduler_params") or {}
    scheduler = config["scheduler"] + (
        " (" + ", ".join(f"{k}={v}" for k, v in params.items()) + ")" if params else ""
    )
    lines = [
        "; Version: 2.2",
        f"; Computer: sitesim {config.get('sitesim_version', __version__)} simulated machine",
        f"; Note: generated by sitesim ({config.get('mode', 'simulation')})",
        f"; Note: scheduler {scheduler}",
        f"; Note: user model {_user_model(config)}",
        f"; Note: seed {config.get('seed')}",
        f"; MaxJobs: {len(result.records)}",
        f"; MaxRecords: {len(result.records)}",
        f"; MaxNodes: {config['procs']}",
        f"; MaxProcs: {config['procs']}",
    ]
    if source is not None:
        lines.append(f"; Note: source header of {source.name} follows, each line marked '> '")
        lines.extend("; > " + line.lstrip(";").strip() for line in source.header)
    return lines


def _user_model(config: dict[str, Any]) -> str:
    if config.get("mode") == "open replay":
        return (
            f"open trace replay of {config.get('trace')} "
            f"(scale factor {config.get('scale_factor'):.6g}, estimates {config.get('estimates')})"
        )
    return str(config.get("user_model", "unknown"))
