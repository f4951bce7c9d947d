"""Uncovering user behaviour from traces (users.md §6): how a job's service shapes what its
owner does next.

For each trace (and all traces combined, each with equal weight), on the think time that
*follows* each job (users.md definitions, :mod:`sitesim.workload.activity`):

1. the distribution of think times, negative ones included;
2. jobs binned by response time (R1 0–5, R2 5–15, R3 15–45, R4 45–135, R5 > 135 minutes) and
   by slowdown (S1 < 1.41, S2 1.41–2, S3 2–4, S4 4–16, S5 > 16): the median positive think time
   after the jobs of each bin;
3. the R×S table of those medians;
4. per response bin, the share of positive think times within the session threshold (the
   probability to continue the session) against the bin's median response, and the fitted
   curve p = a / (b·r + 1);
5. the same continue probabilities for jobs that waited ≤ 5 min ("W") and jobs that ran
   ≤ 5 min ("E");
6. one point per week: jobs submitted vs their mean node-seconds.

Everything returned is plain data (JSON-ready); :mod:`sitesim.workload.plots` draws the figures.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import optimize, stats

from sitesim.workload.activity import Activity

#: Response bins (minutes): upper edges of R1..R4; R5 is open.
RESPONSE_EDGES = (5.0, 15.0, 45.0, 135.0)
#: Slowdown bins: upper edges of S1..S4; S5 is open.
SLOWDOWN_EDGES = (1.41, 2.0, 4.0, 16.0)
RESPONSE_BINS = ("R1", "R2", "R3", "R4", "R5")
SLOWDOWN_BINS = ("S1", "S2", "S3", "S4", "S5")
#: "W": waited at most this long; "E": ran at most this long (minutes).
EXPECTATION_LIMIT = 5.0
WEEK = 7 * 86400.0
THINK_GRID = (0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99)


class Followed:
    """Each job with the think time that follows it, and a weight: the traces are mixed in
    equal parts, every trace's jobs carrying a total weight of 1."""

    def __init__(self, activities: Sequence[Activity]) -> None:
        parts = [a for a in activities if len(a)]
        follow = [np.isfinite(a.think) for a in parts]
        self.threshold = parts[0].threshold
        self.think = np.concatenate([a.think[f] for a, f in zip(parts, follow, strict=True)])
        self.response = np.concatenate(
            [a.response[f] / 60.0 for a, f in zip(parts, follow, strict=True)]
        )
        self.slowdown = np.concatenate([a.slowdown[f] for a, f in zip(parts, follow, strict=True)])
        self.wait = np.concatenate([a.wait[f] / 60.0 for a, f in zip(parts, follow, strict=True)])
        self.runtime = np.concatenate(
            [a.runtime[f] / 60.0 for a, f in zip(parts, follow, strict=True)]
        )
        self.weight = np.concatenate(
            [np.full(int(f.sum()), 1.0 / max(int(f.sum()), 1)) for f in follow]
        )
        self.rbin = np.digitize(self.response, RESPONSE_EDGES)
        self.sbin = np.digitize(self.slowdown, SLOWDOWN_EDGES)
        self.positive = self.think > 0


def weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    """The weighted median (NaN when empty)."""
    if not len(values):
        return math.nan
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(weights[order])
    return float(values[order][np.searchsorted(cumulative, cumulative[-1] / 2)])


def _share(flags: np.ndarray, weights: np.ndarray) -> float:
    total = weights.sum()
    return float((weights * flags).sum() / total) if total > 0 else math.nan


def continue_curve(data: Followed, pick: np.ndarray) -> list[dict[str, Any]]:
    """Per response bin: jobs, median response, median think, continue probability."""
    rows = []
    for k, name in enumerate(RESPONSE_BINS):
        sel = pick & data.positive & (data.rbin == k)
        w = data.weight[sel]
        rows.append(
            {
                "bin": name,
                "jobs": int(sel.sum()),
                "median_response_min": weighted_median(data.response[sel], w),
                "median_think_min": weighted_median(data.think[sel] / 60.0, w),
                "continue_probability": _share(data.think[sel] <= data.threshold, w),
            }
        )
    return rows


