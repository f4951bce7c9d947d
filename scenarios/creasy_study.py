"""Experiment 4: user-aware scheduling, CREASY against EASY, with complete users.

Part 1, as specified: 50-250 complete users (step 50), 182 days, 128 processors, CREASY with
alpha 0 (exactly EASY), 1500, 3000, 4500 and 6000; throughput, utilization, session length,
response and slowdown; per runtime class at 250 users; every metric relative to EASY per alpha,
paired by seed. Part 2, load-matched: the user counts at which EASY's utilization is about
0.3, 0.5, 0.7, 0.85 and 0.95 (found by a scan), and the same comparison there. Part 3, what
makes user-aware scheduling pay: CREASY(6000) against EASY at two load-matched user counts
(EASY utilization about 0.6 and 0.9, found for each setting), one factor at a time around the
shipped workload: runtimes scaled by 1, 1/10, 1/20; batches capped at 16 or 4 jobs; p_cont of
the spec (0.8, 0.05) or fitted to the five study traces (0.775, 0.0284; sitesim analyze); exact
or profile-ratio estimates. A sensitivity analysis, not a calibration: every level is reported.
Part 4: part 1's alpha study again in the one regime where part 3 finds an effect (runtimes
x 1/20), at the user counts where EASY's utilization is about 0.6 and 0.9. 5 seeds, 95 %
intervals by Student's t (experiments.md §4; docs/results/creasy.md).

    python scenarios/creasy_study.py [--part 1|2|3|4|all] [--quick] [--out DIR] [--seed S]
                                     [--serial | --workers N | --dask ...]
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from sitesim import scenario
from sitesim.config import SiteConfig
from sitesim.report import table
from sitesim.runner import run
from sitesim.scenario import pm
from sitesim.sweeps import paired_differences, summarize_runs, sweep

ALPHAS = [0, 1500, 3000, 4500, 6000]
SHOWN = ("throughput_per_h", "utilization", "jobs_per_session", "response_mean_min",
         "slowdown_mean")  # fmt: skip
CLASSES = [f"{c}_{m}" for c in ("short", "medium", "long")
           for m in ("jobs", "response_mean_min", "slowdown_mean")]  # fmt: skip
FULL = {
    "seeds": 5, "days": 182.0, "users": [50, 100, 150, 200, 250],
    "scan": [2, 3, 4, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50], "scan_seeds": 3,
    "targets": [0.3, 0.5, 0.7, 0.85, 0.95],
    "factor_days": 91.0, "factor_targets": [0.6, 0.9], "calibration_days": 56.0,
}  # fmt: skip
QUICK = {
    "seeds": 2, "days": 14.0, "users": [10, 40], "scan": [2, 5, 10, 20], "scan_seeds": 1,
    "targets": [0.3, 0.7], "factor_days": 14.0, "factor_targets": [0.6],
    "calibration_days": 14.0,
}  # fmt: skip
#: Part 3's settings: one factor at a time around the shipped workload (the first, "baseline").
SETTINGS: dict[str, dict[str, Any]] = {
    "baseline": {},
    "runtimes x 1/10": {"runtime_scale": 0.1},
    "runtimes x 1/20": {"runtime_scale": 0.05},
    "batches <= 16": {"max_batch_width": 16},
    "batches <= 4": {"max_batch_width": 4},
    "p_cont fitted to the traces": {"pcont_a": 0.775, "pcont_b": 0.0284},
    "estimates: profile ratio": {"estimates": "ratio"},
}
QUICK_SETTINGS = ("baseline", "runtimes x 1/10", "batches <= 4")
#: Part 4's job-size regime.
SHORT_JOBS = 0.05


def alpha_study(base: SiteConfig, users: list[int], seeds: list[int], args: Any) -> dict[str, Any]:
    """CREASY at every alpha (0 = EASY) and user count: runs, means, and relative to EASY."""
    with scenario.progress("alpha study", "runs") as report:
        result = sweep(
            base.replace(scheduler="CREASY"), {"users": users, "alpha": ALPHAS}, seeds=seeds,
            executor=args.executor, workers=args.workers, dask_address=args.dask,
            progress=report,
        )  # fmt: skip
    summary = summarize_runs(result.runs, ["users", "alpha"])
    relative = paired_differences(
        result.runs, ["users", "alpha"], "alpha", 0, [*SHOWN, *CLASSES[1::3], *CLASSES[2::3]],
        relative=True,
    )  # fmt: skip
    return {"runs": result.runs, "summary": summary, "relative": relative}


def print_alpha_study(study: dict[str, Any]) -> None:
    print(table(
        ("Users", "alpha", "n", "Utilization", "Jobs/h", "Jobs/session", "Avg.Response(min)",
         "Avg.Slowdown"),
        [[r["users"], r["alpha"], r["n"], *(pm(r, m) for m in SHOWN[1:2]),
          pm(r, "throughput_per_h"), *(pm(r, m) for m in SHOWN[2:])]
         for r in study["summary"]],
    ))  # fmt: skip
    print("\nrelative to EASY (alpha = 0), paired by seed, %:")
    print(table(
        ("Users", "alpha", "Jobs/h", "Jobs/session", "Utilization", "Response", "Slowdown"),
        [[r["users"], r["alpha"], *(pm(r, f"{m}_rel_pct", "+.1f") for m in
          ("throughput_per_h", "jobs_per_session", "utilization", "response_mean_min",
           "slowdown_mean"))] for r in study["relative"]],
    ))  # fmt: skip


def by_class(study: dict[str, Any], users: int) -> list[dict[str, Any]]:
    """Per runtime class at ``users``: EASY against CREASY(6000)."""
    return [r for r in study["summary"] if r["users"] == users and r["alpha"] in (0, 6000)]


# -- load matching ------------------------------------------------------------------------------
def utilization_scan(
    base: SiteConfig, counts: list[int], seeds: list[int], args: Any
) -> list[dict[str, Any]]:
    """EASY's mean utilization at each user count."""
    with scenario.progress("utilization scan", "runs") as report:
        result = sweep(
            base.replace(scheduler="EASY"), {"users": counts}, seeds=seeds,
            executor=args.executor, workers=args.workers, dask_address=args.dask,
            progress=report,
        )  # fmt: skip
    return summarize_runs(result.runs, ["users"], ["utilization", "throughput_per_h"])


