"""Experiment 5: microeconomic scheduling (Stoica & Pothen) on the synthetic workload.

128 processors, 10 users, the synthetic workload of experiments.md §5 (Poisson arrivals in
three classes, two-phase hyperexponential service times, exact estimates) in its five
configurations at offered loads 0.1-0.9. Six policies: FCFS; RES, FCFS with a reservation
(run as EASY, which ECON with zero income reproduces exactly: a property test); SCDF (smallest
size x estimate first, no backfilling); and ECON, the microeconomic scheduler (100 $/min per
user, savings capped at a day of income) with its three transfer policies, ECON_PROP,
ECON_CONST and ECON_INV. Horizon 500,000 minutes; the first 50,000 (10 %) are warm-up. Reported
per configuration, load and policy: mean response S-bar, mean response / runtime U-bar,
maximum wait and utilization, and for ECON the system income and the fragmentation charges,
with 95 % intervals by Student's t over 8 seeds. Seed k draws the same jobs under every
policy, so each policy is also compared with RES seed by seed: S-bar, U-bar and maximum wait
in % of RES's, utilization as a difference (docs/results/microeconomic.md).

    python scenarios/microeconomic.py [--quick] [--out DIR] [--seed S] [--seeds N]
                                      [--serial | --workers N | --dask ...]

--quick: configuration 1 only, loads 0.3, 0.6 and 0.9, 50,000 minutes, two seeds.
"""

from __future__ import annotations

import math
import sys
from typing import Any

from sitesim.cli import scenario
from sitesim.cli.scenario import pm
from sitesim.results.report import table
from sitesim.runs.config import SiteConfig
from sitesim.sweeps.sweep import paired_differences, summarize_runs, sweep

MINUTES_PER_DAY = 1440.0
PROCS = 128
#: Policy labels in report order; RES is EASY (= ECON with zero income).
POLICIES = ("FCFS", "RES", "SCDF", "ECON_PROP", "ECON_CONST", "ECON_INV")
FULL = {"configurations": [1, 2, 3, 4, 5], "minutes": 500_000.0, "warmup_minutes": 50_000.0,
        "loads": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]}  # fmt: skip
QUICK = {"configurations": [1], "minutes": 50_000.0, "warmup_minutes": 5_000.0,
         "loads": [0.3, 0.6, 0.9]}  # fmt: skip
METRICS = ("response_mean_min", "slowdown_mean", "wait_max_min", "utilization",
           "offered_load", "wait_mean_min", "bsld_mean", "jobs")  # fmt: skip
#: ECON's counters (whole run, warm-up included).
ECON_METRICS = ("scheduler_system_income", "scheduler_fragmentation_charge",
                "scheduler_fragmentation_proc_s", "scheduler_fragmented_jobs",
                "fragmentation_share")  # fmt: skip


def policy(row: dict[str, Any]) -> str:
    """The policy label of a sweep row."""
    scheduler = str(row["scheduler"])
    if scheduler == "ECON":
        return f"ECON_{str(row['transfer']).upper()}"
    return "RES" if scheduler == "EASY" else scheduler


def with_econ_columns(row: dict[str, Any], minutes: float) -> dict[str, Any]:
    """A run row labelled by policy, with ECON's counters (NaN for the other policies) and the
    fragmentation as a share of the machine's capacity over the horizon."""
    out = {**row, "policy": policy(row)}
    for name in ECON_METRICS[:-1]:
        out.setdefault(name, math.nan)
    out["fragmentation_share"] = out["scheduler_fragmentation_proc_s"] / (PROCS * minutes * 60.0)
    return out


def against_res(runs: list[dict[str, Any]], keys: list[str]) -> list[dict[str, Any]]:
    """Every policy against RES with the same seed (the same jobs): S-bar, U-bar and maximum
    wait as 100 x (policy / RES - 1), utilization as policy - RES; means and 95 % intervals."""
    relative = paired_differences(
        runs, keys, "policy", "RES", ("response_mean_min", "slowdown_mean", "wait_max_min"),
        relative=True,
    )  # fmt: skip
    absolute = paired_differences(runs, keys, "policy", "RES", ("utilization",))
    rank = {name: k for k, name in enumerate(POLICIES)}
    rows = [{**a, **b} for a, b in zip(relative, absolute, strict=True)]
    return sorted(rows, key=lambda r: (r["synthetic_config"], r["load"], rank[r["policy"]]))


