"""Real, unmodified Slurm against sitesim's SLURM scheduler, job by job.

    python validation/slurm/harness.py run CASE [CASE ...]       # as root; ~12 minutes a run
    python validation/slurm/harness.py compare CASE [CASE ...]   # recorded runs, no Slurm
    python validation/slurm/harness.py list

``run`` starts a Slurm of Debian's packages on this machine (installing them first with
install.sh when absent), submits the case's workload of sleep jobs at its offsets, records
every job, stops Slurm, and does it again (``--runs``, default 2: real Slurm against itself is
the floor of any agreement); then compares. ``compare`` replays the recorded runs in sitesim
and prints, per case, the jobs whose start agrees within 10 and 30 s, the fraction of pairs of
jobs started in the same order, the mean wait and the makespan (``--jobs``: each job's starts).
A case is a folder of ``cases/`` (slurm.conf, workload.csv, accounts.txt for fairshare);
CASE is its name or a unique beginning of it (``a`` for ``a_fifo``), or ``all``.
docs/results/real-slurm.md has the results and how they were made.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path
from types import FrameType

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # (run as a script: the project folder is the import root)
    sys.path.insert(0, str(ROOT))

from validation.slurm.compare import compare_case, jobs_table, summary_table  # noqa: E402
from validation.slurm.local_slurm import HarnessError, Ports  # noqa: E402
from validation.slurm.run_case import install, installed, run_case  # noqa: E402

CASES = Path(__file__).resolve().parent / "cases"
DATA = ROOT / "tests" / "data" / "slurm_real"
WORK = Path("/tmp/slurm-harness")


def case_names(given: list[str], folder: Path = CASES) -> list[str]:
    """The cases named (a name, a unique beginning of one, or ``all``) among the folders of
    ``folder`` that hold a slurm.conf.

    Raises:
        ValueError: a name that matches no case, or several.
    """
    if not folder.is_dir():
        raise ValueError(f"{folder}: no such folder")
    known = sorted(p.name for p in folder.iterdir() if (p / "slurm.conf").exists())
    if given == ["all"]:
        return known
    out = []
    for name in given:
        found = [k for k in known if k == name] or [k for k in known if k.startswith(name)]
        if len(found) != 1:
            raise ValueError(f"case {name!r}: {'ambiguous' if found else 'unknown'}; the "
                             f"cases are {', '.join(known)} (or all)")  # fmt: skip
        out.append(found[0])
    return out


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="harness.py",
        description="Real Slurm against sitesim's SLURM scheduler, job by job.",
    )
    commands = top.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run cases on real Slurm (root), record, compare")
    run.add_argument("cases", nargs="+", metavar="CASE")
    run.add_argument("--runs", type=int, default=2, help="runs a case (default 2)")
    run.add_argument("--first", type=int, default=1, help="number of the first run (1)")
    run.add_argument("--work", type=Path, default=WORK, help=f"work folder ({WORK})")
    run.add_argument("--out", type=Path, default=None,
                     help="the records, a folder a case (default: WORK/records)")  # fmt: skip
    run.add_argument("--debug-flags", default="Backfill",
                     help="slurm.conf's DebugFlags, what the logs tell (Backfill)")  # fmt: skip
    run.add_argument("--port", type=int, default=Ports.controller,
                     help="first TCP port used on 127.0.0.1 (16817; up to +20)")  # fmt: skip
    compare = commands.add_parser("compare", help="recorded runs against sitesim")
    compare.add_argument("cases", nargs="+", metavar="CASE")
    compare.add_argument("--data", type=Path, default=DATA,
                         help="recorded runs, a folder a case (tests/data/slurm_real)")  # fmt: skip
    compare.add_argument("--jobs", action="store_true", help="each job's starts as well")
    compare.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                         help="a SLURM scheduler parameter of the replay (repeatable)")  # fmt: skip
    commands.add_parser("list", help="the cases")
    return top


def _terminated(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # (SIGTERM: stop Slurm as on Ctrl-C)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    signal.signal(signal.SIGTERM, _terminated)
    try:
        if args.command == "list":
            print("\n".join(case_names(["all"])))
            return 0
        names = case_names(args.cases, CASES if args.command == "run" else args.data)
        if args.command == "run":
            return run(names, args)
        params = dict(p.split("=", 1) for p in args.param if "=" in p)
        if len(params) != len(args.param):
            raise ValueError("--param: NAME=VALUE expected")
        for name in names:
            comparison = compare_case(args.data / name, params)
            print(summary_table(comparison))
            if args.jobs:
                print(jobs_table(comparison))
            print()
    except (ValueError, HarnessError) as err:
        print(f"harness: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("harness: interrupted (every daemon stopped)", file=sys.stderr)
        return 130
    return 0


def run(names: list[str], args: argparse.Namespace) -> int:
    if os.geteuid() != 0:
        raise HarnessError("run needs root (daemons, users of the fairshare case)")
    if args.runs < 1 or args.first < 1:
        raise ValueError("--runs and --first: 1 or more")
    ports = Ports.from_first(args.port)
    out_root = args.out or args.work / "records"
    for name in names:
        accounting = (CASES / name / "accounts.txt").exists()
        if not installed(accounting):
            install(accounting)
        for k in range(args.first, args.first + args.runs):
            run_case(CASES / name, args.work / name, out_root / name, k, ports,
                     debug_flags=args.debug_flags)  # fmt: skip
        print(summary_table(compare_case(out_root / name)))
        print(f"records: {out_root / name}\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
