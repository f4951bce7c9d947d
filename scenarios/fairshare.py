"""Fairshare with users in the loop: what Slurm's fairshare does to heavy and light accounts,
and what an open replay predicts.

A site of 128 processors, 36 complete users (the shipped profile) in two heavy accounts of ten
users (a1, a2) and eight light accounts of two (a3 to a10), one share each, so the heavy
accounts' users are over their share. SLURM with Slurm's defaults except
``PriorityWeightAge=1000`` (weight 0 is then age order), 91 days with a 7-day warm-up
(docs/results/fairshare.md). Levels: ``PriorityWeightFairshare`` 0, 1000, 10000 and 100000
(dominant: 100 times the age weight), each positive weight with ``PriorityDecayHalfLife`` 1, 7
and 14 days: ten configurations. For every seed:

- the **site-level runs** (closed: users in the loop), one per configuration;
- the **open replays** of the trace the weight-0 site-level run produced (the user ids kept,
  so each job keeps its account), under every configuration: the conventional prediction,
  measured over the same window as the site-level runs (warm-up to horizon).

Every run is measured per account and per group of accounts (heavy, light, all): jobs an hour,
jobs per session, sessions, mean wait and response, core-hours. Each quantity's change from
weight 0 is taken seed by seed (in %), closed and open, with 95 % intervals, and the gap
between the two (closed minus open, percentage points, paired by seed).

    python scenarios/fairshare.py [--quick] [--out DIR] [--seed S] [--seeds N]
        [--serial | --workers N | --dask ...]

One task a seed (ten site-level runs and ten replays).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

from sitesim.cli import scenario
from sitesim.engine.metrics import DAY
from sitesim.engine.site import SiteResult
from sitesim.results.report import result_trace, table
from sitesim.runs.config import ReplayConfig, SiteConfig
from sitesim.runs.replay import run_replay
from sitesim.runs.runner import run
from sitesim.slurm.accounts import per_account
from sitesim.slurm.associations import Associations
from sitesim.sweeps.replications import paired_differences, summarize_runs

PROCS = 128
#: The fairshare weights; the age weight of every configuration.
WEIGHTS = (0, 1000, 10000, 100000)
AGE_WEIGHT = 1000
#: The decay half-lives of the positive weights (Slurm time syntax: days-hours).
HALF_LIVES = ("1-0", "7-0", "14-0")
#: (weight, half-life) of every configuration; weight 0 has no half-life (no fairshare).
CONFIGS = ((0, "-"), *((w, h) for w in WEIGHTS[1:] for h in HALF_LIVES))
#: (users, accounts, days, warm-up days) of the full study and of --quick. The first block of
#: accounts holds the heavy ones, the second the light ones.
FULL, QUICK = (36, "2x10,8x2", 91.0, 7.0), (16, "2x4,4x2", 21.0, 7.0)
#: Quantities of every account and group (NaN where a run has none: sessions in a replay).
METRICS = ("jobs_per_hour", "jobs_per_session", "sessions", "wait_mean_min",
           "response_mean_min", "core_hours", "jobs")  # fmt: skip
#: Those whose change from weight 0 is compared, closed against open.
CHANGES = ("jobs_per_hour", "jobs_per_session", "sessions", "wait_mean_min",
           "response_mean_min", "core_hours")  # fmt: skip
GROUPS = ("heavy", "light", "all")


def params(accounts: str, weight: int, half_life: str) -> dict[str, Any]:
    """The SLURM parameters of a configuration."""
    chosen: dict[str, Any] = {"accounts": accounts, "PriorityWeightAge": AGE_WEIGHT,
                              "PriorityWeightFairshare": weight}  # fmt: skip
    if weight:
        chosen["PriorityDecayHalfLife"] = half_life
    return chosen


def heavy_accounts(accounts: str) -> set[str]:
    """The accounts of the first block of ``accounts`` (``"2x10,8x2"``: a1 and a2)."""
    tree = Associations.blocks(accounts)
    count = int(accounts.split(",")[0].split("x")[0])
    return set(list(tree.accounts)[:count])


def units(found: np.ndarray, heavy: set[str], closed: bool) -> dict[str, dict[str, float]]:
    """The quantities of every account of a per-account table, and of the groups heavy, light
    and all (sums; jobs per session and the means weighted as their definitions say)."""
    out: dict[str, dict[str, float]] = {}
    members = {
        "heavy": [r for r in found if r["account"] in heavy],
        "light": [r for r in found if r["account"] not in heavy],
        "all": list(found),
    }
    for name, rows in (*((str(r["account"]), [r]) for r in found), *members.items()):
        jobs = sum(int(r["jobs"]) for r in rows)
        sessions = sum(int(r["sessions"]) for r in rows)
        entry = {
            "jobs": float(jobs),
            "jobs_per_hour": sum(float(r["jobs_per_hour"]) for r in rows),
            "sessions": float(sessions) if closed else math.nan,
            "jobs_per_session": jobs / sessions if closed and sessions else math.nan,
            "core_hours": sum(float(r["core_hours"]) for r in rows),
        }
        for mean in ("wait_mean_min", "response_mean_min"):
            total = sum(float(r[mean]) * int(r["jobs"]) for r in rows)
            entry[mean] = total / jobs if jobs else math.nan
        out[name] = entry
    return out


#: One seed's task: the weight-0 site (seed, users, accounts, days, warm-up).
Task = SiteConfig


def seed_rows(site: Task) -> list[dict[str, Any]]:
    """A worker's task: the site-level runs of one seed under every configuration, and the
    open replays of its weight-0 trace under every configuration; one row per run and unit
    (account or group)."""
    accounts = site.scheduler_params["accounts"]
    tree, heavy = Associations.blocks(accounts), heavy_accounts(accounts)
    closed: dict[tuple[int, str], SiteResult] = {}
    for weight, half_life in CONFIGS:
        closed[weight, half_life] = run(
            site.replace(scheduler_params=params(accounts, weight, half_life))
        )
    base = closed[CONFIGS[0]]
    window = (base.summary.window_start_d * DAY, base.summary.window_end_d * DAY)
    trace = result_trace(base, f"site-level trace, seed {site.seed}")
    rows = []
    for weight, half_life in CONFIGS:
        config = ReplayConfig(trace=trace.name, procs=PROCS, scheduler="SLURM", seed=site.seed,
                              scheduler_params=params(accounts, weight, half_life))  # fmt: skip
        replayed = run_replay(config, trace=trace)
        for model, result in (("closed", closed[weight, half_life]), ("open", replayed)):
            found = per_account(result.records, window, tree)
            for unit, values in units(found, heavy, model == "closed").items():
                rows.append({"model": model, "unit": unit, "weight": weight,
                             "half_life": half_life, "seed": site.seed, **values})  # fmt: skip
    return rows


def changes(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per run and unit, the change of every quantity of :data:`CHANGES` from the weight-0 run
    of the same model, unit and seed, in % (the weight-0 rows left out)."""
    base = {(r["model"], r["unit"], r["seed"]): r for r in runs if r["weight"] == 0}
    out = []
    for r in runs:
        b = base.get((r["model"], r["unit"], r["seed"]))
        if r["weight"] and b is not None:
            out.append({**{k: r[k] for k in ("model", "unit", "weight", "half_life", "seed")},
                        **{m: 100 * (r[m] / b[m] - 1) if b[m] else math.nan
                           for m in CHANGES}})  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> int:
    args = scenario.parse(scenario.parser(__doc__, replications=(10, 2)), argv)
    users, accounts, days, warmup = QUICK if args.quick else FULL
    timer = scenario.Timer()
    site = SiteConfig(users=users, days=days, warmup_days=warmup, procs=PROCS, scheduler="SLURM",
                      scheduler_params=params(accounts, 0, "-"))  # fmt: skip
    tasks = [site.replace(seed=s) for s in scenario.seeds(args)]
    found = scenario.run_all(seed_rows, tasks, args, "fairshare", "seeds")
    runs = [r for rows in found for r in rows]
    factors = ("model", "unit", "weight", "half_life")
    means = summarize_runs(runs, factors, METRICS)
    relative = changes(runs)
    change = summarize_runs(relative, factors, CHANGES)
    gap = paired_differences(relative, factors, "model", "open", CHANGES)
    report(users, accounts, days, len(tasks), means, change, gap)
    print(f"wall time {timer.seconds:.1f} s")
    data = {"users": users, "accounts": accounts, "heavy": sorted(heavy_accounts(accounts)),
            "days": days, "warmup_days": warmup, "procs": PROCS, "age_weight": AGE_WEIGHT,
            "configs": [list(c) for c in CONFIGS], "seeds": scenario.seeds(args),
            "runs": runs, "means": means, "changes": change, "gap": gap}  # fmt: skip
    scenario.publish(args.out, data, name="fairshare",
                     tables={"runs.csv": runs, "means.csv": means, "changes.csv": change,
                             "gap.csv": gap},
                     figures={"fairshare.png": lambda path: figure(change, path)})  # fmt: skip
    return 0


