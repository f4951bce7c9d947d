"""Downtime: the times a platform's nodes are out of service, planned or not.

Two kinds of outage take nodes away from jobs:

- **maintenance windows** (:class:`Window`): a reservation of some nodes from ``start`` for
  ``duration`` seconds, once or every ``every`` seconds. Known in advance, so a backfilling
  scheduler can keep jobs clear of them. A window's table may give its start as a date on the
  site's clocks, or repeat it on weekdays or weekends as Slurm's reservations do: the run's
  :class:`Clock` places such windows (:func:`placed_table`), a trace replay's from its header.
- **failures**: per node, a renewal process from t = 0 (every node up): up times drawn from an
  exponential distribution of mean ``mtbf``, repair times from one of mean ``mttr``; and/or the
  rows of a failure file (node, down, up), as a site's logs give them.

:meth:`Downtime.outages` turns a description into rows (node, down, up, kind) up to a horizon;
:meth:`Downtime.stream` gives the same rows a block of time at a time, drawn as a run reaches
them (a run holds one block, not every outage to its horizon). The machine applies them: a
node is down while any row covers it, so a failure during a node's own maintenance window is
kept as a row of its own.

The ``[downtime]`` table of a platform file (every key in docs/reference/platform.md)::

    [downtime]
    on_failure = "requeue"            # or "fail": what happens to a job on a failing node

    [[downtime.maintenance]]
    start = "1-08:00:00"              # Tuesday 08:00 (time 0 of a site run is Monday 00:00),
                                      # or a date: "2026-01-06T08:00:00" (a replay's clock)
    duration = "4:00:00"
    every = "7-00:00:00"              # or "WEEKDAY", "WEEKEND"; omit for a one-off window
    partitions = ["normal"]           # or nodes = ["0-99", "400"]; neither: all nodes
    name = "weekly"                   # what messages call it (optional)

    [downtime.failures]
    mtbf = "1000-00:00:00"            # per node
    mttr = "4:00:00"
    nodes = ["0-99"]                  # or partitions = [...]; neither: all nodes
    file = "failures.csv"             # lines "node,down,up" (seconds)
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

import msgspec
import numpy as np
from msgspec import Meta

from sitesim.platform.placement import Alloc
from sitesim.platform.values import (
    MAX_TIME_TEXT,
    PlatformError,
    format_duration,
    format_nodes,
    node_set,
    time_value,
)
from sitesim.schema import Table, problem, read

if TYPE_CHECKING:
    from sitesim.platform.description import Platform

DAY = 86_400.0
#: The repeats of a window that follow the calendar (``every``): Slurm's reservation flags.
CALENDAR_REPEATS = ("WEEKDAY", "WEEKEND")
#: A window's ``start`` as a date on the site's clocks.
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2})?)?$")
#: The wall clock of time 0 when a run has no date: Monday 1 January 2018, 00:00 (no time
#: zone, no DST; fairshare's usage resets count from it too).
EPOCH = datetime(2018, 1, 1)

OnFailure = Literal["requeue", "fail"]
ON_FAILURE: tuple[OnFailure, ...] = get_args(OnFailure)
#: Outage kinds (:attr:`Outages.kind`).
MAINTENANCE, FAILURE = 0, 1

#: Generated failures draw, in round r, ``_block(r)`` up times and as many repair times for
#: every node from generators keyed by (seed, purpose, r); node i's values are row i of the
#: round's block. The widths are fixed (4, 8, 16, 32, then 64 a round), so the outages do not
#: depend on how many rounds a horizon needs; small first rounds cost little where few nodes
#: fail more than a few times.
_FIRST_BLOCK, _LAST_BLOCK = 4, 64


def _block(round_: int) -> int:
    """How many up times (and repairs) each node draws in round ``round_``."""
    return min(_FIRST_BLOCK << min(round_, 8), _LAST_BLOCK)


#: The first entry of the spawn key of the failure streams (user streams use other keys).
_STREAM = 0xD0D0
_UP, _REPAIR = 0, 1
#: Rows drawn at once (a 16 MB block of uniforms).
_CHUNK = 65_536


@dataclass(frozen=True)
class Window:
    """One maintenance reservation of ``nodes``: ``[start, start + duration)``, again every
    ``every`` seconds (``math.inf``: once).

    Attributes:
        start: seconds from simulation time 0 (a site run's time 0 is Monday 00:00), >= 0.
        duration: seconds, > 0.
        every: the period in seconds, > duration (``math.inf``: a one-off window).
        nodes: the nodes it takes, ascending indices.
    """

    start: float
    duration: float
    every: float
    nodes: tuple[int, ...]

    def __post_init__(self) -> None:
        if not (math.isfinite(self.start) and self.start >= 0):
            raise ValueError(f"Window.start must be a time >= 0, got {self.start!r}")
        if not self.duration > 0:
            raise ValueError(f"Window.duration must be > 0, got {self.duration!r}")
        if not (self.every > self.duration or self.every == math.inf):
            raise ValueError(
                f"Window.every must be > duration ({self.duration!r}; equal, the nodes would "
                f"never come back), got {self.every!r}"
            )
        _check_node_list(self.nodes, "Window.nodes", empty=False)


@dataclass(frozen=True)
class Clock:
    """The calendar of a run: what the site's clocks showed at its time 0.

    Attributes:
        unix: the Unix time of time 0 (a replayed trace's ``UnixStartTime``); None: no date,
            time 0 is a Monday 00:00 (a site-level run, a trace whose header gives none).
        zone: the zone of the site's clocks (the trace's ``TimeZoneString``), in which dates
            are read.
    """

    unix: float | None = None
    zone: tzinfo = UTC

    def wall(self, t: float) -> datetime:
        """The site's clocks at time ``t`` (seconds from time 0), without a zone."""
        if self.unix is None:
            return EPOCH + timedelta(seconds=t)
        return datetime.fromtimestamp(self.unix + t, self.zone).replace(tzinfo=None)

    def at(self, wall: datetime) -> float:
        """Seconds from time 0 to when the site's clocks show ``wall`` (where the clocks go
        back, the first time they show it).

        Raises:
            ValueError: the clock has no date.
        """
        if self.unix is None:
            raise ValueError("no date")
        return wall.replace(tzinfo=self.zone).timestamp() - self.unix

    def describe(self) -> str:
        """Time 0 in words, for messages."""
        if self.unix is None:
            return "a Monday 00:00 of no date"
        return f"{self.wall(0.0).isoformat()} ({self.zone})"


#: The clock of a run without a date.
NO_DATE = Clock()


@dataclass(frozen=True)
class Downtime:
    """Maintenance windows and node failures of a platform (see the module's docstring).

    Attributes:
        windows: the maintenance windows.
        mtbf: the mean up time of ONE node between failures, seconds (``math.inf``: no
            generated failures).
        mttr: the mean repair time, seconds (> 0 when ``mtbf`` is finite).
        failure_nodes: the nodes that can fail (ascending; :meth:`from_dict` writes out all
            nodes when the table names none).
        failure_file: (node, down, up) rows read from a failure file; no two rows of a node
            overlap.
        on_failure: what happens to a job on a failing node: ``requeue`` (killed and
            submitted again, as Slurm's ``--requeue``) or ``fail`` (killed, recorded as failed).
    """

    windows: tuple[Window, ...] = ()
    mtbf: float = math.inf
    mttr: float = 0.0
    failure_nodes: tuple[int, ...] = ()
    failure_file: tuple[tuple[int, float, float], ...] = ()
    on_failure: OnFailure = "requeue"

    def __post_init__(self) -> None:
        if not self.mtbf > 0:
            raise ValueError(f"Downtime.mtbf must be > 0 (inf: no failures), got {self.mtbf!r}")
        if math.isfinite(self.mtbf):
            if not (math.isfinite(self.mttr) and self.mttr > 0):
                raise ValueError(f"Downtime.mttr must be finite and > 0, got {self.mttr!r}")
            if not self.failure_nodes:
                raise ValueError("Downtime.failure_nodes must name the nodes that can fail")
        _check_node_list(self.failure_nodes, "Downtime.failure_nodes", empty=True)
        if self.on_failure not in ON_FAILURE:
            raise ValueError(
                f"Downtime.on_failure must be one of {', '.join(ON_FAILURE)}, "
                f"got {self.on_failure!r}"
            )
        bad = _bad_row(self.failure_file)
        if bad is not None:
            index, problem, other = bad
            raise ValueError(f"Downtime.failure_file[{index}]: {problem.format(f'row {other}')}")

    # -- the platform file -----------------------------------------------------------------
    @classmethod
    def from_dict(
        cls,
        data: Mapping[str, Any],
        partitions: Mapping[str, tuple[int, ...]],
        nodes: int,
        where: str,
        base: Path | None,
        clock: Clock = NO_DATE,
    ) -> Downtime:
        """Build and validate the downtime of a platform from its ``[downtime]`` table.

        Args:
            data: the ``[downtime]`` table.
            partitions: partition name -> its nodes.
            nodes: how many nodes the platform has.
            where: the platform file's name, for error messages.
            base: the folder a relative failure file is read from (None: the current folder).
            clock: the run's calendar, which places windows dated by the calendar and those
                that repeat on weekdays or weekends (:func:`placed_table`).

        Raises:
            PlatformError: "where: downtime.key: problem", or "file:line: problem" for a bad
                line of the failure file; a dated window on a clock of no date.
        """
        return cls._read(data, partitions, nodes, where, base, clock)

    @classmethod
    def check(
        cls,
        data: Mapping[str, Any],
        partitions: Mapping[str, tuple[int, ...]],
        nodes: int,
        where: str,
        base: Path | None,
    ) -> None:
        """Check a ``[downtime]`` table as :meth:`from_dict` does, without placing its windows
        on a clock (a platform file is checked when read; its dated windows are placed when
        the run's clock is known).

        Raises:
            PlatformError: as :meth:`from_dict`.
        """
        cls._read(data, partitions, nodes, where, base, None)

    @classmethod
    def _read(
        cls,
        data: Mapping[str, Any],
        partitions: Mapping[str, tuple[int, ...]],
        nodes: int,
        where: str,
        base: Path | None,
        clock: Clock | None,
    ) -> Downtime:
        """:meth:`from_dict`; with no ``clock``, the windows are checked, not placed."""
        table = read(data, _DowntimeTable, where, PlatformError, "downtime")
        place = _Place(where, partitions, nodes)
        planned = [
            place.window(row, f"downtime.maintenance[{k}]")
            for k, row in enumerate(table.maintenance)
        ]
        windows: tuple[Window, ...] = ()
        if clock is not None:
            windows = tuple(w for plan in planned for w in plan.windows(clock, where))
        failures, key = table.failures, "downtime.failures"
        if failures is None or failures == _FailuresTable():
            return cls(windows, on_failure=table.on_failure)
        if failures.mtbf is None and failures.file is None:
            raise place.error(key, "give mtbf (and mttr), a failure file, or both")
        mtbf, mttr = math.inf, 0.0
        failure_nodes: tuple[int, ...] = ()
        if failures.mtbf is not None:
            mtbf = place.time(failures.mtbf, f"{key}.mtbf", zero=False, unlimited=True)
        if math.isfinite(mtbf):
            if failures.mttr is None:
                raise place.error(f"{key}.mttr", "must be given with mtbf (a time > 0)")
            mttr = place.time(failures.mttr, f"{key}.mttr", zero=False, unlimited=False)
            failure_nodes = place.nodes(failures, key)
        else:
            for name in ("mttr", "nodes", "partitions"):
                if getattr(failures, name) is not None:
                    raise place.error(f"{key}.{name}", "applies only with a finite mtbf")
        file_rows: tuple[tuple[int, float, float], ...] = ()
        if failures.file is not None:
            if not failures.file.strip():
                raise place.error(f"{key}.file", f"must be a file name, got {failures.file!r}")
            path = Path(failures.file) if base is None else base / failures.file
            try:
                text = path.read_text()
            except (OSError, UnicodeDecodeError) as err:
                reason = err.strerror if isinstance(err, OSError) else "not a text file"
                raise place.error(f"{key}.file", f"cannot read {path}: {reason}") from None
            file_rows = read_failures(text, str(path), nodes)
        return cls(windows, mtbf, mttr, failure_nodes, file_rows, table.on_failure)

    # -- outages ---------------------------------------------------------------------------
    def outages(self, horizon: float, seed: int | Sequence[int]) -> Outages:
        """Every outage that begins before ``horizon``, sorted by (down, node, kind).

        Args:
            horizon: seconds; ``math.inf`` only without recurring windows and without
                generated failures (``mtbf`` finite).
            seed: the run's root seed (>= 0), or a list of whole numbers >= 0 (the root seed
                and a stream key): the same seed gives the same failures. Node i's
                failures depend only on the seed, ``mtbf``, ``mttr`` and i (not on the horizon,
                nor on which other nodes can fail).

        Raises:
            ValueError: a horizon that is NaN or negative, or infinite where outages recur
                without end; a negative seed.
        """
        return self.stream(horizon, seed).until(horizon)

    def stream(self, horizon: float, seed: int | Sequence[int]) -> OutageStream:
        """The outages of :meth:`outages`, drawn a block of time at a time as a run reaches
        them (:class:`OutageStream`; the same arguments, the same errors)."""
        return OutageStream(self, horizon, seed)

    def rate(self) -> float:
        """Outages a second on average, over all nodes: each drawn failure node's
        1 / (mtbf + mttr) and each recurring window's nodes / every (one-off windows and the
        failure file's rows are not a rate)."""
        rate = sum(len(w.nodes) / w.every for w in self.windows if math.isfinite(w.every))
        if math.isfinite(self.mtbf):
            rate += len(self.failure_nodes) / (self.mtbf + self.mttr)
        return rate


class OutageStream:
    """The outages of a :class:`Downtime` up to a horizon, handed out in order of the time they
    begin and drawn only when asked for: :meth:`until` gives, once, every row that begins
    before a time. The blocks together are :meth:`Downtime.outages`, row for row; what is held
    meanwhile is one block, and each failing node's draws of its current round.

    Generated failures draw, per node, a round of up and repair times at a time (see
    :func:`_block`): a node draws its next round only when its drawn failures end before the
    time asked for, so a node draws the same rounds as :meth:`Downtime.outages` draws for it.
    """

    #: Rows a block of :meth:`blocks` holds, on average.
    BLOCK_ROWS = 65_536

    def __init__(self, downtime: Downtime, horizon: float, seed: int | Sequence[int]) -> None:
        if not horizon >= 0:
            raise ValueError(f"horizon must be >= 0, got {horizon!r}")
        if math.isinf(horizon) and math.isfinite(downtime.mtbf):
            raise ValueError("failures (a finite mtbf) recur without end: give a finite horizon")
        for window in downtime.windows:
            if math.isinf(horizon) and math.isfinite(window.every) and window.start < horizon:
                raise ValueError(
                    f"a window every {window.every:g} s recurs without end: give a horizon"
                )
        entropy = [seed] if isinstance(seed, int | np.integer) else seed
        if (
            not isinstance(entropy, Sequence)
            or not entropy
            or not all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in entropy)
            or min(entropy) < 0
        ):
            raise ValueError(f"seed must be a whole number >= 0 or a list of them, got {seed!r}")
        self.downtime = downtime
        self.horizon = float(horizon)
        self.seed = [int(v) for v in entropy]
        self._reached = -math.inf  # rows that begin before this were handed out
        self._next = [0] * len(downtime.windows)  # each window's next occurrence
        drawn = math.isfinite(downtime.mtbf) and horizon > 0
        self._wanted = np.array(downtime.failure_nodes if drawn else (), np.int64)
        self._clock = np.zeros(len(self._wanted))  # when each node's drawn failures end
        self._round = np.zeros(len(self._wanted), np.int64)  # each node's next round
        self._drawn = _EMPTY  # drawn failures not handed out yet: (node, down, up)
        if downtime.failure_file:
            node, down, up = (np.array(c) for c in zip(*downtime.failure_file, strict=True))
            order = np.argsort(down, kind="stable")
            self._file = (node[order].astype(np.int64), down[order], up[order])
        else:
            self._file = _EMPTY

    def until(self, time: float) -> Outages:
        """The rows that begin before ``time`` (and before the horizon) not handed out yet,
        sorted by (down, node, kind)."""
        low, limit = self._reached, min(time, self.horizon)
        if not limit > low:
            return _no_outages()
        self._reached = limit
        parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]] = []
        for k, window in enumerate(self.downtime.windows):
            starts = self._window_downs(k, window, limit)
            nodes = np.array(window.nodes, np.int64)
            downs = np.repeat(starts, len(nodes))
            parts.append((np.tile(nodes, len(starts)), downs, downs + window.duration, MAINTENANCE))
        if len(self._wanted):
            self._draw(limit)
            node, down, up = self._drawn
            now = down < limit
            parts.append((node[now], down[now], up[now], FAILURE))
            self._drawn = (node[~now], down[~now], up[~now])
        node, down, up = self._file
        if len(node):
            first, last = np.searchsorted(down, [low, limit])
            if low == -math.inf:
                first = 0
            parts.append((node[first:last], down[first:last], up[first:last], FAILURE))
        parts = [part for part in parts if len(part[0])]
        if not parts:
            return _no_outages()
        node = np.concatenate([p[0] for p in parts]).astype(np.int64)
        down = np.concatenate([p[1] for p in parts]).astype(np.float64)
        up = np.concatenate([p[2] for p in parts]).astype(np.float64)
        kind = np.repeat(np.array([p[3] for p in parts], np.int8), [len(p[0]) for p in parts])
        order = np.lexsort((kind, node, down))
        return Outages(node[order], down[order], up[order], kind[order])

    def blocks(self) -> Iterator[tuple[float, Outages]]:
        """The rows as (end, block) a span of time at a time: each block the rows that begin
        before ``end`` not in an earlier block, about :data:`BLOCK_ROWS` rows each (from
        :meth:`Downtime.rate`); the last block's end is ``math.inf``."""
        rate = self.downtime.rate()
        step = self.BLOCK_ROWS / rate if rate > 0 else math.inf
        end = step
        while end < self.horizon:
            yield end, self.until(end)
            end += step
        yield math.inf, self.until(self.horizon)

    def _window_downs(self, k: int, window: Window, limit: float) -> np.ndarray:
        """The times window ``k`` begins before ``limit`` not handed out yet: ``start + k *
        every`` for k = 0, 1, ..., before the horizon."""
        first = self._next[k]
        if window.start >= limit:
            return np.empty(0)
        if math.isinf(window.every):
            self._next[k] = 1
            return np.array([float(window.start)]) if first == 0 else np.empty(0)
        total = math.ceil((self.horizon - window.start) / window.every)
        stop = min(total, max(math.ceil((limit - window.start) / window.every) + 1, first))
        times = window.start + window.every * np.arange(first, stop)
        times = times[times < limit]
        self._next[k] = first + len(times)
        return times

    def _draw(self, limit: float) -> None:
        """Draw rounds of failures for every node whose drawn failures end before ``limit``
        (a node's rounds in order; round r from generators keyed by (seed, purpose, r), node
        i's values row i of the round's block, so its draws depend on neither the other nodes
        nor when they are made)."""
        downtime, wanted, clock, rounds = self.downtime, self._wanted, self._clock, self._round
        found = [self._drawn]
        while True:
            need = np.flatnonzero(clock < limit)
            if not len(need):
                break
            for round_ in np.unique(rounds[need]).tolist():
                pos = need[rounds[need] == round_]
                uptime, repair = (
                    _whole_seconds(_rows(self.seed, part, round_, wanted[pos]), mean)
                    for part, mean in ((_UP, downtime.mtbf), (_REPAIR, downtime.mttr))
                )
                ends = clock[pos, None] + np.cumsum(uptime + repair, axis=1)  # up again
                down = ends - repair
                keep = down < self.horizon
                found.append(
                    (np.broadcast_to(wanted[pos, None], down.shape)[keep], down[keep], ends[keep])
                )
                clock[pos] = ends[:, -1]
                rounds[pos] = round_ + 1
        if len(found) > 1:
            self._drawn = tuple(np.concatenate(c) for c in zip(*found, strict=True))  # type: ignore[assignment]


