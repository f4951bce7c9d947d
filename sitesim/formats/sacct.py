"""Slurm's accounting, as ``sacct --parsable2 --allocations`` prints it, to SWF.

The command (docs/howto/site-data.md says why each option)::

    TZ=UTC sacct --allusers --allocations --parsable2 --starttime 2024-01-01 \\
        --endtime 2024-07-01 --format JobID,JobIDRaw,User,Account,Partition,QOS,Submit,\\
    Eligible,Start,End,Timelimit,NNodes,NCPUS,ReqCPUS,ReqMem,AllocTRES,ReqTRES,State,ExitCode

The first line names the fields (any order, any case; :data:`REQUIRED` must be there), each
other line is one job, its fields separated by ``|`` (``--parsable`` adds a trailing ``|``,
which is accepted). Times are ``YYYY-MM-DDTHH:MM:SS`` local times (see
:mod:`sitesim.formats.times`) or Unix seconds; durations Slurm's ``[days-]hours:minutes:seconds``
or ``UNLIMITED`` / ``Partition_Limit``.

What becomes of each line (the reference page, docs/reference/formats.md, has the table):

- a job step (``123.batch``: sacct run without ``--allocations``), a job still pending or
  running when the log was taken, an earlier run of a requeued job (``--duplicates``) and a
  repeated header line are skipped, counted by reason;
- a job that never started (cancelled while pending) is kept, as SWF keeps it: wait, runtime
  and processors -1, status 5;
- each task of a job array is a job (``123_4``); a range still pending or cancelled as one
  line (``123_[5-9%2]``) becomes one job a task;
- the components of a heterogeneous job (``123+0``, ``123+1``) start together: they become one
  job, their processors summed, in the first component's partition;
- users and accounts (fields 12 and 13), job names (field 14), QOS (field 15, the SWF queue)
  and partitions (field 16) are numbered by first submission (:mod:`sitesim.formats.names`).

The reading is columnar: a block of lines is split at once, and each field parsed with NumPy
(times, counts) or once per distinct value (states, limits, TRES), so a million lines take
seconds.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from zoneinfo import ZoneInfo

import numpy as np

from sitesim import __version__
from sitesim.formats.choose import not_the_format, read_text
from sitesim.formats.converted import Converted
from sitesim.formats.lines import QUOTED, Skipped, format_error
from sitesim.formats.names import header_lines, number_names
from sitesim.formats.times import FORMATS, parse_stamps, stamp_kind, zone
from sitesim.platform import format_duration, parse_duration
from sitesim.swf import COLUMN, FIELDS, SWFTrace

#: Fields every line must have (JobID or JobIDRaw; NCPUS or AllocCPUS).
REQUIRED = ("JobID", "Submit", "Start", "End", "State")
#: Fields read when present.
OPTIONAL = (
    "JobIDRaw", "User", "Account", "Partition", "QOS", "Eligible", "Timelimit", "NNodes",
    "NCPUS", "AllocCPUS", "ReqCPUS", "ReqMem", "AllocTRES", "ReqTRES", "ExitCode", "JobName",
    "Cluster", "NodeList",
)  # fmt: skip
#: The documented field list, as the how-to's command gives it.
DOCUMENTED = (
    "JobID", "JobIDRaw", "User", "Account", "Partition", "QOS", "Submit", "Eligible", "Start",
    "End", "Timelimit", "NNodes", "NCPUS", "ReqCPUS", "ReqMem", "AllocTRES", "ReqTRES", "State",
    "ExitCode",
)  # fmt: skip
#: Lines split at a time (bounds the memory of the text's pieces).
BLOCK = 100_000

#: Slurm's job states (the first word of State: ``CANCELLED by 1234``) and SWF's status.
ENDED = {
    "COMPLETED": 1, "CANCELLED": 5, "FAILED": 0, "TIMEOUT": 0, "NODE_FAIL": 0,
    "OUT_OF_MEMORY": 0, "BOOT_FAIL": 0, "DEADLINE": 0, "PREEMPTED": 0, "REVOKED": 0,
}  # fmt: skip
#: States of a job not ended when the log was taken, and the reason it is skipped.
NOT_ENDED = {
    "PENDING": "still pending when the log was taken",
    "RUNNING": "still running when the log was taken",
    "SUSPENDED": "still running when the log was taken",
    "COMPLETING": "still running when the log was taken",
    "CONFIGURING": "still running when the log was taken",
    "RESIZING": "still running when the log was taken",
    "REQUEUED": "an earlier run of a requeued job (--duplicates)",
    "REQUEUE_HOLD": "an earlier run of a requeued job (--duplicates)",
    "REQUEUE_FED": "an earlier run of a requeued job (--duplicates)",
    "SPECIAL_EXIT": "an earlier run of a requeued job (--duplicates)",
}
STEP = "a job step (give sacct --allocations)"
HEADER_AGAIN = "the header line repeated"

_ARRAY_RANGE = re.compile(r"^(\d+)_\[([0-9,\-]+)(?:%\d+)?\]$")
_JOB_ID = re.compile(r"^\d+(?:_\d+)?(?:\+\d+)?$")
_TRES_PART = re.compile(r"^([a-z/:_.0-9]+)=([0-9.]+)([KMGTP]?)$", re.IGNORECASE)
_REQ_MEM = re.compile(r"^([0-9.]+)([KMGTP]?)([nc]?)$")
_UNIT_MB = {"": 1.0, "K": 1 / 1024, "M": 1.0, "G": 1024.0, "T": 1024.0**2, "P": 1024.0**3}
_COUNT = re.compile(r"^\d+$")


@dataclass
class _Columns:
    """The fields of the kept lines, as arrays (one element a line)."""

    line: np.ndarray  # 1-based line numbers
    text: dict[str, np.ndarray]  # field -> strings


def read_sacct(
    paths: Sequence[str], *, timezone: str = "UTC", submit_time: str = "submit"
) -> Converted:
    """Read sacct ``--parsable2`` output (one or more files) into SWF.

    Args:
        paths: the files, read in turn (a log split by month, for instance).
        timezone: the IANA zone of ``YYYY-MM-DDTHH:MM:SS`` times (sacct prints the local
            times of the machine it runs on).
        submit_time: ``submit`` (when the job was submitted, sacct's Submit) or ``eligible``
            (when it could first start: after a hold, a dependency, a begin time; sacct's
            Eligible, which must then be among the fields).

    Raises:
        FormatError: a file that is not sacct output, or a malformed line: the message names
            the file, the line and the field.
    """
    tz = zone(timezone)
    skipped = Skipped()
    blocks: list[_Columns] = []
    names: list[str] = []
    for path in paths:
        fields, columns = _read_file(str(path), skipped)
        if blocks and fields != names:
            raise format_error(
                str(path), columns.line[0] if len(columns.line) else 1, "header",
                f"names other fields ({'|'.join(fields)}) than {paths[0]} "
                f"({'|'.join(names)}); give files of one sacct command",
            )  # fmt: skip
        names = fields
        blocks.append(columns)
    columns = _Columns(
        np.concatenate([b.line for b in blocks]),
        {f: np.concatenate([b.text[f] for b in blocks]) for f in names},
    )
    files = np.concatenate([np.full(len(b.line), k, dtype=np.int32) for k, b in enumerate(blocks)])
    if submit_time == "eligible" and "Eligible" not in names:
        raise format_error(
            str(paths[0]), 1, "header", "--submit-time eligible needs the field Eligible"
        )
    return _convert(list(map(str, paths)), files, columns, tz, submit_time, skipped)


# -- reading the text --------------------------------------------------------------------------
def _read_file(name: str, skipped: Skipped) -> tuple[list[str], _Columns]:
    text = read_text(name)
    lines = text.splitlines()
    first = next((k for k, line in enumerate(lines) if line.strip()), None)
    if first is None:
        raise not_the_format(name, 1, "header", "sacct output", text, "the file is empty")
    header = lines[first].strip()
    trailing = header.endswith("|")  # --parsable: every line ends with a "|"
    fields = _header_fields(name, first + 1, header[:-1] if trailing else header, text)
    width = len(fields)
    numbers: list[np.ndarray] = []
    pieces: dict[str, list[np.ndarray]] = {f: [] for f in fields}
    again = lines[first].strip().upper()
    for lo in range(first + 1, len(lines), BLOCK):
        block = lines[lo : lo + BLOCK]
        kept = []
        for k, line in enumerate(block):
            stripped = line.strip()
            if stripped.upper() == again:
                skipped.add(HEADER_AGAIN, f"{name}:{lo + k + 1}", stripped)
            elif stripped:
                kept.append(k)
        rows = [block[k].rstrip("\r\n").split("|") for k in kept]
        if trailing:
            rows = [row[:-1] if row and row[-1] == "" else row for row in rows]
        bad = next((k for k, row in enumerate(rows) if len(row) != width), None)
        if bad is not None:
            found = len(rows[bad])
            problem = "truncated" if found < width else "too long"
            missing = fields[found] if found < width else fields[-1]
            raise format_error(
                name, lo + kept[bad] + 1, missing,
                f"line {problem}: {found} fields, the header names {width}",
            )  # fmt: skip
        numbers.append(np.asarray(kept, dtype=np.int64) + lo + 1)
        columns = list(zip(*rows, strict=True)) if rows else [() for _ in fields]
        for field_name, values in zip(fields, columns, strict=True):
            pieces[field_name].append(np.array(values, dtype=str))
    numbered = np.concatenate(numbers) if numbers else np.empty(0, dtype=np.int64)
    text_columns = {
        f: np.concatenate(v) if v else np.empty(0, dtype=str) for f, v in pieces.items()
    }
    return fields, _Columns(numbered, text_columns)


def _header_fields(name: str, number: int, header: str, text: str) -> list[str]:
    """The canonical field names of the header line; errors for another format."""
    expected = (
        "its first line should name the fields, such as JobID|User|Submit|Start|End|NCPUS|"
        "State (sacct --parsable2)"
    )
    if "|" not in header:
        raise not_the_format(name, number, "header", "sacct --parsable2 output", text, expected)
    known = {f.lower(): f for f in (*REQUIRED, *OPTIONAL)}
    fields = [known.get(part.strip().lower(), part.strip()) for part in header.split("|")]
    if "JobID" not in fields and "JobIDRaw" not in fields:
        raise not_the_format(name, number, "header", "sacct --parsable2 output", text, expected)
    if "NCPUS" not in fields and "AllocCPUS" not in fields:
        missing = "NCPUS"
    else:
        missing = next((f for f in REQUIRED if f not in fields and f != "JobID"), "")
    if missing:
        raise format_error(
            name, number, "header",
            f"sacct output without the field {missing}; the fields needed are "
            f"{', '.join(REQUIRED)} and NCPUS (the how-to's command gives them all)",
        )  # fmt: skip
    repeated = next((f for f in fields if fields.count(f) > 1), None)
    if repeated:
        raise format_error(name, number, "header", f"names {repeated} twice")
    return fields


# -- from text to numbers ----------------------------------------------------------------------
class _Fields:
    """Parses fields of the kept lines; every error names the file, line and field."""

    def __init__(self, paths: list[str], files: np.ndarray, columns: _Columns) -> None:
        self.paths, self.files, self.columns = paths, files, columns

    def has(self, name: str) -> bool:
        return name in self.columns.text

    def text(self, name: str) -> np.ndarray:
        return self.columns.text[name]

    def error(self, row: int, name: str, problem: str) -> Exception:
        path = self.paths[int(self.files[row])]
        return format_error(path, int(self.columns.line[row]), name, problem)

    def stamps(self, name: str, tz: ZoneInfo) -> np.ndarray:
        """Times, seconds since the epoch (NaN: Unknown)."""
        values = self.text(name)
        sample = next((v for v in _distinct_known(values)), None)
        kind = stamp_kind(sample) if sample is not None else "epoch"
        if kind is None:
            row = int(np.flatnonzero(values == sample)[0])
            raise self.error(row, name, f"{sample!r} is not a time sacct prints ({FORMATS})")
        seconds, bad = parse_stamps(values, kind, tz)
        if bad is not None:
            raise self.error(
                bad, name, f"{str(values[bad])!r} is not a time sacct prints ({FORMATS}; this "
                "file's times are " + ("Unix seconds)" if kind == "epoch" else
                                       "YYYY-MM-DDTHH:MM:SS)"),
            )  # fmt: skip
        return seconds

    def counts(self, name: str) -> np.ndarray:
        """Whole numbers >= 0 (-1: empty)."""
        values = self.text(name)
        empty = values == ""
        try:
            if (np.char.str_len(values) > 15).any():
                raise ValueError
            numbers = np.where(empty, "-1", values).astype(np.int64)
        except ValueError:
            numbers = None
        if numbers is None or (numbers[~empty] < 0).any():
            for row, value in enumerate(values.tolist()):
                if value != "" and not _COUNT.match(value):
                    negative = value.startswith("-") and _COUNT.match(value[1:])
                    what = "a negative count" if negative else "not a count (a whole number)"
                    raise self.error(row, name, f"{value!r} is {what}")
        assert numbers is not None
        return numbers

    def parse_distinct(self, name: str, parse: object) -> np.ndarray:
        """``parse(text)`` of each line's value, computed once per distinct value; a
        ValueError names the first line holding the value."""
        distinct, inverse = np.unique(self.text(name), return_inverse=True)
        out = []
        for value in distinct.tolist():
            try:
                out.append(parse(value))  # type: ignore[operator]
            except ValueError as err:
                row = int(np.flatnonzero(self.text(name) == value)[0])
                raise self.error(row, name, str(err)) from None
        return np.array(out, dtype=np.float64)[inverse.reshape(-1)]


def _distinct_known(values: np.ndarray) -> list[str]:
    from sitesim.formats.times import UNKNOWN_STAMPS

    sample = values[:10_000]
    return [v for v in np.unique(sample).tolist() if v not in UNKNOWN_STAMPS] or [
        v for v in np.unique(values).tolist() if v not in UNKNOWN_STAMPS
    ]


def _limit(text: str) -> float:
    """A time limit in seconds; NaN for UNLIMITED, Partition_Limit or nothing."""
    if text in ("", "UNLIMITED", "INFINITE", "Partition_Limit", "None"):
        return math.nan
    try:
        return parse_duration(text)
    except ValueError:
        raise ValueError(
            f"{text!r} is not a time limit sacct prints ([days-]hours:minutes:seconds, "
            "UNLIMITED or Partition_Limit)"
        ) from None


def _tres(text: str) -> tuple[float, float]:
    """(GPUs, memory in MB) of a TRES list such as ``cpu=4,mem=16G,node=1,gres/gpu=2``."""
    gpus = memory = math.nan
    if not text:
        return gpus, memory
    for part in text.split(","):
        match = _TRES_PART.match(part.strip())
        if not match:
            raise ValueError(f"{part!r} is not a TRES such as cpu=4 or mem=16G")
        key, number, unit = match[1].lower(), float(match[2]), match[3].upper()
        if key == "gres/gpu":
            gpus = number
        elif key == "mem":
            memory = number * _UNIT_MB[unit]
    return gpus, memory


def _req_mem(text: str) -> tuple[float, str]:
    """ReqMem: (MB, per ``n`` node / ``c`` CPU / ``""`` job)."""
    if text in ("", "0", "0n", "0c"):
        return math.nan, ""
    match = _REQ_MEM.match(text)
    if not match:
        raise ValueError(f"{text!r} is not a memory size such as 4000M, 4Gn or 2Gc")
    return float(match[1]) * _UNIT_MB[match[2]], match[3]


def _state(text: str) -> str:
    word = text.split(" ")[0].rstrip("+").upper()
    if word not in ENDED and word not in NOT_ENDED:
        raise ValueError(
            f"{text!r} is not a Slurm job state (COMPLETED, CANCELLED, FAILED, TIMEOUT, ...)"
        )
    return word


# -- lines to jobs -----------------------------------------------------------------------------
def _convert(
    paths: list[str],
    files: np.ndarray,
    columns: _Columns,
    tz: ZoneInfo,
    submit_time: str,
    skipped: Skipped,
) -> Converted:
    f = _Fields(paths, files, columns)
    ids = f.text("JobID") if f.has("JobID") else f.text("JobIDRaw")
    id_field = "JobID" if f.has("JobID") else "JobIDRaw"
    keep = np.ones(len(ids), dtype=bool)

    def skip(mask: np.ndarray, reason: str) -> None:
        found = np.flatnonzero(mask & keep)
        quotes = [
            (f"{paths[int(files[row])]}:{int(columns.line[row])}",
             "|".join(columns.text[n][row] for n in columns.text))
            for row in found[:QUOTED].tolist()
        ]  # fmt: skip
        skipped.add_many(reason, len(found), quotes)
        keep[mask] = False

    skip(np.char.find(ids, ".") >= 0, STEP)
    bad_id = next(
        (r for r in np.flatnonzero(keep).tolist()
         if not _JOB_ID.match(ids[r]) and not _ARRAY_RANGE.match(ids[r])), None
    )  # fmt: skip
    if bad_id is not None:
        raise f.error(bad_id, id_field, f"{str(ids[bad_id])!r} is not a Slurm job id (123, 123_4, "
                      "123_[5-9], 123+0)")  # fmt: skip
    distinct, inverse = np.unique(f.text("State"), return_inverse=True)
    words = []
    for value in distinct.tolist():
        try:
            words.append(_state(value))
        except ValueError as err:
            row = int(np.flatnonzero(f.text("State") == value)[0])
            raise f.error(row, "State", str(err)) from None
    state = np.array(words, dtype=object)[inverse.reshape(-1)] if words else np.empty(0, object)
    for word, reason in NOT_ENDED.items():
        skip(state == word, reason)

    submit = f.stamps("Submit", tz)
    start = f.stamps("Start", tz)
    end = f.stamps("End", tz)
    eligible = f.stamps("Eligible", tz) if f.has("Eligible") else submit
    cpus = f.counts("NCPUS" if f.has("NCPUS") else "AllocCPUS")
    nodes = f.counts("NNodes") if f.has("NNodes") else np.full(len(ids), -1)
    req_cpus = f.counts("ReqCPUS") if f.has("ReqCPUS") else np.full(len(ids), -1)
    limit = (
        f.parse_distinct("Timelimit", _limit) if f.has("Timelimit") else np.full(len(ids), np.nan)
    )
    gpus, memory = _resources(f)
    never = np.isnan(start)
    if f.has("NodeList"):
        never |= f.text("NodeList") == "None assigned"
    no_submit = np.isnan(submit) & keep
    if no_submit.any():
        row = int(np.flatnonzero(no_submit)[0])
        raise f.error(
            row, "Submit", f"{str(f.text('Submit')[row])!r}: an ended job without a submit time"
        )
    skip(~never & (start < submit), "starts before it was submitted")
    skip(~never & (end < start), "ends before it starts")
    if submit_time == "eligible":
        submit = np.where(np.isnan(eligible), submit, np.maximum(eligible, submit))

    rows = np.flatnonzero(keep)
    rows, tasks, notes = _arrays_and_components(ids, rows, state, never)
    status = np.array([ENDED[s] for s in state[rows].tolist()], dtype=np.float64)
    # one SWF job per kept row (a pending array range repeated once per task)
    order = np.lexsort((np.arange(len(rows)), submit[rows]))
    rows, tasks, status = rows[order], tasks[order], status[order]
    comp = _components(ids, rows)
    sub, st, en = submit[rows], start[rows], end[rows]
    cp, nd, req = cpus[rows].astype(np.float64), nodes[rows], req_cpus[rows]
    lim, gp, mem = limit[rows], gpus[rows], memory[rows]
    if comp is not None:  # heterogeneous jobs: the later components fold into the first
        head, members = comp
        np.add.at(cp, head, np.where(members, cp, 0))
        np.add.at(nd, head, np.where(members, nd, 0))
        np.add.at(req, head, np.where(members & (req > 0), req, 0))
        np.add.at(gp, head, np.where(members & np.isfinite(gp), gp, 0))
        np.fmax.at(en, head, np.where(members, en, np.nan))
        np.fmax.at(lim, head, np.where(members, lim, np.nan))
        sel = ~members
        rows, tasks, status = rows[sel], tasks[sel], status[sel]
        sub, st, en, cp, nd, req = sub[sel], st[sel], en[sel], cp[sel], nd[sel], req[sel]
        lim, gp, mem = lim[sel], gp[sel], mem[sel]
        notes.append(
            f"{_count(int(members.sum()), 'later component')} of heterogeneous jobs merged "
            "into their first"
        )
    rows, sub, st, en = np.repeat(rows, tasks), np.repeat(sub, tasks), np.repeat(st, tasks), \
        np.repeat(en, tasks)  # fmt: skip
    status, cp, req, lim = np.repeat(status, tasks), np.repeat(cp, tasks), \
        np.repeat(req, tasks), np.repeat(lim, tasks)  # fmt: skip
    gp, mem, nd = np.repeat(gp, tasks), np.repeat(mem, tasks), np.repeat(nd, tasks)
    started = ~never[rows]

    n = len(rows)
    data = np.full((n, len(FIELDS)), -1.0)
    origin = math.floor(float(sub.min())) if n else 0
    data[:, COLUMN["job"]] = np.arange(1, n + 1)
    data[:, COLUMN["submit"]] = sub - origin
    data[:, COLUMN["wait"]] = np.where(started, st - sub, -1.0)
    ended = started & ~np.isnan(en)
    data[:, COLUMN["runtime"]] = np.where(ended, en - st, -1.0)
    data[:, COLUMN["procs"]] = np.where(started & (cp >= 0), cp, -1.0)
    requested = np.where(req > 0, req, cp)
    data[:, COLUMN["req_procs"]] = np.where(requested > 0, requested, -1.0)
    data[:, COLUMN["req_time"]] = np.where(np.isnan(lim), -1.0, lim)
    per_proc = np.where(requested > 0, np.round(mem * 1024 / np.maximum(requested, 1)), np.nan)
    data[:, COLUMN["req_memory"]] = np.where(np.isfinite(per_proc), per_proc, -1.0)
    data[:, COLUMN["status"]] = status
    names: dict[str, list[str]] = {}
    for kind, name, column in (
        ("users", "User", "user"), ("accounts", "Account", "group"),
        ("job names", "JobName", "executable"), ("queues", "QOS", "queue"),
        ("partitions", "Partition", "partition"),
    ):  # fmt: skip
        if f.has(name):
            numbers, names[kind] = number_names(f.text(name)[rows])
            data[:, COLUMN[column]] = numbers
    unlimited = int(np.count_nonzero(np.isin(f.text("Timelimit")[rows], ("UNLIMITED",
                                                                           "Partition_Limit")))
                    ) if f.has("Timelimit") else 0  # fmt: skip
    if unlimited:
        notes.append(
            f"{_count(unlimited, 'job')} with time limit UNLIMITED or Partition_Limit: "
            "requested time -1"
        )
    peak = _peak(st, en, cp, started & ~np.isnan(en))
    part = data[:, COLUMN["partition"]].astype(np.int64) - 1
    platform = _platform(names, part, st, en, cp, nd, gp, lim, started & ~np.isnan(en))
    clusters = sorted(set(f.text("Cluster")[rows].tolist())) if f.has("Cluster") else []
    header = _header(paths, n, origin, sub, tz, peak, names, skipped, notes, clusters)
    trace = SWFTrace(paths[0] if len(paths) == 1 else "sacct output", header, data)
    return Converted(trace, skipped, names, notes, platform)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _resources(f: _Fields) -> tuple[np.ndarray, np.ndarray]:
    """Per line: GPUs allocated (AllocTRES, else ReqTRES) and memory requested in MB
    (ReqTRES, else ReqMem, else AllocTRES); NaN where unknown."""
    n = len(f.columns.line)
    gpus = memory = np.full(n, np.nan)
    for name in ("AllocTRES", "ReqTRES"):
        if f.has(name):
            pairs = f.parse_distinct(name, lambda text: _tres(text)[0])
            gpus = np.where(np.isnan(gpus), pairs, gpus)
    for name in ("ReqTRES", "AllocTRES"):
        if f.has(name):
            mem = f.parse_distinct(name, lambda text: _tres(text)[1])
            memory = np.where(np.isnan(memory), mem, memory)
    if f.has("ReqMem"):
        size = f.parse_distinct("ReqMem", lambda text: _req_mem(text)[0])
        per = f.parse_distinct("ReqMem", lambda text: "nc".find(_req_mem(text)[1]))
        nodes = f.counts("NNodes").astype(np.float64) if f.has("NNodes") else np.ones(n)
        cpus = f.counts("NCPUS" if f.has("NCPUS") else "AllocCPUS").astype(np.float64)
        total = np.select([per == 0, per == 1], [size * np.maximum(nodes, 1), size * cpus], size)
        memory = np.where(np.isnan(memory), total, memory)
    return gpus, memory


def _arrays_and_components(
    ids: np.ndarray, rows: np.ndarray, state: np.ndarray, never: np.ndarray
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The kept rows, how many jobs each stands for (a range ``123_[5-9]`` one a task), and
    notes."""
    tasks = np.ones(len(rows), dtype=np.int64)
    notes: list[str] = []
    ranged = np.flatnonzero(np.char.find(ids[rows], "[") >= 0)
    for k in ranged.tolist():
        match = _ARRAY_RANGE.match(ids[rows[k]])
        assert match is not None
        count = 0
        for part in match[2].split(","):
            low, _, high = part.partition("-")
            count += int(high or low) - int(low) + 1 if low else 0
        tasks[k] = max(count, 1)
    if len(ranged):
        notes.append(
            f"{_count(len(ranged), 'line')} of array tasks that never started (123_[5-9]) "
            f"give {_count(int(tasks[ranged].sum()), 'job')}, one a task"
        )
    return rows, tasks, notes


def _components(ids: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """For heterogeneous jobs (``123+0``, ``123+1``): each row's first component's position,
    and which rows are later components; None when there are none."""
    plus = np.char.find(ids[rows], "+")
    if not (plus >= 0).any():
        return None
    head = np.arange(len(rows))
    members = np.zeros(len(rows), dtype=bool)
    first: dict[str, int] = {}
    for k in np.flatnonzero(plus >= 0).tolist():
        base = ids[rows[k]].split("+")[0]
        if base in first:
            head[k], members[k] = first[base], True
        else:
            first[base] = k
    return head, members


def _peak(start: np.ndarray, end: np.ndarray, amount: np.ndarray, ran: np.ndarray) -> int:
    """The most of ``amount`` in use at once by the jobs that ran (ends before starts at one
    instant)."""
    if not ran.any():
        return 0
    times = np.concatenate([start[ran], end[ran]])
    change = np.concatenate([amount[ran], -amount[ran]])
    order = np.lexsort((change, times))
    return int(np.cumsum(change[order]).max())


def _platform(
    names: dict[str, list[str]],
    part: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    cpus: np.ndarray,
    nodes: np.ndarray,
    gpus: np.ndarray,
    limit: np.ndarray,
    ran: np.ndarray,
) -> dict[str, object] | None:
    """The platform the log shows, one node type a partition: as many nodes as the
    partition's jobs held at once, with as many cores (GPUs) as one of its jobs held on one
    node; the longest time limit seen. A lower bound: sacct does not say which nodes the
    partitions share, nor what was never used."""
    if "partitions" not in names or not (nodes > 0).any() or not ran.any():
        return None
    node_types, partitions = [], []
    for k, pname in enumerate(names["partitions"]):
        mine = ran & (part == k) & (nodes > 0)
        if not mine.any():
            continue
        per_node = np.ceil(cpus[mine] / nodes[mine])
        cores = int(per_node.max())
        count = _peak(start[mine], end[mine], nodes[mine].astype(np.float64), np.ones(
            int(mine.sum()), dtype=bool))  # fmt: skip
        node: dict[str, object] = {"type": f"{pname}-node", "count": max(count, 1),
                                   "cores": max(cores, 1)}  # fmt: skip
        gpu = gpus[mine] / nodes[mine]
        if np.isfinite(gpu).any() and np.nanmax(gpu) > 0:
            node["gpus"] = int(np.ceil(np.nanmax(gpu)))
        node_types.append(node)
        shared = bool((cpus[mine] < nodes[mine] * cores).any())
        entry: dict[str, object] = {"name": pname, "nodes": [f"{pname}-node"], "swf": [k + 1]}
        limits = limit[mine]
        if np.isfinite(limits).any() and not np.isnan(limits).any():
            entry["max_time"] = format_duration(float(np.nanmax(limits)))
        if shared:
            entry["allocation"] = "shared"
        partitions.append(entry)
    if not partitions:
        return None
    return {"name": "inferred", "nodes": node_types, "partitions": partitions}


def _header(
    paths: list[str],
    jobs: int,
    origin: int,
    submit: np.ndarray,
    tz: ZoneInfo,
    peak: int,
    names: dict[str, list[str]],
    skipped: Skipped,
    notes: list[str],
    clusters: list[str],
) -> list[str]:
    from sitesim.formats.times import iso_utc

    lines = [
        "; Version: 2.2",
        f"; Computer: {', '.join(clusters) or 'unknown (sacct output)'}",
        f"; Conversion: sitesim {__version__} convert, from sacct output "
        f"{', '.join(p.rsplit('/', 1)[-1] for p in paths)}",
        f"; MaxJobs: {jobs}",
        f"; MaxRecords: {jobs}",
        f"; UnixStartTime: {origin}",
        f"; TimeZoneString: {tz.key}",
    ]
    if jobs:
        lines += [f"; StartTime: {iso_utc(origin)}", f"; EndTime: {iso_utc(float(submit.max()))}"]
    lines.append(f"; MaxProcs: {peak}")
    lines.append(
        "; Note: MaxProcs is the most CPUs the log shows in use at once (a lower bound of the "
        "machine)"
    )
    lines.append(f"; Note: {skipped.summary()}")
    lines += [f"; Note: {note}" for note in notes]
    lines.append(
        "; Note: users (field 12) and accounts (field 13) numbered by first submission; "
        "queue (15) is the QOS, partition (16) the Slurm partition"
    )
    if "queues" in names:
        lines.append(f"; MaxQueues: {len(names['queues'])}")
        lines += header_lines("Queue", names["queues"])
    if "partitions" in names:
        lines.append(f"; MaxPartitions: {len(names['partitions'])}")
        lines += header_lines("Partition", names["partitions"])
    return lines
