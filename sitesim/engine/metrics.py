"""Summary metrics, all computed from the per-job records (spec README §4).

For job i: wait = start − submit; response r = end − submit; slowdown = r / runtime; bounded
slowdown = max(r / max(runtime, τ), 1) with τ = 10 s. ``runtime`` is the time the job really
ran. A job that ran 0 s would have an infinite slowdown, so the slowdown's denominator is at
least 1 s (documented in docs/reference/metrics.md).

The measurement window ``(t0, t1)`` selects the jobs *submitted* in it (wait, response and
slowdown statistics, throughput, offered load); utilization counts the busy processor-seconds
that fall in it.

A run's summary is one flat, typed record, :class:`Summary`, whose field names carry their
units (``wait_mean_min``, ``throughput_per_h``, ``makespan_d``): one CSV row, one DataFrame row.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from sitesim.engine.job import JobState

#: τ of the bounded slowdown, seconds.
BSLD_TAU = 10.0
#: Statistics reported for every distribution: the mean and these percentiles (100 = max).
PERCENTILES = (25, 50, 75, 98, 100)
#: Runtime classes (seconds): short ≤ 1 min < medium ≤ 10 min < long.
RUNTIME_CLASSES = (("short", 0.0, 60.0), ("medium", 60.0, 600.0), ("long", 600.0, np.inf))
MINUTE, HOUR, DAY = 60.0, 3600.0, 86_400.0
NAN = math.nan


@dataclass(frozen=True, slots=True)
class Summary:
    """Every summary metric of one run, flat. Times carry their unit in their name.

    Counts are over the jobs *submitted inside the measurement window* that ended (``jobs``);
    the distributions (``wait_*``, ``response_*``, ``slowdown_*``, ``bsld_*``) give the mean,
    the 25th, 50th, 75th and 98th percentiles and the maximum; ``slowdown_area_weighted``
    (SLDwA) weights each slowdown by its job's area, size × runtime. ``short_*``, ``medium_*`` and
    ``long_*`` are the means per runtime class (≤ 1 min, 1–10 min, > 10 min). Session fields
    are 0 (counts) or NaN (ratios) for runs without sessions (trace replays).
    ``batches_per_session`` is the mean number of batches a session holds (a batch of
    simultaneous submissions counts once: a study that counts the waits of a session counts
    these). ``dependent_jobs`` counts the jobs that record a preceding job (SWF field 17);
    ``submission_violations`` and ``ordering_violations`` are the fractions of ``jobs`` that
    were submitted before their preceding job ended, or started before it started.
    ``utility_*`` cover the window's jobs that carry a utility function (utility.md §3): the
    aggregate utility earned and the most that could be, the % of its start value each job
    earned (mean and percentiles), and each user's share of the utility its jobs could earn
    (mean, min, max over users); NaN without utility functions. ``competitive_ratio`` (aggregate
    utility / that of EASY on the same workload) needs a second run: the functions that run
    both fill it in; it is NaN otherwise.
    docs/reference/metrics.md documents every field.
    """

    jobs: int
    jobs_total: int
    jobs_killed: int
    jobs_cancelled: int
    jobs_skipped: int
    window_start_d: float
    window_end_d: float
    utilization: float
    offered_load: float
    throughput_per_h: float
    makespan_d: float
    wait_mean_min: float
    wait_p25_min: float
    wait_p50_min: float
    wait_p75_min: float
    wait_p98_min: float
    wait_max_min: float
    response_mean_min: float
    response_p25_min: float
    response_p50_min: float
    response_p75_min: float
    response_p98_min: float
    response_max_min: float
    slowdown_mean: float
    slowdown_p25: float
    slowdown_p50: float
    slowdown_p75: float
    slowdown_p98: float
    slowdown_max: float
    bsld_mean: float
    bsld_p25: float
    bsld_p50: float
    bsld_p75: float
    bsld_p98: float
    bsld_max: float
    slowdown_area_weighted: float
    short_jobs: int
    short_wait_mean_min: float
    short_response_mean_min: float
    short_slowdown_mean: float
    short_bsld_mean: float
    medium_jobs: int
    medium_wait_mean_min: float
    medium_response_mean_min: float
    medium_slowdown_mean: float
    medium_bsld_mean: float
    long_jobs: int
    long_wait_mean_min: float
    long_response_mean_min: float
    long_slowdown_mean: float
    long_bsld_mean: float
    active_users: int
    sessions: int
    batches: int
    jobs_per_session: float
    batches_per_session: float
    jobs_per_batch: float
    sessions_per_user: float
    batches_per_user: float
    dependent_jobs: int
    submission_violations: float
    ordering_violations: float
    utility_jobs: int
    utility_total: float
    utility_possible: float
    utility_earned_mean_pct: float
    utility_earned_p25_pct: float
    utility_earned_p50_pct: float
    utility_earned_p75_pct: float
    utility_earned_p98_pct: float
    utility_earned_max_pct: float
    utility_share_mean: float
    utility_share_min: float
    utility_share_max: float
    competitive_ratio: float

    @classmethod
    def fields(cls) -> tuple[str, ...]:
        """The field names, in order (the columns of a CSV row)."""
        return tuple(f.name for f in dataclasses.fields(cls))

    def as_dict(self) -> dict[str, Any]:
        """The fields as a plain dict, in order."""
        return {name: getattr(self, name) for name in self.fields()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Summary:
        """A summary from :meth:`as_dict` output (``None``, as JSON holds NaN, is NaN)."""
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            value = data[f.name]
            values[f.name] = int(value) if f.type == "int" else NAN if value is None else value
        return cls(**values)


def slowdowns(records: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Slowdown and bounded slowdown of each record."""
    response = records["response"]
    runtime = records["runtime"]
    slowdown = response / np.maximum(runtime, 1.0)
    bounded = np.maximum(response / np.maximum(runtime, BSLD_TAU), 1.0)
    return slowdown, bounded


