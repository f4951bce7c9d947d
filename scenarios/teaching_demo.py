"""Experiment 8: a teaching demo, two weeks of a small site under FCFS and under EASY.

Twenty complete users (sessions, breaks, day and night workers, weekdays and weekends) on 128
processors for two weeks, once under FCFS and once under EASY, the same users both times
(``--users``, ``--days`` and ``--scheduler A,B`` change them; the second scheduler's gain over
the first is reported).

1. One seed, hour by hour (timeline.png, hourly.csv): sessions active, sessions started, jobs
   waiting, utilization; and the jobs that held half the machine or more for 12 hours or
   more, which explain the long stretches in which nothing else runs. Why a queue froze shows
   in the Gantt chart (gantt.png: which job held which processors) and in the users' lanes
   (lanes.png: who waited, ran, thought, and left after a slow response); ``--animate`` adds
   animation.gif, the machine and the users over time, side by side.
2. The same two weeks over ``--seeds`` seeds (S, S+1, ...), with both feedback loops and with
   session aborts switched off (p_cont = 0.8 whatever the response): means with 95 %
   intervals, and the gain paired by seed, under each setting and the difference (runs.csv,
   means.csv, gains.csv). One seed tells a story; only the seeds tell whether it is the rule.

(experiments.md §8; the tutorial, section 6; docs/results/teaching-demo.md; the lab,
docs/lab.ipynb)

    python scenarios/teaching_demo.py [--quick] [--out DIR] [--seed S] [--seeds N]
        [--users N] [--days D] [--scheduler A,B] [--animate]

The runs are small (about 2.5 s of CPU for 10 seeds): they run one after another.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from sitesim.cli import scenario
from sitesim.cli.commands.arguments import positive_float, positive_int
from sitesim.engine.site import SiteResult
from sitesim.errors import SitesimError
from sitesim.results.report import table
from sitesim.results.timeline import hourly
from sitesim.runs.config import SiteConfig
from sitesim.runs.runner import run
from sitesim.sweeps.replications import summarize_runs
from sitesim.views.animation import animate
from sitesim.views.gantt import draw_gantt
from sitesim.views.lanes import lanes_figure
from sitesim.views.run_view import RunView

SCHEDULERS = ("FCFS", "EASY")
USERS = 20
DAYS, QUICK_DAYS = 14.0, 4.0
DAY = 86_400.0
#: Per run: the summary fields reported over the seeds, then two from the hourly series.
METRICS = ("jobs", "throughput_per_h", "sessions", "jobs_per_session", "response_mean_min",
           "utilization", "sessions_active", "jobs_waiting", "full_machine_h",
           "idle_while_waiting_proc_h", "blocking_jobs")  # fmt: skip
GAINS = ("jobs", "sessions", "jobs_per_session", "response_mean_min", "utilization")


def site(
    scheduler: str, days: float, seed: int, loops: str = "both loops", users: int = USERS
) -> SiteConfig:
    """The demo's site: complete users, no warm-up (the figure starts on Monday 00:00)."""
    a, b = scenario.LOOPS[loops]
    return SiteConfig(users=users, scheduler=scheduler, days=days, warmup_days=0, seed=seed,
                      pcont_a=a, pcont_b=b)  # fmt: skip


def blocking(result: SiteResult) -> list[dict[str, Any]]:
    """The jobs that held half the machine or more for 12 hours or more, by start."""
    rec = result.records
    held = rec[(rec["size"] >= result.procs / 2) & (rec["runtime"] >= 12 * 3600)]
    return [{"user": int(j["user"]), "size": int(j["size"]), "runtime_h": j["runtime"] / 3600,
             "submit_d": j["submit"] / DAY, "start_d": j["start"] / DAY, "end_d": j["end"] / DAY}
            for j in np.sort(held, order="start")]  # fmt: skip


def hour_counts(hours: dict[str, np.ndarray], procs: int) -> dict[str, float]:
    """From the hourly series: mean sessions active and jobs waiting; hours with the whole
    machine busy (utilization > 0.99); and idle processor-hours in hours in which a job
    waited on average (the processors a scheduler left idle while work waited)."""
    utilization, waiting = hours["utilization"], hours["waiting"]
    idle = (1 - utilization) * procs * (waiting >= 1)
    return {"sessions_active": float(np.mean(hours["sessions"])),
            "jobs_waiting": float(np.mean(waiting)),
            "full_machine_h": float(np.sum(utilization > 0.99)),
            "idle_while_waiting_proc_h": float(np.sum(idle))}  # fmt: skip