def report(users: int, accounts: str, days: float, seeds: int, means: list[dict[str, Any]],
           change: list[dict[str, Any]], gap: list[dict[str, Any]]) -> None:  # fmt: skip
    """The group tables, printed (the accounts' own are in the CSV files)."""
    shown = ("jobs_per_hour", "jobs_per_session", "sessions", "wait_mean_min")
    print(f"\n{users} complete users in accounts {accounts}, SLURM, {PROCS} processors, "
          f"{days:g} days, {seeds} seeds: means ± 95 % half-width")  # fmt: skip
    grouped = [r for r in means if r["unit"] in GROUPS]
    print(table(("Model", "Group", "Weight", "Half-life", *shown),
                [[r["model"], r["unit"], r["weight"], r["half_life"],
                  *(scenario.pm(r, m) for m in shown)] for r in grouped]))  # fmt: skip
    print("\nChange from weight 0, % (paired by seed)")
    grouped = [r for r in change if r["unit"] in GROUPS]
    print(table(("Model", "Group", "Weight", "Half-life", *shown),
                [[r["model"], r["unit"], r["weight"], r["half_life"],
                  *(scenario.pm(r, m) for m in shown)] for r in grouped]))  # fmt: skip
    print("\nClosed minus open, percentage points (paired by seed)")
    compared = ("jobs_per_hour", "wait_mean_min", "response_mean_min")
    grouped = [r for r in gap if r["unit"] in GROUPS]
    print(table(("Group", "Weight", "Half-life", *compared),
                [[r["unit"], r["weight"], r["half_life"],
                  *(scenario.pm(r, f"{m}_diff") for m in compared)] for r in grouped]))  # fmt: skip


