"""Benchmark: sitesim against peer simulators (AccaSim, CQSim, pyss) on the same traces.

    python benchmarks/bench_peers.py [--runs 3] [--tools sitesim,accasim,cqsim,pyss]
        [--traces sdsc,lublin] [--schedulers FCFS,EASY,CONSERVATIVE] [--timeout 1200]
        [--quick] [--out FILE.csv|FILE.json]

Every tool replays the same prepared plain SWF file per trace (the jobs sitesim replays, exact
estimates: field 9 := field 4) on the same machine size, as a separate process. Each (tool,
scheduler, trace) is timed as a whole process, the runs interleaved round-robin; the table gives
the median wall time, jobs/s, the peak RSS (GNU time's %M), completed jobs and the mean
wait, and checks that every tool completes the same jobs with the same mean wait (1 %).

The peers are not part of sitesim: install them under /work/peers (or point the environment
variables below at them) as docs/performance.md ("Reproducing the peer benchmark") says. A peer
that is missing is skipped with a message saying how to get it.

    SITESIM_PEERS   folder of the peers (default /work/peers)
    ACCASIM_PYTHON  Python of a venv with accasim installed ($SITESIM_PEERS/accasim-venv/bin/python)
    CQSIM_DIR       CQSim checkout ($SITESIM_PEERS/CQSim); CQSIM_PYTHON its Python 3 (this one)
    PYSS_DIR        pyss checkout ($SITESIM_PEERS/pyss); PYTHON2 a Python 2.7 (searched for)
    SITESIM         the sitesim command (default: the one beside this Python, else on PATH)
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import glob
import gzip
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar

REPO = Path(__file__).resolve().parents[1]
TRACES_DIR = REPO.parent / "shared" / "traces"
PEERS = Path(os.environ.get("SITESIM_PEERS", "/work/peers"))
DOCS = "docs/performance.md, section 'Reproducing the peer benchmark'"
SCHEDULERS = ("FCFS", "EASY", "CONSERVATIVE")
AGREE = 0.01  # relative difference of mean waits taken as agreement

#: Differences we traced to their cause (see docs/performance.md, "Peer simulators").
KNOWN_CAUSES = {
    ("accasim", "EASY"): (
        "AccaSim 1.1.3's EASYBackfilling passes reserved_nodes=[] to its allocator, so a "
        "backfilled job may run past the blocked head job's reservation and delay it: an "
        "aggressive backfilling without the reservation guarantee, not EASY"
    ),
    ("cqsim", "EASY"): (
        "CQSim runs a scheduling pass after every single event, also between jobs that end in "
        "the same second, so a narrow job can backfill into the processors the first of them "
        "frees before the others free theirs; sitesim and pyss see all of them free at once "
        "(a tie-breaking difference, large on SDSC-SP2 whose runtimes are whole seconds)"
    ),
}


@dataclass(frozen=True)
class TraceSpec:
    key: str
    path: Path
    procs: int


TRACES = {
    "sdsc": TraceSpec("sdsc", TRACES_DIR / "SDSC-SP2-1998-4.2-cln.swf.gz", 128),
    "lublin": TraceSpec("lublin", TRACES_DIR / "synthetic" / "lublin_256.swf.gz", 256),
}


@dataclass(frozen=True)
class Prepared:
    """A trace rewritten as the plain SWF file every tool reads."""

    key: str
    source: Path
    path: Path
    procs: int
    jobs: int
    runtime_raised: int  # jobs whose runtime 0 was written as 1 s


@dataclass(frozen=True)
class Command:
    argv: list[str]
    cwd: Path


@dataclass(frozen=True)
class Outcome:
    completed: int
    mean_wait_s: float


@dataclass
class Sample:
    wall_s: float
    maxrss_mb: float
    exit_code: int
    timed_out: bool


@dataclass
class Row:
    trace: str
    tool: str
    version: str
    scheduler: str
    native: str
    jobs: int
    completed: int | None = None
    wall_s: float | None = None
    walls: list[float] = field(default_factory=list)
    jobs_per_s: float | None = None
    peak_rss_mb: float | None = None
    mean_wait_min: float | None = None
    rel_diff: float | None = None
    check: str = ""
    error: str = ""


# -- preparing the traces ---------------------------------------------------------------------
def prepare(spec: TraceSpec, folder: Path, first: int | None = None) -> Prepared:
    """Write the jobs sitesim replays from ``spec`` as a plain SWF file in ``folder``.

    Kept: lines with a known submit time, runtime and size (field 5, else 8) that fit the
    machine, among the ``first`` job lines (default all), in stable submit order (sitesim's
    order), renumbered from 1. Fields 5 and 8 both hold the size and field 9 the runtime
    (exact estimates); a runtime of 0 is written as 1 s (CQSim drops zero-length jobs, pyss
    makes them 1 s; sitesim raises their estimate to 1 s). Memory and CPU fields are -1 (no
    tool here uses them), the rest as in the trace.
    """
    rows: list[list[float]] = []
    read = 0
    with gzip.open(spec.path, "rt") as lines:
        for line in lines:
            text = line.strip()
            if not text or text.startswith(";"):
                continue
            read += 1
            if first is not None and read > first:
                break
            x = [float(token) for token in text.split()]
            size = x[4] if x[4] > 0 else x[7]
            if size <= 0 or x[3] < 0 or x[1] < 0 or size > spec.procs:
                continue
            rows.append(x)
    rows.sort(key=lambda x: x[1])  # stable: file order among equal submit times
    path = folder / f"{spec.key}.swf"  # CQSim names its outputs after the part before the '.'
    raised = 0
    with path.open("w") as out:
        out.write(f"; prepared by benchmarks/bench_peers.py from {spec.path.name}\n")
        out.write(f"; MaxJobs: {len(rows)}\n; MaxRecords: {len(rows)}\n")
        out.write(f"; MaxNodes: {spec.procs}\n; MaxProcs: {spec.procs}\n")
        for number, x in enumerate(rows, start=1):
            size = x[4] if x[4] > 0 else x[7]
            runtime = max(x[3], 1.0)
            raised += x[3] < 1.0
            fields = [number, x[1], x[2], runtime, size, -1, -1, size, runtime, -1, *x[10:16]]
            out.write(" ".join(str(round(v)) for v in [*fields, -1, -1]) + "\n")
    return Prepared(spec.key, spec.path, path, spec.procs, len(rows), raised)


# -- running one process ----------------------------------------------------------------------
GNU_TIME = shutil.which("time", path="/usr/bin:/bin") or ""


def measure(command: Command, timeout: float, log: Path) -> Sample:
    """Run ``command`` once: wall time of the whole process and its peak RSS.

    The peak RSS is GNU time's ``%M``: ``ru_maxrss`` of the command as GNU time's own child.
    Not ``os.wait4`` on our child: Linux keeps a process's peak RSS across ``execve``, so a
    child forked from this Python would start from this Python's RSS (the prepared traces).
    Without GNU time, the wait4 figure is used (an upper bound; the table says so).
    """
    killed = threading.Event()
    peak_file = log.with_suffix(".maxrss")
    argv = [GNU_TIME, "-f", "%M", "-o", str(peak_file), *command.argv] if GNU_TIME else command.argv

    def kill() -> None:
        killed.set()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)

    with log.open("wb") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(
            argv,
            cwd=command.cwd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:
            kill()
            proc.wait()
            raise
        finally:
            timer.cancel()
        wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    peak_kb = float(usage.ru_maxrss)
    with contextlib.suppress(OSError, ValueError, IndexError):
        peak_kb = float(peak_file.read_text().split()[-1])  # last line: a crash adds a first
    return Sample(wall, peak_kb / 1024, proc.returncode, killed.is_set())


def output_of(command: list[str]) -> str | None:
    """stdout of a short command, or None if it cannot run or fails."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def checkout_version(folder: Path) -> str:
    """The commit a checkout came from: its COMMIT file (written at setup), else git."""
    stamp = folder / "COMMIT"
    if stamp.is_file():
        return stamp.read_text().strip()[:12]
    commit = output_of(["git", "-C", str(folder), "rev-parse", "--short=12", "HEAD"])
    return commit or "unknown commit"


