"""Benchmark: the GA scheduler, one pass and a whole replay (issue 10).

    python benchmarks/bench_utility.py [--passes N] [--trace PATH] [--skip-replay]

1. One GA pass (population 20, 100 generations) over a queue of 100 waiting jobs with Lee &
   Snavely utility functions, on a 1152-processor machine half busy: the median and the
   slowest of ``--passes`` passes. Target: <= 100 ms.
2. The GA replay of the 5,000-job SDSC-BLUE excerpt (job lines 5,000 to 9,999, Lee & Snavely
   functions of seed 1), with EASY on the same jobs for scale. Target: <= 5 minutes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from harness import kernel_then_replay, report_replays, time_calls, verdict

from sitesim.engine.job import Job, JobState
from sitesim.models.utility import LeeSnavely
from sitesim.runs.config import ReplayConfig
from sitesim.schedulers.genetic import GA

DEFAULT = Path(__file__).resolve().parents[2] / "shared/traces/SDSC-BLUE-2000-4.2-cln.swf.gz"
PROCS = 1152


def queue_of(n: int, rng: np.random.Generator) -> list[Job]:
    """``n`` waiting jobs submitted over the last day, each with a utility function."""
    maker = LeeSnavely()
    jobs = []
    for k in range(n):
        size = int(rng.choice([1, 8, 16, 32, 64, 128, 256]))
        estimate = float(rng.choice([600, 1800, 3600, 7200, 14400, 36000]))
        job = Job(size=size, runtime=estimate / 2, estimate=estimate, id=k + 1,
                  submit=-float(rng.uniform(0, 86_400)), priority=int(rng.integers(4)))  # fmt: skip
        job.state = JobState.WAITING
        job.utility = maker.function(rng, 3 - job.priority, size, estimate, rng.uniform(0, 7200))
        jobs.append(job)
    return sorted(jobs, key=lambda job: job.submit)


def one_pass(passes: int) -> None:
    rng = np.random.default_rng(1)

    def calls() -> Iterator[tuple[Callable[..., object], tuple[Any, ...]]]:
        for k in range(passes):
            ga = GA(seed=k)
            ga.queue = queue_of(100, rng)
            running = [(float(rng.uniform(60, 36_000)), None, 64) for _ in range(9)]  # 576 busy
            free = PROCS - sum(size for _, _, size in running)
            ga._running, ga._free = running, free  # the state select() hands the GA
            yield ga.evolve, (ga.queue, 0.0, free)

    median, worst = time_calls(calls())
    print(
        f"one GA pass, 100 jobs, population 20 x 100 generations: median {median:.1f} ms, "
        f"slowest {worst:.1f} ms over {passes} passes ({verdict(median, 100, 'ms')})"
    )


def replay(trace: Path) -> None:
    base = ReplayConfig(trace=str(trace), start_job=5000, stop_job=10000, utility="lee-snavely")
    report_replays(
        [(name, base.replace(scheduler=name)) for name in ("EASY", "GA")],
        "the 5,000-job SDSC-BLUE excerpt",
        lambda result: f"utility {result.summary.utility_total:.4g}",
        ("GA", 300),
        lambda stats: f"{stats.get('passes_evolved', 0):,} passes evolved",
    )


def main() -> None:
    kernel_then_replay(__doc__, one_pass, ("passes", 30), replay, DEFAULT)


if __name__ == "__main__":
    main()
