"""The ``sitesim`` command line: a thin layer over the library.

Errors are one clear line on stderr and exit status 2; results go to stdout.

Ctrl-C (SIGINT) and SIGTERM interrupt a command the same way: every clean-up on the way out
runs (staging folders and temporary files removed, pools and clusters stopped), what was
finished is kept, and the command ends with status 130 (143 for SIGTERM) and the line
``sitesim: interrupted``, at any moment up to its end: also after its outputs were written
(they are complete and stay). Run as the program, a command ends at once when it is done or
interrupted, without freeing the memory of a large run object by object (seconds per
gigabyte).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from importlib import import_module
from types import FrameType
from typing import Any, NoReturn

from sitesim.cli.commands import COMMANDS
from sitesim.errors import SitesimError

EXIT_USAGE = 2
#: Exit status after an interrupt: 128 + the signal's number, as a shell reports it.
EXIT_INTERRUPTED = {signal.SIGINT: 130, signal.SIGTERM: 143}


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
            import_module(f"sitesim.cli.commands.{name}").add_parser(commands)
        else:
            commands.add_parser(name, help=summary)  # (its options come with its module)
    return parser


class Interrupted(KeyboardInterrupt):
    """SIGTERM, raised as Ctrl-C's KeyboardInterrupt is, so that it stops a command the same
    way."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status.

    Args:
        argv: the arguments; None reads ``sys.argv`` and means that this is the program: it
            then ends in here, once the command is done or interrupted (:func:`_end`).
    """
    exit_now = argv is None
    if exit_now:
        from sitesim.engine import collector

        collector.exit_on_interrupt = True
    try:
        with _signals_interrupt():
            try:
                status = _command(argv)
            except SystemExit as exit_:  # (argparse: --help, --version, a usage error)
                if not (exit_now and isinstance(exit_.code, int)):
                    raise
                status = exit_.code
            if exit_now:
                _end(status)
            return status
    except KeyboardInterrupt as err:
        status = EXIT_INTERRUPTED[signal.SIGTERM if isinstance(err, Interrupted) else signal.SIGINT]
        del err  # (its traceback holds the run's frames)
        return _interrupted(status, exit_now=exit_now)


def _command(argv: Sequence[str] | None) -> int:
    """Parse the arguments and run the command; its exit status (an error: one line)."""
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            parser = build_parser(argv)
            args = parser.parse_args(argv)
            return int(args.func(args))
    except SitesimError as err:
        print(f"sitesim: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as err:  # a file the checks before the run could not foresee
        where = f"{err.filename}: " if err.filename else ""
        print(f"sitesim: error: {where}{err.strerror or err}", file=sys.stderr)
        return EXIT_USAGE


def _show_warning(message: Warning | str, *args: Any, **kwargs: Any) -> None:
    """A warning, as one line (each once: Python's default filter)."""
    print(f"sitesim: warning: {message}", file=sys.stderr)


def _interrupted(status: int, *, exit_now: bool) -> int:
    """Stop what an interrupted command left running; say so; end the process at once when
    ``exit_now`` (nothing is left to write, and freeing a large heap takes seconds)."""
    executors = sys.modules.get("sitesim.sweeps.executors")  # (imported only if something used it)
    if executors is not None:
        executors.stop_all()
    print("sitesim: interrupted", file=sys.stderr)
    if exit_now:
        _end(status)
    return status


def _end(status: int) -> NoReturn:
    """End the program now with ``status``, its output flushed. The interpreter's teardown is
    skipped: it would free every object one by one (seconds per gigabyte after a large run),
    and a Ctrl-C in it would end the program unannounced (status -2); nothing is left to run
    by then (pools and clusters are closed, outputs written), so no atexit function runs."""
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):  # (a closed pipe: `sitesim ... | head`)
            stream.flush()
    os._exit(status)


@contextmanager
def _signals_interrupt() -> Iterator[None]:
    """SIGTERM raises :class:`Interrupted` in the main thread while the command runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise Interrupted


if __name__ == "__main__":
    sys.exit(main())
