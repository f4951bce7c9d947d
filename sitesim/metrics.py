"""Summary metrics, all computed from the per-job records (spec README §4).

For job i: wait = start − submit; response r = end − submit; slowdown = r / runtime; bounded
slowdown = max(r / max(runtime, τ), 1) with τ = 10 s. ``runtime`` is the time the job really
ran. A job that ran 0 s would have an infinite slowdown, so the slowdown's denominator is at
least 1 s (documented in docs/reference/metrics.md).

The measurement window ``(t0, t1)`` selects the jobs *submitted* in it (wait, response and
slowdown statistics, throughput); utilization counts the busy processor-seconds that fall in it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sitesim.job import JobState

#: τ of the bounded slowdown, seconds.
BSLD_TAU = 10.0
#: Percentiles reported for every distribution.
PERCENTILES = (25, 50, 75, 98, 100)
#: Runtime classes (seconds): short ≤ 1 min < medium ≤ 10 min < long.
RUNTIME_CLASSES = (("short", 0.0, 60.0), ("medium", 60.0, 600.0), ("long", 600.0, np.inf))


def slowdowns(records: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Slowdown and bounded slowdown of each record."""
    response = records["response"]
    runtime = records["runtime"]
    slowdown = response / np.maximum(runtime, 1.0)
    bounded = np.maximum(response / np.maximum(runtime, BSLD_TAU), 1.0)
    return slowdown, bounded


def distribution(values: np.ndarray) -> dict[str, float]:
    """Mean and the standard percentiles of ``values`` (NaN when empty)."""
    if len(values) == 0:
        return {"mean": float("nan"), **{f"p{p}": float("nan") for p in PERCENTILES}}
    quantiles = np.percentile(values, PERCENTILES)
    return {
        "mean": float(values.mean()),
        **{f"p{p}": float(q) for p, q in zip(PERCENTILES, quantiles, strict=True)},
    }


def busy_seconds(records: np.ndarray, t0: float, t1: float) -> float:
    """Processor-seconds the jobs kept busy inside ``[t0, t1)``."""
    ran = np.isfinite(records["start"]) & np.isfinite(records["end"])
    start = np.maximum(records["start"][ran], t0)
    end = np.minimum(records["end"][ran], t1)
    return float((records["size"][ran] * np.maximum(end - start, 0.0)).sum())


def summarize(records: np.ndarray, procs: int, window: tuple[float, float]) -> dict[str, Any]:
    """Every summary metric of a run.

    Args:
        records: per-job records (:func:`sitesim.records.job_records`).
        procs: machine size.
        window: measurement window ``(t0, t1)`` in seconds.
    """
    t0, t1 = window
    length = t1 - t0
    state = records["state"]
    in_window = (records["submit"] >= t0) & (records["submit"] <= t1)
    ended = (state == JobState.COMPLETED) | (state == JobState.KILLED)
    sel = records[in_window & ended]
    slowdown, bounded = slowdowns(sel)
    hours = length / 3600.0
    all_ended = records[ended]
    summary: dict[str, Any] = {
        "jobs": len(sel),
        "jobs_total": len(records),
        "killed": int(sel["killed"].sum()),
        "cancelled": int((in_window & (state == JobState.CANCELLED)).sum()),
        "window": [float(t0), float(t1)],
        "utilization": busy_seconds(records, t0, t1) / (procs * length) if length > 0 else np.nan,
        "throughput_per_hour": int(in_window.sum()) / hours if hours > 0 else np.nan,
        "makespan": (
            float(all_ended["end"].max() - records["submit"].min()) if len(all_ended) else np.nan
        ),
        "max_wait": float(sel["wait"].max()) if len(sel) else np.nan,
        "wait": distribution(sel["wait"]),
        "response": distribution(sel["response"]),
        "slowdown": distribution(slowdown),
        "bounded_slowdown": distribution(bounded),
        "by_runtime_class": {},
    }
    runtime = sel["runtime"]
    for name, low, high in RUNTIME_CLASSES:
        cls = (runtime > low) & (runtime <= high) if low > 0 else runtime <= high
        summary["by_runtime_class"][name] = {
            "jobs": int(cls.sum()),
            "mean_wait": _mean(sel["wait"][cls]),
            "mean_response": _mean(sel["response"][cls]),
            "mean_slowdown": _mean(slowdown[cls]),
            "mean_bounded_slowdown": _mean(bounded[cls]),
        }
    if len(sel) and (sel["session"] >= 0).any():
        summary["users"] = user_metrics(sel, slowdown)
    return summary


def _pairs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One integer per (a, b) pair (both non-negative and below 2**31)."""
    return a.astype(np.int64) * (1 << 31) + b.astype(np.int64)


def user_metrics(sel: np.ndarray, slowdown: np.ndarray) -> dict[str, Any]:
    """Sessions, batches and per-user statistics of site-level runs (jobs in the window)."""
    user = sel["user"]
    users, user_index = np.unique(user, return_inverse=True)
    sessions = np.unique(_pairs(user, sel["session"]))
    batches = np.unique(_pairs(user, sel["batch"]))
    jobs = np.bincount(user_index)
    per_user_sessions = np.bincount(np.searchsorted(users, sessions >> 31), minlength=len(users))
    per_user_batches = np.bincount(np.searchsorted(users, batches >> 31), minlength=len(users))
    response = np.bincount(user_index, weights=sel["response"]) / jobs
    user_slowdown = np.bincount(user_index, weights=slowdown) / jobs
    table = [
        {
            "user": u,
            "jobs": n,
            "sessions": ns,
            "batches": nb,
            "mean_response": r,
            "mean_slowdown": sd,
        }
        for u, n, ns, nb, r, sd in zip(
            users.tolist(), jobs.tolist(), per_user_sessions.tolist(), per_user_batches.tolist(),
            response.tolist(), user_slowdown.tolist(), strict=True,
        )
    ]  # fmt: skip
    return {
        "users": len(users),
        "sessions": len(sessions),
        "batches": len(batches),
        "jobs_per_session": len(sel) / len(sessions),
        "jobs_per_batch": len(sel) / len(batches),
        "sessions_per_user": len(sessions) / len(users),
        "batches_per_user": len(batches) / len(users),
        "per_user": table,
    }


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if len(values) else float("nan")