def distribution(values: np.ndarray, unit: float = 1.0) -> list[float]:
    """Mean and the :data:`PERCENTILES` of ``values`` divided by ``unit`` (NaN when empty)."""
    if len(values) == 0:
        return [NAN] * (1 + len(PERCENTILES))
    quantiles = np.percentile(values, PERCENTILES)
    return [float(values.mean()) / unit, *(float(q) / unit for q in quantiles)]


def busy_seconds(records: np.ndarray, t0: float, t1: float) -> float:
    """Processor-seconds the jobs kept busy inside ``[t0, t1)``."""
    ran = np.isfinite(records["start"]) & np.isfinite(records["end"])
    start = np.maximum(records["start"][ran], t0)
    end = np.minimum(records["end"][ran], t1)
    return float((records["size"][ran] * np.maximum(end - start, 0.0)).sum())


def window_jobs(records: np.ndarray, window: tuple[float, float]) -> np.ndarray:
    """The records of the jobs submitted inside ``window`` that ended (ran to completion or
    were killed at their estimates): the jobs every per-job statistic is over."""
    t0, t1 = window
    state = records["state"]
    in_window = (records["submit"] >= t0) & (records["submit"] <= t1)
    ended = (state == JobState.COMPLETED) | (state == JobState.KILLED)
    return _subset(records, in_window & ended)


