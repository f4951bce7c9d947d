"""Slurm's reservations in Slurm's words: a site's maintenance as windows of its platform.

A site described by its ``slurm.conf`` lists its maintenance reservations in the TOML file beside
it (``reservations``, :func:`sitesim.runs.platforms.beside_slurm_conf`), each one string: the
arguments of ``scontrol create reservation``, or a record of ``scontrol show reservation`` (one
line with ``-o``, or the record's lines)::

    reservations = [
      "ReservationName=maint StartTime=2026-01-05T08:00:00 Duration=04:00:00 Nodes=ALL Flags=MAINT",
      "ReservationName=weekly StartTime=now+1day Duration=240 Nodes=node[01-08] Flags=MAINT,WEEKLY",
    ]

:func:`reservation_windows` reads them as Slurm 22.05.8 does (each rule cites the file and line
of Slurm's source it follows) and writes each as a ``[[downtime.maintenance]]`` table of the
platform (:mod:`sitesim.platform.downtime`): its nodes, from its start for its duration, again
as its flags repeat it. ``now`` is the run's time 0; a date is placed on the run's clock (a
replay's trace gives it). A reservation sitesim would model wrongly is refused, one line naming
the file, the reservation and the key. What is modelled and where sitesim departs from Slurm:
docs/reference/platform.md, "Maintenance reservations".
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sitesim.platform.description import Platform
from sitesim.platform.values import PlatformError, format_duration, format_nodes, parse_duration
from sitesim.slurm.conf import expand_hostlist

#: ``scontrol``'s keys in the order it tries them, each with the fewest letters that name it
#: (``_parse_res_options``, src/scontrol/create_res.c:131-323); ``State`` is what
#: ``scontrol show reservation`` adds (src/api/reservation_info.c:155-158).
_KEYS: tuple[tuple[str, int], ...] = (
    ("Accounts", 1), ("Flags", 2), ("Groups", 1), ("Users", 1), ("ReservationName", 1),
    ("BurstBuffer", 2), ("StartTime", 2), ("EndTime", 1), ("Duration", 1),
    ("MaxStartDelay", 2), ("NodeCnt", 5), ("NodeCount", 5), ("CoreCnt", 5), ("CoreCount", 5),
    ("CPUCnt", 5), ("CPUCount", 5), ("Nodes", 5), ("Features", 2), ("Licenses", 2),
    ("PartitionName", 1), ("TRES", 1), ("Watts", 1), ("State", 5),
)  # fmt: skip
#: Keys that are another's other name.
_SAME = {"NodeCount": "NodeCnt", "CoreCount": "CoreCnt", "CPUCnt": "CoreCnt", "CPUCount": "CoreCnt"}
#: Keys of what sitesim has not (licenses, burst buffers, power, nodes chosen by feature, jobs
#: let into the nodes until a delay): refused unless empty, as ``scontrol show`` prints them.
_NOT_MODELLED = {
    "BurstBuffer": "burst buffers",
    "Licenses": "licenses",
    "Watts": "power",
    "Features": "nodes chosen by their features",
    "MaxStartDelay": "jobs let onto the reserved nodes until a delay",
}
#: The flags in the order Slurm tries them, each with the fewest letters that name it
#: (``parse_resv_flags``, src/common/proc_args.c:1422-1551); then the two that only
#: ``scontrol show`` prints (``reservation_flags_string``, src/common/slurm_protocol_defs.c:
#: 3248-3256).
_FLAGS: tuple[tuple[str, str, int], ...] = (
    ("MAINT", "Maintenance", 3), ("OVERLAP", "Overlap", 1), ("FLEX", "Flex", 1),
    ("IGNORE_JOBS", "Ignore_Jobs", 1), ("HOURLY", "Hourly", 1), ("DAILY", "Daily", 1),
    ("WEEKDAY", "Weekday", 1), ("WEEKEND", "Weekend", 1), ("WEEKLY", "Weekly", 1),
    ("ANY_NODES", "Any_Nodes", 1), ("ANY_NODES", "License_Only", 1),
    ("STATIC_ALLOC", "Static_Alloc", 1), ("PART_NODES", "Part_Nodes", 2),
    ("MAGNETIC", "Magnetic", 3), ("MAGNETIC", "Promiscuous", 2), ("PURGE_COMP", "Purge_Comp", 2),
    ("FIRST_CORES", "First_Cores", 1), ("TIME_FLOAT", "Time_Float", 1), ("REPLACE", "Replace", 1),
    ("REPLACE_DOWN", "Replace_Down", 8),
    ("NO_HOLD_JOBS_AFTER_END", "No_Hold_Jobs_After_End", 1),
    ("SPEC_NODES", "Spec_Nodes", 10), ("ALL_NODES", "All_Nodes", 9),
)  # fmt: skip
#: The flags sitesim refuses, and what of Slurm they would need.
_FLAGS_NOT_MODELLED = {
    "ANY_NODES": "a reservation of licenses or burst buffers, not of nodes",
    "MAGNETIC": "jobs of its users run in it without asking for it",
    "PURGE_COMP": "it ends when its jobs are done",
    "FIRST_CORES": "a reservation of cores, not of whole nodes",
    "TIME_FLOAT": "its start moves with the current time",
    "REPLACE": "its nodes are replaced as jobs take them",
    "REPLACE_DOWN": "its nodes are replaced as they fail",
}
#: The repeats, by precedence when several are given, with their period in seconds
#: (``_advance_resv_time``, src/slurmctld/reservation.c:6556-6579); WEEKDAY and WEEKEND follow
#: the calendar (:func:`sitesim.platform.downtime._calendar_starts`).
_REPEATS: tuple[tuple[str, float], ...] = (
    ("HOURLY", 3600.0), ("DAILY", 86_400.0), ("WEEKDAY", 86_400.0), ("WEEKEND", 86_400.0),
    ("WEEKLY", 7 * 86_400.0),
)  # fmt: skip
#: ``Duration=UNLIMITED`` lasts a year (``YEAR_SECONDS``, src/common/slurm_protocol_defs.h:181;
#: src/slurmctld/reservation.c:2446-2448).
YEAR = 365 * 86_400.0
#: ``now[{+|-}count[unit]]`` (``parse_time`` and ``_get_delta``, src/common/parse_time.c:
#: 153-191, 484-522; the units, 73-85).
_NOW = re.compile(r"now\s*(?:([+-])\s*(\d+)\s*([a-z]*))?\s*", re.IGNORECASE)
_UNITS = {
    "": 1, "second": 1, "seconds": 1, "minute": 60, "minutes": 60, "hour": 3600, "hours": 3600,
    "day": 86_400, "days": 86_400, "week": 604_800, "weeks": 604_800,
}  # fmt: skip
_WORDS = ("today", "tomorrow", "midnight", "noon", "fika", "teatime")
_TIMES = (
    "now[+count[seconds|minutes|hours|days|weeks]], YYYY-MM-DD[THH:MM[:SS]] or "
    "MM/DD/YY[-HH:MM[:SS]]"
)


@dataclass
class _Line:
    """The keys of one reservation as written (canonical key -> value; None: ``(null)``)."""

    label: str
    where: str
    values: dict[str, str | None]

    def error(self, key: str, says: str) -> PlatformError:
        return PlatformError(f"{self.where}: {self.label}: {key}: {says}")

    def get(self, key: str) -> str | None:
        return self.values.get(key)


def reservation_windows(
    lines: Any, where: str, platform: Platform, node_names: Sequence[str]
) -> list[dict[str, Any]]:
    """The ``[[downtime.maintenance]]`` tables of a site's reservations.

    Args:
        lines: the ``reservations`` list of the TOML file, each one reservation's text.
        where: the TOML file, for the errors.
        platform: the platform of the site's ``slurm.conf``.
        node_names: its nodes' names, by index.

    Raises:
        PlatformError: ``where: reservations[k] (name): Key: problem``.
    """
    if not isinstance(lines, list) or not all(isinstance(line, str) for line in lines):
        raise PlatformError(
            f"{where}: reservations: must be a list of strings, each a reservation as "
            "'scontrol create reservation' takes it (ReservationName=... StartTime=... ...)"
        )
    rows: list[dict[str, Any]] = []
    names: set[str] = set()
    for k, text in enumerate(lines):
        line = _split(text, f"reservations[{k}]", where)
        name = line.get("ReservationName")
        if name is not None:
            if name in names:  # (reservation.c:2698-2704: ESLURM_RESERVATION_NAME_DUP)
                raise line.error("ReservationName", f"{name} names an earlier reservation too")
            names.add(name)
        rows.append(_window(line, platform, node_names, name))
    return rows


def _split(text: str, label: str, where: str) -> _Line:
    """The ``Key=Value`` words of a reservation, keys by their full name."""
    line = _Line(label, where, {})
    pairs: list[tuple[str, str]] = []
    for word in text.split():
        tag, equals, value = word.partition("=")
        if not equals:
            if word.lower().startswith("res"):  # ("reservation": create_res.c:109-111)
                continue
            raise line.error(
                word, "not Key=Value (scontrol's words: ReservationName=, StartTime=, ...)"
            )
        if tag.endswith(("+", "-")):
            raise line.error(tag, "adds to or takes from a reservation: only scontrol update does")
        key = _key(tag)
        if key is None:
            raise line.error(
                tag,
                "not a key of scontrol create reservation (nor of scontrol show reservation): "
                + ", ".join(name for name, _ in _KEYS if name not in _SAME),
            )
        if key == "ReservationName" and value:
            line.label = f"{label} ({value})"
        pairs.append((key, value))
    for key, value in pairs:
        if key in line.values:
            raise line.error(key, "given twice")
        shown_empty = value in ("(null)", "") or (key == "Watts" and value.lower() == "n/a")
        line.values[key] = None if shown_empty else value
    return line


def _key(tag: str) -> str | None:
    """The key ``tag`` names: the first whose name it begins with, in at least as many letters
    as Slurm asks (create_res.c:131-323: ``xstrncasecmp(tag, name, MAX(taglen, n))``)."""
    lower = tag.lower()
    for name, letters in _KEYS:
        if letters <= len(lower) <= len(name) and name.lower().startswith(lower):
            return _SAME.get(name, name)
    return None


def _window(
    line: _Line, platform: Platform, node_names: Sequence[str], name: str | None
) -> dict[str, Any]:
    """One reservation as a ``[[downtime.maintenance]]`` table."""
    flags = _flags(line)
    for key, what in _NOT_MODELLED.items():
        if line.get(key) is not None:
            raise line.error(key, f"{line.get(key)}: not modelled by sitesim (it has no {what})")
    if line.get("CoreCnt") is not None or line.get("TRES") is not None:
        key = "CoreCnt" if line.get("CoreCnt") is not None else "TRES"
        if line.get("State") is None:  # (a create: cores, not nodes; a show record: its nodes')
            raise line.error(key, "a reservation of cores, not of whole nodes, is not modelled")
    _for_nobody(line, flags)
    start, duration = _times(line)
    every = None
    for repeat, period in _REPEATS:
        if repeat in flags:
            if not duration < period:
                shown = "no end" if math.isinf(duration) else format_duration(duration)
                raise line.error(
                    "Duration",
                    f"{shown} is not shorter than the time between two of its windows "
                    f"({repeat}: {format_duration(period)}): its nodes would never come back",
                )
            every = repeat if repeat in ("WEEKDAY", "WEEKEND") else format_duration(period)
            break
    row: dict[str, Any] = {"name": f"reservation {name}" if name else line.label}
    row["start"] = start.isoformat() if isinstance(start, datetime) else format_duration(start)
    row["duration"] = format_duration(duration)
    if every is not None:
        row["every"] = every
    row["nodes"] = [format_nodes(_nodes(line, flags, platform, node_names))]
    return row


def _flags(line: _Line) -> set[str]:
    """The flags, each checked: Slurm's (``parse_resv_flags``), those sitesim models."""
    text = line.get("Flags")
    flags: set[str] = set()
    for item in (text or "").split(","):
        if not item:
            continue
        if item.startswith("-"):
            raise line.error("Flags", f"{item}: takes a flag away: only scontrol update does")
        tag = item.lstrip("+").partition("=")[0].lower()
        found = next(
            (
                flag
                for flag, name, letters in _FLAGS
                if letters <= len(tag) <= len(name) and name.lower().startswith(tag)
            ),
            None,
        )
        if found is None:
            known = ", ".join(dict.fromkeys(flag for flag, _, _ in _FLAGS))
            raise line.error("Flags", f"{item}: not a flag of Slurm's reservations ({known})")
        if found in _FLAGS_NOT_MODELLED:
            raise line.error(
                "Flags", f"{item}: not modelled by sitesim ({_FLAGS_NOT_MODELLED[found]})"
            )
        flags.add(found)
    return flags


