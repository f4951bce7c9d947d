"""``sitesim replay``: open (conventional) replay of an SWF trace."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

from sitesim.cli.commands import COMMANDS
from sitesim.cli.commands.arguments import (
    add_activity_options,
    add_force_option,
    add_jobs_option,
    add_scheduler_options,
    add_utility_shape_options,
    check_out,
    number,
    positive_int,
    scheduler_options,
    seed_number,
    unit_interval,
    warn_refused,
)
from sitesim.cli.commands.report import add_report_option, check_report, write_reports
from sitesim.cli.progress import ProgressBar
from sitesim.engine.site import SiteResult
from sitesim.errors import ConfigError
from sitesim.models.augment import GENERATORS
from sitesim.output import atomic_write, file_name
from sitesim.platform.boundary import trace_mismatch
from sitesim.results.report import (
    REPLAY_COLUMNS,
    RUNS_NAME,
    UTILITY_COLUMNS,
    VIOLATION_COLUMNS,
    csv_text,
    details_report,
    flat_row,
    jobs_refused,
    replay_row,
    table,
    utility_row,
    with_competitive_ratio,
    write_outputs,
)
from sitesim.runs.budget import check_replay
from sitesim.runs.config import ReplayConfig
from sitesim.runs.replay import run_replay
from sitesim.workload.swf import SWFTrace, read_swf

REPLAY_EPILOG = """\
examples:
  sitesim replay ../shared/traces/SDSC-SP2-1998-4.2-cln.swf.gz --scheduler EASY
  sitesim replay TRACE.swf --scheduler FCFS,EASY,CONSERVATIVE --load 0.9 --out runs/sp2
  sitesim replay TRACE.swf --scheduler CREASY --alpha 3000 --estimates exact
  sitesim replay ../shared/traces/SDSC-BLUE-2000-4.2-cln.swf.gz --jobs 5000:10000 \\
      --utility lee-snavely --scheduler EASY,CONSERVATIVE,PRIORITY,GA

Each scheduler gives one row: utilization, throughput (jobs submitted per hour), mean wait and
response (minutes), mean slowdown and bounded slowdown (tau = 10 s), the longest wait (hours)
and the makespan (days). With --out, each run writes simulated.swf (all 18 fields), results.json
(configuration, version, summary metrics) and jobs.csv (one row per job); with several
schedulers, into one sub-folder each, and runs.csv holds one row per run with every summary
metric. `sitesim rerun DIR/results.json` repeats a run.

Lines the machine cannot run (unknown or negative runtime, unknown size, more processors than
the machine) are skipped and counted in lenient mode (the default), or stop the run with
--strict.

When the trace records dependencies (SWF field 17: the job a job waited for, as in the traces
of site-level runs), two more columns give the fractions of jobs submitted before the job they
depend on ended (Sub.Viol) and started before it started (Ord.Viol): the situations load
scaling creates and real users never would.

When jobs carry utility functions (an extended SWF trace, or --utility), a second table gives
the utility earned: the aggregate, the % of start value earned per job (mean and median),
the utility share of the users (mean, min) and the competitive ratio against EASY on the same
workload (EASY is run too if not asked for). --uncertainty and --wealth-gini perturb the values
the schedulers see; the metrics use the true ones (docs/reference/utility.md).

