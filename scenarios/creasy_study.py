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
x 1/20), at the user counts where EASY's utilization is about 0.6 and 0.9, with the two
feedback loops apart at alpha 6000 (session aborts off). Part 5, the thesis regime: CREASY
against EASY in three regimes (sitesim.workload.thesis_regime): the shipped profile "thesis"
("fitted", calibrated only on the thesis' EASY baseline; --calibrate refits it, the comparison
never does) and the two revisited ones, which fit nothing ("work matched" and "uncompressed":
breaks and batch widths as drawn, long jobs compressed to the thesis' work per job or not);
50-250 users, alpha up to 12000, 91 days; in the work-matched regime the two loops apart
(aborts off) and clocked session starts (a sensitivity option, not the thesis' model). 5 seeds
(6 in part 5), 95 % intervals by Student's t (experiments.md §4; docs/results/creasy.md).

    python scenarios/creasy_study.py [--part 1|2|3|4|5|all] [--calibrate] [--quick] [--out DIR]
                                     [--seed S] [--serial | --workers N | --dask ...]
"""

from __future__ import annotations

import itertools
import sys
from typing import Any

import numpy as np

from sitesim.cli import scenario
from sitesim.cli.scenario import pm
from sitesim.results.report import table
from sitesim.runs.config import SiteConfig
from sitesim.runs.runner import run
from sitesim.sweeps.sweep import paired_differences, summarize_runs, sweep

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
    "targets": [0.3, 0.7], "factor_days": 3.0, "factor_targets": [0.6],
    "calibration_days": 3.0,
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

# -- part 5: the thesis regime -------------------------------------------------------------------
#: The thesis' baseline observables (chapter 5, EASY): (users, metric, value). The calibration
#: fits break_scale to the throughput at 50 users and the batch-width cap to the session lengths
#: at 50 and 250 users; the mean work of a job follows from utilization / throughput at 50 users
#: (sitesim.workload.thesis_regime.long_scale_for); the rest are checks, reported as residuals.
THESIS_BASELINE = [
    (50, "utilization", 0.35), (50, "throughput_per_h", 28.0), (50, "response_mean_min", 12.2),
    (50, "slowdown_mean", 7.0), (50, "jobs_per_session", 2.69), (50, "batches_per_session", 2.69),
    (50, "session_starts_per_user_h", 28.0 / 2.69 / 50),
    (250, "throughput_per_h", 47.0), (250, "utilization", 0.57), (250, "jobs_per_session", 1.73),
    (250, "batches_per_session", 1.73), (250, "session_starts_per_user_h", 47.0 / 1.73 / 250),
]  # fmt: skip
#: Where each thesis value comes from: the 50-user utilization, throughput, response and
#: slowdown are from the thesis' chapter 2, a worked run of CREASY (not EASY from chapter 5).
THESIS_SOURCE = {
    (50, "utilization"): "ch. 2, CREASY", (50, "throughput_per_h"): "ch. 2, CREASY",
    (50, "response_mean_min"): "ch. 2, CREASY", (50, "slowdown_mean"): "ch. 2, CREASY",
}  # fmt: skip
THESIS_WORK = 0.35 * 128 * 3600 / 28.0  # processor-seconds per job
THESIS_GAP_MAX = 60.0  # "very short" gaps inside a batch: the profile's gaps <= 1 minute
#: Part 5's regimes: the shipped "thesis" profile (fitted) and the two revisited ones
#: (sitesim.workload.thesis_regime.REVISITED).
REGIMES = ("fitted", "work matched", "uncompressed")
PART5 = {
    "seeds": 6, "days": 91.0,
    # (regime, session starts, loops, users, alphas): the revisited, work-matched regime with
    # the thesis' session starts at three loads; the loops apart, clocked starts (a
    # sensitivity option) and the other two regimes at 50 and 250 users (the comparison's CPU
    # time: 180 runs of 91 days)
    "sweeps": [
        ("work matched", "after_break", "both loops", [50, 150, 250], [0, 3000, 6000, 12000]),
        ("work matched", "after_break", "aborts off", [50, 250], [0, 6000]),
        ("work matched", "clocked", "both loops", [50, 250], [0, 6000, 12000]),
        ("uncompressed", "after_break", "both loops", [50, 250], [0, 6000]),
        ("fitted", "after_break", "both loops", [50, 250], [0, 6000]),
    ],
    "calibration_seeds": [101, 102, 103], "calibration_days": 91.0, "widths": [1, 2, 3],
    "bisection_steps": 8,
}  # fmt: skip
PART5_QUICK = {
    "seeds": 2, "days": 3.0,
    "sweeps": [
        ("work matched", "after_break", "both loops", [50, 250], [0, 6000]),
        ("work matched", "after_break", "aborts off", [50, 250], [0, 6000]),
        ("work matched", "clocked", "both loops", [50, 250], [0, 6000]),
        ("uncompressed", "after_break", "both loops", [50], [0, 6000]),
        ("fitted", "after_break", "both loops", [50], [0, 6000]),
    ],
    "calibration_seeds": [101], "calibration_days": 14.0, "widths": [1], "bisection_steps": 2,
}  # fmt: skip
STARTS = ("after_break", "scheduled", "clocked")
#: The alpha at which the two feedback loops are taken apart.
LOOPS_ALPHA = 6000


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


def loops_apart(
    base: SiteConfig, runs: list[dict[str, Any]], seeds: list[int], args: Any
) -> list[dict[str, Any]]:
    """CREASY(LOOPS_ALPHA)'s gain over EASY with both loops (``runs``, an alpha study's) and
    with session aborts off (run here, the same users and seeds), and their difference."""
    users = sorted({r["users"] for r in runs})
    a, b = scenario.LOOPS["aborts off"]
    with scenario.progress("aborts off", "runs") as report:
        off = sweep(
            base.replace(scheduler="CREASY", pcont_a=a, pcont_b=b),
            {"users": users, "alpha": [0, LOOPS_ALPHA]}, seeds=seeds, executor=args.executor,
            workers=args.workers, dask_address=args.dask, progress=report,
        )  # fmt: skip
    pairs = [{**r, "loops": loops, "scheduler": "CREASY" if r["alpha"] else "EASY"}
             for loops, rows in (("both loops", runs), ("aborts off", off.runs))
             for r in rows if r["alpha"] in (0, LOOPS_ALPHA)]  # fmt: skip
    return scenario.loop_split(pairs, SHOWN, factors=["users"], better="CREASY", worse="EASY")


def print_loops(rows: list[dict[str, Any]]) -> None:
    print(f"\nCREASY({LOOPS_ALPHA}) against EASY, the two loops apart, %:")
    print(table(("Users", "Loops", "Jobs/h", "Jobs/session", "Response", "Slowdown"),
                [[r["users"], r["loops"], *(pm(r, m, "+.1f") for m in
                  ("throughput_per_h", "jobs_per_session", "response_mean_min",
                   "slowdown_mean"))] for r in rows]))  # fmt: skip


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
    base = SiteConfig(days=grid["factor_days"], warmup_days=1 if args.quick else 7)
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


def thesis_metrics(summary: dict[str, Any], users: int, days: float, warmup: float) -> dict:
    """A run's summary with session starts per user-hour added."""
    hours = users * (days - warmup) * 24.0
    return {**summary, "session_starts_per_user_h": summary["sessions"] / hours}


def fit_breaks(task: tuple[str, int, dict[str, Any], bool]) -> dict[str, Any]:
    """For one session-start mechanism and batch-width cap: the break scale that gives EASY
    the thesis' throughput at 50 users (bisection on log scale, mean over the calibration
    seeds), and the baseline observables there (a worker's task)."""
    from sitesim.runs.simulate import simulate
    from sitesim.workload.profile import default_profile
    from sitesim.workload.thesis_regime import ThesisRegime, long_scale_for

    starts, width, grid, quick = task
    base = default_profile()
    long_scale = long_scale_for(base, 128, THESIS_WORK)
    days, warmup = grid["calibration_days"], 1.0 if quick else 7.0

    def observe(scale: float, users: int) -> dict[str, float]:
        profile = ThesisRegime(long_scale, width, THESIS_GAP_MAX, scale).apply(base)
        rows = [thesis_metrics(simulate(
            users=users, scheduler="EASY", days=days, warmup_days=warmup, profile=profile,
            seed=seed, session_starts=starts).summary.as_dict(), users, days, warmup)
            for seed in grid["calibration_seeds"]]  # fmt: skip
        return {m: float(np.mean([r[m] for r in rows])) for _, m, _ in THESIS_BASELINE}

    low, high = np.log(0.02), np.log(2.0)  # throughput falls as breaks grow
    for _ in range(grid["bisection_steps"]):
        middle = (low + high) / 2
        if observe(float(np.exp(middle)), 50)["throughput_per_h"] > 28.0:
            low = middle
        else:
            high = middle
    scale = float(np.exp((low + high) / 2))
    at = {50: observe(scale, 50), 250: observe(scale, 250)}
    loss = sum((at[u]["jobs_per_session"] / v - 1) ** 2
               for u, m, v in THESIS_BASELINE if m == "jobs_per_session")  # fmt: skip
    return {"session_starts": starts, "max_width": width, "long_scale": long_scale,
            "gap_max": THESIS_GAP_MAX, "break_scale": scale, "loss": loss,
            **{f"{m}@{u}": at[u][m] for u, m, _ in THESIS_BASELINE}}  # fmt: skip


def thesis_calibration(grid: dict[str, Any], args: Any) -> dict[str, Any]:
    """Fit each mechanism's break scale for every width cap (the shipped, fitted regime); keep
    the width with the smallest squared relative error of the two session lengths. And the
    clocked starts' gap scale on the revisited, work-matched regime (:func:`fit_clocked`)."""
    mechanisms = ("after_break", "scheduled")
    tasks = [(starts, width, grid, args.quick) for starts in mechanisms
             for width in grid["widths"]]  # fmt: skip
    fits = scenario.run_all(fit_breaks, tasks, args, "calibration", "fits")
    chosen = {starts: min((f for f in fits if f["session_starts"] == starts),
                          key=lambda f: f["loss"]) for starts in mechanisms}  # fmt: skip
    return {"fits": fits, "chosen": chosen, "clocked": fit_clocked(grid)}


def fit_clocked(grid: dict[str, Any]) -> dict[str, float]:
    """The ``start_gap_scale`` that gives clocked session starts EASY's throughput at 50 users
    with the thesis' own starts (after_break), on the revisited, work-matched regime: the
    sensitivity row then compares the mechanisms at the same baseline load (bisection on log
    scale, mean over the calibration seeds)."""
    from sitesim.runs.simulate import simulate
    from sitesim.workload.profile import default_profile
    from sitesim.workload.thesis_regime import REVISITED

    profile = REVISITED["work matched"].apply(default_profile())
    days, seeds = grid["calibration_days"], grid["calibration_seeds"]

    def throughput(**settings: Any) -> float:
        return float(np.mean([simulate(
            users=50, scheduler="EASY", days=days, warmup_days=7.0 if days > 14 else 1.0,
            profile=profile, seed=seed, **settings).summary.throughput_per_h
            for seed in seeds]))  # fmt: skip

    target = throughput()
    low, high = np.log(0.5), np.log(50.0)  # throughput falls as the gaps grow
    for _ in range(grid["bisection_steps"]):
        middle = (low + high) / 2
        got = throughput(session_starts="clocked", start_gap_scale=float(np.exp(middle)))
        low, high = (middle, high) if got > target else (low, middle)
    scale = float(np.exp((low + high) / 2))
    return {"target_throughput_per_h": target, "start_gap_scale": round(scale, 2),
            "throughput_per_h": throughput(session_starts="clocked",
                                           start_gap_scale=round(scale, 2))}  # fmt: skip


def residuals(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The thesis' baseline beside EASY's on a regime (mean ± 95 % over seeds)."""
    out = []
    for users, metric, value in THESIS_BASELINE:
        easy = [r for r in rows if r["users"] == users and r["alpha"] == 0]
        if not easy:  # (a sweep without this user count)
            continue
        (row,) = summarize_runs(easy, ["regime"], [metric])
        out.append({"users": users, "metric": metric, "thesis": value,
                    "source": THESIS_SOURCE.get((users, metric), "ch. 5, EASY"),
                    "sitesim": row[metric], "sitesim_ci95": row[f"{metric}_ci95"],
                    "residual_pct": 100 * (row[metric] / value - 1)})  # fmt: skip
    return out


def thesis_study(grid: dict[str, Any], seeds: list[int], args: Any) -> dict[str, Any]:
    """CREASY against EASY in the thesis regimes (:data:`REGIMES`): every alpha and user count
    of the sweeps; the two feedback loops apart (aborts off: responses no longer end sessions)
    at alpha = LOOPS_ALPHA (scenario.LOOPS); clocked session starts as a sensitivity row."""
    import tempfile

    from sitesim.workload.profile import default_profile
    from sitesim.workload.thesis_regime import CLOCKED_START_GAP_SCALE, REVISITED

    base = SiteConfig(days=grid["days"], warmup_days=1 if args.quick else 7,
                      scheduler="CREASY")  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        profiles = {"fitted": "thesis"}
        for name, regime in REVISITED.items():
            profiles[name] = f"{folder}/{name.replace(' ', '_')}.json"
            regime.apply(default_profile()).save(profiles[name])
        labels, configs = [], []
        for regime, starts, loops, users, alphas in grid["sweeps"]:
            a, b = scenario.LOOPS[loops]
            gaps = CLOCKED_START_GAP_SCALE if starts == "clocked" else 1.0
            config = base.replace(profile=profiles[regime], session_starts=starts, pcont_a=a,
                                  pcont_b=b, start_gap_scale=gaps)  # fmt: skip
            for count, alpha, seed in itertools.product(users, alphas, seeds):
                labels.append({"regime": regime, "session_starts": starts, "loops": loops,
                               "users": count, "alpha": alpha, "seed": seed})  # fmt: skip
                configs.append(config.replace(users=count, seed=seed,
                                              scheduler_params={"alpha": alpha}))  # fmt: skip
        order = sorted(range(len(configs)), key=lambda k: -configs[k].users)  # long runs first
        rows = scenario.run_all(scenario.summary_row, [configs[k] for k in order], args,
                                "thesis regime", "runs")  # fmt: skip
        runs = [thesis_metrics({**labels[k], **row}, labels[k]["users"], grid["days"],
                               base.warmup_days)
                for k, row in zip(order, rows, strict=True)]  # fmt: skip
        runs.sort(key=labels_order)
    return analyze_thesis(runs)


PART5_SHOWN = ("throughput_per_h", "utilization", "jobs_per_session", "batches_per_session",
               "session_starts_per_user_h", "response_mean_min", "slowdown_mean")  # fmt: skip


def analyze_thesis(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Part 5's tables from its runs: means, CREASY relative to EASY, the residuals of each
    regime's EASY baseline, and CREASY's gain at LOOPS_ALPHA with both loops, with aborts off,
    and their difference (what the session aborts add)."""
    keys = ["regime", "session_starts", "loops", "users", "alpha"]
    metrics = [*PART5_SHOWN, *CLASSES[1::3], *CLASSES[2::3]]
    summary = summarize_runs(runs, keys, [*metrics, *CLASSES[::3]])
    relative = paired_differences(runs, keys, "alpha", 0, metrics, relative=True)
    thesis_starts = [r for r in runs if r["loops"] == "both loops"
                     and r["session_starts"] == "after_break"]  # fmt: skip
    apart = [r for r in runs if r["loops"] == "aborts off"]
    users = {r["users"] for r in apart}
    regimes = {r["regime"] for r in apart}
    pairs = [{**r, "scheduler": "CREASY" if r["alpha"] else "EASY"} for r in runs
             if r["session_starts"] == "after_break" and r["users"] in users
             and r["regime"] in regimes and r["alpha"] in (0, LOOPS_ALPHA)]  # fmt: skip
    return {"runs": runs, "summary": summary, "relative": relative,
            "residuals": {g: residuals([r for r in thesis_starts if r["regime"] == g])
                          for g in REGIMES if any(r["regime"] == g for r in thesis_starts)},
            "loops": scenario.loop_split(
                pairs, list(PART5_SHOWN), factors=["regime", "users"],
                better="CREASY", worse="EASY")}  # fmt: skip


def labels_order(row: dict[str, Any]) -> list[Any]:
    """Part 5's runs in plan order: regime, mechanism, loops, users, alpha, seed."""
    return [REGIMES.index(row["regime"]), STARTS.index(row["session_starts"]), row["loops"],
            row["users"], row["alpha"], row["seed"]]  # fmt: skip


def print_thesis_study(study: dict[str, Any]) -> None:
    print(f"\nCREASY({LOOPS_ALPHA}) against EASY, the two loops apart, %:")
    print(table(("Regime", "Users", "Loops", "Jobs/h", "Jobs/session", "Batches/session",
                 "Starts/user-h", "Response"),
                [[r["regime"], r["users"], r["loops"], *(pm(r, m, "+.1f") for m in
                  ("throughput_per_h", "jobs_per_session", "batches_per_session",
                   "session_starts_per_user_h", "response_mean_min"))]
                 for r in study["loops"]]))  # fmt: skip
    for regime, rows in study["residuals"].items():
        print(f"\nthe thesis' baseline beside EASY, regime {regime!r}:")
        print(table(("Users", "Metric", "Thesis", "Source", "sitesim", "Residual(%)"),
                    [[r["users"], r["metric"], r["thesis"], r["source"], pm(r, "sitesim"),
                      f"{r['residual_pct']:+.1f}"] for r in rows]))  # fmt: skip
    print("\nEASY (alpha = 0), means:")
    print(table(("Regime", "Starts", "Loops", "Users", *PART5_SHOWN),
                [[r["regime"], r["session_starts"], r["loops"], r["users"],
                  *(pm(r, m) for m in PART5_SHOWN)]
                 for r in study["summary"] if r["alpha"] == 0]))  # fmt: skip
    print("\nCREASY relative to EASY (alpha = 0), paired by seed, %:")
    print(table(
        ("Regime", "Starts", "Loops", "Users", "alpha", "Jobs/h", "Jobs/session",
         "Batches/session", "Starts/user-h", "Utilization", "Response", "Slowdown"),
        [[r["regime"], r["session_starts"], r["loops"], r["users"], r["alpha"],
          *(pm(r, f"{m}_rel_pct", "+.1f") for m in
            ("throughput_per_h", "jobs_per_session", "batches_per_session",
             "session_starts_per_user_h", "utilization", "response_mean_min",
             "slowdown_mean"))] for r in study["relative"]],
    ))  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = scenario.parser(__doc__)
    p.add_argument("--part", choices=("1", "2", "3", "4", "5", "all"), default="all")
    p.add_argument(
        "--calibrate",
        action="store_true",
        help="part 5: fit the thesis regime (writes thesis_profile.json and the fit) instead "
        "of comparing on the frozen one",
    )
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
        short = SiteConfig(days=grid["factor_days"], warmup_days=1 if args.quick else 7,
                           runtime_scale=SHORT_JOBS)  # fmt: skip
        calibration = short.replace(days=grid["calibration_days"], seed=seeds[0])
        counts = calibrate((calibration, grid["factor_targets"], 90))
        print(f"\n== Part 4: runtimes x {SHORT_JOBS:g}; EASY utilization "
              + ", ".join(f"{t:g} at {u} users" for t, u in counts.items()))  # fmt: skip
        part4 = alpha_study(short, sorted(set(counts.values())), seeds, args)
        part4["matched"] = counts
        part4["loops"] = loops_apart(short, part4["runs"], seeds, args)
        print_alpha_study(part4)
        print_loops(part4["loops"])
        data["part4"] = part4
        tables.update({"part4_runs.csv": part4["runs"], "part4_relative.csv": part4["relative"]})
        figures["part4.png"] = lambda path: alpha_figure(part4, path, "users")
    if args.part in ("5", "all") and args.calibrate:
        from sitesim.workload.profile import default_profile
        from sitesim.workload.thesis_regime import ThesisRegime

        fit = thesis_calibration(PART5_QUICK if args.quick else PART5, args)
        print("\n== Part 5, calibration (EASY, the thesis' baseline):")
        print(table(tuple(fit["fits"][0]), [list(f.values()) for f in fit["fits"]]))
        print("\nclocked starts on the revisited, work-matched regime: "
              + ", ".join(f"{k} {v:g}" for k, v in fit["clocked"].items()))  # fmt: skip
        data["part5_calibration"] = fit
        tables["part5_calibration.csv"] = fit["fits"]
        chosen = fit["chosen"]["after_break"]
        regime = ThesisRegime(chosen["long_scale"], chosen["max_width"], chosen["gap_max"],
                              chosen["break_scale"])  # fmt: skip
        figures["thesis_profile.json"] = regime.apply(default_profile()).save
    elif args.part in ("5", "all"):
        grid5 = PART5_QUICK if args.quick else PART5
        timer = scenario.Timer()
        part5 = thesis_study(grid5, scenario.seeds(args, grid5["seeds"]), args)
        part5["seconds"] = timer.seconds
        print(f"\n== Part 5: the thesis regime, {len(part5['runs'])} runs in "
              f"{part5['seconds']:.0f} s")  # fmt: skip
        print_thesis_study(part5)
        data["part5"] = part5
        tables.update({"part5_runs.csv": part5["runs"], "part5_summary.csv": part5["summary"],
                       "part5_relative.csv": part5["relative"]})  # fmt: skip
        figures["part5.png"] = lambda path: thesis_figure(part5, path)
    scenario.publish(args.out, data, name="creasy", tables=tables, figures=figures)
    return 0


# -- figures -----------------------------------------------------------------------------------
def alpha_figure(study, path, x):  # type: ignore[no-untyped-def]
    """Absolute throughput and session length per alpha, and both relative to EASY: a 16:9
    slide, the alphas' points side by side, one legend below."""
    import matplotlib

    from sitesim.figures import SLIDE_STYLE, legend_below, lines_with_ci, save, slide

    panels = (
        (study["summary"], "throughput_per_h", "throughput (jobs/h)"),
        (study["summary"], "jobs_per_session", "session length (jobs)"),
        (study["relative"], "throughput_per_h_rel_pct", "throughput vs EASY (%)"),
        (study["relative"], "jobs_per_session_rel_pct", "session length vs EASY (%)"),
    )
    levels = sorted({r[x] for r in study["summary"]})
    step = min((b - a for a, b in itertools.pairwise(levels)), default=1)
    dodge = min(0.15 * step, 0.03 * (levels[-1] - levels[0]) or step)  # apart, not crossing
    alphas = list(dict.fromkeys(r["alpha"] for r in study["summary"]))
    with matplotlib.rc_context(SLIDE_STYLE):
        colours = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
        fig, axes = slide(2, 2, sharex=True)
        for ax, (rows, metric, title) in zip(axes, panels, strict=True):
            # each alpha its colour in every panel (the relative ones have no alpha 0), as
            # the one legend shows them
            drawn = list(dict.fromkeys(r["alpha"] for r in rows))
            ax.set_prop_cycle(color=[colours[alphas.index(a) % len(colours)] for a in drawn])
            lines_with_ci(ax, rows, x, metric, "alpha", label="α = {}", dodge=dodge)
            if metric.endswith("_pct"):
                ax.axhline(0, color="k", lw=1)
                ax.set_xlabel(x)
                ax.set_xticks(levels)
            ax.set_title(title)
            ax.grid(alpha=0.3)
        legend_below(fig, axes[0], ncols=5)
    return save(fig, path)


def factor_figure(study, path):  # type: ignore[no-untyped-def]
    """CREASY's gain over EASY per setting and load, with 95 % intervals: a 16:9 slide, one
    colour and marker per load, one legend below."""
    import matplotlib

    from sitesim.figures import SLIDE_STYLE, legend_below, save, slide

    gains = study["gains"]
    labels = [f"{g['setting']} ({g['users']} users)" for g in gains]
    y = np.arange(len(labels))
    targets = sorted({g["target"] for g in gains})
    with matplotlib.rc_context(SLIDE_STYLE):
        fig, axes = slide(1, 2, sharey=True)
        for ax, metric, title in (
            (axes[0], "throughput_per_h", "throughput gain (%)"),
            (axes[1], "jobs_per_session", "session length gain (%)"),
        ):
            for k, target in enumerate(targets):
                mine = [i for i, g in enumerate(gains) if g["target"] == target]
                ax.errorbar([gains[i][f"{metric}_rel_pct"] for i in mine], y[mine],
                            xerr=[gains[i][f"{metric}_rel_pct_ci95"] for i in mine],
                            fmt="os"[k % 2], ms=7,
                            label=f"EASY utilization about {target:g}")  # fmt: skip
            ax.axvline(0, color="k", lw=1)
            ax.set_title(title)
            ax.grid(alpha=0.3)
        axes[0].set_yticks(y, labels)
        axes[0].invert_yaxis()
        fig.suptitle("CREASY(6000) against EASY, paired by seed (95 % intervals)")
        legend_below(fig, axes[0], ncols=len(targets))
    return save(fig, path)


def thesis_figure(study, path):  # type: ignore[no-untyped-def]
    """Part 5: CREASY's gain in throughput and in session length (jobs and batches) per user
    count, in the revisited, work-matched regime: the thesis' session starts with both loops
    and with session aborts off, and clocked starts (a sensitivity option). A 16:9 slide: one
    colour per mechanism, one marker per alpha, the series' points side by side, one legend
    below."""
    import matplotlib

    from sitesim.figures import SLIDE_STYLE, legend_below, lines_with_ci, save, slide

    metrics = ("throughput_per_h", "jobs_per_session", "batches_per_session")
    titles = ("throughput", "jobs per session", "batches per session")
    rows = [r for r in study["relative"] if r["regime"] == "work matched"]
    kinds = (("after_break", "both loops"), ("after_break", "aborts off"),
             ("clocked", "both loops"))  # fmt: skip
    series = [(kind, alpha) for kind in kinds for alpha in (6000, 12000)
              if any((r["session_starts"], r["loops"], r["alpha"]) == (*kind, alpha)
                     for r in rows)]  # fmt: skip
    with matplotlib.rc_context(SLIDE_STYLE):
        colours = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
        fig, axes = slide(1, 3)
        for ax, metric, title in zip(axes, metrics, titles, strict=True):
            for k, ((starts, loops), alpha) in enumerate(series):
                shift = 8.0 * (k - (len(series) - 1) / 2)  # users: the points side by side
                chosen = [{**r, "users": r["users"] + shift} for r in rows
                          if (r["session_starts"], r["loops"], r["alpha"])
                          == (starts, loops, alpha)]  # fmt: skip
                name = "after break" if starts == "after_break" else "clocked"
                lines_with_ci(ax, chosen, "users", f"{metric}_rel_pct", "alpha",
                              label=f"α = {{}}, {name}, {loops}",
                              color=colours[kinds.index((starts, loops))],
                              marker="o" if alpha == 6000 else "s",
                              linestyle="-" if alpha == 6000 else "--")  # fmt: skip
            ax.axhline(0, color="k", lw=1)
            ax.set_xlabel("users")
            ax.set_xticks(sorted({r["users"] for r in rows}))
            ax.set_title(f"{title} (%)")
            ax.grid(alpha=0.3)
        fig.suptitle("CREASY against EASY, paired by seed: the work-matched regime")
        legend_below(fig, axes[0], ncols=3)
    return save(fig, path)


if __name__ == "__main__":
    sys.exit(main())
