"""Experiment 3: load curves, closed versus open.

Closed (site-level): static users 2-40 under FCFS and EASY; load rises with the number of users,
who wait for their jobs. Open: the trace of a site-level EASY run with 10 users, replayed under
FCFS and EASY with its inter-arrival times compressed to offered loads 0.2-0.95. Mean response,
wait, throughput (jobs per 24 h) and utilization, against offered load (both) and against users
(closed); 5 seeds, 182 days (experiments.md §3; docs/results/load-curves.md).

    python scenarios/load_curves.py [--quick] [--out DIR] [--seed S] [--serial | --workers N]
"""

from __future__ import annotations

import sys
from typing import Any

from sitesim.cli import scenario
from sitesim.results.report import result_trace, table
from sitesim.runs.config import SiteConfig
from sitesim.runs.replay import replay
from sitesim.runs.runner import run
from sitesim.sweeps.replications import paired_differences
from sitesim.sweeps.sweep import summarize_runs, sweep

SCHEDULERS = ("FCFS", "EASY")
FULL = {
    "users": [2, 4, 6, 8, 10, 12, 15, 20, 25, 30, 40], "days": 182.0, "seeds": 5,
    "loads": [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95], "trace_users": 10,
}  # fmt: skip
QUICK = {"users": [2, 6, 12], "days": 14.0, "seeds": 2, "loads": [0.3, 0.6, 0.9],
         "trace_users": 6}  # fmt: skip
METRICS = ("response_mean_min", "wait_mean_min", "throughput_per_day", "utilization",
           "offered_load")  # fmt: skip
PAIRED = ("throughput_per_day", "response_mean_min", "wait_mean_min", "utilization")


def open_curve(task: tuple[SiteConfig, list[float]]) -> list[dict[str, Any]]:
    """One seed of the open curves: the site-level EASY trace under each scheduler and load."""
    site, loads = task
    trace = result_trace(run(site.replace(scheduler="EASY")), "site-level EASY")
    rows = []
    for scheduler in SCHEDULERS:
        for load in loads:
            summary = replay(trace, scheduler, procs=site.procs, load=load).summary
            rows.append({"model": "open", "scheduler": scheduler, "level": load,
                         "seed": site.seed, **_metrics(summary.as_dict())})  # fmt: skip
    return rows


def _metrics(summary: dict[str, Any]) -> dict[str, float]:
    """The curves' metrics from a summary (or a sweep's run row)."""
    metrics = {key: summary[key] for key in METRICS if key in summary}
    return {**metrics, "throughput_per_day": 24 * summary["throughput_per_h"]}


def main(argv: list[str] | None = None) -> int:
    args = scenario.parse(scenario.parser(__doc__), argv)
    grid = QUICK if args.quick else FULL
    timer = scenario.Timer()
    seeds = scenario.seeds(args, grid["seeds"])
    base = SiteConfig(model="static", days=grid["days"], warmup_days=1 if args.quick else 7)
    with scenario.progress("closed curves", "runs") as report:
        closed = sweep(
            base, {"scheduler": list(SCHEDULERS), "users": grid["users"]}, seeds=seeds,
            executor=args.executor, workers=args.workers, dask_address=args.dask,
            progress=report,
        )  # fmt: skip
    rows = [{"model": "closed", "scheduler": r["scheduler"], "level": r["users"],
             "seed": r["seed"], **_metrics(r)} for r in closed.runs]  # fmt: skip
    tasks = [(base.replace(users=grid["trace_users"], seed=s), grid["loads"]) for s in seeds]
    for found in scenario.run_all(open_curve, tasks, args, "open curves", "seeds"):
        rows.extend(found)
    summary = summarize_runs(rows, ["model", "scheduler", "level"], METRICS)
    print(table(
        ("Model", "Scheduler", "Users/Load", "n", "Offered load", "Utilization",
         "Jobs/day", "Avg.Response(min)", "Avg.Wait(min)"),
        [[r["model"], r["scheduler"], f"{r['level']:g}", r["n"], r["offered_load"],
          r["utilization"], r["throughput_per_day"], r["response_mean_min"], r["wait_mean_min"]]
         for r in summary],
    ))  # fmt: skip
    closed_rows = [r for r in rows if r["model"] == "closed"]
    paired = paired_differences(closed_rows, ["scheduler", "level"], "scheduler", "EASY",
                                PAIRED, relative=True)  # fmt: skip
    print("\nClosed, FCFS relative to EASY, % (paired by seed):")
    print(table(("Users", *PAIRED),
                [[r["level"], *(scenario.pm(r, f"{m}_rel_pct") for m in PAIRED)]
                 for r in paired]))  # fmt: skip
    print(f"({timer.seconds:.0f} s)")
    data = {"grid": grid, "seed": args.seed, "runs": rows, "summary": summary,
            "fcfs_vs_easy": paired}  # fmt: skip
    scenario.publish(
        args.out, data, name="load_curves",
        tables={"load_curves.csv": rows, "summary.csv": summary},
        figures={f"{m}.png": (lambda path, m=m: figure(summary, m, path))
                 for m in ("response_mean_min", "wait_mean_min", "throughput_per_day",
                           "utilization")},
    )  # fmt: skip
    return 0


TITLES = {
    "response_mean_min": "mean response (min)", "wait_mean_min": "mean wait (min)",
    "throughput_per_day": "throughput (jobs per 24 h)", "utilization": "utilization",
}  # fmt: skip


def figure(summary, metric, path):  # type: ignore[no-untyped-def]
    """One metric against offered load (closed and open), and against users (closed): a 16:9
    slide. Open replays whose lines coincide (every scheduler's throughput is the trace's)
    stay visible: hollow markers of two sizes."""
    import matplotlib

    from sitesim.figures import (
        SLIDE_STYLE,
        legend_below,
        lines_with_ci,
        log_scale,
        save,
        slide,
    )

    with matplotlib.rc_context(SLIDE_STYLE):
        fig, (by_load, by_users) = slide(1, 2)
        colors = dict(zip(("FCFS", "EASY"), ("#0072b2", "#d55e00"), strict=True))
        for name in ("FCFS", "EASY"):
            for model in ("closed", "open"):
                rows = [{**r, "x": r["offered_load"]} for r in summary
                        if r["model"] == model and r["scheduler"] == name]  # fmt: skip
                style = (dict(ls="-", marker="o") if model == "closed" else
                         dict(ls="--", marker="s" if name == "FCFS" else "^", mfc="none",
                              ms=11 if name == "FCFS" else 6))  # fmt: skip
                lines_with_ci(by_load, rows, "x", metric, "scheduler", label=f"{{}}, {model}",
                              color=colors[name], **style)  # fmt: skip
            closed = [r for r in summary if r["model"] == "closed" and r["scheduler"] == name]
            lines_with_ci(by_users, closed, "level", metric, "scheduler", label="{}, closed",
                          color=colors[name], marker="o")  # fmt: skip
        if metric.endswith("_min"):
            log_scale(by_load, "y")
            log_scale(by_users, "y")
        by_load.set_xlabel("offered load")
        by_users.set_xlabel("static users (closed)")
        for ax in (by_load, by_users):
            ax.set_ylabel(TITLES[metric])
            ax.grid(alpha=0.3)
        legend_below(fig, by_load, ncols=4)
        fig.suptitle(f"{TITLES[metric]}: users in the loop (closed) versus trace compression "
                     "(open)")  # fmt: skip
    return save(fig, path)


if __name__ == "__main__":
    sys.exit(main())
