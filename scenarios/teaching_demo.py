"""Experiment 8: a teaching demo, two weeks of a small site under FCFS and under EASY.

Twenty complete users (sessions, breaks, day and night workers, weekdays and weekends) on 128
processors for two weeks, once under FCFS and once under EASY, the same users both times. Per
hour: sessions active, jobs waiting, utilization. A student sees the daily and weekly cycle
and the feedback: where responses are slow, users leave, and fewer sessions are active
(experiments.md §8; the tutorial, section 6; docs/results/teaching-demo.md).

    python scenarios/teaching_demo.py [--quick] [--out DIR] [--seed S]
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from sitesim import scenario
from sitesim.report import table
from sitesim.simulation import simulate
from sitesim.timeline import hourly

SCHEDULERS = ("FCFS", "EASY")


def main(argv: list[str] | None = None) -> int:
    args = scenario.parse(scenario.parser(__doc__), argv)
    days = 4.0 if args.quick else 14.0
    series: dict[str, dict[str, Any]] = {}
    rows = []
    for name in SCHEDULERS:
        result = simulate(20, name, days=days, warmup_days=0, seed=args.seed)
        hours = hourly(result, 0.0, days * 86400.0)
        series[name] = {key: values.tolist() for key, values in hours.items()}
        s = result.summary
        rows.append([name, s.jobs, s.throughput_per_h, s.jobs_per_session, s.response_mean_min,
                     float(np.mean(hours["sessions"])), float(np.mean(hours["waiting"])),
                     s.utilization])  # fmt: skip
    print(table(("Scheduler", "Jobs", "Jobs/h", "Jobs/session", "Avg.Response(min)",
                 "Sessions active", "Jobs waiting", "Utilization"), rows))  # fmt: skip
    data = {"days": days, "users": 20, "seed": args.seed, "hourly": series,
            "summary": [dict(zip(("scheduler", "jobs", "throughput_per_h", "jobs_per_session",
                                  "response_mean_min", "sessions_active", "jobs_waiting",
                                  "utilization"), row, strict=True)) for row in rows]}  # fmt: skip
    scenario.publish(
        args.out, data, name="teaching_demo",
        figures={"timeline.png": lambda path: figure(series, days, path)},
    )  # fmt: skip
    return 0


def figure(series, days, path):  # type: ignore[no-untyped-def]
    """Sessions active, sessions started so far, jobs waiting and utilization per hour, FCFS
    against EASY; nights and the weekend shaded."""
    import matplotlib.pyplot as plt

    from sitesim.figures import save

    panels = (("sessions", "sessions active"), ("sessions_started", "sessions started (total)"),
              ("waiting", "jobs waiting"), ("utilization", "utilization"))  # fmt: skip
    fig, axes = plt.subplots(4, 1, figsize=(12, 9.5), sharex=True, layout="constrained")
    for ax, (key, title) in zip(axes, panels, strict=True):
        for name, color in zip(SCHEDULERS, ("tab:red", "tab:blue"), strict=True):
            hours = np.asarray(series[name]["hour"])
            values = np.asarray(series[name][key])
            if key == "sessions_started":
                values = np.cumsum(values)
            ax.step(hours / 24, values, where="post", color=color, lw=1, label=name)
        for day in range(int(days)):
            weekend = day % 7 >= 5
            ax.axvspan(day, day + 7.5 / 24, color="grey", alpha=0.12, lw=0)  # night
            ax.axvspan(day + 17.5 / 24, day + 1, color="grey", alpha=0.12, lw=0)
            if weekend:
                ax.axvspan(day, day + 1, color="tab:green", alpha=0.08, lw=0)
        ax.set_ylabel(title)
        ax.grid(alpha=0.3)
    axes[0].legend(loc="upper right", fontsize=8)
    axes[-1].set_xlabel("day (0 = Monday 00:00; grey: night, green: weekend)")
    fig.suptitle("20 users, the same people under FCFS and under EASY")
    return save(fig, path)


if __name__ == "__main__":
    sys.exit(main())
