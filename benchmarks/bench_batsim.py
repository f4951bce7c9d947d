"""Benchmark: sitesim against Batsim 4.2 with batsched's easy_bf, side by side, schedules compared.

    python benchmarks/bench_batsim.py [--cases sdsc,curie] [--runs 3] [--curie-jobs 20000]
        [--build] [--batsim-dir DIR] [--timeout 3600] [--keep] [--out FILE.json]

Two cases, EASY with exact estimates, each tool as whole separate processes:

- ``sdsc``: SDSC-SP2, every job sitesim replays, on 128 processors: ``sitesim replay --procs
  128``; Batsim on a platform of 128 one-core hosts, a job asking for as many hosts as
  processors.
- ``curie``: CEA-Curie's first ``--curie-jobs`` job lines on its 5,040 16-core thin nodes,
  whole nodes (exclusive): ``sitesim replay --platform`` of those nodes in one exclusive
  partition; Batsim on a platform of 5,040 hosts of 16 cores, a job asking for its whole
  nodes, ceil(processors / 16) hosts (batsched's easy_bf allocates hosts and knows no cores).

The jobs are those of benchmarks/bench_peers.py's plain SWF (``prepare``); Batsim's JSON
workload is written by ``sitesim convert`` from it (for ``curie``, from the same file with
every size in nodes). The CPU time of each tool is its processes' user + system time as the
kernel accounts it when they end (``wait4``): sitesim's one process, Batsim's two (batsim and
batsched; their sum is Batsim's figure). Runs are interleaved; the table gives medians. Both
tools write their per-job output (sitesim ``--out``, Batsim's jobs.csv), and the start times
are compared job by job: how many agree exactly and within 1 s, and the mean waits.

``batsched-busy-first`` (built beside batsched by benchmarks/peers/build_batsim.sh) is batsched
with reservations on busy machines first (benchmarks/peers/batsched_busy_first.py): its row is
there to test the explanation of the differences, not to time Batsim.

Batsim is searched for in ``--batsim-dir`` (or $BATSIM_DIR), on PATH, then in
$SITESIM_PEERS/batsim/prefix/bin (where build_batsim.sh installs it); ``--build`` runs
benchmarks/peers/build_batsim.sh first when it is not found. Where Batsim cannot be had the
Batsim rows are skipped, saying why, and sitesim's are still run.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import math
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bench_peers import PEERS, TRACES, Prepared, Sitesim, TraceSpec, output_of, prepare

HERE = Path(__file__).resolve().parent
BUILD_SCRIPT = HERE / "peers" / "build_batsim.sh"
CURIE = TraceSpec("curie", TRACES["sdsc"].path.parent / "CEA-Curie-2011-2.1-cln.swf.gz", 80640)
CURIE_NODES, CURIE_CORES = 5040, 16
DOCS = "docs/performance.md, section 'Batsim side by side'"
TOOLS = ("sitesim", "batsim", "batsim-busy-first")

CURIE_PLATFORM = f"""\
# CEA-Curie's thin nodes (the shipped curie platform's), one exclusive partition: whole nodes.
name = "curie-thin"
placement = "first_fit"

[[nodes]]
type = "thin"
count = {CURIE_NODES}
cores = {CURIE_CORES}

[[partitions]]
name = "thin"
nodes = ["thin"]
allocation = "exclusive"
"""


# -- Batsim: where it is ------------------------------------------------------------------------
@dataclass(frozen=True)
class BatsimInstall:
    folder: Path  # holds batsim, batsched and perhaps batsched-busy-first
    version: str

    @property
    def busy_first(self) -> Path | None:
        path = self.folder / "batsched-busy-first"
        return path if path.is_file() else None


def find_batsim(given: Path | None) -> tuple[BatsimInstall | None, str]:
    """Batsim 4.2 with batsched, or None and why not. Searched: ``given``, PATH, the peers."""
    candidates = []
    if given is not None:
        candidates.append(given)
    else:
        on_path = shutil.which("batsim")
        if on_path and shutil.which("batsched"):
            candidates.append(Path(on_path).resolve().parent)
        candidates.append(PEERS / "batsim" / "prefix" / "bin")
    reasons = []
    for folder in candidates:
        batsim, batsched = folder / "batsim", folder / "batsched"
        if not (batsim.is_file() and batsched.is_file()):
            reasons.append(f"no batsim and batsched in {folder}")
            continue
        version = output_of([str(batsim), "--version"])
        if version is None or not version.startswith("4.2"):
            reasons.append(f"{batsim} is Batsim {version or '(does not run)'}, not 4.2")
            continue
        simgrid = output_of([str(batsim), "--simgrid-version"]) or "?"
        described = f"Batsim {version}, SimGrid {simgrid}, batsched {built_commit(folder)}"
        return BatsimInstall(folder, described), ""
    return None, "; ".join(reasons)


def built_commit(folder: Path) -> str:
    """batsched's commit, from the VERSIONS file build_batsim.sh writes (else unknown)."""
    versions = folder.parent / "VERSIONS"
    lines = versions.read_text().splitlines() if versions.is_file() else []
    found = [line.split()[1][:7] for line in lines if line.startswith("batsched ")]
    return found[0] if found else "(commit unknown)"