def matched(scan: list[dict[str, Any]], targets: list[float]) -> dict[float, int]:
    """The user count whose (interpolated) EASY utilization is nearest each target."""
    counts = np.array([row["users"] for row in scan], dtype=float)
    util = np.maximum.accumulate([row["utilization"] for row in scan])  # a monotone envelope
    found = {}
    for target in targets:
        users = np.interp(target, util, counts) if util[-1] >= target else counts[-1]
        found[target] = max(1, round(float(users)))
    return found


def calibrate(task: tuple[SiteConfig, list[float], int]) -> dict[float, int]:
    """For one setting: the user counts that give EASY about each target utilization, by
    doubling then bisection on single runs (a worker's task)."""
    base, targets, start = task
    cache: dict[int, float] = {}

    def utilization(users: int) -> float:
        if users not in cache:
            cache[users] = run(base.replace(users=users, scheduler="EASY")).summary.utilization
        return cache[users]

    found = {}
    for target in targets:
        low, high = 0, max(1, start)
        while utilization(high) < target and high < 5000:
            low, high = high, high * 2
        while high - low > max(1, high // 50):  # 2 % of the count is close enough
            middle = (low + high) // 2
            low, high = (middle, high) if utilization(middle) < target else (low, middle)
        found[target] = high
    return found


def factor_study(grid: dict[str, Any], seeds: list[int], args: Any) -> dict[str, Any]:
    settings = {k: v for k, v in SETTINGS.items() if not args.quick or k in QUICK_SETTINGS}
    base = SiteConfig(days=grid["factor_days"])
    calibration = base.replace(days=grid["calibration_days"], seed=seeds[0])
    tasks = [(calibration.replace(**levels), grid["factor_targets"],
              max(1, round(20 * levels.get("runtime_scale", 1.0) ** -0.5)))
             for levels in settings.values()]  # fmt: skip
    found = scenario.run_all(calibrate, tasks, args, "calibration", "settings")
    counts = dict(zip(settings, found, strict=True))
    rows, gains = [], []
    for name, levels in settings.items():
        for target, users in counts[name].items():
            result = sweep(
                base.replace(users=users, **levels), {"scheduler": ["EASY", "CREASY"]},
                seeds=seeds, executor=args.executor, workers=args.workers,
                dask_address=args.dask,
            )  # fmt: skip
            labelled = [{"setting": name, "target": target, "users": users, **r}
                        for r in result.runs]  # fmt: skip
            rows.extend(labelled)
            (gain,) = paired_differences(
                labelled, ["setting", "target", "scheduler"], "scheduler", "EASY",
                [*SHOWN], relative=True,
            )  # fmt: skip
            easy = summarize_runs([r for r in labelled if r["scheduler"] == "EASY"],
                                  ["setting"], ["utilization", "response_mean_min"])[0]  # fmt: skip
            gains.append({**gain, "users": users, "easy_utilization": easy["utilization"],
                          "easy_response_mean_min": easy["response_mean_min"]})  # fmt: skip
    return {"counts": counts, "runs": rows, "gains": gains}


def print_factor_study(study: dict[str, Any]) -> None:
    print(table(
        ("Setting", "Target", "Users", "EASY util.", "EASY resp.(min)", "Jobs/h gain(%)",
         "Jobs/session gain(%)", "Response(%)", "Slowdown(%)"),
        [[g["setting"], g["target"], g["users"], g["easy_utilization"],
          g["easy_response_mean_min"], pm(g, "throughput_per_h_rel_pct", "+.2f"),
          pm(g, "jobs_per_session_rel_pct", "+.2f"), pm(g, "response_mean_min_rel_pct", "+.1f"),
          pm(g, "slowdown_mean_rel_pct", "+.1f")] for g in study["gains"]],
    ))  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = scenario.parser(__doc__)
    p.add_argument("--part", choices=("1", "2", "3", "4", "all"), default="all")
    args = scenario.parse(p, argv)
    grid = QUICK if args.quick else FULL
    seeds = scenario.seeds(args, grid["seeds"])
    base = SiteConfig(days=grid["days"], warmup_days=1 if args.quick else 7)
    data: dict[str, Any] = {"grid": grid, "seeds": seeds}
    tables: dict[str, Any] = {}
    figures: dict[str, Any] = {}
    if args.part in ("1", "all"):
        timer = scenario.Timer()
        part1 = alpha_study(base, grid["users"], seeds, args)
        part1["seconds"] = timer.seconds
        print(f"== Part 1: {len(part1['runs'])} runs in {part1['seconds']:.0f} s")
        print_alpha_study(part1)
        top = max(grid["users"])
        part1["by_class"] = by_class(part1, top)
        print(f"\nper runtime class at {top} users:")
        print(table(("alpha", *CLASSES), [[r["alpha"], *(r[c] for c in CLASSES)]
                                           for r in part1["by_class"]]))  # fmt: skip
        data["part1"] = part1
        tables.update({"part1_runs.csv": part1["runs"], "part1_summary.csv": part1["summary"],
                       "part1_relative.csv": part1["relative"]})  # fmt: skip
        figures["part1.png"] = lambda path: alpha_figure(part1, path, "users")
    if args.part in ("2", "all"):
        scan = utilization_scan(base, grid["scan"], seeds[: grid["scan_seeds"]], args)
        counts = matched(scan, grid["targets"])
        print("\n== Part 2: EASY utilization by users: " + ", ".join(
            f"{r['users']}: {r['utilization']:.2f}" for r in scan))  # fmt: skip
        print("matched: " + ", ".join(f"{t:g} -> {u} users" for t, u in counts.items()))
        part2 = alpha_study(base, sorted(set(counts.values())), seeds, args)
        part2.update(scan=scan, matched=counts)
        print_alpha_study(part2)
        data["part2"] = part2
        tables.update({"part2_runs.csv": part2["runs"], "part2_relative.csv": part2["relative"]})
        figures["part2.png"] = lambda path: alpha_figure(part2, path, "users")
    if args.part in ("3", "all"):
        part3 = factor_study(grid, seeds, args)
        print("\n== Part 3: CREASY(6000) against EASY, paired by seed")
        print_factor_study(part3)
        data["part3"] = part3
        tables.update({"part3_runs.csv": part3["runs"], "part3_gains.csv": part3["gains"]})
        figures["part3.png"] = lambda path: factor_figure(part3, path)
    if args.part in ("4", "all"):
        short = SiteConfig(days=grid["factor_days"], runtime_scale=SHORT_JOBS)
        calibration = short.replace(days=grid["calibration_days"], seed=seeds[0])
        counts = calibrate((calibration, grid["factor_targets"], 90))
        print(f"\n== Part 4: runtimes x {SHORT_JOBS:g}; EASY utilization "
              + ", ".join(f"{t:g} at {u} users" for t, u in counts.items()))  # fmt: skip
        part4 = alpha_study(short, sorted(set(counts.values())), seeds, args)
        part4["matched"] = counts
        print_alpha_study(part4)
        data["part4"] = part4
        tables.update({"part4_runs.csv": part4["runs"], "part4_relative.csv": part4["relative"]})
        figures["part4.png"] = lambda path: alpha_figure(part4, path, "users")
    scenario.publish(args.out, data, name="creasy", tables=tables, figures=figures)
    return 0


# -- figures -----------------------------------------------------------------------------------
def alpha_figure(study, path, x):  # type: ignore[no-untyped-def]
    """Absolute throughput and session length per alpha, and both relative to EASY."""
    from sitesim.figures import grid, lines_with_ci, save

    fig, axes = grid(4, width=4.6, height=3.5, cols=2)
    panels = (
        (study["summary"], "throughput_per_h", "throughput (jobs/h)"),
        (study["summary"], "jobs_per_session", "session length (jobs)"),
        (study["relative"], "throughput_per_h_rel_pct", "throughput vs EASY (%)"),
        (study["relative"], "jobs_per_session_rel_pct", "session length vs EASY (%)"),
    )
    for ax, (rows, metric, title) in zip(axes, panels, strict=True):
        lines_with_ci(ax, rows, x, metric, "alpha", label="alpha {}")
        if metric.endswith("_pct"):
            ax.axhline(0, color="k", lw=0.8)
        ax.set_xlabel(x)
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    return save(fig, path)


def factor_figure(study, path):  # type: ignore[no-untyped-def]
    """CREASY's gain over EASY per setting and load, with 95 % intervals."""
    import matplotlib.pyplot as plt

    from sitesim.figures import save

    fig, axes = plt.subplots(1, 2, figsize=(11, 0.5 * len(study["gains"]) + 1.5),
                             layout="constrained", sharey=True)  # fmt: skip
    labels = [f"{g['setting']} (util. {g['target']:g}, {g['users']} users)"
              for g in study["gains"]]  # fmt: skip
    y = np.arange(len(labels))
    for ax, metric, title in (
        (axes[0], "throughput_per_h", "throughput gain (%)"),
        (axes[1], "jobs_per_session", "session length gain (%)"),
    ):
        values = [g[f"{metric}_rel_pct"] for g in study["gains"]]
        errors = [g[f"{metric}_rel_pct_ci95"] for g in study["gains"]]
        ax.errorbar(values, y, xerr=errors, fmt="o", capsize=3)
        ax.axvline(0, color="k", lw=0.8)
        ax.set_title(f"CREASY(6000) vs EASY: {title}", fontsize=10)
        ax.grid(alpha=0.3)
    axes[0].set_yticks(y, labels, fontsize=8)
    axes[0].invert_yaxis()
    return save(fig, path)


if __name__ == "__main__":
    sys.exit(main())
