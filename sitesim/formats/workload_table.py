"""The workload table: a trace's jobs as one table, with what SWF cannot hold.

``sitesim convert site.sacct -o site.parquet`` (or ``-o site.workload.csv``) writes it;
``sitesim replay site.parquet --platform ...`` reads it back, every job asking for what its
log said. One row a job, in the trace's order; the columns (:data:`SCHEMA`, documented in
docs/reference/formats.md):

- the 18 SWF fields, named with their units as :func:`sitesim.formats.tables.swf_frame`
  names them (``job``, ``submit_s``, ``wait_s``, ``runtime_s``, ``procs``, ..., ``think_s``),
  SWF's -1 for unknown;
- what each job asks for beyond its processors (:mod:`sitesim.workload.requests`): ``nodes``,
  ``gpus_per_node``, ``memory_per_node_mb``, ``constraint``, ``partition_name``.

The SWF header is kept: in the Parquet file's metadata, and as ``#`` lines before the CSV's
column names.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import numpy as np

from sitesim.formats.lines import FormatError, format_error
from sitesim.formats.tables import HEADER_KEY, SWF_NAMES, _swf_columns, _table_bytes, pyarrow
from sitesim.workload.requests import COLUMNS as REQUEST_COLUMNS
from sitesim.workload.requests import JobRequests
from sitesim.workload.swf import FIELDS, SWFTrace

#: The SWF columns, in field order.
SWF_COLUMNS = tuple(SWF_NAMES.get(name, name) for name in FIELDS)
#: Every column: name -> what it holds.
SCHEMA = {
    **{name: f"SWF field {k} ({FIELDS[k - 1]})" for k, name in enumerate(SWF_COLUMNS, 1)},
    **REQUEST_COLUMNS,
}
_NUMBERS = ("nodes", "gpus_per_node", "memory_per_node_mb")
_TEXTS = ("constraint", "partition_name")


def _request_columns(trace: SWFTrace) -> dict[str, np.ndarray]:
    requests = trace.requests if trace.requests is not None else JobRequests.empty(len(trace))
    return {
        "nodes": requests.nodes.astype(np.int64),
        "gpus_per_node": requests.gpus_per_node.astype(np.int64),
        "memory_per_node_mb": requests.memory_per_node_mb.astype(np.int64),
        "constraint": requests.constraint.astype(str),
        "partition_name": requests.partition_name.astype(str),
    }


def workload_parquet(trace: SWFTrace) -> bytes:
    """The workload table of ``trace`` as the bytes of a Parquet file."""
    pa, pq = pyarrow()
    table = pa.table({**_swf_columns(trace), **_request_columns(trace)})
    table = table.replace_schema_metadata({HEADER_KEY: json.dumps(trace.header).encode()})
    return _table_bytes(pq, table)


def workload_csv(trace: SWFTrace) -> str:
    """The workload table of ``trace`` as CSV text (the SWF header as ``#`` lines first)."""
    out = io.StringIO()
    for line in trace.header:
        out.write(f"# {line}\n")
    columns = {**_swf_columns(trace), **_request_columns(trace)}
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    values = [c.tolist() for c in columns.values()]
    writer.writerows(zip(*values, strict=True))
    return out.getvalue()


def read_workload_table(path: str) -> SWFTrace:
    """A workload table (Parquet, or CSV) as a trace with its jobs' requests.

    Raises:
        FormatError: unreadable, a column missing, a value not a number where one is
            expected: ``file:line: field NAME: problem`` (line: the CSV's, or the row + 1).
    """
    if path.lower().endswith(".parquet"):
        header, columns, first = _parquet_columns(path)
    else:
        header, columns, first = _csv_columns(path)
    missing = [name for name in (*SWF_COLUMNS, *REQUEST_COLUMNS) if name not in columns]
    if missing:
        raise format_error(
            path, first - 1, missing[0],
            f"no such column (a workload table has {', '.join(SCHEMA)})",
        )  # fmt: skip
    n = len(columns[SWF_COLUMNS[0]])
    data = np.empty((n, len(FIELDS)))
    numbers = {}
    for name in (*SWF_COLUMNS, *_NUMBERS):
        values = columns[name]
        try:
            array = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError):
            row = next(k for k, v in enumerate(values) if not _is_number(v))
            raise format_error(
                path, first + row, name, f"{values[row]!r} is not a number"
            ) from None
        bad = np.flatnonzero(~np.isfinite(array))
        if len(bad):
            row = int(bad[0])
            raise format_error(path, first + row, name, f"{values[row]!r} is not a number")
        numbers[name] = array
    for k, name in enumerate(SWF_COLUMNS):
        data[:, k] = numbers[name]
    for name in _NUMBERS:
        low = np.flatnonzero(numbers[name] < 0)
        if len(low):
            raise format_error(path, first + int(low[0]), name, "must be a number >= 0")

    def source(row: int) -> str:
        return f"{path}:{first + row}"

    requests = JobRequests(
        numbers["nodes"].astype(np.int64),
        numbers["gpus_per_node"].astype(np.int64),
        numbers["memory_per_node_mb"].astype(np.int64),
        np.array([str(v) for v in columns["constraint"]], dtype=object),
        np.array([str(v) for v in columns["partition_name"]], dtype=object),
        source,
    )
    return SWFTrace(path, header, data, requests=requests)


def _is_number(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def _csv_columns(path: str) -> tuple[list[str], dict[str, list[Any]], int]:
    """The header lines, the columns, and the line number of the first row."""
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            lines = fh.read().splitlines()
    except OSError as err:
        raise FormatError(f"{path}: cannot read: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise FormatError(f"{path}: not a text file (a workload table is CSV or Parquet)") from None
    header = [
        line[2:] if line.startswith("# ") else line[1:] for line in lines if line.startswith("#")
    ]
    start = len(header)
    rows = list(csv.reader(lines[start:]))
    if not rows:
        raise format_error(path, start + 1, "header", "no column names (a workload table)")
    names = rows[0]
    for k, row in enumerate(rows[1:], start + 2):
        if len(row) != len(names):
            raise format_error(path, k, "line", f"{len(row)} values, the header names {len(names)}")
    columns = {name: [row[j] for row in rows[1:]] for j, name in enumerate(names)}
    for name in _TEXTS:
        if name in columns:
            columns[name] = [str(v) for v in columns[name]]
    return header, columns, start + 2


def _parquet_columns(path: str) -> tuple[list[str], dict[str, list[Any]], int]:
    _, pq = pyarrow()
    try:
        table = pq.read_table(path)
    except OSError as err:
        raise FormatError(f"{path}: cannot read as Parquet: {err}") from None
    meta = table.schema.metadata or {}
    header = json.loads(meta[HEADER_KEY]) if HEADER_KEY in meta else []
    return header, {name: table.column(name).to_pylist() for name in table.column_names}, 1
