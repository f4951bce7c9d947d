"""Tables as pandas DataFrames and Parquet files: typed columns, units in the names.

- :func:`records_frame`: a run's per-job records (``sitesim.to_pandas(result)``): times in seconds
  (``submit_s``, ``wait_s``, ...), the state as a category, integers as integers;
- :func:`swf_frame`: an SWF trace's 18 fields (``runtime_s``, ``req_memory_kb``, ...);
- :func:`load`: a run folder (or a sweep folder, or a folder of Parquet tables written by
  ``sitesim convert``) read back as DataFrames, the same types whichever it was written as;
- :func:`write_parquet`: a DataFrame as a Parquet file, written atomically.

pandas and pyarrow are optional (``pip install 'sitesim[parquet]'``); CSV stays what runs
write. Only this module imports them, and only when a function here is called.
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sitesim.engine.job import JobState
from sitesim.errors import SitesimError
from sitesim.output import atomic_write
from sitesim.workload.swf import FIELDS, INTEGER_FIELDS, SWFTrace

if TYPE_CHECKING:
    from sitesim.engine.site import SiteResult

#: Record columns renamed to carry their units (the others keep their names).
RECORD_NAMES = {
    "size": "procs", "submit": "submit_s", "start": "start_s", "end": "end_s", "wait": "wait_s",
    "response": "response_s", "runtime": "runtime_s", "estimate": "estimate_s",
    "think": "think_s",
}  # fmt: skip
#: SWF fields renamed to carry their units (SWF: seconds, kilobytes per processor).
SWF_NAMES = {
    "submit": "submit_s", "wait": "wait_s", "runtime": "runtime_s", "cpu": "cpu_s",
    "memory": "memory_kb", "req_time": "req_time_s", "req_memory": "req_memory_kb",
    "think": "think_s",
}  # fmt: skip
#: The state category's values, in JobState's order.
STATES = [state.name.lower() for state in JobState]
#: Tables a run or sweep folder may hold, by file stem.
TABLES = ("jobs", "users", "placement", "partitions", "accounts", "priorities", "runs",
          "summary")  # fmt: skip
#: Parquet metadata key holding an SWF header (JSON list of lines).
HEADER_KEY = b"sitesim.swf_header"


def pandas() -> Any:
    """The pandas module, or an error that says how to install it."""
    try:
        import pandas as pd
    except ImportError:
        raise SitesimError(
            "pandas is not installed: pip install 'sitesim[pandas]' (or 'sitesim[parquet]')"
        ) from None
    return pd


def pyarrow() -> tuple[Any, Any]:
    """The pyarrow and pyarrow.parquet modules, or an error that says how to install them."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise SitesimError(
            "Parquet needs pyarrow, which is not installed: pip install 'sitesim[parquet]' "
            "(CSV needs nothing)"
        ) from None
    return pa, pq


def to_pandas(result: SiteResult) -> Any:
    """A run's jobs as a DataFrame (:func:`records_frame` of its records): ``sitesim.to_pandas(
    result)``."""
    return records_frame(result.records)


def records_frame(records: np.ndarray) -> Any:
    """A run's per-job records (:data:`sitesim.engine.records.JOB_DTYPE`) as a DataFrame: one row a
    job, times in seconds with ``_s`` in their names, ``procs`` the job's size, ``state`` a
    category (completed, killed, ...)."""
    pd = pandas()
    columns: dict[str, Any] = {}
    for name in records.dtype.names or ():
        values = records[name]
        if name == "state":
            codes = np.asarray(values, dtype=np.int64) - min(int(s) for s in JobState)
            columns[name] = pd.Categorical.from_codes(codes, categories=STATES)
        else:
            columns[RECORD_NAMES.get(name, name)] = values
    return pd.DataFrame(columns)


def swf_frame(trace: SWFTrace) -> Any:
    """An SWF trace's job lines as a DataFrame (fields named with their units; -1 stays
    SWF's unknown; integer fields int64)."""
    pd = pandas()
    return pd.DataFrame(_swf_columns(trace))