def main(argv: list[str] | None = None) -> int:
    args = scenario.parse(scenario.parser(__doc__, replications=(8, 2)), argv)
    timer = scenario.Timer()
    grid = QUICK if args.quick else FULL
    base = SiteConfig(
        model="synthetic", users=10, procs=PROCS, estimates="exact",
        days=grid["minutes"] / MINUTES_PER_DAY,
        warmup_days=grid["warmup_minutes"] / MINUTES_PER_DAY,
    )  # fmt: skip
    factors = {"synthetic_config": grid["configurations"], "load": grid["loads"],
               "scheduler": ["FCFS", "EASY", "SCDF", "ECON"],
               "transfer": ["prop", "const", "inv"]}  # fmt: skip
    seeds = scenario.seeds(args)
    with scenario.progress("microeconomic", "runs") as report:
        result = sweep(base, factors, seeds=seeds, executor=args.executor, workers=args.workers,
                       dask_address=args.dask, progress=report)  # fmt: skip
    if result.failed:
        for name, error in result.failed:
            print(f"{name} failed:\n{error}", file=sys.stderr)
        return 1
    runs = [with_econ_columns(row, grid["minutes"]) for row in result.runs]
    keys = ["synthetic_config", "load", "policy"]
    summary = summarize_runs(runs, keys, METRICS + ECON_METRICS)
    rank = {name: k for k, name in enumerate(POLICIES)}
    summary.sort(key=lambda r: (r["synthetic_config"], r["load"], rank[r["policy"]]))
    print(table(
        ("Config", "Load", "Policy", "n", "S(min)", "U", "Max.Wait(min)", "Utilization",
         "Avg.Wait(min)"),
        [[r["synthetic_config"], r["load"], r["policy"], r["n"], pm(r, "response_mean_min"),
          pm(r, "slowdown_mean"), pm(r, "wait_max_min"), pm(r, "utilization", ".3f"),
          pm(r, "wait_mean_min")] for r in summary],
    ))  # fmt: skip
    paired = against_res(runs, keys)
    print("\nAgainst RES, paired by seed (S, U, max wait: % of RES's; utilization: difference)")
    print(table(
        ("Config", "Load", "Policy", "n", "S(%)", "U(%)", "Max.Wait(%)", "Utilization"),
        [[r["synthetic_config"], r["load"], r["policy"], r["n"],
          pm(r, "response_mean_min_rel_pct", "+.1f"), pm(r, "slowdown_mean_rel_pct", "+.1f"),
          pm(r, "wait_max_min_rel_pct", "+.1f"), pm(r, "utilization_diff", "+.4f")]
         for r in paired],
    ))  # fmt: skip
    econ = [r for r in summary if r["policy"].startswith("ECON")]
    print("\nECON (whole run, warm-up included)")
    print(table(
        ("Config", "Load", "Policy", "System income(M$)", "Fragm. charge($)",
         "Fragm. idle (% capacity)", "Fragmented jobs"),
        [[r["synthetic_config"], r["load"], r["policy"],
          f"{r['scheduler_system_income'] / 1e6:.2f}",
          pm(r, "scheduler_fragmentation_charge", ".3g"),
          f"{100 * r['fragmentation_share']:.2f}", pm(r, "scheduler_fragmented_jobs", ".0f")]
         for r in econ],
    ))  # fmt: skip
    print(f"{len(runs)} runs in {timer.seconds:.0f} s")
    configurations = grid["configurations"]
    scenario.publish(
        args.out,
        {"config": base.to_dict(), "factors": factors, "policies": list(POLICIES),
         "seeds": seeds, "runs": runs, "summary": summary, "against_res": paired,
         "wall_s": timer.seconds},
        name="microeconomic",
        tables={"runs.csv": runs, "summary.csv": summary, "against_res.csv": paired},
        figures={f"config{c}.png": (lambda path, c=c: figure(summary, c, path))
                 for c in configurations},
    )  # fmt: skip
    return 0


#: The panels of a configuration's figure: metric, title, log scale.
PANELS = (("response_mean_min", "S̄: mean response (min)", True),
          ("slowdown_mean", "Ū: mean response / runtime", True),
          ("wait_max_min", "maximum wait (min)", True),
          ("utilization", "utilization", False))  # fmt: skip


def figure(summary, configuration, path):  # type: ignore[no-untyped-def]
    """S̄, Ū, maximum wait and utilization against offered load, a line per policy."""
    from sitesim.figures import grid, lines_with_ci, log_scale, save

    rows = [row for row in summary if row["synthetic_config"] == configuration]
    fig, axes = grid(len(PANELS), width=4.6, height=3.4, cols=2)
    for ax, (metric, title, log) in zip(axes, PANELS, strict=True):
        lines_with_ci(ax, rows, "load", metric, "policy")
        if log:
            log_scale(ax, "y")
        else:
            ax.plot([0, 1], [0, 1], color="k", lw=0.6, ls=":", label="offered load")
            ax.set_xlim(0, 1)
            ax.set_ylim(0, 1)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("offered load")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"Configuration {configuration}: 128 processors, 10 users", fontsize=10)
    return save(fig, path)


if __name__ == "__main__":
    sys.exit(main())
