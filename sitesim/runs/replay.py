"""Open (conventional) trace replay: a trace's jobs at their timestamps, under any scheduler."""

from __future__ import annotations

import dataclasses
import math
import os
import warnings
from collections.abc import Callable
from typing import Any, Unpack

import numpy as np

from sitesim.engine.site import SiteResult
from sitesim.errors import ConfigError, InvalidJobError, SitesimError, require
from sitesim.formats.traces import read_trace, read_trace_cached
from sitesim.models.augment import augment
from sitesim.models.feedback import FeedbackPlan, FeedbackTraceUser
from sitesim.models.trace_user import Estimates, TraceUser, TraceWorkload
from sitesim.models.utility import LeeSnavely, uncertain_values, wealth
from sitesim.platform.boundary import RequestsWarning, check_requests
from sitesim.platform.downtime import NO_DATE, Clock
from sitesim.runs.build import PreparedRun, build_site
from sitesim.runs.config import ReplayConfig, ReplaySettings
from sitesim.runs.options import scheduler_settings, split_settings
from sitesim.schedulers import Scheduler
from sitesim.workload.activity import think_rows
from sitesim.workload.swf import SWFTrace

DAY = 86_400.0
Progress = Callable[[float], None]


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
    trace: SWFTrace | str | os.PathLike[str],
    scheduler: str | Scheduler = "EASY",
    *,
    procs: int | None = None,
    scale: float | None = None,
    load: float | None = None,
    estimates: Estimates = "trace",
    warmup_days: float = 0.0,
    strict: bool = False,
    progress: Progress | None = None,
    **settings: Unpack[ReplaySettings],
) -> SiteResult:
    """Replay ``trace`` open-loop under ``scheduler``.

    Args:
        trace: the SWF trace, or its file.
        scheduler: a scheduler name (registered or an import path, with its parameters as
            keyword arguments) or a fresh scheduler object, given the run's seed.
        procs: machine size (default: the trace header's MaxProcs).
        scale: multiply inter-arrival times by this factor (< 1 raises the load).
        load: instead of ``scale``, scale to this offered load.
        estimates: ``"trace"`` (requested times) or ``"exact"`` (the actual runtimes).
        warmup_days: days after the first submission left out of the metrics.
        strict: fail on the first impossible job instead of skipping and counting it.
        progress: called with the fraction of the submit span simulated so far.
        settings: any other setting of a :class:`~sitesim.runs.config.ReplayConfig`, typed by
            :class:`~sitesim.runs.config.ReplaySettings` (``platform=Platform(...)`` or a
            platform file, ``feedback=True``, ``seed=3``, ...); with a scheduler name, also
            the scheduler's parameters, in ``scheduler_params={"alpha": 3000}`` or as
            keywords (``alpha=3000``; type checkers know only the settings).

    Returns:
        The result. Its ``config`` reproduces the run (:func:`sitesim.run`), unless the trace
        was not read from a file or the scheduler is a custom object (then it is None).
    """
    run_settings, params = split_settings(ReplayConfig, settings)
    described, custom = scheduler_settings(scheduler, params, "replay")
    if not isinstance(trace, SWFTrace):
        trace = read_trace(trace)
    else:
        trace.check()  # (made in memory, perhaps)
    name = trace.name or "(an SWF trace in memory)"
    # A configuration validates every setting, even of a run it cannot fully describe.
    config = ReplayConfig(
        trace=name, trace_sha256=trace.sha256 or None, procs=procs, scale=scale, load=load,
        estimates=estimates, warmup_days=warmup_days, strict=strict, **described,
        **run_settings,
    )  # fmt: skip
    if custom is None:
        custom = config.make_scheduler()
    else:
        custom.use_seed(config.seed)  # as a configured run does
    if trace.sha256 and described:
        return run_replay(config, trace=trace, scheduler=custom, progress=progress)
    return _prepare(config, trace, custom).run(progress)  # no configuration: custom pieces


def run_replay(
    config: ReplayConfig,
    *,
    trace: SWFTrace | None = None,
    scheduler: Scheduler | None = None,
    progress: Progress | None = None,
) -> SiteResult:
    """Run the replay ``config`` describes.

    The trace is read from its file (or ``trace``, already read from it); when the configuration
    names a sha256, the file must still have it. The result's configuration is ``config`` with
    the sha256 and the machine size filled in.

    Args:
        config: the run.
        trace: the trace the configuration names, if already read.
        scheduler: the scheduler the configuration describes, if already built.
        progress: called with the fraction of the submit span simulated so far.
    """
    return prepare_replay(config, trace=trace, scheduler=scheduler).run(progress)


