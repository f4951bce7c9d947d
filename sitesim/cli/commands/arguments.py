"""Argument types and helpers shared by the commands."""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sitesim.errors import ConfigError
from sitesim.models.utility import DECAYS
from sitesim.output import check_output_folder, clear_output_folder
from sitesim.results.report import refused_text
from sitesim.schedulers import REGISTRY, canonical_name, parameters
from sitesim.sweeps.executors import available_cores
from sitesim.workload.activity import THINK_DEFINITIONS


def number(
    low: float, high: float = math.inf, *, above: bool = False, whole: bool = False
) -> Callable[[str], Any]:
    """An argparse type: a finite number >= ``low`` (> ``low`` when ``above``) and <= ``high``."""
    kind = "a whole number" if whole else "a finite number"
    if math.isfinite(high):
        allowed = f"in {'(' if above else '['}{low:g}, {high:g}]"
    else:
        allowed = f"{kind} {'>' if above else '>='} {low:g}"

    def parse(text: str) -> Any:
        try:
            value = int(text) if whole else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {kind}") from None
        inside = value > low if above else value >= low
        if not (math.isfinite(value) and inside and value <= high):
            raise argparse.ArgumentTypeError(f"must be {allowed}, got {text}")
        return value

    return parse


positive_float = number(0, above=True)
non_negative_float = number(0)
positive_int = number(1, whole=True)
seed_number = number(0, whole=True)


unit_interval = number(0, 1)


def job_range(text: str) -> tuple[int, int]:
    """An argparse type: ``START:STOP`` -> (start, stop), 0 <= start < stop."""
    try:
        start, stop = (int(part) for part in text.split(":"))
    except ValueError:
        start = stop = -1
    if not 0 <= start < stop:
        raise argparse.ArgumentTypeError(f"need START:STOP with 0 <= START < STOP, got {text!r}")
    return start, stop


def add_jobs_option(parser: argparse.ArgumentParser) -> None:
    """--jobs START:STOP: an excerpt of a trace."""
    parser.add_argument(
        "--jobs",
        type=job_range,
        metavar="START:STOP",
        help="only the job lines START (0-based) up to, not including, STOP",
    )


def add_utility_shape_options(parser: argparse.ArgumentParser, context: str = "") -> None:
    """--deadline-factor and --decay: the shape of Lee & Snavely utility functions."""
    parser.add_argument(
        "--deadline-factor",
        type=positive_float,
        default=2.0,
        metavar="F",
        help=f"{context}a job's value decays over F times its wait (default 2; 1 and 3 are "
        "studied)",
    )
    parser.add_argument(
        "--decay",
        choices=DECAYS,
        help=f"{context}one decay type for every job (default: a third each)",
    )


