"""Seeing a run: Gantt PNGs and the HTML report of large runs (docs/performance.md, "Views").

- SDSC-SP2 (54,044 jobs, 128 processors) replayed under EASY: the Gantt chart as PNG, from
  the run folder (reading included; target <= 5 s); the HTML report: its size (target
  <= 20 MB), the time to write it, and the time headless Chromium takes to open it until the
  Gantt chart is painted (target <= 5 s).
- CEA-Curie (312,826 jobs, 5,544 nodes) on its platform under EASY: the Gantt PNG from the run
  folder (target <= 20 s). Replaying it takes longer than drawing it (about ten minutes), so
  give a folder it was written to with ``--curie-run DIR`` (``sitesim replay
  ../shared/traces/CEA-Curie-2011-2.1-cln.swf.gz --platform curie --scheduler EASY --out
  DIR``); without one it is skipped.
- A million jobs: the SP2 run repeated 19 times end to end (1,026,836 jobs), its Gantt PNG.

Wall times, best of ``--repeat`` (the figures are drawn in this process, as ``sitesim report
--gantt`` draws them).

    python benchmarks/bench_views.py [--sp2-run DIR] [--curie-run DIR] [--repeat N]
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
import time
from pathlib import Path

import numpy as np

from sitesim.views.gantt import gantt_figure
from sitesim.views.html import write_report
from sitesim.views.run_view import RunView, read_run

HERE = Path(__file__).parent
TRACES = HERE.parent.parent / "shared" / "traces"
SP2 = TRACES / "SDSC-SP2-1998-4.2-cln.swf.gz"


def best(repeat: int, work) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def gantt_png(folder: Path, out: Path) -> None:
    gantt_figure(read_run(folder), path=out)


def sp2_run(folder: Path) -> Path:
    from sitesim.cli.main import main

    if not (folder / "results.json").exists():
        assert main(["replay", str(SP2), "--scheduler", "EASY", "--out", str(folder)]) == 0
    return folder


def open_in_browser(page: Path) -> float | None:
    """Seconds from navigation until the Gantt chart's canvas is painted, or None."""
    from sitesim.views.browser import browser_missing, open_report

    return None if browser_missing() else open_report(page).seconds


def repeated(view: RunView, times: int) -> RunView:
    """``view``'s jobs ``times`` times, each copy after the previous one's last end."""
    rec = view.records
    shift = float(np.nanmax(rec["end"])) - float(rec["submit"].min()) + 3600.0
    copies = []
    for k in range(times):
        copy = rec.copy()
        for name in ("submit", "start", "end"):
            copy[name] += k * shift
        copy["id"] += k * len(rec)
        copies.append(copy)
    return dataclasses.replace(view, records=np.concatenate(copies))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sp2-run", type=Path, help="a folder of SDSC-SP2 under EASY (else made)")
    p.add_argument("--curie-run", type=Path, help="a folder of CEA-Curie under EASY")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        if args.sp2_run is None and not SP2.exists():
            print(f"{SP2} not found: SDSC-SP2 skipped")
        else:
            folder = args.sp2_run or sp2_run(tmp / "sp2")
            seconds = best(args.repeat, lambda: gantt_png(folder, tmp / "sp2.png"))
            print(f"SDSC-SP2 EASY, Gantt PNG from the run folder: {seconds:.2f} s (<= 5 s)")
            view = read_run(folder)
            seconds = best(args.repeat, lambda: write_report(view, tmp / "sp2.html"))
            size = (tmp / "sp2.html").stat().st_size
            print(f"SDSC-SP2 EASY, HTML report: {size / 1e6:.1f} MB (<= 20 MB), "
                  f"written in {seconds:.2f} s")  # fmt: skip
            opened = [open_in_browser(tmp / "sp2.html") for _ in range(args.repeat)]
            if opened[0] is None:
                print("no headless Chromium here: not opened")
            else:
                print(f"  opened in headless Chromium, Gantt painted: "
                      f"{min(t for t in opened if t is not None):.2f} s (<= 5 s)")  # fmt: skip
            big = repeated(view, 19)
            seconds = best(1, lambda: gantt_figure(big, path=tmp / "million.png"))
            print(f"{len(big.records):,} jobs (SDSC-SP2 x 19), Gantt PNG: {seconds:.2f} s")
        if args.curie_run is None:
            print("CEA-Curie skipped: give --curie-run DIR (see the docstring)")
        else:
            seconds = best(args.repeat, lambda: gantt_png(args.curie_run, tmp / "curie.png"))
            jobs = len(read_run(args.curie_run).records)
            print(f"CEA-Curie EASY ({jobs:,} jobs, 5,544 nodes), Gantt PNG from the run folder: "
                  f"{seconds:.2f} s (<= 20 s)")  # fmt: skip


if __name__ == "__main__":
    main()