def checkout_missing(name: str, folder: Path, entry: str, repo: str, variable: str) -> str | None:
    """None if the checkout of ``name`` in ``folder`` holds ``entry``; else how to get it."""
    if (folder / entry).is_file():
        return None
    return (
        f"no {name} checkout at {folder}: fetch github {repo} and `git archive` it there "
        f"(or set {variable}); {DOCS}"
    )


# -- the tools ---------------------------------------------------------------------------------
class Tool(ABC):
    """One simulator: how to run a scheduler on a prepared trace and read its results."""

    name: str
    natives: ClassVar[dict[str, str]]  # our scheduler name -> the tool's

    @abstractmethod
    def missing(self) -> str | None:
        """Why the tool cannot run here (with how to get it), or None."""

    @abstractmethod
    def version(self) -> str: ...

    @abstractmethod
    def command(self, trace: Prepared, scheduler: str, folder: Path) -> Command:
        """The command line of one run; ``folder`` is a fresh folder for its files."""

    @abstractmethod
    def outcome(self, trace: Prepared, folder: Path, log: str) -> Outcome:
        """Completed jobs and mean wait from the run's output files or printed output."""


class Sitesim(Tool):
    name = "sitesim"
    natives: ClassVar[dict[str, str]] = {s: s for s in SCHEDULERS}

    def __init__(self) -> None:
        beside = Path(sys.executable).parent / "sitesim"
        self.exe = os.environ.get("SITESIM") or (
            str(beside) if beside.exists() else shutil.which("sitesim")
        )

    def missing(self) -> str | None:
        if self.exe is None:
            return "the sitesim command is not found: `pip install -e .` in the repository"
        return None

    def version(self) -> str:
        from importlib.metadata import version

        commit = output_of(["git", "-C", str(REPO), "rev-parse", "--short=12", "HEAD"])
        return f"{version('sitesim')} ({commit or 'no git'})"

    def command(self, trace: Prepared, scheduler: str, folder: Path) -> Command:
        assert self.exe is not None
        argv = [self.exe, "replay", str(trace.path), "-s", scheduler, "--estimates", "exact"]
        return Command([*argv, "--procs", str(trace.procs)], folder)

    def outcome(self, trace: Prepared, folder: Path, log: str) -> Outcome:
        lines = log.splitlines()
        for k, line in enumerate(lines):
            header = line.split()
            if header[:1] == ["Scheduler"] and "Avg.Wait(min)" in header:
                row = lines[k + 1].split()
                jobs = int(row[header.index("Jobs")])
                return Outcome(jobs, float(row[header.index("Avg.Wait(min)")]) * 60)
        raise ValueError("no result table in sitesim's output")


