"""What the scheduler benchmarks share: time a kernel N times, then replay a real trace."""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from sitesim.engine.site import SiteResult
from sitesim.runs.config import RunConfig
from sitesim.runs.runner import run


def kernel_then_replay(
    doc: str,
    kernel: Callable[[int], None],
    count: tuple[str, int],
    replay: Callable[[Path], None],
    trace: Path,
) -> None:
    """Parse ``--<count name> N``, ``--trace PATH`` and ``--skip-replay``; run ``kernel(N)``,
    then ``replay(trace)`` unless skipped or the trace is absent (said so)."""
    name, default = count
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument(f"--{name}", type=int, default=default)
    parser.add_argument("--trace", type=Path, default=trace)
    parser.add_argument("--skip-replay", action="store_true")
    args = parser.parse_args()
    kernel(getattr(args, name))
    if args.skip_replay:
        return
    if args.trace.exists():
        replay(args.trace)
    else:
        print(f"{args.trace} not found: the replay is skipped")


def time_calls(
    calls: Iterable[tuple[Callable[..., object], tuple[Any, ...]]],
) -> tuple[float, float]:
    """The median and the slowest time, in ms, of the calls ``function(*args)``; each is timed
    alone (``calls`` may build the next one, untimed, while it is asked for it)."""
    times = []
    for function, args in calls:
        start = time.perf_counter()
        function(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3, max(times) * 1e3


def report_replays(
    runs: Iterable[tuple[str, RunConfig]],
    where: str,
    measure: Callable[[SiteResult], str],
    target: tuple[str, float],
    counters: Callable[[dict[str, Any]], str],
) -> None:
    """Run each named configuration, timed (the trace's reading included), and print a line:
    name, seconds, jobs and ``measure(result)``. The runs of the scheduler ``target[0]`` are
    held against ``target[1]`` seconds, with ``counters(result.scheduler_stats)``."""
    tested, limit = target
    for name, config in runs:
        start = time.perf_counter()
        result = run(config)
        seconds = time.perf_counter() - start
        note = ""
        if config.scheduler == tested:
            note = f" ({verdict(seconds, limit, 's')}; {counters(result.scheduler_stats)})"
        print(f"{name} replay of {where}: {seconds:.1f} s (reading included), "
              f"{result.summary.jobs:,} jobs, {measure(result)}{note}")  # fmt: skip


def verdict(value: float, limit: float, unit: str) -> str:
    """``target <= 1 ms: ok``, or ``MISSED``."""
    return f"target <= {limit:g} {unit}: {'ok' if value <= limit else 'MISSED'}"
