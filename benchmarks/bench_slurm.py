"""The SLURM scheduler's speed: simulated days per wall-clock second, as whole commands.

- The 1,000-node site of ``benchmarks/platforms/thousand.toml`` (four overlapping partitions)
  with ``--users`` complete users in accounts (``--accounts``) for ``--days`` days (a year by
  default) under SLURM with fairshare (PriorityWeightFairshare=10000, PriorityWeightAge=1000)
  and Slurm's backfill defaults (target: one year <= 30 s).
- CEA-Curie (``../shared/traces/CEA-Curie-2011-2.1-cln.swf.gz``: the whole trace, 312,826
  lines, by default; ``--jobs N``: its first N job lines) on its shipped platform under the
  same SLURM settings (target: the whole trace <= 60 s).
- SDSC-SP2 on 128 processors under SLURM with Slurm's defaults and as EASY
  (``bf_job_part_count_reserve=1``, a cycle every pass), beside EASY itself.

Each is a ``sitesim`` command timed by wall clock (start-up included). Slurm's own simulator
runs about 17 simulated days an hour (0.0047 a second).

    python benchmarks/bench_slurm.py [--users U] [--days D] [--jobs N] [--skip-curie]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
TRACES = HERE.parent.parent / "shared" / "traces"
CURIE = TRACES / "CEA-Curie-2011-2.1-cln.swf.gz"
SDSC = TRACES / "SDSC-SP2-1998-4.2-cln.swf.gz"
THOUSAND = HERE / "platforms" / "thousand.toml"
FAIRSHARE = ["PriorityWeightFairshare=10000", "PriorityWeightAge=1000"]
AS_EASY = ["bf_job_part_count_reserve=1", "bf_interval=0", "default_queue_depth=1000000",
           "bf_max_job_test=1000000", "bf_window=100000000", "bf_resolution=1"]  # fmt: skip
#: Slurm's simulator, simulated days an hour.
SLURM_SIMULATOR = 17.0


def timed(args: list[str]) -> tuple[float, str]:
    """Wall seconds of ``sitesim ARGS`` and its output."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "sitesim.cli", *args], capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"sitesim {' '.join(args)} failed:\n{done.stderr}")
    return seconds, done.stdout


def params(settings: list[str]) -> list[str]:
    return [item for setting in settings for item in ("--param", setting)]


def rate(days: float, seconds: float) -> str:
    per_second = days / seconds
    return (
        f"{per_second:,.1f} simulated days a second ({per_second * 3600 / SLURM_SIMULATOR:,.0f}"
        " × Slurm's simulator)"
    )


def thousand(users: int, days: float, accounts: str) -> None:
    with tempfile.TemporaryDirectory() as out:
        args = ["run", "--users", str(users), "--days", f"{days:g}", "--platform", str(THOUSAND),
                "--scheduler", "SLURM", *params([f"accounts={accounts}", *FAIRSHARE]),
                "--out", f"{out}/o"]  # fmt: skip
        seconds, _ = timed(args)
    year = seconds * 365 / days
    print(
        f"1,000-node site, {users} complete users in accounts {accounts}, {days:g} days, SLURM "
        f"with fairshare: {seconds:.1f} s; {rate(days, seconds)}; a year at this rate "
        f"{year:.0f} s (target <= 30 s: {'ok' if year <= 30 else 'MISSED'})"
    )


def curie(jobs: int) -> None:
    if not CURIE.exists():
        print(f"{CURIE} not found: the Curie replay is skipped")
        return
    window = ["--jobs", f"0:{jobs}"] if jobs else []
    args = ["replay", str(CURIE), *window, "--platform", "curie", "--scheduler", "SLURM",
            *params(FAIRSHARE)]  # fmt: skip
    seconds, output = timed(args)
    days = _makespan_days(output)
    whole = "the whole trace" if not jobs else f"its first {jobs:,} job lines"
    target = "" if jobs else f" (target <= 60 s: {'ok' if seconds <= 60 else 'MISSED'})"
    print(f"CEA-Curie, {whole}, SLURM with fairshare: {seconds:.1f} s{target};", end=" ")
    print(rate(days, seconds))


def sdsc() -> None:
    if not SDSC.exists():
        print(f"{SDSC} not found: the SDSC-SP2 replays are skipped")
        return
    for label, scheduler in (
        ("EASY", ["--scheduler", "EASY"]),
        ("SLURM as EASY", ["--scheduler", "SLURM", *params(AS_EASY)]),
        ("SLURM, Slurm's defaults", ["--scheduler", "SLURM"]),
        ("SLURM with fairshare", ["--scheduler", "SLURM", *params(FAIRSHARE)]),
    ):
        seconds, output = timed(["replay", str(SDSC), *scheduler])
        days = _makespan_days(output)
        print(f"SDSC-SP2 (54,044 jobs), {label}: {seconds:.2f} s; {rate(days, seconds)}")


def _makespan_days(output: str) -> float:
    """The makespan (days) in a summary table's last column."""
    lines = output.splitlines()
    header = next(k for k, line in enumerate(lines) if line.startswith("Scheduler"))
    return float(lines[header + 1].split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=250)
    parser.add_argument("--days", type=float, default=365.0)
    parser.add_argument("--accounts", default="5x20,30x5")
    parser.add_argument("--jobs", type=int, default=0, help="Curie's first job lines (0: all)")
    parser.add_argument("--skip-curie", action="store_true")
    args = parser.parse_args()
    sdsc()
    thousand(args.users, args.days, args.accounts)
    if not args.skip_curie:
        curie(args.jobs)


if __name__ == "__main__":
    main()
