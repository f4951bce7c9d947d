"""Experiment 6 (c): utility-based schedulers with complete users in the loop.

Site-level runs (the shipped profile, 128 processors, 91 days after a week of warm-up) where
every job of the complete users carries a Lee & Snavely utility function: a priority level
drawn uniformly from four, a start value by level, size and requested time, a decay type a
third each, and a deadline factor 2 times a wait drawn from the profile's recorded waits (no
original wait exists for a job a simulated user submits). EASY, conservative backfilling,
Priority-FIFO, the GA, PRIO with static and with demand levels, and FirstPrice; 20 and 40 users
(EASY's utilization about 0.64 and 0.89: docs/results/creasy.md, part 2); jobs that can no
longer earn anything kept or cancelled. Reported: aggregate utility and its competitive ratio
against EASY with the same users (paired by seed), % of start value earned, utility share, and
with them what only a closed model measures: throughput, jobs per session, response, with 95 %
intervals by Student's t over the seeds (docs/results/utility-site.md).

    python scenarios/utility_site.py [--quick] [--out DIR] [--seed S] [--seeds N]
                                     [--serial | --workers N | --dask ...]

--quick: 6 users, 7 days, two seeds.
"""

from __future__ import annotations

import sys
from typing import Any

from sitesim.cli import scenario
from sitesim.cli.scenario import pm
from sitesim.results.report import table
from sitesim.runs.config import SiteConfig
from sitesim.sweeps.sweep import sweep

SCHEDULERS = ["EASY", "CONSERVATIVE", "PRIORITY", "GA", "PRIO", "FIRSTPRICE"]
FULL = {"users": [20, 40], "days": 91.0, "warmup_days": 7.0}
QUICK = {"users": [6], "days": 7.0, "warmup_days": 1.0}


def label(row: dict[str, Any]) -> str:
    """The scheduler of a row, with PRIO's levels."""
    return row["scheduler"] + (f" {row['levels']}" if row.get("levels") else "")


def main(argv: list[str] | None = None) -> int:
    args = scenario.parse(scenario.parser(__doc__, replications=(5, 2)), argv)
    timer = scenario.Timer()
    grid = QUICK if args.quick else FULL
    base = SiteConfig(days=grid["days"], warmup_days=grid["warmup_days"], utility=True)
    factors = {"users": grid["users"], "cancel_expired": [False, True],
               "scheduler": SCHEDULERS, "levels": ["static", "demand"]}  # fmt: skip
    seeds = scenario.seeds(args)
    with scenario.progress("site-level utility", "runs") as report:
        result = sweep(base, factors, seeds=seeds, executor=args.executor, workers=args.workers,
                       dask_address=args.dask, progress=report)  # fmt: skip
    summary = [{**row, "scheduler": label(row)} for row in result.summary]
    runs = [{**row, "scheduler": label(row)} for row in result.runs]
    print(table(
        ("Users", "Cancel", "Scheduler", "n", "Utility", "Competitive ratio", "Earned(%)",
         "Share mean", "Share min", "Jobs/h", "Jobs/session", "Avg.Response(min)",
         "Utilization", "Cancelled"),
        [[r["users"], "yes" if r["cancel_expired"] else "no", r["scheduler"], r["n"],
          pm(r, "utility_total", ".4g"), pm(r, "competitive_ratio", ".3f"),
          pm(r, "utility_earned_mean_pct", ".1f"), pm(r, "utility_share_mean", ".3f"),
          pm(r, "utility_share_min", ".3f"), pm(r, "throughput_per_h", ".3f"),
          pm(r, "jobs_per_session", ".3f"), pm(r, "response_mean_min", ".4g"),
          pm(r, "utilization", ".3f"), pm(r, "jobs_cancelled", ".0f")] for r in summary],
    ))  # fmt: skip
    print(f"{len(runs)} runs in {timer.seconds:.0f} s")
    scenario.publish(
        args.out,
        {"config": base.to_dict(), "factors": factors, "seeds": seeds, "runs": runs,
         "summary": summary},
        name="utility_site",
        tables={"runs.csv": runs, "summary.csv": summary},
        figures={"utility_and_throughput.png": lambda path: figure(summary, path)},
    )  # fmt: skip
    return 0


def figure(summary, path):  # type: ignore[no-untyped-def]
    """Aggregate utility against throughput, a point per scheduler with both intervals; a panel
    per user count and cancellation; a 16:9 slide, one legend below the panels."""
    import matplotlib

    from sitesim.figures import OKABE_ITO, SLIDE_STYLE, legend_below, save, slide

    panels = list(dict.fromkeys((row["users"], row["cancel_expired"]) for row in summary))
    names = list(dict.fromkeys(row["scheduler"] for row in summary))
    colors = dict(zip(names, OKABE_ITO, strict=False))
    with matplotlib.rc_context(SLIDE_STYLE):
        fig, axes = slide(2, (len(panels) + 1) // 2)
        for ax, (users, cancel) in zip(axes, panels, strict=False):
            for row in summary:
                if (row["users"], row["cancel_expired"]) != (users, cancel):
                    continue
                ax.errorbar(row["throughput_per_h"], row["utility_total"] / 1e6,
                            xerr=row["throughput_per_h_ci95"],
                            yerr=row["utility_total_ci95"] / 1e6, marker="o",
                            color=colors[row["scheduler"]], label=row["scheduler"])  # fmt: skip
            ax.set_title(f"{users} users, expired jobs {'cancelled' if cancel else 'kept'}")
            ax.set_xlabel("submitted jobs an hour")
            ax.set_ylabel("aggregate utility (10⁶)")
            ax.grid(alpha=0.3)
        legend_below(fig, axes[0], ncols=len(names))
    return save(fig, path)


if __name__ == "__main__":
    sys.exit(main())
