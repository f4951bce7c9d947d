"""Per-job records: one row per submitted job, as a NumPy structured array.

Columns (times in seconds; -1 or NaN where a value does not apply):

``id, user, size, submit, start, end, wait, response, runtime, estimate, state, killed, session,
batch, preceding, think, priority, trace_row, utility, start_value, stated_value``

``runtime`` is what the job really ran (its actual runtime cut at its estimate, NaN if it never
ended), so it is the runtime SWF field 4 holds and the one the metrics use. For a job that carries
a utility function, ``utility`` is the value it earned (its true function at its turnaround; 0 if
it was cancelled), ``start_value`` its true start value and ``stated_value`` the start value the
schedulers saw; NaN for jobs without one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import chain
from operator import attrgetter

import numpy as np

from sitesim.engine.job import Job, JobState

JOB_DTYPE = np.dtype(
    [
        ("id", np.int64),
        ("user", np.int64),
        ("size", np.int64),
        ("submit", np.float64),
        ("start", np.float64),
        ("end", np.float64),
        ("wait", np.float64),
        ("response", np.float64),
        ("runtime", np.float64),
        ("estimate", np.float64),
        ("state", np.int8),
        ("killed", np.bool_),
        ("session", np.int64),
        ("batch", np.int64),
        ("preceding", np.int64),
        ("think", np.float64),
        ("priority", np.int64),
        ("trace_row", np.int64),
        ("utility", np.float64),
        ("start_value", np.float64),
        ("stated_value", np.float64),
    ]
)

# Columns copied straight from the Job attribute of the same name (all exact as float64).
_DIRECT = (
    "id", "user", "size", "submit", "start", "end", "estimate", "session", "batch",
    "preceding", "think", "priority", "trace_row", "state", "runtime",
)  # fmt: skip
_direct = attrgetter(*_DIRECT)
#: Jobs converted at a time (bounds the temporary memory of a long run).
_BLOCK = 65_536


def job_records(jobs: Sequence[Job]) -> np.ndarray:
    """The records of ``jobs`` (in the given order)."""
    rec = np.zeros(len(jobs), dtype=JOB_DTYPE)
    if not jobs:
        return rec
    for lo in range(0, len(jobs), _BLOCK):  # one tuple per job, a block of rows at a time
        block = rec[lo : lo + _BLOCK]
        values = chain.from_iterable(map(_direct, jobs[lo : lo + _BLOCK]))
        rows = np.fromiter(values, dtype=np.float64, count=len(block) * len(_DIRECT))
        rows = rows.reshape(len(block), len(_DIRECT))
        for k, name in enumerate(_DIRECT):
            block[name] = rows[:, k]
    rec["wait"] = rec["start"] - rec["submit"]
    rec["response"] = rec["end"] - rec["submit"]
    rec["killed"] = killed = rec["state"] == JobState.KILLED
    ended = (rec["state"] == JobState.COMPLETED) | killed
    # what the job ran (Job.duration): a killed job its estimate (the column holds the runtime)
    rec["runtime"] = np.where(ended, np.where(killed, rec["estimate"], rec["runtime"]), np.nan)
    failed = rec["state"] == JobState.FAILED  # (its node failed: it ran until then)
    if failed.any():
        rec["runtime"][failed] = rec["end"][failed] - rec["start"][failed]
    rec["utility"] = rec["start_value"] = rec["stated_value"] = np.nan
    for k, job in enumerate(jobs):
        utility = job.utility
        if utility is None:
            continue
        bid = job.bid
        assert bid is not None  # (the true function when none is stated)
        rec["start_value"][k] = utility.start_value
        rec["stated_value"][k] = bid.start_value
        if ended[k]:
            rec["utility"][k] = utility(job.end - job.submit)
        elif job.state is JobState.CANCELLED:
            rec["utility"][k] = 0.0
    return rec


def format_value(value: float) -> str:
    """A number as text: integral values without a decimal point, others in shortest form."""
    if value != value:  # NaN
        return "nan"
    if float(value).is_integer():
        return str(int(value))
    return repr(float(value))


def read_records_csv(text: str, where: str = "jobs.csv") -> np.ndarray:
    """The records a :func:`records_csv` text holds (its inverse: empty cells are NaN, states
    by name), parsed by NumPy in one pass.

    Raises:
        ValueError: not the columns :data:`JOB_DTYPE` names, or a cell that is not a number
            (the message names ``where``).
    """
    header, _, body = text.partition("\n")
    names = JOB_DTYPE.names or ()
    if tuple(header.strip().split(",")) != names:
        raise ValueError(f"{where}: not a jobs.csv (its header is not {','.join(names[:4])},...)")
    for state in JobState:
        body = body.replace(f",{state.name.lower()},", f",{state.value},")
    body = _EMPTY_CELL.sub(",nan", body)
    rec = np.zeros(body.count("\n"), dtype=JOB_DTYPE)
    if not len(rec):
        return rec
    try:
        values = np.loadtxt(body.splitlines(), delimiter=",", ndmin=2, dtype=np.float64)
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None
    if values.shape != (len(rec), len(names)):
        raise ValueError(f"{where}: {values.shape[0]:,} rows of {values.shape[1]} columns")
    for k, name in enumerate(names):
        rec[name] = values[:, k]
    return rec


_EMPTY_CELL = re.compile(r",(?=,|\n)")


#: Records formatted at a time (a cell is a string object of about 55 bytes: a block's cells
#: take a few tens of MB, those of a whole run's records could take hundreds).
CSV_BLOCK = 1 << 14


def records_csv(records: np.ndarray) -> str:
    """The records as CSV text with a header row (NaN written as empty, states by name),
    formatted a block of records at a time."""
    names = records.dtype.names or ()
    parts = [",".join(names)]
    for lo in range(0, len(records), CSV_BLOCK):
        block = records[lo : lo + CSV_BLOCK]
        columns = []
        for name in names:
            col = block[name]
            if name == "state":
                columns.append([JobState(code).name.lower() for code in col.tolist()])
            elif col.dtype.kind == "b":
                columns.append(np.where(col, "1", "0").tolist())
            elif col.dtype.kind in "iuU":
                columns.append(col.astype(str).tolist())
            else:
                columns.append(["" if v != v else format_value(v) for v in col.tolist()])
        parts.append("\n".join(",".join(row) for row in zip(*columns, strict=True)))
    return "\n".join(parts) + "\n"
