"""PBS and Torque accounting logs to SWF: one job per ``E`` (end) record.

A log (``server_priv/accounting/YYYYMMDD``, one file a day) holds one record a line::

    04/02/2024 10:15:02;E;1234.server;user=alice group=phys queue=batch ctime=1712045000
        qtime=1712045000 etime=1712045000 start=1712045100 end=1712052302
        exec_host=n01/0-7+n02/0-7 Resource_List.ncpus=16 Resource_List.walltime=02:00:00
        resources_used.walltime=02:00:02 resources_used.cput=31:40:00 Exit_status=0

(one line in the file). The time stamp is the log's local time; the job's times (``qtime``,
``start``, ``end``) are Unix seconds, so no time zone is involved. Only ``E`` records describe
a job that ended; the other records (``Q`` queued, ``S`` started, ``D`` deleted, ``A``
aborted, ...) are skipped, counted by their letter.

SWF fields: submit ``qtime`` (else ``ctime``), wait ``start - qtime``, runtime ``end - start``;
processors the CPUs of ``exec_host`` (``n01/0-7`` is 8, ``n01/0*8`` is 8, ``n01/3`` is 1),
else ``Resource_List.ncpus``, else ``nodes=N:ppn=P``, else ``nodect``; requested processors
``Resource_List.ncpus`` (else ``nodes`` × ``ppn``); requested time ``Resource_List.walltime``;
CPU time ``resources_used.cput`` and memory ``resources_used.mem`` per processor; requested
memory ``Resource_List.mem`` per processor; status 1 for ``Exit_status=0``, else 0 (a job
without ``start`` never ran: status 5); user, group and queue numbered by first submission.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from sitesim import __version__
from sitesim.formats.choose import not_the_format, read_text
from sitesim.formats.converted import Converted
from sitesim.formats.lines import FormatError, Skipped, format_error, out_of_range
from sitesim.formats.times import iso_utc, started_before_submit
from sitesim.workload.names import header_lines, number_names
from sitesim.workload.swf import COLUMN, FIELDS, SWFTrace

_RECORD = re.compile(r"^(\d\d/\d\d/\d{4} \d\d:\d\d:\d\d);([A-Za-z]);([^;]*);(.*)$")
_HMS = re.compile(r"^(?:(\d+):)?(\d+):(\d+)$")
_SIZE = re.compile(r"^(\d+)([kmgtp]?)(b|w)?$", re.IGNORECASE)
_KB = {"": 1 / 1024, "k": 1, "m": 1024, "g": 1024**2, "t": 1024**3, "p": 1024**4}
_HOST_CPUS = re.compile(r"^[^/]+/(\d+)(?:-(\d+))?(?:\*(\d+))?$")
_NODES = re.compile(r"^(\d+)(?::ppn=(\d+))?")


def read_pbs(paths: Sequence[str]) -> Converted:
    """Read PBS/Torque accounting logs (one or more files, e.g. one a day) into SWF.

    Raises:
        FormatError: a file that is not an accounting log, or a malformed ``E`` record: the
            message names the file, the line and the field.
    """
    skipped = Skipped()
    rows: list[list[float]] = []
    text_fields: dict[str, list[str]] = {"user": [], "group": [], "queue": [], "jobname": []}
    kept = _Kept()
    for path in map(str, paths):
        _read_file(path, rows, text_fields, skipped, kept)
    data = np.array(rows, dtype=np.float64).reshape(-1, len(FIELDS))
    order = np.argsort(data[:, COLUMN["submit"]], kind="stable")
    data = data[order]
    lines = [kept.lines[k] for k in order.tolist()]
    names: dict[str, list[str]] = {}
    for kind, key, column in (("users", "user", "user"), ("groups", "group", "group"),
                              ("job names", "jobname", "executable"),
                              ("queues", "queue", "queue")):  # fmt: skip
        values = np.array(text_fields[key], dtype=str)[order]
        data[:, COLUMN[column]], names[kind] = number_names(values)
    origin = math.floor(float(data[:, COLUMN["submit"]].min())) if len(data) else 0
    data[:, COLUMN["submit"]] -= origin
    data[:, COLUMN["job"]] = np.arange(1, len(data) + 1)
    notes = ["users (field 12) and groups (field 13) numbered by first submission"]
    skews = np.array(kept.skews)
    if (skews > 0).any():
        notes.append(started_before_submit(int((skews > 0).sum()), float(skews.max()), "queued"))
    header = [
        "; Version: 2.2",
        "; Computer: unknown (PBS accounting log)",
        f"; Conversion: sitesim {__version__} convert, from PBS accounting logs "
        f"{', '.join(str(p).rsplit('/', 1)[-1] for p in paths)}",
        f"; MaxJobs: {len(data)}",
        f"; MaxRecords: {len(data)}",
        f"; UnixStartTime: {origin}",
        "; TimeZoneString: UTC",
    ]
    if len(data):
        header.append(f"; StartTime: {iso_utc(origin)}")
        procs = data[:, COLUMN["procs"]]
        header.append(f"; MaxProcs: {int(procs.max()) if (procs > 0).any() else -1}")
        header.append("; Note: MaxProcs is the largest job (a lower bound of the machine)")
    header.append(f"; Note: {skipped.summary()}")
    header += [f"; Note: {note}" for note in notes]
    header.append(f"; MaxQueues: {len(names['queues'])}")
    header += header_lines("Queue", names["queues"])
    trace = SWFTrace(str(paths[0]) if len(paths) == 1 else "PBS accounting logs", header, data)
    return Converted(trace, skipped, names, notes, source=lines.__getitem__)


@dataclass
class _Kept:
    """For each kept record, in file order: ``file:line`` and its clock skew (seconds)."""

    lines: list[str] = field(default_factory=list)
    skews: list[float] = field(default_factory=list)


def _read_file(
    name: str,
    rows: list[list[float]],
    text_fields: dict[str, list[str]],
    skipped: Skipped,
    log: _Kept,
) -> None:
    text = read_text(name)
    seen_record = False
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        match = _RECORD.match(line.strip())
        if not match:
            if not seen_record:
                raise not_the_format(
                    name, number, "record", "a PBS accounting log", text,
                    "each line should read MM/DD/YYYY HH:MM:SS;E;JOBID;key=value ...",
                )  # fmt: skip
            raise format_error(
                name, number, "record",
                "not an accounting record (MM/DD/YYYY HH:MM:SS;TYPE;JOBID;key=value ...): "
                "truncated?",
            )  # fmt: skip
        seen_record = True
        kind = match[2].upper()
        if kind != "E":
            skipped.add(f"record type {kind} (only E records end a job)", f"{name}:{number}", line)
            continue
        values = _values(match[4])
        try:
            row, skew = _job(name, number, values)
        except _Skip as why:
            skipped.add(str(why), f"{name}:{number}", line)
            continue
        rows.append(row)
        log.lines.append(f"{name}:{number}")
        log.skews.append(skew)
        for key in text_fields:
            text_fields[key].append(values.get(key, ""))


class _Skip(Exception):
    """A well-formed E record that cannot become a job; the message is the reason."""


def _values(text: str) -> dict[str, str]:
    """``key=value`` pairs; a word without ``=`` continues the previous value (a job name
    with a space)."""
    values: dict[str, str] = {}
    last = None
    for word in text.split():
        key, equals, value = word.partition("=")
        if equals:
            values[key] = value
            last = key
        elif last is not None:
            values[last] += " " + word
    return values


def _job(name: str, number: int, v: dict[str, str]) -> tuple[list[float], float]:
    """The SWF line of an ``E`` record, and how many seconds it started before it was queued
    (clock skew; 0 if it did not)."""

    def error(key: str, problem: str) -> FormatError:
        return format_error(name, number, key, problem)

    def in_range(key: str, text: str, value: float, kind: str) -> float:
        """``value`` (read from ``text``), unless of an absurd size for an SWF field of
        ``kind`` (a time: ``runtime``; else ``procs``)."""
        problem = out_of_range(kind, text, value)
        if problem:
            raise error(key, problem)
        return value

    def whole(key: str, negative: str, other: str, kind: str) -> float:
        """A whole number >= 0 (NaN: absent); ``negative`` and ``other`` name what is wrong."""
        text = v.get(key, "")
        if text == "":
            return math.nan
        if not text.isdigit():
            raise error(key, f"{text!r} is {negative if text.lstrip('-').isdigit() else other}")
        return in_range(key, text, float(text), kind)

    def stamp(key: str) -> float:
        seconds = whole(key, "a negative time", "not Unix seconds", "runtime")
        return seconds if seconds > 0 else math.nan

    def count(key: str) -> float:
        return whole(key, "a negative count", "not a count", "procs")

    def duration(key: str) -> float:
        text = v.get(key, "")
        if text == "":
            return math.nan
        if text.isdigit():
            return in_range(key, text, float(text), "runtime")
        match = _HMS.match(text)
        if not match:
            raise error(key, f"{text!r} is not a duration (HH:MM:SS or seconds)")
        hours, minutes, seconds = (float(g) if g else 0.0 for g in match.groups())
        return in_range(key, text, hours * 3600 + minutes * 60 + seconds, "runtime")

    def size_kb(key: str) -> float:
        text = v.get(key, "")
        if text == "":
            return math.nan
        match = _SIZE.match(text)
        if not match:
            raise error(key, f"{text!r} is not a size such as 4gb or 1024kb")
        words = 8 if (match[3] or "").lower() == "w" else 1
        return in_range(key, text, float(match[1]) * words * _KB[match[2].lower()], "memory")

    submit = stamp("qtime")
    if math.isnan(submit):
        submit = stamp("ctime")
    if math.isnan(submit):
        raise error("qtime", "the E record has neither qtime nor ctime: no submit time")
    start, end = stamp("start"), stamp("end")
    ncpus = count("Resource_List.ncpus")
    nodes, ppn = _nodes(v.get("Resource_List.nodes", ""))
    requested = ncpus if ncpus > 0 else nodes * ppn
    key = "Resource_List.ncpus" if ncpus > 0 else "Resource_List.nodes"
    requested = in_range(key, v.get(key, ""), requested, "procs") if requested > 0 else requested
    procs = _exec_host_cpus(v.get("exec_host", ""))
    if math.isnan(procs):
        procs = requested if requested > 0 else count("Resource_List.nodect")
    else:
        procs = in_range("exec_host", v["exec_host"], procs, "procs")
    ran = not math.isnan(start)
    if ran and not math.isnan(end) and end < start:
        raise _Skip("ends before it starts")
    skew = submit - start if ran and start < submit else 0.0
    cput, mem = duration("resources_used.cput"), size_kb("resources_used.mem")
    req_mem = size_kb("Resource_List.mem")
    exit_status = v.get("Exit_status", "")
    if exit_status and not exit_status.lstrip("-").isdigit():
        raise error("Exit_status", f"{exit_status!r} is not a whole number")
    row = [-1.0] * len(FIELDS)
    row[COLUMN["submit"]] = submit
    row[COLUMN["wait"]] = max(start - submit, 0.0) if ran else -1  # (clock skew: wait 0)
    row[COLUMN["runtime"]] = end - start if ran and not math.isnan(end) else -1
    row[COLUMN["procs"]] = procs if ran and procs > 0 else -1
    per = procs if procs > 0 else math.nan
    row[COLUMN["cpu"]] = cput / per if ran and cput == cput and per == per else -1
    row[COLUMN["memory"]] = round(mem / per) if ran and mem == mem and per == per else -1
    row[COLUMN["req_procs"]] = requested if requested > 0 else (procs if procs > 0 else -1)
    limit = duration("Resource_List.walltime")
    row[COLUMN["req_time"]] = limit if limit == limit else -1
    req_per = row[COLUMN["req_procs"]]
    row[COLUMN["req_memory"]] = round(req_mem / req_per) if req_mem == req_mem and req_per > 0 \
        else -1  # fmt: skip
    row[COLUMN["status"]] = 5 if not ran else (1 if exit_status in ("", "0") else 0)
    return row, skew


def _nodes(text: str) -> tuple[float, float]:
    """``Resource_List.nodes``: (nodes, CPUs a node) of ``2:ppn=8`` (NaN when not a count)."""
    match = _NODES.match(text)
    if not match:
        return math.nan, math.nan
    return float(match[1]), float(match[2] or 1)


def _exec_host_cpus(text: str) -> float:
    """The CPUs of ``exec_host``: ``n01/0-7+n02/0*8+n03/5`` is 8 + 8 + 1 (NaN if none)."""
    if not text:
        return math.nan
    total = 0.0
    for part in text.split("+"):
        match = _HOST_CPUS.match(part)
        if not match:
            return math.nan
        low, high, times = match.groups()
        total += float(times) if times else (float(high) - float(low) + 1 if high else 1)
    return total
