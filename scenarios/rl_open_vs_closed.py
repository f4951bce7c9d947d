"""A learned scheduler, trained on an open replay or with users in the loop, judged both ways.

Reinforcement-learning schedulers are trained and judged on open replays of recorded traces
(RLScheduler's SchedGym and its successors): arrivals that do not react to the scheduler. Here
one linear priority for EASY backfilling (sitesim.gym.policies.LinearPriority: weights over each
waiting job's row of the environment's observation) is learned twice per replication by the
cross-entropy method (sitesim.gym.learn), each time to minimize the mean bounded slowdown
(RLScheduler's objective): once on the open replay of the trace EASY's users produced (the
conventional setting: sitesim.gym.episodes.OpenReplay), once with the users in the loop. Both,
EASY and CREASY (alpha 6000) are then judged on a held-out seed both ways: on the open replay of
EASY's trace (measured over the site-level window, as sitesim compare does) and with the users
in the loop (the site-level run). 250 complete users of the thesis-regime profile on 128
processors; 6 iterations of 12 candidates, each scored on one training episode of 7 days (2 of
warm-up), judged over 28 days (7 of warm-up); 10 replications, each with its own training
seeds, 95 % intervals by Student's t, differences to EASY paired by seed
(docs/results/rl-open-vs-closed.md).

    python scenarios/rl_open_vs_closed.py [--quick] [--out DIR] [--seed S] [--seeds N]
                                          [--serial | --workers N | --dask ADDRESS]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from sitesim.cli import scenario
from sitesim.cli.scenario import pm
from sitesim.gym.episodes import OpenReplay
from sitesim.gym.learn import cross_entropy, episode_return
from sitesim.gym.observation import JOB_FEATURES
from sitesim.gym.policies import ARRIVAL_ORDER, LinearPriority, weights_text
from sitesim.results.report import table
from sitesim.runs.config import SiteConfig
from sitesim.runs.runner import run
from sitesim.runs.simulate import run_site
from sitesim.schedulers import CREASY, EASY, Scheduler
from sitesim.sweeps.compare import open_replay
from sitesim.sweeps.replications import paired_differences, summarize_runs

FULL = {
    "users": 250, "profile": "thesis", "train_days": 7.0, "train_warmup": 2.0,
    "days": 28.0, "warmup": 7.0, "iterations": 6, "population": 12, "elite": 3,
}  # fmt: skip
QUICK = {
    "users": 20, "profile": "thesis", "train_days": 3.0, "train_warmup": 1.0,
    "days": 4.0, "warmup": 1.0, "iterations": 2, "population": 4, "elite": 2,
}  # fmt: skip
REPLICATIONS = (10, 2)
REWARD = "bsld"
CREASY_ALPHA = 6000.0
#: The schedulers judged, in the tables' order.
JUDGED = ("EASY", "CREASY", "trained open", "trained closed")
#: Where each is judged.
SETTINGS = ("open replay", "users in the loop")
METRICS = ("bsld_mean", "wait_mean_min", "response_mean_min", "throughput_per_h",
           "jobs_per_session", "utilization")  # fmt: skip
#: Training seeds of replication s: TRAIN_SEEDS * s + iteration (never an evaluation seed).
TRAIN_SEEDS = 10_000


class Training(NamedTuple):
    """One policy to learn (a worker's task)."""

    mode: str  # "open" or "closed"
    replication: int
    site: SiteConfig  # the training episodes' site
    settings: dict[str, Any]


def train(task: Training) -> dict[str, Any]:
    """Learn one policy by the cross-entropy method: its weights, history and CPU seconds."""
    began = time.process_time()
    source: SiteConfig | OpenReplay = task.site if task.mode == "closed" else OpenReplay(task.site)
    s = task.settings

    def score(candidates: list[np.ndarray], iteration: int) -> list[float]:
        seed = TRAIN_SEEDS * task.replication + iteration  # (the same for every candidate)
        return [episode_return(c, source, seed, REWARD) for c in candidates]

    found = cross_entropy(
        score, ARRIVAL_ORDER, iterations=s["iterations"], population=s["population"],
        elite=s["elite"], seed=task.replication,
    )  # fmt: skip
    return {
        "mode": task.mode, "replication": task.replication,
        "weights": weights_text(found.weights), "history": found.history,
        "cpu_s": time.process_time() - began,
    }  # fmt: skip


class Judging(NamedTuple):
    """One held-out seed to judge the four schedulers on (a worker's task)."""

    site: SiteConfig  # with the seed
    weights: dict[str, str]  # "trained open" / "trained closed" -> weights


def judge(task: Judging) -> dict[str, Any]:
    """The four schedulers on one seed, with users in the loop and on the open replay of
    EASY's trace: one row each, and CPU seconds."""
    began = time.process_time()
    site = task.site
    easy = run(site.replace(scheduler="EASY"))
    rows = []
    for name in JUDGED:
        scheduler: Scheduler
        if name == "EASY":
            closed, scheduler = easy, EASY()
        elif name == "CREASY":
            closed = run(site.replace(scheduler="CREASY", alpha=CREASY_ALPHA))
            scheduler = CREASY(CREASY_ALPHA)
        else:
            closed = run_site(site, scheduler=LinearPriority(task.weights[name]))
            scheduler = LinearPriority(task.weights[name])
        opened = open_replay(easy, scheduler)
        for judged_as, result in (("open replay", opened), ("users in the loop", closed)):
            summary = result.summary
            rows.append({"seed": site.seed, "scheduler": name, "judged": judged_as,
                         **{m: getattr(summary, m) for m in METRICS}})  # fmt: skip
    return {"rows": rows, "cpu_s": time.process_time() - began}


def shrinkage(rows: list[dict[str, Any]], metric: str) -> list[dict[str, Any]]:
    """Per scheduler, its advantage over EASY in ``metric`` (%, 100 × (it / EASY − 1), seed by
    seed) judged on the open replay and with users in the loop, and the change between the two
    (users in the loop minus open replay, percentage points), paired by seed."""
    gains = []
    relative = {(r["judged"], r["scheduler"], r["seed"]): r[metric] for r in rows}
    for (judged_as, name, seed), value in relative.items():
        if name == "EASY":
            continue
        base = relative[(judged_as, "EASY", seed)]
        gains.append({"scheduler": name, "judged": judged_as, "seed": seed,
                      "gain": 100 * (value / base - 1) if base else float("nan")})  # fmt: skip
    out = summarize_runs(gains, ["scheduler", "judged"], ["gain"])
    for row in paired_differences(gains, ["scheduler", "judged"], "judged", "open replay",
                                  ["gain"]):  # fmt: skip
        out.append({"scheduler": row["scheduler"], "judged": "change", "n": row["n"],
                    "gain": row["gain_diff"], "gain_ci95": row["gain_diff_ci95"]})  # fmt: skip
    return [{k: r[k] for k in ("scheduler", "judged", "n", "gain", "gain_ci95")} for r in out]


def main(argv: list[str] | None = None) -> int:
    args = scenario.parse(scenario.parser(__doc__, replications=REPLICATIONS), argv)
    settings = QUICK if args.quick else FULL
    timer = scenario.Timer()
    seeds = scenario.seeds(args)
    site = SiteConfig(users=settings["users"], profile=settings["profile"],
                      days=settings["days"], warmup_days=settings["warmup"])  # fmt: skip
    training_site = site.replace(days=settings["train_days"], warmup_days=settings["train_warmup"])
    tasks = [Training(mode, seed, training_site, settings)
             for seed in seeds for mode in ("open", "closed")]  # fmt: skip
    learned = scenario.run_all(train, tasks, args, "training", "policies")
    weights = {(p["replication"], p["mode"]): p["weights"] for p in learned}
    judgings = [Judging(site.replace(seed=seed), {f"trained {mode}": weights[(seed, mode)]
                                                  for mode in ("open", "closed")})
                for seed in seeds]  # fmt: skip
    judged = scenario.run_all(judge, judgings, args, "judging", "seeds")
    rows = [row for j in judged for row in j["rows"]]
    summary = summarize_runs(rows, ["judged", "scheduler"], METRICS)
    relative = paired_differences(rows, ["judged", "scheduler"], "scheduler", "EASY", METRICS,
                                  relative=True)  # fmt: skip
    shrink = shrinkage(rows, "bsld_mean")
    cpu = sum(p["cpu_s"] for p in learned) + sum(j["cpu_s"] for j in judged)
    report(settings, seeds, summary, relative, shrink, learned, cpu, timer.seconds)
    data = {
        "settings": settings, "reward": REWARD, "creasy_alpha": CREASY_ALPHA, "seeds": seeds,
        "training_seeds": f"{TRAIN_SEEDS} x replication + iteration",
        "features": list(JOB_FEATURES), "policies": learned, "runs": rows, "summary": summary,
        "relative": relative, "bsld_advantage": shrink, "cpu_s": cpu,
        "wall_s": timer.seconds,
    }  # fmt: skip
    scenario.publish(
        args.out, data, name="rl_open_vs_closed",
        tables={"runs.csv": rows, "summary.csv": summary, "relative.csv": relative,
                "bsld_advantage.csv": shrink,
                "policies.csv": [{k: p[k] for k in ("mode", "replication", "weights", "cpu_s")}
                                 for p in learned]},
        figures={"rl_open_vs_closed.png": lambda path: figure(shrink, path)},
    )  # fmt: skip
    return 0


def report(
    settings: dict[str, Any],
    seeds: list[int],
    summary: list[dict[str, Any]],
    relative: list[dict[str, Any]],
    shrink: list[dict[str, Any]],
    learned: list[dict[str, Any]],
    cpu: float,
    wall: float,
) -> None:
    """Print the tables."""
    print(f"{settings['users']} users, judged over {settings['days']:g} days, "
          f"{len(seeds)} seeds (mean ± 95 % half-width)")  # fmt: skip
    shown = ("bsld_mean", "wait_mean_min", "throughput_per_h", "jobs_per_session")
    print(table(("Judged", "Scheduler", "BSLD", "Wait (min)", "Jobs/h", "Jobs/session"),
                [[r["judged"], r["scheduler"], *(pm(r, m) for m in shown)]
                 for r in summary]))  # fmt: skip
    print("\nRelative to EASY, paired by seed, %:")
    print(table(("Judged", "Scheduler", "BSLD", "Wait", "Jobs/h", "Jobs/session"),
                [[r["judged"], r["scheduler"], *(pm(r, f"{m}_rel_pct", "+.1f") for m in shown)]
                 for r in relative]))  # fmt: skip
    print("\nBounded-slowdown advantage over EASY (%, < 0 is better), and its change from the "
          "open replay to users in the loop (points):")  # fmt: skip
    print(
        table(
            ("Scheduler", "Judged", "Advantage"),
            [[r["scheduler"], r["judged"], pm(r, "gain", "+.1f")] for r in shrink],
        )
    )
    print("\nLearned weights (" + ", ".join(JOB_FEATURES) + "):")
    for p in learned:
        print(f"  {p['mode']:6s} seed {p['replication']}: {p['weights']}")
    print(f"\nCPU time {cpu:.0f} s in all (wall {wall:.0f} s)")


def figure(shrink: list[dict[str, Any]], path: Path) -> None:
    """The bounded-slowdown advantage over EASY of each scheduler, judged both ways."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [n for n in JUDGED if n != "EASY"]
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    for k, judged_as in enumerate(SETTINGS):
        rows = {r["scheduler"]: r for r in shrink if r["judged"] == judged_as}
        x = np.arange(len(names)) + (k - 0.5) * 0.35
        ax.bar(x, [rows[n]["gain"] for n in names], 0.35, label=f"judged on {judged_as}",
               yerr=[np.nan_to_num(rows[n]["gain_ci95"]) for n in names], capsize=3)  # fmt: skip
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(np.arange(len(names)), names)
    ax.set_ylabel("mean bounded slowdown vs EASY (%)")
    ax.legend(frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
