"""Batsim's formats: JSON workloads (both ways) and the ``jobs.csv`` Batsim writes.

**Workloads** (Batsim's documentation, "Workload": job and profile definitions)::

    {"nb_res": 128,
     "jobs": [{"id": "1", "subtime": 0, "res": 4, "walltime": 3600, "profile": "delay_1800"}],
     "profiles": {"delay_1800": {"type": "delay", "delay": 1800}}}

A job's ``id`` (text), ``subtime`` (seconds), ``res`` (resources, a whole number >= 1) and
``profile`` are required; ``walltime`` is optional. SWF to Batsim writes one job a line that has
a runtime and a size (the others are skipped, counted by reason), one ``delay`` profile per
distinct runtime, ``nb_res`` from the header's MaxProcs, and the SWF user as an extra job field
``user`` (Batsim passes fields it does not know to the scheduler). Batsim to SWF reads the
same fields back: job number (a numeric id, or the number after ``!`` in ``w0!12``, else the
position), submit, runtime (the delay; a ``composed`` profile of delays, their sum times
``repeat``), processors and requested processors (``res``), requested time (``walltime``),
user. Jobs whose profile has no fixed duration (``parallel``, ``smpi``, ...) are skipped. A round
trip SWF -> Batsim -> SWF gives back those fields exactly; the others are -1.

**jobs.csv** (Batsim's documentation, "Jobs" output; the columns of Batsim's own
``JobsTracer``): one row a job, times in seconds, ``allocated_resources`` an interval set
(``0-3 7``). :func:`jobs_csv` writes it for a sitesim run, so that evalys (``JobSet``) reads it:
resources are nodes on a platform (placement.csv's nodes), processors otherwise (numbered after
the run, lowest free first: :func:`assign_processors`).
"""

from __future__ import annotations

import bisect
import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from sitesim import __version__
from sitesim.engine.job import JobState
from sitesim.engine.records import format_value
from sitesim.errors import SitesimError
from sitesim.formats.choose import not_the_format, read_text
from sitesim.formats.converted import Converted
from sitesim.formats.lines import QUOTED, FormatError, Skipped, format_error, out_of_range
from sitesim.workload.swf import (
    COLUMN,
    FIELDS,
    MAX_VALUE,
    SWFTrace,
    unknown_and_negative,
)

#: The columns of Batsim's jobs.csv, in Batsim's order.
JOBS_COLUMNS = (
    "job_id", "workload_name", "profile", "submission_time", "requested_number_of_resources",
    "requested_time", "success", "final_state", "starting_time", "execution_time",
    "finish_time", "waiting_time", "turnaround_time", "stretch", "allocated_resources",
    "consumed_energy", "metadata",
)  # fmt: skip
#: Batsim's final state of a sitesim job, by its state.
FINAL_STATE = {
    JobState.COMPLETED: "COMPLETED_SUCCESSFULLY",
    JobState.KILLED: "COMPLETED_WALLTIME_REACHED",
    JobState.FAILED: "COMPLETED_FAILED",
    JobState.CANCELLED: "REJECTED",
}


