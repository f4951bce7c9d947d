"""Benchmark: replay speed against machine size, queue length and trace length, with figures.

    python benchmarks/bench_scaling.py [--quick] [--out DIR] [--schedulers FCFS,EASY]
        [--conservative] [--repeat 3] [--budget 120] [--trace PATH] [--ricc PATH]
        [--parts machine,queue,trace] [--plot-only]

Speed is in-process replay speed in jobs/s: the CPU time of ``replay()`` on a trace already
read (best of ``--repeat`` runs; fewer runs when a point nears ``--budget`` seconds of wall
time).

1. Machine size: SDSC-SP2 (128 processors, exact estimates) on M = 128·k processors with the
   inter-arrival times divided by k: the same offered load, k times as many running jobs.
2. Queue length: SDSC-SP2 on 128 processors at offered loads 0.5 to 1.5; the mean queue length
   by Little's law (sum of waits / span; the span runs from the first submission to the last
   end).
3. Trace length: the first n jobs of RICC-2010 on 8,192 processors, exact estimates. Each point
   runs in a fresh subprocess that reads its excerpt and replays it, so its peak RSS is that of
   one point (read and replay): VmHWM from /proc/self/status.

A point over the budget stops its run (SIGALRM) and skips the larger points of its series.
Writes ``scaling.csv``, ``scaling-machine.png``, ``scaling-queue.png`` and
``scaling-trace.png`` into ``--out``; ``--plot-only`` redraws the figures from its CSV.
``--quick``: a few points on small excerpts, one run each (< 30 s).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import math
import os
import platform
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from sitesim.runs.replay import replay
from sitesim.workload.swf import SWFTrace, read_swf, write_swf

HERE = Path(__file__).resolve()
DEFAULT_TRACE = HERE.parents[2] / "shared/traces/SDSC-SP2-1998-4.2-cln.swf.gz"
DEFAULT_RICC = Path("/work/traces-extra/RICC-2010-2.swf.gz")
DEFAULT_OUT = HERE.parent / "out/scaling"
BASE_PROCS = 128  # SDSC-SP2
RICC_PROCS = 8192


@dataclasses.dataclass(frozen=True)
class Plan:
    """The points of each part."""

    excerpt: int | None  # SDSC-SP2 jobs used (None: all)
    machine_k: tuple[int, ...]
    loads: tuple[float, ...]
    lengths: tuple[int, ...]


FULL = Plan(
    excerpt=None,
    machine_k=tuple(2**i for i in range(10)),  # 128 ... 65,536 processors
    loads=(0.5, 0.7, 0.9, 1.0, 1.2, 1.5),
    lengths=(10_000, 25_000, 50_000, 100_000, 200_000, 450_000),
)
QUICK = Plan(excerpt=5_000, machine_k=(1, 8, 64), loads=(0.7, 1.0, 1.5), lengths=(2_000, 5_000))


@dataclasses.dataclass
class Point:
    """One measured point (a row of scaling.csv). Times in s, memory in MB."""

    part: str
    scheduler: str
    procs: int
    lines: int = 0  # job lines of the trace replayed
    scale: float = math.nan
    load: float = math.nan
    jobs: int = 0
    runs: int = 0
    best_s: float = math.nan
    median_s: float = math.nan
    jobs_per_s: float = math.nan
    passes: int = 0
    wait_mean_min: float = math.nan
    mean_running: float = math.nan
    mean_queue: float = math.nan
    read_s: float = math.nan
    base_mb: float = math.nan
    peak_mb: float = math.nan
    status: str = "ok"


# -- timing -------------------------------------------------------------------------------------
class OverBudget(Exception):
    """A run went over its time budget."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`OverBudget` in the block after ``seconds`` of wall time."""

    def expire(_signum: int, _frame: object) -> None:
        raise OverBudget

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def timed_runs(fn: Callable[[], object], repeat: int, budget: float) -> tuple[list[float], object]:
    """Run ``fn`` up to ``repeat`` times, the first within ``budget`` s, the others only while
    they fit in it too: the seconds of each run and the last value.

    Raises:
        OverBudget: the first run did not end within the budget.
    """
    seconds: list[float] = []
    value: object = None
    while len(seconds) < repeat and (not seconds or sum(seconds) + seconds[-1] <= budget):
        value = None  # the last run's result is freed before the next one (peak memory)
        start = time.process_time()  # CPU time: other processes disturb it least
        with time_limit(budget):
            value = fn()
        seconds.append(time.process_time() - start)
    return seconds, value


