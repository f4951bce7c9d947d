"""What reading another format gives: an SWF trace and what the conversion left out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sitesim.formats.lines import Skipped
from sitesim.swf import SWFTrace


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
    """

    trace: SWFTrace
    skipped: Skipped = field(default_factory=Skipped)
    names: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    platform: dict[str, Any] | None = None
