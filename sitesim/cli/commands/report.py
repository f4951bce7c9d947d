"""``sitesim report``: look at a run (its HTML report, its Gantt chart, its users' lanes) or
compare the runs of a sweep (one HTML report of its folder)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from sitesim.cli.commands import COMMANDS
from sitesim.errors import SitesimError
from sitesim.output import check_output_file

#: The report written into a run folder when no --out names another file.
REPORT_NAME = "report.html"
#: The names the HTML report may have.
HTML_SUFFIXES = (".html", ".htm")

EPILOG = """\
examples:
  sitesim report runs/sp2/EASY                          # writes runs/sp2/EASY/report.html
  sitesim report runs/sp2/EASY --window 100:103 --out sp2-days-100-103.html
  sitesim report runs/sp2/EASY --gantt gantt.png --color-by state
  sitesim report runs/demo/users-0020-EASY --compare runs/demo/users-0020-FCFS --lanes users.png
  sitesim report runs/slurm/users-0020-SLURM --color-by decision   # main pass or backfill
  sitesim report runs/bf                                # a sweep: writes runs/bf/report.html
  sitesim report runs/bf --baseline bf_resolution=1     # compare against that level

RUN is a folder a run wrote (sitesim run, replay or sweep with --out); it must be complete:
results.json lists every file with its size and sha256. The HTML report is one file with
everything inside (it opens without network access); it needs Bokeh (pip install
'sitesim[report]'). --gantt and --lanes write figures with matplotlib alone, as PNG, SVG or PDF
by the extension of the name; given without --out, they write no HTML. The files appear
together, or none does. --window A:B (days; either side may be left open) zooms every view.

