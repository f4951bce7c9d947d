"""Open versus feedback replay of real traces.

Each trace is replayed under FCFS, EASY, conservative backfilling and CREASY twice: open (every
job at its timestamp) and with feedback (a job that followed an earlier one of its user, by the
trace's own think times within the 20-minute session threshold, is submitted that think time
after the earlier job's simulated end; docs/reference/replay.md#feedback-replay). Reported:
throughput, mean response, wait and slowdown of both, how many submissions the feedback moved
and by how much, and a check that no dependent job was submitted before its predecessor ended
(users.md §4; docs/results/feedback-replay.md).

    python scenarios/feedback_replay.py [--quick] [--out DIR] [--serial | --workers N]

The traces are SDSC-SP2, CTC-SP2, KTH-SP2 and SDSC-BLUE from ../shared/traces (those present);
--quick replays the trace of a short site-level run instead, so it needs none. Replays are
deterministic: --seed only seeds that quick trace.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

from sitesim.cli import scenario
from sitesim.results.report import table, write_outputs
from sitesim.runs.config import ReplayConfig
from sitesim.runs.replay import run_replay
from sitesim.runs.simulate import simulate
from sitesim.workload.swf import read_swf

TRACES = Path(__file__).resolve().parents[1].parent / "shared" / "traces"
NAMES = ("SDSC-SP2-1998-4.2-cln.swf.gz", "CTC-SP2-1996-3.1-cln.swf.gz",
         "KTH-SP2-1996-2.1-cln.swf.gz", "SDSC-BLUE-2000-4.2-cln.swf.gz")  # fmt: skip
SCHEDULERS = ("FCFS", "EASY", "CONSERVATIVE", "CREASY")
METRICS = ("throughput_per_h", "response_mean_min", "wait_mean_min", "slowdown_mean",
           "utilization")  # fmt: skip


def replay_both(task: tuple[str, str]) -> dict[str, Any]:
    """Open and feedback replay of one trace under one scheduler (runs in a worker)."""
    path, scheduler = task
    trace = read_swf(path)
    base = ReplayConfig(trace=path, scheduler=scheduler)
    opened = run_replay(base, trace=trace)
    fed = run_replay(base.replace(feedback=True), trace=trace)
    moved = fed.workload["feedback"]
    dependent = fed.records["preceding"] > 0
    early = (
        fed.records["submit"][dependent]
        < fed.records["end"][fed.records["preceding"][dependent] - 1]
    )
    row: dict[str, Any] = {"trace": Path(path).name.split("-cln")[0], "scheduler": scheduler,
                           "jobs": opened.summary.jobs}  # fmt: skip
    for metric in METRICS:
        row[f"open_{metric}"] = getattr(opened.summary, metric)
        row[f"feedback_{metric}"] = getattr(fed.summary, metric)
    row.update(
        dependent_jobs=moved["dependent_jobs"], jobs_moved=moved["jobs_moved"],
        moved_earlier=moved["jobs_moved_earlier"], moved_later=moved["jobs_moved_later"],
        moved_by_p50_h=moved["moved_by_p50_h"], moved_by_p98_h=moved["moved_by_p98_h"],
        submitted_before_predecessor_ended=int(early.sum()),
    )  # fmt: skip
    return row


def main(argv: list[str] | None = None) -> int:
    args = scenario.parse(scenario.parser(__doc__), argv)
    timer = scenario.Timer()
    with tempfile.TemporaryDirectory() as scratch:
        if args.quick:
            site = simulate(8, "EASY", model="static", days=14, warmup_days=1, seed=args.seed)
            write_outputs(Path(scratch) / "site", site)
            paths = [str(Path(scratch) / "site" / "simulated.swf")]
        else:
            paths = [str(TRACES / name) for name in NAMES if (TRACES / name).exists()]
            missing = [name for name in NAMES if not (TRACES / name).exists()]
            if missing:
                print(f"not found in {TRACES}, left out: {', '.join(missing)}")
        tasks = [(path, scheduler) for path in paths for scheduler in SCHEDULERS]
        found = scenario.run_all(replay_both, tasks, args, "feedback replays", "replays")
    print(table(
        ("Trace", "Scheduler", "Jobs", "Thru open", "Thru fb", "Wait open(min)", "Wait fb(min)",
         "Resp open(min)", "Resp fb(min)", "SD open", "SD fb", "Moved", "Median shift(h)"),
        [[r["trace"], r["scheduler"], r["jobs"], r["open_throughput_per_h"],
          r["feedback_throughput_per_h"], r["open_wait_mean_min"], r["feedback_wait_mean_min"],
          r["open_response_mean_min"], r["feedback_response_mean_min"], r["open_slowdown_mean"],
          r["feedback_slowdown_mean"], f"{r['jobs_moved'] / r['jobs']:.0%}",
          r["moved_by_p50_h"]] for r in found],
    ))  # fmt: skip
    early = sum(row["submitted_before_predecessor_ended"] for row in found)
    print(f"dependent jobs submitted before their predecessor ended: {early}; "
          f"{timer.seconds:.0f} s")  # fmt: skip
    scenario.publish(
        args.out, {"traces": paths, "runs": found, "early_submissions": early},
        name="feedback_replay", tables={"feedback_replay.csv": found},
        figures={"feedback_replay.png": lambda path: figure(found, path)},
    )  # fmt: skip
    return 0


def figure(rows, path):  # type: ignore[no-untyped-def]
    """Per trace: mean wait and throughput, open against feedback, per scheduler (a 16:9
    slide; the schedulers named in full)."""
    import matplotlib
    import numpy as np

    from sitesim.figures import SLIDE_STYLE, legend_below, save, slide

    traces = list(dict.fromkeys(row["trace"] for row in rows))
    with matplotlib.rc_context(SLIDE_STYLE):
        fig, axes = slide(2, len(traces))
        for t, trace in enumerate(traces):
            mine = [row for row in rows if row["trace"] == trace]
            x = np.arange(len(mine))
            for ax, metric, title in (
                (axes[t], "wait_mean_min", "mean wait (min)"),
                (axes[len(traces) + t], "throughput_per_h", "throughput (jobs/h)"),
            ):
                ax.bar(x - 0.2, [r[f"open_{metric}"] for r in mine], 0.4, label="open replay")
                ax.bar(x + 0.2, [r[f"feedback_{metric}"] for r in mine], 0.4,
                       label="feedback replay")  # fmt: skip
                ax.set_xticks(x, [r["scheduler"] for r in mine], rotation=30, ha="right")
                ax.set_title(f"{trace}: {title}", fontsize=12)
                if metric == "wait_mean_min":
                    ax.set_yscale("log")
                ax.grid(alpha=0.3, axis="y")
        legend_below(fig, axes[0], ncols=2)
    return save(fig, path)


if __name__ == "__main__":
    sys.exit(main())