def fit_continue(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Least-squares fit of p = a / (b·r + 1) to the bins' (median response, continue p)."""
    r = np.array([row["median_response_min"] for row in rows], dtype=np.float64)
    p = np.array([row["continue_probability"] for row in rows], dtype=np.float64)
    ok = np.isfinite(r) & np.isfinite(p)
    nan = {"a": math.nan, "b": math.nan, "r2": math.nan, "rmse": math.nan, "points": int(ok.sum())}
    if ok.sum() < 3:
        return nan
    r, p = r[ok], p[ok]

    def curve(x: np.ndarray, a: float, b: float) -> np.ndarray:
        return a / (b * x + 1.0)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (a, b), _ = optimize.curve_fit(curve, r, p, p0=(0.8, 0.05), bounds=([0, 0], [2, 10]))
    except (RuntimeError, ValueError):
        return nan
    residual = p - curve(r, a, b)
    total = ((p - p.mean()) ** 2).sum()
    return {
        "a": float(a),
        "b": float(b),
        "r2": float(1 - (residual**2).sum() / total) if total > 0 else math.nan,
        "rmse": float(np.sqrt((residual**2).mean())),
        "points": int(ok.sum()),
    }


def analyze_followed(data: Followed) -> dict[str, Any]:
    """Items 1–5 on one set of jobs."""
    every = np.ones(len(data.think), dtype=bool)
    pos = data.positive
    think_min = data.think / 60.0
    response_rows = continue_curve(data, every)
    slowdown_rows = []
    for k, name in enumerate(SLOWDOWN_BINS):
        sel = pos & (data.sbin == k)
        slowdown_rows.append(
            {
                "bin": name,
                "jobs": int(sel.sum()),
                "median_slowdown": weighted_median(data.slowdown[sel], data.weight[sel]),
                "median_think_min": weighted_median(think_min[sel], data.weight[sel]),
            }
        )
    table = [[math.nan] * 5 for _ in range(5)]
    counts = [[0] * 5 for _ in range(5)]
    for i in range(5):
        for j in range(5):
            sel = pos & (data.rbin == i) & (data.sbin == j)
            counts[i][j] = int(sel.sum())
            table[i][j] = weighted_median(think_min[sel], data.weight[sel])
    waited = data.wait <= EXPECTATION_LIMIT
    short = data.runtime <= EXPECTATION_LIMIT
    w_rows, e_rows = continue_curve(data, waited), continue_curve(data, short)
    quantiles = _weighted_quantiles(think_min, data.weight, THINK_GRID)
    return {
        "think": {
            "count": len(data.think),
            "negative_fraction": _share(data.think < 0, data.weight),
            "within_threshold_fraction": _share(data.think <= data.threshold, data.weight),
            "quantiles_min": {
                f"p{round(100 * q)}": v for q, v in zip(THINK_GRID, quantiles, strict=True)
            },
        },
        "response_bins": response_rows,
        "slowdown_bins": slowdown_rows,
        "rs_median_think_min": table,
        "rs_jobs": counts,
        "continue_fit": fit_continue(response_rows),
        "expectations": {
            "W": w_rows,
            "E": e_rows,
            "W_fit": fit_continue(w_rows),
            "E_fit": fit_continue(e_rows),
        },
    }


def _weighted_quantiles(
    values: np.ndarray, weights: np.ndarray, grid: Sequence[float]
) -> list[float]:
    if not len(values):
        return [math.nan] * len(grid)
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(weights[order])
    position = (cumulative - weights[order] / 2) / cumulative[-1]
    return np.interp(grid, position, values[order]).tolist()


def weekly(activity: Activity) -> dict[str, Any]:
    """Item 6: per week, jobs submitted and their mean node-seconds; Spearman's rho."""
    week = np.floor((activity.submit - activity.submit.min()) / WEEK).astype(np.int64)
    area = activity.size.clip(min=0) * activity.runtime
    jobs = np.bincount(week)
    total = np.bincount(week, weights=area)
    used = jobs > 0
    mean_area = total[used] / jobs[used]
    rho, p_value = (math.nan, math.nan)
    if used.sum() >= 3 and np.ptp(jobs[used]) > 0 and np.ptp(mean_area) > 0:
        result = stats.spearmanr(jobs[used], mean_area)
        rho, p_value = float(result.statistic), float(result.pvalue)
    return {
        "weeks": int(used.sum()),
        "jobs": jobs[used].tolist(),
        "mean_node_seconds": mean_area.tolist(),
        "spearman_rho": rho,
        "spearman_p": p_value,
    }


def analyze(activities: Sequence[Activity]) -> dict[str, Any]:
    """The whole analysis, per trace and combined (traces with equal weight)."""
    per_trace = {}
    for activity in activities:
        result = analyze_followed(Followed([activity]))
        per_trace[Path(activity.name).name] = {
            "jobs": len(activity),
            "users": activity.users,
            "excluded": activity.excluded,
            "clock": activity.clock,
            **result,
            "weekly": weekly(activity),
        }
    first = activities[0]
    return {
        "settings": {
            "think_definition": first.definition,
            "session_threshold_min": first.threshold / 60.0,
            "response_bins_min": RESPONSE_EDGES,
            "slowdown_bins": SLOWDOWN_EDGES,
            "expectation_limit_min": EXPECTATION_LIMIT,
            "combined": "each trace weighs the same",
        },
        "traces": per_trace,
        "combined": analyze_followed(Followed(activities)),
    }
