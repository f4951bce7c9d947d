"""Argument types and helpers shared by the commands."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any

from sitesim.activity import THINK_DEFINITIONS
from sitesim.errors import ConfigError
from sitesim.output import check_output_folder
from sitesim.schedulers import REGISTRY, parameters


def number(low: float, *, above: bool = False, whole: bool = False) -> Callable[[str], Any]:
    """An argparse type: a finite number >= ``low`` (> ``low`` when ``above``)."""
    kind = "a whole number" if whole else "a finite number"
    relation = ">" if above else ">="

    def parse(text: str) -> Any:
        try:
            value = int(text) if whole else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {kind}") from None
        if not math.isfinite(value) or not (value > low if above else value >= low):
            raise argparse.ArgumentTypeError(f"must be {kind} {relation} {low:g}, got {text}")
        return value

    return parse


positive_float = number(0, above=True)
non_negative_float = number(0)
positive_int = number(1, whole=True)
seed_number = number(0, whole=True)


def scheduler_names(text: str) -> list[str]:
    """Comma-separated scheduler names, checked against the registry."""
    names = [name.strip().upper() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in REGISTRY]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown scheduler {', '.join(unknown) or repr(text)}; "
            f"choose from {', '.join(REGISTRY)}"
        )
    return names


def scheduler_settings(names: list[str], params: dict[str, Any]) -> list[dict[str, Any]]:
    """For each scheduler, ``{"scheduler": name, "scheduler_params": ...}`` with those of
    ``params`` (set by the user; None is unset) it takes.

    Raises:
        ConfigError: a parameter that none of the schedulers takes.
    """
    given = {key: value for key, value in params.items() if value is not None}
    for key in given:
        if not any(key in parameters(name) for name in names):
            takers = [name for name in REGISTRY if key in parameters(name)]
            raise ConfigError(f"--{key} applies to {', '.join(takers)}, not {', '.join(names)}")
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
        help=f"scheduler(s), comma-separated: {', '.join(REGISTRY)} (default EASY)",
    )
    parser.add_argument(
        "--alpha",
        type=non_negative_float,
        help="CREASY's criticality weight alpha >= 0 (default 6000; 0 is EASY)",
    )


def check_out(args: argparse.Namespace) -> None:
    """Fail now, not after the simulation, if --out cannot be written."""
    if args.out is not None:
        check_output_folder(args.out)