ACCASIM_RUNNER = '''\
"""Run one AccaSim simulation: workload, system config, dispatcher (FIFO|EBF), results folder.
AccaSim 1.1.3 imports ABCs from collections (removed in Python 3.10): alias them first."""
import collections
import collections.abc
import sys

for name in ("Mapping", "MutableMapping", "Sequence", "MutableSequence", "Iterable",
             "Iterator", "Callable", "Set", "MutableSet", "Hashable"):
    if not hasattr(collections, name):
        setattr(collections, name, getattr(collections.abc, name))

from accasim.base.allocator_class import FirstFit
from accasim.base.scheduler_class import EASYBackfilling, FirstInFirstOut
from accasim.base.simulator_class import Simulator

workload, system, dispatcher, results = sys.argv[1:5]
policy = {"FIFO": FirstInFirstOut, "EBF": EASYBackfilling}[dispatcher](FirstFit())
Simulator(workload, system, policy, RESULTS_FOLDER_PATH=results).start_simulation()
'''


class AccaSim(Tool):
    name = "accasim"
    natives: ClassVar[dict[str, str]] = {"FCFS": "FIFO", "EASY": "EBF"}

    def __init__(self, scratch: Path) -> None:
        self.python = os.environ.get("ACCASIM_PYTHON", str(PEERS / "accasim-venv/bin/python"))
        self.runner = scratch / "accasim_runner.py"
        self.runner.write_text(ACCASIM_RUNNER)

    def missing(self) -> str | None:
        if output_of([self.python, "-c", "import accasim"]) is None:
            return (
                f"no AccaSim at {self.python}: `python3 -m venv {PEERS}/accasim-venv && "
                f"{PEERS}/accasim-venv/bin/pip install accasim` (or set ACCASIM_PYTHON); {DOCS}"
            )
        return None

    def version(self) -> str:
        code = "import importlib.metadata as m, sys; print(m.version('accasim'), sys.version[:6])"
        found = (output_of([self.python, "-c", code]) or "? ?").split()
        return f"{found[0]} (Python {found[1]})"

    def command(self, trace: Prepared, scheduler: str, folder: Path) -> Command:
        system = folder / "system.config"  # one node per processor, one core each
        system.write_text(
            json.dumps({"groups": {"g0": {"core": 1}}, "resources": {"g0": trace.procs}})
        )
        results = folder / "results"
        argv = [self.python, str(self.runner), str(trace.path), str(system)]
        return Command([*argv, self.natives[scheduler], str(results)], folder)

    def outcome(self, trace: Prepared, folder: Path, log: str) -> Outcome:
        results = folder / "results"
        stats = (results / f"stats-{trace.path.name}").read_text()
        mean = re.search(r"Avg\. waiting times: ([-\d.]+)", stats)
        if mean is None:
            raise ValueError(f"no mean wait in AccaSim's statistics: {stats!r}")
        with (results / f"sched-{trace.path.name}").open() as plan:
            completed = sum(1 for line in plan if line.strip())  # one line per finished job
        return Outcome(completed, float(mean.group(1)))