def _for_nobody(line: _Line, flags: set[str]) -> None:
    """Refuse a reservation for users' jobs: sitesim's jobs never ask for a reservation
    (``--reservation``), and a job that does not cannot use a reservation's nodes
    (``job_test_resv``, src/slurmctld/reservation.c:6250-6330), so a reservation is modelled as
    nodes out of service, which it is for maintenance (``MAINT``) or when only root may use it.
    """
    if "MAINT" in flags:
        return
    for key in ("Users", "Accounts", "Groups"):
        value = line.get(key)
        if value is None or (key == "Users" and {u.strip() for u in value.split(",")} == {"root"}):
            continue
        raise line.error(
            key,
            f"{value}: a reservation for users' jobs is not modelled (no job of sitesim asks "
            "for a reservation, so none could run in it); maintenance is: Flags=MAINT, or "
            "Users=root alone",
        )


def _times(line: _Line) -> tuple[float | datetime, float]:
    """The start (seconds from time 0, or a date on the site's clocks) and the duration."""
    text = line.get("StartTime")
    if text is None:  # (create_res.c:403-407)
        raise line.error("StartTime", "must be given (now[+count[unit]] or a date)")
    start = _moment(line, "StartTime", text)
    if isinstance(start, float) and start < 0:
        raise line.error("StartTime", f"{text}: before now, the run's time 0")
    duration = None
    written = line.get("Duration")
    if written is not None:
        duration = _duration(line, written)
    end_text = line.get("EndTime")
    if end_text is None:
        if duration is None:  # (create_res.c:408-413)
            raise line.error("Duration", "give Duration or EndTime")
        return start, duration
    end = _moment(line, "EndTime", end_text)
    if isinstance(start, datetime) and isinstance(end, datetime):
        length = (end - start).total_seconds()
    elif isinstance(start, float) and isinstance(end, float):
        length = end - start
    else:
        raise line.error(
            "EndTime",
            f"{end_text}: give StartTime and EndTime alike (both now+... or both dates), or "
            "Duration",
        )
    if not length > 0:  # (create_res.c:421-426)
        raise line.error("EndTime", f"{end_text} is not after StartTime {text}")
    if duration is not None and length not in (duration, _seconds(written)):
        # (create_res.c:414-420, in whole minutes; or to the second, as scontrol show prints)
        raise line.error(
            "Duration",
            f"{written}: StartTime + Duration is not EndTime ({format_duration(length)} apart)",
        )
    return start, length