_EMPTY: tuple[np.ndarray, np.ndarray, np.ndarray] = (
    np.empty(0, np.int64),
    np.empty(0),
    np.empty(0),
)


def _no_outages() -> Outages:
    return Outages(np.empty(0, np.int64), np.empty(0), np.empty(0), np.empty(0, np.int8))


def _rows(seed: list[int], part: int, round_: int, rows: np.ndarray) -> np.ndarray:
    """Rows ``rows`` (ascending) of the (node, _block(r)) uniforms of ``part`` in round r.

    Each uniform is one 64-bit output of the generator, so rows before a wanted one are
    skipped by advancing it; wanted rows are drawn at most ``_CHUNK`` rows at a time, so
    memory stays small on the largest platforms.
    """
    bits = np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(_STREAM, part, round_)))
    rng = np.random.Generator(bits)
    width = _block(round_)
    out = np.empty((len(rows), width))
    done = at = 0  # rows handed out; the row the generator is at
    while done < len(rows):
        low = int(rows[done])
        end = int(np.searchsorted(rows, low + _CHUNK))
        high = int(rows[end - 1])
        if low > at:
            bits.advance((low - at) * width)
        out[done:end] = rng.random((high - low + 1, width))[rows[done:end] - low]
        done, at = end, high + 1
    return out


