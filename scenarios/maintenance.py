"""What a weekly maintenance window costs a site's users, and what an open replay predicts.

A site of 128 one-core nodes in one exclusive partition, 40 complete users (the shipped
profile), EASY, 91 days with a 7-day warm-up, drained every Tuesday from 08:00 for 0, 2, 4 or
8 hours on all nodes (docs/results/maintenance.md). One platform file a level is written
(``maintenance-<h>h.toml``; the 0-hour one has no ``[downtime]`` table, so its runs are those
of ``--procs 128``), and for every seed:

- the **site-level runs** (closed: users in the loop), one per level;
- the **open replays** of the trace the 0-hour site-level run produced, on every level's
  platform: the conventional prediction of what the window costs, measured over the same
  window as the site-level runs (warm-up to horizon), every job run to completion.

Each quantity's change from the 0-hour level is taken seed by seed (in %), closed and open,
with 95 % intervals, and the gap between the two (closed minus open, percentage points,
paired by seed). Checks count, over the whole run (the windows go on while the machine
drains past the horizon), the jobs that ran during a window and the jobs a window killed and
requeued: there must be none of either.

    python scenarios/maintenance.py [--quick] [--out DIR] [--seed S] [--seeds N]
        [--serial | --workers N | --dask ...]

One task a seed (four site-level runs and four replays, about 15 s of CPU at the full size).
"""

from __future__ import annotations

import math
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from sitesim.cli import scenario
from sitesim.engine.metrics import DAY, HOUR, summarize
from sitesim.engine.site import SiteResult
from sitesim.output import atomic_write
from sitesim.results.report import result_trace, table
from sitesim.runs.config import ReplayConfig, SiteConfig
from sitesim.runs.replay import run_replay
from sitesim.runs.runner import run
from sitesim.sweeps.compare import drain_days
from sitesim.sweeps.replications import paired_differences, summarize_runs

#: The window's durations, hours; where it starts and how often (Slurm time syntax).
LEVELS = (0, 2, 4, 8)
START, EVERY = "1-08:00:00", "7-00:00:00"
NODES = 128
#: (users, days, warm-up days) of the full study and of --quick.
FULL, QUICK = (40, 91.0, 7.0), (10, 21.0, 7.0)
#: Quantities of every run (NaN where a run has none: sessions in an open replay).
METRICS = ("throughput_per_h", "ended_per_h", "jobs_per_session", "sessions", "wait_mean_min",
           "response_mean_min", "utilization", "availability", "drain_d")  # fmt: skip
#: Those whose change from the 0-hour level is compared, closed against open.
CHANGES = ("throughput_per_h", "ended_per_h", "jobs_per_session", "sessions", "wait_mean_min",
           "response_mean_min", "utilization")  # fmt: skip


def platform_text(hours: int) -> str:
    """The platform file of a level: 128 one-core nodes in one exclusive partition, and with
    ``hours`` > 0 a window of that many hours every Tuesday from 08:00 on every node."""
    text = (
        f'name = "maintenance-{hours}h"\n\n'
        f'[[nodes]]\ntype = "cpu"\ncount = {NODES}\ncores = 1\n\n'
        '[[partitions]]\nname = "all"\nnodes = ["cpu"]\nallocation = "exclusive"\n'
    )
    if hours:
        text += (
            f'\n[[downtime.maintenance]]\nstart = "{START}"\nduration = "{hours}:00:00"\n'
            f'every = "{EVERY}"\n'
        )
    return text


def write_platforms(folder: Path) -> dict[int, str]:
    """One platform file a level in ``folder``; their paths by hours."""
    paths = {}
    for hours in LEVELS:
        path = folder / f"maintenance-{hours}h.toml"
        atomic_write(path, platform_text(hours))
        paths[hours] = str(path)
    return paths


#: One seed's task: the site (any platform) and the platform file of every level, by hours.
Task = tuple[SiteConfig, tuple[tuple[int, str], ...]]


