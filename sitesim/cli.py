"""The ``sitesim`` command line: a thin layer over the library.

Errors are one clear line on stderr and exit status 2; results go to stdout.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import import_module

from sitesim.commands import COMMANDS
from sitesim.errors import SitesimError

EXIT_USAGE = 2


class _Version(argparse.Action):
    """``--version``: the installed version, looked up only when asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        from sitesim import __version__

        print(f"sitesim {__version__}")
        parser.exit()


# -- entry point -----------------------------------------------------------------------------
def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser. Only the command named in ``argv`` (default: ``sys.argv``) is imported and
    given its options, so a command starts with just the modules it uses; the others are
    listed with their one-line help."""
    args = sys.argv[1:] if argv is None else argv
    chosen = next((arg for arg in args if not arg.startswith("-")), None)
    parser = argparse.ArgumentParser(
        prog="sitesim",
        description="Site-level simulation of parallel-computer job schedulers.",
    )
    parser.add_argument("--version", action=_Version)
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    for name, summary in COMMANDS.items():
        if name == chosen:
            import_module(f"sitesim.commands.{name}").add_parser(commands)
        else:
            commands.add_parser(name, help=summary)  # (its options come with its module)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status."""
    parser = build_parser(argv)
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