def _whole_seconds(uniform: np.ndarray, mean: float) -> np.ndarray:
    """Exponential times of ``mean`` from uniforms in [0, 1), rounded to whole seconds >= 1."""
    return np.maximum(np.rint(-mean * np.log1p(-uniform)), 1.0)


@dataclass(frozen=True)
class Outages:
    """Outage rows, sorted by (down, node, kind). A node is down while any row covers it.

    Attributes:
        node: the node (int64).
        down: when it goes down, seconds (float64).
        up: when it is back, seconds (float64; down < up).
        kind: ``MAINTENANCE`` or ``FAILURE`` (int8).
    """

    node: np.ndarray
    down: np.ndarray
    up: np.ndarray
    kind: np.ndarray

    def __len__(self) -> int:
        return len(self.node)

    def node_hours(self, horizon: float) -> float:
        """Node-hours out of service within ``[0, horizon)``: each node counted once while any
        of its outages covers it (a failure during maintenance adds nothing)."""
        down = np.clip(self.down, 0.0, horizon)
        up = np.clip(self.up, 0.0, horizon)
        order = np.lexsort((down, self.node))
        node, down, up = self.node[order], down[order], up[order]
        if not len(node):
            return 0.0
        # The union of each node's intervals: a row adds what reaches past the latest end of
        # the node's earlier rows (a running maximum per node, by doubling: log2(rows) steps).
        first = np.flatnonzero(np.r_[True, node[1:] != node[:-1]])
        group_start = np.repeat(first, np.diff(np.r_[first, len(node)]))
        reach = up.copy()
        index = np.arange(len(node))
        shift = 1
        while shift < len(node) and np.any(index[shift:] - shift >= group_start[shift:]):
            same = index[shift:] - shift >= group_start[shift:]
            reach[shift:] = np.where(same, np.maximum(reach[shift:], reach[:-shift]), reach[shift:])
            shift *= 2
        before = np.where(index > group_start, np.r_[-np.inf, reach[:-1]], -np.inf)
        return float(np.sum(np.maximum(up - np.maximum(down, before), 0.0))) / 3600.0


