"""Experiment 1: open versus closed evaluation, the prediction error of a trace replay.

Site-level runs of static users under EASY and under FCFS; each run's trace replayed open under
the other scheduler (the conventional prediction) and compared with the other scheduler's own
site-level run: the error |conventional - site-level| / site-level of mean response, wait and
slowdown, over user counts 2-12 and horizons of 28, 91 and 182 days, 5 seeds each
(experiments.md §1; docs/results/open-vs-closed.md).

    python scenarios/open_vs_closed.py [--quick] [--out DIR] [--seed S] [--serial | --workers N]

It runs `sitesim compare` over that grid. Static users have one feedback loop only: they wait
for their jobs, in one endless session. A second part takes complete users (20, 91 days, 10
seeds: the tutorial's site, section 5), whose slow responses also end sessions, and separates
the two loops: EASY's gain over FCFS and the prediction errors with both loops and with session
aborts switched off (p_cont = 0.8 whatever the response), paired by seed (loops.json,
loops_gains.csv, loops_errors.csv).
"""

from __future__ import annotations

import sys
from typing import Any

from sitesim.cli import scenario
from sitesim.cli.main import main as sitesim
from sitesim.errors import SitesimError
from sitesim.results.report import table
from sitesim.runs.config import SiteConfig
from sitesim.sweeps.compare import METRICS, ComparePoint, compare_point
from sitesim.sweeps.replications import paired_differences, summarize_runs

FULL = {"users": "2-12", "step": "2", "days": "28,91,182", "seeds": "5"}
QUICK = {"users": "2-6", "step": "4", "days": "14", "seeds": "2"}
#: The two-loop part: complete users (users, days, seeds).
LOOPS_FULL, LOOPS_QUICK = (20, 91.0, 10), (6, 14.0, 2)
GAINS = ("throughput_per_h", "jobs_per_session", "utilization", "response_mean_min")
ERRORS = tuple(f"signed_{metric}_pct" for metric in METRICS)


def main(argv: list[str] | None = None) -> int:
    args = scenario.parse(scenario.parser(__doc__), argv)
    grid = QUICK if args.quick else FULL
    command = ["compare", "--schedulers", "EASY,FCFS", "--seed", str(args.seed)]
    command += [item for key, value in grid.items() for item in (f"--{key}", value)]
    if args.quick:
        command += ["--warmup", "1"]
    command += scenario.executor_argv(args)
    if args.out is not None:
        command += ["--out", str(args.out)]
    status = sitesim(command)
    if status == 0:
        two_loops(args)
    return status


def loop_point(config: SiteConfig) -> dict[str, Any]:
    """One seed and p_cont setting (a worker's task): both site-level runs' summaries and the
    prediction errors of both directions."""
    errors = compare_point(ComparePoint(config, "EASY", "FCFS"))
    if isinstance(errors, str):
        raise SitesimError(errors)
    sites = [scenario.summary_row(config.replace(scheduler=name)) for name in ("FCFS", "EASY")]
    return {"sites": sites, "errors": errors}


def two_loops(args: Any) -> None:
    """The second part: the two feedback loops of complete users told apart."""
    users, days, count = LOOPS_QUICK if args.quick else LOOPS_FULL
    plan = [(loops, SiteConfig(model="complete", users=users, days=days, seed=seed,
                               warmup_days=1 if args.quick else 7, pcont_a=a, pcont_b=b))
            for seed in scenario.seeds(args, count)
            for loops, (a, b) in scenario.LOOPS.items()]  # fmt: skip
    points = scenario.run_all(loop_point, [c for _, c in plan], args, "two loops", "points")
    runs, errors = [], []
    for (loops, config), point in zip(plan, points, strict=True):
        for name, row in zip(("FCFS", "EASY"), point["sites"], strict=True):
            runs.append({"loops": loops, "scheduler": name, "seed": config.seed, **row})
        errors += [{"loops": loops, **row} for row in point["errors"]]
    gains = scenario.loop_split(runs, GAINS)
    by_loops = summarize_runs(errors, ("direction", "loops"), ERRORS)
    differences = paired_differences(errors, ("direction", "loops"), "loops", "aborts off",
                                     ERRORS)  # fmt: skip
    print(f"\n{users} complete users, {days:g} days, {count} seeds: EASY's gain over FCFS, % "
          "(paired by seed; difference in percentage points)")  # fmt: skip
    print(table(("Loops", *GAINS), [[r["loops"], *(scenario.pm(r, m) for m in GAINS)]
                                             for r in gains]))  # fmt: skip
    print("\nSigned prediction errors, % (difference: both loops minus aborts off, paired)")
    rows = [[r["direction"], r["loops"], *(scenario.pm(r, m) for m in ERRORS)] for r in by_loops]
    rows += [[r["direction"], "difference", *(scenario.pm(r, f"{m}_diff") for m in ERRORS)]
             for r in differences]  # fmt: skip
    print(table(("Direction", "Loops", *ERRORS), rows))
    data = {"users": users, "days": days, "seeds": scenario.seeds(args, count),
            "loops": scenario.LOOPS, "runs": runs, "errors": errors, "gains": gains,
            "error_means": by_loops, "error_differences": differences}  # fmt: skip
    scenario.publish(args.out, data, name="loops",
                     tables={"loops_gains.csv": gains, "loops_errors.csv": errors})  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
