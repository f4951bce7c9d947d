"""``sitesim profile``: build a workload profile from SWF traces or a site's own log."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from sitesim.cli.commands import COMMANDS
from sitesim.cli.commands.arguments import add_activity_options
from sitesim.formats.traces import read_trace
from sitesim.output import check_output_file
from sitesim.results.report import table
from sitesim.workload.profile import WorkloadProfile, build_profile
from sitesim.workload.request_mix import RequestMix

EPILOG = """\
example:
  sitesim profile ../shared/traces/SDSC-SP2-1998-4.2-cln.swf.gz \\
      ../shared/traces/KTH-SP2-1996-2.1-cln.swf.gz -o my-site.json
  sitesim profile site.sacct -o my-site.json

The profile holds every empirical distribution the user models draw from: job sizes,
runtimes (also per power-of-two size class), size repetitions, batch widths, inter-submission
times, think times in (0, threshold], breaks in (threshold, 8 h], requested/actual runtime
ratios, waits, and the daily and weekly submission shares; with the name, sha256 and job counts
of every source trace. Each trace weighs the same, however many jobs it has.

From a site's own log (sacct: TRACE ending in .sacct, .psv or .sacct.gz; or a workload table)
the profile also holds the request mix: the share of each combination of partition, GPUs per
node, memory per node and node features its jobs asked for, overall and per power-of-two size
class. The simulated users of a run on a platform draw each job's request from it.
"""


def add_parser(commands: Any) -> None:
    p = commands.add_parser(
        "profile",
        help=COMMANDS["profile"],
        description="Build a workload profile from one or more SWF traces or site logs.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "traces", nargs="+", type=Path, metavar="TRACE",
        help="SWF trace(s), sacct log(s) or workload table(s)",
    )  # fmt: skip
    p.add_argument("-o", "--output", type=Path, required=True, metavar="FILE", help="profile JSON")
    add_activity_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    check_output_file(args.output)
    traces = [read_trace(path) for path in args.traces]
    profile = build_profile(traces, definition=args.think, threshold=args.threshold * 60.0)
    profile.save(args.output)
    print(summary(profile))
    print(f"profile written to {args.output}")
    return 0


def summary(profile: WorkloadProfile) -> str:
    """Sources and the centre of each distribution, for a quick look."""
    sources = table(
        ("Trace", "Jobs", "Used", "Users", "Procs"),
        [[s["name"], s["jobs"], s["jobs_used"], s["users"], s["procs"]] for s in profile.sources],
    )
    rows = []
    for name in profile.DISTRIBUTIONS:
        dist = getattr(profile, name)
        rows.append(
            [name, float(dist.quantile(0.5)) if hasattr(dist, "quantile") else dist.mode, dist.mean]
        )
    dists = table(("Distribution", "Median/mode", "Mean"), rows)
    text = f"{sources}\n\n{dists}"
    if profile.requests is not None:
        text += "\n\n" + requests_table(profile.requests)
    return text


def requests_table(mix: RequestMix) -> str:
    """The request classes, most frequent first, with their overall shares."""
    order = sorted(range(len(mix.classes)), key=lambda k: (-mix.overall[k], k))
    rows = [
        [c.partition or "-", c.gpus_per_node, c.memory_per_node_mb, c.constraint or "-",
         float(mix.overall[k])]
        for k in order
        for c in (mix.classes[k],)
    ]  # fmt: skip
    return table(("Partition", "GPUs/node", "Memory/node(MB)", "Constraint", "Share"), rows)