def _subset(records: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """``records[keep]``, without a copy when every record is kept (a long run's records are
    large; the metrics only read them)."""
    return records if keep.all() else records[keep]


def summarize(
    records: np.ndarray, procs: int, window: tuple[float, float], *, skipped: int = 0
) -> Summary:
    """Every summary metric of a run.

    Args:
        records: per-job records (:func:`sitesim.engine.records.job_records`).
        procs: machine size.
        window: measurement window ``(t0, t1)`` in seconds.
        skipped: impossible jobs left out of the run (reported, not measured).
    """
    return measure(records, procs, window, skipped=skipped)[0]


def measure(
    records: np.ndarray, procs: int, window: tuple[float, float], *, skipped: int = 0
) -> tuple[Summary, np.ndarray]:
    """:func:`summarize` and :func:`per_user` of a run at once (the window's jobs selected
    and the per-user table computed once; the session counts are its sums)."""
    t0, t1 = window
    length = t1 - t0
    state = records["state"]
    in_window = (records["submit"] >= t0) & (records["submit"] <= t1)
    sel = window_jobs(records, window)
    table = _per_user(sel)
    slowdown, bounded = slowdowns(sel)
    all_ended = (state == JobState.COMPLETED) | (state == JobState.KILLED)
    work = float((sel["size"] * sel["runtime"]).sum())
    values: dict[str, Any] = {
        "jobs": len(sel),
        "jobs_total": len(records),
        "jobs_killed": int(sel["killed"].sum()),
        "jobs_cancelled": int((in_window & (state == JobState.CANCELLED)).sum()),
        "jobs_skipped": skipped,
        "window_start_d": t0 / DAY,
        "window_end_d": t1 / DAY,
        "utilization": busy_seconds(records, t0, t1) / (procs * length) if length > 0 else NAN,
        "offered_load": work / (procs * length) if length > 0 else NAN,
        "throughput_per_h": int(in_window.sum()) / (length / HOUR) if length > 0 else NAN,
        "makespan_d": (
            float(records["end"][all_ended].max() - records["submit"].min()) / DAY
            if all_ended.any()
            else NAN
        ),
    }
    stats = ("mean", *(f"p{p}" if p < 100 else "max" for p in PERCENTILES))
    for name, data, unit, suffix in (
        ("wait", sel["wait"], MINUTE, "_min"),
        ("response", sel["response"], MINUTE, "_min"),
        ("slowdown", slowdown, 1.0, ""),
        ("bsld", bounded, 1.0, ""),
    ):
        for stat, value in zip(stats, distribution(data, unit), strict=True):
            values[f"{name}_{stat}{suffix}"] = value
    area = sel["size"] * np.maximum(sel["runtime"], 1.0)  # a slowdown's weight: its job's area
    values["slowdown_area_weighted"] = (
        float((area * slowdown).sum() / area.sum()) if len(sel) else NAN
    )
    runtime = sel["runtime"]
    for name, low, high in RUNTIME_CLASSES:
        cls = (runtime > low) & (runtime <= high) if low > 0 else runtime <= high
        values[f"{name}_jobs"] = int(cls.sum())
        values[f"{name}_wait_mean_min"] = _mean(sel["wait"][cls]) / MINUTE
        values[f"{name}_response_mean_min"] = _mean(sel["response"][cls]) / MINUTE
        values[f"{name}_slowdown_mean"] = _mean(slowdown[cls])
        values[f"{name}_bsld_mean"] = _mean(bounded[cls])
    values.update(_sessions(sel, table))
    values.update(_violations(records, sel))
    values.update(_utility(records[in_window & np.isfinite(records["utility"])]))
    return Summary(**values), table


def competitive_ratio(utility: float, baseline: float) -> float:
    """Aggregate utility over that of the baseline (EASY) on the same workload (utility.md §3);
    NaN when the baseline earned nothing."""
    return utility / baseline if baseline else NAN


def _utility(valued: np.ndarray) -> dict[str, Any]:
    """Utility earned by ``valued``, the jobs submitted in the window that carry a function
    (ended jobs earn their function's value, cancelled ones 0)."""
    n = len(valued)
    values: dict[str, Any] = {"utility_jobs": n, "competitive_ratio": NAN}
    earned, possible = valued["utility"], valued["start_value"]
    values["utility_total"] = float(earned.sum()) if n else NAN
    values["utility_possible"] = float(possible.sum()) if n else NAN
    with np.errstate(invalid="ignore", divide="ignore"):
        pct = 100 * np.where(possible > 0, earned / possible, np.nan)
    pct = pct[np.isfinite(pct)]
    stats = ("mean", *(f"p{p}" if p < 100 else "max" for p in PERCENTILES))
    for stat, value in zip(stats, distribution(pct), strict=True):
        values[f"utility_earned_{stat}_pct"] = value
    shares = np.array([])
    if n:
        users, index = np.unique(valued["user"], return_inverse=True)
        got = np.bincount(index, weights=earned, minlength=len(users))
        could = np.bincount(index, weights=possible, minlength=len(users))
        shares = got[could > 0] / could[could > 0]
    values["utility_share_mean"] = float(shares.mean()) if len(shares) else NAN
    values["utility_share_min"] = float(shares.min()) if len(shares) else NAN
    values["utility_share_max"] = float(shares.max()) if len(shares) else NAN
    return values


def _violations(records: np.ndarray, sel: np.ndarray) -> dict[str, Any]:
    """Dependencies (SWF 17) among the window's jobs, and how many were violated.

    A *submission-dependency violation*: the job was submitted while the job it depends on was
    still queued or running (before it ended). An *execution-ordering violation*: it started
    while the job it depends on was still queued (before it started). Both are fractions of the
    window's jobs; a site-level run has none by construction, an open replay of its trace at a
    higher load many (experiments.md §2).
    """
    dependent = sel["preceding"] > 0
    n = int(dependent.sum())
    if not n:
        return {"dependent_jobs": 0, "submission_violations": 0.0, "ordering_violations": 0.0}
    on = sel["preceding"][dependent] - 1  # ids are 1-based positions in the records
    submitted_early = sel["submit"][dependent] < records["end"][on]
    started_early = sel["start"][dependent] < records["start"][on]
    return {
        "dependent_jobs": n,
        "submission_violations": int(submitted_early.sum()) / len(sel),
        "ordering_violations": int(started_early.sum()) / len(sel),
    }


def pair_keys(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One integer per (a, b) pair, e.g. (user, session): equal keys for equal pairs, and
    ``key >> 31`` gives ``a`` back.

    Raises:
        ValueError: a value is negative or not below 2**31 (a job outside any session has
            session -1: leave it out first).
    """
    a, b = a.astype(np.int64), b.astype(np.int64)
    if len(a) and not (min(a.min(), b.min()) >= 0 and max(a.max(), b.max()) < 1 << 31):
        raise ValueError("pair_keys needs values in [0, 2**31)")
    return a * (1 << 31) + b


def _sessions(sel: np.ndarray, table: np.ndarray) -> dict[str, Any]:
    """Users, sessions and batches among the window's jobs, from their per-user ``table``
    (:func:`per_user`). Only the jobs that belong to a session (session >= 0) count toward
    the session ratios, and only the users who have such jobs: a population may mix users
    with sessions and users without (a custom user model, a trace user)."""
    in_session = sel["session"] >= 0
    with_sessions = table["sessions"] > 0
    sessions = int(table["sessions"].sum())
    batches = int(table["batches"].sum())
    users = int(with_sessions.sum())
    both = in_session & (sel["batch"] >= 0)  # the batches that belong to a session
    batches_in_sessions = len(np.unique(pair_keys(sel["user"][both], sel["batch"][both])))
    return {
        "active_users": len(table),
        "sessions": sessions,
        "batches": batches,
        "jobs_per_session": int(in_session.sum()) / sessions if sessions else NAN,
        "batches_per_session": batches_in_sessions / sessions if sessions else NAN,
        "jobs_per_batch": int((sel["batch"] >= 0).sum()) / batches if batches else NAN,
        "sessions_per_user": sessions / users if users else NAN,
        "batches_per_user": batches / int((table["batches"] > 0).sum()) if batches else NAN,
    }


#: Columns of the per-user table (:func:`per_user`).
USER_DTYPE = np.dtype(
    [(name, np.int64) for name in ("user", "jobs", "sessions", "batches")]
    + [(name, np.float64) for name in ("response_mean_min", "slowdown_mean")]
)


def per_user(records: np.ndarray, window: tuple[float, float]) -> np.ndarray:
    """Per-user statistics over the window's jobs: one row per user who submitted in it.

    Sessions and batches count only the jobs that belong to one (session and batch >= 0):
    0 for a user whose jobs belong to none (trace replays, custom users).
    """
    return _per_user(window_jobs(records, window))


def _per_user(sel: np.ndarray) -> np.ndarray:
    """:func:`per_user` of the window's jobs ``sel``."""
    user = sel["user"]
    users, user_index = np.unique(user, return_inverse=True)
    table = np.zeros(len(users), dtype=USER_DTYPE)
    if not len(sel):
        return table
    slowdown, _ = slowdowns(sel)
    jobs = np.bincount(user_index)
    table["user"] = users
    table["jobs"] = jobs
    for column, counted in (("session", "sessions"), ("batch", "batches")):
        ids = sel[column]
        belongs = ids >= 0  # (-1: the job belongs to no session or batch)
        if belongs.any():
            pairs = np.unique(pair_keys(user[belongs], ids[belongs]))
            table[counted] = np.bincount(np.searchsorted(users, pairs >> 31), minlength=len(users))
    table["response_mean_min"] = np.bincount(user_index, weights=sel["response"]) / jobs / MINUTE
    table["slowdown_mean"] = np.bincount(user_index, weights=slowdown) / jobs
    return table


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if len(values) else NAN
