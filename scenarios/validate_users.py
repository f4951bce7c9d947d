"""Validation of the user models against their workload profile (users.md §5).

1. A long run of static users must reproduce the profile's batch widths, sizes, runtimes,
   inter-submission gaps and think times. For each, the two-sample Kolmogorov-Smirnov statistic
   between the jobs the simulation generated and a large sample drawn from the profile is
   reported, beside a *noise floor*: the KS statistic between two runs that differ only in their
   seed. Users reuse job shapes (size repetitions) and batches cluster jobs, so the effective
   sample size is far below the job count and the floor is the fair yardstick.
2. The same jobs decomposed back with ``sitesim.workload.activity`` (the trace-analysis
definitions):
   how much of the generated structure an analyst would recover from the output SWF.
3. Complete users: the share of submissions in daytime (07:30-17:30, Monday 00:00 = time 0)
   and on weekdays, against the model's 70 % day workers and 80 % weekday workers.

    python scenarios/validate_users.py [--quick] [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from sitesim.engine.metrics import pair_keys
from sitesim.models.cycles import ActivityCycle
from sitesim.models.streams import stream
from sitesim.models.users import UserModel
from sitesim.output import atomic_write, to_json
from sitesim.results.report import result_header, result_swf
from sitesim.runs.simulate import simulate
from sitesim.schedulers import create
from sitesim.workload.activity import decompose
from sitesim.workload.profile import WorkloadProfile, default_profile
from sitesim.workload.swf import SWFTrace

DAY = 86_400.0


def generated(records: np.ndarray) -> dict[str, np.ndarray]:
    """The generator's own samples, from the per-job records (batch ids, think times)."""
    order = np.lexsort((records["submit"], records["user"]))
    rec = records[order]
    key = pair_keys(rec["user"], rec["batch"])
    _, widths = np.unique(key, return_counts=True)
    same_batch = key[1:] == key[:-1]
    # the first job of a batch that follows another batch carries the pure think time
    first_of_batch = np.concatenate(([True], ~same_batch)) & (rec["preceding"] > 0)
    return {
        "batch widths": widths.astype(float),
        "sizes": rec["size"].astype(float),
        "runtimes": rec["runtime"],
        "inter-submission gaps": np.diff(rec["submit"])[same_batch],
        "think times": rec["think"][first_of_batch],
    }


def batch_starts(records: np.ndarray) -> np.ndarray:
    """True for each record that is the first job of its batch (in record order)."""
    order = np.lexsort((records["submit"], records["user"]))
    key = pair_keys(records["user"][order], records["batch"][order])
    first = np.concatenate(([True], key[1:] != key[:-1]))
    starts = np.empty(len(records), dtype=bool)
    starts[order] = first
    return starts


