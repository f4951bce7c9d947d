"""Benchmark: ``sitesim analyze`` of the largest research trace, SDSC-BLUE (~243,000 jobs).

    python benchmarks/bench_analysis.py [--trace PATH]

Target (issue 3): <= 20 s on a 2-core machine, tables, JSON and figures included.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from sitesim.output import atomic_write, to_json
from sitesim.workload.activity import decompose
from sitesim.workload.analysis import analyze
from sitesim.workload.plots import analysis_figures
from sitesim.workload.swf import read_swf

DEFAULT = Path(__file__).resolve().parents[2] / "shared/traces/SDSC-BLUE-2000-4.2-cln.swf.gz"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, default=DEFAULT)
    args = parser.parse_args()
    steps = {}
    start = time.perf_counter()
    trace = read_swf(args.trace)
    steps["read"] = time.perf_counter()
    activity = decompose(trace)
    steps["decompose"] = time.perf_counter()
    result = analyze([activity])
    steps["analyze"] = time.perf_counter()
    with tempfile.TemporaryDirectory() as out:
        atomic_write(Path(out) / "analysis.json", to_json(result))
        analysis_figures([activity], result, Path(out))
    steps["json + figures"] = time.perf_counter()
    previous = start
    for step, at in steps.items():
        print(f"{step:15s} {at - previous:6.2f} s")
        previous = at
    total = previous - start
    print(
        f"{'total':15s} {total:6.2f} s for {len(trace):,} lines (target <= 20 s: "
        f"{'ok' if total <= 20 else 'MISSED'})"
    )


if __name__ == "__main__":
    main()
