"""Executing a sweep's runs: tasks that travel to worker processes, run folders written whole,
resuming from the folders that are complete, retrying the runs that fail.

A run folder is complete when its results.json holds the run's configuration and every other
file the results.json lists (``files``: name, size and sha256 of each, written with them) is
there with that size and sha256. A folder whose files do not match (a truncated SWF) is run
again; one whose results.json holds another configuration stops the sweep.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import os
import pickle
import shutil
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sitesim.engine.metrics import Summary
from sitesim.engine.site import SiteResult
from sitesim.errors import ConfigError
from sitesim.output import atomic_write, staged_folder, to_json
from sitesim.results.report import RESULTS_NAME, jobs_refused, results_document, write_outputs
from sitesim.runs import runner
from sitesim.runs.config import ReplayConfig, RunConfig, SiteConfig
from sitesim.runs.replay import run_replay
from sitesim.runs.simulate import run_site
from sitesim.schedulers import Scheduler, registered
from sitesim.sweeps.executors import Executor, execute_all, stop_all
from sitesim.sweeps.plan import PlannedRun, UserFactory
from sitesim.workload.profile import read_profile
from sitesim.workload.swf import SWFTrace, read_swf, read_swf_cached

#: The file a failed run's traceback is appended to, in its folder.
ERROR_NAME = "error.txt"


@dataclass(frozen=True)
class Task:
    """What a worker needs for one run: plain data, and the custom pieces its configuration
    cannot describe (pickled to travel to other processes).

    Attributes:
        name: the run's folder name.
        config: its configuration, as :meth:`RunConfig.to_dict` gives it.
        folder: where to write its folder (None: nowhere).
        factors: its factor levels, for its row.
        seed: its seed.
        save_jobs: write the SWF and CSV files, not only results.json.
        scheduler: a scheduler object whose fresh copy runs instead of the configuration's.
        users: a user factory that draws the users instead of the configuration's model.
        custom: :attr:`PlannedRun.custom`, stored in results.json for a resumed sweep.
    """

    name: str
    config: dict[str, Any]
    folder: str | None
    factors: dict[str, Any]
    seed: int
    save_jobs: bool = True
    scheduler: Scheduler | None = None
    users: UserFactory | None = None
    custom: dict[str, Any] | None = None


@dataclass(frozen=True)
class Outcome:
    """What a run gave: its flat row and the jobs it left out, by reason
    (:func:`~sitesim.results.report.jobs_refused`), or the error that stopped it."""

    name: str
    row: dict[str, Any] | None = None
    error: str | None = None
    refused: dict[str, int] = dataclasses.field(default_factory=dict)


def counters(stats: dict[str, Any]) -> dict[str, Any]:
    """A run's scheduler counters as columns of its row: every number of
    ``result.scheduler_stats`` (the engine's ``passes``, dynP's self-tuning steps and switches,
    ECON's system income, ...), named ``scheduler_<name>``."""
    return {
        f"scheduler_{name}": value
        for name, value in stats.items()
        if isinstance(value, int | float) and not isinstance(value, bool)
    }


def execute(task: Task) -> Outcome:
    """Run one task and write its folder; never raises (an error becomes the outcome)."""
    start = time.perf_counter()
    try:
        config = RunConfig.from_dict(task.config, where=task.name)
        trace = None
        if task.scheduler is not None or task.users is not None:
            result, trace = _run_custom(config, task)
        elif isinstance(config, ReplayConfig):  # read here: the outputs copy fields from it
            trace = read_swf_cached(config.trace)
            result = run_replay(config, trace=trace)
        else:
            result = runner.run(config)
        wall = time.perf_counter() - start
        row = {**task.factors, "seed": task.seed, "wall_s": wall, **result.summary.as_dict(),
               **counters(result.scheduler_stats)}  # fmt: skip
        if task.folder is not None:
            sweep = {"name": task.name, "factors": task.factors, "seed": task.seed, "wall_s": wall}
            if task.custom is not None:
                sweep["custom"] = task.custom
            if task.save_jobs:
                write_outputs(
                    task.folder, result, trace, users=trace is None, extra={"sweep": sweep}
                )
            else:
                document = {**results_document(result), "files": {}, "sweep": sweep}
                # (staged, as write_outputs: a run stopped while writing leaves no empty folder)
                with staged_folder(task.folder, last=RESULTS_NAME) as staging:
                    atomic_write(staging / RESULTS_NAME, to_json(document))
        return Outcome(task.name, row=row, refused=jobs_refused(result.rejected, result.workload))
    except Exception:  # the traceback goes into the run's folder and the report
        return Outcome(task.name, error=traceback.format_exc())


def _run_custom(config: RunConfig, task: Task) -> tuple[SiteResult, SWFTrace | None]:
    """A run with a scheduler object or user factory, and the trace it replayed (if any). The
    scheduler is a fresh copy of the task's (an object keeps the state of the run it served),
    given the run's seed."""
    scheduler = copy.deepcopy(task.scheduler)
    if isinstance(config, SiteConfig):
        return run_site(config, scheduler=scheduler, users=task.users), None
    if not isinstance(config, ReplayConfig) or scheduler is None:
        raise ConfigError(f"{task.name}: a user factory runs only in a site-level run")
    trace = read_swf_cached(config.trace)
    scheduler.use_seed(config.seed)  # as a configured run does
    result = run_replay(config, trace=trace, scheduler=scheduler)
    return result if registered(scheduler) else dataclasses.replace(result, config=None), trace


def execute_runs(
    runs: list[PlannedRun],
    folder: Path | None,
    *,
    executor: Executor,
    workers: int | None,
    dask_address: str | None,
    save_jobs: bool,
    retries: int,
    progress: Callable[[int, int], None] | None,
) -> tuple[dict[str, Outcome], dict[str, str], int]:
    """Run what is not complete in ``folder`` yet, retrying failures ``retries`` times.

    Returns:
        The outcomes of the complete runs by name, the last error of each run that still
        failed, and how many runs were found complete.
    """
    if executor == "process":
        _check_picklable(runs)
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        _remove_stale_staging(folder)
    rows: dict[str, Outcome] = {}
    for run in runs:
        if folder is not None and (found := completed(folder / run.name, run)) is not None:
            rows[run.name] = found
    resumed = len(rows)
    pending = [run for run in runs if run.name not in rows]
    failures: dict[str, str] = {}
    if progress is not None:
        progress(len(rows), len(runs))
    try:
        for attempt in range(1 + max(retries, 0)):
            if not pending:
                break
            tasks = [_task(run, folder, save_jobs) for run in pending]
            again = set()
            for k, outcome, lost in execute_all(
                execute, tasks, executor, workers=workers, address=dask_address
            ):
                name = tasks[k].name
                if outcome is not None and outcome.row is not None:
                    rows[name] = outcome
                    failures.pop(name, None)
                else:
                    error = lost or (outcome.error if outcome else None) or "unknown error"
                    failures[name] = error
                    again.add(name)
                    if folder is not None:
                        _log_error(folder / name, attempt + 1, error)
                if progress is not None:
                    progress(len(rows), len(runs))
            pending = [run for run in runs if run.name in again]
    except BaseException:  # (interrupted: the workers are stopped, killed if slow to clean up)
        if folder is not None and (executor != "dask" or dask_address == "local"):
            stop_all()  # (none is left writing: what a killed one staged can go)
            _remove_stale_staging(folder)
        raise
    return rows, failures, resumed


def _task(run: PlannedRun, folder: Path | None, save_jobs: bool) -> Task:
    return Task(
        name=run.name,
        config=run.config.to_dict(),
        folder=None if folder is None else os.fspath(folder / run.name),
        factors=run.factors,
        seed=run.seed,
        save_jobs=save_jobs,
        scheduler=run.scheduler,
        users=run.users,
        custom=run.custom,
    )


def _check_picklable(runs: list[PlannedRun]) -> None:
    """A scheduler object or user factory must travel to the pool's processes: refuse one that
    cannot, before anything runs."""
    checked: set[int] = set()
    for run in runs:
        for what, piece in (("scheduler object", run.scheduler), ("user factory", run.users)):
            if piece is None or id(piece) in checked:
                continue
            checked.add(id(piece))
            try:
                pickle.dumps(piece)
            except Exception as err:
                raise ConfigError(
                    f"the {what} {piece!r} cannot be sent to the worker processes ({err}); "
                    "define it at the top level of a module (or name it by its import path, "
                    "module:name), or run the sweep serially"
                ) from None


def with_file_digests(runs: list[PlannedRun]) -> list[PlannedRun]:
    """Read every profile, trace and platform once, now: a bad file fails before any run
    starts, and each configuration names the sha256 of the files it reads (as the run's
    results.json will: what a resumed sweep compares). Configurations that differ only in
    their seed are resolved once."""
    digests: dict[tuple[str, str], str] = {}
    resolved: dict[str, RunConfig] = {}  # by the configuration without its seed

    def digest(kind: str, name: str, read: Callable[[str], str]) -> str:
        if (kind, name) not in digests:
            digests[kind, name] = read(name)
        return digests[kind, name]

    done = []
    for run in runs:
        config = run.config
        key = json.dumps({**config.to_dict(), "seed": None}, sort_keys=True, default=repr)
        if key not in resolved:
            changes: dict[str, str] = {}
            if isinstance(config, SiteConfig) and config.profile_sha256 is None:
                changes["profile_sha256"] = digest(
                    "profile", config.profile, lambda name: read_profile(name)[1]
                )
            elif isinstance(config, ReplayConfig) and config.trace_sha256 is None:
                changes["trace_sha256"] = digest(
                    "trace", config.trace, lambda name: read_swf(name).sha256
                )
            config = config.replace(**changes) if changes else config
            resolved[key] = config.with_platform_sha256()
        done.append(dataclasses.replace(run, config=resolved[key].with_seed(run.seed)))
    return done


def completed(folder: Path, run: PlannedRun) -> Outcome | None:
    """The outcome of a run whose folder holds its complete results, or None if it must run:
    no readable results.json, or a file it lists that is missing or differs (written by an
    interrupted copy, truncated; a results.json of a version that listed no files cannot be
    checked, so its run runs again).

    Raises:
        ConfigError: the folder holds the results of another configuration.
    """
    path = folder / RESULTS_NAME
    if not path.exists():
        return None
    try:
        document = json.loads(path.read_text())
        stored = document["config"]
        sweep = document["sweep"]
        summary = Summary.from_dict(document["summary"]).as_dict()
    except (OSError, ValueError, KeyError, TypeError):
        return None  # unreadable: run it again
    custom = run.custom
    differ: list[str] = []  # (the settings that differ, to name them)
    if custom is None:
        planned = json.loads(to_json(run.config.to_dict()))
        if planned.get("procs") is None and isinstance(stored, dict):  # a replay's machine
            stored = {**stored, "procs": None}  # size is resolved by the run
        same = stored == planned
        if isinstance(stored, dict):
            differ = sorted(k for k in stored.keys() | planned if stored.get(k) != planned.get(k))
    else:
        same = stored is None and sweep.get("custom") == json.loads(to_json(custom))
    if not same:
        which = f" ({', '.join(differ)} differ{'s' if len(differ) == 1 else ''})" if differ else ""
        raise ConfigError(
            f"{folder} holds the results of another configuration{which}; remove it or give "
            "another output folder"
        )
    files = document.get("files")
    if not isinstance(files, dict) or not all(_intact(folder, *item) for item in files.items()):
        return None
    stats = counters(document.get("scheduler_stats", {}))
    row = {**run.factors, "seed": run.seed, "wall_s": sweep.get("wall_s"), **summary, **stats}
    refused = jobs_refused(document.get("rejected", {}), document.get("workload", {}))
    return Outcome(run.name, row=row, refused=refused)


def _intact(folder: Path, name: str, facts: Any) -> bool:
    """True when file ``name`` of ``folder`` has the size and sha256 ``facts`` give."""
    try:
        path = folder / name
        if path.stat().st_size != facts["bytes"]:
            return False
        with open(path, "rb") as fh:
            return bool(hashlib.file_digest(fh, "sha256").hexdigest() == facts["sha256"])
    except (OSError, KeyError, TypeError):
        return False


def _log_error(folder: Path, attempt: int, error: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ERROR_NAME, "a") as log:
        log.write(f"--- attempt {attempt}\n{error}")


def _remove_stale_staging(folder: Path) -> None:
    """Staging folders left by an interrupted sweep (``.NAME.xxxx.tmp``)."""
    for path in folder.glob(".*.tmp"):
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