# -- failure files -----------------------------------------------------------------------------
def read_failures(text: str, name: str, nodes: int) -> tuple[tuple[int, float, float], ...]:
    """The rows of a failure file: lines ``node,down,up`` (seconds), ``#`` comments, blank lines
    and a first line ``node,down,up`` allowed.

    Args:
        text: the file's text.
        name: the file's name, for error messages.
        nodes: how many nodes the platform has (nodes are 0..nodes-1).

    Raises:
        PlatformError: "name:line: problem" for the first bad line (a wrong number of fields,
            a node that is not a whole number in range, a time that is negative or not a
            number, a reversed interval, or two intervals of a node that overlap).
    """
    rows: list[tuple[int, float, float]] = []
    lines: list[int] = []
    header_allowed = True
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        fields = [f.strip() for f in line.split(",")]
        if header_allowed and [f.lower() for f in fields] == ["node", "down", "up"]:
            header_allowed = False
            continue
        header_allowed = False

        def bad(problem: str, number: int = number) -> PlatformError:
            return PlatformError(f"{name}:{number}: {problem}")

        if len(fields) != 3:
            raise bad(f"3 fields expected (node,down,up), got {len(fields)}")
        try:
            node = int(fields[0])
        except ValueError:
            raise bad(f"node {fields[0]!r} is not a whole number") from None
        if not 0 <= node < nodes:
            raise bad(f"node {node} is not a node of the platform; nodes are 0-{nodes - 1}")
        times: list[float] = []
        for label, field in zip(("down", "up"), fields[1:], strict=True):
            try:
                value = float(field)
            except ValueError:
                raise bad(f"{label} {field!r} is not a time in seconds") from None
            if not math.isfinite(value) or value < 0:
                raise bad(f"{label} {field} must be a finite time >= 0 (seconds)")
            times.append(value)
        rows.append((node, times[0], times[1]))
        lines.append(number)
    found = _bad_row(rows)
    if found is not None:
        index, problem, other = found
        if other is not None:
            problem = problem.format(f"line {lines[other]}")
        raise PlatformError(f"{name}:{lines[index]}: {problem}")
    return tuple(rows)


