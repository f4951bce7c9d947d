"""User activity in a trace: think times, sessions and batches (users.md, definitions).

Per user, jobs sorted by submit time (ties in file order):

- **think time** after job k = submit(k+1) − end(k); negative when job k+1 was submitted before
  job k ended. Options for the reference point: ``"last"`` (end of job k, the default),
  ``"max"`` (the latest end among all earlier jobs of the session) or ``"arrival"`` (submit of
  job k, i.e. inter-arrival times);
- **session**: a maximal run of jobs whose think times are at most the threshold (20 min); a
  longer think time is a *break* and starts a new session;
- **batch**: a maximal run of jobs each submitted before its predecessor ended (negative think
  time); its **width** is its number of jobs, and the gaps between its submissions are the
  **inter-submission times**;
- **size repetitions**: lengths of runs of successive jobs of a user with the same size.

A job's end is submit + wait + runtime, so only jobs with a known user, submit time, wait and
runtime take part; the others are counted in :attr:`Activity.excluded`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Literal

import numpy as np

from sitesim.errors import SitesimError, require
from sitesim.workload.swf import SWFTrace, field_label

ThinkDefinition = Literal["last", "max", "arrival"]
THINK_DEFINITIONS: tuple[ThinkDefinition, ...] = ("last", "max", "arrival")
#: Think times above this start a new session (seconds).
SESSION_THRESHOLD = 20 * 60.0
#: Breaks longer than this are left out of the break distribution (seconds).
BREAK_MAX = 8 * 3600.0


@dataclass(frozen=True)
class Activity:
    """The usable jobs of one trace, sorted by (user, submit, file order), with their think
    times, sessions and batches. All arrays have one entry per job."""

    name: str
    user: np.ndarray
    submit: np.ndarray
    wait: np.ndarray
    runtime: np.ndarray
    size: np.ndarray
    estimate: np.ndarray
    #: think time after each job; NaN after a user's last job
    think: np.ndarray
    session: np.ndarray
    batch: np.ndarray
    #: hour of day (0-23) and day of week (0 = Monday) of each submission, local time
    hour: np.ndarray
    weekday: np.ndarray
    #: machine size from the trace header
    procs: int | None
    threshold: float = SESSION_THRESHOLD
    definition: ThinkDefinition = "last"
    excluded: dict[str, int] = field(default_factory=dict)
    #: how hours and weekdays were computed
    clock: str = ""

    def __len__(self) -> int:
        return len(self.user)

    @property
    def end(self) -> np.ndarray:
        return self.submit + self.wait + self.runtime

    @property
    def response(self) -> np.ndarray:
        return self.wait + self.runtime

    @property
    def slowdown(self) -> np.ndarray:
        """Response / runtime, with runtime at least 1 s (as in the metrics)."""
        return self.response / np.maximum(self.runtime, 1.0)

    @property
    def users(self) -> int:
        return len(np.unique(self.user))

    # -- the samples a workload profile is made of -----------------------------------------
    @property
    def widths(self) -> np.ndarray:
        """Batch widths, one per batch."""
        return np.bincount(self.batch)[np.unique(self.batch)]

    @property
    def inter_submission(self) -> np.ndarray:
        """Gaps between successive submissions inside batches."""
        same = self.batch[1:] == self.batch[:-1]
        return np.diff(self.submit)[same]

    @property
    def size_repetitions(self) -> np.ndarray:
        """Lengths of runs of a user's successive jobs with equal size."""
        new_run = np.ones(len(self), dtype=bool)
        new_run[1:] = (self.user[1:] != self.user[:-1]) | (self.size[1:] != self.size[:-1])
        starts = np.flatnonzero(new_run)
        return np.diff(np.append(starts, len(self)))

    @property
    def short_thinks(self) -> np.ndarray:
        """Think times in (0, threshold]: between batches inside a session."""
        t = self.think
        return t[(t > 0) & (t <= self.threshold)]

    @property
    def breaks(self) -> np.ndarray:
        """Think times in (threshold, 8 h]: between sessions."""
        t = self.think
        return t[(t > self.threshold) & (t <= BREAK_MAX)]

    @property
    def estimate_ratios(self) -> np.ndarray:
        """Requested time / runtime, where both are known and positive."""
        ok = (self.estimate > 0) & (self.runtime > 0)
        return self.estimate[ok] / self.runtime[ok]


def decompose(
    trace: SWFTrace,
    *,
    definition: ThinkDefinition = "last",
    threshold: float = SESSION_THRESHOLD,
) -> Activity:
    """Split a trace's jobs into users, sessions and batches.

    Raises:
        SitesimError: no job has a known user, submit time, wait and runtime.
    """
    require(definition in THINK_DEFINITIONS, f"think definition must be one of {THINK_DEFINITIONS}")
    require(threshold > 0, f"session threshold must be > 0 s, got {threshold}")
    col = trace.column
    rows, excluded = think_rows(trace)
    user, submit = col("user")[rows], col("submit")[rows]
    order = np.lexsort((rows, submit, user))  # by user, then submit, then file order
    rows = rows[order]
    user = user[order].astype(np.int64)
    submit = submit[order]
    wait, runtime = col("wait")[rows], col("runtime")[rows]
    size = np.where(col("procs")[rows] > 0, col("procs")[rows], col("req_procs")[rows])
    think, session, batch = session_structure(
        user, submit, submit + wait + runtime, definition, threshold
    )
    hour, weekday, clock = _local_clock(trace, submit)
    return Activity(
        name=trace.name,
        user=user,
        submit=submit,
        wait=wait,
        runtime=runtime,
        size=size.astype(np.int64),
        estimate=col("req_time")[rows],
        think=think,
        session=session,
        batch=batch,
        hour=hour,
        weekday=weekday,
        procs=trace.max_procs,
        threshold=threshold,
        definition=definition,
        excluded=excluded,
        clock=clock,
    )


