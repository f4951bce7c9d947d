"""Reading and writing the Standard Workload Format (SWF) of the Parallel Workloads Archive.

An SWF file is a header of ``;`` comment lines (``; Key: value``) and one line per job of 18
whitespace-separated numbers; -1 means "unknown". sitesim also accepts *extended* lines: after
field 18 a job may carry the points of a utility function (``t0 v0 t1 v1 ...``); the tail is kept
as text and written back unchanged. ``.swf.gz`` files are read and written transparently.

Every malformed line is an error naming ``file:line`` and the field.
"""

from __future__ import annotations

import bisect
import functools
import gzip
import hashlib
import io
import math
import os
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta, timezone, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np

from sitesim.errors import SitesimError, SWFFormatError
from sitesim.output import atomic_write
from sitesim.workload.requests import JobRequests
from sitesim.workload.swf_parse import parse_job_lines, split_header

#: The 18 SWF fields, in order (field k of the format is ``FIELDS[k - 1]``).
FIELDS = (
    "job", "submit", "wait", "runtime", "procs", "cpu", "memory", "req_procs", "req_time",
    "req_memory", "status", "user", "group", "executable", "queue", "partition", "preceding",
    "think",
)  # fmt: skip
#: Column index of each field name.
COLUMN = {name: i for i, name in enumerate(FIELDS)}
#: Fields whose values must be integers (counts, ids, codes); the others may be fractional.
INTEGER_FIELDS = (
    "job", "procs", "req_procs", "status", "user", "group", "executable", "queue",
    "partition", "preceding",
)  # fmt: skip

#: Fields that hold seconds.
TIME_FIELDS = ("submit", "wait", "runtime", "cpu", "req_time", "think")
#: The largest time (in magnitude) a job line may hold: 10**10 s, about 317 years (a Unix time
#: is about 1.7e9 s; the largest in the archive traces, a "no limit" requested time of
#: CEA-Curie, 2.1e9 s).
MAX_SECONDS = 10**10
#: The largest value (in magnitude) of any other field: 2**53, the last of the whole numbers
#: a float64 holds exactly.
MAX_VALUE = 2**53
#: SWF's "unknown".
UNKNOWN = -1.0

_HEADER_LINE = re.compile(r"^[ \t]*;.*$", re.MULTILINE)
_HEADER_KEY = re.compile(r"^;\s*([A-Za-z][A-Za-z0-9_]*)\s*:\s*(.*?)\s*$")
_LEADING_INT = re.compile(r"^\s*(\d+)")
_SIGNED_INT = re.compile(r"^\s*(-?\d+)")


