"""What reading another format gives: an SWF trace and what the conversion left out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sitesim.formats.lines import FormatError, Skipped
from sitesim.workload.swf import FIELDS, SWFTrace, field_label, first_bad_value


@dataclass
class Converted:
    """A log or workload read into SWF.

    Attributes:
        trace: the jobs, as SWF (header and job lines), in submit order.
        skipped: lines that could not become jobs, by reason.
        names: for each kind of name (``users``, ``accounts``, ...), the names in number
            order: number k is ``names[kind][k - 1]`` (the mapping file, when asked for).
        notes: what the conversion decided that a reader should know (also in the header).
        platform: the platform the log shows, as the tables of a platform file (None when
            the format shows none).
        source: ``file:line`` of the line each job (row of the trace) was read from, for
            messages (None: the rows are named by their position).

    Raises:
        FormatError: a job holds a value SWF refuses (not finite, or of an absurd size: see
            :func:`sitesim.workload.swf.first_bad_value`); the message names the line it came from.
    """

    trace: SWFTrace
    skipped: Skipped = field(default_factory=Skipped)
    names: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    platform: dict[str, Any] | None = None
    source: Callable[[int], str] | None = None

    def __post_init__(self) -> None:
        found = first_bad_value(self.trace.data)
        if found is None:
            return
        row, k, problem = found
        where = self.source(row) if self.source else f"{self.trace.name}: job {row + 1}"
        value = float(self.trace.data[row, k])
        raise FormatError(f"{where}: gives SWF {field_label(FIELDS[k])} {value:g}, which {problem}")
