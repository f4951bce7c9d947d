"""``sitesim sweep``: a grid of runs × replications from a TOML file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from sitesim.cli.commands import COMMANDS
from sitesim.cli.commands.arguments import (
    add_executor_options,
    positive_int,
    progress_report,
    warn_refused,
)
from sitesim.cli.commands.report import add_report_option, check_report, write_reports
from sitesim.cli.progress import ProgressBar
from sitesim.errors import ConfigError
from sitesim.output import check_output_folder
from sitesim.results.report import RESULTS_NAME, RUNS_NAME, table
from sitesim.runs.budget import check_sweep
from sitesim.sweeps.executors import available_cores
from sitesim.sweeps.sweep import MAX_RUNS, PLAN_JSON, SUMMARY_CSV, SweepPlan, sweep

EPILOG = f"""\
example sweep file (sweep.toml):

  out = "runs/creasy"         # output folder (--out overrides it)
  seeds = 5                   # replications: seeds 1..5, or a list [11, 12, 13]

  [base]                      # settings every run shares (docs/reference/config.md)
  mode = "site"               # or "replay", with trace = "file.swf.gz"
  days = 182
  procs = 128

  [factors]                   # each a list of levels; every combination runs per seed
  scheduler = ["EASY", "CREASY"]
  alpha = [1500, 6000]        # a scheduler parameter: runs only where it applies
  users = [50, 100, 150]

examples:
  sitesim sweep sweep.toml
  sitesim sweep sweep.toml --workers 8 --out runs/creasy
  sitesim sweep sweep.toml --dask local
  sitesim sweep sweep.toml --dask tcp://scheduler.cluster:8786
  sitesim sweep sweep.toml --dask ~/dask-scheduler.json

Each run writes its own folder, named by its factor levels and seed; {PLAN_JSON} lists the plan,
{RUNS_NAME} holds one row per run (factors, seed, wall time, every summary metric) and
{SUMMARY_CSV} one row per combination (mean, _sd, _ci95 by Student's t, n); sitesim report DIR
compares the runs in one HTML page (paired differences per factor level, accounts,
partitions, SLURM settings). Runs already complete in the folder are not run again, so an
interrupted sweep resumes. A failed run keeps its traceback in its folder's error.txt and is
retried once; the exit status is 1 if some run still failed. A plan of more than {MAX_RUNS:,}
runs (factor levels x seeds) is refused before anything runs, unless --max-runs allows it.
"""

#: The metrics the printed table shows, with their ±95 % half-widths.
SHOWN = (
    ("utilization", "Utilization"),
    ("throughput_per_h", "Throughput(jobs/h)"),
    ("response_mean_min", "Avg.Response(min)"),
    ("slowdown_mean", "Avg.Slowdown"),
)


def add_parser(commands: Any) -> None:
    p = commands.add_parser(
        "sweep",
        help=COMMANDS["sweep"],
        description="Run every combination of the factor levels of a sweep file once per "
        "seed, and summarize the replications with 95 % confidence intervals.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("sweep_file", type=Path, metavar="SWEEP.toml", help="the sweep file")
    p.add_argument(
        "--out", type=Path, metavar="DIR", help="output folder (default: the sweep file's out)"
    )
    add_executor_options(p)
    p.add_argument(
        "--results-only",
        action="store_true",
        help="write only each run's results.json (no SWF, jobs.csv, users.csv)",
    )
    p.add_argument("--dry-run", action="store_true", help="list the runs, run nothing")
    p.add_argument(
        "--max-runs",
        type=positive_int,
        default=MAX_RUNS,
        metavar="N",
        help=f"refuse a plan of more than N runs, factor levels x seeds (default {MAX_RUNS:,})",
    )
    add_report_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    plan = SweepPlan.load(args.sweep_file, max_runs=args.max_runs)
    plan.check_size(args.max_runs)
    runs = plan.runs()
    if args.dry_run:
        print("\n".join([*(planned.name for planned in runs), f"{len(runs)} runs"]))
        return 0
    out = args.out or plan.out
    if out is None:
        raise ConfigError(f"{args.sweep_file}: name an output folder with --out (or out = ...)")
    check_output_folder(out)
    if args.report and args.results_only:
        raise ConfigError("--report draws each run's jobs: it cannot go with --results-only")
    check_report(argparse.Namespace(report=args.report, out=out))
    local = args.executor == "process" or args.dask in (None, "local")  # (workers here)
    workers = 1 if args.executor == "serial" else (args.workers or available_cores())
    if local:
        named = [(planned.name, planned.config) for planned in runs]
        check_sweep(named, workers=workers, write=not args.results_only)
    with ProgressBar("sweep") as bar:
        result = sweep(
            plan,
            out=out,
            executor=args.executor,
            workers=args.workers,
            dask_address=args.dask,
            save_jobs=not args.results_only,
            progress=progress_report(bar, "runs"),
            max_runs=args.max_runs,
        )
    warn_refused(list(result.refused.items()), of=len(result.runs))
    factors = list(plan.factors)
    rows = [
        [*(row.get(f) for f in factors), row["n"], *(_pm(row, key) for key, _ in SHOWN)]
        for row in result.summary
    ]
    header = [*factors, "n", *(title for _, title in SHOWN)]
    print(table(header, [[_text(v) for v in r] for r in rows]) if factors else "")
    ran = len(result.runs) - result.resumed
    print(
        f"{len(result.runs)} of {len(runs)} runs complete ({result.resumed} found complete, "
        f"{ran} run now); {RUNS_NAME} and {SUMMARY_CSV} written to {out}"
    )
    if args.report:
        done = [out / planned.name for planned in runs]
        write_reports(out, [folder for folder in done if (folder / RESULTS_NAME).exists()])
    for name, error in result.failed:
        last = error.strip().splitlines()[-1] if error.strip() else "unknown error"
        print(
            f"sitesim: run {name} failed twice: {last} (see {out}/{name}/error.txt)",
            file=sys.stderr,
        )
    return 1 if result.failed else 0


def _pm(row: dict[str, Any], key: str) -> str:
    """Mean ± 95 % half-width."""
    mean, half = row[key], row[f"{key}_ci95"]
    digits = 3 if abs(mean) < 10 else 1
    return f"{mean:.{digits}f}" + (f" ± {half:.{digits}f}" if half == half else "")


def _text(value: Any) -> str:
    return "-" if value is None else str(value)
