"""Rebuild the pictures of runs in the docs: the tutorial's first run as a Gantt chart and as
its users' lanes, the HTML report as headless Chromium shows it (docs/figures/), and the
teaching demo's Gantt charts and lanes (docs/results/figures/).

    python scripts/screenshots.py

It runs, in a temporary folder, what the tutorial shows (section 5): the 20 users of the first
run for 91 days under FCFS and EASY, ``sitesim report`` of each; then opens EASY's report in
the system's Chromium (see docs/development.md) for the screenshot; then the teaching demo's
one seed. Needs the dev extra.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from sitesim.cli.main import main
from sitesim.views.browser import browser_missing, open_report

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "docs" / "figures"
RESULTS = ROOT / "docs" / "results" / "figures"


def sitesim(*args: str) -> None:
    if main(list(args)) != 0:
        sys.exit(f"sitesim {' '.join(args)} failed")


def run() -> int:
    FIGURES.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        os.chdir(scratch)  # (the report names its folder as the tutorial does: runs/first/...)
        runs = Path("runs/first")
        sitesim("run", "--users", "20", "--scheduler", "FCFS,EASY", "--days", "91",
                "--out", str(runs), "--report")  # fmt: skip
        easy, fcfs = runs / "users-0020-EASY", runs / "users-0020-FCFS"
        sitesim("report", str(easy), "--gantt", str(FIGURES / "first-run-gantt.png"))
        sitesim("report", str(easy), "--compare", str(fcfs), "--window", "14:28",
                "--lanes", str(FIGURES / "first-run-lanes.png"))  # fmt: skip
        if (missing := browser_missing()) is not None:
            print(f"no screenshot of the report: {missing}", file=sys.stderr)
            return 1
        shot = FIGURES / "report.png"
        opened = open_report(easy / "report.html", screenshot=shot, size=(1280, 1500))
        if opened.problems:
            print(f"the report showed problems: {opened.problems}", file=sys.stderr)
            return 1
        print(f"{shot} written (Gantt painted in {opened.seconds:.2f} s)")
        demo = Path("demo")
        teaching_demo().main(["--seeds", "1", "--out", str(demo)])
        for name in ("gantt", "lanes"):
            shutil.copyfile(demo / f"{name}.png", RESULTS / f"teaching-demo-{name}.png")
        print(f"teaching-demo-gantt.png and teaching-demo-lanes.png written to {RESULTS}")
    return 0


def teaching_demo() -> ModuleType:
    path = ROOT / "scenarios" / "teaching_demo.py"
    spec = importlib.util.spec_from_file_location("teaching_demo", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


if __name__ == "__main__":
    sys.exit(run())
