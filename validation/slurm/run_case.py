"""One run of a case on real Slurm: start it, submit the workload at its offsets, wait for
every job to end, record the jobs (records.py says what), stop Slurm."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from validation.slurm.local_slurm import HarnessError, LocalSlurm, Ports
from validation.slurm.records import (
    SACCT_FIELDS,
    RecordedRun,
    parse_sacct,
    sacct_from_scontrol,
    write_scontrol,
)
from validation.slurm.workload import SleepJob, read_workload

#: sacctmgr's association columns, as docs/reference/slurm.md gives them.
ASSOC_FORMAT = "format=Cluster,Account,User,Share,QOS,DefaultQOS,ParentName"
#: The columns of submissions.csv.
SUBMISSION_FIELDS = ("name", "id", "offset", "submitted")
#: Seconds between looks at the queue while the jobs run.
POLL = 2.0


def run_case(
    case: Path,
    work: Path,
    out: Path,
    run: int,
    ports: Ports | None = None,
    say: Callable[[str], None] | None = None,
    debug_flags: str = "Backfill",
) -> RecordedRun:
    """Run ``case`` once on real Slurm in ``work``; record it as ``out/run<run>`` (and the
    files the case's runs share in ``out``); the daemons' logs (``debug_flags``: slurm.conf's
    DebugFlags) are kept in ``work/../logs/<case>-run<run>``."""
    say = say or _say
    jobs = read_workload(case / "workload.csv")
    started = datetime.now(UTC)
    with LocalSlurm(case, work, ports, debug_flags) as slurm:
        version = slurm.command(["sinfo", "--version"]).strip()
        say(f"{case.name} run {run}: {version}, {len(slurm.nodes)} nodes, {len(jobs)} jobs")
        submitted = submit(slurm, jobs, say)
        wait_for_jobs(slurm, jobs, say)
        scontrol = slurm.command(["scontrol", "show", "job", "-o"])
        if slurm.accounts is not None:
            sacct, source = accounted(slurm, len(jobs)), "sacct"
            assoc = slurm.command(["sacctmgr", "show", "assoc", ASSOC_FORMAT, "--parsable2"])
        else:
            sacct, source, assoc = sacct_from_scontrol(scontrol), "scontrol", None
        logs = work.parent / "logs" / f"{case.name}-run{run}"
        shutil.rmtree(logs, ignore_errors=True)
        shutil.copytree(work / "log", logs)
    folder = out / f"run{run}"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(work / "slurm.conf", out / "slurm.conf")
    shutil.copy(case / "workload.csv", out / "workload.csv")
    if (work / "gres.conf").exists():
        shutil.copy(work / "gres.conf", out / "gres.conf")
    if assoc is not None:
        (out / "assoc.txt").write_text(assoc)
    (folder / "sacct.txt").write_text(sacct)
    write_scontrol(folder, scontrol)
    info: dict[str, Any] = {
        "case": case.name,
        "run": run,
        "slurm": version,
        "started": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "sacct_source": source,
        "command": f"python validation/slurm/harness.py run {case.name}",
    }
    (folder / "run.json").write_text(json.dumps(info, indent=1) + "\n")
    rows = [",".join(str(s[k]) for k in SUBMISSION_FIELDS) for s in submitted]
    (folder / "submissions.csv").write_text("\n".join([",".join(SUBMISSION_FIELDS), *rows]) + "\n")
    return RecordedRun(folder)


def _say(text: str) -> None:
    print(text, flush=True)  # (the run takes minutes: its progress shows in a log at once)


def submit(slurm: LocalSlurm, jobs: list[SleepJob], say: Callable[[str], None]) -> list[Any]:
    """Submit each job at its offset after the first; per job its name, Slurm's id, the offset
    planned and the one it was submitted at (seconds, the harness's clock)."""
    chdir = slurm.work / "jobs"
    t0 = time.monotonic()
    submitted: list[dict[str, Any]] = []
    for job in jobs:
        delay = t0 + job.offset - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        at = time.monotonic() - t0
        job_id = slurm.command(job.sbatch_args(chdir)).strip().split(";")[0]
        submitted.append({"name": job.name, "id": int(job_id), "offset": job.offset,
                          "submitted": round(at, 2)})  # fmt: skip
    late = max(s["submitted"] - s["offset"] for s in submitted)
    say(f"  submitted {len(jobs)} jobs over {jobs[-1].offset} s (at most {late:.1f} s late)")
    return submitted


def wait_for_jobs(
    slurm: LocalSlurm, jobs: list[SleepJob], say: Callable[[str], None], every: float = 60
) -> None:
    """Wait until the queue is empty, saying how it stands every ``every`` seconds.

    Raises:
        HarnessError: jobs still queued long after every job could have ended one after the
            other (a node down, a job that never fits).
    """
    limit = sum(60 * job.limit for job in jobs) + 120
    t0 = last = time.monotonic()
    while True:
        states = slurm.command(["squeue", "-h", "-o", "%T"]).split()
        if not states:
            break
        now = time.monotonic()
        if now - t0 > limit:
            raise HarnessError(f"jobs still queued after {limit} s: {sorted(set(states))}")
        if now - last >= every:
            running = states.count("RUNNING")
            say(f"  {now - t0:4.0f} s: {running} running, {len(states) - running} waiting")
            last = now
        time.sleep(POLL)
    say(f"  every job ended, {time.monotonic() - t0:.0f} s after the last submission")


def accounted(slurm: LocalSlurm, count: int, timeout: float = 60) -> str:
    """sacct's lines of the run, once slurmdbd has every job's end (it learns it a moment
    after slurmctld)."""
    args = [
        "sacct", "--allusers", "--allocations", "--parsable2", "--starttime=now-1days",
        f"--format={','.join(SACCT_FIELDS)}",
    ]  # fmt: skip
    deadline = time.monotonic() + timeout
    while True:
        text = slurm.command(args)
        jobs = parse_sacct(text)
        if len(jobs) == count and all(job["State"] == "COMPLETED" for job in jobs):
            return text
        if time.monotonic() > deadline:
            states = sorted({job["State"] for job in jobs})
            raise HarnessError(f"sacct shows {len(jobs)} of {count} jobs, states {states}")
        time.sleep(1)


def installed(accounting: bool) -> bool:
    """Whether the commands a case needs are on the PATH."""
    need = ["slurmctld", "slurmd", "sbatch", "munged", "mungekey"]
    if accounting:
        need += ["slurmdbd", "mariadbd", "mariadb-install-db"]
    return all(shutil.which(name) for name in need)


def install(accounting: bool) -> None:
    """Run install.sh (Debian's packages).

    Raises:
        HarnessError: it failed.
    """
    script = Path(__file__).with_name("install.sh")
    args = ["bash", str(script), *(["--accounting"] if accounting else [])]
    if subprocess.run(args, check=False).returncode != 0:
        raise HarnessError(f"{script} failed: see its output above")