def _duration(line: _Line, text: str) -> float:
    """``Duration=``: whole minutes, rounded up (``time_str2mins``, src/common/parse_time.c:
    754-760); UNLIMITED, INFINITE or -1 a year (reservation.c:2446-2448); 0 no end at all
    (reservation.c:2452-2453)."""
    if text.strip().upper() in ("-1", "UNLIMITED", "INFINITE"):
        return YEAR
    try:
        seconds = parse_duration(text)
    except ValueError as err:
        raise line.error("Duration", str(err)) from None
    minutes = math.ceil(seconds / 60.0)
    return math.inf if minutes == 0 else minutes * 60.0


def _seconds(text: str | None) -> float | None:
    """``Duration=`` to the second (None: not a time in seconds)."""
    try:
        return None if text is None else parse_duration(text)
    except ValueError:
        return None


def _moment(line: _Line, key: str, text: str) -> float | datetime:
    """A time as ``parse_time`` reads it (src/common/parse_time.c:397-608): ``now`` with a
    count of units (seconds from time 0), or a date with its year and a time of day (a
    date on the site's clocks). Forms that name no date, or a date without its year, depend
    on when scontrol runs, and are refused; so is ``uts``, a Unix time (give the date)."""
    found = _NOW.fullmatch(text)
    if found is not None:
        sign, count, unit = found.groups()
        unit = unit or ""
        if unit.lower() not in _UNITS:
            raise line.error(key, f"{text}: {unit!r} is not a unit (seconds, minutes, ...)")
        seconds = float(int(count or 0) * _UNITS[unit.lower()])
        return -seconds if sign == "-" else seconds
    if text.lower().startswith("uts"):
        raise line.error(key, f"{text}: a Unix time; give the date on the site's clocks")
    try:
        return _dated(text)
    except ValueError as err:
        raise line.error(key, f"{text}: {err}") from None