def seed_row(config: SiteConfig) -> dict[str, Any]:
    """One run of the multi-seed part (a worker's task): its summary, the counts of
    :func:`hour_counts`, and how many blocking jobs it ran."""
    result = run(config)
    hours = hourly(result, 0.0, config.days * DAY)
    row: dict[str, Any] = result.summary.as_dict()
    row.update(hour_counts(hours, result.procs), blocking_jobs=len(blocking(result)))
    return row


def options(argv: list[str] | None) -> Any:
    """The standard scenario options (no executor: the runs are small), and the demo's own."""
    p = scenario.parser(__doc__, replications=(10, 2), executors=False)
    p.add_argument("--users", type=positive_int, default=USERS, help=f"users ({USERS})")
    p.add_argument("--days", type=positive_float,
                   help=f"days ({DAYS:g}; --quick {QUICK_DAYS:g})")  # fmt: skip
    p.add_argument("--scheduler", default=",".join(SCHEDULERS), metavar="A,B",
                   help="two schedulers; the second's gain over the first (FCFS,EASY)")  # fmt: skip
    p.add_argument("--animate", action="store_true",
                   help="write animation.gif into --out: the site over time")  # fmt: skip
    args = scenario.parse(p, argv)
    names = tuple(name.strip() for name in args.scheduler.split(","))
    if len(names) != 2 or len(set(names)) != 2:
        raise SitesimError(f"--scheduler {args.scheduler}: give two schedulers, e.g. FCFS,EASY")
    args.schedulers = names
    if args.animate and args.out is None:
        raise SitesimError("--animate writes animation.gif into the output folder: give --out")
    return args


def main(argv: list[str] | None = None) -> int:
    try:
        args = options(argv)
    except SitesimError as err:
        print(f"teaching_demo: error: {err}", file=sys.stderr)
        return 2
    worse, better = args.schedulers
    days = args.days or (QUICK_DAYS if args.quick else DAYS)
    series, story, held, results = one_seed(days, args.seed, args.schedulers, args.users)
    plan = [(loops, site(name, days, seed, loops, args.users)) for seed in scenario.seeds(args)
            for loops in scenario.LOOPS for name in args.schedulers]  # fmt: skip
    rows = scenario.run_all(seed_row, [c for _, c in plan], args, "teaching demo", "runs")
    runs = [{"loops": loops, "scheduler": c.scheduler, "seed": c.seed, **row}
            for (loops, c), row in zip(plan, rows, strict=True)]  # fmt: skip
    means = summarize_runs(runs, ("loops", "scheduler"), METRICS)
    split = scenario.loop_split(runs, GAINS, better=better, worse=worse)
    ahead = {m: _seeds_ahead(runs, m, better, worse) for m in ("jobs", "sessions")}
    print(
        f"\nOver {len(scenario.seeds(args))} seeds (seeds {args.seed}..), mean ± 95 % half-width:"
    )
    print(table(("Loops", "Scheduler", *METRICS),
                [[r["loops"], r["scheduler"], *(scenario.pm(r, m) for m in METRICS)]
                 for r in means]))  # fmt: skip
    print(f"\n{better}'s gain over {worse}, % (paired by seed; difference in percentage points):")
    print(table(("Loops", *GAINS), [[r["loops"], *(scenario.pm(r, m) for m in GAINS)]
                                    for r in split]))  # fmt: skip
    print(f"{better} ahead (both loops), seeds: "
          + ", ".join(f"{m} {k} of {n}" for m, (k, n) in ahead.items()))  # fmt: skip
    data = {"days": days, "users": args.users, "schedulers": list(args.schedulers),
            "seed": args.seed, "seeds": scenario.seeds(args), "loops": scenario.LOOPS,
            "hourly": series, "summary": story, "blocking": held, "runs": runs, "means": means,
            "gains": split, "ahead": ahead}  # fmt: skip
    views = [RunView.from_result(r) for r in results]
    figures = {
        "timeline.png": lambda path: figure(series, days, args.users, path),
        "gantt.png": lambda path: gantt_panels(views, path),
        "lanes.png": lambda path: lanes_figure(views, path=path),
    }
    if args.animate:
        figures["animation.gif"] = lambda path: animate(views, path, window=(0.0, days * DAY))
    hourly_rows = [{"scheduler": name, **dict(zip(values, hour, strict=True))}
                   for name, values in series.items()
                   for hour in zip(*values.values(), strict=True)]  # fmt: skip
    scenario.publish(
        args.out, data, name="teaching_demo",
        tables={"hourly.csv": hourly_rows, "runs.csv": runs, "means.csv": means,
                "gains.csv": split},
        figures=figures,
    )  # fmt: skip
    return 0