# -- workloads: Batsim to SWF ------------------------------------------------------------------
def read_batsim(path: str) -> Converted:
    """Read a Batsim JSON workload into SWF.

    Raises:
        FormatError: not JSON, not a workload, or a job with a bad field: the message names
            the file, the line and the field.
    """
    name = str(path)
    text = read_text(name)
    try:
        document = json.loads(text)
    except ValueError as err:
        line = getattr(err, "lineno", 1)
        raise not_the_format(
            name, line, "JSON", "a Batsim workload", text, f"not JSON ({err})"
        ) from None
    if not isinstance(document, dict) or not isinstance(document.get("jobs"), list):
        raise not_the_format(
            name, 1, "jobs", "a Batsim workload", text,
            'a JSON object with a list "jobs" (and "profiles")',
        )  # fmt: skip
    nb_res = _nb_res(name, text, document)
    profiles = document.get("profiles", {})
    if not isinstance(profiles, dict):
        raise format_error(name, _line_of_key(text, "profiles"), "profiles", "must be an object")
    jobs = document["jobs"]
    skipped = Skipped()
    rows: list[list[float]] = []
    ids: list[str] = []
    kept: list[int] = []  # the position in "jobs" of each row
    for k, job in enumerate(jobs):
        where = _JobPlace(name, text, k)
        if not isinstance(job, dict):
            raise where.error("job", "a job must be an object")
        row = _swf_row(where, job, profiles, skipped)
        if row is not None:
            rows.append(row)
            ids.append(str(job["id"]))
            kept.append(k)
    data = np.array(rows, dtype=np.float64).reshape(-1, len(FIELDS))
    notes: list[str] = []
    numbers = [_id_number(i) for i in ids]
    if any(n is None for n in numbers) or len(set(numbers)) != len(numbers):
        numbers = list(range(1, len(ids) + 1))
        notes.append("job ids are not distinct numbers: jobs numbered in file order")
    data[:, COLUMN["job"]] = np.array(numbers, dtype=np.float64)
    order = np.argsort(data[:, COLUMN["submit"]], kind="stable")
    data = data[order]
    header = [
        "; Version: 2.2",
        f"; Conversion: sitesim {__version__} convert, from Batsim workload "
        f"{name.rsplit('/', 1)[-1]}",
        f"; MaxJobs: {len(data)}",
        f"; MaxRecords: {len(data)}",
    ]
    header += [f"; MaxNodes: {nb_res}", f"; MaxProcs: {nb_res}"]
    description = document.get("description")
    if isinstance(description, str) and description.strip():
        header.append(f"; Information: {' '.join(description.split())}")
    header.append(f"; Note: {skipped.summary()}")
    header += [f"; Note: {note}" for note in notes]
    position = [kept[k] for k in order.tolist()]

    def source(row: int) -> str:
        return f"{name}:{_line_of_job(text, position[row])}"

    return Converted(SWFTrace(name, header, data), skipped, {}, notes, source=source)


#: The most resources a workload may name: Batsim reads ``nb_res`` as a C ``int``.
MAX_NB_RES = 2**31 - 1


def _nb_res(name: str, text: str, document: dict[str, Any]) -> int:
    """The workload's number of resources (``nb_res``), which Batsim requires: the machine
    size of the trace (its MaxProcs)."""
    line = _line_of_key(text, "nb_res")
    if "nb_res" not in document:
        raise format_error(
            name, line, "nb_res",
            f"missing: a Batsim workload names its number of resources (a whole number from "
            f"1 to {MAX_NB_RES:,}), the machine size",
        )  # fmt: skip
    nb_res = document["nb_res"]
    if isinstance(nb_res, bool) or not isinstance(nb_res, int) or not 1 <= nb_res <= MAX_NB_RES:
        raise format_error(
            name, line, "nb_res", f"{_shown(nb_res)} is not a whole number from 1 to "
            f"{MAX_NB_RES:,}",
        )  # fmt: skip
    return nb_res


def _shown(value: Any) -> str:
    """A JSON value for a message, its first 40 characters at most."""
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


class _JobPlace:
    """Where job ``k`` of a workload is, for messages (its line found only when needed)."""

    def __init__(self, name: str, text: str, k: int) -> None:
        self.name, self.text, self.k = name, text, k

    def error(self, key: str, problem: str) -> FormatError:
        return format_error(self.name, _line_of_job(self.text, self.k), key,
                            f"job {self.k + 1}: {problem}")  # fmt: skip

    def line(self) -> int:
        return _line_of_job(self.text, self.k)