def _dated(text: str) -> datetime:
    """A date and time in ``parse_time``'s other forms (src/common/parse_time.c:434-604)."""
    date: tuple[int, int, int | None] | None = None
    clock: tuple[int, int, int] | None = None
    pos = 0
    while pos < len(text):
        char = text[pos]
        if char in " \t-T":
            pos += 1
            continue
        if text[pos:].lower().startswith(_WORDS):
            raise ValueError(
                f"depends on when scontrol runs; give {_TIMES} (now is the run's time 0)"
            )
        if not char.isdigit():
            raise ValueError(f"not a time Slurm reads; give {_TIMES}")
        if text[pos + 1 : pos + 2] == ":" or text[pos + 2 : pos + 3] == ":":
            clock, pos = _time_of_day(text, pos)
        else:
            date, pos = _date(text, pos)
    if date is None:
        raise ValueError(f"names no day: it depends on when scontrol runs; give {_TIMES}")
    month, day, year = date
    if year is None:
        raise ValueError("names no year: it depends on when scontrol runs; give the year")
    hour, minute, second = clock or (0, 0, 0)
    try:
        return datetime(year, month, day, hour, minute, second)
    except ValueError:
        raise ValueError(f"{year:04d}-{month:02d}-{day:02d} is no day of the calendar") from None