class CQSim(Tool):
    name = "cqsim"
    natives: ClassVar = {"FCFS": "backfill=0", "EASY": "backfill=1", "CONSERVATIVE": "backfill=2"}

    def __init__(self) -> None:
        self.dir = Path(os.environ.get("CQSIM_DIR", str(PEERS / "CQSim")))
        self.python = os.environ.get("CQSIM_PYTHON", sys.executable)

    def missing(self) -> str | None:
        return checkout_missing("CQSim", self.dir, "src/cqsim.py", "SPEAR-UIC/CQSim", "CQSIM_DIR")

    def version(self) -> str:
        py = output_of([self.python, "-c", "import sys; print(sys.version.split()[0])"])
        return f"{checkout_version(self.dir)} (Python {py})"

    def command(self, trace: Prepared, scheduler: str, folder: Path) -> Command:
        """CQSim reads Config/ from its working folder and the trace from ../data/InputFiles;
        its shipped config_sys.set is used as it is but for the trace, the backfill mode and
        read_num (default 8000 jobs: raised to read the whole trace)."""
        config, inputs = folder / "run" / "Config", folder / "data" / "InputFiles"
        config.mkdir(parents=True)
        inputs.mkdir(parents=True)
        (inputs / trace.path.name).symlink_to(trace.path)
        for shipped in (self.dir / "src/Config").glob("*.set"):
            shutil.copy(shipped, config / shipped.name)
        settings = {
            "backfill": self.natives[scheduler].split("=")[1],
            "read_num": str(10**9),
            "job_trace": trace.path.name,
            "node_struc": trace.path.name,
        }
        system = config / "config_sys.set"
        lines = []
        for line in system.read_text().splitlines():
            key = line.split("=")[0]
            lines.append(f"{key}={settings.pop(key)}" if key in settings else line)
        lines += [f"{key}={value}" for key, value in settings.items()]  # keys it lacked
        system.write_text("\n".join(lines) + "\n")
        return Command([self.python, str(self.dir / "src/cqsim.py")], folder / "run")

    def outcome(self, trace: Prepared, folder: Path, log: str) -> Outcome:
        # one line per finished job: id;procs;procs;reqTime;run;wait;submit;start;end
        result = folder / "data" / "Results" / f"{trace.key}.rst"
        waits = [float(line.split(";")[5]) for line in result.read_text().splitlines() if line]
        return Outcome(len(waits), sum(waits) / max(len(waits), 1))