@dataclass(frozen=True)
class SWFTrace:
    """The contents of an SWF file.

    Attributes:
        name: where it was read from (used in messages).
        header: the comment lines, verbatim (each starting with ``;``).
        data: the job lines, a float64 array of shape (jobs, 18).
        tails: extended-line tails (text after field 18) by row index.
        sha256: hex digest of the file as stored (compressed or not); empty if not from a file.
        first_row: the row in file ``name`` of its first job (an excerpt's start), so that
            messages name the file's lines.
        requests: what each job asks for beyond its processors (GPUs, memory, node count,
            features, partition name: :class:`~sitesim.workload.requests.JobRequests`), for
            a trace read from a log that says it; None for plain SWF.
    """

    name: str
    header: list[str]
    data: np.ndarray
    tails: dict[int, str] = field(default_factory=dict)
    sha256: str = ""
    first_row: int = 0
    requests: JobRequests | None = None

    def __len__(self) -> int:
        return len(self.data)

    def column(self, name: str) -> np.ndarray:
        """One field as an array (a view)."""
        return self.data[:, COLUMN[name]]

    def header_value(self, key: str) -> str | None:
        """The value of header ``; Key: value`` (case-insensitive, first occurrence)."""
        wanted = key.lower()
        for line in self.header:
            match = _HEADER_KEY.match(line)
            if match and match.group(1).lower() == wanted:
                return match.group(2)
        return None

    @property
    def max_procs(self) -> int | None:
        """Machine size from the header: MaxProcs, else MaxNodes (leading integer)."""
        for key in ("MaxProcs", "MaxNodes"):
            value = self.header_value(key)
            match = _LEADING_INT.match(value or "")
            if match and int(match.group(1)) > 0:
                return int(match.group(1))
        return None

    @property
    def unix_start(self) -> int | None:
        """The Unix time of the trace's time 0 (header ``UnixStartTime``), if it gives one."""
        match = _LEADING_INT.match(self.header_value("UnixStartTime") or "")
        return int(match.group(1)) if match else None

    @property
    def time_zone(self) -> tuple[tzinfo, str]:
        """The zone of the site's clocks, and how it is known: the header's TimeZoneString (an
        IANA zone, daylight saving included), else its numeric TimeZone (seconds east of UTC),
        else UTC."""
        name = self.header_value("TimeZoneString") or ""
        try:
            return ZoneInfo(name), f"local time, {name}"
        except (ZoneInfoNotFoundError, ValueError):
            match = _SIGNED_INT.match(self.header_value("TimeZone") or "")
            offset = int(match.group(1)) if match else 0
            return timezone(timedelta(seconds=offset)), f"UTC{offset / 3600:+g} (TimeZone header)"

    def excerpt(self, start: int, stop: int) -> SWFTrace:
        """The job lines ``start`` (0-based) up to, not including, ``stop``, as a trace of their
        own (a header note says which); their tails follow them.

        Raises:
            SitesimError: the range is empty or outside the trace.
        """
        if not 0 <= start < stop <= len(self):
            raise SitesimError(
                f"{self.name}: job lines {start}:{stop} are not a range within its "
                f"{len(self):,} jobs (0 <= start < stop <= {len(self):,})"
            )
        tails = {row - start: text for row, text in self.tails.items() if start <= row < stop}
        note = f"; Note: job lines {start}:{stop} (0-based, end excluded) of {self.name}"
        data = self.data[start:stop].copy()
        requests = None if self.requests is None else self.requests.rows(slice(start, stop))
        return SWFTrace(
            self.name, [*self.header, note], data, tails, first_row=self.first_row + start,
            requests=requests,
        )  # fmt: skip

    def values(self, row: int, *names: str) -> str:
        """Fields of job ``row`` as text for messages: ``field 4 (runtime) is -500``."""
        return " and ".join(
            f"{field_label(name)} is {self.data[row, COLUMN[name]]:g}" for name in names
        )

    def out_of_order(self) -> np.ndarray:
        """The rows out of submit order: the fewest lines that would have to move to sort the
        file by submit time (the lines outside a longest run of lines, not necessarily
        adjacent, whose submit times never decrease). One misplaced line is one row, whether
        it came too early or too late. Unknown submit times (-1) are left out."""
        submit = self.column("submit")
        known = np.flatnonzero(submit >= 0)
        times = submit[known]
        if not (times[1:] < times[:-1]).any():
            return np.empty(0, dtype=np.intp)
        moved = np.ones(len(known), dtype=bool)
        moved[_longest_nondecreasing(times.tolist())] = False
        return known[moved]

    def first_descent(self) -> int | None:
        """The first row submitted earlier than the job line before it (unknown submit times
        left out), or None if the file is in submit order."""
        submit = self.column("submit")
        known = np.flatnonzero(submit >= 0)
        times = submit[known]
        down = np.flatnonzero(times[1:] < times[:-1])
        return int(known[down[0] + 1]) if len(down) else None

    def check(self) -> None:
        """Refuse a value the format refuses (:func:`first_bad_value`), naming its line: for
        a trace made in memory (:func:`read_swf` checks what it reads).

        Raises:
            SWFFormatError: the first such value, with its line, field and the allowed range.
        """
        found = first_bad_value(self.data)
        if found is not None:
            row, k, problem = found
            value = float(self.data[row, k])
            raise SWFFormatError(f"{self.location(row)}: {_field_name(k)}: '{value:g}' {problem}")

    def line_of(self, row: int) -> int:
        """The 1-based line number of job ``row`` in the file (for messages)."""
        return _line_number(_decode(self.name, _read_bytes(self.name)), self.first_row + row)

    def location(self, row: int) -> str:
        """``file:line`` of job ``row``; ``name: job line N`` if the file cannot be read."""
        try:
            return f"{self.name}:{self.line_of(row)}"
        except (SitesimError, IndexError):
            return f"{self.name}: job line {self.first_row + row + 1}"