def in_windows(records: np.ndarray, hours: int, since: float, until: float) -> int:
    """How many jobs ran during a window of ``hours`` (any overlap) that began in
    [``since``, ``until``)."""
    if not hours or not len(records):
        return 0
    ran = records[np.isfinite(records["start"]) & np.isfinite(records["end"])]
    found = np.zeros(len(ran), dtype=bool)
    for down in np.arange(32 * HOUR, until, 7 * DAY):
        if down >= since:
            found |= (ran["start"] < down + hours * HOUR) & (ran["end"] > down)
    return int(found.sum())


def row(result: SiteResult, window: tuple[float, float], hours: int) -> dict[str, Any]:
    """The quantities of one run, measured over ``window``."""
    records, (t0, t1) = result.records, window
    summary = summarize(records, result.procs, window).as_dict()
    ends = records["end"][np.isfinite(records["end"])]
    stats = result.platform_stats  # (empty without downtime: the plain machine ran it)
    return {
        **{m: summary[m] for m in METRICS if m in summary},
        "ended_per_h": int(((ends >= t0) & (ends <= t1)).sum()) / ((t1 - t0) / HOUR),
        "availability": stats.get("availability", 1.0),
        "drain_d": drain_days(ends, t1 / DAY),
        "jobs_requeued": stats.get("jobs_requeued", 0),
        # over the whole run: the windows go on while the machine drains past the horizon
        "jobs_in_windows": in_windows(records, hours, 0.0, float(ends.max(initial=t1))),
        "jobs": summary["jobs"],
    }


def seed_rows(task: Task) -> list[dict[str, Any]]:
    """A worker's task: the site-level runs of one seed at every level, and the open replays
    of its 0-hour trace on every level's platform."""
    site, platforms = task
    rows, closed = [], {}
    for hours, path in platforms:
        closed[hours] = run(site.replace(platform=path))
    base = closed[0]
    window = (base.summary.window_start_d * DAY, base.summary.window_end_d * DAY)
    trace = result_trace(base, f"site-level trace, seed {site.seed}")
    for hours, path in platforms:
        config = ReplayConfig(trace=trace.name, platform=path, scheduler=site.scheduler,
                              seed=site.seed)  # fmt: skip
        replayed = run_replay(config, trace=trace)
        for model, result in (("closed", closed[hours]), ("open", replayed)):
            rows.append({"model": model, "window_h": hours, "seed": site.seed,
                         **row(result, window, hours)})  # fmt: skip
    return rows


