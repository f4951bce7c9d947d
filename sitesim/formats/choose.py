"""Which format a file is in: by option, by extension, and (for errors) by its content.

``sitesim convert`` takes ``--from`` and ``--to``; without them the file names decide
(:data:`BY_EXTENSION`). A reader that finds a file of another format says which it looks like
(:func:`looks_like`), in one line.
"""

from __future__ import annotations

import gzip
import json
import os
import re
from pathlib import Path

from sitesim.errors import SitesimError
from sitesim.formats.lines import FormatError, format_error

#: Formats read (the first) and written (the second).
READ = ("sacct", "pbs", "batsim", "swf", "run")
WRITE = ("swf", "batsim", "batsim-jobs", "parquet", "workload-csv")
#: What each format is, for --help and messages.
DESCRIBE = {
    "sacct": "Slurm accounting: sacct --parsable2 --allocations output",
    "pbs": "PBS/Torque accounting log (its E records)",
    "batsim": "Batsim JSON workload",
    "swf": "Standard Workload Format (.swf, .swf.gz)",
    "run": "a sitesim run folder (results.json, jobs.csv, ...), or a sweep folder",
    "batsim-jobs": "Batsim's jobs.csv, for evalys",
    "parquet": "Parquet tables (needs pyarrow)",
    "workload-csv": "a workload table as CSV: SWF's fields and each job's GPUs, memory, nodes, "
    "features, partition",
}
#: Name endings and their formats, longest first.
BY_EXTENSION = (
    ("_jobs.csv", "batsim-jobs"),
    (".workload.csv", "workload-csv"),
    (".swf.gz", "swf"),
    (".swf", "swf"),
    (".sacct.gz", "sacct"),
    (".sacct", "sacct"),
    (".psv", "sacct"),
    (".pbs", "pbs"),
    (".json", "batsim"),
    (".parquet", "parquet"),
    (".csv", "batsim-jobs"),
)


def by_extension(path: str | os.PathLike[str]) -> str | None:
    """The format a file name says, or None."""
    name = Path(path).name.lower()
    for ending, kind in BY_EXTENSION:
        if name.endswith(ending):
            return kind
    return None


def read_text(path: str | os.PathLike[str], limit: int = -1) -> str:
    """A file's text, gzip-compressed or not (undecodable bytes replaced); with ``limit``,
    its first ``limit`` bytes at most (enough to tell its format).

    Raises:
        SitesimError: it cannot be read.
    """
    name = os.fspath(path)
    try:
        with open(name, "rb") as fh:
            raw = fh.read(limit)
        if raw[:2] == b"\x1f\x8b":
            with gzip.open(name, "rb") as unzipped:
                raw = unzipped.read(limit)
    except (OSError, EOFError) as err:
        problem = err.strerror if isinstance(err, OSError) and err.strerror else err
        raise SitesimError(f"{name}: cannot read: {problem}") from None
    return raw.decode("utf-8", errors="replace")


_PBS = re.compile(r"^\d\d/\d\d/\d{4} \d\d:\d\d:\d\d;[A-Z];")
_SWF_JOB = re.compile(r"^\s*-?\d+(\s+-?\d+(\.\d+)?){17}")


def looks_like(text: str) -> str | None:
    """The format ``text`` (a file's start) looks like, by its first lines; None if none."""
    lines = [line for line in text[:20_000].splitlines() if line.strip()][:5]
    if not lines:
        return None
    first = lines[0].strip()
    if first.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            return "JSON"
        return "a Batsim workload" if isinstance(data, dict) and "jobs" in data else "JSON"
    if first.startswith(";") or _SWF_JOB.match(first):
        return "SWF"
    if _PBS.match(first):
        return "a PBS accounting log"
    if "|" in first and "jobid" in first.lower():
        return "sacct --parsable2 output"
    if first.startswith("JobID") or (len(lines) > 1 and set(lines[1].strip()) <= {"-", " "}):
        return "sacct output without --parsable2 (columns of fixed width)"
    if first.startswith("job_id,") or first.startswith("id,user,"):
        return "a CSV table"
    return None


def not_the_format(
    name: str, line: int, field: str, claimed: str, text: str, expected: str
) -> FormatError:
    """The one-line error for a file that is not ``claimed`` (found at ``line``, ``field``):
    what was expected, and what the file looks like instead."""
    seen = looks_like(text)
    instead = f"; the file looks like {seen}" if seen else ""
    return format_error(name, line, field, f"not {claimed}: {expected}{instead}")
