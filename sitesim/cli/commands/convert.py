"""``sitesim convert``: a site's accounting log, a Batsim workload or a run, in another format."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sitesim.cli.commands import COMMANDS
from sitesim.errors import SitesimError
from sitesim.formats.choose import DESCRIBE, READ, WRITE, by_extension

if TYPE_CHECKING:
    from sitesim.formats.lines import Skipped

EPILOG = """\
formats (--from, --to; otherwise told by the file names):
  sacct        read   Slurm accounting: sacct --parsable2 --allocations output (.sacct, .psv)
  pbs          read   PBS/Torque accounting logs, their E records (.pbs; or --from pbs)
  batsim       both   Batsim JSON workload (.json)
  swf          both   Standard Workload Format (.swf, .swf.gz)
  run          read   a sitesim run folder (results.json, jobs.csv, ...) or a sweep folder
  batsim-jobs  write  Batsim's jobs.csv of a run, for evalys (NAME_jobs.csv, .csv)
  parquet      write  Parquet: an SWF trace as one table (.parquet); a run or sweep folder's
                      tables into folder OUTPUT (needs pyarrow: pip install 'sitesim[parquet]')

examples:
  TZ=UTC sacct --allusers --allocations --parsable2 --starttime 2024-01-01 \\
      --endtime 2024-07-01 --format JobID,JobIDRaw,User,Account,Partition,QOS,Submit,\\
  Eligible,Start,End,Timelimit,NNodes,NCPUS,ReqCPUS,ReqMem,AllocTRES,ReqTRES,State,\\
  ExitCode > site.sacct
  sitesim convert site.sacct -o site.swf --platform-out site.toml
  sitesim convert /var/spool/pbs/server_priv/accounting/202404* --from pbs -o april.swf
  sitesim convert ../shared/traces/SDSC-SP2-1998-4.2-cln.swf.gz -o sp2.json
  sitesim convert workload.json -o workload.swf
  sitesim convert runs/sp2/EASY -o out_jobs.csv           # then evalys: JobSet.from_csv
  sitesim convert runs/sweep --to parquet -o tables