def prepare_replay(
    config: ReplayConfig, *, trace: SWFTrace | None = None, scheduler: Scheduler | None = None
) -> PreparedRun:
    """The replay :func:`run_replay` runs (the same arguments), built to the point where it
    starts (:class:`~sitesim.runs.build.PreparedRun`)."""
    if trace is None:
        trace = read_trace_cached(config.trace)
    if config.trace_sha256 is not None and config.trace_sha256 != trace.sha256:
        raise ConfigError(
            f"trace {config.trace} has changed since the run: its sha256 is {trace.sha256}, "
            f"the run used {config.trace_sha256}"
        )
    prepared = _prepare(config, trace, scheduler or config.make_scheduler())
    resolved = dataclasses.replace(config, trace_sha256=trace.sha256 or None)

    def complete(result: SiteResult) -> SiteResult:
        done = prepared.complete(result)
        stored = dataclasses.replace(resolved, procs=done.procs).with_platform_sha256()
        return dataclasses.replace(done, config=stored)

    return dataclasses.replace(prepared, complete=complete)


def stated(workload: TraceWorkload, config: ReplayConfig) -> TraceWorkload:
    """The workload with the utility functions its users state (utility.md §5): the true ones
    rescaled to start values perturbed by user uncertainty (k = ``config.uncertainty``) and
    wealth inequity (Gini k = ``config.wealth_gini``), drawn from the run's seed. Deadlines and
    shapes are kept; the metrics still use the true functions."""
    rng = np.random.default_rng([config.seed, INACCURACY_STREAM])
    valued = [(k, u) for k, u in enumerate(workload.utility) if u is not None]
    users = workload.user[[k for k, _ in valued]].tolist()
    values = uncertain_values(np.array([u.start_value for _, u in valued]), config.uncertainty, rng)
    if config.wealth_gini:
        riches = wealth(users, config.wealth_gini, rng)
        values = values * np.array([riches[int(user)] for user in users])
    functions = list(workload.utility)
    for (k, u), value in zip(valued, values.tolist(), strict=True):
        functions[k] = u.scaled(value)
    return dataclasses.replace(workload, stated=tuple(functions))


#: The random stream of the information-inaccuracy models, beside the run's seed.
INACCURACY_STREAM = 0x5EED


def moved(records: np.ndarray, workload: TraceWorkload) -> dict[str, Any]:
    """How far a feedback replay moved submissions from the (scaled) timestamps of the open
    replay: how many jobs, earlier or later, and the shift's mean and percentiles in hours."""
    order = np.argsort(workload.rows)
    at = order[np.searchsorted(workload.rows[order], records["trace_row"])]
    shift = (records["submit"] - workload.submit[at]) / 3600.0
    changed = shift != 0
    size = np.abs(shift[changed])
    return {
        "jobs_moved": int(changed.sum()),
        "jobs_moved_earlier": int((shift < 0).sum()),
        "jobs_moved_later": int((shift > 0).sum()),
        "shift_mean_h": float(shift.mean()) if len(shift) else math.nan,
        "moved_by_p50_h": float(np.median(size)) if len(size) else 0.0,
        "moved_by_p98_h": float(np.percentile(size, 98)) if len(size) else 0.0,
    }


def feedback_plan(trace: SWFTrace, workload: TraceWorkload, config: ReplayConfig) -> FeedbackPlan:
    """The dependencies of a feedback replay: from fields 17/18, or inferred from think times.

    Raises:
        ConfigError: they are to be inferred, but no think time can be computed (the check of
            :func:`sitesim.workload.activity.think_rows`, which ``sitesim analyze`` makes too).
    """
    if not FeedbackPlan.has_fields(workload):
        try:
            think_rows(trace)
        except SitesimError as err:
            raise ConfigError(
                f"{err}; a feedback replay infers dependencies from think times (no job "
                "names its preceding job in field 17)"
            ) from None
    return FeedbackPlan.of(workload, definition=config.think, threshold=config.threshold_min * 60)


def at_configured_load(
    workload: TraceWorkload, config: ReplayConfig, procs: int, name: str
) -> tuple[TraceWorkload, float]:
    """``workload`` at the load (or scale) ``config`` asks for, and the factor its
    inter-arrival times were multiplied by.

    Raises:
        ConfigError: the factor ``load`` needs is outside :attr:`ReplayConfig.SCALE_RANGE`.
    """
    current = workload.offered_load(procs)
    low, high = ReplayConfig.SCALE_RANGE
    if config.load is not None:
        factor = current / config.load
        if math.isfinite(factor) and not low <= factor <= high:  # (NaN: at_load says why)
            reach = f"{current / high:.3g} to {min(current / low, ReplayConfig.MAX_LOAD):.3g}"
            raise ConfigError(
                f"load {config.load:g}: {name} offers {current:.3g}, so its inter-arrival "
                f"times would be multiplied by {factor:.3g}, outside [{low:g}, {high:g}]; "
                f"it can be replayed at loads from {reach}"
            )
        return workload.at_load(config.load, procs)
    if config.scale is None:
        return workload, 1.0
    return workload.scaled(config.scale), config.scale