def figure(change: list[dict[str, Any]], path: Path) -> Path:
    """Change of jobs an hour and of mean wait of the heavy and the light accounts against the
    fairshare weight, one colour a half-life, site-level (solid) against the open replay
    (dashed; its jobs an hour cannot change: the trace fixes them), with 95 % intervals; a
    16:9 slide, the legend below the panels."""
    import matplotlib

    from sitesim.figures import OKABE_ITO, SLIDE_STYLE, legend_below, save, slide

    panels = (("jobs_per_hour", "jobs an hour"), ("wait_mean_min", "mean wait"))
    colors = dict(zip(HALF_LIVES, OKABE_ITO, strict=False))
    with matplotlib.rc_context(SLIDE_STYLE):
        fig, axes = slide(2, 2, sharex=True)
        for row, (metric, title) in enumerate(panels):
            for col, group in enumerate(("heavy", "light")):
                ax = axes[2 * row + col]
                models = (("closed", "-o"),) if metric == "jobs_per_hour" else (
                    ("closed", "-o"), ("open", "--s"))  # fmt: skip
                for k, half_life in enumerate(HALF_LIVES):
                    for j, (model, style) in enumerate(models):
                        mine = [r for r in change if r["model"] == model and r["unit"] == group
                                and r["half_life"] == half_life]  # fmt: skip
                        spread = len(HALF_LIVES) * len(models)
                        x = np.array([r["weight"] for r in mine], dtype=float) * 1.07 ** (
                            len(models) * k + j - (spread - 1) / 2
                        )
                        kind = "site-level" if model == "closed" else "open replay"
                        days = half_life.split("-")[0]
                        ax.errorbar(x, [r[metric] for r in mine],
                                    yerr=[r[f"{metric}_ci95"] for r in mine], fmt=style,
                                    color=colors[half_life], mfc="white" if j else None,
                                    label=f"{kind}, half-life {days} d")  # fmt: skip
                ax.axhline(0, color="grey", lw=1)
                ax.set_xscale("log")
                ax.set_xticks(WEIGHTS[1:], [str(w) for w in WEIGHTS[1:]])
                ax.minorticks_off()
                ax.set_title(f"{group} accounts: {title}")
                if col == 0:
                    ax.set_ylabel("change from weight 0 (%)")
                ax.grid(alpha=0.3)
                if row == 1:
                    ax.set_xlabel(f"PriorityWeightFairshare (PriorityWeightAge {AGE_WEIGHT})")
        # in the light accounts' panel, between the zero line and their gains (no data there)
        axes[1].text(0.02, 0.09, "open replay, both groups: 0 by construction (the trace "
                     "fixes the jobs)", transform=axes[1].transAxes, fontsize=11,
                     color="grey")  # fmt: skip
        legend_below(fig, axes[2], ncols=3)
    return save(fig, path)


if __name__ == "__main__":
    sys.exit(main())
