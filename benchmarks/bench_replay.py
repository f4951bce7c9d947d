"""Benchmark: trace replay speed, in process and as whole commands (not part of the test run).

    python benchmarks/bench_replay.py [--trace PATH] [--repeat 5] [--ricc PATH] [--skip-commands]

1. SimPy's own ceiling on this machine: the time of three bare timeouts per job, scheduled as
   a replay schedules them (one per arrival instant, one per job end, one per pass), in this
   process; the plain chain of the same number of timeouts (a process yielding them); and the
   same timeouts all scheduled before the run (a heap of every event, slower per event);
   each run timed under the garbage-collector settings of a site's run.
2. In-process replay of SDSC-SP2 (reading excluded) under FCFS, EASY and conservative with
   exact and trace estimates: jobs/s and the ratio to the ceiling.
3. Whole commands (``sitesim replay``, a fresh process each, median of ``--repeat`` runs):
   SDSC-SP2 with exact estimates, the Lublin trace, ``sitesim --help`` and a 300-line trace.
4. With ``--ricc``: RICC-2010 (447,794 jobs, 8,192 processors) under EASY, exact estimates, as
   a whole command: time and peak memory.

Targets (issue 12): EASY >= 100,000 jobs/s in process with exact estimates (>= 80,000 with
trace estimates), FCFS >= 130,000, within 2.5x the ceiling; whole commands SDSC-SP2 EASY <= 1 s,
FCFS <= 0.8 s, conservative <= 2 s, Lublin FCFS <= 0.4 s, --help and a small replay <= 0.3 s;
RICC under EASY <= 15 s and <= 400 MB.
"""

from __future__ import annotations

import argparse
import gzip
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import simpy

from sitesim.engine.collector import fewer_collections
from sitesim.models.trace_user import TraceWorkload
from sitesim.runs.replay import replay
from sitesim.workload.swf import read_swf

TRACES = Path(__file__).resolve().parents[2] / "shared/traces"
SDSC_SP2 = TRACES / "SDSC-SP2-1998-4.2-cln.swf.gz"
LUBLIN = TRACES / "synthetic/lublin_256.swf.gz"
RICC = Path("/work/traces-extra/RICC-2010-2.swf.gz")
IN_PROCESS_TARGETS = {("FCFS", "exact"): 130_000, ("EASY", "exact"): 100_000,
                      ("EASY", "trace"): 80_000}  # fmt: skip


def best_of(repeat: int, fn: Callable[[], object]) -> tuple[float, object]:
    """The shortest CPU time of ``repeat`` calls (CPU time: other processes on the machine
    disturb it least) and the last value."""
    best, value = float("inf"), None
    for _ in range(repeat):
        start = time.process_time()
        value = fn()
        best = min(best, time.process_time() - start)
    return best, value


def timed_run(env: simpy.Environment) -> float:
    """The CPU time of ``env.run()``, under the garbage-collector settings of a site's run
    (:mod:`sitesim.engine.collector`), so that the ceiling and the replays are timed alike."""
    with fewer_collections():
        start = time.process_time()
        env.run()
        return time.process_time() - start


def ceiling_shaped(workload: TraceWorkload) -> float:
    """Three bare timeouts per job, as a replay schedules them: a chain of arrival timeouts,
    and for each job one timeout to its end and one zero-delay timeout (its pass)."""
    env = simpy.Environment()
    submits, runtimes = workload.submit.tolist(), workload.runtime.tolist()

    def arrivals(env: simpy.Environment):  # type: ignore[no-untyped-def]
        timeout = env.timeout
        for submit, runtime in zip(submits, runtimes, strict=True):
            if submit > env.now:
                yield timeout(submit - env.now)
            else:
                timeout(0)  # (an arrival at the same instant: still one timeout)
            timeout(runtime)
            timeout(0)

    env.process(arrivals(env))
    return timed_run(env)


def ceiling_scheduled(workload: TraceWorkload) -> float:
    """Three bare timeouts per job, all scheduled before the run (at the job's submit time,
    end and submit time again): one heap of every event, not the replay's short one."""
    env = simpy.Environment()
    for submit, runtime in zip(workload.submit.tolist(), workload.runtime.tolist(), strict=True):
        env.timeout(submit)
        env.timeout(submit + runtime)
        env.timeout(submit)
    return timed_run(env)


def ceiling_chain(n: int) -> float:
    """``n`` bare timeouts yielded one after another by one process (the lightest case)."""
    env = simpy.Environment()

    def chain(env: simpy.Environment):  # type: ignore[no-untyped-def]
        for _ in range(n):
            yield env.timeout(1)

    env.process(chain(env))
    return timed_run(env)