def _swf_row(
    where: _JobPlace, job: dict[str, Any], profiles: dict[str, Any], skipped: Skipped
) -> list[float] | None:
    for key in ("id", "subtime", "res", "profile"):
        if key not in job:
            raise where.error(key, "missing (every job has id, subtime, res and profile)")
    subtime = _number(where, job, "subtime", low=0)
    res = job["res"]
    if isinstance(res, bool) or not isinstance(res, int):
        raise where.error("res", f"{res!r} is not a whole number")
    if res < 1:
        raise where.error("res", f"{res} is " + ("a negative count" if res < 0 else "not >= 1"))
    if res > MAX_NB_RES:
        raise where.error("res", f"{_shown(res)} is more than nb_res can be ({MAX_NB_RES:,})")
    walltime = _number(where, job, "walltime", low=None) if "walltime" in job else -1.0
    if walltime <= 0:
        walltime = -1.0
    profile_name = job["profile"]
    profile = profiles.get(profile_name) if isinstance(profile_name, str) else None
    if not isinstance(profile, dict):
        raise where.error("profile", f"{profile_name!r} is not among the workload's profiles")
    delay = _duration(profile, profiles)
    if delay is None:
        kind = profile.get("type")
        skipped.add(f"a {kind} profile (no fixed duration)", f"{where.name}:{where.line()}",
                    json.dumps(job))  # fmt: skip
        return None
    row = [-1.0] * len(FIELDS)
    row[COLUMN["submit"]] = subtime
    row[COLUMN["runtime"]] = delay
    row[COLUMN["procs"]] = row[COLUMN["req_procs"]] = float(res)
    row[COLUMN["req_time"]] = walltime
    user = job.get("user")
    if isinstance(user, int) and not isinstance(user, bool) and 0 <= user <= MAX_VALUE:
        row[COLUMN["user"]] = float(user)
    return row


def _number(where: _JobPlace, job: dict[str, Any], key: str, low: float | None) -> float:
    value = job[key]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise where.error(key, f"{value!r} is not a number of seconds")
    seconds = _float(value)
    problem = out_of_range("submit", _shown(value), seconds)  # (times share one range)
    if problem:
        raise where.error(key, problem)
    if low is not None and value < low:
        raise where.error(key, f"{value!r} is negative")
    return seconds


