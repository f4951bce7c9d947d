"""Experiment 2: load scaling violations, when a compressed trace breaks its users' dependencies.

Site-level runs of 10 static users under FCFS and under EASY write traces whose fields 17/18
record which job each job waited for. Each trace is replayed open under FCFS and under EASY,
its inter-arrival times scaled to offered loads 0.2-0.9. Counted, as fractions of the jobs:
submission-dependency violations (a job submitted while the job it depends on is still queued
or running) and execution-ordering violations (a job started while the job it depends on is
still queued). The site-level runs themselves have none, by construction: checked. 5 seeds,
182 days (experiments.md §2; docs/results/violations.md).

    python scenarios/violations.py [--quick] [--out DIR] [--seed S] [--serial | --workers N]
"""

from __future__ import annotations

import sys
from typing import Any

from sitesim.cli import scenario
from sitesim.results.report import result_trace, table
from sitesim.runs.config import SiteConfig
from sitesim.runs.replay import replay
from sitesim.runs.runner import run
from sitesim.sweeps.sweep import summarize_runs

SCHEDULERS = ("FCFS", "EASY")
FULL = {"users": 10, "days": 182.0, "loads": [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9], "seeds": 5}
QUICK = {"users": 6, "days": 14.0, "loads": [0.3, 0.6, 0.9], "seeds": 2}
METRICS = ("submission_violations", "ordering_violations", "wait_mean_min", "utilization")


def one_seed(task: tuple[SiteConfig, list[float]]) -> list[dict[str, Any]]:
    """Both site-level runs of a seed and every replay of their traces (runs in a worker)."""
    site, loads = task
    rows = []
    for source in SCHEDULERS:
        result = run(site.replace(scheduler=source))
        trace = result_trace(result, f"site-level {source}")
        original = None
        for target in SCHEDULERS:
            unscaled = replay(trace, target, procs=site.procs)  # the trace's own load
            original = unscaled.workload["offered_load"]
            rows.append(_row(source, target, "original", original, original, site.seed, unscaled))
            for load in loads:
                replayed = replay(trace, target, procs=site.procs, load=load)
                rows.append(_row(source, target, "scaled", load, original, site.seed, replayed))
        rows.append(_row(source, "site-level", "site", original, original, site.seed, result))
    return rows


def _row(source, target, kind, load, original, seed, result) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    s = result.summary
    return {
        "trace_of": source, "replayed_under": target, "kind": kind, "load": round(load, 6),
        "original_load": original, "seed": seed, "dependent_jobs": s.dependent_jobs,
        **{metric: getattr(s, metric) for metric in METRICS},
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    args = scenario.parse(scenario.parser(__doc__), argv)
    grid = QUICK if args.quick else FULL
    timer = scenario.Timer()
    base = SiteConfig(model="static", users=grid["users"], days=grid["days"])
    tasks = [(base.replace(seed=s), grid["loads"]) for s in scenario.seeds(args, grid["seeds"])]
    rows = [row for found in scenario.run_all(one_seed, tasks, args, "violations", "seeds")
            for row in found]  # fmt: skip
    scaled = [row for row in rows if row["kind"] == "scaled"]
    summary = summarize_runs(scaled, ["trace_of", "replayed_under", "load"], METRICS)
    originals = summarize_runs(
        [row for row in rows if row["kind"] in ("site", "original")],
        ["trace_of", "replayed_under"], [*METRICS, "load"],
    )  # fmt: skip
    print(table(
        ("Trace of", "Replayed under", "Load", "n", "Submission viol.(%)", "Ordering viol.(%)"),
        [[r["trace_of"], r["replayed_under"], f"{r['load']:.3f}", r["n"],
          _pct(r, "submission_violations"), _pct(r, "ordering_violations")]
         for r in originals + summary],
    ))  # fmt: skip
    site_level = [row for row in rows if row["kind"] == "site"]
    clean = all(r["submission_violations"] == r["ordering_violations"] == 0 for r in site_level)
    print(f"site-level runs without violations: {clean} ({len(site_level)} runs); "
          f"{timer.seconds:.0f} s")  # fmt: skip
    data = {"grid": grid, "seed": args.seed, "site_level_clean": clean, "runs": rows,
            "summary": summary, "original_loads": originals}  # fmt: skip
    scenario.publish(
        args.out, data, name="violations",
        tables={"violations.csv": rows, "summary.csv": summary},
        figures={"violations.png": lambda path: figure(summary, originals, path)},
    )  # fmt: skip
    return 0


def _pct(row: dict[str, Any], key: str) -> str:
    half = row[f"{key}_ci95"]
    return f"{100 * row[key]:.2f}" + (f" ± {100 * half:.2f}" if half == half else "")


def figure(summary, originals, path):  # type: ignore[no-untyped-def]
    """Violations against offered load: one panel per trace, one line per replay scheduler and
    kind; the trace's own load marked."""
    from sitesim.figures import grid, lines_with_ci, save

    fig, axes = grid(len(SCHEDULERS), width=5.2, height=3.8)
    for ax, source in zip(axes, SCHEDULERS, strict=True):
        for metric, style in (("submission_violations", "-"), ("ordering_violations", "--")):
            rows = [
                {**r, metric: 100 * r[metric], f"{metric}_ci95": 100 * r[f"{metric}_ci95"]}
                for r in summary if r["trace_of"] == source
            ]  # fmt: skip
            kind = "submission" if metric.startswith("sub") else "ordering"
            lines_with_ci(ax, rows, "load", metric, "replayed_under",
                          label=f"{{}} replay, {kind}", ls=style)  # fmt: skip
        own = [r["load"] for r in originals if r["trace_of"] == source]
        ax.axvline(sum(own) / len(own), color="grey", ls=":", label="the trace's own load")
        ax.set_title(f"trace of site-level {source}", fontsize=10)
        ax.set_xlabel("offered load of the replay")
        ax.set_ylabel("jobs violating a dependency (%)")
        ax.set_ylim(0, 100)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    return save(fig, path)


if __name__ == "__main__":
    sys.exit(main())
