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
- a job that starts before its submit time (clock skew) is kept: wait 0, runtime as logged,
  counted in a note;
- a line with more fields than the header (a ``|`` inside a job name: ``--parsable2`` cannot
  quote it) is mended when the header has one free-text field (:data:`FREE_TEXT`), else
  skipped and counted; a line with fewer is an error;
- the jobs of several clusters (the field ``Cluster``) are refused unless one is chosen;
- each task of a job array is a job (``123_4``); a range still pending or cancelled as one
  line (``123_[5-9%2]``) becomes one job a task;
- the components of a heterogeneous job (``123+0``, ``123+1``) start together: they become one
  job, their processors summed, in the first component's partition;
- users and accounts (fields 12 and 13), job names (field 14), QOS (field 15, the SWF queue)
  and partitions (field 16) are numbered by first submission (:mod:`sitesim.workload.names`).

The reading is columnar: a block of lines is split at once, and each field parsed with NumPy
(times, counts) or once per distinct value (states, limits, TRES), so a million lines take
seconds.
"""

from __future__ import annotations

import gzip
import math
import operator
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import IO, Any
from zoneinfo import ZoneInfo

import numpy as np

from sitesim import __version__
from sitesim.errors import SitesimError
from sitesim.formats.choose import not_the_format, read_text
from sitesim.formats.converted import Converted
from sitesim.formats.lines import QUOTED, Skipped, format_error, out_of_range
from sitesim.formats.times import (
    FORMATS,
    UNKNOWN_STAMPS,
    StampKind,
    parse_stamps,
    stamp_kind,
    started_before_submit,
    zone,
)
from sitesim.platform.values import format_duration, parse_duration
from sitesim.workload.names import header_lines, number_codes
from sitesim.workload.swf import COLUMN, FIELDS, SWFTrace

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
#: Text read and split at a time (about 5,000 lines: bounds the memory of its pieces, and
#: how long a read of a slow disk can hold off Ctrl-C).
BLOCK_BYTES = 1 << 20

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
TOO_MANY = "more fields than the header names"
NO_END = "no | at the end of the line (the header has one: sacct --parsable)"
#: Fields of free text, which may hold a ``|`` (sacct --parsable2 cannot quote it). A line
#: with more fields than the header names is mended when the header has one of them.
FREE_TEXT = (
    "JobName", "Comment", "AdminComment", "SystemComment", "WorkDir", "SubmitLine",
    "Constraints", "Reason", "StdIn", "StdOut", "StdErr", "Extra",
)  # fmt: skip
HEADER_AGAIN = "the header line repeated"

_ARRAY_RANGE = re.compile(r"^(\d+)_\[([0-9,\-]+)(?:%\d+)?\]$")
_JOB_ID = re.compile(r"^\d+(?:_\d+)?(?:\+\d+)?$")
_TRES_PART = re.compile(r"^([a-z/:_.0-9]+)=([0-9.]+)([KMGTP]?)$", re.IGNORECASE)
_REQ_MEM = re.compile(r"^([0-9.]+)([KMGTP]?)([nc]?)$")
_UNIT_MB = {"": 1.0, "K": 1 / 1024, "M": 1.0, "G": 1024.0, "T": 1024.0**2, "P": 1024.0**3}
_COUNT = re.compile(r"^\d+$")


_BARS = operator.methodcaller("count", "|")
#: Fields kept as text, one element a line.
_TEXT = ("JobID",)
#: Fields parsed as times, a block of lines at a time.
_STAMPS = ("Submit", "Eligible", "Start", "End")
#: Fields not used.
_UNUSED = ("JobIDRaw", "ExitCode")


def read_sacct(
    paths: Sequence[str],
    *,
    timezone: str = "UTC",
    submit_time: str = "submit",
    cluster: str | None = None,
) -> Converted:
    """Read sacct ``--parsable2`` output (one or more files) into SWF.

    Args:
        paths: the files, read in turn (a log split by month, for instance).
        timezone: the IANA zone of ``YYYY-MM-DDTHH:MM:SS`` times (sacct prints the local
            times of the machine it runs on).
        submit_time: ``submit`` (when the job was submitted, sacct's Submit) or ``eligible``
            (when it could first start: after a hold, a dependency, a begin time; sacct's
            Eligible, which must then be among the fields).
        cluster: keep the jobs of this cluster only (sacct's field Cluster); a log of
            several clusters (``sacct --clusters``) must name one.

    Raises:
        FormatError: a file that is not sacct output, a malformed line, or the jobs of
            several clusters without ``cluster``: the message names the file, the line and
            the field.
    """
    log = _Log(
        [str(p) for p in paths], zone(timezone), eligible=submit_time == "eligible",
        cluster=cluster,
    )  # fmt: skip
    for k, path in enumerate(log.paths):
        log.read_file(k, path)
    if not log.fields:  # every file empty: no job (the command says so)
        return Converted(SWFTrace(log.paths[0], [], np.empty((0, len(FIELDS)))), log.skipped)
    if submit_time == "eligible" and "Eligible" not in log.fields:
        raise format_error(
            log.paths[0], 1, "header", "--submit-time eligible needs the field Eligible"
        )
    return _convert(log, submit_time)


# -- reading the text --------------------------------------------------------------------------
class _Log:
    """The kept lines of sacct output, as compact columns: job ids as text, times as seconds,
    every other field as codes into its distinct values (few: states, limits, users, TRES).

    Lines are read a block at a time, split in one call, and sorted out at once: job steps and
    jobs not ended are counted (their first lines quoted) and dropped before anything else
    is parsed, so only the kept lines' columns are held."""

    def __init__(
        self, paths: list[str], tz: ZoneInfo, eligible: bool = False, cluster: str | None = None
    ) -> None:
        self.paths, self.tz, self.cluster = paths, tz, cluster
        #: The fields read (the others are split off and dropped).
        self.wanted = {*REQUIRED, *OPTIONAL} - set(_UNUSED) - (set() if eligible else
                                                                {"Eligible"})  # fmt: skip
        self.fields: list[str] = []
        self.skipped = Skipped()
        self.kind: StampKind | None = None
        self.line: list[np.ndarray] = []
        self.file: list[np.ndarray] = []
        self.ids: list[np.ndarray] = []
        self.stamps: dict[str, list[np.ndarray]] = {}
        self.codes: dict[str, list[np.ndarray]] = {}
        self.index: dict[str, dict[str, int]] = {}
        self.words: dict[str, str] = {}  # State text -> its first word
        self._where: tuple[str, np.ndarray] = ("", np.empty(0))
        #: Lines of every cluster, by cluster (when the field Cluster is there).
        self.clusters: Counter[str] = Counter()
        #: Lines whose free-text field held a ``|``, mended.
        self.mended = 0

    # - files -
    def read_file(self, k: int, name: str) -> None:
        with _open(name) as fh:
            first, line = 1, fh.readline()
            while line and not line.strip():
                first, line = first + 1, fh.readline()
            header = line.strip()
            if not header:
                return  # an empty file: no job
            trailing = header.endswith("|")  # --parsable: every line ends with a "|"
            fields = _header_fields(name, first, header[:-1] if trailing else header)
            if self.cluster is not None and "Cluster" not in fields:
                raise format_error(
                    name, first, "header",
                    "--cluster needs the field Cluster (add it to sacct's --format)",
                )  # fmt: skip
            if self.fields and fields != self.fields:
                raise format_error(
                    name, first, "header",
                    f"names other fields ({'|'.join(fields)}) than {self.paths[0]} "
                    f"({'|'.join(self.fields)}); give files of one sacct command",
                )  # fmt: skip
            self.fields = fields
            number, rest = first + 1, ""
            while chunk := fh.read(BLOCK_BYTES):
                text = rest + chunk
                cut = text.rfind("\n") + 1
                text, rest = text[:cut], text[cut:]
                if text:
                    number = self._block(k, name, number, text, header, trailing)
            if rest:
                self._block(k, name, number, rest + "\n", header, trailing)

    def _block(self, k: int, name: str, number: int, text: str, header: str, trailing: bool) -> int:
        """Sort out the whole lines of ``text``, the first numbered ``number``; the number
        of the line after them."""
        width = len(self.fields) + trailing
        following = number + text.count("\n")
        text = text.replace("\r", "")
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()
        numbers = np.arange(number, number + len(lines))
        if header in text or "\n\n" in text or (lines and not lines[0].strip()):
            keep = [j for j, line in enumerate(lines) if line.strip()]
            for j in keep[:]:
                if lines[j].strip().upper() == header.upper():
                    self.skipped.add(HEADER_AGAIN, f"{name}:{number + j}", lines[j].strip())
                    keep.remove(j)
            lines = [lines[j] for j in keep]
            numbers = numbers[keep]
        bars = np.fromiter(map(_BARS, lines), dtype=np.int64, count=len(lines))
        odd = np.flatnonzero(bars != width - 1).tolist()
        hidden = _absent(text) if odd else ""  # (stands for a "|" in free text)
        mended = self.mended
        if odd:
            lines, numbers = self._refit(name, numbers, lines, odd, trailing, hidden)
        flat = "|".join(lines).split("|") if lines else []
        if trailing and any(flat[width - 1 :: width]):  # (a line without the trailing "|")
            odd = [j for j in range(len(lines)) if flat[j * width + width - 1]]
            hidden = hidden or _absent(text)
            lines, numbers = self._refit(name, numbers, lines, odd, trailing, hidden)
            flat = "|".join(lines).split("|") if lines else []
        columns = {f: flat[j::width] for j, f in enumerate(self.fields) if f in self.wanted}
        if self.mended > mended:
            for f in set(columns) & set(FREE_TEXT):
                columns[f] = [v.replace(hidden, "|") for v in columns[f]]
        self._sort_out(k, name, numbers, lines, columns)
        return following

    def _refit(
        self,
        name: str,
        numbers: np.ndarray,
        lines: list[str],
        odd: list[int],
        trailing: bool,
        hidden: str,
    ) -> tuple[list[str], np.ndarray]:
        """``lines`` with the lines ``odd`` (which have more or fewer fields than the header)
        mended or skipped: a line with more is mended when its extra ``|`` can only lie in
        the header's one free-text field (:data:`FREE_TEXT`; sacct cannot quote the ``|``),
        where ``hidden`` stands for it; else skipped and counted. A line with fewer fields
        is truncated: an error."""
        drop = set()
        for j in odd:
            mended, why = self._mend(name, int(numbers[j]), lines[j], trailing, hidden)
            if mended is None:
                self.skipped.add(why, f"{name}:{int(numbers[j])}", lines[j])
                drop.add(j)
            else:
                lines[j] = mended
                self.mended += 1
        if not drop:
            return lines, numbers
        keep = [j for j in range(len(lines)) if j not in drop]
        return [lines[j] for j in keep], numbers[keep]

    def _mend(
        self, name: str, number: int, line: str, trailing: bool, hidden: str
    ) -> tuple[str | None, str]:
        """A line of more fields than the header names, the ``|`` of its free text replaced
        by ``hidden`` (None if that cannot be done), and the reason to skip it.

        Raises:
            FormatError: the line has fewer fields than the header (truncated).
        """
        parts = line.split("|")
        want = len(self.fields)
        ends = not trailing or parts[-1] == ""  # (--parsable: a "|" ends every line)
        if trailing and ends:
            parts.pop()
        if len(parts) < want:
            raise format_error(
                name, number, self.fields[len(parts)],
                f"line truncated: {len(parts)} fields, the header names {want}",
            )  # fmt: skip
        if not ends:
            return None, NO_END
        free = [j for j, f in enumerate(self.fields) if f in FREE_TEXT]
        if len(free) > 1:
            named = " or ".join(self.fields[j] for j in free)
            return None, f"a | inside {named}, which sacct cannot quote: which is ambiguous"
        if not free or not hidden:
            return None, TOO_MANY
        at, extra = free[0], len(parts) - want
        parts[at : at + extra + 1] = [hidden.join(parts[at : at + extra + 1])]
        return "|".join(parts) + ("|" if trailing else ""), ""

    def _sort_out(
        self,
        k: int,
        name: str,
        numbers: np.ndarray,
        lines: list[str],
        columns: dict[str, list[str]],
    ) -> None:
        """Count and drop the lines that are not jobs; parse and keep the others."""
        self._where = (name, numbers)
        ids = columns["JobID"]
        for j, value in self._first_of(columns["State"]):
            self._word(name, numbers, j, value)
        word = np.array([self.words[v] for v in columns["State"]], dtype=object)
        reason = np.full(len(lines), "", dtype=object)
        for state, why in NOT_ENDED.items():
            reason[word == state] = why
        reason[np.array(["." in v for v in ids], dtype=bool)] = STEP
        if "Cluster" in columns:
            self.clusters.update(columns["Cluster"])
            if self.cluster is not None:
                other = np.array(columns["Cluster"], dtype=object) != self.cluster
                reason[other & (reason == "")] = f"another cluster than {self.cluster}"
        stamps = {}
        keep = reason == ""
        for f in _STAMPS:
            if f in columns:
                stamps[f] = self._stamps(f, columns[f], keep)
        started = ~np.isnan(stamps["Start"])
        reason[keep & started & (stamps["End"] < stamps["Start"])] = "ends before it starts"
        dropped = np.flatnonzero(reason != "")
        for why in dict.fromkeys(reason[dropped].tolist()):
            rows = dropped[reason[dropped] == why]
            quotes = [(f"{name}:{int(numbers[j])}", lines[j]) for j in rows[:QUOTED].tolist()]
            self.skipped.add_many(why, len(rows), quotes)
        kept = np.flatnonzero(reason == "")
        self.line.append(numbers[kept])
        self.file.append(np.full(len(kept), k, dtype=np.int32))
        self.ids.append(np.array(ids, dtype=str)[kept])
        for f, seconds in stamps.items():
            self.stamps.setdefault(f, []).append(seconds[kept])
        for f, texts in columns.items():
            if f in _TEXT or f in _STAMPS:
                continue
            index = self.index.setdefault(f, {})
            for value in dict.fromkeys(texts):
                index.setdefault(value, len(index))
            codes = np.fromiter(map(index.__getitem__, texts), dtype=np.int32, count=len(texts))
            self.codes.setdefault(f, []).append(codes[kept])

    def _first_of(self, values: list[str]) -> list[tuple[int, str]]:
        """The values not met before, with the index of their first line."""
        new = [v for v in dict.fromkeys(values) if v not in self.words]
        return [(values.index(v), v) for v in new]

    def _word(self, name: str, numbers: np.ndarray, j: int, value: str) -> str:
        try:
            self.words[value] = _state(value)
        except ValueError as err:
            raise format_error(name, int(numbers[j]), "State", str(err)) from None
        return self.words[value]

    def _stamps(self, field_name: str, values: list[str], keep: np.ndarray) -> np.ndarray:
        """Seconds since the epoch of the kept lines' times (NaN elsewhere)."""
        name, numbers = self._where
        rows = np.flatnonzero(keep)
        mine = [values[j] for j in rows.tolist()] if len(rows) < len(values) else values
        if self.kind is None:
            known = [v for v in dict.fromkeys(mine) if v not in UNKNOWN_STAMPS]
            if known:
                self.kind = stamp_kind(known[0])
                if self.kind is None:
                    j = int(rows[mine.index(known[0])])
                    raise format_error(
                        name, int(numbers[j]), field_name,
                        f"{known[0]!r} is not a time sacct prints ({FORMATS})",
                    )  # fmt: skip
        seconds = np.full(len(values), np.nan)
        if self.kind is None:
            return seconds
        parsed, bad = parse_stamps(mine, self.kind, self.tz)
        if bad is not None:
            j = int(rows[bad])
            form = "Unix seconds" if self.kind == "epoch" else "YYYY-MM-DDTHH:MM:SS"
            raise format_error(
                name, int(numbers[j]), field_name,
                f"{mine[bad]!r} is not a time sacct prints ({FORMATS}; this file's times "
                f"are {form})",
            )  # fmt: skip
        seconds[rows] = parsed
        return seconds

    # - the kept lines -
    def finish(self) -> None:
        """Join the blocks."""
        self.line_all = _join(self.line, np.int64)
        self.file_all = _join(self.file, np.int32)
        self.id_all = _join(self.ids, str)
        read = [f for f in self.fields if f in self.wanted]  # (no line: no block was read)
        stamps = [f for f in read if f in _STAMPS]
        coded = [f for f in read if f not in _TEXT and f not in _STAMPS]
        self.stamp_all = {f: _join(self.stamps.get(f, []), np.float64) for f in stamps}
        self.code_all = {f: _join(self.codes.get(f, []), np.int32) for f in coded}
        self.distinct = {f: list(self.index.get(f, {})) for f in coded}

    def has(self, name: str) -> bool:
        return name in self.fields

    def error(self, row: int, name: str, problem: str) -> Exception:
        path = self.paths[int(self.file_all[row])]
        return format_error(path, int(self.line_all[row]), name, problem)

    def text(self, name: str, rows: np.ndarray) -> np.ndarray:
        """The text of field ``name`` on the kept lines ``rows``."""
        distinct = np.array(self.distinct[name] or [""], dtype=str)
        return distinct[self.code_all[name][rows]]

    def parse_distinct(self, name: str, parse: Callable[[str], float]) -> np.ndarray:
        """``parse(text)`` of each kept line's value, computed once per distinct value; a
        ValueError names the first kept line holding the value."""
        codes = self.code_all[name]
        values = np.full(len(self.distinct[name]), np.nan)
        for code in np.unique(codes).tolist():
            try:
                values[code] = parse(self.distinct[name][code])
            except ValueError as err:
                raise self.error(int(np.argmax(codes == code)), name, str(err)) from None
        return values[codes]

    def counts(self, name: str) -> np.ndarray:
        """Whole numbers >= 0 (-1: empty)."""

        def count(text: str) -> float:
            if text == "":
                return -1.0
            if not _COUNT.match(text):
                negative = text.startswith("-") and _COUNT.match(text[1:])
                what = "a negative count" if negative else "not a count (a whole number)"
                raise ValueError(f"{text!r} is {what}")
            problem = out_of_range("procs", text, float(text))
            if problem:
                raise ValueError(problem)
            return float(text)

        return self.parse_distinct(name, count)


def _absent(text: str) -> str:
    """A control character ``text`` does not hold, to stand for a ``|`` while it is split
    (empty in the unlikely case it holds them all)."""
    return next((c for c in _HIDDEN if c not in text), "")


#: Characters that may stand for a ``|``: control characters other than white space.
_HIDDEN = [chr(c) for c in (*range(1, 9), *range(14, 32))]


def _join(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
    return np.concatenate(parts) if parts else np.empty(0, dtype=dtype)


@contextmanager
def _open(name: str) -> Iterator[IO[str]]:
    """A text file, gzip-compressed or not, read line by line."""
    try:
        with open(name, "rb") as raw:
            compressed = raw.read(2) == b"\x1f\x8b"
    except OSError as err:
        raise SitesimError(f"{name}: cannot read: {err.strerror or err}") from None
    if compressed:
        with gzip.open(name, "rt", errors="replace", newline="") as fh:
            yield fh
    else:
        with open(name, errors="replace", newline="") as plain:
            yield plain


def _header_fields(name: str, number: int, header: str) -> list[str]:
    """The canonical field names of the header line; errors for another format."""
    expected = (
        "its first line should name the fields, such as JobID|User|Submit|Start|End|NCPUS|"
        "State (sacct --parsable2)"
    )
    if "|" not in header or not any(
        part.strip().lower() in ("jobid", "jobidraw") for part in header.split("|")
    ):
        text = read_text(name, limit=20_000)
        raise not_the_format(name, number, "header", "sacct --parsable2 output", text, expected)
    known = {f.lower(): f for f in (*REQUIRED, *OPTIONAL, *FREE_TEXT)}
    fields = [known.get(part.strip().lower(), part.strip()) for part in header.split("|")]
    if "NCPUS" not in fields and "AllocCPUS" not in fields:
        missing = "NCPUS"
    else:
        missing = next((f for f in REQUIRED if f not in fields and f != "JobID"), "")
    if "JobID" not in fields:
        fields[fields.index("JobIDRaw")] = "JobID"
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


def _limit(text: str) -> float:
    """A time limit in seconds; NaN for UNLIMITED, Partition_Limit or nothing."""
    if text in ("", "UNLIMITED", "INFINITE", "Partition_Limit", "None"):
        return math.nan
    try:
        seconds = parse_duration(text)
    except ValueError:
        raise ValueError(
            f"{text!r} is not a time limit sacct prints ([days-]hours:minutes:seconds, "
            "UNLIMITED or Partition_Limit)"
        ) from None
    except OverflowError:  # (more digits than a float holds)
        seconds = math.inf
    problem = out_of_range("req_time", text, seconds)
    if problem:
        raise ValueError(problem)
    return seconds


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
def _convert(log: _Log, submit_time: str) -> Converted:
    log.finish()
    paths, skipped, f = log.paths, log.skipped, log
    ids = log.id_all
    n = len(ids)
    plain = np.strings.isdigit(ids)  # (most ids: a number; the others are checked one by one)
    bad_id = next(
        (r for r in np.flatnonzero(~plain).tolist()
         if not _JOB_ID.match(ids[r]) and not _ARRAY_RANGE.match(ids[r])), None,
    )  # fmt: skip
    if bad_id is not None:
        raise f.error(bad_id, "JobID", f"{str(ids[bad_id])!r} is not a Slurm job id (123, "
                      "123_4, 123_[5-9], 123+0)")  # fmt: skip
    _one_cluster(log)
    state = np.array([log.words[v] for v in log.distinct["State"]], dtype=object)[
        log.code_all["State"]
    ] if n else np.empty(0, dtype=object)  # fmt: skip
    submit, start, end = (log.stamp_all[name] for name in ("Submit", "Start", "End"))
    eligible = log.stamp_all.get("Eligible", submit)
    cpus = f.counts("NCPUS" if f.has("NCPUS") else "AllocCPUS")
    nodes = f.counts("NNodes") if f.has("NNodes") else np.full(n, -1.0)
    req_cpus = f.counts("ReqCPUS") if f.has("ReqCPUS") else np.full(n, -1.0)
    limit = f.parse_distinct("Timelimit", _limit) if f.has("Timelimit") else np.full(n, np.nan)
    gpus, memory = _resources(f, cpus, nodes)
    never = np.isnan(start)
    if f.has("NodeList"):
        never |= f.text("NodeList", np.arange(n)) == "None assigned"
    if np.isnan(submit).any():
        row = int(np.flatnonzero(np.isnan(submit))[0])
        raise f.error(row, "Submit", "Unknown: an ended job without a submit time")
    if submit_time == "eligible":
        submit = np.where(np.isnan(eligible), submit, np.maximum(eligible, submit))

    rows = np.arange(n)
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
    early = started & (st < sub)  # (clock skew: kept, its wait 0, its runtime as logged)
    if early.any():
        notes.append(started_before_submit(int(early.sum()), float((sub - st)[early].max())))
    data[:, COLUMN["wait"]] = np.where(started, np.maximum(st - sub, 0.0), -1.0)
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
            numbers, names[kind] = number_codes(f.code_all[name][rows], f.distinct[name])
            data[:, COLUMN[column]] = numbers
    unlimited = int(np.count_nonzero(np.isin(f.text("Timelimit", rows), ("UNLIMITED",
                    "Partition_Limit")))) if f.has("Timelimit") else 0  # fmt: skip
    if unlimited:
        notes.append(
            f"{_count(unlimited, 'job')} with time limit UNLIMITED or Partition_Limit: "
            "requested time -1"
        )
    peak = _peak(st, en, cp, started & ~np.isnan(en))
    part = data[:, COLUMN["partition"]].astype(np.int64) - 1
    platform = _platform(names, part, st, en, cp, nd, gp, lim, started & ~np.isnan(en))
    clusters = sorted(set(f.text("Cluster", rows).tolist())) if f.has("Cluster") else []
    if log.mended:
        field_name = next(f for f in log.fields if f in FREE_TEXT)
        notes.append(
            f"{_count(log.mended, 'line')} with a | inside {field_name} (which sacct cannot "
            "quote): its parts joined"
        )
    header = _header(paths, n, origin, sub, log.tz, peak, names, skipped, notes, clusters)
    trace = SWFTrace(paths[0] if len(paths) == 1 else "sacct output", header, data)
    files, lines = log.file_all[rows], log.line_all[rows]

    def source(row: int) -> str:
        return f"{paths[int(files[row])]}:{int(lines[row])}"

    return Converted(trace, skipped, names, notes, platform, source)


def _one_cluster(log: _Log) -> None:
    """Refuse a log of several clusters' jobs (``sacct --clusters``) unless one was chosen,
    and a chosen cluster the log does not show."""
    if log.cluster is not None:
        if log.cluster not in log.clusters:
            shown = ", ".join(sorted(log.clusters)) or "none"
            raise format_error(
                log.paths[0], 0, "Cluster",
                f"--cluster {log.cluster}: no line of this cluster (the log's clusters: "
                f"{shown})",
            )  # fmt: skip
        return
    if not log.has("Cluster") or len(log.distinct["Cluster"]) < 2:
        return
    codes = log.code_all["Cluster"]
    other = np.flatnonzero(codes != codes[0])
    if not len(other):
        return
    names = log.distinct["Cluster"]
    jobs = np.bincount(codes, minlength=len(names))
    counts = ", ".join(f"{names[k]} {int(jobs[k]):,}" for k in np.flatnonzero(jobs).tolist())
    raise log.error(
        int(other[0]), "Cluster",
        f"{names[codes[other[0]]]!r} after {names[codes[0]]!r}: the log holds the jobs of "
        f"{np.count_nonzero(jobs)} clusters (jobs: {counts}), one machine each; convert one "
        "at a time with --cluster NAME",
    )  # fmt: skip


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _resources(f: _Log, cpus: np.ndarray, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per kept line: GPUs allocated (AllocTRES, else ReqTRES) and memory requested in MB
    (ReqTRES, else ReqMem, else AllocTRES); NaN where unknown."""
    n = len(f.id_all)
    gpus = memory = np.full(n, np.nan)
    for name in ("AllocTRES", "ReqTRES"):
        if f.has(name):
            gpus = np.where(np.isnan(gpus), f.parse_distinct(name, lambda t: _tres(t)[0]), gpus)
    for name in ("ReqTRES", "AllocTRES"):
        if f.has(name):
            mem = f.parse_distinct(name, lambda t: _tres(t)[1])
            memory = np.where(np.isnan(memory), mem, memory)
    if f.has("ReqMem"):
        size = f.parse_distinct("ReqMem", lambda t: _req_mem(t)[0])
        per = f.parse_distinct("ReqMem", lambda t: "nc".find(_req_mem(t)[1]))
        total = np.select(
            [per == 0, per == 1], [size * np.maximum(nodes, 1), size * np.maximum(cpus, 0)], size
        )
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
    instant: a start sorts after an end at the same time)."""
    if not ran.any():
        return 0
    times = np.concatenate([start[ran] * 2 + 1, end[ran] * 2])  # (exact: times < 2**51)
    change = np.concatenate([amount[ran], -amount[ran]])
    return int(np.cumsum(change[np.argsort(times)]).max())


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