#: What a think time needs: the job's user and end (submit + wait + runtime), by reason.
THINK_FIELDS = {"unknown user": "user", "unknown submit time": "submit", "unknown wait": "wait",
                "unknown runtime": "runtime"}  # fmt: skip


def think_rows(trace: SWFTrace) -> tuple[np.ndarray, dict[str, int]]:
    """The rows of the jobs a think time can be computed for (a known user, submit time, wait
    and runtime), and the other jobs counted by reason (the first unknown field).

    Raises:
        SitesimError: there is none; the message names the fields unknown on every line.
    """
    keep = np.ones(len(trace), dtype=bool)
    excluded = {}
    for reason, name in THINK_FIELDS.items():
        bad = trace.column(name) < 0
        if (bad & keep).any():
            excluded[reason] = int((bad & keep).sum())
        keep &= ~bad
    rows = np.flatnonzero(keep)
    if not len(trace):
        raise SitesimError(f"{trace.name}: the file holds no job lines")
    if not len(rows):
        fields = [name for name in THINK_FIELDS.values() if (trace.column(name) < 0).all()]
        why = (
            f": {' and '.join(map(field_label, fields))} "
            f"{'are' if len(fields) > 1 else 'is'} unknown on every job line"
            if fields
            else ""
        )
        raise SitesimError(
            f"{trace.name}: no job has a known user, submit time, wait and runtime "
            f"(fields 12, 2, 3, 4){why}, so no think time can be computed"
        )
    return rows, excluded


def session_structure(
    user: np.ndarray,
    submit: np.ndarray,
    end: np.ndarray,
    definition: ThinkDefinition,
    threshold: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Think time after each job, and session and batch ids (0-based, global), for jobs
    sorted by user, then submit time (each array one entry per job)."""
    n = len(user)
    same_user = np.zeros(n, dtype=bool)  # same_user[k]: job k+1 belongs to job k's user
    same_user[:-1] = user[1:] == user[:-1]
    nxt = np.append(submit[1:], np.nan)
    if definition == "last":
        think = nxt - end
    elif definition == "arrival":
        think = nxt - submit
    else:  # "max": from the latest end so far in the session; the session depends on it
        think = np.empty(n)
        latest = -math.inf
        for k in range(n):
            latest = max(latest, end[k])
            think[k] = nxt[k] - latest
            if not same_user[k] or think[k] > threshold:
                latest = -math.inf
    think[~same_user] = np.nan
    new_session = np.ones(n, dtype=bool)
    new_session[1:] = ~same_user[:-1] | (think[:-1] > threshold)
    new_batch = np.ones(n, dtype=bool)
    new_batch[1:] = ~same_user[:-1] | ~(think[:-1] < 0)
    return think, np.cumsum(new_session) - 1, np.cumsum(new_batch) - 1


_NUMBER = re.compile(r"^\s*(-?\d+)")


def _local_clock(trace: SWFTrace, submit: np.ndarray) -> tuple[np.ndarray, np.ndarray, str]:
    """Hour of day and weekday (0 = Monday) of each submission on the site's local clock.

    Uses the header's UnixStartTime and TimeZoneString (daylight saving included); the numeric
    TimeZone offset if the zone is unknown; and when the trace has no UnixStartTime, sitesim's
    convention that time 0 is a Monday, 00:00.
    """
    start = _NUMBER.match(trace.header_value("UnixStartTime") or "")
    if start is None:
        seconds = submit
        clock = "no UnixStartTime: time 0 taken as Monday 00:00"
    else:
        utc = int(start.group(1)) + submit
        zone, clock = trace.time_zone
        hours = np.floor(utc / 3600.0)
        unique, index = np.unique(hours, return_inverse=True)
        offsets = np.array([_offset(zone, h * 3600.0) for h in unique.tolist()], dtype=np.float64)
        seconds = utc + offsets[index]
        # the Unix epoch was a Thursday: weekday 3 when Monday is 0
        seconds = seconds + 3 * 86400.0
    hour = (np.floor(seconds / 3600.0) % 24).astype(np.int64)
    weekday = (np.floor(seconds / 86400.0) % 7).astype(np.int64)
    return hour, weekday, clock


def _offset(zone: tzinfo, utc_seconds: float) -> float:
    moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=utc_seconds)
    delta = moment.astimezone(zone).utcoffset()
    return delta.total_seconds() if delta is not None else 0.0