def _bad_row(rows: Sequence[tuple[int, float, float]]) -> tuple[int, str, int | None] | None:
    """The first row (by index) that is reversed or overlaps an earlier-listed row of its node:
    (its index, what is wrong, the index of the row it overlaps or None); None if all are fine.
    The problem has a ``{}`` where the row it overlaps is to be named."""
    if not rows:
        return None
    node, down, up = (np.array(c) for c in zip(*rows, strict=True))
    reversed_ = np.flatnonzero(~(down < up))
    order = np.lexsort((down, node))
    a, b = order[:-1], order[1:]
    clash = (node[a] == node[b]) & (down[b] < up[a])
    later, earlier = np.maximum(a[clash], b[clash]), np.minimum(a[clash], b[clash])
    first_reversed = int(reversed_[0]) if len(reversed_) else len(rows)
    first_clash = int(later.min()) if len(later) else len(rows)
    if first_reversed == len(rows) == first_clash:
        return None
    if first_reversed <= first_clash:
        i = first_reversed
        return i, f"node {node[i]} is down from {_num(down[i])} to {_num(up[i])}: reversed", None
    i, j = first_clash, int(earlier[np.argmin(later)])
    return (
        i,
        (
            f"node {node[i]} is down from {_num(down[i])} to {_num(up[i])}, overlapping {{}} "
            f"({_num(down[j])} to {_num(up[j])})"
        ),
        j,
    )


