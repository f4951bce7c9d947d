"""Sweeps: a grid of runs × replications, on one core, a local process pool or a Dask cluster.

A sweep is a base configuration, *factors* (settings with a list of levels each: any
:class:`~sitesim.config.RunConfig` field or scheduler parameter) and *seeds* (replications).
Every combination of levels runs once per seed; seed *k* draws the same users' jobs under every
combination (common random numbers), so comparisons are paired by seed.

With an output folder, each run writes its own folder named by its factor values
(``scheduler=CREASY,alpha=3000,users=50,seed=2``), published complete or not at all; a run
whose folder holds a results.json of the same configuration is not run again, so an
interrupted sweep resumes where it stopped. A run that fails has its traceback appended to
``error.txt`` in its folder and is retried once, then reported. ``runs.csv`` holds one row per
run (factors, seed, wall time, the flat summary) and ``summary.csv`` one row per combination
of factor levels (each metric's mean over the seeds, its standard deviation, the half-width of
its 95 % confidence interval by Student's t, and n). The same sweep gives the same numbers
whatever the executor.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import os
import re
import shutil
import time
import tomllib
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sitesim import runner
from sitesim.config import DEFAULT_PROFILE, ReplayConfig, RunConfig, SiteConfig
from sitesim.errors import ConfigError, SitesimError
from sitesim.executors import EXECUTORS, Executor, execute_all
from sitesim.metrics import Summary, competitive_ratio
from sitesim.output import atomic_write, check_output_folder, to_json
from sitesim.profile import read_profile
from sitesim.report import RESULTS_NAME, RUNS_NAME, csv_text, results_document, write_outputs
from sitesim.schedulers import REGISTRY, parameters
from sitesim.swf import read_swf, read_swf_cached
from sitesim.trace_replay import run_replay

#: Files of a sweep's output folder (beside runs.csv, :data:`sitesim.report.RUNS_NAME`).
SUMMARY_CSV, ERROR_NAME = "summary.csv", "error.txt"
#: Settings that name a file: relative paths in a sweep file are relative to its folder.
FILE_SETTINGS = ("profile", "trace")


@dataclass(frozen=True)
class PlannedRun:
    """One run of a sweep: its folder name, the factor levels it takes, its seed, its
    configuration. A factor that does not apply to the run's scheduler (``alpha`` for EASY)
    is left out of ``factors``."""

    name: str
    factors: dict[str, Any]
    seed: int
    config: RunConfig


@dataclass(frozen=True)
class SweepPlan:
    """A base configuration, factors with their levels, and the seeds to replicate with.

    Attributes:
        base: the settings every run shares.
        factors: setting name -> levels, in order (the grid is their product).
        seeds: root seeds; every combination runs once per seed.
    """

    base: RunConfig
    factors: dict[str, list[Any]] = field(default_factory=dict)
    seeds: tuple[int, ...] = (1,)

    def __post_init__(self) -> None:
        if not self.seeds or any(not isinstance(s, int) or s < 0 for s in self.seeds):
            raise ConfigError(f"seeds must be whole numbers >= 0, got {list(self.seeds)!r}")
        if len(set(self.seeds)) != len(self.seeds):
            raise ConfigError(f"seeds must differ, got {list(self.seeds)!r}")
        if "seed" in self.factors:
            raise ConfigError("give replications as seeds, not as a factor 'seed'")
        settings = set(self.base.settings())
        takes = set().union(*(parameters(name) for name in REGISTRY))
        for name, levels in self.factors.items():
            if name not in settings and name not in takes:
                raise ConfigError(
                    f"factor {name!r} is not a setting of a {self.base.mode} run "
                    f"({', '.join(sorted(settings))}) nor a scheduler parameter"
                )
            if not isinstance(levels, list) or not levels:
                raise ConfigError(f"factor {name!r} needs a list of levels, got {levels!r}")

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> tuple[SweepPlan, Path | None]:
        """A plan from a TOML sweep file, and the output folder it names (if any).

        The file has a ``[base]`` table of settings (``mode = "replay"`` for replays), a
        ``[factors]`` table of lists, and ``seeds`` (a count n for seeds 1..n, or a list);
        ``out`` optionally names the output folder. Files named in it are relative to its
        folder.
        """
        where = os.fspath(path)
        try:
            data = tomllib.loads(Path(where).read_text())
        except OSError as err:
            raise SitesimError(f"{where}: cannot read: {err.strerror or err}") from None
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
            raise ConfigError(f"{where}: not a valid TOML sweep file: {err}") from None
        unknown = sorted(set(data) - {"base", "factors", "seeds", "out"})
        if unknown:
            raise ConfigError(
                f"{where}: unknown key {', '.join(unknown)} (a sweep file has base, factors, "
                "seeds and out)"
            )
        folder = Path(where).parent
        base = _relative_to(dict(_table(data, "base", where)), folder)
        factors = {
            name: [_relative_to({name: v}, folder)[name] for v in levels]
            if isinstance(levels, list)
            else levels
            for name, levels in _table(data, "factors", where).items()
        }
        seeds = data.get("seeds", 1)
        if isinstance(seeds, int) and not isinstance(seeds, bool):
            if seeds < 1:
                raise ConfigError(f"{where}: seeds must be a count >= 1 or a list, got {seeds}")
            seeds = list(range(1, seeds + 1))
        if not isinstance(seeds, list):
            raise ConfigError(f"{where}: seeds must be a count >= 1 or a list, got {seeds!r}")
        try:
            plan = cls(RunConfig.from_dict(base, "base"), factors, tuple(seeds))
        except ConfigError as err:
            raise ConfigError(f"{where}: {err}") from None
        out = data.get("out")
        return plan, None if out is None else folder / str(out)

    def runs(self) -> list[PlannedRun]:
        """Every run, in order: the product of the factor levels (first factor outermost),
        then the seeds. Runs that differ only in factors that do not apply are one run."""
        runs: dict[str, PlannedRun] = {}
        names = list(self.factors)
        for levels in itertools.product(*(self.factors[name] for name in names)):
            combination = dict(zip(names, levels, strict=True))
            scheduler = str(combination.get("scheduler", self.base.scheduler)).upper()
            takes = parameters(scheduler) if scheduler in REGISTRY else set()
            applied = {
                name: level
                for name, level in combination.items()
                if name in self.base.settings() or name in takes
            }
            for seed in self.seeds:
                name = run_name(applied, seed)
                if name in runs:
                    if runs[name].factors != applied:
                        raise ConfigError(f"two runs of the sweep would share the folder {name}")
                    continue
                try:
                    config = self.base.replace(**applied, seed=seed)
                except ConfigError as err:
                    raise ConfigError(f"run {name}: {err}") from None
                runs[name] = PlannedRun(name, applied, seed, config)
        return list(runs.values())


def _table(data: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    table = data.get(key, {})
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where}: [{key}] must be a table, got {table!r}")
    return table


def _relative_to(settings: dict[str, Any], folder: Path) -> dict[str, Any]:
    """Settings with file paths made relative to ``folder`` (the sweep file's)."""
    for key in FILE_SETTINGS:
        value = settings.get(key)
        if isinstance(value, str) and value != DEFAULT_PROFILE and not Path(value).is_absolute():
            settings[key] = os.path.normpath(folder / value)
    return settings


def run_name(factors: Mapping[str, Any], seed: int) -> str:
    """The folder name of a run: ``name=level`` pairs, then the seed (``users=20,seed=3``)."""
    parts = [f"{name}={_level(name, level)}" for name, level in factors.items()]
    return ",".join([*parts, f"seed={seed}"])


def _level(name: str, level: Any) -> str:
    if name in FILE_SETTINGS:
        level = Path(str(level)).name
    if isinstance(level, float) and level.is_integer():
        level = int(level)
    text = str(level) if not isinstance(level, list | tuple) else "-".join(map(str, level))
    return re.sub(r"[^A-Za-z0-9.+:_-]", "_", text)


# -- one run, wherever it executes --------------------------------------------------------------
@dataclass(frozen=True)
class Task:
    """What a worker needs for one run (plain data: it travels to other processes)."""

    name: str
    config: dict[str, Any]
    folder: str | None
    factors: dict[str, Any]
    seed: int
    save_jobs: bool = True


@dataclass(frozen=True)
class Outcome:
    """What a run gave: its flat row, or the error that stopped it."""

    name: str
    row: dict[str, Any] | None = None
    error: str | None = None


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
        if isinstance(config, ReplayConfig):  # read here: the outputs copy fields from it
            trace = read_swf_cached(config.trace)
            result = run_replay(config, trace=trace)
        else:
            result = runner.run(config)
        wall = time.perf_counter() - start
        row = {**task.factors, "seed": task.seed, "wall_s": wall, **result.summary.as_dict(),
               **counters(result.scheduler_stats)}  # fmt: skip
        if task.folder is not None:
            sweep = {"name": task.name, "factors": task.factors, "seed": task.seed, "wall_s": wall}
            if task.save_jobs:
                write_outputs(
                    task.folder, result, trace, users=trace is None, extra={"sweep": sweep}
                )
            else:
                document = {**results_document(result), "sweep": sweep}
                atomic_write(Path(task.folder) / RESULTS_NAME, to_json(document))
        return Outcome(task.name, row=row)
    except Exception:  # the traceback goes into the run's folder and the report
        return Outcome(task.name, error=traceback.format_exc())


# -- the sweep ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class SweepResult:
    """What a sweep gave.

    Attributes:
        runs: one row per completed run, in plan order: factor levels, seed, wall time
            (``wall_s``), then every :class:`~sitesim.metrics.Summary` field.
        summary: one row per combination of factor levels: the levels, ``n``, then per metric
            its mean over the seeds, ``<metric>_sd`` and ``<metric>_ci95``.
        failed: name and error of each run that failed twice.
        resumed: runs found complete in the output folder and not run again.
        out: the output folder (None when the sweep kept everything in memory).
    """

    runs: list[dict[str, Any]]
    summary: list[dict[str, Any]]
    failed: list[tuple[str, str]]
    resumed: int
    out: Path | None


def sweep(
    base: RunConfig | SweepPlan,
    factors: Mapping[str, Sequence[Any]] | None = None,
    *,
    seeds: int | Sequence[int] = 1,
    out: str | os.PathLike[str] | None = None,
    executor: Executor = "process",
    workers: int | None = None,
    dask_address: str | None = None,
    save_jobs: bool = True,
    retries: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> SweepResult:
    """Run every combination of ``factors`` (levels) once per seed.

    Args:
        base: the settings every run shares, or a whole :class:`SweepPlan`.
        factors: setting (or scheduler parameter) -> levels.
        seeds: a count n (seeds 1..n) or the seeds.
        out: output folder (run folders, runs.csv, summary.csv); None keeps results in memory.
        executor: ``"serial"``, ``"process"`` (a local pool) or ``"dask"``.
        workers: processes of the pool or LocalCluster (default: every core).
        dask_address: a running Dask scheduler (``tcp://host:8786``, or the file written by
            ``dask scheduler --scheduler-file``); None or ``"local"`` starts a LocalCluster.
        save_jobs: write each run's SWF and CSVs, not only its results.json.
        retries: how often a failed run is tried again.
        progress: called with (runs done, runs in all) as runs complete.
    """
    if isinstance(base, SweepPlan):
        if factors is not None:
            raise ConfigError("give factors in the plan or as an argument, not both")
        plan = base
    else:
        seeds = list(range(1, seeds + 1)) if isinstance(seeds, int) else list(seeds)
        plan = SweepPlan(base, {k: list(v) for k, v in (factors or {}).items()}, tuple(seeds))
    if executor not in EXECUTORS:
        raise ConfigError(f"executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    runs = _with_file_digests(plan.runs())
    folder = None if out is None else Path(out)
    if folder is not None:
        check_output_folder(folder)
        folder.mkdir(parents=True, exist_ok=True)
        _remove_stale_staging(folder)
    rows: dict[str, dict[str, Any]] = {}
    for run in runs:
        if folder is not None and (row := _completed(folder / run.name, run)) is not None:
            rows[run.name] = row
    resumed = len(rows)
    pending = [run for run in runs if run.name not in rows]
    failures: dict[str, str] = {}
    run_of = {run.name: run for run in runs}
    if progress is not None:
        progress(len(rows), len(runs))
    for attempt in range(1 + max(retries, 0)):
        if not pending:
            break
        tasks = [_task(run, folder, save_jobs) for run in pending]
        retry = []
        for k, outcome, lost in execute_all(
            execute, tasks, executor, workers=workers, address=dask_address
        ):
            name = tasks[k].name
            if outcome is not None and outcome.row is not None:
                rows[name] = outcome.row
                failures.pop(name, None)
            else:
                error = lost or (outcome.error if outcome else None) or "unknown error"
                failures[name] = error
                retry.append(run_of[name])
                if folder is not None:
                    _log_error(folder / name, attempt + 1, error)
            if progress is not None:
                progress(len(rows), len(runs))
        again = {run.name for run in retry}
        pending = [run for run in runs if run.name in again]
    ordered = [rows[run.name] for run in runs if run.name in rows]
    schedulers = [str(name).upper() for name in plan.factors.get("scheduler", ())]
    if "EASY" in schedulers and any(row["utility_jobs"] for row in ordered):
        ordered = with_competitive_ratios(ordered, list(plan.factors))
    summary = summarize_runs(ordered, list(plan.factors))
    if folder is not None:
        atomic_write(folder / RUNS_NAME, csv_text(ordered))
        atomic_write(folder / SUMMARY_CSV, csv_text(summary))
    failed = [(run.name, failures[run.name]) for run in runs if run.name in failures]
    return SweepResult(ordered, summary, failed, resumed, folder)


def _task(run: PlannedRun, folder: Path | None, save_jobs: bool) -> Task:
    return Task(
        name=run.name,
        config=run.config.to_dict(),
        folder=None if folder is None else os.fspath(folder / run.name),
        factors=run.factors,
        seed=run.seed,
        save_jobs=save_jobs,
    )


def _with_file_digests(runs: list[PlannedRun]) -> list[PlannedRun]:
    """Read every profile and trace once, now: a bad file fails before any run starts, and
    each configuration names the sha256 of the file it reads."""
    digests: dict[tuple[str, str], str] = {}
    resolved = []
    for run in runs:
        config = run.config
        if isinstance(config, SiteConfig) and config.profile_sha256 is None:
            key = ("profile", config.profile)
            if key not in digests:
                digests[key] = read_profile(config.profile)[1]
            config = config.replace(profile_sha256=digests[key])
        elif isinstance(config, ReplayConfig) and config.trace_sha256 is None:
            key = ("trace", config.trace)
            if key not in digests:
                digests[key] = read_swf(config.trace).sha256
            config = config.replace(trace_sha256=digests[key])
        resolved.append(dataclasses.replace(run, config=config))
    return resolved


def _completed(folder: Path, run: PlannedRun) -> dict[str, Any] | None:
    """The row of a run whose folder holds its results, or None if it must run.

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
    planned = run.config.to_dict()
    if planned.get("procs") is None:  # a replay's machine size is resolved by the run
        stored = {**stored, "procs": None}
    if stored != json.loads(to_json(planned)):
        raise ConfigError(
            f"{folder} holds the results of another configuration; remove it or give "
            "another output folder"
        )
    stats = counters(document.get("scheduler_stats", {}))
    return {**run.factors, "seed": run.seed, "wall_s": sweep.get("wall_s"), **summary, **stats}


def _log_error(folder: Path, attempt: int, error: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ERROR_NAME, "a") as log:
        log.write(f"--- attempt {attempt}\n{error}")


def _remove_stale_staging(folder: Path) -> None:
    """Staging folders left by an interrupted sweep (``.NAME.xxxx.tmp``)."""
    for path in folder.glob(".*.tmp"):
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)


# -- statistics over replications ------------------------------------------------------------
def summarize_runs(
    rows: Sequence[dict[str, Any]],
    factors: Sequence[str],
    metrics: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """Per combination of factor levels: n, and per metric the mean over the runs, the sample
    standard deviation (``_sd``) and the half-width of the 95 % confidence interval of the mean
    by Student's t (``_ci95``); NaN where n < 2. Runs keep their plan order. ``metrics``
    defaults to every :class:`~sitesim.metrics.Summary` field."""
    from scipy.special import stdtrit  # the quantile of Student's t (lighter than scipy.stats)

    metrics = Summary.fields() if metrics is None else metrics
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in rows:
        key = tuple(_hashable(row.get(name)) for name in factors)
        groups.setdefault(key, []).append(row)
    out = []
    for members in groups.values():
        n = len(members)
        entry: dict[str, Any] = {name: members[0].get(name) for name in factors}
        entry["n"] = n
        t = float(stdtrit(n - 1, 0.975)) if n > 1 else math.nan
        for metric in metrics:
            values = [float(m[metric]) for m in members]
            finite = [v for v in values if math.isfinite(v)]
            mean = sum(finite) / len(finite) if len(finite) == n else math.nan
            if n > 1 and len(finite) == n:
                sd = math.sqrt(sum((v - mean) ** 2 for v in finite) / (n - 1))
                ci = t * sd / math.sqrt(n)
            else:
                sd = ci = math.nan
            entry[metric], entry[f"{metric}_sd"], entry[f"{metric}_ci95"] = mean, sd, ci
        out.append(entry)
    return out


def paired_differences(
    rows: Sequence[dict[str, Any]],
    factors: Sequence[str],
    by: str,
    baseline: Any,
    metrics: Sequence[str] = ("utilization", "throughput_per_h", "response_mean_min"),
    *,
    relative: bool = False,
) -> list[dict[str, Any]]:
    """Differences to a baseline level, paired by seed.

    Within each combination of the other factors, every level of ``by`` is compared with
    ``baseline`` seed by seed (the same users under both): per metric the mean difference
    (``<metric>_diff``) and the half-width of its 95 % confidence interval by Student's t
    (``<metric>_diff_ci95``). Pairing removes the variation between user populations, which
    dominates at small user counts, so these intervals are much narrower than those of the two
    means taken apart.

    Args:
        rows: the runs (:attr:`SweepResult.runs`, or runs.csv read back).
        factors: the sweep's factors.
        by: the factor whose levels are compared (e.g. ``"scheduler"``).
        baseline: its level to compare with (e.g. ``"EASY"``).
        metrics: summary fields to compare.
        relative: compare as 100 × (level / baseline − 1) per seed, in %: the columns are then
            ``<metric>_rel_pct`` and ``<metric>_rel_pct_ci95``.
    """
    from scipy.special import stdtrit

    others = [name for name in factors if name != by]
    groups: dict[tuple[Any, ...], dict[Any, dict[Any, dict[str, Any]]]] = {}
    for row in rows:
        key = tuple(_hashable(row.get(name)) for name in others)
        groups.setdefault(key, {}).setdefault(_hashable(row.get(by)), {})[row["seed"]] = row
    out = []
    for key, levels in groups.items():
        base = levels.get(_hashable(baseline))
        if base is None:
            continue
        for level, runs in levels.items():
            if level == _hashable(baseline):
                continue
            seeds = sorted(set(runs) & set(base))
            n = len(seeds)
            entry: dict[str, Any] = {**dict(zip(others, key, strict=True)), by: level, "n": n}
            t = float(stdtrit(n - 1, 0.975)) if n > 1 else math.nan
            for metric in metrics:
                pairs = [(float(runs[s][metric]), float(base[s][metric])) for s in seeds]
                if relative:
                    diffs = [100 * (x / b - 1) if b else math.nan for x, b in pairs]
                else:
                    diffs = [x - b for x, b in pairs]
                mean = sum(diffs) / n if n else math.nan
                sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1)) if n > 1 else math.nan
                name = f"{metric}_rel_pct" if relative else f"{metric}_diff"
                entry[name] = mean
                entry[f"{name}_ci95"] = t * sd / math.sqrt(n) if n > 1 else math.nan
            out.append(entry)
    return out


def with_competitive_ratios(
    rows: Sequence[dict[str, Any]], factors: Sequence[str], baseline: str = "EASY"
) -> list[dict[str, Any]]:
    """The runs with ``competitive_ratio`` filled in: a run's aggregate utility over that of
    the ``baseline`` scheduler with the same seed and levels of the other factors, scheduler
    parameters aside (utility.md §3); NaN where there is no such run or it earned nothing."""
    tuning = set().union(*(parameters(name) for name in REGISTRY))
    others = [name for name in factors if name != "scheduler" and name not in tuning]
    reference = {
        (*(_hashable(row.get(name)) for name in others), row["seed"]): float(row["utility_total"])
        for row in rows
        if str(row.get("scheduler", "")).upper() == baseline
    }
    out = []
    for row in rows:
        base = reference.get((*(_hashable(row.get(name)) for name in others), row["seed"]), 0.0)
        ratio = competitive_ratio(float(row["utility_total"]), base)
        out.append({**row, "competitive_ratio": ratio})
    return out


def _hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value