def scheduler_names(text: str) -> list[str]:
    """Comma-separated scheduler names: registered ones (any case) or import paths of
    schedulers of one's own (``mypkg.sched:FairEASY``), each checked."""
    names = [name.strip() for name in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(
            f"empty scheduler name in {text!r}; give names separated by single commas, "
            "e.g. FCFS,EASY"
        )
    try:
        canonical = [canonical_name(name) for name in names]
    except ConfigError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    for k, name in enumerate(canonical):  # (the runs would be the same, and share a folder)
        if name in canonical[:k]:
            same = "" if names[k] == name else f" ({names[k]!r} is {name})"
            raise argparse.ArgumentTypeError(f"{name} is given twice in {text!r}{same}")
    return canonical


def scheduler_settings(names: list[str], params: dict[str, Any]) -> list[dict[str, Any]]:
    """For each scheduler, ``{"scheduler": name, "scheduler_params": ...}`` with those of
    ``params`` (set by the user; None is unset) it takes.

    Raises:
        ConfigError: a parameter that none of the schedulers takes; the message names the
            option, the schedulers chosen and those that take it (or says that none does).
    """
    given = {key: value for key, value in params.items() if value is not None}
    for key in given:
        if any(key in parameters(name) for name in names):
            continue
        option = "--alpha" if key == "alpha" else f"--param {key}"
        takers = [name for name in REGISTRY if key in parameters(name)]
        if takers:
            raise ConfigError(f"{option} applies to {', '.join(takers)}, not {', '.join(names)}")
        taken = "; ".join(
            f"{name} takes {', '.join(sorted(parameters(name))) or 'none'}" for name in names
        )
        raise ConfigError(
            f"{option}: no scheduler takes a parameter {key!r} ({taken}; "
            "docs/reference/schedulers.md lists every scheduler's)"
        )
    return [
        {
            "scheduler": name,
            "scheduler_params": {k: v for k, v in given.items() if k in parameters(name)},
        }
        for name in names
    ]


def add_activity_options(parser: argparse.ArgumentParser, context: str = "") -> None:
    """--think and --threshold: how traces are split into think times and sessions."""
    parser.add_argument(
        "--think",
        choices=THINK_DEFINITIONS,
        default="last",
        help=f"{context}think time measured from the end of the previous job (last, default), "
        "the latest end in the session (max), or the previous submission (arrival)",
    )
    parser.add_argument(
        "--threshold",
        type=positive_float,
        default=20.0,
        metavar="MIN",
        help=f"{context}session threshold in minutes (default 20)",
    )


def add_scheduler_options(parser: argparse.ArgumentParser) -> None:
    """--scheduler (one or more, comma-separated) and the schedulers' parameters (--alpha)."""
    parser.add_argument(
        "--scheduler",
        "-s",
        type=scheduler_names,
        default=["EASY"],
        metavar="NAME[,NAME...]",
        help=f"scheduler(s), comma-separated: {', '.join(REGISTRY)}, or your own by its import "
        "path, module:Class (default EASY)",
    )
    parser.add_argument(
        "--alpha",
        type=non_negative_float,
        help="CREASY's criticality weight alpha >= 0 (default 6000; 0 is EASY)",
    )
    parser.add_argument(
        "--param",
        type=scheduler_param,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="another scheduler parameter, e.g. levels=demand (PRIO) or generations=50 (GA); "
        "repeatable (docs/reference/schedulers.md lists them)",
    )


def scheduler_param(text: str) -> tuple[str, Any]:
    """``NAME=VALUE``; the value a whole number, a number or text."""
    name, equals, value = text.partition("=")
    if not equals or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    for kind in (int, float):
        try:
            return name.strip(), kind(value)
        except ValueError:
            continue
    return name.strip(), value.strip()


def scheduler_options(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The scheduler settings the options chose (see :func:`scheduler_settings`)."""
    return scheduler_settings(args.scheduler, {"alpha": args.alpha, **dict(args.param)})


def add_force_option(parser: argparse.ArgumentParser) -> None:
    """--force: replace the outputs an earlier run left in --out (see :func:`check_out`)."""
    parser.add_argument(
        "--force",
        action="store_true",
        help="--out may hold an earlier run's outputs: they are removed first (only files "
        "sitesim writes; anything else is refused)",
    )


def check_out(args: argparse.Namespace, *, clear: bool = True) -> None:
    """Fail now, not after the simulation, if --out cannot be written, or holds anything: an
    earlier run's files would mix with the new ones. With --force (where the command has it)
    the folder may hold an earlier run's outputs, which are removed (unless not ``clear``:
    checked only, for a command that calls this again just before it runs)."""
    if args.out is None:
        return
    force = getattr(args, "force", False)
    remedy = "choose another folder" + (", or give --force" if hasattr(args, "force") else "")
    check_output_folder(args.out, new=not force, remedy=remedy)
    if force and clear:
        clear_output_folder(args.out)


class _DaskAddress(argparse.Action):
    """--dask ADDRESS: remember the address and choose the Dask executor."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        namespace.dask, namespace.executor = values, "dask"


def add_executor_options(parser: argparse.ArgumentParser) -> None:
    """--serial | --dask, and --workers: where many runs execute (sets ``args.executor`` to
    serial, dask or, by default, process)."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--serial", dest="executor", action="store_const", const="serial",
        default="process", help="run one after another in this process",
    )  # fmt: skip
    where.add_argument(
        "--dask",
        action=_DaskAddress,
        metavar="local|ADDRESS|FILE",
        help="run on Dask: 'local' starts a LocalCluster; tcp://HOST:PORT or a scheduler file "
        "(dask scheduler --scheduler-file) joins a running cluster",
    )
    parser.add_argument(
        "--workers",
        type=positive_int,
        metavar="N",
        help="processes of the local pool or LocalCluster (default: every core, "
        f"{available_cores()} here)",
    )


def progress_report(bar: Callable[[float, str], None], noun: str) -> Callable[[int, int], None]:
    """A ``progress(done, total)`` that draws ``bar`` with the count and the time left, from the
    pace since the first call (whose count, e.g. runs found complete, does not set the pace)."""
    clock: dict[str, float] = {}

    def report(done: int, total: int) -> None:
        now = time.monotonic()
        if not clock:
            clock.update(start=now, first=done)
        note = f"{done}/{total} {noun}"
        paced, elapsed = done - clock["first"], now - clock["start"]
        if paced > 0 and done < total and elapsed >= 1:
            left = elapsed / paced * (total - done)
            note += f", about {int(left // 60)}m{int(left % 60):02d}s left"
        bar(done / total if total else 1.0, note)

    return report


def warn_refused(
    refusals: Sequence[tuple[str, Mapping[str, int]]], *, of: int, most: int = 10
) -> None:
    """Say on stderr which jobs ``of`` runs left out, by reason
    (:func:`sitesim.results.report.jobs_refused`), given ``(label, refused)`` for each run that left
    any out: one line when every run left out the same (a trace's impossible lines), else one
    line per run, labeled, or one line of their sums when more than ``most`` runs did."""
    refusals = [(label, refused) for label, refused in refusals if refused]
    if not refusals:
        return
    if len(refusals) == of and all(refused == refusals[0][1] for _, refused in refusals):
        lines = [refused_text(refusals[0][1])]
    elif len(refusals) <= most:
        lines = [f"{label}: {refused_text(refused)}" for label, refused in refusals]
    else:
        total: Counter[str] = Counter()
        for _, refused in refusals:
            total.update(refused)
        lines = [f"{len(refusals)} of {of} runs {refused_text(total)}"]
    for line in lines:
        print(f"sitesim: warning: {line}", file=sys.stderr)