def changes(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per run, the change of every quantity of :data:`CHANGES` from the 0-hour run of the
    same model and seed, in % (the 0-hour rows left out)."""
    base = {(r["model"], r["seed"]): r for r in runs if r["window_h"] == 0}
    out = []
    for r in runs:
        if r["window_h"]:
            b = base[r["model"], r["seed"]]
            out.append({"model": r["model"], "window_h": r["window_h"], "seed": r["seed"],
                        **{m: 100 * (r[m] / b[m] - 1) if b[m] else math.nan
                           for m in CHANGES}})  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> int:
    args = scenario.parse(scenario.parser(__doc__, replications=(10, 2)), argv)
    users, days, warmup = QUICK if args.quick else FULL
    timer = scenario.Timer()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) if args.out is None else args.out
        paths = write_platforms(folder)
        site = SiteConfig(users=users, days=days, warmup_days=warmup, scheduler="EASY")
        tasks = [(site.replace(seed=s), tuple(paths.items())) for s in scenario.seeds(args)]
        found = scenario.run_all(seed_rows, tasks, args, "maintenance", "seeds")
    runs = [r for rows in found for r in rows]
    means = summarize_runs(runs, ("model", "window_h"), METRICS)
    relative = changes(runs)
    change = summarize_runs(relative, ("model", "window_h"), CHANGES)
    gap = paired_differences(relative, ("model", "window_h"), "model", "open", CHANGES)
    report(users, days, len(tasks), means, change, gap, runs)
    print(f"wall time {timer.seconds:.1f} s")
    data = {"users": users, "days": days, "warmup_days": warmup, "nodes": NODES,
            "window": {"start": START, "every": EVERY, "hours": list(LEVELS)},
            "seeds": scenario.seeds(args), "platforms": {h: Path(p).name for h, p in paths.items()},
            "runs": runs, "means": means, "changes": change, "gap": gap,
            **checks(runs)}  # fmt: skip
    scenario.publish(args.out, data, name="maintenance",
                     tables={"runs.csv": runs, "means.csv": means, "changes.csv": change,
                             "gap.csv": gap},
                     figures={"maintenance.png": lambda path: figure(change, path)})  # fmt: skip
    return 0


def report(users: int, days: float, seeds: int, means: list[dict[str, Any]],
           change: list[dict[str, Any]], gap: list[dict[str, Any]],
           runs: list[dict[str, Any]]) -> None:  # fmt: skip
    """The tables, printed."""
    print(f"\n{users} complete users, EASY, {NODES} nodes, {days:g} days, {seeds} seeds: "
          "means ± 95 % half-width")  # fmt: skip
    print(table(("Model", "Window (h)", *METRICS),
                [[r["model"], r["window_h"], *(scenario.pm(r, m) for m in METRICS)]
                 for r in means]))  # fmt: skip
    print("\nChange from the 0-hour level, % (paired by seed)")
    print(table(("Model", "Window (h)", *CHANGES),
                [[r["model"], r["window_h"], *(scenario.pm(r, m) for m in CHANGES)]
                 for r in change]))  # fmt: skip
    print("\nClosed minus open, percentage points (paired by seed)")
    print(table(("Window (h)", *CHANGES),
                [[r["window_h"], *(scenario.pm(r, f"{m}_diff") for m in CHANGES)]
                 for r in gap]))  # fmt: skip
    found = checks(runs)
    print("\nOver the whole run, drain included (site-level, open):")
    for name, label in (("jobs_in_windows", "jobs that ran during a window"),
                        ("jobs_requeued", "jobs killed by a window and requeued")):  # fmt: skip
        print(f"  {label}: {found[name]['closed']}, {found[name]['open']}")


def checks(runs: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """By model, the jobs that ran during a window and the jobs requeued over all runs, drain
    included (there must be none of either: a window only drains the machine)."""
    return {name: {model: sum(r[name] for r in runs if r["model"] == model)
                   for model in ("closed", "open")}
            for name in ("jobs_in_windows", "jobs_requeued")}  # fmt: skip


def figure(change: list[dict[str, Any]], path: Path) -> Path:
    """Change of throughput (jobs ended per hour) and of mean wait against the window's
    length, site-level against the open replay, with 95 % intervals; a 16:9 slide, one legend
    below."""
    import matplotlib

    from sitesim.figures import OKABE_ITO, SLIDE_STYLE, legend_below, save, slide

    panels = (("ended_per_h", "jobs ended per hour, change %"),
              ("wait_mean_min", "mean wait, change %"))  # fmt: skip
    models = (("closed", OKABE_ITO[0], "-o", -0.1), ("open", OKABE_ITO[1], "--s", 0.1))
    with matplotlib.rc_context(SLIDE_STYLE):
        fig, axes = slide(1, 2)
        for ax, (metric, title) in zip(axes, panels, strict=True):
            for model, color, style, shift in models:
                mine = [r for r in change if r["model"] == model]
                x = np.array([r["window_h"] for r in mine], dtype=float) + shift
                label = "site-level (users in the loop)" if model == "closed" else "open replay"
                ax.errorbar(x, [r[metric] for r in mine], yerr=[r[f"{metric}_ci95"] for r in mine],
                            fmt=style, color=color, mfc="white" if model == "open" else None,
                            label=label)  # fmt: skip
            ax.axhline(0, color="grey", lw=1)
            ax.set_xticks(LEVELS[1:])
            ax.set_xlabel("weekly maintenance window (hours)")
            ax.set_title(title)
            ax.grid(alpha=0.3)
        legend_below(fig, axes[0], ncols=2)
    return save(fig, path)


if __name__ == "__main__":
    sys.exit(main())
