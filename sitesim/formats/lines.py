"""Lines a reader skips, counted by reason, and the error for a line that cannot be read.

A line that is well formed but cannot become a job (a job still running when the log was
taken, a job step) is *skipped*: counted by reason, the first few quoted with their line
numbers. A line that is malformed (truncated, a time in an unknown format, a negative count)
stops the conversion with :class:`FormatError`, one line naming the file, the line and the
field; nothing is written.
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass, field

from sitesim.errors import SitesimError
from sitesim.workload.swf import range_problem

#: How many lines of each reason are quoted.
QUOTED = 2
#: How much of a quoted line is shown.
QUOTE_WIDTH = 100


class FormatError(SitesimError):
    """A malformed input line, or a file that is not the format it claims to be: the message
    reads ``file:line: field NAME: problem``."""


def format_error(name: str, line: int, field_name: str, problem: str) -> FormatError:
    """The error for field ``field_name`` of line ``line`` (1-based) of file ``name``."""
    where = f"{name}:{line}" if line > 0 else name
    return FormatError(f"{where}: field {field_name}: {problem}")


def out_of_range(field_name: str, text: str, value: float) -> str | None:
    """What is wrong with ``value``, read from ``text`` for SWF field ``field_name``, if it is
    of an absurd size (:func:`sitesim.workload.swf.range_problem`; an infinite value has more digits
    than a float holds): ``'1e+300' is out of range: ...``; None if nothing is."""
    problem = range_problem(field_name, min(value, sys.float_info.max))
    if problem is None:
        return None
    shown = text if len(text) <= 20 else text[:17] + "..."
    return f"{shown!r} {problem}"


@dataclass
class Skipped:
    """Lines skipped, by reason, with the first :data:`QUOTED` of each reason quoted."""

    counts: Counter[str] = field(default_factory=Counter)
    quoted: dict[str, list[tuple[str, str]]] = field(default_factory=dict)

    def add(self, reason: str, where: str, text: str) -> None:
        """Count a line for ``reason``; quote it (``text``, at ``where``: ``file:line``)."""
        self.counts[reason] += 1
        shown = self.quoted.setdefault(reason, [])
        if len(shown) < QUOTED:
            shown.append((where, text))

    def add_many(self, reason: str, count: int, quotes: list[tuple[str, str]]) -> None:
        """Count ``count`` lines for ``reason``, quoting the first of ``quotes``
        (``(where, text)`` pairs)."""
        if count <= 0:
            return
        self.counts[reason] += count
        shown = self.quoted.setdefault(reason, [])
        shown.extend(quotes[: QUOTED - len(shown)])

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def summary(self) -> str:
        """``skipped 12 lines: still running 10, a job step 2`` (or ``skipped no line``)."""
        if not self.counts:
            return "skipped no line"
        parts = ", ".join(f"{reason} {n:,}" for reason, n in self.counts.most_common())
        return f"skipped {self.total:,} line{'s' if self.total != 1 else ''}: {parts}"

    def report(self) -> str:
        """:meth:`summary` and the quoted lines, one a line."""
        lines = [self.summary()]
        for reason, _ in self.counts.most_common():
            for where, text in self.quoted.get(reason, []):
                shown = text if len(text) <= QUOTE_WIDTH else text[: QUOTE_WIDTH - 3] + "..."
                lines.append(f"  {reason}: {where}: {shown}")
        return "\n".join(lines)

    def as_dict(self) -> dict[str, int]:
        """The counts, most frequent first (for a header or JSON)."""
        return dict(self.counts.most_common())