def _num(value: float) -> str:
    value = float(value)
    return str(int(value)) if value.is_integer() else repr(value)


# -- the [downtime] table ----------------------------------------------------------------------
def _check_node_list(nodes: tuple[int, ...], name: str, empty: bool) -> None:
    if not nodes:
        if not empty:
            raise ValueError(f"{name} must name at least one node")
        return
    values = np.array(nodes)
    if values.dtype.kind not in "iu" or values[0] < 0 or np.any(np.diff(values) <= 0):
        raise ValueError(f"{name} must be ascending node indices >= 0 without repeats")


_Time = int | str
_NODES = "list node indices or ranges such as '0-99'"
_START = "be a time >= 0 such as '1-08:00:00', or a date such as '2026-01-05T08:00:00'"


class _Window(Table):
    """A ``[[downtime.maintenance]]`` table."""

    start: Annotated[_Time, Meta(description=_START)]
    duration: Annotated[_Time, Meta(description="be a time > 0 such as '4:00:00' (or UNLIMITED)")]
    every: (
        Annotated[
            _Time, Meta(description="be a time > duration such as '7-00:00:00', WEEKDAY or WEEKEND")
        ]
        | None
    ) = None
    nodes: Annotated[str | int | list[str | int], Meta(description=_NODES)] | None = None
    partitions: Annotated[str | list[str], Meta(description="list partition names")] | None = None
    name: Annotated[str, Meta(min_length=1, description="be a non-empty name")] | None = None


class _FailuresTable(Table):
    """The ``[downtime.failures]`` table."""

    mtbf: Annotated[_Time, Meta(description="be a time > 0 such as '1000-00:00:00'")] | None = None
    mttr: Annotated[_Time, Meta(description="be a time > 0 such as '4:00:00'")] | None = None
    nodes: Annotated[str | int | list[str | int], Meta(description=_NODES)] | None = None
    partitions: Annotated[str | list[str], Meta(description="list partition names")] | None = None
    file: Annotated[str, Meta(description="be a file name")] | None = None


class _DowntimeTable(Table):
    """The ``[downtime]`` table of a platform file."""

    on_failure: OnFailure = "requeue"
    maintenance: Annotated[
        list[_Window], Meta(description="be [[downtime.maintenance]] tables")
    ] = msgspec.field(default_factory=list)
    failures: (
        Annotated[_FailuresTable, Meta(description="be a [downtime.failures] table")] | None
    ) = None


