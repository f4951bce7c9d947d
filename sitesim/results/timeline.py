"""Time series of a run, per hour (or any bin): what a site looks like as it runs.

Every series is the *mean over each bin* of a step function, computed exactly from the records
(no sampling): the number of jobs waiting, of sessions active, and the utilization. Used by the
teaching demo (experiments.md §8).
"""

from __future__ import annotations

import numpy as np

from sitesim.engine.job import JobState
from sitesim.engine.metrics import pair_keys
from sitesim.engine.site import SiteResult

HOUR = 3600.0


def mean_level(
    start: np.ndarray, end: np.ndarray, weight: np.ndarray, edges: np.ndarray
) -> np.ndarray:
    """Mean over each bin ``[edges[k], edges[k+1])`` of Σ weight·[start <= t < end].

    Intervals may reach beyond the bins; empty intervals count nothing.
    """
    if not len(start):
        return np.zeros(len(edges) - 1)
    times = np.concatenate([start, end])
    steps = np.concatenate([weight, -weight]).astype(np.float64)
    order = np.argsort(times, kind="stable")
    times, steps = times[order], steps[order]
    level = np.cumsum(steps)  # the level just after each event
    area = np.concatenate([[0.0], np.cumsum(level[:-1] * np.diff(times))])  # integral at events
    integral = np.interp(edges, times, area, left=0.0, right=area[-1] if len(area) else 0.0)
    return np.diff(integral) / np.diff(edges)


def busy(records: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The busy processors over time, from the records: a step function ``(times, levels)``,
    ``levels[k]`` processors busy from ``times[k]`` on. One step at each instant where a job
    started or ended, with the level after all of that instant's changes (intervals are
    half-open, ``[start, end)``: a job ending at t and one starting at t never overlap)."""
    ran = (records["state"] == JobState.COMPLETED) | (records["state"] == JobState.KILLED)
    times = np.concatenate([records["start"][ran], records["end"][ran]])
    size = records["size"][ran]
    order = np.argsort(times, kind="stable")
    times = times[order]
    levels = np.cumsum(np.concatenate([size, -size])[order])
    last = np.append(times[1:] != times[:-1], True)  # the last change of each instant
    return times[last], levels[last]


def hourly(
    result: SiteResult, start: float = 0.0, end: float | None = None
) -> dict[str, np.ndarray]:
    """Per hour from ``start`` to ``end`` (default: the horizon, else the last end): the hour's
    start (hours since time 0), mean jobs waiting, mean sessions active (from a session's first
    submission to the end of its last job, its user's last wait included), sessions started in
    the hour, and utilization."""
    rec = result.records
    ran = (rec["state"] == JobState.COMPLETED) | (rec["state"] == JobState.KILLED)
    rec = rec[ran]
    if end is None:
        end = (result.summary.window_end_d * 86400.0) if len(rec) else start + HOUR
    edges = np.arange(start, end + HOUR / 2, HOUR)
    ones = np.ones(len(rec))
    waiting = mean_level(rec["submit"], rec["start"], ones, edges)
    busy = mean_level(rec["start"], rec["end"], rec["size"].astype(np.float64), edges)
    sessions = np.zeros(len(edges) - 1)
    started = np.zeros(len(edges) - 1)
    in_session = rec[rec["session"] >= 0]  # (-1: a job of no session)
    if len(in_session):
        key = pair_keys(in_session["user"], in_session["session"])
        unique, index = np.unique(key, return_inverse=True)
        first = np.full(len(unique), np.inf)
        last = np.full(len(unique), -np.inf)
        np.minimum.at(first, index, in_session["submit"])
        np.maximum.at(last, index, in_session["end"])
        sessions = mean_level(first, last, np.ones(len(unique)), edges)
        started = np.histogram(first, edges)[0].astype(np.float64)
    return {
        "hour": edges[:-1] / HOUR,
        "waiting": waiting,
        "sessions": sessions,
        "sessions_started": started,
        "utilization": busy / result.procs,
    }