def read_swf(path: str | os.PathLike[str]) -> SWFTrace:
    """Read an SWF (or ``.swf.gz``) file.

    Raises:
        SitesimError: the file cannot be read.
        SWFFormatError: a line is malformed; the message names file, line and field.
    """
    name = os.fspath(path)
    raw = _read_bytes(name)
    content = _decompress(name, raw)
    header, offset = split_header(content)
    data = parse_job_lines(content, offset)  # the common shape, vectorized
    tails: dict[int, str] = {}
    if data is None:
        text = content.decode("utf-8", errors="replace")
        header = [line.rstrip() for line in _HEADER_LINE.findall(text)]
        data = _parse_fast(text)
        if data is None:
            data, tails = _parse_exact(name, text)
    _validate(name, content, data)
    sha256 = hashlib.sha256(raw).hexdigest()
    return SWFTrace(name=name, header=header, data=data, tails=tails, sha256=sha256)


def _longest_nondecreasing(values: list[float]) -> np.ndarray:
    """The positions of a longest non-decreasing subsequence of ``values`` (patience sorting,
    O(n log n))."""
    tails: list[float] = []  # the least last value of a run of each length
    ends: list[int] = []  # the position of that value
    before = [-1] * len(values)  # the position before each in its run
    find = bisect.bisect_right
    for k, value in enumerate(values):
        length = find(tails, value)
        if length:
            before[k] = ends[length - 1]
        if length == len(tails):
            tails.append(value)
            ends.append(k)
        else:
            tails[length], ends[length] = value, k
    chain = [0] * len(tails)
    k = ends[-1] if ends else -1
    for at in range(len(tails) - 1, -1, -1):
        chain[at] = k
        k = before[k]
    return np.array(chain, dtype=np.intp)


def unknown_and_negative(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which of ``values`` are SWF's unknown (-1), and which are negative otherwise (invalid:
    no count or time is negative)."""
    unknown = values == UNKNOWN
    return unknown, (values < 0) & ~unknown


def read_swf_cached(path: str | os.PathLike[str]) -> SWFTrace:
    """:func:`read_swf`, remembering the last traces read in this process (a sweep's worker
    replays one trace many times). The file is read again when its size or modification time
    changes; the cached job array is read-only.

    Raises:
        SitesimError: the file cannot be read.
        SWFFormatError: a line is malformed.
    """
    return read_cached(path, read_swf)


def read_cached(path: str | os.PathLike[str], read: Callable[[str], SWFTrace]) -> SWFTrace:
    """``read(path)``, remembering the last traces read in this process by the file's name,
    size and modification time (and the reader); the cached job array is read-only."""
    name = os.fspath(path)
    try:
        stat = os.stat(name)
    except OSError:
        return read(name)  # the error names the file
    return _read_cached(name, stat.st_size, stat.st_mtime_ns, read)


@functools.lru_cache(maxsize=2)
def _read_cached(name: str, size: int, mtime_ns: int, read: Callable[[str], SWFTrace]) -> SWFTrace:
    trace = read(name)
    trace.data.setflags(write=False)
    return trace


def _read_bytes(name: str) -> bytes:
    try:
        with open(name, "rb") as fh:
            return fh.read()
    except OSError as err:
        raise SitesimError(f"{name}: cannot read: {err.strerror or err}") from None


def _decompress(name: str, raw: bytes) -> bytes:
    """The content of a plain or gzip-compressed file."""
    if raw[:2] == b"\x1f\x8b":
        try:
            return gzip.decompress(raw)
        except (OSError, EOFError) as err:
            raise SitesimError(f"{name}: not a readable gzip file: {err}") from None
    return raw


def _decode(name: str, raw: bytes) -> str:
    """The text of a plain or gzip-compressed file."""
    return _decompress(name, raw).decode("utf-8", errors="replace")


def _parse_fast(text: str) -> np.ndarray | None:
    """NumPy's C parser for the common case: plain 18-field lines. None when it can't."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "input contained no data"
            data = np.loadtxt(io.StringIO(text), comments=";", ndmin=2, dtype=np.float64)
    except ValueError:
        return None
    if data.size == 0:
        return np.empty((0, len(FIELDS)))
    return data if data.shape[1] == len(FIELDS) else None