def one_seed(
    days: float, seed: int, schedulers: tuple[str, ...] = SCHEDULERS, users: int = USERS
) -> tuple[
    dict[str, dict[str, Any]], list[dict[str, Any]], dict[str, list[dict[str, Any]]],
    list[SiteResult],
]:  # fmt: skip
    """The one-seed story: hourly series, the table, the blocking jobs per scheduler, and the
    runs themselves."""
    series: dict[str, dict[str, Any]] = {}
    rows, held, results = [], {}, []
    for name in schedulers:
        result = run(site(name, days, seed, users=users))
        results.append(result)
        hours = hourly(result, 0.0, days * DAY)
        series[name] = {key: values.tolist() for key, values in hours.items()}
        held[name] = blocking(result)
        s, counts = result.summary, hour_counts(hours, result.procs)
        rows.append([name, s.jobs, s.throughput_per_h, s.jobs_per_session, s.response_mean_min,
                     counts["sessions_active"], s.sessions, counts["jobs_waiting"], s.utilization,
                     counts["full_machine_h"], counts["idle_while_waiting_proc_h"]])  # fmt: skip
    header = ("Scheduler", "Jobs", "Jobs/h", "Jobs/session", "Avg.Response(min)",
              "Sessions active", "Sessions started", "Jobs waiting", "Utilization",
              "Full machine (h)", "Idle while waiting (proc-h)")  # fmt: skip
    print(f"Seed {seed}, {days:g} days:")
    print(table(header, rows))
    for name in schedulers:
        for j in held[name]:
            print(f"{name}: user {j['user']}, {j['size']} processors for {j['runtime_h']:.1f} h, "
                  f"submitted day {j['submit_d']:.2f}, ran days {j['start_d']:.2f}-"
                  f"{j['end_d']:.2f}")  # fmt: skip
    keys = ("scheduler", "jobs", "throughput_per_h", "jobs_per_session", "response_mean_min",
            "sessions_active", "sessions_started", "jobs_waiting", "utilization",
            "full_machine_h", "idle_while_waiting_proc_h")  # fmt: skip
    return series, [dict(zip(keys, row, strict=True)) for row in rows], held, results


def _seeds_ahead(
    runs: list[dict[str, Any]], metric: str, better: str, worse: str
) -> tuple[int, int]:
    """(seeds in which ``better``'s ``metric`` beats ``worse``'s, seeds) with both loops."""
    both = {(r["scheduler"], r["seed"]): r[metric] for r in runs if r["loops"] == "both loops"}
    seeds = sorted({seed for _, seed in both})
    return sum(both[better, s] > both[worse, s] for s in seeds), len(seeds)


def gantt_panels(views: list[RunView], path: Any) -> Any:
    """The one seed's Gantt charts, one above the other, coloured by user."""
    import matplotlib.pyplot as plt

    from sitesim.figures import save

    fig, axes = plt.subplots(len(views), 1, figsize=(13, 3.6 * len(views)), sharex=True,
                             layout="constrained")  # fmt: skip
    for ax, view in zip(axes, views, strict=True):
        draw_gantt(ax, view, "user")
        ax.set_title(f"{view.label}: which job held which processors", fontsize=10, loc="left")
    return save(fig, path)


def figure(series, days, users, path):  # type: ignore[no-untyped-def]
    """Sessions active, sessions started so far, jobs waiting and utilization per hour, FCFS
    against EASY; nights and the weekend shaded."""
    import matplotlib.pyplot as plt

    from sitesim.figures import save

    panels = (("sessions", "sessions active"), ("sessions_started", "sessions started (total)"),
              ("waiting", "jobs waiting"), ("utilization", "utilization"))  # fmt: skip
    fig, axes = plt.subplots(4, 1, figsize=(12, 9.5), sharex=True, layout="constrained")
    for ax, (key, title) in zip(axes, panels, strict=True):
        for name, color in zip(series, ("tab:red", "tab:blue"), strict=True):
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
    fig.suptitle(f"{users} users, the same people under {' and under '.join(series)} (one seed)")
    return save(fig, path)


if __name__ == "__main__":
    sys.exit(main())
