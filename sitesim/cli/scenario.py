"""What every experiment script in ``scenarios/`` shares: its options and how it writes results.

Each script takes ``--quick`` (a short version the tests run), ``--out DIR`` (JSON, CSV and PNG
files, published together), ``--seed S`` (the first seed; replications use S, S+1, ...), and,
where the runs are large enough to gain from them, the executor options of sweeps
(``--serial``, ``--workers N``, ``--dask ...``).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from sitesim.cli.commands.arguments import (
    add_executor_options,
    add_force_option,
    check_out,
    positive_int,
    progress_report,
    seed_number,
)
from sitesim.cli.progress import ProgressBar
from sitesim.errors import SitesimError
from sitesim.models.dynamics import PCONT_A, PCONT_B
from sitesim.output import atomic_write, staged_folder, to_json
from sitesim.results.report import csv_text
from sitesim.runs.config import RunConfig
from sitesim.runs.runner import run
from sitesim.sweeps.executors import execute_all
from sitesim.sweeps.replications import paired_differences, summarize_runs

Item = TypeVar("Item")
Result = TypeVar("Result")


def parser(
    doc: str | None, *, replications: tuple[int, int] | None = None, executors: bool = True
) -> argparse.ArgumentParser:
    """The standard options of an experiment script; ``doc`` is its module docstring. With
    ``replications`` (the default count, and that of ``--quick``), ``--seeds N`` too; without
    ``executors``, no executor options (the runs are too small to gain from a pool: they run
    one after another in this process)."""
    text = doc or ""
    p = argparse.ArgumentParser(
        description=text.split("\n\n")[0],
        epilog="\n\n".join(text.split("\n\n")[1:]),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--quick", action="store_true", help="a short version (for the tests)")
    p.add_argument("--out", type=Path, metavar="DIR", help="write JSON, CSV and figures here")
    add_force_option(p)
    p.add_argument("--seed", type=seed_number, default=1, help="the first seed (default 1)")
    if executors:
        add_executor_options(p)
    else:
        p.set_defaults(executor="serial", workers=None, dask=None)
    if replications is not None:
        full, quick = replications
        p.add_argument(
            "--seeds",
            type=positive_int,
            help=f"replications (default {full}; --quick {quick})",
        )
        p.set_defaults(replications=replications)
    return p


def parse(p: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse the options, and check ``--out`` before anything runs."""
    args = p.parse_args(argv)
    check_out(args)
    return args


def executor_argv(args: argparse.Namespace) -> list[str]:
    """The parsed executor options, as options of a ``sitesim`` command."""
    chosen = {"serial": ["--serial"], "dask": ["--dask", str(args.dask)]}.get(args.executor, [])
    return chosen + (["--workers", str(args.workers)] if args.workers else [])


def seeds(args: argparse.Namespace, count: int | None = None) -> list[int]:
    """``count`` replication seeds from ``--seed`` on (None: as ``--seeds`` and the parser's
    ``replications`` say)."""
    if count is None:
        full, quick = args.replications
        count = args.seeds or (quick if args.quick else full)
    return list(range(args.seed, args.seed + count))


def real_trace(folder: Path, choices: Sequence[str]) -> Path | None:
    """The first of ``choices`` present in ``folder`` (saying so when it is not the first);
    None, with a message, when none is."""
    for name in choices:
        if (folder / name).exists():
            if name != choices[0]:
                print(f"{choices[0]} not found in {folder}: using {name} instead")
            return folder / name
    print(f"needs one of {', '.join(choices)} in {folder}", file=sys.stderr)
    return None


@contextmanager
def progress(label: str, noun: str) -> Iterator[Callable[[int, int], None]]:
    """A progress bar (on a terminal) as a ``progress(done, total)`` callback."""
    with ProgressBar(label) as bar:
        yield progress_report(bar, noun)


def run_all(
    function: Callable[[Item], Result],
    tasks: Sequence[Item],
    args: argparse.Namespace,
    label: str,
    noun: str = "tasks",
) -> list[Result]:
    """Run ``function`` on every task on the executor the options chose, with a progress bar;
    the results in task order.

    Raises:
        SitesimError: a task was lost (its worker died).
    """
    results: dict[int, Result] = {}
    with progress(label, noun) as report:
        for k, result, lost in execute_all(
            function, tasks, args.executor, workers=args.workers, address=args.dask
        ):
            if result is None:
                raise SitesimError(f"{label}: task {k + 1} of {len(tasks)} was lost: {lost}")
            results[k] = result
            report(len(results), len(tasks))
    return [results[k] for k in range(len(tasks))]


