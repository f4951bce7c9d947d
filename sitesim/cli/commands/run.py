"""``sitesim run``: site-level simulation with users in the loop."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from sitesim.cli.commands import COMMANDS
from sitesim.cli.commands.arguments import (
    add_force_option,
    add_scheduler_options,
    add_utility_shape_options,
    check_out,
    non_negative_float,
    positive_float,
    positive_int,
    scheduler_options,
    seed_number,
    warn_refused,
)
from sitesim.cli.commands.report import add_report_option, check_report, write_reports
from sitesim.cli.progress import ProgressBar
from sitesim.engine.site import SiteResult
from sitesim.errors import ConfigError
from sitesim.models.cycles import CycleShares
from sitesim.models.dynamics import PCONT_A, PCONT_B
from sitesim.models.synthetic import CONFIGURATIONS, MAX_LOAD
from sitesim.models.users import SESSION_STARTS, USER_KINDS
from sitesim.models.workpool import EstimateModel
from sitesim.output import atomic_write, file_name
from sitesim.results.report import (
    RESULTS_NAME,
    RUN_COLUMNS,
    RUNS_NAME,
    UTILITY_COLUMNS,
    csv_text,
    details_report,
    flat_row,
    jobs_refused,
    run_row,
    table,
    utility_row,
    with_competitive_ratio,
    write_outputs,
)
from sitesim.runs.budget import check_site_run
from sitesim.runs.config import DEFAULT_PROFILE, WARMUP_DAYS, SiteConfig
from sitesim.runs.runner import run as run_config

EPILOG = f"""\
examples:
  sitesim run --users 50-250 --step 50 --scheduler CREASY
  sitesim run --users 10 --model static --scheduler FCFS,EASY --days 28 --out runs/static
  sitesim run --users 100 --scheduler CREASY --alpha 3000 --estimates ratio --seed 7
  sitesim run --model synthetic --synthetic-config 1 --load 0.7 --days 347.2 -s FCFS,EASY

Each (user count, scheduler) gives one row: utilization, throughput (jobs submitted per hour),
jobs per session, mean response (minutes), mean slowdown. Users submit for --days days, then the
machine drains; metrics cover the jobs submitted after the warm-up ({WARMUP_DAYS:g} days by
default). With --out, every run writes simulated.swf (fields 17/18 hold each job's preceding
job and think time), results.json, jobs.csv and users.csv into its own folder
(users-NNNN-SCHEDULER), and runs.csv holds one row per run: its settings and every summary
metric (docs/reference/metrics.md). `sitesim rerun DIR/.../results.json` repeats a run.

Workload transforms (--runtime-scale, --max-batch-width) ask "what if our jobs were shorter,
our batches narrower?": every draw stays the same, only runtimes are scaled or batches cut.

