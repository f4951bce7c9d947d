"""Benchmark: a 16-run sweep on the local process pool against the same sweep run serially.

    python benchmarks/bench_sweep.py [--workers N] [--repeat 2]

The sweep: EASY and CREASY x 20 and 40 complete users x 4 seeds, 91 days on 128 processors,
results.json only. Each variant writes into a fresh folder (a sweep resumes, so a second run
into the same folder would do nothing). Target (issue 8): >= 1.8x on a 2-core machine.
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import time

from sitesim.runs.config import SiteConfig
from sitesim.sweeps.executors import available_cores
from sitesim.sweeps.sweep import sweep

BASE = SiteConfig(days=91)
FACTORS = {"scheduler": ["EASY", "CREASY"], "users": [20, 40]}
SEEDS = 4


def timed(executor: str, workers: int) -> float:
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        result = sweep(
            BASE, FACTORS, seeds=SEEDS, out=out, executor=executor, workers=workers,  # type: ignore[arg-type]
            save_jobs=False,
        )  # fmt: skip
        seconds = time.perf_counter() - start
    assert len(result.runs) == 16 and not result.failed
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=available_cores())
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    print(f"{platform.python_implementation()} {platform.python_version()}, "
          f"{available_cores()} cores, pool of {args.workers}")  # fmt: skip
    serial = min(timed("serial", 1) for _ in range(args.repeat))
    pool = min(timed("process", args.workers) for _ in range(args.repeat))
    speedup = serial / pool
    print(f"16 runs serial {serial:.2f} s, process pool {pool:.2f} s: speed-up {speedup:.2f}x "
          f"(target >= 1.8x {'ok' if speedup >= 1.8 else 'MISSED'})")  # fmt: skip


if __name__ == "__main__":
    main()