def measure(point: Point, fn: Callable[[], object], repeat: int, budget: float) -> Point:
    """``point`` with the speed and the metrics of ``fn``'s replay (or its over-budget status)."""
    try:
        seconds, result = timed_runs(fn, repeat, budget)
    except OverBudget:
        return dataclasses.replace(point, status=f"over budget ({budget:g} s)")
    return dataclasses.replace(point, **speed(seconds, result), **metrics(result))


def speed(seconds: list[float], result: object) -> dict[str, float]:
    jobs = len(result.records)  # type: ignore[attr-defined]
    best = min(seconds)
    return {
        "jobs": jobs,
        "runs": len(seconds),
        "best_s": best,
        "median_s": statistics.median(seconds),
        "jobs_per_s": jobs / best,
    }


def metrics(result: object) -> dict[str, float]:
    """Passes, mean wait, and the mean numbers of running and waiting jobs over the span from
    the first submission to the last end (sum of runtimes or waits / span, Little's law)."""
    records = result.records  # type: ignore[attr-defined]
    span = float(records["end"].max() - records["submit"].min())
    return {
        "passes": int(result.scheduler_stats["passes"]),  # type: ignore[attr-defined]
        "wait_mean_min": float(records["wait"].mean() / 60.0),
        "mean_running": float(np.nansum(records["runtime"]) / span),
        "mean_queue": float(records["wait"].sum() / span),
    }


# -- parts 1 and 2: in process --------------------------------------------------------------
def machine_points(
    trace: SWFTrace, schedulers: list[str], plan: Plan, repeat: int, budget: float
) -> list[Point]:
    """SDSC-SP2 on 128·k processors with inter-arrival times divided by k."""
    points = []
    for name in schedulers:
        over = False
        for k in plan.machine_k:
            point = Point("machine", name, BASE_PROCS * k, len(trace), scale=1.0 / k)
            if over:
                points.append(dataclasses.replace(point, status="skipped (smaller over budget)"))
                continue

            def run(k: int = k, name: str = name) -> object:
                return replay(trace, name, procs=BASE_PROCS * k, scale=1.0 / k, estimates="exact")

            points.append(point := measure(point, run, repeat, budget))
            over = point.status != "ok"
            report(point)
    return points


def queue_points(
    trace: SWFTrace, schedulers: list[str], plan: Plan, repeat: int, budget: float
) -> list[Point]:
    """SDSC-SP2 on 128 processors at each offered load."""
    points = []
    for name in schedulers:
        for load in plan.loads:

            def run(load: float = load, name: str = name) -> object:
                return replay(trace, name, procs=BASE_PROCS, load=load, estimates="exact")

            points.append(
                point := measure(
                    Point("queue", name, BASE_PROCS, len(trace), load=load), run, repeat, budget
                )
            )
            report(point)
    return points


# -- part 3: one subprocess a point -------------------------------------------------------------
def trace_points(
    ricc: Path, schedulers: list[str], plan: Plan, repeat: int, budget: float
) -> list[Point]:
    """The first n jobs of RICC-2010, each point read and replayed in a fresh subprocess."""
    full = read_swf(ricc)
    points = []
    with tempfile.TemporaryDirectory(prefix="bench-scaling-") as folder:
        for name in schedulers:
            over = False
            for wanted in plan.lengths:
                n = min(wanted, len(full))
                point = Point("trace", name, RICC_PROCS, lines=n)
                if over:
                    points.append(
                        dataclasses.replace(point, status="skipped (shorter over budget)")
                    )
                    continue
                path = excerpt_file(full, n, ricc, Path(folder))
                points.append(point := child_point(point, path, repeat, budget))
                over = point.status != "ok"
                report(point)
    return points


def excerpt_file(full: SWFTrace, n: int, source: Path, folder: Path) -> Path:
    """The first ``n`` job lines of ``full`` as an SWF file (``source`` itself for all)."""
    if n == len(full):
        return source
    path = folder / f"first-{n}.swf"
    if not path.exists():
        part = full.excerpt(0, n)
        write_swf(path, part.data, part.header)
    return path


def child_point(point: Point, path: Path, repeat: int, budget: float) -> Point:
    options = f"--child-scheduler {point.scheduler} --repeat {repeat} --budget {budget}"
    command = [sys.executable, str(HERE), "--child", str(path), *options.split()]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, check=True, timeout=budget * 2 + 60
        )
    except subprocess.TimeoutExpired:
        return dataclasses.replace(point, status="over budget (killed)")
    except subprocess.CalledProcessError as error:
        return dataclasses.replace(point, status=f"failed: {error.stderr.strip()[-200:]}")
    return dataclasses.replace(point, **json.loads(done.stdout.strip().splitlines()[-1]))


