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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from harness import kernel_then_replay, report_replays, time_calls, verdict

from sitesim.engine.job import Job
from sitesim.runs.config import ReplayConfig
from sitesim.schedulers import DynP

DEFAULT = Path(__file__).resolve().parents[2] / "shared/traces/SDSC-SP2-1998-4.2-cln.swf.gz"


def one_step(steps: int) -> None:
    rng = np.random.default_rng(1)

    def calls() -> Iterator[tuple[Callable[..., object], tuple[Any, ...]]]:
        for _ in range(steps):
            policy = DynP()
            for k in range(25):
                job = Job(size=int(rng.integers(1, 64)), runtime=math.nan,
                          estimate=float(rng.integers(60, 36_000)), id=k + 1)  # fmt: skip
                job.mark_submitted(float(k))
                policy.submit(job, float(k))
            running = sorted(
                (float(rng.uniform(100, 36_000)), 1000 + i, int(rng.integers(1, 12)))
                for i in range(10)
            )
            free = 128 - sum(size for _, _, size in running)
            yield policy.step, (30.0, free, running)

    median, worst = time_calls(calls())
    print(f"one dynP self-tuning step, 25 waiting jobs: median {median:.3f} ms, slowest "
          f"{worst:.3f} ms over {steps} steps ({verdict(median, 1, 'ms')})")  # fmt: skip


def replay(trace: Path) -> None:
    base = ReplayConfig(trace=str(trace))
    configs = (base.replace(scheduler="PLAN"), base.replace(scheduler="DYNP", tuning="half"),
               base.replace(scheduler="DYNP", tuning="full"))  # fmt: skip
    report_replays(
        [(config.label, config) for config in configs],
        trace.name,
        lambda result: f"SLDwA {result.summary.slowdown_area_weighted:.2f}",
        ("DYNP", 60),
        lambda stats: (
            f"{stats['self_tuning_steps']:,} steps, {stats['policy_switches']:,} switches"
        ),
    )


def main() -> None:
    kernel_then_replay(__doc__, one_step, ("steps", 200), replay, DEFAULT)


if __name__ == "__main__":
    main()
