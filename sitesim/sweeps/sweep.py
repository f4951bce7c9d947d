"""Sweeps: a grid of runs × replications, on one core, a local process pool or a Dask cluster.

A sweep is a base configuration, *factors* (settings with a list of levels each: any
:class:`~sitesim.runs.config.RunConfig` field or scheduler parameter; scheduler objects and user
factories too) and *seeds* (replications). Every combination of levels runs once per seed; seed
*k* draws the same users' jobs under every combination (common random numbers), so comparisons
are paired by seed.

With an output folder, each run writes its own folder named by its factor values
(``scheduler=CREASY,alpha=3000,users=50,seed=2``), published complete or not at all; a run
whose folder holds a results.json of the same configuration, and the files it lists intact, is
not run again, so an interrupted sweep resumes where it stopped. A run that fails has its
traceback appended to ``error.txt`` in its folder and is retried once, then reported.
``sweep.json``, written before the first run, lists the plan (each factor's levels, the seeds,
every run's folder name: what ``sitesim report`` of the folder compares, and the runs it says
are missing); ``runs.csv`` holds one row per run (factors, seed, wall time, the flat summary)
and ``summary.csv`` one row per combination of factor levels (each metric's mean over the
seeds, its standard deviation, the half-width of its 95 % confidence interval by Student's t,
and n).
The same sweep gives the same numbers whatever the executor.

The three steps live apart: planning (:mod:`sitesim.sweeps.plan`: factors × seeds → runs, sweep
files), execution (:mod:`sitesim.sweeps.execute`: tasks, run folders, resuming) and statistics
over replications (:mod:`sitesim.sweeps.replications`); this module runs them in turn and gives
their names under one roof.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from sitesim import __version__
from sitesim.errors import ConfigError
from sitesim.output import atomic_write, check_output_folder, to_json
from sitesim.results.report import RUNS_NAME, csv_text
from sitesim.runs.config import RunConfig
from sitesim.runs.options import progress_function
from sitesim.sweeps.execute import (
    ERROR_NAME,
    Outcome,
    Task,
    counters,
    execute,
    execute_runs,
    with_file_digests,
)
from sitesim.sweeps.executors import EXECUTORS, Executor
from sitesim.sweeps.plan import (
    FILE_SETTINGS,
    MAX_RUNS,
    PlannedRun,
    SweepPlan,
    level_label,
    run_name,
)
from sitesim.sweeps.replications import paired_differences, summarize_runs, with_competitive_ratios

#: The file of a sweep's output folder with one row per combination (beside runs.csv,
#: :data:`sitesim.results.report.RUNS_NAME`).
SUMMARY_CSV = "summary.csv"
#: The file of a sweep's output folder that lists its plan, written before the first run: what
#: ``sitesim report`` of the folder compares, and the runs it says are missing.
PLAN_JSON = "sweep.json"


@dataclass(frozen=True)
class SweepResult:
    """What a sweep gave.

    Attributes:
        runs: one row per completed run, in plan order: factor levels, seed, wall time
            (``wall_s``), then every :class:`~sitesim.engine.metrics.Summary` field.
        summary: one row per combination of factor levels: the levels, ``n``, then per metric
            its mean over the seeds, ``<metric>_sd`` and ``<metric>_ci95``.
        failed: name and error of each run that failed twice.
        resumed: runs found complete in the output folder and not run again.
        out: the output folder (None when the sweep kept everything in memory).
        refused: by run name, in plan order, the jobs each completed run that left any out
            left out, by reason (:func:`~sitesim.results.report.jobs_refused`: impossible jobs, a
            replay's skipped lines).
    """

    runs: list[dict[str, Any]]
    summary: list[dict[str, Any]]
    failed: list[tuple[str, str]]
    resumed: int
    out: Path | None
    refused: dict[str, dict[str, int]] = field(default_factory=dict)


def sweep(
    base: RunConfig | SweepPlan,
    factors: Mapping[str, Sequence[Any]] | None = None,
    *,
    seeds: int | Sequence[int] = 1,
    baseline: str | None = "EASY",
    out: str | os.PathLike[str] | None = None,
    executor: Executor = "process",
    workers: int | None = None,
    dask_address: str | None = None,
    save_jobs: bool = True,
    retries: int = 1,
    progress: Callable[[int, int], None] | Literal[False] | None = None,
    max_runs: int = MAX_RUNS,
) -> SweepResult:
    """Run every combination of ``factors`` (levels) once per seed.

    Args:
        base: the settings every run shares, or a whole :class:`SweepPlan`.
        factors: setting (or scheduler parameter) -> levels. ``scheduler`` takes names
            (registered, or import paths ``"mypkg.sched:FairEASY"``) and scheduler objects (each
            run gets a fresh copy); ``model`` takes user factories (functions or their import
            paths) beside the built-in kinds.
        seeds: a count n (seeds 1..n) or the seeds.
        baseline: the scheduler competitive ratios are measured against; None for none.
        out: output folder (run folders, runs.csv, summary.csv); None keeps results in memory
            (default: the plan's :attr:`~SweepPlan.out`).
        executor: ``"serial"``, ``"process"`` (a local pool) or ``"dask"``.
        workers: processes of the pool or LocalCluster (default: every core).
        dask_address: a running Dask scheduler (``tcp://host:8786``, or the file written by
            ``dask scheduler --scheduler-file``); None or ``"local"`` starts a LocalCluster.
        save_jobs: write each run's SWF and CSVs, not only its results.json.
        retries: how often a failed run is tried again.
        progress: called with (runs done, runs in all) as runs complete; None or False for
            nothing.
        max_runs: the most runs the plan may hold (factor levels x seeds; default
            :data:`~sitesim.sweeps.plan.MAX_RUNS`): a bigger plan is refused before it is
            expanded.

    Raises:
        ConfigError: a bad plan or executor, or a plan of more than ``max_runs`` runs, found
            before anything runs.
    """
    report = progress_function(progress, "(runs done, runs in all)")
    if isinstance(base, SweepPlan):
        if factors is not None or seeds != 1 or baseline != "EASY":
            raise ConfigError(
                "give factors, seeds and baseline in the plan or as arguments, not both"
            )
        plan = base
    else:
        seeds = list(range(1, seeds + 1)) if isinstance(seeds, int) else list(seeds)
        levels = {k: list(v) for k, v in (factors or {}).items()}
        plan = SweepPlan(base, levels, tuple(seeds), baseline=baseline)
    if executor not in EXECUTORS:
        raise ConfigError(f"executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    plan.check_size(max_runs)
    runs = with_file_digests(plan.runs())
    folder = plan.out if out is None else Path(out)
    if folder is not None:
        check_output_folder(folder)
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write(folder / PLAN_JSON, to_json(plan_document(runs, plan.seeds)))
    outcomes, failures, resumed = execute_runs(
        runs, folder, executor=executor, workers=workers, dask_address=dask_address,
        save_jobs=save_jobs, retries=retries, progress=report,
    )  # fmt: skip
    done = [outcomes[run.name] for run in runs if run.name in outcomes]
    ordered = [outcome.row for outcome in done if outcome.row is not None]
    names = list(plan.factors)
    if plan.baseline is not None:
        tuning = [name for name in names if name not in plan.base.settings()]
        ordered = with_competitive_ratios(
            ordered, names, plan.baseline, scheduler_parameters=tuning
        )
    summary = summarize_runs(ordered, names)
    if folder is not None:
        atomic_write(folder / RUNS_NAME, csv_text(ordered))
        atomic_write(folder / SUMMARY_CSV, csv_text(summary))
    failed = [(run.name, failures[run.name]) for run in runs if run.name in failures]
    refused = {outcome.name: outcome.refused for outcome in done if outcome.refused}
    return SweepResult(ordered, summary, failed, resumed, folder, refused)


def plan_document(runs: Sequence[PlannedRun], seeds: Sequence[int]) -> dict[str, Any]:
    """What :data:`PLAN_JSON` holds: each factor's levels as the run folders name them
    (:func:`~sitesim.sweeps.plan.level_label`), in plan order, the seeds and every run's folder
    name (levels that do not apply to a run's scheduler left out, as in its name)."""
    levels: dict[str, dict[str, None]] = {}
    for run in runs:
        for name, level in run.factors.items():
            levels.setdefault(name, {})[level_label(name, level)] = None
    return {
        "sitesim_version": __version__,
        "factors": {name: list(labels) for name, labels in levels.items()},
        "seeds": list(seeds),
        "runs": [run.name for run in runs],
    }


__all__ = [
    "ERROR_NAME", "FILE_SETTINGS", "MAX_RUNS", "PLAN_JSON", "SUMMARY_CSV", "Outcome", "PlannedRun",
    "SweepPlan", "SweepResult", "Task", "counters", "execute", "level_label", "paired_differences",
    "plan_document", "run_name", "summarize_runs", "sweep", "with_competitive_ratios",
]  # fmt: skip
