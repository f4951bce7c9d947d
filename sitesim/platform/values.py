"""The values of platform files: node ranges (``0-3,17``), Slurm's durations and memory
sizes, and the limits that refuse absurd ones (the files' tables are checked by their schemas,
:mod:`sitesim.platform.description` and :mod:`sitesim.platform.downtime`)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from sitesim.errors import ConfigError

#: More nodes than this is refused before anything runs (ten times today's largest machines).
MAX_NODES = 1_000_000
#: More memory a node than this (MB; 1024T) is refused (a hundred times today's largest nodes).
MAX_MEMORY = 1024**3
#: Longer times than this (seconds; 100 years) are refused: a time limit, a maintenance window
#: or a failure time beyond it is a slip (``UNLIMITED`` says "no limit" where it is allowed).
MAX_TIME = 36_500 * 86_400.0
MAX_TIME_TEXT = "36500-00:00:00 (100 years)"
#: The largest count of a platform file (nodes of a type, cores or GPUs of a node).
MAX_WHOLE = MAX_NODES * 1024
#: The largest share of a partition (shares are relative weights).
MAX_SHARE = 1e18
#: The largest SWF partition number (field 16 holds at most 18 digits).
MAX_SWF = 10**18 - 1


class PlatformError(ConfigError):
    """A bad platform description: the message names the file, the key and the allowed values."""


# -- node ranges -------------------------------------------------------------------------------
def format_nodes(nodes: Iterable[int] | np.ndarray) -> str:
    """Node indices as compact ranges: ``[0, 1, 2, 3, 17]`` -> ``'0-3,17'`` (an array: a
    job's nodes, ascending and distinct)."""
    if isinstance(nodes, np.ndarray) and len(nodes):  # (often one run)
        first, last = int(nodes[0]), int(nodes[-1])
        if last - first + 1 == len(nodes):
            return str(first) if first == last else f"{first}-{last}"
        cut = np.flatnonzero(np.diff(nodes) != 1)  # (the last node of each run but the last)
        starts = nodes[np.concatenate(([0], cut + 1))].tolist()
        ends = nodes[np.append(cut, len(nodes) - 1)].tolist()
        return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in zip(starts, ends, strict=True))
    parts: list[str] = []
    run_start = prev = None
    for node in sorted(nodes):
        if prev is not None and node == prev + 1:
            prev = node
            continue
        if run_start is not None:
            parts.append(str(run_start) if run_start == prev else f"{run_start}-{prev}")
        run_start = prev = node
    if run_start is not None:
        parts.append(str(run_start) if run_start == prev else f"{run_start}-{prev}")
    return ",".join(parts)


_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


def parse_nodes(text: str) -> list[int]:
    """``'0-3,17'`` -> ``[0, 1, 2, 3, 17]`` (ValueError naming the bad part)."""
    return [node for low, high in node_ranges(text) for node in range(low, high + 1)]


def node_ranges(text: str) -> list[tuple[int, int]]:
    """``'0-3,17'`` -> ``[(0, 3), (17, 17)]``: the ranges, not expanded (ValueError naming the
    bad part)."""
    ranges: list[tuple[int, int]] = []
    for part in text.split(","):
        match = _RANGE.match(part.strip())
        if not match:
            raise ValueError(f"{part!r} is not a node index or a range such as '0-3'")
        low = int(match[1])
        high = int(match[2]) if match[2] is not None else low
        if high < low:
            raise ValueError(f"the range {part!r} is reversed")
        ranges.append((low, high))
    return ranges


# -- durations and sizes -----------------------------------------------------------------------
_SLURM_TIME = re.compile(r"^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$")


def parse_duration(text: str) -> float:
    """A time limit in Slurm's syntax, in seconds: ``minutes``, ``minutes:seconds``,
    ``hours:minutes:seconds``, ``days-hours``, ``days-hours:minutes``,
    ``days-hours:minutes:seconds``, or ``UNLIMITED`` / ``INFINITE`` (inf).

    Raises:
        ValueError: any other text.
    """
    text = text.strip()
    if text.upper() in ("UNLIMITED", "INFINITE"):
        return math.inf
    match = _SLURM_TIME.match(text)
    if not match:
        raise ValueError(
            f"{text!r} is not a time in Slurm's syntax (minutes, [days-]hours:minutes:seconds, "
            "days-hours, or UNLIMITED)"
        )
    if len(text) > 40:  # (a time of more digits than any float holds exactly)
        raise ValueError(f"{text!r} is not a time: too many digits")
    days, a, b, c = (int(g) if g is not None else None for g in match.groups())
    assert a is not None
    if days is not None:  # days-hours[:minutes[:seconds]]
        return float(((days * 24 + a) * 60 + (b or 0)) * 60 + (c or 0))
    if c is not None:  # hours:minutes:seconds
        return float((a * 60 + (b or 0)) * 60 + c)
    if b is not None:  # minutes:seconds
        return float(a * 60 + b)
    return float(a * 60)  # minutes