def command(args: list[str], repeat: int) -> tuple[float, float, int]:
    """Median and best wall time of a whole command over ``repeat`` runs, and its peak memory
    (KiB, from ``/usr/bin/time`` when present)."""
    times, peak = [], 0
    timer = ["/usr/bin/time", "-f", "%M"] if Path("/usr/bin/time").exists() else []
    # Python's default: compiled modules cached (some sandboxes turn that off globally)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run([*timer, *args], capture_output=True, text=True, check=True, env=env)
        times.append(time.perf_counter() - start)
        if timer:
            peak = max(peak, int(done.stderr.strip().splitlines()[-1]))
    return statistics.median(times), min(times), peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, default=SDSC_SP2)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--ricc", type=Path, default=RICC, help="RICC-2010 SWF (skipped if absent)")
    parser.add_argument("--skip-commands", action="store_true", help="in-process part only")
    args = parser.parse_args()
    if not args.trace.exists():
        sys.exit(f"{args.trace} not found: this benchmark needs ../shared/traces")
    print(f"{platform.python_implementation()} {platform.python_version()}, {platform.machine()}, "
          f"{os.cpu_count()} cores; CPU time, best of {args.repeat}")  # fmt: skip

    read_s, trace = best_of(args.repeat, lambda: read_swf(args.trace))
    workload = TraceWorkload.from_swf(trace, 128, estimates="exact")  # type: ignore[arg-type]
    jobs = len(workload)
    # (each ceiling times its own run only: the events are made inside it)
    shaped = min(ceiling_shaped(workload) for _ in range(args.repeat))
    chain = min(ceiling_chain(3 * jobs) for _ in range(args.repeat))
    scheduled = min(ceiling_scheduled(workload) for _ in range(args.repeat))
    print(f"read {args.trace.name}: {read_s:.3f} s; {jobs:,} jobs")
    print(
        f"SimPy ceiling, 3 bare timeouts a job: {shaped:.3f} s ({jobs / shaped:,.0f} jobs/s) "
        f"shaped as the replay, {chain:.3f} s ({jobs / chain:,.0f} jobs/s) as one chain, "
        f"{scheduled:.3f} s ({jobs / scheduled:,.0f} jobs/s) all scheduled before the run "
        "(the x columns: against the first and the last)"
    )
    print(f"{'scheduler':13s} {'estimates':9s} {'replay s':>9s} {'jobs/s':>9s} "
          f"{'x shaped':>9s} {'x sched.':>9s}  target")  # fmt: skip
    for name in ("FCFS", "EASY", "CONSERVATIVE"):
        for estimates in ("exact", "trace"):
            seconds, _ = best_of(
                args.repeat,
                lambda n=name, e=estimates: replay(trace, n, estimates=e),  # type: ignore[misc]
            )
            rate = jobs / seconds
            target = IN_PROCESS_TARGETS.get((name, estimates))
            verdict = (
                "" if target is None else f">= {target:,} {'ok' if rate >= target else 'MISSED'}"
            )
            print(f"{name:13s} {estimates:9s} {seconds:9.3f} {rate:9,.0f} {seconds / shaped:9.2f} "
                  f"{seconds / scheduled:9.2f}  {verdict}")  # fmt: skip
    if args.skip_commands:
        return

    installed = shutil.which("sitesim")
    sitesim = [installed] if installed else [sys.executable, "-m", "sitesim.cli"]
    with tempfile.TemporaryDirectory() as scratch:
        small = Path(scratch) / "small.swf"
        with gzip.open(args.trace, "rt") as fh:
            small.write_text("".join(line for _, line in zip(range(330), fh, strict=False)))
        cases = [
            ("sitesim --help", [*sitesim, "--help"], 0.3),
            ("replay 300-line trace, EASY", [*sitesim, "replay", str(small)], 0.3),
            ("Lublin FCFS exact", [*sitesim, "replay", str(LUBLIN), "-s", "FCFS",
                                   "--estimates", "exact"], 0.4),
            *((f"SDSC-SP2 {name} exact", [*sitesim, "replay", str(args.trace), "-s", name,
                                          "--estimates", "exact"], target)
              for name, target in (("FCFS", 0.8), ("EASY", 1.0), ("CONSERVATIVE", 2.0))),
        ]  # fmt: skip
        if args.ricc.exists():
            cases.append(("RICC-2010 EASY exact, 8192 procs", [*sitesim, "replay", str(args.ricc),
                          "--procs", "8192", "--estimates", "exact"], 15.0))  # fmt: skip
        else:
            print(f"{args.ricc} not found: the RICC case is skipped (see docs/performance.md)")
        print(f"\nwhole commands, wall time over {args.repeat} runs")
        print(f"{'command':36s} {'median s':>9s} {'best s':>7s} {'peak MB':>8s}  target")
        for label, argv, target in cases:
            repeat = 1 if "RICC" in label else args.repeat
            median, best, peak = command(argv, repeat)
            verdict = f"<= {target:g} s {'ok' if median <= target else 'MISSED'}"
            print(f"{label:36s} {median:9.3f} {best:7.3f} {peak / 1024:8.0f}  {verdict}")


if __name__ == "__main__":
    main()
