"""Experiment 1: open versus closed evaluation, the prediction error of a trace replay.

Site-level runs of static users under EASY and under FCFS; each run's trace replayed open under
the other scheduler (the conventional prediction) and compared with the other scheduler's own
site-level run: the error |conventional - site-level| / site-level of mean response, wait and
slowdown, over user counts 2-12 and horizons of 28, 91 and 182 days, 5 seeds each
(experiments.md §1; docs/results/open-vs-closed.md).

    python scenarios/open_vs_closed.py [--quick] [--out DIR] [--seed S] [--serial | --workers N]

It runs `sitesim compare` over that grid.
"""

from __future__ import annotations

import sys

from sitesim import scenario
from sitesim.cli import main as sitesim

FULL = {"users": "2-12", "step": "2", "days": "28,91,182", "seeds": "5"}
QUICK = {"users": "2-6", "step": "4", "days": "14", "seeds": "2"}


def main(argv: list[str] | None = None) -> int:
    args = scenario.parse(scenario.parser(__doc__), argv)
    grid = QUICK if args.quick else FULL
    command = ["compare", "--schedulers", "EASY,FCFS", "--seed", str(args.seed)]
    command += [item for key, value in grid.items() for item in (f"--{key}", value)]
    if args.quick:
        command += ["--warmup", "1"]
    command += scenario.executor_argv(args)
    if args.out is not None:
        command += ["--out", str(args.out)]
    return sitesim(command)


if __name__ == "__main__":
    sys.exit(main())