def _time_of_day(text: str, pos: int) -> tuple[tuple[int, int, int], int]:
    """``HH:MM[:SS] [AM|PM]`` (``_get_time``, src/common/parse_time.c:199-280)."""
    found = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2}))?\s*(am|pm)?", re.IGNORECASE).match(text, pos)
    if found is None:
        raise ValueError(f"not a time of day HH:MM[:SS]; give {_TIMES}")
    hour, minute, second = int(found[1]), int(found[2]), int(found[3] or 0)
    if hour > 23 or minute > 59 or second > 59:
        raise ValueError(f"{found[0]} is no time of day")
    half = (found[4] or "").lower()
    if half == "pm":
        hour = 12 if hour == 12 else hour + 12
        if hour > 23:
            raise ValueError(f"{found[0]} is no time of day")
    elif half == "am" and hour >= 12:
        if hour > 12:
            raise ValueError(f"{found[0]} is no time of day")
        hour = 0
    return (hour, minute, second), found.end()


_ISO = re.compile(r"(\d{4})-(\d{2})-(\d{1,2})")
_SHORT = re.compile(r"(\d{1,2})[./]?(\d{1,2})[./]?(\d{2})?")


def _date(text: str, pos: int) -> tuple[tuple[int, int, int | None], int]:
    """``YYYY-MM-DD`` or ``MM[/.]DD[[/.]YY]`` (``_get_date``, src/common/parse_time.c:289-394;
    a two-digit year is 20YY)."""
    iso = _ISO.match(text, pos)
    if iso is not None:
        year, month, day = int(iso[1]), int(iso[2]), int(iso[3])
        found: re.Match[str] = iso
        full_year: int | None = year
    else:
        short = _SHORT.match(text, pos)
        if short is None:
            raise ValueError(f"not a date; give {_TIMES}")
        month, day = int(short[1]), int(short[2])
        full_year = None if short[3] is None else 2000 + int(short[3])
        found = short
    if not (1 <= month <= 12 and 1 <= day <= 31):
        raise ValueError(f"{found[0]} is no date (month 1-12, day 1-31)")
    return (month, day, full_year), found.end()


def _nodes(
    line: _Line, flags: set[str], platform: Platform, node_names: Sequence[str]
) -> list[int]:
    """The reservation's nodes: ``Nodes=`` (``ALL``: every node, or its partition's), else the
    first ``NodeCnt=`` nodes of its partition (the default one), else its partition's."""
    parts = {p.name: p for p in platform.partitions}
    part_name = line.get("PartitionName")
    if part_name is not None and part_name not in parts:
        raise line.error("PartitionName", f"{part_name} is no partition ({', '.join(parts)})")
    nodes_text = line.get("Nodes")
    if "PART_NODES" in flags and (part_name is None or (nodes_text or "").upper() != "ALL"):
        raise line.error(  # (create_res.c:444-451)
            "Flags", "PART_NODES needs PartitionName= and Nodes=ALL"
        )
    part = parts[part_name] if part_name is not None else platform.partitions[platform.default]
    if nodes_text is not None:  # (reservation.c:2570-2605: the list wins over NodeCnt)
        if nodes_text.upper() == "ALL":  # (create_res.c:432-438; reservation.c:2571-2580)
            return list(part.nodes) if part_name is not None else list(range(platform.nodes))
        try:
            names = expand_hostlist(nodes_text)
        except ValueError as err:
            raise line.error("Nodes", str(err)) from None
        index = {name: k for k, name in enumerate(node_names)}
        unknown = [name for name in names if name not in index]
        if unknown:
            raise line.error(
                "Nodes", f"{unknown[0]} is no node of the slurm.conf (its NodeName lines)"
            )
        return sorted({index[name] for name in names})
    count_text = line.get("NodeCnt")
    if count_text is not None:  # (the default partition: reservation.c:4549-4555)
        if not count_text.isdigit() or int(count_text) < 1:
            raise line.error("NodeCnt", f"{count_text}: must be a whole number >= 1")
        count = int(count_text)
        if count > len(part.nodes):
            raise line.error(
                "NodeCnt", f"{count} nodes: partition {part.name} has {len(part.nodes)}"
            )
        return list(part.nodes[:count])
    if part_name is not None:  # (the whole partition: create_res.c:457-474)
        return list(part.nodes)
    raise line.error("Nodes", "give Nodes=, NodeCnt= or PartitionName= (create_res.c:464)")