PYSS_RUNNER = '''\
"""Run pyss's own command line (run_simulator.main) and report completed jobs and mean wait
over *all* terminated jobs (pyss's printed statistics leave out tiny jobs, the first 1 % and
jobs ending after the last submission). argv: pyss/src, then run_simulator.py's options."""
import sys

sys.path.insert(0, sys.argv[1])
import schedulers.simulator as simulator_module

captured = []
original = simulator_module.run_simulator


def capture(*args, **kwargs):
    simulator = original(*args, **kwargs)
    captured.append(simulator)
    return simulator


simulator_module.run_simulator = capture
import run_simulator

sys.argv = ["run_simulator.py"] + sys.argv[2:]
run_simulator.main()
jobs = captured[0].terminated_jobs
waits = [job.start_to_run_at_time - job.submit_time for job in jobs]
print("BENCH completed=%d mean_wait_s=%r" % (len(jobs), float(sum(waits)) / max(len(jobs), 1)))
'''


def find_python2() -> tuple[str | None, str]:
    """A Python 2.7 that runs: $PYTHON2, python2/python2.7 on PATH, pyenv's 2.7 versions."""
    candidates = [os.environ.get("PYTHON2"), shutil.which("python2"), shutil.which("python2.7")]
    candidates += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/2.7*/bin/python2.7")))
    tried = []
    for exe in dict.fromkeys(c for c in candidates if c):
        found = output_of([exe, "-c", "import sys; print(sys.version.split()[0])"])
        if found and found.startswith("2."):
            return exe, found
        tried.append(exe)
    return None, "tried " + (", ".join(tried) or "nothing") + ": none runs Python 2"


class Pyss(Tool):
    name = "pyss"
    natives: ClassVar[dict[str, str]] = {
        "FCFS": "FcfsScheduler",
        "EASY": "EasyBackfillScheduler",
        "CONSERVATIVE": "ConservativeScheduler",
    }

    def __init__(self, scratch: Path) -> None:
        self.dir = Path(os.environ.get("PYSS_DIR", str(PEERS / "pyss")))
        self.python, self.python_version = find_python2()
        self.runner = scratch / "pyss_runner.py"
        self.runner.write_text(PYSS_RUNNER)

    def missing(self) -> str | None:
        if self.python is None:
            return f"no working Python 2 ({self.python_version}); set PYTHON2; {DOCS}"
        return checkout_missing(
            "pyss", self.dir, "src/run_simulator.py", "dinesh121991/pyss", "PYSS_DIR"
        )

    def version(self) -> str:
        return f"{checkout_version(self.dir)} (Python {self.python_version}, -O)"

    def command(self, trace: Prepared, scheduler: str, folder: Path) -> Command:
        """With -O, as pyss's run_simulator.py advises: it asserts its invariants throughout."""
        assert self.python is not None
        src = self.dir / "src"
        options = [f"--num-processors={trace.procs}", f"--input-file={trace.path}"]
        argv = [self.python, "-O", str(self.runner), str(src), *options]
        return Command([*argv, f"--scheduler={self.natives[scheduler]}"], src)

    def outcome(self, trace: Prepared, folder: Path, log: str) -> Outcome:
        found = re.search(r"BENCH completed=(\d+) mean_wait_s=([-\d.e+]+)", log)
        if found is None:
            raise ValueError("no BENCH line in the pyss runner's output")
        return Outcome(int(found.group(1)), float(found.group(2)))


# -- the benchmark ------------------------------------------------------------------------------
@dataclass
class Case:
    tool: Tool
    trace: Prepared
    scheduler: str
    row: Row
    samples: list[Sample] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)


