"""``sitesim rerun``: repeat a run from the configuration its results.json holds."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from sitesim.commands import COMMANDS
from sitesim.commands.arguments import check_out
from sitesim.config import ReplayConfig, RunConfig
from sitesim.errors import ConfigError, SitesimError
from sitesim.progress import ProgressBar
from sitesim.report import REPLAY_COLUMNS, RUN_COLUMNS, replay_row, run_row, table, write_outputs
from sitesim.runner import run as run_config
from sitesim.swf import read_swf
from sitesim.trace_replay import run_replay

EPILOG = """\
examples:
  sitesim rerun runs/users-0020-EASY/results.json
  sitesim rerun runs/sp2/EASY/results.json --out again

The configuration in results.json names every setting of the run, with the sha256 of the
profile or trace it read; a file that has changed since is refused. The same configuration
gives the same simulated.swf, byte for byte. The summary of the new run is compared with the
one stored beside the configuration: exit status 0 when it is the same, 1 when it differs
(the competitive ratio, measured against another run, is not repeated).
"""

#: Summary fields measured against another run: not repeated by a rerun.
AGAINST_OTHERS = frozenset({"competitive_ratio"})


def add_parser(commands: Any) -> None:
    p = commands.add_parser(
        "rerun",
        help=COMMANDS["rerun"],
        description="Run again the configuration stored in a results.json, and check that the "
        "summary is the same.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("results", type=Path, metavar="RESULTS", help="a run's results.json")
    p.add_argument("--out", type=Path, metavar="DIR", help="write the run's outputs here")
    p.set_defaults(func=run)


def load_results(path: Path) -> tuple[RunConfig, dict[str, Any]]:
    """The configuration and the stored summary of a results.json."""
    try:
        document = json.loads(path.read_text())
    except OSError as err:
        raise SitesimError(f"{path}: cannot read: {err.strerror or err}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ConfigError(f"{path}: not a results.json ({err})") from None
    if not isinstance(document, dict) or "config" not in document:
        raise ConfigError(f"{path}: not a results.json (no 'config')")
    if document["config"] is None:
        raise ConfigError(
            f"{path}: this run used pieces a configuration cannot describe (a custom user "
            "model, scheduler object or in-memory profile), so it cannot be rerun"
        )
    return RunConfig.from_dict(document["config"], where=str(path)), document.get("summary", {})


def run(args: argparse.Namespace) -> int:
    config, stored = load_results(args.results)
    check_out(args)
    trace = None
    with ProgressBar(f"rerun {config.label}") as bar:
        if isinstance(config, ReplayConfig):  # read here: its outputs copy fields from it
            trace = read_swf(config.trace)
            result = run_replay(config, trace=trace, progress=bar)
            print(table(REPLAY_COLUMNS, [replay_row(result)]))
        else:
            result = run_config(config, progress=bar)
            print(table(RUN_COLUMNS, [run_row(result)]))
    if args.out is not None:
        write_outputs(args.out, result, trace, users=trace is None)
        print(f"outputs written to {args.out}")
    changed = [
        name
        for name, value in result.summary.as_dict().items()
        if name in stored and name not in AGAINST_OTHERS and not _same(stored[name], value)
    ]
    if changed:
        print(f"summary differs from {args.results} in: {', '.join(changed)}")
        return 1
    print(f"same summary as {args.results}")
    return 0


def _same(stored: Any, value: Any) -> bool:
    """Equal, with JSON's null standing for NaN."""
    if stored is None:
        return isinstance(value, float) and math.isnan(value)
    return bool(stored == value)
