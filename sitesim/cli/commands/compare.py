"""``sitesim compare``: open versus closed evaluation, the prediction error (experiments.md §1)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from sitesim.cli.commands import COMMANDS
from sitesim.cli.commands.arguments import (
    add_executor_options,
    add_force_option,
    check_out,
    non_negative_float,
    positive_int,
    progress_report,
    scheduler_names,
    seed_number,
    warn_refused,
)
from sitesim.cli.commands.report import REPORT_NAME, add_report_option, check_report
from sitesim.cli.progress import ProgressBar
from sitesim.errors import ConfigError
from sitesim.output import atomic_write, staged_folder, to_json
from sitesim.results.report import csv_text, table
from sitesim.runs.config import WARMUP_DAYS, SiteConfig
from sitesim.sweeps.compare import METRICS, compare
from sitesim.sweeps.sweep import summarize_runs

EPILOG = """\
examples:
  sitesim compare
  sitesim compare --schedulers EASY,FCFS --users 2-12 --step 2 --days 28,91,182 --seeds 5 \\
      --out runs/compare

For each user count, horizon and seed: a site-level run under A gives a trace; that trace is
replayed open under B (the conventional prediction); a site-level run under B gives what B
really does with users who react to it. The prediction error is
|conventional - site-level| / site-level in %, for mean response, wait and slowdown; both
directions come from the same two site-level runs. The table shows the mean over the seeds with
its 95 % confidence interval; "signed" keeps the sign (> 0: the replay predicts worse than the
users get). Drain: days the open replay runs on after the horizon (0 when it has ended by
then).

With --out: compare.csv (one row per direction, user count, horizon and seed), summary.csv
(means, _sd, _ci95, n), compare.json (both) and compare.png (signed errors against users).
"""

COLUMNS = ("Direction", "Users", "Days", "n", "Response err(%)", "Wait err(%)",
           "Slowdown err(%)", "Signed resp(%)", "Drain(d)")  # fmt: skip


def add_parser(commands: Any) -> None:
    p = commands.add_parser(
        "compare",
        help=COMMANDS["compare"],
        description="Replay a site-level run's trace open under another scheduler and compare "
        "with a site-level run of that scheduler: the prediction error of open evaluation.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--schedulers",
        type=scheduler_names,
        default=["EASY", "FCFS"],
        metavar="A,B",
        help="the two schedulers (default EASY,FCFS)",
    )
    p.add_argument("--users", default="10", metavar="N|A-B", help="user counts (default 10)")
    p.add_argument("--step", type=positive_int, default=2, help="step of --users A-B (2)")
    p.add_argument(
        "--days", default="182", metavar="D[,D...]", help="horizons in days (default 182)"
    )
    p.add_argument("--seeds", type=positive_int, default=5, help="seeds per point (5)")
    p.add_argument("--seed", type=seed_number, default=1, help="the first seed (1): seeds S..S+N-1")
    p.add_argument(
        "--model",
        choices=("static", "complete"),
        default="static",
        help="the user model (default static, as in the study)",
    )
    p.add_argument("--procs", type=positive_int, default=128, help="processors (default 128)")
    p.add_argument(
        "--warmup",
        type=non_negative_float,
        default=WARMUP_DAYS,
        metavar="DAYS",
        help=f"days left out of every metric (default {WARMUP_DAYS:g})",
    )
    add_executor_options(p)
    p.add_argument("--out", type=Path, metavar="DIR", help="write CSV, JSON and the figure here")
    add_force_option(p)
    add_report_option(
        p,
        "report.html: the first seed's closed runs at the first user count, "
        "the first scheduler's with both schedulers' users side by side",
    )
    p.set_defaults(func=run)


def numbers(text: str, what: str) -> list[float]:
    """``N``, ``A-B`` (with a step elsewhere) or ``A,B,C``."""
    try:
        return [float(part) for part in re.split(r"\s*,\s*", text.strip())]
    except ValueError:
        raise ConfigError(f"--{what}: expected numbers separated by commas, got {text!r}") from None


def user_counts(text: str, step: int) -> list[int]:
    match = re.fullmatch(r"\s*(\d+)\s*-\s*(\d+)\s*", text)
    if match:
        low, high = int(match.group(1)), int(match.group(2))
        if not 1 <= low <= high:
            raise ConfigError(f"--users: expected 1 <= A <= B, got {text!r}")
        return list(range(low, high + 1, step))
    counts = numbers(text, "users")
    if any(c < 1 or not c.is_integer() for c in counts):
        raise ConfigError(f"--users: expected whole numbers >= 1, got {text!r}")
    return [int(c) for c in counts]


def run(args: argparse.Namespace) -> int:
    if len(args.schedulers) != 2:
        raise ConfigError(f"--schedulers: give two, got {', '.join(args.schedulers)}")
    users = user_counts(args.users, args.step)
    days = numbers(args.days, "days")
    site = SiteConfig(model=args.model, procs=args.procs, warmup_days=args.warmup, days=max(days))
    check_report(args)
    check_out(args)
    refused: list[tuple[str, dict[str, int]]] = []
    with ProgressBar("compare") as bar:
        rows = compare(
            site, *args.schedulers, users=users, days=days,
            seeds=range(args.seed, args.seed + args.seeds),
            executor=args.executor, workers=args.workers, dask_address=args.dask,
            progress=progress_report(bar, "points"),
            refused=lambda point, jobs: refused.append((point, jobs)),
        )  # fmt: skip
    warn_refused(refused, of=len(users) * len(days) * args.seeds)
    factors = ["direction", "users", "days"]
    measured = [
        key for key in rows[0] if key not in (*factors, "trace_of", "replayed_under", "seed")
    ]
    summary = summarize_runs(rows, factors, measured)
    print(table(COLUMNS, [_row(entry) for entry in summary]))
    if args.out is not None:
        from sitesim.sweeps.compare import compare_figure

        with staged_folder(args.out, last="compare.json") as staging:
            atomic_write(staging / "compare.csv", csv_text(rows))
            atomic_write(staging / "summary.csv", csv_text(summary))
            compare_figure(rows, staging / "compare.png")
            atomic_write(staging / "compare.json", to_json({"runs": rows, "summary": summary}))
        print(f"compare.csv, summary.csv, compare.json and compare.png written to {args.out}")
    if args.report:
        _report(args.out, site.replace(users=users[0], seed=args.seed), args.schedulers)
    return 0


def _report(out: Path, site: SiteConfig, schedulers: list[str]) -> None:
    """report.html of the closed runs of the first point: the first scheduler's run, with
    the same users under the second beside it in the lanes."""
    from sitesim.runs.runner import run as run_config
    from sitesim.views.html import write_report
    from sitesim.views.run_view import RunView

    views = [RunView.from_result(run_config(site.replace(scheduler=name))) for name in schedulers]
    write_report(views[0], out / REPORT_NAME, others=views[1:])
    print(f"{REPORT_NAME} ({site.users} users, seed {site.seed}) written to {out}")


def _row(entry: dict[str, Any]) -> list[Any]:
    return [
        entry["direction"],
        entry["users"],
        f"{entry['days']:g}",
        entry["n"],
        *(_pm(entry, f"error_{metric}_pct") for metric in METRICS),
        _pm(entry, "signed_response_mean_min_pct"),
        entry["drain_d"],
    ]


def _pm(entry: dict[str, Any], key: str) -> str:
    half = entry[f"{key}_ci95"]
    return f"{entry[key]:.1f}" + (f" ± {half:.1f}" if half == half else "")