def build_batsim() -> str:
    """Run build_batsim.sh; '' if it built, else why not (its last line)."""
    print(f"building Batsim: bash {BUILD_SCRIPT} (logs: {PEERS}/batsim/logs)", file=sys.stderr)
    done = subprocess.run(["bash", str(BUILD_SCRIPT)], capture_output=True, text=True, check=False)
    if done.returncode == 0:
        return ""
    lines = done.stderr.strip().splitlines() or [f"exit status {done.returncode}"]
    return lines[-1]


# -- the cases ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    key: str
    trace: Prepared
    machine: str  # as the table says it
    sitesim_machine: list[str]  # sitesim replay's options for the machine
    hosts: int
    cores: int  # per host
    workload: Path  # Batsim's JSON
    platform: Path  # Batsim's platform XML


def platform_xml(hosts: int, cores: int) -> str:
    """A SimGrid platform of ``hosts`` compute hosts and Batsim's master host. Latencies are 0:
    a job of a delay profile only waits, but the messages that start it would otherwise cross
    the network, and its start would lag the decision by the latencies (1.8 ms here)."""
    net = 'speed="1Gf" bw="125MBps" lat="0" bb_bw="2.25GBps" bb_lat="0"'
    return f"""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<zone id="AS0" routing="Full">
    <cluster id="compute" prefix="node" suffix="" radical="0-{hosts - 1}" core="{cores}" {net}/>
    <cluster id="master" prefix="master_host" suffix="" radical="0-0" {net}>
        <prop id="role" value="master"/>
    </cluster>
    <link id="backbone" bandwidth="1.25GBps" latency="0"/>
    <zoneRoute src="compute" dst="master" gw_src="nodecompute_router"
        gw_dst="master_hostmaster_router"><link_ctn id="backbone"/></zoneRoute>
</zone>
</platform>
"""


def in_nodes(trace: Prepared, cores: int, nodes: int, folder: Path) -> Path:
    """The prepared SWF with every size (fields 5 and 8) in whole nodes of ``cores`` cores."""
    path = folder / f"{trace.key}-nodes.swf"
    with trace.path.open() as lines, path.open("w") as out:
        for line in lines:
            if line.startswith(";"):
                for name in ("MaxNodes", "MaxProcs"):
                    if line.startswith(f"; {name}:"):
                        line = f"; {name}: {nodes}\n"
                out.write(line)
                continue
            x = line.split()
            x[4] = x[7] = str(math.ceil(int(x[4]) / cores))
            out.write(" ".join(x) + "\n")
    return path


