"""Experiment 6 (b): how robust utility-based schedulers are to inaccurate information.

A real trace (SDSC-BLUE; else the first of SDSC-SP2, CTC-SP2, KTH-SP2 present, stated) is cut
into windows of 2,000 consecutive jobs; the window of lowest offered load is the *light*
regime (demand met), the one of highest offered load the *loaded* regime (demand exceeds
capacity), and the loaded window with inter-arrival times halved the *extreme* one
(utility.md §5). Every job gets a utility function of the robustness study's mix (linear,
convex or flat, a third each, with its Lee & Snavely start value and deadline), a fresh set per
seed; jobs that can no longer earn anything are cancelled. FCFS+EASY, PRIO with static levels,
PRIO with demand levels and FirstPrice see the values users state: under user uncertainty k
(stated percentile ~ Normal(true percentile, k/2)) from 0 to 1, or under wealth inequity (a
share k of the users worth about nothing) from 0 to 1. Reported: the competitive ratio
against FCFS+EASY on the same jobs (paired by seed) and the utility share of the users (mean,
min, max), with 95 % intervals by Student's t (docs/results/utility-robustness.md).

    python scenarios/utility_robustness.py [--quick] [--out DIR] [--seed S] [--seeds N]
                                           [--trace NAME]
                                           [--serial | --workers N | --dask ...]

--trace replays the trace named (SDSC-BLUE, SDSC-SP2, CTC-SP2 or KTH-SP2) and no other.
--quick uses windows of 300 jobs, three uncertainty levels, one wealth level and two seeds.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

from sitesim.cli import scenario
from sitesim.cli.scenario import pm
from sitesim.results.report import table
from sitesim.runs.config import ReplayConfig
from sitesim.runs.replay import machine_size
from sitesim.sweeps.sweep import summarize_runs, with_competitive_ratios
from sitesim.workload.swf import SWFTrace, read_swf

TRACES = Path(__file__).resolve().parents[1].parent / "shared" / "traces"
CHOICES = ("SDSC-BLUE-2000-4.2-cln.swf.gz", "SDSC-SP2-1998-4.2-cln.swf.gz",
           "CTC-SP2-1996-3.1-cln.swf.gz", "KTH-SP2-1996-2.1-cln.swf.gz")  # fmt: skip
#: --trace NAME -> file name
TRACE_NAMES = {name.rsplit("-", 3)[0]: name for name in CHOICES}
#: scheduler label -> (scheduler, parameters)
SCHEDULERS: dict[str, tuple[str, dict[str, Any]]] = {
    "FCFS+EASY": ("EASY", {}),
    "PRIO static": ("PRIO", {"levels": "static"}),
    "PRIO demand": ("PRIO", {"levels": "demand"}),
    "FirstPrice": ("FIRSTPRICE", {}),
}
FULL = {"window": 2000, "uncertainty": [0.0, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0],
        "wealth_gini": [0.2, 0.4, 0.6, 0.8, 1.0]}  # fmt: skip
QUICK = {"window": 300, "uncertainty": [0.0, 0.5, 1.0], "wealth_gini": [0.6]}
SHOWN = ("competitive_ratio", "utility_share_mean", "utility_share_min", "utility_share_max",
         "utility_earned_mean_pct", "utility_total", "jobs_cancelled", "wait_mean_min",
         "utilization")  # fmt: skip


def window_loads(trace: SWFTrace, procs: int, window: int) -> np.ndarray:
    """The offered load of each window of ``window`` consecutive job lines:
    Σ size · runtime / (procs · submit span), jobs that never ran counting nothing."""
    submit = trace.column("submit")
    work = np.maximum(trace.column("runtime"), 0) * np.maximum(trace.column("procs"), 0)
    starts = np.arange(0, len(trace) - window + 1, window)
    spans = submit[starts + window - 1] - submit[starts]
    sums = np.add.reduceat(work[: starts[-1] + window], starts)
    return np.asarray(sums / (procs * np.maximum(spans, 1.0)))


def regimes(trace: SWFTrace, procs: int, window: int) -> dict[str, dict[str, Any]]:
    """light, loaded and extreme: job lines, inter-arrival factor and offered load."""
    loads = window_loads(trace, procs, window)
    light, loaded = int(np.argmin(loads)), int(np.argmax(loads))
    pick = {"light": (light, 1.0), "loaded": (loaded, 1.0), "extreme": (loaded, 0.5)}
    return {
        name: {"start_job": k * window, "stop_job": (k + 1) * window, "scale": factor,
               "offered_load": float(loads[k]) / factor}
        for name, (k, factor) in pick.items()
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = scenario.parser(__doc__, replications=(5, 2))
    p.add_argument("--trace", choices=list(TRACE_NAMES), help="this trace and no other")
    args = scenario.parse(p, argv)
    timer = scenario.Timer()
    grid = QUICK if args.quick else FULL
    path = scenario.real_trace(TRACES, [TRACE_NAMES[args.trace]] if args.trace else CHOICES)
    if path is None:
        return 2
    trace = read_swf(path)
    chosen = regimes(trace, machine_size(trace, None), grid["window"])
    for name, regime in chosen.items():
        print(f"{name}: job lines {regime['start_job']}:{regime['stop_job']}, inter-arrival x "
              f"{regime['scale']:g}, offered load {regime['offered_load']:.2f}")  # fmt: skip
    base = ReplayConfig(trace=str(path), utility="mix", cancel_expired=True)
    inaccuracy = [("uncertainty", k) for k in grid["uncertainty"]] + [
        ("wealth_gini", k) for k in grid["wealth_gini"]
    ]
    seeds = scenario.seeds(args)
    labels = [(regime, model, k, label, seed) for regime in chosen for model, k in inaccuracy
              for label in SCHEDULERS for seed in seeds]  # fmt: skip
    configs = [
        base.replace(
            **{key: chosen[regime][key] for key in ("start_job", "stop_job", "scale")},
            scheduler=SCHEDULERS[label][0], scheduler_params=SCHEDULERS[label][1], seed=seed,
            **{model: k},
        )
        for regime, model, k, label, seed in labels
    ]  # fmt: skip
    summaries = scenario.run_all(scenario.summary_row, configs, args, "robustness", "runs")
    runs = [
        {"regime": regime, "model": "uncertainty" if model == "uncertainty" else "wealth",
         "k": k, "scheduler": label, **summary, "seed": seed}
        for (regime, model, k, label, seed), summary in zip(labels, summaries, strict=True)
    ]  # fmt: skip
    runs = with_competitive_ratios(runs, ["regime", "model", "k", "scheduler"], "FCFS+EASY")
    factors = ["regime", "model", "k", "scheduler"]
    summary = summarize_runs(runs, factors, SHOWN)
    exact = [row for row in summary if row["model"] == "uncertainty"]
    with_zero = (
        exact
        + [{**row, "model": "wealth"} for row in exact if row["k"] == 0.0]
        + [row for row in summary if row["model"] == "wealth"]
    )
    print(table(
        ("Regime", "Inaccuracy", "k", "Scheduler", "n", "Competitive ratio", "Share mean",
         "Share min", "Share max", "Earned(%)", "Cancelled"),
        [[r["regime"], r["model"], r["k"], r["scheduler"], r["n"],
          pm(r, "competitive_ratio", ".3f"), pm(r, "utility_share_mean", ".3f"),
          pm(r, "utility_share_min", ".3f"), pm(r, "utility_share_max", ".3f"),
          pm(r, "utility_earned_mean_pct", ".1f"), pm(r, "jobs_cancelled", ".0f")]
         for r in summary],
    ))  # fmt: skip
    print(f"{len(runs)} runs in {timer.seconds:.0f} s")
    scenario.publish(
        args.out,
        {"trace": path.name, "regimes": chosen, "seeds": seeds, "runs": runs,
         "summary": summary},
        name="utility_robustness",
        tables={"runs.csv": runs, "summary.csv": summary},
        figures={
            "competitive_ratio.png": lambda out: figure(with_zero, "competitive_ratio", out),
            "utility_share.png": lambda out: figure(with_zero, "utility_share_mean", out),
        },
    )  # fmt: skip
    return 0


def figure(summary, metric, path):  # type: ignore[no-untyped-def]
    """``metric`` against k: a row per inaccuracy model, a column per regime, a line per
    scheduler."""
    from sitesim.figures import grid, lines_with_ci, save

    regimes_ = list(dict.fromkeys(row["regime"] for row in summary))
    models = ("uncertainty", "wealth")
    fig, axes = grid(len(models) * len(regimes_), width=4.0, height=3.2, cols=len(regimes_))
    titles = {"uncertainty": "user uncertainty k", "wealth": "wealth inequity (Gini) k"}
    for m, model in enumerate(models):
        for r, regime in enumerate(regimes_):
            ax = axes[m * len(regimes_) + r]
            rows = [row for row in summary if row["model"] == model and row["regime"] == regime]
            lines_with_ci(ax, rows, "k", metric, "scheduler")
            if metric == "competitive_ratio":
                ax.axhline(1.0, color="k", lw=0.8)
            ax.set_title(f"{regime}", fontsize=9)
            ax.set_xlabel(titles[model])
            ax.set_ylabel(metric.replace("_", " "))
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
    return save(fig, path)


if __name__ == "__main__":
    sys.exit(main())