def child(path: Path, scheduler: str, repeat: int, budget: float) -> None:
    """In the subprocess: read ``path``, replay it, print the point's fields as JSON."""
    base_mb = peak_rss_mb()
    start = time.perf_counter()
    trace = read_swf(path)
    read_s = time.perf_counter() - start
    fields: dict[str, object] = {"read_s": read_s, "base_mb": base_mb}

    def run() -> object:
        return replay(trace, scheduler, procs=RICC_PROCS, estimates="exact")

    try:
        seconds, result = timed_runs(run, repeat, budget)
        fields |= speed(seconds, result) | metrics(result)
    except OverBudget:
        fields["status"] = f"over budget ({budget:g} s)"
    fields["peak_mb"] = peak_rss_mb()
    print(json.dumps(fields))


def peak_rss_mb() -> float:
    """This process's peak RSS: VmHWM, the high-water mark of its own address space.
    (ru_maxrss would not do: Linux carries the parent's peak over fork and exec.)"""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


# -- output -------------------------------------------------------------------------------------
COLUMNS = {
    "machine": ("procs", "runs", "best_s", "jobs_per_s", "passes", "wait_mean_min", "mean_running"),
    "queue": ("load", "runs", "best_s", "jobs_per_s", "passes", "wait_mean_min", "mean_queue"),
    "trace": (
        "lines",
        "jobs",
        "runs",
        "read_s",
        "best_s",
        "jobs_per_s",
        "passes",
        "base_mb",
        "peak_mb",
    ),
}


def cell(value: object) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def report(point: Point) -> None:
    """One line per point as it is measured (progress on stderr)."""
    fields = " ".join(f"{name}={cell(getattr(point, name))}" for name in COLUMNS[point.part])
    print(f"  [{point.part}] {point.scheduler} {fields} {point.status}", file=sys.stderr)


def print_table(part: str, points: list[Point]) -> None:
    rows = [p for p in points if p.part == part]
    if not rows:
        return
    names = ("scheduler", *COLUMNS[part], "status")
    cells = [[cell(getattr(p, name)) for name in names] for p in rows]
    widths = [max(len(name), *(len(row[k]) for row in cells)) for k, name in enumerate(names)]
    print(f"\n{part}:")
    print("  ".join(name.rjust(w) for name, w in zip(names, widths, strict=True)))
    for row in cells:
        print("  ".join(text.rjust(w) for text, w in zip(row, widths, strict=True)))