def _parse_exact(name: str, text: str) -> tuple[np.ndarray, dict[int, str]]:
    """Line by line: precise messages, and the extended-line tails."""
    rows: list[list[float]] = []
    tails: dict[int, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        tokens = line.split()
        if not tokens or tokens[0].startswith(";"):
            continue
        if len(tokens) < len(FIELDS):
            raise SWFFormatError(
                f"{name}:{number}: expected {len(FIELDS)} fields, found {len(tokens)}"
            )
        rows.append([_number(name, number, k, tok) for k, tok in enumerate(tokens[:18])])
        if len(tokens) > len(FIELDS):
            for k, tok in enumerate(tokens[18:], start=18):
                _number(name, number, k, tok)
            tails[len(rows) - 1] = " ".join(tokens[18:])
    return np.array(rows, dtype=np.float64).reshape(-1, len(FIELDS)), tails


def _line_number(text: str, row: int) -> int:
    seen = -1
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith(";"):
            seen += 1
            if seen == row:
                return number
    raise IndexError(row)


def _field_name(k: int) -> str:
    label = FIELDS[k] if k < len(FIELDS) else "extension"
    return f"field {k + 1} ({label})"


def field_label(name: str) -> str:
    """``field 4 (runtime)``: a field named as the messages name it."""
    return _field_name(COLUMN[name])


def _number(name: str, number: int, k: int, token: str) -> float:
    try:
        value = float(token)
    except ValueError:
        raise SWFFormatError(
            f"{name}:{number}: {_field_name(k)}: {token!r} is not a number"
        ) from None
    if value != value or value in (float("inf"), float("-inf")):
        raise SWFFormatError(f"{name}:{number}: {_field_name(k)}: {token!r} is not finite")
    return value


def _validate(name: str, content: bytes, data: np.ndarray) -> None:
    """The first value :func:`first_bad_value` finds, as an error naming its line."""
    found = first_bad_value(data)
    if found is None:
        return
    row, k, problem = found
    line = _line_number(content.decode("utf-8", errors="replace"), row)
    raise SWFFormatError(f"{name}:{line}: {_field_name(k)}: '{data[row, k]:g}' {problem}")


def first_bad_value(data: np.ndarray) -> tuple[int, int, str] | None:
    """The first value of ``data`` (jobs × 18) the format refuses, as (row, column, what is
    wrong), or None: every value finite; integers where the format wants integers; none of
    an absurd size (times within ±:data:`MAX_SECONDS`, other values within
    ±:data:`MAX_VALUE`)."""
    bad = ~np.isfinite(data)
    with np.errstate(invalid="ignore"):  # (NaN and infinities are already bad)
        bad |= np.abs(data) > _LIMITS
    for field_name in INTEGER_FIELDS:
        col = data[:, COLUMN[field_name]]
        bad[:, COLUMN[field_name]] |= np.isfinite(col) & (col != np.floor(col))
    if not bad.any():
        return None
    row, k = (int(i) for i in np.argwhere(bad)[0])
    value = float(data[row, k])
    return row, k, range_problem(FIELDS[k], value) or "is not an integer"


#: The largest magnitude of each field.
_LIMITS = np.array(
    [MAX_SECONDS if name in TIME_FIELDS else MAX_VALUE for name in FIELDS], dtype=np.float64
)


def range_problem(field_name: str, value: float) -> str | None:
    """What is wrong with ``value`` in SWF field ``field_name`` if it is not finite or of an
    absurd size (``is out of range: times lie within ...``); None if nothing is."""
    if not math.isfinite(value):
        return "is not finite"
    if field_name in TIME_FIELDS and abs(value) > MAX_SECONDS:
        years = MAX_SECONDS // (365 * 86_400)
        return f"is out of range: times lie within ±{MAX_SECONDS:,} s (about {years} years)"
    if abs(value) > MAX_VALUE:
        return f"is out of range: values lie within ±{MAX_VALUE:,} (2**53)"
    return None


# -- writing ---------------------------------------------------------------------------------
def format_swf(
    data: np.ndarray,
    header: list[str] | tuple[str, ...] = (),
    tails: dict[int, str] | None = None,
) -> str:
    """SWF text for ``data`` (jobs × 18), with ``header`` comment lines and optional tails.

    Integral values are written as integers, others in their shortest exact form, NaN as -1;
    columns are right-aligned. Rows are formatted a block at a time (each column's width
    found first), so the text's pieces never exist for the whole trace at once.
    """
    tails = tails or {}
    lines = [line if line.startswith(";") else f"; {line}" for line in header]
    sizes = [_column_width(data[:, k]) for k in range(data.shape[1])] if len(data) else []
    widths, whole = [width for width, _ in sizes], [integral for _, integral in sizes]
    line = " ".join(f"%{width}s" for width in widths)  # (right-aligned, as rjust)
    parts = ["\n".join(lines)] if lines else []
    for lo in range(0, len(data), _FORMAT_BLOCK):
        block = data[lo : lo + _FORMAT_BLOCK]
        columns = [
            block[:, k].astype(np.int64).tolist() if whole[k] else _column_values(block[:, k])
            for k in range(block.shape[1])
        ]
        rows = [line % cells for cells in zip(*columns, strict=True)]
        for row in (r for r in tails if lo <= r < lo + len(block)):
            rows[row - lo] = f"{rows[row - lo]} {tails[row]}"
        parts.append("\n".join(rows))
    return "\n".join(parts) + "\n"


#: Rows formatted at a time.
_FORMAT_BLOCK = 1 << 14


def _integral_text(col: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which values are finite, which integral, and the integers written (-1: not integral)."""
    finite = np.isfinite(col)
    integral = finite & (col == np.floor(col))
    return finite, integral, np.where(integral, col, -1).astype(np.int64)


def _column_width(col: np.ndarray) -> tuple[int, bool]:
    """The width of a column's longest text (the integers' longest is at their extremes), and
    whether every value is a whole number."""
    finite, integral, ints = _integral_text(col)
    width = max(len(str(int(ints.max()))), len(str(int(ints.min()))))
    fractional = np.flatnonzero(finite & ~integral)
    if len(fractional):
        width = max(width, max(len(repr(v)) for v in col[fractional].tolist()))
    return width, bool(integral.all())


def _column_values(col: np.ndarray) -> list[int | str]:
    """A column's values as written: integers, or the shortest exact text of a fraction."""
    finite, integral, ints = _integral_text(col)
    values: list[int | str] = ints.tolist()
    if not integral.all():
        for k in np.flatnonzero(finite & ~integral).tolist():
            values[k] = repr(float(col[k]))
    return values


def write_swf(
    path: str | os.PathLike[str],
    data: np.ndarray,
    header: list[str] | tuple[str, ...] = (),
    tails: dict[int, str] | None = None,
) -> None:
    """Write an SWF file atomically (gzip-compressed when the name ends in ``.gz``)."""
    atomic_write(Path(path), format_swf(data, header, tails))
