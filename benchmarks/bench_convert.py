"""Benchmark: ``sitesim convert`` of a 1,000,000-line sacct dump, and of a 450,000-job SWF
trace to Parquet, each as a whole command, with its peak memory.

    python benchmarks/bench_convert.py [--lines N] [--swf PATH] [--keep DIR]

The sacct dump is generated here (in a temporary folder; ``--keep DIR`` keeps it): the
how-to's field list, one job a line, with what a real dump holds (array tasks, a pending
range, heterogeneous components, jobs cancelled before they started, jobs still pending or
running, UNLIMITED and Partition_Limit limits, GPUs in AllocTRES). The SWF trace is RICC-2010
(447,794 jobs) when ../shared/traces holds it, else a synthetic trace of 450,000 jobs.

Targets (issue 25): the sacct dump <= 20 s; the SWF to Parquet <= 5 s. Peak memory is the
largest resident set of the command (``ru_maxrss`` of the child).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from sitesim.formats.sacct import DOCUMENTED
from sitesim.workload.swf import write_swf

RICC = Path(__file__).resolve().parents[2] / "shared/traces/RICC-2010-2.swf.gz"
START = np.datetime64("2024-01-01T00:00:00")


def sacct_dump(path: Path, lines: int, seed: int = 1) -> None:
    """Write a synthetic ``sacct --parsable2 --allocations`` dump of ``lines`` job lines."""
    rng = np.random.default_rng(seed)
    submit = START + np.sort(rng.integers(0, 180 * 86400, lines)).astype("timedelta64[s]")
    wait = rng.exponential(1800, lines).astype(np.int64)
    run = rng.exponential(3600, lines).astype(np.int64) + 1
    nodes = rng.choice([1, 1, 1, 2, 4, 8, 16], lines)
    cpus = nodes * rng.choice([1, 4, 16, 32], lines)
    kind = rng.choice(6, lines, p=[0.80, 0.08, 0.05, 0.03, 0.02, 0.02])
    users = np.char.add("user", rng.zipf(1.6, lines).clip(1, 2000).astype(str))
    accounts = np.char.add("acct", (rng.zipf(1.8, lines).clip(1, 200)).astype(str))
    parts = np.array(["batch", "gpu", "debug", "long"])[
        rng.choice(4, lines, p=[0.7, 0.1, 0.15, 0.05])
    ]
    limits = np.array(["01:00:00", "2-03:04:05", "UNLIMITED", "Partition_Limit", "30:00",
                       "12:00:00"])[rng.choice(6, lines)]  # fmt: skip
    states = np.array(["COMPLETED", "FAILED", "TIMEOUT", "CANCELLED by 1234", "NODE_FAIL"])
    state = states[rng.choice(5, lines, p=[0.7, 0.1, 0.1, 0.08, 0.02])]
    submit_s = submit.astype(str)
    start_s = (submit + wait.astype("timedelta64[s]")).astype(str)
    end_s = (submit + (wait + run).astype("timedelta64[s]")).astype(str)
    rows = ["|".join(DOCUMENTED)]
    for k in range(lines):
        jid = str(1_000_000 + k)
        st, en, stt = start_s[k], end_s[k], state[k]
        tres = f"billing={cpus[k]},cpu={cpus[k]},mem={cpus[k] * 2}G,node={nodes[k]}"
        if parts[k] == "gpu":
            tres += ",gres/gpu=2"
        if kind[k] == 1:
            jid = f"{900_000 + k // 10}_{k % 10}"
        elif kind[k] == 2:  # cancelled before it started
            st, stt = "Unknown", "CANCELLED by 0"
        elif kind[k] == 3:  # still pending, or a range that never started
            jid = f"{900_000 + k}_[1-4%2]" if k % 2 else jid
            st, en, stt = "Unknown", "Unknown", "PENDING"
        elif kind[k] == 4:
            en, stt = "Unknown", "RUNNING"
        elif kind[k] == 5:
            jid = f"{950_000 + k // 2}+{k % 2}"
        tres_alloc = "" if st == "Unknown" else tres
        rows.append(
            f"{jid}|{1_000_000 + k}|{users[k]}|{accounts[k]}|{parts[k]}|normal|{submit_s[k]}|"
            f"{submit_s[k]}|{st}|{en}|{limits[k]}|{nodes[k]}|{cpus[k]}|{cpus[k]}|"
            f"{cpus[k] * 2}G|{tres_alloc}|{tres}|{stt}|0:0"
        )
    path.write_text("\n".join(rows) + "\n")


def synthetic_swf(path: Path, jobs: int, seed: int = 2) -> None:
    rng = np.random.default_rng(seed)
    data = np.full((jobs, 18), -1.0)
    data[:, 0] = np.arange(1, jobs + 1)
    data[:, 1] = np.sort(rng.integers(0, 365 * 86400, jobs))
    data[:, 2] = rng.exponential(1800, jobs).round()
    data[:, 3] = rng.exponential(3600, jobs).round() + 1
    data[:, 4] = data[:, 7] = rng.choice([1, 2, 4, 8, 16, 64, 256], jobs)
    data[:, 8] = data[:, 3] * 2
    data[:, 10] = 1
    data[:, 11] = rng.integers(1, 500, jobs)
    write_swf(path, data, ["; MaxProcs: 8192"])


def measure(args: list[str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak resident MiB of one command, run alone in a child
    process (the machine is shared: CPU time is what a busy neighbour does not inflate)."""
    probe = (
        "import resource, subprocess, sys, time; t = time.perf_counter(); "
        "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
        "u = resource.getrusage(resource.RUSAGE_CHILDREN); "
        "print(time.perf_counter() - t, u.ru_utime + u.ru_stime, u.ru_maxrss)"
    )
    done = subprocess.run([sys.executable, "-c", probe, *args], check=True, capture_output=True,
                          text=True)  # fmt: skip
    seconds, cpu, kib = done.stdout.split()
    return float(seconds), float(cpu), float(kib) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--swf", type=Path, default=RICC)
    parser.add_argument("--keep", type=Path, help="write the generated files here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        dump = folder / "dump.sacct"
        start = time.perf_counter()
        sacct_dump(dump, args.lines)
        size = dump.stat().st_size / 2**20
        print(f"generated {args.lines:,} sacct lines ({size:.0f} MiB) in "
              f"{time.perf_counter() - start:.1f} s")  # fmt: skip
        sitesim = [sys.executable, "-m", "sitesim.cli", "convert"]
        seconds, cpu, peak = measure(
            [*sitesim, str(dump), "-o", str(folder / "dump.swf"), "--force"]
        )
        print(f"sacct -> SWF: {seconds:.1f} s ({cpu:.1f} s CPU), peak {peak:.0f} MiB "
              f"(target <= 20 s: {'ok' if seconds <= 20 else 'MISSED'})")  # fmt: skip
        trace = args.swf
        if not trace.exists():
            trace = folder / "synthetic.swf"
            synthetic_swf(trace, 450_000)
            print(f"{args.swf} not found: a synthetic trace of 450,000 jobs instead")
        out = folder / "trace.parquet"
        seconds, cpu, peak = measure([*sitesim, str(trace), "-o", str(out), "--force"])
        print(f"{trace.name} -> Parquet: {seconds:.1f} s ({cpu:.1f} s CPU), peak {peak:.0f} MiB, "
              f"{out.stat().st_size / 2**20:.1f} MiB written "
              f"(target <= 5 s: {'ok' if seconds <= 5 else 'MISSED'})")  # fmt: skip


if __name__ == "__main__":
    main()
