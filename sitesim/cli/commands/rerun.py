"""``sitesim rerun``: repeat a run from the configuration its results.json holds."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from sitesim import __version__
from sitesim.cli.commands import COMMANDS
from sitesim.cli.commands.arguments import add_force_option, check_out
from sitesim.cli.progress import ProgressBar
from sitesim.errors import ConfigError, SitesimError
from sitesim.import_paths import is_import_path, module_of
from sitesim.results.report import (
    REPLAY_COLUMNS,
    RUN_COLUMNS,
    replay_row,
    run_row,
    table,
    write_outputs,
)
from sitesim.runs.config import ReplayConfig, RunConfig
from sitesim.runs.replay import run_replay
from sitesim.runs.runner import run as run_config
from sitesim.workload.swf import read_swf

EPILOG = """\
examples:
  sitesim rerun runs/users-0020-EASY/results.json
  sitesim rerun runs/sp2/EASY/results.json --out again
  sitesim rerun runs/fair/scheduler=mypkg.sched:FairEASY,seed=1/results.json --allow-import

The configuration in results.json names every setting of the run, with the sha256 of the
profile or trace it read; a file that has changed since is refused. The same configuration
gives the same simulated.swf, byte for byte. The summary of the new run is compared with the
one stored beside the configuration: exit status 0 when it is the same, 1 when it differs or
when results.json holds no summary to compare with (the competitive ratio, measured against
another run, is not repeated). A results.json written by another sitesim version is rerun
with a note.

A scheduler or user factory of one's own is named in results.json by its import path
(module:name). Importing a module runs its code, and a results.json may come from anyone:
rerun imports such a module only with --allow-import, and says which.
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
    add_force_option(p)
    p.add_argument(
        "--allow-import",
        action="store_true",
        help="import the modules results.json names (a scheduler or user factory of one's own, "
        "module:name): their code runs",
    )
    p.set_defaults(func=run)


def load_results(
    path: Path, *, allow_import: bool = False
) -> tuple[RunConfig, dict[str, Any], str | None]:
    """The configuration, the stored summary and the sitesim version of a results.json.

    Args:
        path: the results.json.
        allow_import: import the modules its configuration names by import path (the code of
            a scheduler or user factory of one's own); otherwise such a configuration is refused.

    Raises:
        ConfigError: not a results.json, a run no configuration describes, no summary to
            compare a rerun with, or modules to import without ``allow_import``.
    """
    try:
        document = json.loads(path.read_text())
    except OSError as err:
        raise SitesimError(f"{path}: cannot read: {err.strerror or err}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ConfigError(f"{path}: not a results.json ({err})") from None
    if not isinstance(document, dict) or "config" not in document:
        raise ConfigError(f"{path}: not a results.json (no 'config')")
    data = document["config"]
    if data is None:
        raise ConfigError(
            f"{path}: this run used pieces a configuration cannot describe (a custom user "
            "model, scheduler object or in-memory profile), so it cannot be rerun"
        )
    summary = document.get("summary")
    if not isinstance(summary, dict) or not summary:
        raise ConfigError(f"{path}: holds no summary, so a rerun has nothing to compare with")
    code = imported_code(data)
    if code and not allow_import:
        raise ConfigError(
            f"{path}: the run needs code imported from {_named(code)}; importing a module runs "
            "it, so give --allow-import if you trust it"
        )
    for what, name in code:
        print(f"sitesim: importing module {module_of(name)} for the {what} {name}", file=sys.stderr)
    version = document.get("sitesim_version")
    return RunConfig.from_dict(data, where=str(path)), summary, str(version) if version else None


def imported_code(config: Any) -> list[tuple[str, str]]:
    """What a stored configuration names by import path: ``(what, path)`` pairs."""
    if not isinstance(config, dict):
        return []
    named = [("scheduler", config.get("scheduler")), ("user factory", config.get("model"))]
    return [(what, str(name)) for what, name in named if is_import_path(name)]


def _named(code: list[tuple[str, str]]) -> str:
    return ", ".join(f"module {module_of(name)} (the {what} {name})" for what, name in code)


def run(args: argparse.Namespace) -> int:
    config, stored, written_by = load_results(args.results, allow_import=args.allow_import)
    check_out(args)
    if written_by != __version__:
        print(
            f"sitesim: note: {args.results} was written by sitesim {written_by or '(unknown)'}; "
            f"this is sitesim {__version__}: a summary that differs may come from the version",
            file=sys.stderr,
        )
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
    fresh = {k: v for k, v in result.summary.as_dict().items() if k not in AGAINST_OTHERS}
    compared = [name for name in fresh if name in stored]
    if not compared:
        print(
            f"sitesim: nothing compared: the summary in {args.results} has none of the fields "
            "of this version's summary",
            file=sys.stderr,
        )
        return 1
    changed = [name for name in compared if not _same(stored[name], fresh[name])]
    if changed:
        print(f"summary differs from {args.results} in: {', '.join(changed)}")
        return 1
    missing = [name for name in fresh if name not in stored]
    if missing:
        print(
            f"sitesim: note: {len(compared)} of {len(fresh)} summary fields compared; "
            f"{args.results} does not hold {', '.join(missing)}",
            file=sys.stderr,
        )
    print(f"same summary as {args.results}")
    return 0


def _same(stored: Any, value: Any) -> bool:
    """Equal, with JSON's null standing for NaN."""
    if stored is None:
        return isinstance(value, float) and math.isnan(value)
    return bool(stored == value)