def minutes(value: int) -> float:
    """A whole number of minutes in seconds (one beyond any float is simply very large)."""
    return float(min(value, 10**15)) * 60.0


def format_duration(seconds: float) -> str:
    """Seconds in Slurm's ``days-hours:minutes:seconds`` (``UNLIMITED`` for inf)."""
    if not math.isfinite(seconds):
        return "UNLIMITED"
    whole = round(seconds)
    days, rest = divmod(whole, 86_400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{days}-{hours:02d}:{minutes:02d}:{secs:02d}"


_MEMORY = re.compile(r"^(\d+(?:\.\d+)?)\s*([MGT]?)B?$", re.IGNORECASE)
_MB = {"": 1, "M": 1, "G": 1024, "T": 1024 * 1024}


def parse_memory(value: Any) -> int:
    """Memory in MB (Slurm's unit): an integer (MB) or text such as ``'256G'``, ``'512M'``; at
    most :data:`MAX_MEMORY` (1024T)."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"{value} is negative")
        megabytes = float(value) if value <= MAX_MEMORY else math.inf
    elif isinstance(value, str) and (match := _MEMORY.match(value.strip())):
        megabytes = float(match[1]) * _MB[match[2].upper()]
    else:
        raise ValueError(f"{value!r} is not a memory size (MB as a number, or text such as '256G')")
    if not megabytes <= MAX_MEMORY:
        raise ValueError(f"{value!r} is absurd: a node has at most {MAX_MEMORY // 1024**2}T")
    return int(megabytes)


def _nodes_text(nodes: Iterable[int]) -> str:
    """``'node 4'`` or ``'nodes 4-7'``."""
    found = sorted(nodes)
    return f"node{'s' if len(found) > 1 else ''} {format_nodes(found)}"


def node_set(
    items: Sequence[str | int], count: int, by_type: Mapping[str, range] | None = None
) -> set[int]:
    """The nodes of node type names (``by_type``), indices and ranges such as ``'0-3,17'``,
    each in 0..count-1 and named once.

    Raises:
        ValueError: an item that is neither, a range beyond the last node, or one that names
            a node an earlier item (or part) named.
    """
    nodes: set[int] = set()
    for item in items:
        if by_type is not None and isinstance(item, str) and item in by_type:
            ranges = [(by_type[item].start, by_type[item].stop - 1)]
        else:
            try:
                if isinstance(item, bool) or not isinstance(item, str | int):
                    raise ValueError(f"{item!r} is not a node index or a range such as '0-3'")
                ranges = [(item, item)] if isinstance(item, int) else node_ranges(item)
            except ValueError as err:
                if by_type is None:
                    raise
                raise ValueError(
                    f"{item!r} is neither a node type ({', '.join(by_type)}) nor a range: {err}"
                ) from None
        for low, high in ranges:
            if low < 0 or high >= count:
                raise ValueError(f"{item!r} names node {high}; nodes are 0-{count - 1}")
            span = range(low, high + 1)
            again = nodes.intersection(span)
            if again:
                raise ValueError(
                    f"{item!r} names {_nodes_text(again)} again; list each node once "
                    "(ranges must not overlap)"
                )
            nodes.update(span)
    return nodes


def time_value(
    value: int | str, *, zero: bool, unlimited: bool, allowed: str, after_syntax: bool = True
) -> float:
    """A time of a platform file in seconds: a whole number of minutes (as in slurm.conf) or
    text in Slurm's syntax; > 0 (>= 0 with ``zero``), UNLIMITED only with ``unlimited``, and
    at most :data:`MAX_TIME`. ``allowed`` says what is, for the errors (after the syntax's own
    error too, with ``after_syntax``).

    Raises:
        ValueError: any other value.
    """
    if isinstance(value, str):
        try:
            seconds = parse_duration(value)
        except ValueError as err:
            raise ValueError(f"{err}; must be {allowed}" if after_syntax else str(err)) from None
    else:
        seconds = minutes(value) if value >= 0 else -1.0
    if seconds < 0 or (seconds == 0 and not zero) or (math.isinf(seconds) and not unlimited):
        raise ValueError(f"must be {allowed}, got {value!r}")
    if MAX_TIME < seconds < math.inf:
        shown = f"{value} minutes" if isinstance(value, int) else repr(value)
        raise ValueError(f"{shown} is absurd; must be {allowed}")
    return seconds
