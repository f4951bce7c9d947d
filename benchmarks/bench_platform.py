"""Platforms of nodes: replays of CEA-Curie on its platform, a 1,000-node site with users.

- CEA-Curie (``--jobs`` first jobs of ``../shared/traces/CEA-Curie-2011-2.1-cln.swf.gz``) under
  EASY on the shipped platform (its partitions shared as the trace shows, see
  docs/reference/platform.md) and on the same platform with every partition exclusive:
  CPU seconds in process, reading included, and jobs a second (target >= 30,000).
- Conservative backfilling on CEA-Curie's first ``--conservative`` jobs on the shipped platform
  (target: the first 20,000 in <= 60 s; 0 skips it).
- The 1,000-node site of ``benchmarks/platforms/thousand.toml`` (900 CPU nodes, 100 GPU
  nodes, four overlapping partitions with shares) with ``--users`` complete users for
  ``--days`` days under EASY (target: one year <= 30 s).

    python benchmarks/bench_platform.py [--jobs N] [--conservative N] [--users U] [--days D]
        [--skip-curie]

The ``--procs`` path is timed by bench_replay.py (a platform of N one-core nodes with no
downtime runs on the processor machine).
"""

from __future__ import annotations

import argparse
import tempfile
import time
import tomllib
from pathlib import Path

from sitesim.runs.config import ReplayConfig, SiteConfig
from sitesim.runs.platforms import read_platform
from sitesim.runs.runner import run

HERE = Path(__file__).parent
CURIE = HERE.parent.parent / "shared" / "traces" / "CEA-Curie-2011-2.1-cln.swf.gz"
THOUSAND = HERE / "platforms" / "thousand.toml"


def exclusive_curie(folder: Path) -> str:
    """The shipped Curie platform with every partition exclusive, as a file in ``folder``."""
    from importlib import resources

    text = resources.files("sitesim").joinpath("data/platforms/curie.toml").read_text()
    data = tomllib.loads(text)
    lines = (
        [f'default_partition = "{data["default_partition"]}"']
        if "default_partition" in data
        else []
    )
    for node in data["nodes"]:
        lines.append("[[nodes]]")
        lines += [f"{k} = {v!r}".replace("'", '"') for k, v in node.items()]
    for part in data["partitions"]:
        lines.append("[[partitions]]")
        part = {**part, "allocation": "exclusive"}
        lines += [f"{k} = {v!r}".replace("'", '"') for k, v in part.items()]
    path = folder / "curie-exclusive.toml"
    path.write_text("\n".join(lines) + "\n")
    read_platform(str(path))  # (valid)
    return str(path)


def curie(jobs: int) -> None:
    if not CURIE.exists():
        print(f"{CURIE} not found: the Curie replays are skipped")
        return
    with tempfile.TemporaryDirectory() as folder:
        for name, platform in (("shared", "curie"), ("exclusive", exclusive_curie(Path(folder)))):
            config = ReplayConfig(trace=str(CURIE), platform=platform, stop_job=jobs)
            start = time.process_time()
            result = run(config)
            seconds = time.process_time() - start
            rate = len(result.records) / seconds
            print(
                f"CEA-Curie, first {jobs:,} job lines, EASY, {name} partitions: {seconds:.1f} s "
                f"CPU, {len(result.records):,} jobs, {rate:,.0f} jobs/s (target >= 30,000: "
                f"{'ok' if rate >= 30_000 else 'MISSED'}); core utilization "
                f"{result.platform_stats['core_utilization']:.3f}, mean wait "
                f"{result.summary.wait_mean_min:.1f} min"
            )


def conservative(jobs: int) -> None:
    config = ReplayConfig(
        trace=str(CURIE), platform="curie", scheduler="CONSERVATIVE", stop_job=jobs
    )
    start = time.process_time()
    result = run(config)
    seconds = time.process_time() - start
    print(
        f"CEA-Curie, first {jobs:,} job lines, conservative backfilling: {seconds:.1f} s CPU, "
        f"{len(result.records) / seconds:,.0f} jobs/s; mean wait "
        f"{result.summary.wait_mean_min:.1f} min (target: the first 20,000 in <= 60 s)"
    )


def thousand(users: int, days: float) -> None:
    config = SiteConfig(users=users, days=days, platform=str(THOUSAND))
    start = time.process_time()
    result = run(config)
    seconds = time.process_time() - start
    year = seconds * 365 / days
    print(
        f"1,000-node site, {users} complete users, {days:g} days, EASY: {seconds:.1f} s CPU, "
        f"{len(result.records):,} jobs, {len(result.records) / seconds:,.0f} jobs/s; core "
        f"utilization {result.platform_stats['core_utilization']:.3f}; a year at this rate "
        f"{year:.0f} s (target <= 30 s: {'ok' if year <= 30 else 'MISSED'})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--conservative", type=int, default=4_000)
    parser.add_argument("--users", type=int, default=250)
    parser.add_argument("--days", type=float, default=91.0)
    parser.add_argument("--skip-curie", action="store_true")
    args = parser.parse_args()
    if not args.skip_curie:
        curie(args.jobs)  # (says so if the trace is not there)
        if args.conservative and CURIE.exists():
            conservative(args.conservative)
    thousand(args.users, args.days)


if __name__ == "__main__":
    main()