def profile_samples(profile: WorkloadProfile, procs: int, n: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(12345)
    return {
        "batch widths": profile.batch_widths.sample(rng, n),
        "sizes": profile.sizes.restricted(procs).sample(rng, n),
        "runtimes": np.rint(profile.runtimes.sample(rng, n)),
        "inter-submission gaps": np.rint(profile.inter_submission.sample(rng, n)),
        "think times": np.rint(profile.think_short.sample(rng, n)),
    }


def decomposed(result: Any) -> dict[str, np.ndarray]:
    """The same jobs as an analyst would see them in the output SWF."""
    trace = SWFTrace("simulated", result_header(result), result_swf(result))
    activity = decompose(trace)
    return {
        "batch widths": activity.widths.astype(float),
        "inter-submission gaps": activity.inter_submission,
        "think times": activity.short_thinks,
    }


def ks(a: np.ndarray, b: np.ndarray) -> float:
    return float(stats.ks_2samp(a, b).statistic) if len(a) and len(b) else float("nan")


def static_validation(users: int, days: float, procs: int) -> dict[str, Any]:
    profile = default_profile()
    model = UserModel(kind="static")
    runs = [
        simulate(
            users, create("EASY"), model=model, procs=procs, days=days, seed=seed, warmup_days=0
        )
        for seed in (1, 2)
    ]
    sim = generated(runs[0].records)
    other = generated(runs[1].records)
    reference = profile_samples(profile, procs, 200_000)
    analysed = decomposed(runs[0])
    rows = {}
    for name, values in sim.items():
        rows[name] = {
            "samples": len(values),
            "ks_vs_profile": ks(values, reference[name]),
            "ks_noise_floor": ks(values, other[name]),
            "median_simulated": float(np.median(values)),
            "median_profile": float(np.median(reference[name])),
            "ks_decomposed_vs_profile": ks(analysed[name], reference[name])
            if name in analysed
            else None,
        }
    return {"users": users, "days": days, "procs": procs, "jobs": len(runs[0].records),
            "distributions": rows}  # fmt: skip


def cycle_validation(users: int, days: float, procs: int) -> dict[str, Any]:
    seed = 1
    result = simulate(users, create("EASY"), model=UserModel(kind="complete"), procs=procs,
                      days=days, seed=seed, warmup_days=0)  # fmt: skip
    submit = result.records["submit"]
    clock = submit % DAY
    daytime = (clock >= 7.5 * 3600) & (clock < 17.5 * 3600)
    weekday = (np.floor(submit / DAY) % 7) < 5
    # each user's worker type, drawn again from the user's own cycle stream
    cycles = {u: ActivityCycle.draw(stream(seed, u, "cycle")) for u in range(1, users + 1)}
    user = result.records["user"].tolist()
    by_day_workers = np.array([cycles[u].day_worker for u in user])
    by_weekday_workers = np.array([cycles[u].weekday_worker for u in user])
    in_window = np.array(
        [cycles[u].in_window(t) for u, t in zip(user, submit.tolist(), strict=True)]
    )
    starts = batch_starts(result.records)
    return {
        "users": users,
        "days": days,
        "jobs": len(submit),
        "daytime_share": float(daytime.mean()),
        "weekday_share": float(weekday.mean()),
        "in_own_window": float(in_window.mean()),
        "batch_starts_in_own_window": float(in_window[starts].mean()),
        "continuations_in_own_window": float(in_window[~starts].mean()),
        "continuation_share": float((~starts).mean()),
        "share_by_day_workers": float(by_day_workers.mean()),
        "share_by_weekday_workers": float(by_weekday_workers.mean()),
        "day_workers": float(np.mean([c.day_worker for c in cycles.values()])),
        "weekday_workers": float(np.mean([c.weekday_worker for c in cycles.values()])),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short runs (for the tests)")
    parser.add_argument("--out", type=Path, help="write validation.json here")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    if args.quick:
        static = static_validation(users=4, days=28, procs=128)
        cycles = cycle_validation(users=20, days=14, procs=128)
    else:
        static = static_validation(users=10, days=364, procs=128)
        cycles = cycle_validation(users=100, days=182, procs=128)
    print(f"Static users: {static['users']} users, {static['days']:g} days, "
          f"{static['jobs']:,} jobs, {static['procs']} processors")  # fmt: skip
    header = f"{'distribution':22s} {'samples':>8s} {'KS vs profile':>14s} {'KS seed 1 vs 2':>15s}"
    print(header + f" {'median sim':>11s} {'median prof':>12s} {'KS decomposed':>14s}")
    for name, row in static["distributions"].items():
        dec = row["ks_decomposed_vs_profile"]
        print(
            f"{name:22s} {row['samples']:8d} {row['ks_vs_profile']:14.4f} "
            f"{row['ks_noise_floor']:15.4f} {row['median_simulated']:11.4g} "
            f"{row['median_profile']:12.4g} {'-' if dec is None else f'{dec:.4f}':>14s}"
        )
    print(
        f"\nComplete users: {cycles['users']} users, {cycles['days']:g} days, {cycles['jobs']:,} "
        f"jobs: {100 * cycles['daytime_share']:.1f}% of submissions in daytime (07:30-17:30), "
        f"{100 * cycles['weekday_share']:.1f}% on weekdays\n"
        f"  day workers {100 * cycles['day_workers']:.0f}% of users made "
        f"{100 * cycles['share_by_day_workers']:.1f}% of the submissions; weekday workers "
        f"{100 * cycles['weekday_workers']:.0f}% made "
        f"{100 * cycles['share_by_weekday_workers']:.1f}%\n"
        f"  inside the user's own window: {100 * cycles['in_own_window']:.1f}% of submissions; "
        f"{100 * cycles['batch_starts_in_own_window']:.1f}% of batch starts, "
        f"{100 * cycles['continuations_in_own_window']:.1f}% of later jobs of a batch "
        f"({100 * cycles['continuation_share']:.1f}% of submissions), whose gaps ignore windows"
    )
    print(f"({time.perf_counter() - start:.1f} s)")
    if args.out is not None:
        atomic_write(args.out / "validation.json", to_json({"static": static, "cycles": cycles}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