def run_cases(cases: list[Case], runs: int, timeout: float, scratch: Path) -> None:
    """Run every case ``runs`` times, round-robin: run 1 of every case, then run 2, ..."""
    for run in range(1, runs + 1):
        for case in cases:
            row = case.row
            if row.error:
                continue  # failed or timed out before: not run again
            folder = scratch / "runs" / f"{row.trace}-{row.tool}-{row.scheduler}-{run}"
            folder.mkdir(parents=True)
            command = case.tool.command(case.trace, case.scheduler, folder)
            log = folder / "output.log"
            sample = measure(command, timeout, log)
            label = f"[run {run}/{runs}] {row.tool:8s} {row.scheduler:12s} {row.trace:7s}"
            if sample.timed_out:
                row.error = f"timed out after {timeout:g} s"
            elif sample.exit_code != 0:
                tail = log.read_text(errors="replace").strip().splitlines()[-3:]
                row.error = f"exit code {sample.exit_code}: " + " | ".join(tail)
            else:
                try:
                    case.outcomes.append(
                        case.tool.outcome(case.trace, folder, log.read_text(errors="replace"))
                    )
                    case.samples.append(sample)
                except (OSError, ValueError, IndexError) as error:
                    row.error = f"unreadable results: {error}"
            status = row.error or f"{sample.wall_s:8.2f} s {sample.maxrss_mb:7.1f} MB"
            print(f"{label} {status}", file=sys.stderr, flush=True)
            shutil.rmtree(folder, ignore_errors=True)  # CQSim's debug log alone is > 100 MB


def summarize(cases: list[Case]) -> list[Row]:
    """Fill the rows: medians, and the agreement with sitesim (or the first tool) per group."""
    for case in cases:
        row = case.row
        if not case.samples:
            continue
        if len({(o.completed, round(o.mean_wait_s, 3)) for o in case.outcomes}) > 1:
            row.error = "runs disagree: " + str(case.outcomes)
        outcome = case.outcomes[0]
        row.walls = [round(s.wall_s, 3) for s in case.samples]
        row.wall_s = statistics.median(s.wall_s for s in case.samples)
        row.completed = outcome.completed
        row.jobs_per_s = outcome.completed / row.wall_s
        row.peak_rss_mb = max(s.maxrss_mb for s in case.samples)
        row.mean_wait_min = outcome.mean_wait_s / 60
    groups: dict[tuple[str, str], list[Row]] = {}
    for case in cases:
        groups.setdefault((case.row.trace, case.row.scheduler), []).append(case.row)
    for group in groups.values():
        done = [r for r in group if r.mean_wait_min is not None]
        if not done:
            continue
        reference = next((r for r in done if r.tool == "sitesim"), done[0])
        assert reference.mean_wait_min is not None
        for row in done:
            assert row.mean_wait_min is not None
            notes = []
            if row.completed != row.jobs:
                notes.append(f"completed {row.completed} of {row.jobs} jobs")
            if row is reference:
                row.check = "reference" if not notes else "; ".join(notes)
                continue
            row.rel_diff = (row.mean_wait_min - reference.mean_wait_min) / reference.mean_wait_min
            notes.append("agree" if abs(row.rel_diff) <= AGREE else "DIFFERS")
            row.check = "; ".join(notes)
    return [case.row for case in cases]


