"""Write each case's workload.csv: 38 sleep jobs at fixed offsets, drawn once from a fixed seed.

The files are committed; this script says how they were made and makes them again
(``python validation/slurm/make_workloads.py``). One base workload (sizes 1-64 cores, runtimes
20-200 s, time limits 1.3-3 times the runtime rounded up to whole minutes, offsets over four
minutes) fills one 64-core node for about ten minutes; each case adds what it tests: partitions,
users and accounts, GPUs, memory and constraints.

Columns: ``name`` (the job name), ``offset`` (seconds after the first submission), ``cpus``
(``--ntasks``), ``runtime`` (seconds of ``sleep``), ``limit`` (``--time``, minutes), and,
empty when not asked, ``user``, ``account``, ``partition``, ``gres`` (``--gres``), ``mem``
(``--mem``), ``constraint`` (``--constraint``).
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

import numpy as np

CASES = Path(__file__).resolve().parent / "cases"
COLUMNS = (
    "name", "offset", "cpus", "runtime", "limit", "user", "account", "partition", "gres", "mem",
    "constraint",
)  # fmt: skip
JOBS = 38
SIZES = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64)
WEIGHTS = (0.12, 0.12, 0.14, 0.14, 0.10, 0.12, 0.08, 0.08, 0.05, 0.05)


def base(seed: int = 35) -> list[dict[str, Any]]:
    """The 38 jobs every case starts from."""
    rng = np.random.default_rng(seed)
    offsets = np.sort(rng.integers(0, 241, JOBS))
    offsets[0] = 0
    sizes = rng.choice(SIZES, JOBS, p=WEIGHTS)
    # log-uniform between 20 and 200 s, in whole seconds: many short jobs, some of a few
    # minutes (not rounded further: runtimes of 5 s multiples end together with Slurm's 30 s
    # backfill cycles, a race decided by fractions of a second, in Slurm and between runs)
    runtimes = np.round(np.exp(rng.uniform(np.log(20), np.log(200), JOBS))).astype(int)
    factors = rng.uniform(1.3, 3.0, JOBS)
    return [
        {
            "name": f"j{k + 1:02d}",
            "offset": int(offsets[k]),
            "cpus": int(sizes[k]),
            "runtime": int(runtimes[k]),
            "limit": max(1, math.ceil(runtimes[k] * factors[k] / 60)),
        }
        for k in range(JOBS)
    ]


def partitions(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Case d: about half of the jobs that ``short`` takes (32 cores or fewer, limit at most 5
    minutes) go to ``short`` (the second node), the others to ``batch`` (both nodes)."""
    rng = np.random.default_rng(35)
    out = []
    for job in jobs:
        short = int(job["cpus"]) <= 32 and int(job["limit"]) <= 5 and rng.random() < 0.5
        out.append(job | {"partition": "short" if short else "batch"})
    return out


def accounts(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Case e: four users, two accounts of two; account a1's users submit about two jobs in
    three, so a1 uses more than its half and a2's jobs gain priority as the run goes."""
    rng = np.random.default_rng(36)
    users = rng.choice(4, len(jobs), p=(0.35, 0.30, 0.20, 0.15))
    return [
        job | {"user": f"simu{u + 1}", "account": "a1" if u < 2 else "a2"}
        for job, u in zip(jobs, users.tolist(), strict=True)
    ]


def resources(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Case f: about a quarter of the jobs ask for 1-4 GPUs (at most 16 cores: the GPU node
    has 32), about a sixth for 100-400 GB on the big-memory node (``--constraint=bigmem``, at
    most 16 cores), the others for cores only, some with a few GB of memory."""
    rng = np.random.default_rng(37)
    out = []
    for job in jobs:
        draw, cpus = rng.random(), int(job["cpus"])
        if draw < 0.25:
            job = job | {"cpus": min(cpus, 16), "gres": f"gpu:{int(rng.integers(1, 5))}"}
        elif draw < 0.42:
            mem = f"{100 * int(rng.integers(1, 5))}G"
            job = job | {"cpus": min(cpus, 16), "mem": mem, "constraint": "bigmem"}
        elif draw < 0.60:
            job = job | {"mem": f"{int(rng.integers(1, 9))}G"}
        out.append(job)
    return out


def write(case: str, jobs: list[dict[str, Any]]) -> None:
    path = CASES / case / "workload.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as out:
        writer = csv.DictWriter(out, COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows([{c: job.get(c, "") for c in COLUMNS} for job in jobs])


def main() -> None:
    jobs = base()
    for case in ("a_fifo", "b_resolution1", "c_jobsize"):
        write(case, jobs)
    write("d_partitions", partitions(jobs))
    write("e_fairshare", accounts(jobs))
    write("f_resources", resources(jobs))


if __name__ == "__main__":
    main()
