"""The ``sitesim`` command line: a thin layer over the library.

Errors are one clear line on stderr and exit status 2; results go to stdout.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from sitesim import __version__
from sitesim.commands import analyze, compare, profile, replay, rerun, run, sweep, utility
from sitesim.errors import SitesimError

EXIT_USAGE = 2


# -- entry point -----------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sitesim",
        description="Site-level simulation of parallel-computer job schedulers.",
    )
    parser.add_argument("--version", action="version", version=f"sitesim {__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    for command in (run, replay, rerun, sweep, compare, analyze, profile, utility):
        command.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except SitesimError as err:
        print(f"sitesim: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as err:  # a file the checks before the run could not foresee
        where = f"{err.filename}: " if err.filename else ""
        print(f"sitesim: error: {where}{err.strerror or err}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("sitesim: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
