"""``sitesim utility augment``: give a trace's jobs utility functions (utility.md §2)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from sitesim.cli.commands import COMMANDS
from sitesim.cli.commands.arguments import (
    add_jobs_option,
    add_utility_shape_options,
    positive_float,
    positive_int,
    seed_number,
)
from sitesim.models.augment import GENERATORS, augment
from sitesim.models.utility import LeeSnavely
from sitesim.output import check_output_file
from sitesim.workload.swf import read_swf, write_swf

EPILOG = """\
examples:
  sitesim utility augment ../shared/traces/SDSC-BLUE-2000-4.2-cln.swf.gz -o blue-utility.swf
  sitesim utility augment TRACE.swf --deadline-factor 3 --decay step --seed 2 -o out.swf.gz
  sitesim utility augment TRACE.swf --generator mix -o robust.swf
  sitesim utility augment ../shared/traces/SDSC-BLUE-2000-4.2-cln.swf.gz --jobs 5000:10000 \\
      -o blue-5k.swf      # Lee & Snavely's excerpt: job lines 5,000 to 9,999 (0-based)

Each job's utility function is appended to its line after field 18 as "t0 v0 t1 v1 ..."
(time since submission in seconds, value), and its priority level (0 the highest) is written
into field 15. `sitesim replay` reads them back: utility-based schedulers (PRIORITY, PRIO,
FIRSTPRICE, GA) use them, and every summary reports the utility earned.

Lee & Snavely (default): start value = Normal(((P - level - 0.5) / P) * globmax,
globmax / (2P)) per processor-minute, truncated at 0, times size and requested minutes; the value
holds for the requested time, then decays (linear, exponential or step, a third each unless
--decay) over max(factor * the job's recorded wait, 10 s). Priority levels come from the
header's queue names (interactive/express 0, high 1, normal 2, low/standby 3). The kinds
linear, convex, flat and mix are those of the robustness study (docs/reference/utility.md).
"""


def add_parser(commands: Any) -> None:
    p = commands.add_parser(
        "utility",
        help=COMMANDS["utility"],
        description="Utility functions: the value users attach to their jobs' turnaround.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = p.add_subparsers(title="actions", metavar="ACTION", required=True)
    a = actions.add_parser(
        "augment",
        help="append a utility function and a priority level to every job of a trace",
        description="Append a synthetic utility function to every job of an SWF trace.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    a.add_argument("trace", type=Path, help="SWF trace (.swf or .swf.gz)")
    a.add_argument("-o", "--output", type=Path, required=True, metavar="FILE", help="output SWF")
    add_jobs_option(a)
    a.add_argument("--generator", choices=GENERATORS, default="lee-snavely", help="(lee-snavely)")
    add_utility_shape_options(a)
    a.add_argument("--levels", type=positive_int, default=4, help="priority levels (4)")
    a.add_argument("--globmax", type=positive_float, default=1.0, help="largest mean value (1)")
    a.add_argument("--seed", type=seed_number, default=1, help="random seed (1)")
    a.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    check_output_file(args.output)
    trace = read_swf(args.trace)
    if args.jobs is not None:
        trace = trace.excerpt(*args.jobs)
    maker = LeeSnavely(levels=args.levels, factor=args.deadline_factor, decay=args.decay,
                       globmax=args.globmax)  # fmt: skip
    result = augment(trace, generator=args.generator, lee_snavely=maker, seed=args.seed)
    write_swf(args.output, result.data, result.header, result.tails)
    starts = np.array([float(text.split()[1]) for text in result.tails.values()])
    print(
        f"{len(result.tails):,} of {len(trace):,} jobs given utility functions "
        f"({args.generator}); start values: median {np.median(starts):.4g}, "
        f"total {starts.sum():.4g}; written to {args.output}"
    )
    return 0