User models: "complete" users (default) continue a session after a job with response r
minutes with probability p_cont = a / (b r + 1) (--pcont, default {PCONT_A} {PCONT_B}), take
breaks, and work in day/night, weekday/weekend windows; "static" users never leave.
"synthetic" is the open workload of experiment 5 (Stoica & Pothen): Poisson arrivals at the
rate that offers --load to the machine, in three classes (sizes 1-16, 17-32, 33-64;
hyperexponential service times) whose mean service times and shares --synthetic-config
chooses; its jobs are spread over --users users (default 10), and 500,000 minutes are
--days 347.2 (docs/reference/run.md).
"""


def users_range(text: str) -> tuple[int, int]:
    """``N`` or ``A-B`` (1 <= A <= B)."""
    match = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", text)
    if not match:
        raise argparse.ArgumentTypeError(f"expected N or A-B (e.g. 50-250), got {text!r}")
    low = int(match.group(1))
    high = int(match.group(2) or low)
    if not 1 <= low <= high:
        raise argparse.ArgumentTypeError(f"expected 1 <= A <= B, got {text!r}")
    return low, high


def estimate_model(text: str) -> EstimateModel:
    try:
        return EstimateModel.parse(text)
    except ConfigError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def add_parser(commands: Any) -> None:
    p = commands.add_parser(
        "run",
        help=COMMANDS["run"],
        description="Simulate a site: users who submit jobs, wait for them, think, and "
        "continue or leave depending on how fast their jobs come back.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--users",
        type=users_range,
        metavar="N|A-B",
        help="number of users, or a range A-B run in steps of --step (default 50; 10 with "
        "--model synthetic, as in experiment 5)",
    )
    p.add_argument(
        "--step", type=positive_int, default=50, help="step of the user range (default 50)"
    )
    add_scheduler_options(p)
    p.add_argument(
        "--model",
        choices=USER_KINDS,
        default="complete",
        help="complete users (session dynamics, activity cycles; default), static users, or "
        "the synthetic Poisson workload of experiment 5",
    )
    p.add_argument(
        "--synthetic-config",
        type=int,
        choices=tuple(CONFIGURATIONS),
        metavar="N",
        help="with --model synthetic: the configuration of experiment 5, 1..5 (each class's "
        "mean service time and share of the arrivals; default 1)",
    )
    p.add_argument(
        "--load",
        type=positive_float,
        metavar="RHO",
        help=f"with --model synthetic: offered load in (0, {MAX_LOAD:g}], arrival rate x "
        "mean(size x service) / procs (default 0.5)",
    )
    p.add_argument("--days", type=positive_float, default=182.0, help="horizon (default 182)")
    p.add_argument(
        "--warmup",
        type=non_negative_float,
        default=WARMUP_DAYS,
        metavar="DAYS",
        help=f"days left out of the metrics (default {WARMUP_DAYS:g})",
    )
    p.add_argument("--procs", type=positive_int, help="processors (default 128)")
    p.add_argument(
        "--platform",
        metavar="FILE",
        help="a platform file (TOML: node types, partitions, downtime; "
        "docs/reference/platform.md) or a shipped platform (curie); instead of --procs",
    )
    p.add_argument(
        "--profile",
        type=Path,
        metavar="FILE",
        help="workload profile JSON file, or a shipped one by name: default (the default) or "
        "thesis (the Site-Sim thesis' short-job regime, docs/results/creasy.md)",
    )
    p.add_argument(
        "--seed", type=seed_number, default=1, help="root seed of every random stream, >= 0 (1)"
    )
    p.add_argument(
        "--estimates",
        type=estimate_model,
        default=EstimateModel(),
        metavar="exact|ratio|factor:F",
        help="runtime estimates: exact (default), the profile's request ratios, or F x runtime",
    )
    p.add_argument(
        "--correlated",
        action="store_true",
        help="draw runtimes from the runtimes of jobs of the same size class",
    )
    p.add_argument(
        "--runtime-scale",
        type=positive_float,
        default=1.0,
        metavar="F",
        help="workload transform: multiply every runtime (and estimate) by F (default 1)",
    )
    p.add_argument(
        "--max-batch-width",
        type=positive_int,
        metavar="N",
        help="workload transform: cut batches to at most N jobs (default: as drawn)",
    )
    p.add_argument(
        "--session-starts",
        choices=SESSION_STARTS,
        default="after_break",
        help="when a user starts a session: a break after the last one's last job ended "
        "(after_break, the thesis' model, the default); sensitivity options, not the thesis' "
        "model: a break after its first submission (scheduled), or at each window opening "
        "and then every break, whatever sessions are open (clocked)",
    )
    p.add_argument(
        "--start-gap-scale",
        type=positive_float,
        default=1.0,
        metavar="F",
        help="clocked session starts: multiply the breaks between starts by F (default 1)",
    )
    p.add_argument(
        "--pcont",
        type=float,
        nargs=2,
        metavar=("A", "B"),
        default=(PCONT_A, PCONT_B),
        help=f"p_cont(r) = A / (B r + 1), r in minutes (default {PCONT_A} {PCONT_B})",
    )
    p.add_argument(
        "--day-share",
        type=float,
        default=CycleShares().day,
        metavar="P",
        help="share of day workers (default 0.7)",
    )
    p.add_argument(
        "--weekday-share",
        type=float,
        default=CycleShares().weekday,
        metavar="P",
        help="share of weekday workers (default 0.8)",
    )
    p.add_argument(
        "--utility",
        action="store_true",
        help="every job carries a Lee & Snavely utility function (docs/reference/utility.md)",
    )
    add_utility_shape_options(p, "with --utility: ")
    p.add_argument(
        "--deadline-wait",
        type=non_negative_float,
        metavar="MIN",
        help="with --utility: that wait, minutes (default: drawn from the profile's waits)",
    )
    p.add_argument(
        "--cancel-expired",
        action="store_true",
        help="cancel a waiting job once its utility can no longer be earned",
    )
    p.add_argument("--out", type=Path, metavar="DIR", help="write each run's outputs here")
    add_force_option(p)
    add_report_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    synthetic = args.model == "synthetic"
    if not synthetic and (args.synthetic_config is not None or args.load is not None):
        raise ConfigError("--synthetic-config and --load apply to --model synthetic only")
    low, high = args.users or ((10, 10) if synthetic else (50, 50))
    synthetic_settings = {
        name: value
        for name, value in (
            ("synthetic_config", args.synthetic_config),
            ("load", args.load),
        )
        if value is not None
    }
    if args.procs is not None and args.platform is not None:
        raise ConfigError("give --procs or --platform, not both (a platform sets the machine)")
    base = SiteConfig(
        model=args.model,
        **synthetic_settings,
        procs=args.procs or 128,
        platform=args.platform,
        days=args.days,
        warmup_days=args.warmup,
        profile=DEFAULT_PROFILE if args.profile is None else str(args.profile),
        seed=args.seed,
        estimates=str(args.estimates),
        correlated=args.correlated,
        pcont_a=args.pcont[0],
        pcont_b=args.pcont[1],
        day_share=args.day_share,
        weekday_share=args.weekday_share,
        runtime_scale=args.runtime_scale,
        max_batch_width=args.max_batch_width,
        session_starts=args.session_starts,
        start_gap_scale=args.start_gap_scale,
        utility=args.utility,
        deadline_factor=args.deadline_factor,
        utility_decay=args.decay,
        deadline_wait_min=args.deadline_wait,
        cancel_expired=args.cancel_expired,
    )
    configs = [
        base.replace(users=count, **settings)
        for count in range(low, high + 1, args.step)
        for settings in scheduler_options(args)
    ]
    check_site_run(max(configs, key=lambda c: c.users), write=args.out is not None)
    check_report(args)
    check_out(args)  # (with --force, the folder is emptied now: after every check)
    results = _run_all(configs, args.out, args.utility)
    refused = [(f"{c.users} users, {r.label}", jobs_refused(r.rejected, r.workload))
               for c, r in zip(configs, results, strict=True)]  # fmt: skip
    warn_refused(refused, of=len(results))
    print(table(RUN_COLUMNS, [run_row(r) for r in results]))
    for result in results:
        if (details := details_report(result)) is not None:
            print(details)
    if args.utility:
        pairs = zip(configs, results, strict=True)
        print(table(("Users", *UTILITY_COLUMNS), [[c.users, *utility_row(r)] for c, r in pairs]))
    if args.out is not None:
        print(f"outputs written to {args.out}")
    if args.report:
        write_reports(args.out, [_folder(args.out, config) for config in configs])
    return 0


def _run_all(configs: list[SiteConfig], out: Path | None, utility: bool) -> list[SiteResult]:
    """Run every configuration; with ``out``, publish each run's folder as it finishes and
    rewrite runs.csv with the runs published so far, so an interrupt keeps them. With
    ``utility``, EASY with the same users runs first (run for this alone if not asked for),
    so each run has its competitive ratio when it is published."""
    done: dict[int, SiteResult] = {}
    order = sorted(range(len(configs)), key=lambda k: configs[k].users)  # (stable)
    if utility:  # EASY first among the runs with the same users
        order.sort(key=lambda k: (configs[k].users, configs[k].scheduler != "EASY"))
    easy: dict[int, SiteResult] = {}
    try:
        for k in order:
            config = configs[k]
            label = f"run {len(done) + 1}/{len(configs)}: {config.users} users, {config.scheduler}"
            with ProgressBar(label) as bar:
                result = run_config(config, progress=bar)
            if utility:
                if config.users not in easy:
                    reference = config.replace(scheduler="EASY", scheduler_params={})
                    easy[config.users] = result if config == reference else run_config(reference)
                result = with_competitive_ratio(result, easy[config.users])
            done[k] = result
            if out is not None:
                write_outputs(_folder(out, config), result, users=True)
                _write_runs(out, configs, done)
    except KeyboardInterrupt:
        if out is not None and done:  # (the signal may have come between folder and list)
            kept = _write_runs(out, configs, done)
            print(
                f"sitesim: {kept} of {len(configs)} runs finished, written to {out} "
                f"({RUNS_NAME} lists them)",
                file=sys.stderr,
            )
        raise
    return [done[k] for k in range(len(configs))]


def _folder(out: Path, config: SiteConfig) -> Path:
    return out / f"users-{config.users:04d}-{file_name(config.scheduler)}"


def _write_runs(out: Path, configs: list[SiteConfig], done: dict[int, SiteResult]) -> int:
    """Write runs.csv (atomically) with the finished runs whose folder is published; return
    how many."""
    published = [k for k in sorted(done) if (_folder(out, configs[k]) / RESULTS_NAME).exists()]
    atomic_write(out / RUNS_NAME, csv_text([flat_row(done[k]) for k in published]))
    return len(published)