SWEEP is the --out folder of sitesim sweep: its report compares the runs that completed, one
HTML file without Bokeh (tables and PNG figures inside): each combination's means with 95 %
intervals; paired differences, each level of each factor against a baseline level (the first,
or --baseline factor=level), seed by seed, with 95 % intervals by Student's t and n; per
account, share against usage, jobs an hour and wait; per partition, jobs, wait and core, GPU
and memory utilization; the SLURM settings as the runs used them, those that differ first.
Planned runs that are missing (failed, interrupted, not run) are named, one line each.
"""


def add_parser(commands: Any) -> None:
    from sitesim.views.gantt import COLOR_BY

    p = commands.add_parser(
        "report",
        help=COMMANDS["report"],
        description="Look at a run: a self-contained HTML report (summary, Gantt chart, "
        "timelines, users' lanes, tables, configuration), or the Gantt chart and the users' "
        "lanes as PNG, SVG or PDF. Of a sweep's folder: one HTML report that compares its "
        "runs (paired differences with intervals, accounts, partitions, SLURM settings).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("run_folder", type=Path, metavar="RUN|SWEEP",
                   help="the folder of one run, or of a sweep")  # fmt: skip
    p.add_argument("--out", type=Path, metavar="FILE",
                   help=f"the HTML file (RUN/{REPORT_NAME} or SWEEP/{REPORT_NAME})")  # fmt: skip
    p.add_argument("--gantt", type=Path, metavar="FILE",
                   help="write the Gantt chart (.png, .svg or .pdf, by the name)")  # fmt: skip
    p.add_argument("--lanes", type=Path, metavar="FILE",
                   help="write the users' lanes (.png, .svg or .pdf, by the name)")  # fmt: skip
    p.add_argument("--color-by", choices=COLOR_BY, help="colour of the jobs (user)")
    p.add_argument("--window", metavar="A:B", help="days A to B only (e.g. 3:5, 100:)")
    p.add_argument(
        "--compare",
        type=Path,
        action="append",
        default=[],
        metavar="RUN",
        help="another run of the same users, drawn beside it in the lanes (repeatable)",
    )
    p.add_argument(
        "--user", type=int, action="append", metavar="ID", help="draw this user's lane (repeat)"
    )
    p.add_argument(
        "--baseline",
        action="append",
        default=[],
        metavar="FACTOR=LEVEL",
        help="of a sweep: compare each level of FACTOR against LEVEL (default: its first "
        "level; repeatable, one a factor)",
    )
    p.set_defaults(func=run)


#: The options that draw one run, with their values when not given.
RUN_OPTIONS: tuple[tuple[str, Any], ...] = (
    ("--gantt", None), ("--lanes", None), ("--color-by", None), ("--window", None),
    ("--compare", []), ("--user", None),
)  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from sitesim.views.run_view import check_run_folder, clip_window, parse_window, read_run
    from sitesim.views.sweep_view import is_sweep_folder

    if is_sweep_folder(args.run_folder):
        return sweep_report(args)
    if args.baseline:
        raise SitesimError(f"--baseline compares the levels of a sweep's factors; "
                           f"{args.run_folder} is not a sweep folder (the --out of sitesim "
                           "sweep)")  # fmt: skip
    args.color_by = args.color_by or "user"
    for folder in (args.run_folder, *args.compare):
        check_run_folder(folder)
    window = None if args.window is None else parse_window(args.window)
    html = args.out
    if html is None and not (args.gantt or args.lanes):
        html = args.run_folder / REPORT_NAME
    outputs = _check_outputs(html, args.gantt, args.lanes)
    if html is not None:
        from sitesim.views.html import bokeh_modules

        bokeh_modules()  # (before reading a large run)
    view = read_run(args.run_folder)
    others = [read_run(folder) for folder in args.compare]
    clip_window(view, window)  # (a window outside the run: one line now)
    files: list[tuple[Path, str | bytes]] = []
    if args.gantt is not None:
        from sitesim.figures import figure_bytes
        from sitesim.views.gantt import gantt_figure

        fig = gantt_figure(view, args.color_by, window)
        files.append((args.gantt, figure_bytes(fig, args.gantt)))
    if args.lanes is not None:
        from sitesim.figures import figure_bytes
        from sitesim.views.lanes import lanes_figure

        fig = lanes_figure([view, *others], args.user, window)
        files.append((args.lanes, figure_bytes(fig, args.lanes)))
    if html is not None:
        from sitesim.views.html import report_html

        text = report_html(view, color_by=args.color_by, window=window, others=others,
                           users=args.user)  # fmt: skip
        files.append((html, text))
    from sitesim.output import atomic_write_all

    atomic_write_all(files)  # all of them or, on an error or a Ctrl-C, none
    print(f"written: {', '.join(str(p) for p in outputs)}")
    return 0


def sweep_report(args: argparse.Namespace) -> int:
    """The report of a sweep folder: one HTML file; the missing runs said on stderr too."""
    from sitesim.output import atomic_write_all
    from sitesim.views.sweep_html import baselines, sweep_report_html
    from sitesim.views.sweep_view import read_sweep

    folder = args.run_folder
    for option, unset in RUN_OPTIONS:
        if getattr(args, option[2:].replace("-", "_")) != unset:
            raise SitesimError(f"{option} draws one run: give one run's folder of the sweep "
                               f"({folder}/NAME), not the sweep's")  # fmt: skip
    html = args.out if args.out is not None else folder / REPORT_NAME
    _check_outputs(html, None, None)
    view = read_sweep(folder)
    text = sweep_report_html(view, baselines(view, args.baseline))
    for name, why in view.missing:
        print(f"sitesim: warning: run {name} is missing: {why}", file=sys.stderr)
    atomic_write_all([(html, text)])
    print(f"written: {html} ({len(view.runs):,} of {view.planned:,} runs complete)")
    return 0


def _check_outputs(html: Path | None, gantt: Path | None, lanes: Path | None) -> list[Path]:
    """Before the run is read: each output can be created, its name says a format it is
    written in, and no two name the same file. Returns them, in the order they are written.

    Raises:
        SitesimError: one line naming the option, the file and the problem.
    """
    named = [("--gantt", gantt), ("--lanes", lanes), ("--out", html)]
    outputs = [(option, path) for option, path in named if path is not None]
    for option, path in outputs:
        check_output_file(path)
        if option == "--out":
            if path.suffix.lower() not in HTML_SUFFIXES:
                raise SitesimError(f"--out {path}: the report is HTML: give a name ending in "
                                   f"{' or '.join(HTML_SUFFIXES)}")  # fmt: skip
        else:
            from sitesim.figures import figure_format

            figure_format(path, option)
    seen: dict[Path, str] = {}
    for option, path in outputs:
        other = seen.setdefault(path.resolve(), option)
        if other != option:
            raise SitesimError(f"{other} and {option} name the same file, {path}: give two")
    return [path for _, path in outputs]


def write_reports(out: Path, folders: list[Path]) -> None:
    """``--report`` of the commands that write run folders: each folder's report.html, read
    back from what the run wrote."""
    from sitesim.views.html import write_report
    from sitesim.views.run_view import read_run

    for folder in folders:
        write_report(read_run(folder), folder / REPORT_NAME)
    print(f"{REPORT_NAME} written into {len(folders)} run folder{'s' * (len(folders) > 1)} "
          f"of {out}")  # fmt: skip


def add_report_option(parser: argparse.ArgumentParser, what: str = "") -> None:
    """``--report``: an HTML report into each run folder written under --out (or ``what``)."""
    parser.add_argument(
        "--report",
        action="store_true",
        help=f"write {what or REPORT_NAME + ' into each run folder'} (needs --out and Bokeh: "
        "pip install 'sitesim[report]'; see sitesim report)",
    )


def check_report(args: argparse.Namespace) -> None:
    """Before anything runs: --report needs --out, and Bokeh."""
    if not getattr(args, "report", False):
        return
    if args.out is None:
        raise SitesimError("--report writes into the run folders: give --out DIR")
    from sitesim.views.html import bokeh_modules

    bokeh_modules()