def write_csv(path: Path, points: list[Point]) -> None:
    with path.open("w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=[f.name for f in dataclasses.fields(Point)])
        writer.writeheader()
        writer.writerows(dataclasses.asdict(p) for p in points)


def read_csv(path: Path) -> list[Point]:
    """The points of a scaling.csv (to redraw its figures)."""
    types = {"int": int, "float": float, "str": str}
    casts = {f.name: types[str(f.type)] for f in dataclasses.fields(Point)}
    with path.open(newline="") as file:
        return [
            Point(**{name: casts[name](value) for name, value in row.items()})  # type: ignore[arg-type]
            for row in csv.DictReader(file)
        ]


def pyplot():  # type: ignore[no-untyped-def]
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def series(points: list[Point], part: str) -> dict[str, list[Point]]:
    """The measured points of ``part`` by scheduler."""
    out: dict[str, list[Point]] = {}
    for p in points:
        if p.part == part and p.status == "ok":
            out.setdefault(p.scheduler, []).append(p)
    return out


def speed_and(
    points: list[Point], part: str, x: str, other: str, suffix: str = ""
) -> tuple[Any, Any, Any]:
    """A figure of two panels against the points' ``x``, one line per scheduler: jobs/s on the
    left, the points' ``other`` on the right (labelled with ``suffix``)."""
    fig, (left, right) = pyplot().subplots(1, 2, figsize=(11, 4.2))
    for name, rows in series(points, part).items():
        xs = [getattr(p, x) for p in rows]
        left.plot(xs, [p.jobs_per_s for p in rows], "o-", label=name)
        right.plot(xs, [getattr(p, other) for p in rows], "o-", label=name + suffix)
    return fig, left, right


def speed_axis(ax, xlabel: str, title: str) -> None:  # type: ignore[no-untyped-def]
    """Jobs/s from 0 against a logarithmic x axis (every figure's speed panel)."""
    ax.set(xscale="log", ylim=(0, None), xlabel=xlabel, ylabel="jobs/s", title=title)


def plot_machine(points: list[Point], info: str, path: Path) -> None:
    fig, left, right = speed_and(points, "machine", "procs", "mean_running")
    speed_axis(left, "processors (load kept)", "replay speed against machine size")
    right.set(
        xscale="log",
        yscale="log",
        xlabel="processors",
        ylabel="mean running jobs",
        title="concurrency",
    )
    finish(fig, [left, right], info, path)


def plot_queue(points: list[Point], info: str, path: Path) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for name, rows in series(points, "queue").items():
        ax.plot([p.mean_queue for p in rows], [p.jobs_per_s for p in rows], "o-", label=name)
        for p in rows:
            ax.annotate(
                f"{p.load:g}",
                (p.mean_queue, p.jobs_per_s),
                fontsize=7,
                textcoords="offset points",
                xytext=(3, 3),
            )
    speed_axis(
        ax,
        "mean queue length (jobs; labels: offered load)",
        f"replay speed against queue length, {BASE_PROCS} processors",
    )
    finish(fig, [ax], info, path)


def plot_trace(points: list[Point], info: str, path: Path) -> None:
    fig, left, right = speed_and(points, "trace", "lines", "peak_mb", " peak")
    base = [p.base_mb for rows in series(points, "trace").values() for p in rows]
    if base:
        right.axhline(min(base), color="grey", ls=":", label="after imports")
    speed_axis(
        left,
        "jobs (first n of RICC-2010)",
        f"replay speed against trace length, {RICC_PROCS} procs",
    )
    right.set(
        xlim=(0, None),
        ylim=(0, None),
        xlabel="jobs",
        ylabel="peak RSS (MB)",
        title="peak memory, read + replay (one process a point)",
    )
    finish(fig, [left, right], info, path)


def finish(fig, axes, info: str, path: Path) -> None:  # type: ignore[no-untyped-def]
    for ax in axes:
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(info, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    pyplot().close(fig)


def draw(points: list[Point], info: str, out: Path) -> None:
    """The figure of each part measured."""
    figures = {"machine": plot_machine, "queue": plot_queue, "trace": plot_trace}
    for part, plot in figures.items():
        if any(p.part == part for p in points):
            plot(points, info, out / f"scaling-{part}.png")


def machine_info() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{platform.python_implementation()} {platform.python_version()}, {cpu}, "
        f"{os.cpu_count()} cores, {platform.system()} {platform.machine()}"
    )


# -- main ---------------------------------------------------------------------------------------
def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few small points (< 30 s)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--schedulers", default="FCFS,EASY")
    parser.add_argument("--conservative", action="store_true", help="add CONSERVATIVE")
    parser.add_argument("--repeat", type=int, default=None, help="runs a point (3; quick 1)")
    parser.add_argument("--budget", type=float, default=120.0, help="seconds a point at most")
    parser.add_argument("--trace", type=Path, default=DEFAULT_TRACE)
    parser.add_argument("--ricc", type=Path, default=DEFAULT_RICC)
    parser.add_argument("--parts", default="machine,queue,trace")
    parser.add_argument(
        "--plot-only", action="store_true", help="redraw the figures of --out/scaling.csv"
    )
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--child-scheduler", help=argparse.SUPPRESS)
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    repeat = args.repeat or (1 if args.quick else 3)
    if args.child:
        child(args.child, args.child_scheduler, repeat, args.budget)
        return
    if args.plot_only:
        draw(read_csv(args.out / "scaling.csv"), machine_info(), args.out)
        return
    plan = QUICK if args.quick else FULL
    schedulers = args.schedulers.split(",") + (["CONSERVATIVE"] if args.conservative else [])
    parts = args.parts.split(",")
    info = machine_info()
    print(info)
    print(f"each point: the best of {repeat} run(s), fewer near the {args.budget:g} s budget")
    trace = read_swf(args.trace)
    if plan.excerpt is not None:
        trace = trace.excerpt(0, min(plan.excerpt, len(trace)))
    print(f"{args.trace.name}: {len(trace):,} job lines; {BASE_PROCS} processors, exact estimates")

    points: list[Point] = []
    if "machine" in parts:
        points += machine_points(trace, schedulers, plan, repeat, args.budget)
    if "queue" in parts:
        points += queue_points(trace, schedulers, plan, repeat, args.budget)
    if "trace" in parts:
        if args.ricc.exists():
            points += trace_points(args.ricc, schedulers, plan, repeat, args.budget)
        else:
            print(f"{args.ricc} not found: the trace-length part is skipped (give --ricc PATH)")

    for part in COLUMNS:
        print_table(part, points)
    args.out.mkdir(parents=True, exist_ok=True)
    write_csv(args.out / "scaling.csv", points)
    draw(points, info, args.out)
    print(f"\nwrote {args.out}/scaling.csv and its figures")


if __name__ == "__main__":
    main()