def convert(sitesim: str, swf: Path, json_path: Path) -> None:
    """Batsim's workload, written by ``sitesim convert``."""
    done = subprocess.run(
        [sitesim, "convert", str(swf), "-o", str(json_path), "--to", "batsim"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"sitesim convert {swf} failed: {done.stderr.strip()}")


def make_cases(keys: list[str], curie_jobs: int, sitesim: str, folder: Path) -> list[Case]:
    cases = []
    for key in keys:
        if key == "sdsc":
            trace = prepare(TRACES["sdsc"], folder)
            machine, options = f"{trace.procs} processors", ["--procs", str(trace.procs)]
            hosts, cores, swf = trace.procs, 1, trace.path
        else:
            trace = prepare(CURIE, folder, first=curie_jobs)
            toml = folder / "curie-thin.toml"
            toml.write_text(CURIE_PLATFORM)
            machine = f"{CURIE_NODES:,} nodes x {CURIE_CORES} cores, whole nodes"
            options = ["--platform", str(toml)]
            hosts, cores = CURIE_NODES, CURIE_CORES
            swf = in_nodes(trace, CURIE_CORES, CURIE_NODES, folder)
        workload = folder / f"{key}.json"
        convert(sitesim, swf, workload)
        xml = folder / f"{key}-platform.xml"
        xml.write_text(platform_xml(hosts, cores))
        cases.append(Case(key, trace, machine, options, hosts, cores, workload, xml))
    return cases


# -- running ------------------------------------------------------------------------------------
@dataclass
class Sample:
    cpu_s: float  # all the tool's processes: user + system
    parts_s: dict[str, float]  # each process's
    wall_s: float
    error: str = ""


def spawn(argv: list[str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip


def reap(proc: subprocess.Popen[bytes], deadline: float) -> tuple[int | None, float]:
    """Wait for ``proc`` until ``deadline`` (time.monotonic()); its exit code (None: killed at
    the deadline) and its CPU seconds (user + system, from wait4)."""
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, usage.ru_utime + usage.ru_stime
        if time.monotonic() > deadline:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            return None, usage.ru_utime + usage.ru_stime
        time.sleep(0.02)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def run_sitesim(exe: str, case: Case, folder: Path, timeout: float) -> Sample:
    argv = [exe, "replay", str(case.trace.path), "-s", "EASY", "--estimates", "exact"]
    argv += [*case.sitesim_machine, "--out", str(folder / "out")]
    start = time.monotonic()
    code, cpu = reap(spawn(argv, folder / "output.log"), start + timeout)
    wall = time.monotonic() - start
    error = "" if code == 0 else failure("sitesim", code, folder / "output.log", timeout)
    return Sample(cpu, {"sitesim": cpu}, wall, error)


def run_batsim(
    install: BatsimInstall, scheduler: Path, case: Case, folder: Path, timeout: float
) -> Sample:
    """batsched (easy_bf, the basic resource selector, FCFS queue) and batsim, as two processes
    talking over a local ZeroMQ socket; no Pajé or machine-state traces, quiet."""
    port = free_port()
    sched_argv = [str(scheduler), "-v", "easy_bf", "-s", f"tcp://127.0.0.1:{port}"]
    sched_argv += ["--verbosity", "quiet"]
    batsim_argv = [
        str(install.folder / "batsim"),
        "-p",
        str(case.platform),
        "-w",
        str(case.workload),
    ]
    batsim_argv += ["-e", str(folder / "out"), "-s", f"tcp://127.0.0.1:{port}", "-q"]
    batsim_argv += ["--disable-schedule-tracing", "--disable-machine-state-tracing"]
    start = time.monotonic()
    sched = spawn(sched_argv, folder / "batsched.log")
    simulator = spawn(batsim_argv, folder / "batsim.log")
    code, batsim_cpu = reap(simulator, start + timeout)
    # batsched ends once Batsim says the simulation ended; it hangs if Batsim died first
    sched_code, sched_cpu = reap(sched, time.monotonic() + (30 if code == 0 else 1))
    wall = time.monotonic() - start
    error = failure("batsim", code, folder / "batsim.log", timeout)
    if not error and sched_code != 0:
        error = failure("batsched", sched_code, folder / "batsched.log", 30)
    parts = {"batsim": batsim_cpu, "batsched": sched_cpu}
    return Sample(batsim_cpu + sched_cpu, parts, wall, error)


def failure(name: str, code: int | None, log: Path, timeout: float) -> str:
    if code == 0:
        return ""
    if code is None:
        return f"{name} timed out after {timeout:g} s"
    tail = log.read_text(errors="replace").strip().splitlines()[-2:]
    return f"{name} exit code {code}: " + " | ".join(tail)


# -- schedules ----------------------------------------------------------------------------------
def read_starts(path: Path, key: str, start: str) -> dict[str, float]:
    """Job id -> start time, of the jobs that started, from a jobs.csv."""
    with path.open(newline="") as lines:
        return {row[key]: float(row[start]) for row in csv.DictReader(lines) if row[start] != ""}


def starts_of(tool: str, folder: Path) -> dict[str, float]:
    if tool == "sitesim":
        return read_starts(folder / "out" / "jobs.csv", "id", "start")
    return read_starts(folder / "out_jobs.csv", "job_id", "starting_time")


@dataclass
class Agreement:
    jobs: int  # started in both
    exact: int
    within_1s: int
    later: int  # Batsim starts them later (by more than 1 s)
    earlier: int
    first_difference: str  # the first job (in submit order) whose starts differ by more than 1 s


def agreement(reference: dict[str, float], other: dict[str, float]) -> Agreement:
    both = [k for k in reference if k in other]
    gaps = [other[k] - reference[k] for k in both]
    differ = [k for k, gap in zip(both, gaps, strict=True) if abs(gap) > 1]
    first = (
        f"job {differ[0]}: {reference[differ[0]]:.0f} vs {other[differ[0]]:.0f}" if differ else ""
    )
    return Agreement(
        jobs=len(both),
        exact=sum(abs(g) < 1e-6 for g in gaps),
        within_1s=sum(abs(g) <= 1 for g in gaps),
        later=sum(g > 1 for g in gaps),
        earlier=sum(g < -1 for g in gaps),
        first_difference=first,
    )


def mean_wait_min(starts: dict[str, float], submits: dict[str, float]) -> float:
    return statistics.fmean(starts[k] - submits[k] for k in starts) / 60


def submits_of(trace: Prepared) -> dict[str, float]:
    with trace.path.open() as lines:
        return {x[0]: float(x[1]) for x in (line.split() for line in lines if line[0] != ";")}


# -- the benchmark ------------------------------------------------------------------------------
@dataclass
class Row:
    case: str
    tool: str
    machine: str
    jobs: int
    samples: list[Sample] = field(default_factory=list)
    cpu_s: float | None = None
    parts_s: dict[str, float] = field(default_factory=dict)
    wall_s: float | None = None
    ratio: float | None = None  # CPU over sitesim's
    started: int | None = None
    mean_wait_min: float | None = None
    agreement: Agreement | None = None
    note: str = ""
    error: str = ""


def run_all(cases: list[Case], tools: dict[str, object], runs: int, timeout: float, scratch: Path,
            keep: bool) -> list[Row]:  # fmt: skip
    rows = {(c.key, t): Row(c.key, t, c.machine, c.trace.jobs) for c in cases for t in tools}
    starts: dict[tuple[str, str], dict[str, float]] = {}
    for run in range(1, runs + 1):
        for case in cases:
            for tool, how in tools.items():
                row = rows[(case.key, tool)]
                if row.error:
                    continue
                folder = scratch / "runs" / f"{case.key}-{tool}-{run}"
                folder.mkdir(parents=True)
                if tool == "sitesim":
                    assert isinstance(how, str)
                    sample = run_sitesim(how, case, folder, timeout)
                else:
                    assert isinstance(how, tuple)
                    sample = run_batsim(how[0], how[1], case, folder, timeout)
                parts = " + ".join(f"{k} {v:.1f}" for k, v in sample.parts_s.items())
                status = (
                    sample.error
                    or f"CPU {sample.cpu_s:8.2f} s ({parts}), wall {sample.wall_s:.1f} s"
                )
                print(
                    f"[run {run}/{runs}] {case.key:6s} {tool:18s} {status}",
                    file=sys.stderr,
                    flush=True,
                )
                if sample.error:
                    row.error = sample.error
                else:
                    row.samples.append(sample)
                    these = starts_of(tool, folder)
                    if (case.key, tool) not in starts:
                        starts[(case.key, tool)] = these
                    elif these != starts[(case.key, tool)]:
                        row.note = "runs disagree on the schedule"
                if not keep:
                    shutil.rmtree(folder, ignore_errors=True)
    for case in cases:
        submits = submits_of(case.trace)
        reference = starts.get((case.key, "sitesim"))
        base = rows[(case.key, "sitesim")]
        for tool in tools:
            row = rows[(case.key, tool)]
            if not row.samples:
                continue
            row.cpu_s = statistics.median(s.cpu_s for s in row.samples)
            row.wall_s = statistics.median(s.wall_s for s in row.samples)
            row.parts_s = {
                k: statistics.median(s.parts_s[k] for s in row.samples)
                for k in row.samples[0].parts_s
            }
            mine = starts[(case.key, tool)]
            row.started = len(mine)
            row.mean_wait_min = mean_wait_min(mine, submits)
            if tool != "sitesim" and reference is not None:
                row.agreement = agreement(reference, mine)
    for case in cases:
        base = rows[(case.key, "sitesim")]
        for tool in tools:
            row = rows[(case.key, tool)]
            if row.cpu_s is not None and base.cpu_s:
                row.ratio = row.cpu_s / base.cpu_s
    return list(rows.values())


def share(count: int, total: int) -> str:
    return f"{count:,} {count / total:5.1%}"


def print_table(rows: list[Row]) -> None:
    head = (
        f"{'case':6s} {'tool':18s} {'jobs':>7s} {'CPU s':>8s} {'x sitesim':>9s} {'wall s':>8s} "
        f"{'wait min':>9s} {'exact':>13s} {'<= 1 s':>13s} {'later':>6s} {'earlier':>7s}  note"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        if r.error or r.cpu_s is None:
            print(f"{r.case:6s} {r.tool:18s} {r.jobs:7,d}  {r.error or 'not run'}")
            continue
        a = r.agreement
        ratio = "-" if r.ratio is None else f"{r.ratio:.1f}"
        parts = (
            ", ".join(f"{k} {v:.1f} s" for k, v in r.parts_s.items()) if len(r.parts_s) > 1 else ""
        )
        note = "; ".join(n for n in (parts, r.note, a.first_difference if a else "") if n)
        print(
            f"{r.case:6s} {r.tool:18s} {r.started:7,d} {r.cpu_s:8.2f} {ratio:>9s} {r.wall_s:8.1f} "
            f"{r.mean_wait_min:9.1f} {share(a.exact, a.jobs) if a else 'reference':>13s} "
            f"{share(a.within_1s, a.jobs) if a else '':>13s} {a.later if a else '':>6} "
            f"{a.earlier if a else '':>7}  {note}"
        )


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cases", default="sdsc,curie", help="among sdsc,curie (default both)")
    parser.add_argument(
        "--runs", type=int, default=3, help="runs per tool and case (median; default 3)"
    )
    parser.add_argument(
        "--curie-jobs", type=int, default=20000, help="CEA-Curie's first job lines (20000)"
    )
    parser.add_argument(
        "--batsim-dir",
        type=Path,
        default=os.environ.get("BATSIM_DIR"),
        help="folder of batsim and batsched (default: PATH, then the peers' build)",
    )
    parser.add_argument(
        "--build", action="store_true", help="build Batsim first if it is not found"
    )
    parser.add_argument(
        "--no-busy-first", action="store_true", help="leave out batsched-busy-first"
    )
    parser.add_argument(
        "--timeout", type=float, default=3600, help="seconds per run (default 3600)"
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the scratch folder and run outputs"
    )
    parser.add_argument("--out", type=Path, help="also write the rows as JSON")
    args = parser.parse_args()
    unknown = set(args.cases.split(",")) - {"sdsc", "curie"}
    if unknown:
        parser.error(f"--cases: unknown {', '.join(sorted(unknown))} (allowed: sdsc, curie)")
    if args.runs < 1 or args.curie_jobs < 1:
        parser.error("--runs and --curie-jobs must be >= 1")
    return args


def main() -> None:
    args = parse_args()
    sitesim = Sitesim()
    if sitesim.missing() or sitesim.exe is None:
        raise SystemExit(f"bench_batsim.py: {sitesim.missing()}")
    install, reason = find_batsim(args.batsim_dir)
    if install is None and args.build:
        reason = build_batsim() or reason
        install, _ = find_batsim(args.batsim_dir)
        reason = reason if install is None else ""
    tools: dict[str, object] = {"sitesim": sitesim.exe}
    if install is None:
        print(
            f"skipping Batsim: {reason} (build it: bash {BUILD_SCRIPT}, or --build; {DOCS})",
            file=sys.stderr,
        )
    else:
        tools["batsim"] = (install, install.folder / "batsched")
        if install.busy_first is not None and not args.no_busy_first:
            tools["batsim-busy-first"] = (install, install.busy_first)
    scratch = Path(tempfile.mkdtemp(prefix="bench_batsim-"))
    try:
        load = os.getloadavg()
        print(
            f"{platform.machine()}, {os.cpu_count()} cores, load "
            + " ".join(f"{x:.2f}" for x in load)
            + f"; runs {args.runs}, interleaved; EASY, exact estimates; "
            "CPU = user + system of whole processes"
        )
        print(f"  sitesim: {sitesim.version()}")
        if install is not None:
            print(
                f"  batsim: {install.version} ({install.folder}); "
                "batsched -v easy_bf, basic selector, fcfs queue"
            )
        cases = make_cases(args.cases.split(","), args.curie_jobs, sitesim.exe, scratch)
        for case in cases:
            print(
                f"  {case.key}: {case.trace.source.name}, "
                f"{case.trace.jobs:,} jobs on {case.machine}"
            )
        rows = run_all(cases, tools, args.runs, args.timeout, scratch, args.keep)
        end_load = os.getloadavg()
        print("\nload average at the end: " + " ".join(f"{x:.2f}" for x in end_load))
        print_table(rows)
        if args.out:
            meta = {
                "date": time.strftime("%Y-%m-%d %H:%M:%S"),
                "machine": f"{platform.machine()}, {os.cpu_count()} cores",
                "load_at_start": load,
                "load_at_end": end_load,
                "runs": args.runs,
                "sitesim": sitesim.version(),
                "batsim": install.version if install else reason,
            }
            records = [asdict(r) for r in rows]
            args.out.write_text(json.dumps({"meta": meta, "rows": records}, indent=2) + "\n")
            print(f"\nwrote {args.out}")
    finally:
        if args.keep:
            print(f"scratch folder kept: {scratch}", file=sys.stderr)
        else:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