--feedback replays with the users' dependencies kept: a job that depended on an earlier one
(field 17, or inferred from the trace with --think and --threshold) is submitted its think time
after that job's *simulated* end; jobs inside a batch keep their offsets; the others keep their
(scaled) timestamps. A line tells how many jobs moved and by how much
(docs/reference/replay.md#feedback-replay).
"""


def add_parser(commands: Any) -> None:
    p = commands.add_parser(
        "replay",
        help=COMMANDS["replay"],
        description="Replay the jobs of an SWF trace at their timestamps (an open model: "
        "submissions ignore how the scheduler serves them) and report the standard metrics.",
        epilog=REPLAY_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("trace", type=Path, help="SWF trace (.swf or .swf.gz)")
    add_scheduler_options(p)
    low, high = ReplayConfig.SCALE_RANGE
    most = ReplayConfig.MAX_LOAD
    load = p.add_mutually_exclusive_group()
    load.add_argument(
        "--scale",
        type=number(low, high),
        metavar="F",
        help=f"multiply inter-arrival times by F in [{low:g}, {high:g}] (F < 1 raises the load)",
    )
    load.add_argument(
        "--load",
        type=number(0, most, above=True),
        metavar="L",
        help=f"scale inter-arrival times to offered load L in (0, {most:g}], L = "
        f"sum(size*runtime)/(procs*span), by a factor in [{low:g}, {high:g}]",
    )
    p.add_argument(
        "--procs",
        type=positive_int,
        metavar="N",
        help="machine size (default: the trace header's MaxProcs, else MaxNodes)",
    )
    p.add_argument(
        "--platform",
        metavar="FILE",
        help="a platform file (TOML: node types, partitions, downtime; "
        "docs/reference/platform.md) or a shipped platform (curie); instead of --procs",
    )
    p.add_argument(
        "--estimates",
        choices=("trace", "exact"),
        default="trace",
        help="runtime estimates: the trace's requested times (default) or the exact runtimes",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="fail at the first impossible job instead of skipping and counting it",
    )
    add_jobs_option(p)
    p.add_argument(
        "--utility",
        choices=GENERATORS,
        metavar="GENERATOR",
        help="give every job a synthetic utility function first, drawn from --seed: "
        f"{', '.join(GENERATORS)} (as `sitesim utility augment`; default: the trace's own)",
    )
    add_utility_shape_options(p, "with --utility: ")
    p.add_argument(
        "--seed",
        type=seed_number,
        default=1,
        help="seed of the synthetic utility functions, the inaccuracy draws, the GA and a "
        "platform's node failures (1)",
    )
    p.add_argument(
        "--uncertainty",
        type=unit_interval,
        default=0.0,
        metavar="K",
        help="user uncertainty k in [0, 1]: stated utility values drawn around the true ones' "
        "percentiles (utility traces; 0 states the truth)",
    )
    p.add_argument(
        "--wealth-gini",
        type=unit_interval,
        default=0.0,
        metavar="K",
        help="wealth inequity, the Gini k in [0, 1]: round(k * users) users state values near 0",
    )
    p.add_argument(
        "--cancel-expired",
        action="store_true",
        help="cancel a waiting job once its utility can no longer be earned",
    )
    p.add_argument(
        "--feedback",
        action="store_true",
        help="keep the users' dependencies: a dependent job is submitted after the simulated "
        "end of the job it depends on",
    )
    add_activity_options(p, "with --feedback, when the trace has no field 17: ")
    p.set_defaults(think=None, threshold=None)  # (to tell them given without --feedback)
    p.add_argument("--out", type=Path, metavar="DIR", help="write SWF, results.json and CSV here")
    add_force_option(p)
    add_report_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    settings = scheduler_options(args)
    for option, value in (("--think", args.think), ("--threshold", args.threshold)):
        if value is not None and not args.feedback:
            raise ConfigError(f"{option} applies to --feedback only (how it infers dependencies)")
    check_out(args, clear=False)
    check_report(args)
    trace = read_swf(args.trace)
    check_replay(len(trace), write=args.out is not None)
    if args.procs is not None and args.platform is not None:
        raise ConfigError("give --procs or --platform, not both (a platform sets the machine)")
    base = ReplayConfig(
        trace=str(args.trace),
        trace_sha256=trace.sha256,
        procs=args.procs,
        platform=args.platform,
        scale=args.scale,
        load=args.load,
        estimates=args.estimates,
        strict=args.strict,
        feedback=args.feedback,
        **({"think": args.think} if args.think else {}),
        **({"threshold_min": args.threshold} if args.threshold else {}),
        uncertainty=args.uncertainty,
        wealth_gini=args.wealth_gini,
        cancel_expired=args.cancel_expired,
        seed=args.seed,
        start_job=args.jobs[0] if args.jobs else 0,
        stop_job=args.jobs[1] if args.jobs else None,
        utility=args.utility,
        deadline_factor=args.deadline_factor,
        utility_decay=args.decay,
    )
    check_out(args)  # (with --force, the folder is emptied only now)
    results: list[SiteResult] = []
    for config in (base.replace(**s) for s in settings):
        with ProgressBar(f"replay {config.scheduler}") as bar:
            result = run_replay(config, trace=trace, progress=bar)
        if not results:
            _report_workload(result, trace, load_set=args.load is not None)
        results.append(result)
    refused = [(r.label, jobs_refused(r.rejected, r.workload)) for r in results]
    warn_refused(refused, of=len(results))
    if any(r.summary.utility_jobs for r in results):
        reference = next((r for r in results if r.label == "EASY"), None)
        if reference is None:  # competitive ratios are against EASY on the same workload
            reference = run_replay(base.replace(scheduler="EASY", scheduler_params={}), trace=trace)
        results = [with_competitive_ratio(r, reference) for r in results]
    violations = any(r.summary.dependent_jobs for r in results)
    columns = REPLAY_COLUMNS + (VIOLATION_COLUMNS if violations else ())
    print(table(columns, [replay_row(r, violations=violations) for r in results]))
    if any(r.summary.utility_jobs for r in results):
        print(table(UTILITY_COLUMNS, [utility_row(r) for r in results]))
    for result in results:
        if (details := details_report(result)) is not None:
            print(details)
    for result in results:
        if "feedback" in result.workload:
            print(_moved(result))
    if args.out is not None:
        for setting, result in zip(settings, results, strict=True):
            folder = args.out / file_name(setting["scheduler"]) if len(settings) > 1 else args.out
            write_outputs(folder, result, trace)
        if len(settings) > 1:
            atomic_write(args.out / RUNS_NAME, csv_text([flat_row(r) for r in results]))
        print(f"outputs written to {args.out}")
    if args.report:
        many = len(settings) > 1
        write_reports(
            args.out, [args.out / file_name(s["scheduler"]) if many else args.out for s in settings]
        )
    return 0


def _moved(result: SiteResult) -> str:
    facts = result.workload["feedback"]
    return (
        f"{result.label}: feedback moved {facts['jobs_moved']:,} of "
        f"{result.workload['jobs_replayed']:,} submissions ({facts['jobs_moved_earlier']:,} "
        f"earlier, {facts['jobs_moved_later']:,} later; by a median of "
        f"{facts['moved_by_p50_h']:.2f} h, 98th percentile {facts['moved_by_p98_h']:.1f} h); "
        f"{facts['dependent_jobs']:,} dependent jobs, {facts['dependencies']}"
    )


def _report_workload(result: SiteResult, trace: SWFTrace, *, load_set: bool) -> None:
    facts = result.workload
    if unsorted := facts["jobs_out_of_order"]:
        lines = f"{unsorted:,} job line is" if unsorted == 1 else f"{unsorted:,} job lines are"
        print(
            f"sitesim: warning: {lines} out of submit order (the fewest lines that would have "
            "to move to sort the file): replayed in submit order",
            file=sys.stderr,
        )
    load = facts["offered_load"]
    if result.platform is not None:
        mismatch = trace_mismatch(facts["trace"], trace.max_procs, result.platform, load, load_set)
        if mismatch is not None:
            print(f"sitesim: warning: {mismatch}", file=sys.stderr)
    shown = f"{load:.3f}" if math.isfinite(load) else "unknown (all jobs arrive at once)"
    print(
        f"{facts['trace']}: {facts['jobs_replayed']:,} jobs on {result.procs} processors, "
        f"offered load {shown}"
        + (
            f" (scale factor {facts['scale_factor']:.4g}; "
            f"original {facts['offered_load_original']:.3f})"
            if facts["scale_factor"] != 1.0
            else ""
        )
    )
