"""The open trace user: replays the jobs of an SWF trace at their (possibly scaled) timestamps.

The conventional *open* evaluation: one trace user submits every job at its timestamp and
ignores completions. Jobs are fed lazily, one timeout at a time, so even a trace of 250,000
jobs keeps a single pending event in the simulation.

Which trace lines become jobs (docs/reference/replay.md):

- size: allocated processors (field 5), else requested processors (field 8);
- runtime: field 4; estimate: requested time (field 9), or the runtime where the trace has no
  request (or with ``estimates="exact"``), and at least 1 s (:data:`MIN_ESTIMATE`);
- a line with an unknown size, runtime or submit time (-1), a negative runtime or submit time
  (other than -1), or a size above the machine, is an *impossible job*: skipped and counted
  by reason (lenient, the default) or an error (strict).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field, replace
from itertools import chain
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from simpy.events import Event

from sitesim.engine.job import MIN_ESTIMATE, Job
from sitesim.errors import ConfigError, InvalidJobError, require
from sitesim.platform.placement import Request
from sitesim.workload.swf import SWFTrace, unknown_and_negative

from .utility import UtilityFunction

if TYPE_CHECKING:
    from sitesim.engine.site import Site

Estimates = Literal["trace", "exact"]


@dataclass(frozen=True)
class TraceWorkload:
    """The replayable jobs of a trace, as columns (one entry per job, in submit order).

    Attributes:
        rows: row of each job in the source trace.
        number: SWF job number (field 1).
        submit, runtime, estimate: seconds.
        size, user: processors, user id.
        preceding: SWF job number of the job this one depended on (field 17; -1 if none).
        think: think time after it (field 18; NaN if unknown).
        wait: the wait recorded in the trace (field 3; NaN if unknown), for the trace's own
            job ends (feedback replay).
        priority: each job's priority level, higher first: minus its queue number (field 15;
            0 when unknown), so a lower queue number is a higher priority.
        utility: each job's utility function (the SWF extension after field 18), or None.
        partition: each job's partition number (field 16; -1 when unknown), which a platform
            maps to one of its partitions (its partitions' ``swf`` lists).
        stated: the function each job states (information inaccuracy), or None for the truth.
        skipped: impossible jobs left out, by reason.
        estimates_filled: jobs whose estimate is their runtime because the trace had none.
        estimates_raised: jobs whose estimate was below :data:`MIN_ESTIMATE` and was raised.
    """

    rows: np.ndarray
    number: np.ndarray
    submit: np.ndarray
    runtime: np.ndarray
    estimate: np.ndarray
    size: np.ndarray
    user: np.ndarray
    preceding: np.ndarray
    think: np.ndarray
    wait: np.ndarray
    priority: np.ndarray
    partition: np.ndarray | None = None
    utility: tuple[UtilityFunction | None, ...] = ()
    stated: tuple[UtilityFunction | None, ...] | None = None
    skipped: dict[str, int] = field(default_factory=dict)
    estimates_filled: int = 0
    estimates_raised: int = 0

    def __len__(self) -> int:
        return len(self.rows)

    @classmethod
    def from_swf(
        cls,
        trace: SWFTrace,
        procs: int,
        *,
        estimates: Estimates = "trace",
        strict: bool = False,
    ) -> TraceWorkload:
        """The jobs of ``trace`` that a machine of ``procs`` processors can run.

        Raises:
            InvalidJobError: in strict mode, at the first impossible job (naming its line).
        """
        require(
            estimates in ("trace", "exact"),
            f"estimates must be 'trace' or 'exact', got {estimates!r}",
        )
        col = trace.column
        size = np.where(col("procs") > 0, col("procs"), col("req_procs"))
        runtime = col("runtime")
        submit = col("submit")
        sizes = ("procs", "req_procs")
        no_runtime, negative_runtime = unknown_and_negative(runtime)
        no_submit, negative_submit = unknown_and_negative(submit)
        problems = (
            ("unknown size", size <= 0, "has no processor count", sizes),
            ("unknown runtime", no_runtime, "has no runtime", ("runtime",)),
            ("negative runtime", negative_runtime, "has a negative runtime", ("runtime",)),
            ("unknown submit time", no_submit, "has no submit time", ("submit",)),
            ("negative submit time", negative_submit, "has a negative submit time", ("submit",)),
            ("larger than the machine", size > procs, f"needs more than {procs} processors", sizes),
        )
        keep = np.ones(len(trace), dtype=bool)
        skipped: dict[str, int] = {}
        for reason, bad, message, fields in problems:
            bad = bad & keep
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                if strict:
                    raise InvalidJobError(
                        f"{trace.location(row)}: job {int(col('job')[row])} {message}: "
                        f"{trace.values(row, *fields)}"
                    )
                skipped[reason] = int(bad.sum())
                keep &= ~bad
        rows = np.flatnonzero(keep)
        # a stable sort by submit time keeps the file order of simultaneous submissions
        rows = rows[np.argsort(submit[rows], kind="stable")]
        requested = col("req_time")[rows]
        run = runtime[rows]
        has_request = requested > 0
        estimate, raised = _at_least_min(
            np.where(has_request, requested, run) if estimates == "trace" else run
        )
        return cls(
            rows=rows,
            number=col("job")[rows].astype(np.int64),
            submit=submit[rows].copy(),
            runtime=run.copy(),
            estimate=estimate,
            size=size[rows].astype(np.int64),
            user=col("user")[rows].astype(np.int64),
            preceding=col("preceding")[rows].astype(np.int64),
            think=np.where(col("think")[rows] >= 0, col("think")[rows], np.nan),
            wait=np.where(col("wait")[rows] >= 0, col("wait")[rows], np.nan),
            priority=-np.maximum(col("queue")[rows], 0).astype(np.int64),
            partition=np.maximum(col("partition")[rows], -1).astype(np.int64),
            utility=_utilities(trace, rows),
            skipped=skipped,
            estimates_filled=int((~has_request).sum()) if estimates == "trace" else 0,
            estimates_raised=raised,
        )

    @classmethod
    def from_jobs(
        cls,
        submit: Any,
        size: Any,
        runtime: Any,
        estimate: Any | None = None,
        user: Any | None = None,
    ) -> TraceWorkload:
        """A workload from plain sequences (one entry per job); estimates default to runtimes
        and are at least :data:`MIN_ESTIMATE`.

        Jobs are replayed in submit order (ties keep the given order).
        """
        submit = np.asarray(submit, dtype=np.float64)
        n = len(submit)
        runtime = np.asarray(runtime, dtype=np.float64)
        estimate = runtime if estimate is None else np.asarray(estimate, dtype=np.float64)
        size = np.asarray(size, dtype=np.int64)
        require(
            len(size) == len(runtime) == len(estimate) == n,
            "submit, size, runtime and estimate must have the same length",
        )
        require(bool((size >= 1).all()), "every size must be >= 1")
        require(bool((runtime >= 0).all() and (estimate >= 0).all()), "runtimes must be >= 0")
        estimate, raised = _at_least_min(estimate)
        order = np.argsort(submit, kind="stable")
        users = np.zeros(n, dtype=np.int64) if user is None else np.asarray(user, dtype=np.int64)
        return cls(
            rows=order,
            number=order + 1,
            submit=submit[order],
            runtime=runtime[order],
            estimate=estimate[order],
            size=size[order],
            user=users[order],
            preceding=np.full(n, -1, dtype=np.int64),
            think=np.full(n, np.nan),
            wait=np.full(n, np.nan),
            priority=np.zeros(n, dtype=np.int64),
            utility=(None,) * n,
            estimates_raised=raised,
        )

    # -- load ------------------------------------------------------------------------------
    def offered_load(self, procs: int) -> float:
        """Σ(size · runtime actually run) / (procs · submit span)."""
        span = float(self.submit[-1] - self.submit[0]) if len(self) else 0.0
        if span <= 0:
            return math.nan
        work = float((self.size * np.minimum(self.runtime, self.estimate)).sum())
        return work / (procs * span)

    def scaled(self, factor: float) -> TraceWorkload:
        """A copy with inter-arrival times multiplied by ``factor`` (< 1 raises the load)."""
        require(math.isfinite(factor) and factor > 0, f"scale factor must be > 0, got {factor}")
        if factor == 1.0 or not len(self):
            return self
        first = self.submit[0]
        return replace(self, submit=first + (self.submit - first) * factor)

    def at_load(self, load: float, procs: int) -> tuple[TraceWorkload, float]:
        """A copy scaled to offered load ``load``, and the factor used."""
        require(math.isfinite(load) and load > 0, f"load must be > 0, got {load}")
        current = self.offered_load(procs)
        require(math.isfinite(current), "cannot scale the load of jobs that all arrive at once")
        factor = current / load
        return self.scaled(factor), factor


def _utilities(trace: SWFTrace, rows: np.ndarray) -> tuple[UtilityFunction | None, ...]:
    """The utility function of each row's line (its extension after field 18), or None."""
    if not trace.tails:
        return (None,) * len(rows)
    tails, found = trace.tails, []
    for row in rows.tolist():
        try:
            found.append(UtilityFunction.parse(tails[row]) if row in tails else None)
        except ConfigError as err:  # name the line only now: finding it reads the file
            raise ConfigError(f"{trace.location(row)}: {err}") from None
    return tuple(found)


def _at_least_min(estimate: np.ndarray) -> tuple[np.ndarray, int]:
    """Estimates raised to :data:`MIN_ESTIMATE`, and how many were raised."""
    return np.maximum(estimate, MIN_ESTIMATE), int((estimate < MIN_ESTIMATE).sum())


class TraceUser:
    """Submits the jobs of a :class:`TraceWorkload` at their timestamps, ignoring completions.

    The arrivals are a chain of the engine's notices (``env.after``), one for each timestamp in
    turn, whose callback submits every job due and sets the next (cheaper than resuming a
    process, or making a timeout, at each timestamp); the user process itself only waits for
    the last submission. The columns are turned into Python values a block at a time, so a
    long trace is never held as Python objects at once.
    """

    #: Jobs converted to Python values at a time.
    BLOCK = 4096

    def __init__(self, workload: TraceWorkload) -> None:
        self.workload = workload

    def run(self, site: Site) -> Generator[Event, Any, None]:
        """The user process: submit the jobs due now, then wait until the last is submitted."""
        self._site = site
        #: On a platform, each job asks for the partition its trace line names (field 16).
        self._asks: dict[int, Request] | None = {} if site.platform is not None else None
        self._finished = site.env.event()
        self._rows = self._columns()
        self._next = next(self._rows, None)
        w = self.workload
        #: SWF job number -> site id, for the jobs a later one names as its preceding job.
        self._id_of_number: dict[int, int] | None = (
            {} if len(w) and bool((w.preceding > 0).any()) else None
        )
        self._arrival: list[Callable[[Any], None]] = [self._arrive]  # the next arrival's
        self._arrive(None)
        yield self._finished

    def _columns(self) -> Iterator[tuple[Any, ...]]:
        """The jobs' columns as rows of Python values, converted a block at a time (the blocks
        chained in C: no generator to resume per job)."""
        return chain.from_iterable(map(self._block, range(0, len(self.workload), self.BLOCK)))

    def _block(self, lo: int) -> Iterator[tuple[Any, ...]]:
        """The rows of the block of jobs from ``lo`` on."""
        w, hi = self.workload, lo + self.BLOCK
        stated = w.stated or w.utility
        if self._asks is not None:  # (a platform: the partition numbers too)
            part = w.partition if w.partition is not None else np.full(len(w), -1)
            return zip(
                w.submit[lo:hi].tolist(), w.size[lo:hi].tolist(), w.runtime[lo:hi].tolist(),
                w.estimate[lo:hi].tolist(), w.user[lo:hi].tolist(), w.rows[lo:hi].tolist(),
                w.number[lo:hi].tolist(), w.preceding[lo:hi].tolist(), w.think[lo:hi].tolist(),
                w.priority[lo:hi].tolist(), w.utility[lo:hi], stated[lo:hi],
                part[lo:hi].tolist(), strict=True,
            )  # fmt: skip
        return zip(
            w.submit[lo:hi].tolist(), w.size[lo:hi].tolist(), w.runtime[lo:hi].tolist(),
            w.estimate[lo:hi].tolist(), w.user[lo:hi].tolist(), w.rows[lo:hi].tolist(),
            w.number[lo:hi].tolist(), w.preceding[lo:hi].tolist(), w.think[lo:hi].tolist(),
            w.priority[lo:hi].tolist(), w.utility[lo:hi], stated[lo:hi], strict=True,
        )  # fmt: skip

    def _arrive(self, _notice: Any) -> None:
        """Submit every job due now; schedule the next arrival, or end the chain."""
        site = self._site
        if site.closed:
            return  # the horizon passed: the user process is being stopped
        env, rows, id_of_number, asks = site.env, self._rows, self._id_of_number, self._asks
        now = env.now
        row = self._next
        while row is not None:
            (submit, size, runtime, estimate, user, trace_row, number, preceding, think,
             priority, utility, stated) = row[:12] if asks is not None else row  # fmt: skip
            if submit > now:
                if submit > site.horizon:
                    break
                self._next = row
                env.after(submit - now, self._arrival, None)
                return
            job = Job(size, runtime, estimate, user)  # (positional: the cheapest call)
            job.trace_row, job.priority = trace_row, priority
            if utility is not None:
                job.utility, job.stated = utility, stated
            if asks is not None:
                number_16 = row[12]
                ask = asks.get(number_16)
                if ask is None:
                    ask = asks[number_16] = Request(swf=number_16)
                job.ask = ask
            if id_of_number is not None and preceding > 0:
                job.preceding = id_of_number.get(preceding, -1)
                job.think = think
            site.submit(job)
            if id_of_number is not None:
                id_of_number[number] = job.id
            row = next(rows, None)
        self._next = None
        self._finished.succeed()