def summary_row(config: RunConfig) -> dict[str, Any]:
    """Run one configuration (a worker's task) and give its summary as a flat row."""
    return run(config).summary.as_dict()


def pm(row: dict[str, Any], key: str, spec: str = ".3g") -> str:
    """``row[key]`` with the half-width of its 95 % interval (``key_ci95``) when known."""
    half = row.get(f"{key}_ci95", float("nan"))
    return f"{row[key]:{spec}}" + (f" ± {half:.2g}" if half == half else "")


def publish(
    out: Path | None,
    data: dict[str, Any],
    *,
    name: str,
    tables: dict[str, Sequence[dict[str, Any]]] | None = None,
    figures: dict[str, Callable[[Path], Any]] | None = None,
) -> None:
    """Write ``name.json`` (``data``), CSV tables and figures into ``out``, all or nothing."""
    if out is None:
        return
    with staged_folder(out, last=f"{name}.json") as staging:
        for file, rows in (tables or {}).items():
            atomic_write(staging / file, csv_text(rows))
        for file, draw in (figures or {}).items():
            draw(staging / file)
        atomic_write(staging / f"{name}.json", to_json(data))
    written = [*(tables or {}), *(figures or {}), f"{name}.json"]
    print(f"{', '.join(written)} written to {out}")


#: The two feedback loops of complete users, told apart by their p_cont setting (a, b):
#: "both loops" is the default, users wait for their jobs *and* a slow response makes them
#: likelier to end the session; "aborts off" keeps p_cont = a whatever the response (b = 0):
#: users still wait for their jobs, sessions still end at random, but no longer because of
#: a slow response.
LOOPS = {"both loops": (PCONT_A, PCONT_B), "aborts off": (PCONT_A, 0.0)}


def loop_split(
    runs: Sequence[dict[str, Any]],
    metrics: Sequence[str],
    *,
    factors: Sequence[str] = (),
    better: str = "EASY",
    worse: str = "FCFS",
) -> list[dict[str, Any]]:
    """The gain of scheduler ``better`` over ``worse`` in %, 100 × (better / worse − 1) seed by
    seed, under each setting of :data:`LOOPS`, and how much of it the session aborts make.

    Args:
        runs: rows with ``scheduler``, ``loops`` (a key of :data:`LOOPS`), ``seed``, the
            ``factors`` and the ``metrics``.
        metrics: the fields compared.
        factors: other factors; the split is made within each combination of their levels.
        better, worse: the two schedulers.

    Returns:
        Per combination of ``factors``, three rows, ``loops`` "both loops", "aborts off" and
        "difference" (both loops minus aborts off, in percentage points, paired by seed): per
        metric the mean, its 95 % half-width (``_ci95``) and ``n``.
    """
    keys = [*factors, "loops"]
    pairs: dict[tuple[Any, ...], dict[str, dict[str, Any]]] = {}
    for row in runs:
        pairs.setdefault((*(row[k] for k in keys), row["seed"]), {})[row["scheduler"]] = row
    gains = []
    for key, pair in pairs.items():
        if better in pair and worse in pair:
            gain: dict[str, Any] = {**dict(zip([*keys, "seed"], key, strict=True))}
            for m in metrics:
                base = float(pair[worse][m])
                gain[m] = 100 * (float(pair[better][m]) / base - 1) if base else float("nan")
            gains.append(gain)
    columns = [*keys, "n", *metrics, *(f"{m}_ci95" for m in metrics)]
    out = [{k: row[k] for k in columns} for row in summarize_runs(gains, keys, metrics)]
    for row in paired_differences(gains, keys, "loops", "aborts off", metrics):
        entry = {**{k: row[k] for k in factors}, "loops": "difference", "n": row["n"]}
        for m in metrics:
            entry[m], entry[f"{m}_ci95"] = row[f"{m}_diff"], row[f"{m}_diff_ci95"]
        out.append(entry)
    return out


class Timer:
    """Wall time of a scenario, for its report."""

    def __init__(self) -> None:
        self.start = time.perf_counter()

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.start
