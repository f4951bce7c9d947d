"""Benchmark: open replay of the full SDSC-SP2 trace (not part of the default test run).

    python benchmarks/bench_replay.py [--trace PATH] [--repeat 3] [--schedulers FCFS,EASY,...]

Targets on a 2-core machine (issue 2): EASY <= 3 s (>= 20,000 jobs/s), FCFS <= 2 s,
conservative <= 10 s, each for reading the trace *and* replaying it with trace estimates on
128 processors. Prints the best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

from sitesim.schedulers import create
from sitesim.swf import read_swf
from sitesim.trace_replay import replay

DEFAULT_TRACE = Path(__file__).resolve().parents[2] / "shared/traces/SDSC-SP2-1998-4.2-cln.swf.gz"
TARGETS = {"FCFS": 2.0, "EASY": 3.0, "CONSERVATIVE": 10.0}


def best_of(repeat: int, fn) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    best, value = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    return best, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, default=DEFAULT_TRACE)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--schedulers", default="FCFS,EASY,CONSERVATIVE,CREASY")
    args = parser.parse_args()

    read_s, trace = best_of(args.repeat, lambda: read_swf(args.trace))
    print(f"{platform.python_implementation()} {platform.python_version()}, {platform.machine()}")
    print(f"read {args.trace.name}: {read_s:.2f} s ({len(trace):,} lines)")  # type: ignore[arg-type]
    print(f"{'scheduler':13s} {'replay s':>9s} {'read+replay s':>14s} {'jobs/s':>9s}  target")
    for name in args.schedulers.split(","):
        seconds, result = best_of(args.repeat, lambda n=name: replay(trace, create(n)))  # type: ignore[arg-type,misc]
        jobs = result.summary.jobs  # type: ignore[attr-defined]
        total = read_s + seconds
        target = TARGETS.get(name)
        verdict = (
            "" if target is None else f"<= {target:g} s {'ok' if total <= target else 'MISSED'}"
        )
        print(f"{name:13s} {seconds:9.2f} {total:14.2f} {jobs / total:9,.0f}  {verdict}")


if __name__ == "__main__":
    main()