def _float(value: float) -> float:
    """``value`` as a float; infinite for a JSON integer too large for one (``10**400``)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _duration(profile: dict[str, Any], profiles: dict[str, Any], depth: int = 0) -> float | None:
    """A profile's fixed duration: a delay, or a composed sequence of delays; None if it has
    none."""
    kind = profile.get("type")
    if kind == "delay":
        delay = profile.get("delay")
        if isinstance(delay, int | float) and not isinstance(delay, bool) and delay >= 0:
            return _float(delay)
        return None
    if kind == "composed" and depth < 8:
        seq = profile.get("seq")
        repeat = profile.get("repeat", 1)
        if not isinstance(seq, list) or not isinstance(repeat, int) or repeat < 1:
            return None
        repeat = min(repeat, MAX_VALUE)  # (a larger count gives a runtime out of range anyway)
        parts = [
            _duration(profiles[p], profiles, depth + 1)
            if isinstance(p, str) and isinstance(profiles.get(p), dict) else None
            for p in seq
        ]  # fmt: skip
        if any(part is None for part in parts):
            return None
        return repeat * sum(part for part in parts if part is not None)
    return None


def _id_number(text: str) -> int | None:
    tail = text.rsplit("!", 1)[-1]
    return int(tail) if tail.isdigit() and len(tail) < 16 else None  # (exact as a float64)


def _line_of_key(text: str, key: str) -> int:
    at = text.find(f'"{key}"')
    return text.count("\n", 0, at) + 1 if at >= 0 else 1


def _line_of_job(text: str, k: int) -> int:
    """The line where job ``k`` (0-based) of the ``jobs`` list begins: a scan of the JSON text
    that follows strings and nesting."""
    at = text.find('"jobs"')
    if at < 0:
        return 1
    at = text.find("[", at)
    depth, seen, in_string, escaped = 0, -1, False, False
    for pos in range(at + 1, len(text)):
        char = text[pos]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char in "{[":
            if depth == 0:
                seen += 1
                if seen == k:
                    return text.count("\n", 0, pos) + 1
            depth += 1
        elif char in "}]":
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and char not in " \t\r\n," and seen + 1 == k:
            return text.count("\n", 0, pos) + 1  # (a job that is not an object)
    return _line_of_key(text, "jobs")


# -- workloads: SWF to Batsim ------------------------------------------------------------------
def batsim_workload(trace: SWFTrace) -> tuple[str, Skipped]:
    """A trace as a Batsim JSON workload (text), and the job lines it could not carry."""
    skipped = Skipped()
    data = trace.data
    runtime, procs = data[:, COLUMN["runtime"]], data[:, COLUMN["procs"]]
    size = np.where(procs > 0, procs, data[:, COLUMN["req_procs"]])
    unknown, negative = unknown_and_negative(runtime)
    no_runtime = unknown | negative
    for mask, reason in ((unknown, "unknown runtime"), (negative, "negative runtime"),
                         (~no_runtime & (size < 1), "unknown size")):  # fmt: skip
        found = np.flatnonzero(mask)
        quotes = [
            (trace.location(row) if trace.sha256 else f"{trace.name}: job line {row + 1}",
             " ".join(format_value(v) for v in data[row]))
            for row in found[:QUOTED].tolist()
        ]  # fmt: skip
        skipped.add_many(reason, len(found), quotes)
    keep = ~no_runtime & (size >= 1)
    runtime, size, data = runtime[keep], size[keep], data[keep]
    delays = sorted(set(runtime.tolist()))
    profiles = {_profile_name(d): {"type": "delay", "delay": _plain(d)} for d in delays}
    jobs = []
    for row, delay, res in zip(data.tolist(), runtime.tolist(), size.tolist(), strict=True):
        job: dict[str, Any] = {
            "id": format_value(row[COLUMN["job"]]),
            "subtime": _plain(row[COLUMN["submit"]]),
            "res": int(res),
            "profile": _profile_name(delay),
        }
        if row[COLUMN["req_time"]] > 0:
            job["walltime"] = _plain(row[COLUMN["req_time"]])
        if row[COLUMN["user"]] >= 0:
            job["user"] = int(row[COLUMN["user"]])
        jobs.append(job)
    nb_res = trace.max_procs or (int(size.max()) if len(size) else 1)
    document = {
        "description": f"converted by sitesim {__version__} from {trace.name}",
        "nb_res": nb_res,
        "jobs": jobs,
        "profiles": profiles,
    }
    return _dump(document), skipped


def _profile_name(delay: float) -> str:
    return f"delay_{format_value(delay)}"


def _plain(value: float) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


def _dump(document: dict[str, Any]) -> str:
    """JSON with one job and one profile a line (readable, and diffs stay small)."""
    parts = ["{"]
    parts += [f"  {json.dumps(key)}: {json.dumps(document[key])}," for key in
              ("description", "nb_res")]  # fmt: skip
    for key, close in (("jobs", ","), ("profiles", "")):
        value = document[key]
        if isinstance(value, list):
            items = [f"    {json.dumps(item)}" for item in value]
            parts.append(f'  "{key}": [' + ("\n" + ",\n".join(items) + "\n  " if items else ""))
            parts[-1] += "]" + close
        else:
            items = [f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in value.items()]
            parts.append(f'  "{key}": {{' + ("\n" + ",\n".join(items) + "\n  " if items else ""))
            parts[-1] += "}" + close
    parts.append("}")
    return "\n".join(parts) + "\n"


# -- jobs.csv ----------------------------------------------------------------------------------
def jobs_csv(
    records: np.ndarray,
    allocated: Sequence[str],
    resources: np.ndarray,
    workload: str = "w0",
) -> str:
    """Batsim's jobs.csv for a run's records.

    Args:
        records: the per-job records (:data:`sitesim.engine.records.JOB_DTYPE`).
        allocated: each record's resources as an interval set (``0-3 7``; empty if none).
        resources: each record's number of resources (processors, or nodes on a platform).
        workload: the workload name column.
    """
    state = records["state"]
    ran = np.isfinite(records["start"]) & (state != JobState.CANCELLED)
    lines = [",".join(JOBS_COLUMNS)]
    final = {int(k): v for k, v in FINAL_STATE.items()}
    columns = zip(
        records["id"].tolist(), records["submit"].tolist(), resources.tolist(),
        records["estimate"].tolist(), state.tolist(), ran.tolist(), records["start"].tolist(),
        records["runtime"].tolist(), records["end"].tolist(), allocated, strict=True,
    )  # fmt: skip
    for jid, submit, res, estimate, code, started, start, runtime, end, alloc in columns:
        success = 1 if code == JobState.COMPLETED else 0
        name = final.get(code, "COMPLETED_KILLED")
        if started:
            turnaround = end - submit
            stretch = turnaround / runtime if runtime > 0 else math.nan
            times = [start, runtime, end, start - submit, turnaround, stretch]
            timing = ",".join("" if t != t else format_value(t) for t in times)
        else:
            timing = ",,,,,"
        lines.append(
            f"{jid},{workload},delay,{format_value(submit)},{int(res)},"
            f'{format_value(estimate)},{success},{name},{timing},{alloc},-1,""'
        )
    return "\n".join(lines) + "\n"


def assign_processors(records: np.ndarray, procs: int) -> list[str]:
    """Processor numbers for each job of a run on ``procs`` plain processors, as interval
    sets: at each instant ended jobs release theirs first, then each started job takes the
    lowest free ones (the run did not choose processors; any assignment consistent with its
    schedule is as true as another).

    Raises:
        SitesimError: the records use more processors at once than ``procs``.
    """
    start, end, size = records["start"], records["end"], records["size"]
    ran = np.flatnonzero(np.isfinite(start) & np.isfinite(end))
    allocated = [""] * len(records)
    times = np.concatenate([end[ran], start[ran]])
    kinds = np.concatenate([np.zeros(len(ran)), np.ones(len(ran))])  # releases first
    which = np.concatenate([ran, ran])
    order = np.lexsort((which, kinds, times))
    free: list[tuple[int, int]] = [(0, procs - 1)]
    held: dict[int, list[tuple[int, int]]] = {}
    for event in order.tolist():
        job = int(which[event])
        if kinds[event] == 0:
            for interval in held.pop(job, []):
                _release(free, interval)
            continue
        need = int(size[job])
        taken: list[tuple[int, int]] = []
        k = 0
        while need > 0:
            if k == len(free):
                raise SitesimError(
                    f"the records use more than {procs} processors at time {times[event]:g}"
                )
            low, high = free[k]
            taken.append((low, min(high, low + need - 1)))
            need -= taken[-1][1] - low + 1
            k += 1
        allocated[job] = interval_set(taken)
        if end[job] == start[job]:
            continue  # (a job of no duration holds its processors for no time)
        del free[: k - 1]
        last = free[0][1]
        if taken[-1][1] == last:
            del free[0]
        else:
            free[0] = (taken[-1][1] + 1, last)
        held[job] = taken
    return allocated


def _release(free: list[tuple[int, int]], interval: tuple[int, int]) -> None:
    k = bisect.bisect(free, interval)
    low, high = interval
    if k > 0 and free[k - 1][1] + 1 == low:
        low = free[k - 1][0]
        del free[k - 1]
        k -= 1
    if k < len(free) and free[k][0] == high + 1:
        high = free[k][1]
        del free[k]
    free.insert(k, (low, high))


def interval_set(intervals: Sequence[tuple[int, int]]) -> str:
    """Batsim's canonical text of an interval set: ``0-3 7`` (sorted, merged)."""
    merged: list[list[int]] = []
    for low, high in sorted(intervals):
        if merged and low <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], high)
        else:
            merged.append([low, high])
    return " ".join(str(a) if a == b else f"{a}-{b}" for a, b in merged)