def _swf_columns(trace: SWFTrace) -> dict[str, np.ndarray]:
    columns: dict[str, np.ndarray] = {}
    for k, name in enumerate(FIELDS):
        values = trace.data[:, k]
        columns[SWF_NAMES.get(name, name)] = (
            values.astype(np.int64) if name in INTEGER_FIELDS else np.ascontiguousarray(values)
        )
    return columns


def swf_parquet(trace: SWFTrace) -> bytes:
    """An SWF trace as the bytes of a Parquet table (its header kept in the file's metadata),
    straight from the NumPy columns, without pandas."""
    pa, pq = pyarrow()
    table = pa.table(_swf_columns(trace))
    table = table.replace_schema_metadata({HEADER_KEY: json.dumps(trace.header).encode()})
    return _table_bytes(pq, table)


def write_parquet(frame: Any, path: str | os.PathLike[str]) -> None:
    """Write a DataFrame as a Parquet file, atomically."""
    pa, pq = pyarrow()
    atomic_write(path, _table_bytes(pq, pa.Table.from_pandas(frame, preserve_index=False)))


def _table_bytes(pq: Any, table: Any) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


@dataclass(frozen=True)
class RunTables:
    """A run or sweep folder read back (:func:`load`).

    Attributes:
        folder: where it was read from.
        results: results.json of a run folder (None for a sweep folder).
        tables: the tables it holds, by name (``jobs``, ``users``, ``placement``,
            ``partitions``, ``accounts``, ``priorities``, ``runs``, ``summary``).
    """

    folder: Path
    results: dict[str, Any] | None
    tables: dict[str, Any] = field(default_factory=dict)

    @property
    def jobs(self) -> Any:
        """The per-job records (as :func:`records_frame` gives them)."""
        return self._table("jobs")

    @property
    def users(self) -> Any:
        """The per-user table (site-level runs write it)."""
        return self._table("users")

    @property
    def runs(self) -> Any:
        """A sweep's ``runs.csv``: one row a run."""
        return self._table("runs")

    def _table(self, name: str) -> Any:
        try:
            return self.tables[name]
        except KeyError:
            held = ", ".join(self.tables) or "none"
            raise SitesimError(f"{self.folder}: holds no {name} table (it holds {held})") from None


def load(folder: str | os.PathLike[str]) -> RunTables:
    """A run folder (``sitesim run/replay --out``), a sweep folder, or a folder of Parquet
    tables (``sitesim convert RUN --to parquet``) as DataFrames: each table from
    ``NAME.parquet`` if present, else ``NAME.csv``; the per-job table typed as
    :func:`records_frame` types it.

    Raises:
        SitesimError: not a folder, or a folder holding none of those tables.
    """
    pd = pandas()
    path = Path(folder)
    if not path.is_dir():
        raise SitesimError(f"{path}: not a folder (give a run or sweep folder)")
    results = None
    if (path / "results.json").is_file():
        results = json.loads((path / "results.json").read_text())
    tables: dict[str, Any] = {}
    for name in TABLES:
        if (path / f"{name}.parquet").is_file():
            tables[name] = pd.read_parquet(path / f"{name}.parquet")
        elif (path / f"{name}.csv").is_file() and name == "jobs":
            from sitesim.formats.run_folder import read_records

            tables[name] = records_frame(read_records(path / "jobs.csv"))
        elif (path / f"{name}.csv").is_file():
            tables[name] = pd.read_csv(path / f"{name}.csv")
    if not tables:
        raise SitesimError(
            f"{path}: holds no table sitesim writes ({', '.join(f'{t}.csv' for t in TABLES)})"
        )
    return RunTables(path, results, tables)


def run_tables_parquet(source: RunTables, out: Path) -> list[str]:
    """Write each table of ``source`` as ``NAME.parquet`` into folder ``out`` (which must
    exist); the names written."""
    written = []
    for name, frame in source.tables.items():
        write_parquet(frame, out / f"{name}.parquet")
        written.append(f"{name}.parquet")
    return written