Lines that cannot become jobs (still running, job steps, other record types) are counted by
reason, the first two of each quoted with their line numbers. A malformed line stops the
conversion: one line naming the file, the line and the field, exit status 2, nothing written;
so does a conversion that gives no job (an empty file, every line skipped). A sacct log of
several clusters needs --cluster. OUTPUT's folder must exist; an input is never replaced.
Users and accounts are numbered (1, 2, ... by first submission); their names are written only
to the --mapping file, when it is asked for. docs/reference/formats.md has every field.
"""


def add_parser(commands: Any) -> None:
    p = commands.add_parser(
        "convert",
        help=COMMANDS["convert"],
        description="Convert job data between a site's accounting logs (Slurm's sacct, "
        "PBS/Torque), Batsim's workloads and jobs.csv, SWF and Parquet.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "inputs", nargs="+", type=Path, metavar="INPUT",
        help="file(s) to read (several: the parts of one log, e.g. one PBS log a day), or a "
        "run or sweep folder",
    )  # fmt: skip
    p.add_argument("-o", "--output", type=Path, required=True, metavar="OUTPUT",
                   help="file to write (a folder for a run's Parquet tables)")  # fmt: skip
    p.add_argument("--from", dest="source", choices=READ, metavar="FORMAT",
                   help=f"input format: {', '.join(READ)} (default: by the name)")  # fmt: skip
    p.add_argument("--to", dest="target", choices=WRITE, metavar="FORMAT",
                   help=f"output format: {', '.join(WRITE)} (default: by the name)")  # fmt: skip
    p.add_argument(
        "--timezone", default="UTC", metavar="ZONE",
        help="sacct: the IANA time zone of its YYYY-MM-DDTHH:MM:SS times, that of the machine "
        "sacct ran on (default UTC; run sacct with TZ=UTC, or SLURM_TIME_FORMAT=%%s, to need "
        "none)",
    )  # fmt: skip
    p.add_argument(
        "--submit-time", choices=("submit", "eligible"), default="submit",
        help="sacct: a job's SWF submit time is when it was submitted (default), or when it "
        "became eligible to start (after holds, dependencies, begin times)",
    )  # fmt: skip
    p.add_argument(
        "--cluster", metavar="NAME",
        help="sacct: keep the jobs of this cluster (needs the field Cluster); a log of several "
        "clusters (sacct --clusters) must name one",
    )  # fmt: skip
    p.add_argument(
        "--mapping", type=Path, metavar="FILE",
        help="also write the names behind the numbers (users, accounts or groups, queues, "
        "partitions) as JSON; it names people: keep it private",
    )  # fmt: skip
    p.add_argument(
        "--platform-out", type=Path, metavar="FILE.toml",
        help="sacct: also write the platform the log shows (one node type a partition, as "
        "many nodes and cores as its jobs held at once: a lower bound to edit)",
    )  # fmt: skip
    p.add_argument("--force", action="store_true",
                   help="replace OUTPUT (and --mapping, --platform-out) if they exist")  # fmt: skip
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    source = args.source or _source_format(args.inputs)
    target = args.target or by_extension(args.output)
    if target is None:
        raise SitesimError(
            f"{args.output}: cannot tell the output format from the name; give --to "
            f"({', '.join(WRITE)})"
        )
    outputs = [o for o in (args.output, args.mapping, args.platform_out) if o is not None]
    folder = _folder_out(source, target)
    _check_not_inputs(outputs, args.inputs, folder=folder)
    _check_pair(source, target, args)
    _check_outputs(outputs, args.force, folder=folder)
    if target == "parquet":
        from sitesim.formats.tables import pyarrow

        pyarrow()  # (not installed: say so before reading anything)
    if source == "run":
        return _convert_run(args, target)
    from sitesim.output import atomic_write_all

    converted = _read(source, args)
    skipped, trace, written = converted.skipped, converted.trace, len(converted.trace)
    # everything that can fail is done before the first file is written
    workload, dropped = None, None
    if target == "batsim":
        from sitesim.formats.batsim import batsim_workload

        workload, dropped = batsim_workload(trace)
        written -= dropped.total
    if not written:
        raise SitesimError(_no_job(args.inputs, skipped, dropped))
    platform = None
    if args.platform_out is not None:
        platform = _platform_text(converted.platform, args.inputs[0])
    if dropped is not None and source == "swf":
        skipped = dropped
    elif dropped is not None and dropped.total:
        print(f"not carried into the Batsim workload: {_reasons(dropped)}")
    if workload is not None:
        files: list[tuple[Path, str | bytes]] = [(args.output, workload)]
    elif target == "swf":
        from sitesim.workload.swf import format_swf

        files = [(args.output, format_swf(trace.data, trace.header, trace.tails))]
    else:
        from sitesim.formats.tables import swf_parquet

        files = [(args.output, swf_parquet(trace))]
    if args.mapping is not None:
        from sitesim.workload.names import mapping_json

        files.append((args.mapping, mapping_json(converted.names)))
    if platform is not None:
        files.append((args.platform_out, platform))
    atomic_write_all(files)  # all of them or, on an error or a Ctrl-C, none
    names = ", ".join(str(p) for p in args.inputs)
    print(f"{names}: {written:,} jobs written to {args.output} ({target})")
    print(skipped.report())
    for note in converted.notes:
        print(f"note: {note}")
    return 0


def _source_format(inputs: list[Path]) -> str:
    if inputs[0].is_dir():
        return "run"
    found = by_extension(inputs[0])
    if found is None or found not in READ:
        raise SitesimError(
            f"{inputs[0]}: cannot tell its format from the name; give --from ({', '.join(READ)})"
        )
    return found


_PAIRS = {
    "sacct": ("swf", "batsim", "parquet"),
    "pbs": ("swf", "batsim", "parquet"),
    "batsim": ("swf", "parquet"),
    "swf": ("swf", "batsim", "parquet"),
    "run": ("batsim-jobs", "parquet"),
}


def _check_pair(source: str, target: str, args: argparse.Namespace) -> None:
    if target not in _PAIRS[source]:
        raise SitesimError(
            f"cannot convert {DESCRIBE[source]} to {DESCRIBE[target]}; from {source}: "
            f"{', '.join(_PAIRS[source])}"
        )
    if len(args.inputs) > 1 and source not in ("sacct", "pbs"):
        raise SitesimError(f"{source}: give one input (several are read only for sacct and pbs)")
    if args.platform_out is not None and source != "sacct":
        raise SitesimError("--platform-out: only sacct output shows partitions")
    if args.cluster is not None and source != "sacct":
        raise SitesimError("--cluster: only sacct output names clusters")
    if args.mapping is not None and source not in ("sacct", "pbs"):
        raise SitesimError("--mapping: only sacct and pbs logs hold names")
    if source == "run" and not args.inputs[0].is_dir():
        raise SitesimError(f"{args.inputs[0]}: --from run needs a run or sweep folder")


def _folder_out(source: str, target: str) -> bool:
    return source == "run" and target == "parquet"


def _check_not_inputs(paths: list[Path], inputs: list[Path], *, folder: bool) -> None:
    """Fail if an output is an input (even with --force), or an output folder holds one (it
    would be emptied)."""
    for k, path in enumerate(paths):
        for given in inputs:
            if _same(path, given):
                raise SitesimError(
                    f"{path}: is the input {given}; write the output elsewhere (--force never "
                    "replaces an input)"
                )
            if k == 0 and folder and path.resolve() in given.resolve().parents:
                raise SitesimError(f"{path}: holds the input {given}; write the output elsewhere")


def _check_outputs(paths: list[Path], force: bool, *, folder: bool) -> None:
    """Fail before reading anything if an output cannot be written: its folder does not
    exist (it is not created), it is given twice, or it would replace a file without
    --force."""
    from sitesim.output import check_output_file, check_output_folder

    for k, path in enumerate(paths):
        if not path.parent.is_dir():
            problem = "is not a folder" if path.parent.exists() else "does not exist"
            raise SitesimError(f"{path.parent}: the folder {problem} (for {path.name})")
        if any(_same(path, other) for other in paths[:k]):
            raise SitesimError(f"{path}: given as two outputs; give each its own name")
        if k == 0 and folder:
            check_output_folder(path, new=not force, remedy="choose another folder, or give "
                                "--force")  # fmt: skip
            continue
        check_output_file(path)
        if path.exists() and not force:
            raise SitesimError(f"{path}: exists; give --force to replace it")


def _same(a: Path, b: Path) -> bool:
    """Whether paths ``a`` and ``b`` name one file (or folder), links followed."""
    try:
        return a.samefile(b)
    except OSError:  # (one does not exist)
        return a.resolve() == b.resolve()


def _no_job(inputs: list[Path], skipped: Skipped, dropped: Skipped | None) -> str:
    """The error for a conversion that gives no job: empty input, every line skipped, or
    every job left out of a Batsim workload."""
    from sitesim.formats.choose import read_text

    names = ", ".join(str(p) for p in inputs)
    one = len(inputs) == 1
    reasons = [skipped.summary()] if skipped.total else []
    if dropped is not None and dropped.total:
        reasons.append(f"not carried into the Batsim workload: {_reasons(dropped)}")
    if reasons:
        why = "; ".join(reasons)
    elif all(not read_text(p, limit=_BLANK).strip() and _size(p) < _BLANK for p in inputs):
        why = "the file is empty" if one else "the files are empty"
    else:
        why = "the file holds no job" if one else "the files hold no job"
    return f"{names}: no job to convert: {why}"


def _reasons(skipped: Skipped | None) -> str:
    """``unknown runtime 3, unknown size 1``: the counts of :meth:`Skipped.summary`."""
    return "" if skipped is None else skipped.summary().partition(": ")[2]


#: Bytes read to tell an empty file (white space only) from a file without jobs.
_BLANK = 1 << 16


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _read(source: str, args: argparse.Namespace) -> Any:
    from sitesim.formats.converted import Converted

    if source == "sacct":
        from sitesim.formats.sacct import read_sacct

        return read_sacct(
            args.inputs, timezone=args.timezone, submit_time=args.submit_time,
            cluster=args.cluster,
        )  # fmt: skip
    if source == "pbs":
        from sitesim.formats.pbs import read_pbs

        return read_pbs(args.inputs)
    if source == "batsim":
        from sitesim.formats.batsim import read_batsim

        return read_batsim(args.inputs[0])
    from sitesim.workload.swf import read_swf

    return Converted(read_swf(args.inputs[0]))


def _platform_text(platform: dict[str, Any] | None, source: Path) -> str:
    from sitesim.formats.platform_toml import platform_toml

    if platform is None:
        raise SitesimError(
            f"{source}: shows no partition with jobs that ran on nodes (needs the fields "
            "Partition and NNodes): no platform to write"
        )
    return platform_toml(platform, source.name)


def _convert_run(args: argparse.Namespace, target: str) -> int:
    folder = args.inputs[0]
    if target == "batsim-jobs":
        from sitesim.formats.run_folder import folder_jobs_csv
        from sitesim.output import atomic_write

        text = folder_jobs_csv(folder)
        atomic_write(args.output, text)
        print(f"{folder}: {text.count(chr(10)) - 1:,} jobs written to {args.output} "
              "(Batsim's jobs.csv)")  # fmt: skip
        return 0
    from sitesim.formats.tables import load, run_tables_parquet
    from sitesim.output import clear_output_folder, staged_folder

    tables = load(folder)
    if args.force:
        clear_output_folder(args.output)
    with staged_folder(args.output) as staging:
        written = run_tables_parquet(tables, staging)
    print(f"{folder}: {', '.join(written)} written to {args.output}")
    return 0
