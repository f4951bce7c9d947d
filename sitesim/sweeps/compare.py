"""Open versus closed evaluation: how wrong is a trace replay? (experiments.md §1)

For schedulers A and B and one site (users, horizon, seed):

1. a site-level run under A gives a trace (the jobs its users submitted, with their
   dependencies);
2. that trace is replayed *open* under B: the conventional prediction of B's performance;
3. a site-level run under B gives the performance B really has with these users, who react
   to B's responses.

The prediction error of a metric is |conventional − site-level| / site-level, in %. Both
directions (A's trace under B, B's trace under A) come from the same two site-level runs. All
three runs are measured over the same window, the site-level runs' (warm-up to horizon), so a
replay of a trace under its own scheduler reproduces the site-level numbers exactly (error 0);
the open replay's jobs all run to completion, however long after the horizon (``drain_d``, the
days from the horizon to the replay's last end; 0 when it ended by the horizon).
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sitesim.engine.metrics import DAY, summarize
from sitesim.engine.site import SiteResult
from sitesim.results.report import jobs_refused, result_trace
from sitesim.runs.config import SiteConfig
from sitesim.runs.replay import replay
from sitesim.runs.runner import run
from sitesim.schedulers import Scheduler
from sitesim.sweeps.executors import Executor, execute_all

#: The metrics compared, as summary fields.
METRICS = ("response_mean_min", "wait_mean_min", "slowdown_mean")


@dataclass(frozen=True)
class ComparePoint:
    """One site (its configuration without a scheduler) and the two schedulers."""

    site: SiteConfig
    a: str
    b: str


def compare_point(point: ComparePoint) -> list[dict[str, Any]] | str:
    """Both directions at one point: two rows, or the error that stopped it (a module-level
    function, so that it can run in another process)."""
    done = point_with_refusals(point)
    return done if isinstance(done, str) else done[0]


def point_with_refusals(point: ComparePoint) -> tuple[list[dict[str, Any]], dict[str, int]] | str:
    """:func:`compare_point`, and the jobs the point's four runs left out, by reason, summed
    (:func:`~sitesim.results.report.jobs_refused`)."""
    try:
        sites = {name: run(point.site.replace(scheduler=name)) for name in (point.a, point.b)}
        rows, refused = [], Counter[str]()
        for source, target in ((point.a, point.b), (point.b, point.a)):
            conventional = open_replay(sites[source], target)
            rows.append(
                _row(point.site, source, target, sites[source], conventional, sites[target])
            )
            for result in (sites[source], conventional):
                refused.update(jobs_refused(result.rejected, result.workload))
        return rows, dict(refused)
    except Exception as err:  # reported by the caller, with the point
        return f"{type(err).__name__}: {err}"


def open_replay(site: SiteResult, scheduler: str | Scheduler) -> SiteResult:
    """The conventional prediction: the site-level run's trace replayed open under
    ``scheduler`` (a name, or a fresh scheduler object), measured over the site-level run's
    window."""
    result = replay(result_trace(site, "site-level trace"), scheduler, procs=site.procs)
    window = (site.summary.window_start_d * DAY, site.summary.window_end_d * DAY)
    summary = summarize(result.records, result.procs, window)
    return dataclasses.replace(result, summary=summary)


def _row(
    site: SiteConfig,
    source: str,
    target: str,
    traced: SiteResult,
    conventional: SiteResult,
    real: SiteResult,
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "direction": f"{source} trace -> {target}",
        "trace_of": source,
        "replayed_under": target,
        "users": site.users,
        "days": site.days,
        "seed": site.seed,
    }
    for metric in METRICS:
        conv, truth = getattr(conventional.summary, metric), getattr(real.summary, metric)
        row[f"trace_{metric}"] = getattr(traced.summary, metric)
        row[f"conv_{metric}"] = conv
        row[f"site_{metric}"] = truth
        row[f"error_{metric}_pct"] = 100 * abs(conv - truth) / truth if truth else math.nan
        row[f"signed_{metric}_pct"] = 100 * (conv - truth) / truth if truth else math.nan
    ends = conventional.records["end"]
    row["conv_utilization"] = conventional.summary.utilization
    row["site_utilization"] = real.summary.utilization
    row["drain_d"] = drain_days(ends, site.days)
    return row


def drain_days(ends: np.ndarray, horizon_days: float) -> float:
    """Days the open replay runs on after the horizon: from the horizon to its last job's
    end, 0 when every job ended by the horizon (its users' last jobs may end well before it,
    e.g. in a weekend), NaN when it has no job."""
    if not len(ends):
        return math.nan
    return max(float(ends.max()) / DAY - horizon_days, 0.0)


def compare(
    site: SiteConfig,
    a: str = "EASY",
    b: str = "FCFS",
    *,
    users: Sequence[int] | None = None,
    days: Sequence[float] | None = None,
    seeds: int | Sequence[int] = 5,
    executor: Executor = "process",
    workers: int | None = None,
    dask_address: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    refused: Callable[[str, dict[str, int]], None] | None = None,
) -> list[dict[str, Any]]:
    """Prediction errors at every (users, days, seed), both directions: one row each.

    Args:
        site: the site's settings (model, procs, warm-up, ...); its scheduler is ignored.
        a, b: the two schedulers.
        users, days: the user counts and horizons to cover (default: the site's).
        seeds: a count n (seeds 1..n) or the seeds.
        executor, workers, dask_address: where the points run (:mod:`sitesim.sweeps.executors`).
        progress: called with (points done, points in all).
        refused: called for each point whose runs left jobs out, with the point
            (``"10 users, 182 days, seed 3"``) and those jobs, by reason, summed over its
            runs (:func:`~sitesim.results.report.jobs_refused`).
    """
    seeds = list(range(1, seeds + 1)) if isinstance(seeds, int) else list(seeds)
    a, b = a.upper(), b.upper()
    points = [
        ComparePoint(site.replace(users=u, days=d, seed=s), a, b)
        for u in (users or [site.users])
        for d in (days or [site.days])
        for s in seeds
    ]  # every configuration is built (and checked) before the first run
    found: dict[int, list[dict[str, Any]]] = {}
    errors = []
    for k, done, lost in execute_all(
        point_with_refusals, points, executor, workers=workers, address=dask_address
    ):
        site_k = points[k].site
        where = f"{site_k.users} users, {site_k.days:g} days, seed {site_k.seed}"
        if isinstance(done, tuple):
            found[k] = done[0]
            if done[1] and refused is not None:
                refused(where, done[1])
        else:
            errors.append(f"{where}: {lost or done}")
        if progress is not None:
            progress(len(found) + len(errors), len(points))
    if errors:
        from sitesim.errors import SitesimError

        raise SitesimError("comparison failed at " + "; ".join(errors))
    return [row for k in sorted(found) for row in found[k]]


def compare_figure(rows: Sequence[dict[str, Any]], path: Path) -> Path:
    """Experiment 1, for a slide: the open replay's prediction divided by what the users get
    (1: exact), against user count, one panel per direction and metric, one line per horizon;
    geometric means over the seeds with their 95 % intervals (Student's t on the logs), on a
    log axis. ``rows``: one per direction, point and seed (``conv_<metric>`` and
    ``site_<metric>``)."""
    import matplotlib
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    from scipy.special import stdtrit

    from sitesim.figures import SLIDE_STYLE, legend_below, save, slide

    titles = {"response_mean_min": "mean response", "wait_mean_min": "mean wait",
              "slowdown_mean": "mean slowdown"}  # fmt: skip
    directions = list(dict.fromkeys(row["direction"] for row in rows))
    with matplotlib.rc_context(SLIDE_STYLE):
        fig, axes = slide(len(directions), len(METRICS), sharex=True)
        for r, direction in enumerate(directions):
            for c, metric in enumerate(METRICS):
                ax = axes[r * len(METRICS) + c]
                horizons = sorted({row["days"] for row in rows})
                for k, days in enumerate(horizons):
                    dodge = 0.12 * (k - (len(horizons) - 1) / 2)  # (intervals side by side)
                    xs, ys, low, high = [], [], [], []
                    for users in sorted({row["users"] for row in rows}):
                        logs = np.log([row[f"conv_{metric}"] / row[f"site_{metric}"]
                                       for row in rows if row["direction"] == direction
                                       and row["days"] == days and row["users"] == users
                                       and row[f"site_{metric}"] > 0
                                       and row[f"conv_{metric}"] > 0])  # fmt: skip
                        if not len(logs):
                            continue
                        mean = logs.mean()
                        half = (stdtrit(len(logs) - 1, 0.975) * logs.std(ddof=1)
                                / np.sqrt(len(logs))) if len(logs) > 1 else 0.0  # fmt: skip
                        xs.append(users + dodge)
                        ys.append(np.exp(mean))
                        low.append(np.exp(mean) - np.exp(mean - half))
                        high.append(np.exp(mean + half) - np.exp(mean))
                    ax.errorbar(xs, ys, yerr=[low, high], marker="o", label=f"{days:g} days")
                ax.axhline(1, color="k", lw=1)
                ax.set_yscale("log")
                ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
                ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
                ax.yaxis.set_minor_formatter(NullFormatter())
                ax.set_title(f"{direction.replace('->', '→')}: {titles[metric]}")
                if r == len(directions) - 1:
                    ax.set_xlabel("users")
                if c == 0:
                    ax.set_ylabel("open ÷ site-level")
                ax.grid(alpha=0.3, which="both")
        legend_below(fig, axes[0], ncols=4)
        fig.suptitle("The open replay's prediction ÷ what the users get (1: exact)")
    return save(fig, path)
