"""Benchmark: self-tuning dynP, one step and a whole replay (issue 11).

    python benchmarks/bench_dynp.py [--steps N] [--trace PATH] [--skip-replay]

1. One self-tuning step (plan under FCFS, SJF and LJF, score with SLDwA, decide) over 25
   waiting jobs on a 128-processor machine with 10 running jobs: the median and the slowest
   of ``--steps`` steps. Target: <= 1 ms.
2. The dynP replay of SDSC-SP2 (trace estimates; SLDwA, advanced decider, half and full
   self-tuning), with planning-based FCFS on the same jobs for scale. Target: <= 60 s.
"""

from __future__ import annotations

import math
import statistics
import time
from pathlib import Path

import numpy as np
from harness import kernel_then_replay

from sitesim.config import ReplayConfig
from sitesim.job import Job
from sitesim.runner import run
from sitesim.schedulers import DynP

DEFAULT = Path(__file__).resolve().parents[2] / "shared/traces/SDSC-SP2-1998-4.2-cln.swf.gz"


def one_step(steps: int) -> None:
    rng = np.random.default_rng(1)
    times = []
    for _ in range(steps):
        policy = DynP()
        for k in range(25):
            job = Job(size=int(rng.integers(1, 64)), runtime=math.nan,
                      estimate=float(rng.integers(60, 36_000)), id=k + 1)  # fmt: skip
            job.mark_submitted(float(k))
            policy.submit(job, float(k))
        running = sorted(
            (float(rng.uniform(100, 36_000)), 1000 + i, int(rng.integers(1, 12))) for i in range(10)
        )
        free = 128 - sum(size for _, _, size in running)
        start = time.perf_counter()
        policy.step(30.0, free, running)
        times.append(time.perf_counter() - start)
    median, worst = statistics.median(times) * 1e3, max(times) * 1e3
    print(f"one dynP self-tuning step, 25 waiting jobs: median {median:.3f} ms, slowest "
          f"{worst:.3f} ms over {steps} steps (target <= 1 ms: "
          f"{'ok' if median <= 1 else 'MISSED'})")  # fmt: skip


def replay(trace: Path) -> None:
    base = ReplayConfig(trace=str(trace))
    for scheduler, params in (("PLAN", {}), ("DYNP", {"tuning": "half"}),
                              ("DYNP", {"tuning": "full"})):  # fmt: skip
        config = base.replace(scheduler=scheduler, **params)
        start = time.perf_counter()
        result = run(config)
        seconds = time.perf_counter() - start
        stats = result.scheduler_stats
        detail = (f"; {stats['self_tuning_steps']:,} steps, {stats['policy_switches']:,} "
                  f"switches (target <= 60 s: {'ok' if seconds <= 60 else 'MISSED'})"
                  if scheduler == "DYNP" else "")  # fmt: skip
        print(f"{config.label} replay of {trace.name}: {seconds:.1f} s (reading included), "
              f"{result.summary.jobs:,} jobs, SLDwA {result.summary.slowdown_area_weighted:.2f}"
              f"{detail}")  # fmt: skip


def main() -> None:
    kernel_then_replay(__doc__, one_step, ("steps", 200), replay, DEFAULT)


if __name__ == "__main__":
    main()