class _Place:
    """The times and nodes of one ``[downtime]`` table; every error names ``where`` and the
    key (the platform's partitions and node count known)."""

    def __init__(self, where: str, partitions: Mapping[str, tuple[int, ...]], nodes: int) -> None:
        self.where = where
        self.partitions = partitions
        self.count = nodes

    def error(self, key: str, says: str) -> PlatformError:
        return problem(self.where, key, says, PlatformError)

    def time(self, value: int | str, key: str, zero: bool, unlimited: bool) -> float:
        """A time in Slurm's syntax (a number is minutes, as in slurm.conf)."""
        low = ">= 0" if zero else "> 0"
        allowed = (
            f"a time {low} and at most {MAX_TIME_TEXT} in Slurm's syntax such as '4:00:00' or "
            "'7-00:00:00'" + (" (or UNLIMITED)" if unlimited else "")
        )
        try:
            return time_value(value, zero=zero, unlimited=unlimited, allowed=allowed)
        except ValueError as err:
            raise self.error(key, str(err)) from None

    def window(self, row: _Window, key: str) -> _Planned:
        """A ``[[downtime.maintenance]]`` table, checked (placed on a run's clock later)."""
        start: float | datetime
        if isinstance(row.start, str) and _DATE.match(row.start.strip()):
            try:
                start = datetime.fromisoformat(row.start.strip())
            except ValueError as err:
                raise self.error(f"{key}.start", f"{row.start!r} is not a date: {err}") from None
        else:
            start = self.time(row.start, f"{key}.start", zero=True, unlimited=False)
        duration = self.time(row.duration, f"{key}.duration", zero=False, unlimited=True)
        every: float | str = math.inf
        if isinstance(row.every, str) and row.every.strip().upper() in CALENDAR_REPEATS:
            every = row.every.strip().upper()
            if not duration < DAY:
                raise self.error(
                    f"{key}.duration",
                    f"{row.duration!r}: a window repeated on {every.lower()}s must be shorter "
                    "than a day (the next may begin a day later)",
                )
        elif row.every is not None:
            every = self.time(row.every, f"{key}.every", zero=False, unlimited=True)
            if every < duration:
                raise self.error(
                    f"{key}.every",
                    f"{row.every!r} is shorter than the duration {row.duration!r}; "
                    "must be > duration",
                )
            if every == duration < math.inf:
                raise self.error(
                    f"{key}.every",
                    f"{row.every!r} equals the duration: each window begins as the last "
                    "ends and the nodes never come back; must be > duration (for nodes out "
                    'for good, give duration = "UNLIMITED" without every)',
                )
        return _Planned(row.name or key, start, duration, every, self.nodes(row, key), row.name)

    def nodes(self, table: _Window | _FailuresTable, key: str) -> tuple[int, ...]:
        """The nodes of ``nodes = [ranges]`` or ``partitions = [names]``; neither: all."""
        if table.nodes is not None and table.partitions is not None:
            raise self.error(key, "give nodes or partitions, not both")
        chosen: set[int] = set()
        if table.partitions is not None:
            names = [table.partitions] if isinstance(table.partitions, str) else table.partitions
            known = ", ".join(self.partitions)
            if not names:
                raise self.error(f"{key}.partitions", f"must list partition names ({known})")
            for name in names:
                if name not in self.partitions:
                    raise self.error(
                        f"{key}.partitions", f"{name!r} is not a partition; one of {known}"
                    )
                chosen.update(self.partitions[name])
        elif table.nodes is not None:
            items = [table.nodes] if isinstance(table.nodes, str | int) else table.nodes
            if not items:
                raise self.error(f"{key}.nodes", f"must {_NODES}, got {table.nodes!r}")
            try:
                chosen = node_set(items, self.count)
            except ValueError as err:
                raise self.error(f"{key}.nodes", str(err)) from None
        else:
            return tuple(range(self.count))
        return tuple(sorted(chosen))


@dataclass(frozen=True)
class _Planned:
    """A ``[[downtime.maintenance]]`` table, checked: its windows once a run's clock is known.

    Attributes:
        label: what messages call it (its ``name``, else its key).
        start: seconds from time 0, or a date on the site's clocks.
        duration: seconds.
        every: the period in seconds (inf: once), or one of :data:`CALENDAR_REPEATS`.
        nodes: its nodes.
        name: its ``name`` (None: none given).
    """

    label: str
    start: float | datetime
    duration: float
    every: float | str
    nodes: tuple[int, ...]
    name: str | None

    @property
    def on_calendar(self) -> bool:
        """Whether only a run's clock places it (a date, a weekday or weekend repeat)."""
        return isinstance(self.start, datetime) or isinstance(self.every, str)

    def windows(self, clock: Clock, where: str) -> list[Window]:
        """Its windows on ``clock``, from time 0 on: a window under way at time 0 is cut to
        begin there, one that ended before is left out (and warned of when none is left).

        Raises:
            PlatformError: a date on a clock of no date.
        """
        if isinstance(self.start, datetime):
            try:
                start = clock.at(self.start)
            except ValueError:
                raise PlatformError(
                    f"{where}: {self.label}: starts {self.start.isoformat()}, a date, and this "
                    "run has no date (its time 0 is a Monday 00:00: a site-level run, or a "
                    "trace without UnixStartTime); give the start as a time from time 0"
                ) from None
        else:
            start = self.start
        if isinstance(self.every, str):
            once, cycle, period = _calendar_starts(start, self.duration, self.every, clock)
            firsts = [(s, math.inf) for s in once] + [(s, period) for s in cycle]
        else:
            firsts = [(start, self.every)]
        found = [w for s, every in firsts for w in self._from_time_zero(s, every)]
        if not found:
            warnings.warn(
                f"{where}: {self.label}: ends before the run's time 0 ({clock.describe()}): "
                "no effect",
                DowntimeWarning,
                stacklevel=2,
            )
        return found

    def _from_time_zero(self, start: float, every: float) -> list[Window]:
        """The windows from ``start`` every ``every`` seconds, from time 0 on."""
        duration, nodes = self.duration, self.nodes
        if start >= 0:
            return [Window(start, duration, every, nodes)]
        if math.isinf(every):
            return [Window(0.0, start + duration, every, nodes)] if start + duration > 0 else []
        last = start + math.floor(-start / every) * every  # (the last to begin by time 0)
        if last == 0:
            return [Window(0.0, duration, every, nodes)]
        ongoing = [Window(0.0, last + duration, math.inf, nodes)] if last + duration > 0 else []
        return [*ongoing, Window(last + every, duration, every, nodes)]


