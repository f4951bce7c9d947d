"""A sweep's output folder as its report reads it: the runs that completed (each one's factor
levels, seed, summary, per-partition and per-account tables and resolved SLURM settings, from
its results.json), the runs planned that did not complete and why, and the factors with their
levels in plan order.

A sweep folder is recognised by what ``sitesim sweep`` writes: its plan
(:data:`~sitesim.sweeps.sweep.PLAN_JSON`, written before the first run), its
:data:`~sitesim.sweeps.sweep.SUMMARY_CSV` (written at the end), or run folders whose results.json
names the sweep they belong to. A run's results.json is written last and whole, so it alone is
read: a run whose other files were damaged since still has its numbers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sitesim import schedulers as scheduler_names
from sitesim.results.report import RESULTS_NAME
from sitesim.sweeps.sweep import ERROR_NAME, PLAN_JSON, SUMMARY_CSV, level_label


@dataclass(frozen=True)
class SweepRun:
    """One complete run of a sweep, as its results.json holds it.

    Attributes:
        name: its folder's name.
        levels: its factor levels as the folder names write them
            (:func:`~sitesim.sweeps.plan.level_label`); a factor that does not apply to its
            scheduler is left out.
        seed: its seed.
        label: its scheduler with the parameters it was given (``SLURM conf=slurm.conf``).
        summary: the flat summary, with the platform's GPU and memory utilization where it
            has GPUs or places memory (``gpu_utilization``, ``memory_utilization``).
        per_partition, per_account: its tables, as rows (empty when it has none).
        settings: the SLURM settings as the run used them (None: not a SLURM run).
        settings_whole: whether ``settings`` holds every setting; False for a run written
            before sitesim stored them all (only those that differ from Slurm's defaults).
    """

    name: str
    levels: dict[str, str]
    seed: int
    label: str
    summary: dict[str, Any]
    per_partition: list[dict[str, Any]] = field(default_factory=list)
    per_account: list[dict[str, Any]] = field(default_factory=list)
    settings: dict[str, Any] | None = None
    settings_whole: bool = True


@dataclass(frozen=True)
class SweepView:
    """A sweep folder: its factors, its complete runs and the planned runs it lacks.

    Attributes:
        folder: the sweep's output folder.
        factors: each factor's levels as the run folders name them, in plan order (from the
            sweep's plan; for a folder written without one, in the order of the folder names).
        runs: the complete runs, in plan order.
        missing: the planned runs that did not complete, each with why, in plan order.
        planned: the runs the plan holds (complete or not).
    """

    folder: Path
    factors: dict[str, list[str]]
    runs: list[SweepRun]
    missing: list[tuple[str, str]]
    planned: int


def is_sweep_folder(folder: str | Path) -> bool:
    """Whether ``folder`` is a sweep's output folder (see the module docstring), not a run's."""
    path = Path(folder)
    if not path.is_dir() or (path / RESULTS_NAME).exists():
        return False
    if (path / PLAN_JSON).is_file() or (path / SUMMARY_CSV).is_file():
        return True
    return any(_sweep_entry(child / RESULTS_NAME) is not None for child in _children(path))


def read_sweep(folder: str | Path) -> SweepView:
    """The sweep a folder holds: every run its plan lists, complete or not.

    Runs are read from their results.json; a run that failed (its folder's error.txt), one
    interrupted (a folder without results.json), one never started (no folder) and one whose
    results.json cannot be read are listed in :attr:`SweepView.missing`, never raised.
    """
    path = Path(folder)
    plan = _plan(path)
    names = plan["runs"] if plan is not None else [child.name for child in _children(path)]
    runs: list[SweepRun] = []
    missing: list[tuple[str, str]] = []
    for name in names:
        run, why = _read_run(path / name)
        if run is not None:
            runs.append(run)
        else:
            missing.append((name, why))
    factors: dict[str, list[str]] = {}
    if plan is not None:
        factors = {name: list(labels) for name, labels in plan["factors"].items()}
    for run in runs:  # (without a plan: in the order met; a level the plan lacks, last)
        for name, label in run.levels.items():
            if label not in factors.setdefault(name, []):
                factors[name].append(label)
    return SweepView(path, factors, runs, missing, len(names))


def _plan(path: Path) -> dict[str, Any] | None:
    """The sweep's plan file, or None when it has none (or none that reads as one)."""
    try:
        plan = json.loads((path / PLAN_JSON).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(plan, dict):
        return None
    runs, factors = plan.get("runs"), plan.get("factors")
    if not isinstance(runs, list) or not all(isinstance(name, str) for name in runs):
        return None
    if not isinstance(factors, dict) or not all(isinstance(v, list) for v in factors.values()):
        return None
    return {"runs": runs, "factors": {str(k): [str(x) for x in v] for k, v in factors.items()}}


def _children(path: Path) -> list[Path]:
    """The run folders of a sweep folder without a plan: those with a results.json or an
    error.txt, by name."""
    return sorted(
        (child for child in path.iterdir()
         if child.is_dir() and ((child / RESULTS_NAME).exists() or (child / ERROR_NAME).exists())),
        key=lambda child: child.name,
    )  # fmt: skip


def _sweep_entry(results: Path) -> dict[str, Any] | None:
    """The ``sweep`` entry of a run's results.json (its name, levels and seed), or None."""
    try:
        document = json.loads(results.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    entry = document.get("sweep") if isinstance(document, dict) else None
    return entry if isinstance(entry, dict) else None


def _read_run(path: Path) -> tuple[SweepRun | None, str]:
    """A run of the sweep, or None and why it is missing."""
    results = path / RESULTS_NAME
    if not path.is_dir():
        return None, "not run (no folder: the sweep stopped before it, or it was removed)"
    if not results.exists():
        error = path / ERROR_NAME
        if error.exists():
            lines = error.read_text(errors="replace").strip().splitlines()
            return None, f"failed: {lines[-1] if lines else 'unknown error'} (see {error})"
        return None, f"interrupted: no {RESULTS_NAME} (run the sweep again to complete it)"
    try:
        document = json.loads(results.read_text())
        sweep = document["sweep"]
        summary = dict(document["summary"])
        levels = {str(k): level_label(str(k), v) for k, v in dict(sweep["factors"]).items()}
        seed = int(sweep["seed"])
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as err:
        why = err.msg if isinstance(err, json.JSONDecodeError) else f"{type(err).__name__} {err}"
        return None, f"{results} cannot be read as a sweep run's ({why})"
    stats = document.get("platform_stats") or {}
    if stats.get("gpus"):
        summary["gpu_utilization"] = stats.get("gpu_utilization")
    if stats.get("memory_utilization") is not None:
        summary["memory_utilization"] = stats["memory_utilization"]
    scheduler = str(document.get("scheduler", "?"))
    params = dict(document.get("scheduler_params") or {})
    kept = document.get("scheduler_stats") or {}
    settings, whole = kept.get("resolved_settings"), True
    if settings is None and isinstance(kept.get("settings"), dict):
        settings, whole = kept["settings"], False  # (an older run: only those changed)
    return SweepRun(
        name=path.name,
        levels=levels,
        seed=seed,
        label=scheduler_names.label(scheduler, params),
        summary=summary,
        per_partition=list(document.get("per_partition") or []),
        per_account=list(document.get("per_account") or []),
        settings=dict(settings) if isinstance(settings, dict) else None,
        settings_whole=whole,
    ), ""
