"""The partitions of the CEA Curie trace, as sitesim/data/platforms/curie.toml derives them.

Prints three tables. The first has one row per SWF partition number (field 16) found in the
trace: the name the header gives it, how many jobs, the largest job in cores (the larger of
fields 5 and 8), the largest requested time (field 9, seconds), the share of jobs whose size
is not a whole number of the mapped partition's nodes (a sign that jobs shared nodes), and how
many of the jobs allocated more cores than they asked for (field 5 > field 8) were rounded up
to whole nodes (as Slurm does for a job given whole nodes). The second has one row per
partition of the platform file: the SWF numbers mapped to it (numbers mapped to no partition
go to the default one), its cores against the largest job, its ``max_time`` against the
largest requested time, and whether every job fits. The third gives, for each node type, the
most cores the jobs of its partitions held at once, and the most nodes had each job held
whole nodes.

Usage (from the project folder)::

    python scripts/curie_partitions.py [TRACE] [--platform FILE]
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np

from sitesim.platform.description import Platform
from sitesim.platform.values import format_duration
from sitesim.workload.swf import read_swf

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT.parent / "shared" / "traces" / "CEA-Curie-2011-2.1-cln.swf.gz"
PLATFORM = ROOT / "sitesim" / "data" / "platforms" / "curie.toml"
_PARTITION = re.compile(r"^;\s*Partition:\s*(\d+)\s+(.*?)\s*$")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace", nargs="?", default=str(TRACE), help="the Curie SWF trace")
    parser.add_argument("--platform", default=str(PLATFORM), help="the platform file to check")
    args = parser.parse_args()
    trace = read_swf(args.trace)
    platform = Platform.load(args.platform)
    names = {int(m[1]): m[2] for line in trace.header if (m := _PARTITION.match(line))}
    number = trace.column("partition").astype(np.int64)
    size = np.maximum(trace.column("procs"), trace.column("req_procs"))
    asked = trace.column("req_time")
    mapping = platform.swf_partitions()
    where = np.array([mapping.get(n, platform.default) for n in number])
    node_cores = np.array([int(platform.cores[list(p.nodes)].min()) for p in platform.partitions])
    partial = (size > 0) & (size % node_cores[where] != 0)
    allocated = trace.column("procs")
    more = (allocated > trace.column("req_procs")) & (trace.column("req_procs") > 0)
    rounded = more & (allocated % node_cores[where] == 0)

    print(f"{len(trace):,} jobs in {Path(trace.name).name}")
    print()
    print(
        " SWF  header name          jobs  max cores      max asked  partial  rounded up  partition"
    )
    for value in np.unique(number):
        rows = number == value
        part = platform.partitions[where[rows][0]]
        mapped = part.name if value in mapping else f"{part.name} (default)"
        print(
            f"{value:4d}  {names.get(int(value), '?')[:15]:15s} {rows.sum():8,d}"
            f"  {size[rows].max():9,.0f}  {asked[rows].max():13,.0f}"
            f"  {partial[rows].mean():7.1%}  {rounded[rows].sum():>5,d}/{more[rows].sum():<5,d}"
            f"  {mapped}"
        )
    print()
    print("partition  SWF numbers       jobs   cores  max job  max_time         max asked  fits")
    for k, part in enumerate(platform.partitions):
        rows = where == k
        cores = int(platform.cores[list(part.nodes)].sum())
        fits = size[rows].max() <= cores and asked[rows].max() <= part.max_time
        numbers = ",".join(map(str, part.swf)) + (" +unmapped" if k == platform.default else "")
        print(
            f"{part.name:10s} {numbers:13s} {rows.sum():8,d} {cores:7,d} {size[rows].max():8,.0f}"
            f"  {format_duration(part.max_time):11s} {asked[rows].max():14,.0f}  "
            f"{'yes' if fits else 'NO'}"
        )
    print()
    print(
        "nodes    count  peak busy cores  peak busy whole nodes  (jobs of the partitions on them)"
    )
    start = trace.column("submit") + trace.column("wait")
    runtime = trace.column("runtime")
    ran = (trace.column("wait") >= 0) & (runtime > 0) & (size > 0)
    for t, kind in enumerate(platform.node_types):
        on = [
            k
            for k, p in enumerate(platform.partitions)
            if set(platform.node_type[list(p.nodes)]) == {t}
        ]
        rows = ran & np.isin(where, on)
        ends = (start[rows], start[rows] + runtime[rows])
        print(
            f"{kind.name:8s} {kind.count:5,d}  {peak(*ends, size[rows]):15,d}"
            f"  {peak(*ends, np.ceil(size[rows] / kind.cores)):21,d}"
        )


def peak(start: np.ndarray, end: np.ndarray, amount: np.ndarray) -> int:
    """The most ``amount`` held at once by intervals [start, end) (ends before starts)."""
    times = np.concatenate([start, end])
    delta = np.concatenate([amount, -amount])
    order = np.lexsort((delta, times))
    return int(np.cumsum(delta[order]).max(initial=0))


if __name__ == "__main__":
    main()
