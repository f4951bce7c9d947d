"""``sitesim analyze``: the user-behaviour analysis of users.md §6."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from sitesim.cli.commands import COMMANDS
from sitesim.cli.commands.arguments import add_activity_options, add_force_option, check_out
from sitesim.output import atomic_write, staged_folder, to_json
from sitesim.results.report import table
from sitesim.workload.swf import read_swf

EPILOG = """\
examples:
  sitesim analyze ../shared/traces/SDSC-SP2-1998-4.2-cln.swf.gz
  sitesim analyze ../shared/traces/{SDSC-SP2,CTC-SP2,KTH-SP2}*.swf.gz --out analysis

For each trace and for all traces combined (each trace weighing the same), on the think time
that follows each job (next submission minus this job's end, per user):

  1. think-time distribution, negative ones included (think_cdf.png)
  2. median positive think time per response bin R1 0-5, R2 5-15, R3 15-45, R4 45-135,
     R5 >135 min, and per slowdown bin S1 <1.41, S2 <2, S3 <4, S4 <16, S5 >16
     (think_by_bins.png)
  3. the R x S table of those medians, combined (rs_table.png)
  4. per response bin, P(continue) = share of positive think times within the session
     threshold, and the fitted p = a / (b r + 1), r in minutes (continue_probability.png)
  5. the same for jobs that waited <= 5 min (W) and ran <= 5 min (E) (expectations.png)
  6. one dot per week: jobs submitted vs mean node-seconds (weekly_scatter.png)

With --out, analysis.json holds every number and the PNG figures are written beside it.
"""


def add_parser(commands: Any) -> None:
    p = commands.add_parser(
        "analyze",
        help=COMMANDS["analyze"],
        description="Analyse how the service a job got shapes what its user does next.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("traces", nargs="+", type=Path, metavar="TRACE", help="SWF trace(s)")
    add_activity_options(p)
    p.add_argument("--out", type=Path, metavar="DIR", help="write analysis.json and figures here")
    add_force_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from sitesim.workload.activity import decompose
    from sitesim.workload.analysis import analyze  # SciPy: loaded only when a command needs it

    check_out(args, clear=False)
    activities = [
        decompose(read_swf(path), definition=args.think, threshold=args.threshold * 60.0)
        for path in args.traces
    ]
    result = analyze(activities)
    check_out(args)  # (with --force, the folder is emptied only now)
    for name, data in result["traces"].items():
        print(describe(name, data))
        print()
    if len(activities) > 1:
        print(describe("combined (each trace weighs the same)", result["combined"]))
        print()
    print(rs_table(result["combined"]))
    if args.out is not None:
        from sitesim.workload.plots import (
            analysis_figures,  # matplotlib only when figures are wanted
        )

        with staged_folder(args.out, last="analysis.json") as staging:
            figures = analysis_figures(activities, result, staging)
            atomic_write(staging / "analysis.json", to_json(result))
        print(f"\nanalysis.json and {len(figures)} figures written to {args.out}")
    return 0


def _fit(fit: dict[str, float]) -> str:
    if not math.isfinite(fit["a"]):
        return "no fit (too few bins)"
    r2 = f"{fit['r2']:.3f}" if math.isfinite(fit["r2"]) else "n/a (every bin the same)"
    return f"p = {fit['a']:.3f} / ({fit['b']:.4f} r + 1), R² {r2}, RMSE {fit['rmse']:.3f}"


def _think(think: dict[str, Any]) -> str:
    """The think-time line: shares and median, or why there are none."""
    if not think["count"]:
        return (
            "think times: none (no user has two usable jobs), so every share, median and fit "
            "below is n/a"
        )
    return (
        f"think times: {100 * think['negative_fraction']:.1f}% negative, "
        f"{100 * think['within_threshold_fraction']:.1f}% within the session threshold, "
        f"median {think['quantiles_min']['p50']:.1f} min"
    )


def _weekly(week: dict[str, Any]) -> str:
    """The weekly line: Spearman's rho, or why it is not computed."""
    if math.isfinite(week["spearman_rho"]):
        rho = f"Spearman rho {week['spearman_rho']:.3f} (p = {week['spearman_p']:.2g})"
    elif week["weeks"] < 3:
        rho = "Spearman rho n/a (needs 3 weeks with jobs)"
    else:
        rho = "Spearman rho n/a (the weeks do not vary)"
    return f"weekly: {week['weeks']} weeks; jobs vs mean node-seconds per job: {rho}"


def describe(name: str, data: dict[str, Any]) -> str:
    """The printed report of one trace (or the combination)."""
    lines = [f"== {name}"]
    if "jobs" in data:
        excluded = ", ".join(f"{k} {v:,}" for k, v in data["excluded"].items()) or "none"
        lines.append(
            f"{data['jobs']:,} jobs of {data['users']:,} users (excluded: {excluded}); "
            f"{data['clock']}"
        )
    lines.append(_think(data["think"]))
    w = {row["bin"]: row for row in data["expectations"]["W"]}
    e = {row["bin"]: row for row in data["expectations"]["E"]}
    rows = [
        [
            row["bin"],
            row["jobs"],
            row["median_response_min"],
            row["median_think_min"],
            row["continue_probability"],
            w[row["bin"]]["continue_probability"],
            e[row["bin"]]["continue_probability"],
        ]
        for row in data["response_bins"]
    ]
    header = ("Bin", "Jobs", "Resp(min)", "Think(min)", "P(cont)", "W P(cont)", "E P(cont)")
    lines.append(table(header, rows))
    lines.append(f"continue fit: {_fit(data['continue_fit'])}")
    lines.append(
        f"  W (waited <= 5 min): {_fit(data['expectations']['W_fit'])}\n"
        f"  E (ran <= 5 min):    {_fit(data['expectations']['E_fit'])}"
    )
    slow = [
        [row["bin"], row["jobs"], row["median_slowdown"], row["median_think_min"]]
        for row in data["slowdown_bins"]
    ]
    lines.append(table(("Bin", "Jobs", "Slowdown", "Think(min)"), slow))
    if "weekly" in data:
        lines.append(_weekly(data["weekly"]))
    return "\n".join(lines)


def rs_table(combined: dict[str, Any]) -> str:
    """The combined R×S table of median think times (minutes)."""
    from sitesim.workload.analysis import RESPONSE_BINS, SLOWDOWN_BINS

    medians = combined["rs_median_think_min"]
    rows = [[r, *medians[i]] for i, r in enumerate(RESPONSE_BINS)]
    return "median think time (min) by response (rows) and slowdown (columns), combined:\n" + table(
        ("", *SLOWDOWN_BINS), rows
    )