def number(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def print_table(rows: list[Row]) -> None:
    head = (
        f"{'trace':7s} {'tool':8s} {'scheduler':13s} {'native':22s} {'completed':>9s} "
        f"{'wall s':>8s} {'jobs/s':>8s} {'peak MB':>8s} {'wait min':>9s} {'vs ref':>8s}  check"
    )
    print(head)
    print("-" * len(head))
    for r in sorted(rows, key=lambda r: (r.trace, SCHEDULERS.index(r.scheduler))):
        diff = "-" if r.rel_diff is None else f"{r.rel_diff:+.2%}"
        print(
            f"{r.trace:7s} {r.tool:8s} {r.scheduler:13s} {r.native:22s} "
            f"{number(r.completed, ','):>9s} {number(r.wall_s, '.2f'):>8s} "
            f"{number(r.jobs_per_s, ',.0f'):>8s} {number(r.peak_rss_mb, '.0f'):>8s} "
            f"{number(r.mean_wait_min, '.1f'):>9s} {diff:>8s}  {r.error or r.check}"
        )
    for (tool, scheduler), cause in KNOWN_CAUSES.items():
        if any(r.tool == tool and r.scheduler == scheduler and "DIFFERS" in r.check for r in rows):
            print(f"\n{tool} {scheduler} differs: {cause}.")


def write_out(path: Path, rows: list[Row], meta: dict[str, Any]) -> None:
    records = [asdict(r) for r in rows]
    if path.suffix == ".json":
        path.write_text(json.dumps({"meta": meta, "rows": records}, indent=2) + "\n")
        return
    with path.open("w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=[f.name for f in fields(Row)])
        writer.writeheader()
        for record in records:
            record["walls"] = " ".join(map(str, record["walls"]))
            writer.writerow(record)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per case (median; default 3)")
    parser.add_argument("--tools", default="sitesim,accasim,cqsim,pyss")
    parser.add_argument("--traces", default="sdsc,lublin")
    parser.add_argument("--schedulers", default=",".join(SCHEDULERS))
    parser.add_argument(
        "--timeout", type=float, default=1200, help="seconds per run (default 1200)"
    )
    parser.add_argument("--quick", action="store_true", help="smoke check: Lublin only, 1 run")
    parser.add_argument("--out", type=Path, help="also write the table as CSV, or JSON (.json)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args()
    if args.quick:
        args.traces, args.runs = "lublin", 1
    for option, known in (("tools", TOOL_NAMES), ("traces", TRACES), ("schedulers", SCHEDULERS)):
        unknown = set(getattr(args, option).split(",")) - set(known)
        if unknown:
            parser.error(f"--{option}: unknown {', '.join(sorted(unknown))}")
    if args.runs < 1:
        parser.error("--runs must be >= 1")
    return args


TOOL_NAMES = ("sitesim", "accasim", "cqsim", "pyss")


def make_tools(names: list[str], scratch: Path) -> list[Tool]:
    made: dict[str, Tool] = {}
    for name in names:
        if name == "sitesim":
            made[name] = Sitesim()
        elif name == "accasim":
            made[name] = AccaSim(scratch)
        elif name == "cqsim":
            made[name] = CQSim()
        else:
            made[name] = Pyss(scratch)
    return list(made.values())


def main() -> None:
    args = parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench_peers-"))
    try:
        tools, versions = [], {}
        for tool in make_tools(args.tools.split(","), scratch):
            reason = tool.missing()
            if reason:
                print(f"skipping {tool.name}: {reason}", file=sys.stderr)
                continue
            tools.append(tool)
            versions[tool.name] = tool.version()
        print(
            f"{platform.python_implementation()} {platform.python_version()}, "
            f"{platform.machine()}, {os.cpu_count()} cores; runs {args.runs}, "
            f"interleaved; timeout {args.timeout:g} s per run; peak RSS: "
            + ("GNU time %M" if GNU_TIME else "os.wait4 ru_maxrss, an upper bound")
        )
        for name, version in versions.items():
            print(f"  {name}: {version}")
        traces = []
        for key in args.traces.split(","):
            trace = prepare(TRACES[key], scratch)  # before any timing
            traces.append(trace)
            print(
                f"  {key}: {trace.source.name} -> plain SWF, {trace.jobs:,} jobs on "
                f"{trace.procs} processors, exact estimates"
                + (f", {trace.runtime_raised} runtimes 0 -> 1 s" if trace.runtime_raised else "")
            )
        cases = [
            Case(
                tool,
                trace,
                s,
                Row(trace.key, tool.name, versions[tool.name], s, tool.natives[s], trace.jobs),
            )
            for trace in traces
            for s in args.schedulers.split(",")
            for tool in tools
            if s in tool.natives
        ]
        run_cases(cases, args.runs, args.timeout, scratch)
        rows = summarize(cases)
        print()
        print_table(rows)
        if args.out:
            meta = {
                "machine": f"{platform.machine()}, {os.cpu_count()} cores",
                "python": platform.python_version(),
                "runs": args.runs,
                "timeout_s": args.timeout,
                "versions": versions,
                "traces": {
                    t.key: asdict(t) | {"source": str(t.source), "path": None} for t in traces
                },
                "peak_rss": "GNU time %M" if GNU_TIME else "os.wait4 ru_maxrss (upper bound)",
                "date": time.strftime("%Y-%m-%d %H:%M:%S"),
            }
            write_out(args.out, rows, meta)
            print(f"\nwrote {args.out}")
    finally:
        if args.keep:
            print(f"scratch folder kept: {scratch}", file=sys.stderr)
        else:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
