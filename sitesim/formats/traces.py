"""The jobs a replay takes, from any file that holds them: SWF, a site's ``sacct`` log (with
what each job asks for beyond its processors: GPUs, memory, node count, features), or the
workload table ``sitesim convert`` writes (:mod:`sitesim.formats.workload_table`).

:func:`read_trace` tells the format by the file's name (``.sacct``, ``.psv``, ``.sacct.gz``:
sacct, UTC times; ``.parquet``, ``.workload.csv``: a workload table; anything else: SWF), and
keeps the file's sha256, so that a run's configuration names the file it replayed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os

from sitesim.errors import SitesimError
from sitesim.formats.choose import by_extension
from sitesim.workload.swf import SWFTrace, read_cached, read_swf, read_swf_cached


def trace_format(path: str | os.PathLike[str]) -> str:
    """``sacct``, ``table`` (a workload table) or ``swf``, by the file's name."""
    found = by_extension(path)
    if found == "sacct":
        return "sacct"
    if found in ("parquet", "workload-csv"):
        return "table"
    return "swf"


def read_trace(path: str | os.PathLike[str]) -> SWFTrace:
    """The jobs of ``path`` (see the module docstring).

    Raises:
        SitesimError: the file cannot be read, or is not of the format its name says (one
            line naming the file, line and field).
    """
    kind = trace_format(path)
    if kind == "swf":
        return read_swf(path)
    name = os.fspath(path)
    if kind == "sacct":
        from sitesim.formats.sacct import read_sacct

        trace = read_sacct([name]).trace
        if not len(trace):
            raise SitesimError(f"{name}: no job to replay: the log holds no ended job")
    else:
        from sitesim.formats.workload_table import read_workload_table

        trace = read_workload_table(name)
    return dataclasses.replace(trace, name=name, sha256=_sha256(name))


def read_trace_cached(path: str | os.PathLike[str]) -> SWFTrace:
    """:func:`read_trace`, remembering the last traces read (as ``read_swf_cached``)."""
    if trace_format(path) == "swf":
        return read_swf_cached(path)
    return read_cached(path, read_trace)


def _sha256(name: str) -> str:
    try:
        with open(name, "rb") as fh:
            return hashlib.file_digest(fh, "sha256").hexdigest()
    except OSError as err:
        raise SitesimError(f"{name}: cannot read: {err.strerror or err}") from None