class DowntimeWarning(UserWarning):
    """A window of a platform's downtime that has no effect on a run."""


def _calendar_starts(
    start: float, duration: float, repeat: str, clock: Clock
) -> tuple[list[float], list[float], float]:
    """The starts of a window repeated on weekdays or weekends, as Slurm advances a
    reservation with flag ``WEEKDAY`` or ``WEEKEND`` when it ends (``_advance_resv_time``,
    src/slurmctld/reservation.c:6544-6579 in Slurm 22.05.8): by 3 days when it ends on a
    Friday, 2 on a Saturday, else 1 (WEEKDAY); by 6 days when it ends on a Sunday, 1 on a
    Saturday, else to the next Saturday (WEEKEND), by the day of the week on the site's clocks
    when it ends. Returns the starts that come once, those of the weekly cycle they reach, and
    the cycle's period (whole weeks)."""
    seen: dict[int, int] = {}
    starts: list[float] = []
    while (day := clock.wall(start).weekday()) not in seen:  # (Monday 0; C's tm_wday - 1)
        seen[day] = len(starts)
        starts.append(start)
        ends = clock.wall(start + duration).weekday()
        if repeat == "WEEKDAY":
            days = {4: 3, 5: 2}.get(ends, 1)
        else:
            days = {6: 6, 5: 1}.get(ends, 5 - ends)
        start += days * DAY
    first = seen[day]
    return starts[:first], starts[first:], start - starts[first]


def placed_table(
    data: Mapping[str, Any],
    partitions: Mapping[str, tuple[int, ...]],
    nodes: int,
    where: str,
    clock: Clock,
) -> Mapping[str, Any]:
    """The ``[downtime]`` table with its windows placed on a run's ``clock``: each window dated
    by the calendar or repeated on weekdays or weekends written as windows from time 0 (a
    start and a period in seconds), so that the platform a run keeps with its result draws
    the same outages without the clock. A table without such windows is returned as it is.

    Raises:
        PlatformError: as :meth:`Downtime.from_dict`.
    """
    table = read(data, _DowntimeTable, where, PlatformError, "downtime")
    place = _Place(where, partitions, nodes)
    planned = [
        place.window(row, f"downtime.maintenance[{k}]") for k, row in enumerate(table.maintenance)
    ]
    if not any(plan.on_calendar for plan in planned):
        return data
    rows: list[dict[str, Any]] = []
    for plan in planned:
        for window in plan.windows(clock, where):
            row: dict[str, Any] = {} if plan.name is None else {"name": plan.name}
            row["start"] = format_duration(window.start)
            row["duration"] = format_duration(window.duration)
            if math.isfinite(window.every):
                row["every"] = format_duration(window.every)
            rows.append(row | {"nodes": [format_nodes(window.nodes)]})
    return {**data, "maintenance": rows}


def merged_windows(windows: Outages, platform: Platform) -> list[tuple[float, float, Alloc]]:
    """The maintenance windows as ``(down, up, the whole nodes it takes)``, by start, each
    node's overlapping windows merged (a node is down while any covers it)."""
    if not len(windows):
        return []
    node, down, up = merged_intervals(windows.node, windows.down, windows.up)
    order = np.lexsort((node, up, down))  # (by window, each window's nodes together)
    node, down, up = node[order], down[order], up[order]
    first = np.flatnonzero(np.r_[True, (down[1:] != down[:-1]) | (up[1:] != up[:-1])])
    allocs = []
    for low, high in zip(first.tolist(), [*first[1:].tolist(), len(node)], strict=True):
        nodes = node[low:high]  # (ascending, once each: merged intervals do not overlap)
        gpus, memory = platform.gpus[nodes], platform.memory[nodes]
        whole = Alloc(nodes, platform.cores[nodes], gpus, memory)
        allocs.append((float(down[low]), float(up[low]), whole))
    return allocs


def merged_intervals(
    node: np.ndarray, down: np.ndarray, up: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each node's intervals ``[down, up)`` merged where they overlap or touch (``up`` may be
    ``math.inf``: a node that never comes back)."""
    order = np.lexsort((down, node))
    node, down, up = node[order], down[order], up[order]
    endless = np.isinf(up)
    never = float(np.max(up, where=~endless, initial=float(down.max()))) + 1.0
    up = np.where(endless, never, up)  # (as a finite time after every other; put back below)
    span = never + 1.0  # (each node's times shifted into its own range)
    shift = node * span
    reach = np.maximum.accumulate(up + shift)
    begins = np.ones(len(node), dtype=bool)
    begins[1:] = down[1:] + shift[1:] > reach[:-1]
    starts = np.flatnonzero(begins)
    ends = np.append(starts[1:], len(node)) - 1
    merged_up = np.where(np.add.reduceat(endless, starts) > 0, math.inf, reach[ends] - shift[ends])
    return node[starts], down[starts], merged_up
