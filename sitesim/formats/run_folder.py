"""A run's jobs as Batsim's ``jobs.csv``, from a run in memory or from its folder.

A run folder (``sitesim run/replay --out``) holds the per-job records (``jobs.csv``), the
machine size (``results.json``) and, on a platform, where each job ran (``placement.csv``).
They are read here with the standard library alone, so writing Batsim's ``jobs.csv`` needs
neither pandas nor pyarrow.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from sitesim.engine.job import JobState
from sitesim.engine.records import JOB_DTYPE
from sitesim.engine.site import SiteResult
from sitesim.errors import SitesimError
from sitesim.formats.batsim import assign_processors, jobs_csv
from sitesim.results.report import JOBS_NAME, PLACEMENT_NAME, RESULTS_NAME

_STATE_CODES = {state.name.lower(): int(state) for state in JobState}


def result_jobs_csv(result: SiteResult, workload: str = "w0") -> str:
    """Batsim's jobs.csv of a run in memory: nodes as resources on a platform (placement),
    processors otherwise."""
    if result.platform is not None and result.placement is not None:
        allocated = [nodes.replace(",", " ") for nodes in result.placement.nodes]
        resources = result.placement.table["nodes"]
    else:
        allocated = assign_processors(result.records, result.procs)
        resources = result.records["size"]
    return jobs_csv(result.records, allocated, resources, workload)


def folder_jobs_csv(folder: str | os.PathLike[str], workload: str = "w0") -> str:
    """Batsim's jobs.csv of a run folder (see :func:`result_jobs_csv`).

    Raises:
        SitesimError: not a run folder, or one whose files cannot be read.
    """
    path = Path(folder)
    results = read_results(path)
    records = read_records(path / JOBS_NAME)
    placement = path / PLACEMENT_NAME
    if placement.is_file():
        rows = _rows(placement)
        allocated = [row["nodes"].replace(",", " ") for row in rows]
        resources = np.array([int(row["node_count"]) for row in rows], dtype=np.int64)
        if len(rows) != len(records):
            raise SitesimError(
                f"{placement}: {len(rows):,} rows for {len(records):,} jobs in {JOBS_NAME}"
            )
    else:
        procs = results.get("procs")
        if not isinstance(procs, int) or procs < 1:
            raise SitesimError(f"{path / RESULTS_NAME}: no machine size (procs)")
        allocated = assign_processors(records, procs)
        resources = records["size"]
    return jobs_csv(records, allocated, resources, workload)


def read_results(folder: Path) -> dict[str, Any]:
    """A run folder's results.json.

    Raises:
        SitesimError: there is none, or it is not JSON.
    """
    where = folder / RESULTS_NAME
    if not where.is_file():
        runs = sorted(p.parent.name for p in folder.glob(f"*/{RESULTS_NAME}"))
        held = f"; it holds the run folders {', '.join(runs[:4])}: give one" if runs else ""
        raise SitesimError(
            f"{folder}: not a run folder (no {RESULTS_NAME}; sitesim run/replay --out write "
            f"one){held}"
        )
    try:
        data = json.loads(where.read_text())
    except (OSError, ValueError) as err:
        raise SitesimError(f"{where}: cannot read: {err}") from None
    if not isinstance(data, dict):
        raise SitesimError(f"{where}: not a results.json (a JSON object)")
    return data


def read_records(path: Path) -> np.ndarray:
    """A run's jobs.csv back as records (:data:`sitesim.engine.records.JOB_DTYPE`; empty cells NaN).

    Raises:
        SitesimError: a missing file, column, or a value that is not a number.
    """
    rows = _rows(path)
    records = np.zeros(len(rows), dtype=JOB_DTYPE)
    if not rows:
        return records
    for name in JOB_DTYPE.names or ():
        if name not in rows[0]:
            raise SitesimError(f"{path}: no column {name!r}: not a jobs.csv sitesim wrote")
        values = [row[name] for row in rows]
        try:
            if name == "state":
                records[name] = [_STATE_CODES[v] for v in values]
            else:
                numbers = map(float, (v if v != "" else "nan" for v in values))
                records[name] = np.fromiter(numbers, dtype=np.float64, count=len(values))
        except (KeyError, ValueError) as err:
            raise SitesimError(f"{path}: column {name}: {err} is not a value it holds") from None
    return records


def _rows(path: Path) -> list[dict[str, str]]:
    try:
        with open(path, newline="") as fh:
            return list(csv.DictReader(fh))
    except OSError as err:
        raise SitesimError(f"{path}: cannot read: {err.strerror or err}") from None
