"""Experiment 6 (a): utility-based scheduling of a real trace, after Lee & Snavely.

SDSC-BLUE's job lines 5,000 to 9,999 (0-based; SDSC-SP2's if SDSC-BLUE is absent, stated)
are given synthetic Lee & Snavely utility functions (utility.md §2; priority levels from the
queue names), a fresh set per seed, and replayed open under EASY, conservative backfilling,
Priority-FIFO (PRIORITY) and the GA. One factor at a time around the baseline (decay types a
third each, deadline factor 2, the trace's timestamps and requested times): each decay type
alone; deadline factor 1 and 3; inter-arrival times x 1.25 and x 0.8 (lighter and heavier
load); exact runtimes as estimates; inter-arrival times x 2, Lee & Snavely's load (their 5,000
jobs span 43 days at utilization 0.36, these 22 days at 0.71), with requested and with exact
runtimes as estimates; exact estimates at inter-arrival x 0.8. Reported per setting and
scheduler: mean wait, expansion factor ((wait + runtime) / runtime; median and 98th
percentile), bounded slowdown, utilization, makespan, % of start value earned (percentiles),
aggregate utility, and the competitive ratio against EASY (paired by seed), with 95 %
intervals by Student's t over the seeds (docs/results/utility-lee-snavely.md).

    python scenarios/utility_lee_snavely.py [--quick] [--out DIR] [--seed S] [--seeds N]
                                            [--setting NAME ...]
                                            [--serial | --workers N | --dask ...]

The spec augments the trace twice; the default of three seeds adds one for the intervals.
--setting (repeatable) runs only the settings named (the baseline is not added). --quick
replays 300 jobs, three settings (unless --setting names others), two seeds, the GA evolving
25 generations a pass.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from sitesim.cli import scenario
from sitesim.cli.scenario import pm
from sitesim.results.report import table
from sitesim.runs.config import ReplayConfig
from sitesim.sweeps.sweep import summarize_runs, with_competitive_ratios

TRACES = Path(__file__).resolve().parents[1].parent / "shared" / "traces"
CHOICES = ("SDSC-BLUE-2000-4.2-cln.swf.gz", "SDSC-SP2-1998-4.2-cln.swf.gz")
JOBS = (5000, 10000)
QUICK_JOBS = (5000, 5300)
SCHEDULERS = ("EASY", "CONSERVATIVE", "PRIORITY", "GA")
#: One factor at a time around the baseline (the first).
SETTINGS: dict[str, dict[str, Any]] = {
    "baseline": {},
    "decay linear": {"utility_decay": "linear"},
    "decay exponential": {"utility_decay": "exponential"},
    "decay step": {"utility_decay": "step"},
    "deadline factor 1": {"deadline_factor": 1.0},
    "deadline factor 3": {"deadline_factor": 3.0},
    "inter-arrival x 1.25": {"scale": 1.25},
    "inter-arrival x 0.8": {"scale": 0.8},
    "exact estimates": {"estimates": "exact"},
    "inter-arrival x 2": {"scale": 2.0},
    "inter-arrival x 2, exact estimates": {"scale": 2.0, "estimates": "exact"},
    "inter-arrival x 0.8, exact estimates": {"scale": 0.8, "estimates": "exact"},
}
QUICK_SETTINGS = ("baseline", "inter-arrival x 2, exact estimates", "exact estimates")
#: The GA's parameters in --quick (the study's: its defaults, 100 generations a pass).
QUICK_GA = {"generations": 25}
PERFORMANCE = ("wait_mean_min", "slowdown_p50", "slowdown_p98", "bsld_mean", "utilization",
               "makespan_d")  # fmt: skip
UTILITY = ("utility_total", "competitive_ratio", "utility_earned_mean_pct",
           "utility_earned_p25_pct", "utility_earned_p50_pct", "utility_earned_p75_pct",
           "utility_earned_p98_pct", "utility_earned_max_pct", "utility_share_min",
           "utility_share_mean")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = scenario.parser(__doc__, replications=(3, 2))
    p.add_argument("--setting", action="append", choices=list(SETTINGS), metavar="NAME",
                   help="run only this setting (repeatable): " + ", ".join(SETTINGS))  # fmt: skip
    args = scenario.parse(p, argv)
    timer = scenario.Timer()
    trace = scenario.real_trace(TRACES, CHOICES)
    if trace is None:
        return 2
    start, stop = QUICK_JOBS if args.quick else JOBS
    base = ReplayConfig(trace=str(trace), start_job=start, stop_job=stop, utility="lee-snavely")
    settings = chosen_settings(args.quick, args.setting)
    seeds = scenario.seeds(args)
    labels = [(setting, scheduler, seed) for setting in settings for seed in seeds
              for scheduler in SCHEDULERS]  # fmt: skip
    labels.sort(key=lambda label: label[1] != "GA")  # the longest runs first
    configs = [base.replace(**settings[setting], scheduler=scheduler, seed=seed,
                            scheduler_params=QUICK_GA if args.quick and scheduler == "GA" else {})
               for setting, scheduler, seed in labels]  # fmt: skip
    summaries = scenario.run_all(scenario.summary_row, configs, args, "Lee & Snavely", "runs")
    order = {setting: k for k, setting in enumerate(settings)}
    runs = sorted(
        ({"setting": setting, "scheduler": scheduler, **summary, "seed": seed}
         for (setting, scheduler, seed), summary in zip(labels, summaries, strict=True)),
        key=lambda row: (order[row["setting"]], SCHEDULERS.index(row["scheduler"]), row["seed"]),
    )  # fmt: skip
    runs = with_competitive_ratios(runs, ["setting", "scheduler"])
    summary = summarize_runs(runs, ["setting", "scheduler"], [*PERFORMANCE, *UTILITY])
    print(f"{trace.name}, job lines {start}:{stop}, seeds {seeds[0]}-{seeds[-1]}; mean ± 95 % CI")
    print_tables(summary)
    print(f"{len(runs)} runs in {timer.seconds:.0f} s")
    scenario.publish(
        args.out,
        {"trace": trace.name, "jobs": [start, stop], "seeds": seeds, "settings": settings,
         "runs": runs, "summary": summary},
        name="utility_lee_snavely",
        tables={"runs.csv": runs, "summary.csv": summary},
        figures={"competitive_ratio.png": lambda path: figure(summary, path)},
    )  # fmt: skip
    return 0


def chosen_settings(quick: bool, names: list[str] | None) -> dict[str, dict[str, Any]]:
    """The settings to run, in ``SETTINGS``' order: those named, else all (``QUICK_SETTINGS``
    with ``quick``)."""
    wanted = names or (QUICK_SETTINGS if quick else SETTINGS)
    return {name: value for name, value in SETTINGS.items() if name in wanted}


def print_tables(summary: list[dict[str, Any]]) -> None:
    print(table(
        ("Setting", "Scheduler", "n", "Avg.Wait(min)", "EF p50", "EF p98", "Avg.BSLD",
         "Utilization", "Makespan(d)"),
        [[r["setting"], r["scheduler"], r["n"], *(pm(r, m) for m in PERFORMANCE)]
         for r in summary],
    ))  # fmt: skip
    print()
    print(table(
        ("Setting", "Scheduler", "Utility", "Competitive ratio", "Earned mean(%)", "p25", "p50",
         "p75", "p98", "max", "Share min", "Share mean"),
        [[r["setting"], r["scheduler"], pm(r, "utility_total", ".4g"),
          pm(r, "competitive_ratio", ".4f"), *(pm(r, m, ".1f") for m in UTILITY[2:8]),
          *(pm(r, m, ".3f") for m in UTILITY[8:])] for r in summary],
    ))  # fmt: skip


def figure(summary, path):  # type: ignore[no-untyped-def]
    """Competitive ratio against EASY per setting and scheduler, with 95 % intervals."""
    from sitesim.figures import bars_with_ci, grid, save

    fig, (ax,) = grid(1, width=10, height=4.2)
    rows = [row for row in summary if row["scheduler"] != "EASY"]
    bars_with_ci(ax, rows, "setting", "competitive_ratio", "scheduler")
    ax.axhline(1.0, color="k", lw=0.8)
    lows = [row["competitive_ratio"] - row["competitive_ratio_ci95"] for row in rows]
    ax.set_ylim(bottom=max(0.0, min((x for x in lows if x == x), default=1.0) - 0.05))
    ax.set_ylabel("aggregate utility / EASY's")
    ax.set_title("Lee & Snavely utility functions: competitive ratio against EASY", fontsize=10)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8)
    return save(fig, path)


if __name__ == "__main__":
    sys.exit(main())