def _prepare(config: ReplayConfig, trace: SWFTrace, scheduler: Scheduler) -> PreparedRun:
    """The replay itself, built to the point where it starts: the trace's jobs (those chosen,
    with the utility functions asked for) as a workload, at the configured load; its result
    completed with facts about the workload."""
    if not len(trace):
        raise ConfigError(f"{trace.name}: no job to replay: the file holds no job lines")
    size = machine_size(trace, config.procs)
    if config.start_job or config.stop_job is not None:
        trace = trace.excerpt(config.start_job, config.stop_job or len(trace))
    if config.utility is not None:
        shape = LeeSnavely(factor=config.deadline_factor, decay=config.utility_decay)
        trace = augment(trace, generator=config.utility, lee_snavely=shape, seed=config.seed)
    workload = TraceWorkload.from_swf(trace, size, estimates=config.estimates, strict=config.strict)
    unsorted = trace.out_of_order()
    if config.strict and len(unsorted):
        row = trace.first_descent()
        assert row is not None  # (out of order: some line is earlier than the one before it)
        raise InvalidJobError(
            f"{trace.location(row)}: job {int(trace.column('job')[row])} is submitted before "
            "a job on an earlier line (the trace is not in submit order; without --strict "
            "such lines are counted and replayed in submit order)"
        )
    plan = None
    if config.feedback:  # from the trace's own timing, before any scaling
        plan = feedback_plan(trace, workload, config)
    if not len(workload):
        skipped = ", ".join(f"{reason} {n:,}" for reason, n in workload.skipped.items())
        raise ConfigError(
            f"{trace.name}: no job to replay ({len(trace):,} job lines"
            + (f"; skipped: {skipped})" if skipped else ")")
        )
    original_load = workload.offered_load(size)
    workload, factor = at_configured_load(workload, config, size, trace.name)
    if config.uncertainty or config.wealth_gini:
        workload = stated(workload, config)
    first, last = float(workload.submit[0]), float(workload.submit[-1])
    outages_until = last + 30 * DAY + float(workload.estimate.max())  # (platforms' downtime)
    clock = NO_DATE if trace.unix_start is None else Clock(trace.unix_start, trace.time_zone[0])
    site = build_site(
        config, size, scheduler, outages_until, clock, strict=config.strict,
        cancel_expired=config.cancel_expired,
        keep_jobs=plan is not None,  # an open replay never looks back at an ended job
    )  # fmt: skip
    if site.platform is not None and workload.requests is not None:
        for warning in check_requests(workload.requests, site.platform):
            warnings.warn(warning, RequestsWarning, stacklevel=2)
    if trace.unix_start is not None:
        scheduler.use_clock(trace.unix_start)
    site.add_user(TraceUser(workload) if plan is None else FeedbackTraceUser(workload, plan))

    def complete(result: SiteResult) -> SiteResult:
        facts = {
            "trace": trace.name,
            "trace_jobs": len(trace),
            "jobs_replayed": len(workload),
            "jobs_skipped": {
                reason: workload.skipped.get(reason, 0) + result.rejected.get(reason, 0)
                for reason in {**workload.skipped, **result.rejected}
            },
            "estimates_filled_with_runtime": workload.estimates_filled,
            "estimates_raised_to_1s": workload.estimates_raised,
            "jobs_out_of_order": len(unsorted),
            "scale_factor": factor,
            "offered_load_original": original_load,
            "offered_load": workload.offered_load(size),
        }
        if plan is not None:
            facts["feedback"] = {
                "dependencies": plan.source,
                "dependent_jobs": plan.dependent,
                **moved(result.records, workload),
            }
        summary = dataclasses.replace(
            result.summary,
            jobs_skipped=result.summary.jobs_skipped + sum(workload.skipped.values()),
        )
        return dataclasses.replace(result, summary=summary, workload=facts)

    return PreparedRun(
        site=site,
        until=None,
        warmup=config.warmup_days * DAY,
        span=(first, first + max(last - first, 1.0)),
        complete=complete,
    )
