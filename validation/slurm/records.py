"""A recorded run of real Slurm: its files, and the jobs read back from them.

A case's folder of recorded runs (``tests/data/slurm_real/<case>/``) holds what every run of
the case shares: ``slurm.conf`` (the whole file the daemons read), ``workload.csv``,
``gres.conf`` and ``assoc.txt`` (``sacctmgr show assoc``) when the case has them; and one
folder a run (``run1``, ``run2``, ...) with

- ``sacct.txt``: ``sacct --allusers --allocations --parsable2`` with the fields ``sitesim
  convert`` reads (:data:`SACCT_FIELDS`), in UTC. When the case runs without accounting (no
  slurmdbd), these lines are written from ``scontrol.txt``, field for field
  (:func:`sacct_from_scontrol`), and ``run.json`` says so;
- ``scontrol.txt.gz``: ``scontrol show job -o``, one line a job, the fields of :data:`KEPT`
  (gzip: the longest file of a run, 18 kB as text; ``zcat`` shows it);
- ``run.json``: the case, Slurm's version, when it ran, where the sacct lines came from;
- ``submissions.csv``: each job's name, Slurm's id, the offset planned and the one it was
  submitted at (seconds after the first submission, the harness's clock).
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from validation.slurm.agreement import Schedule

#: The fields of sacct.txt: those the how-to gives ``sitesim convert`` and the job name.
SACCT_FIELDS = (
    "JobID", "JobIDRaw", "JobName", "User", "Account", "Partition", "QOS", "Submit", "Eligible",
    "Start", "End", "Timelimit", "NNodes", "NCPUS", "ReqCPUS", "ReqMem", "AllocTRES", "ReqTRES",
    "State", "ExitCode",
)  # fmt: skip
#: The fields of ``scontrol show job -o`` kept in scontrol.txt (the others are the same for
#: every job of the harness: output files, working folder, task layout, ...).
KEPT = (
    "JobId", "JobName", "UserId", "Account", "QOS", "Priority", "JobState", "Reason", "ExitCode",
    "TimeLimit", "SubmitTime", "EligibleTime", "AccrueTime", "StartTime", "EndTime",
    "LastSchedEval", "Scheduler", "Partition", "NodeList", "NumNodes", "NumCPUs", "NumTasks",
    "TRES", "MinMemoryNode", "MinMemoryCPU", "Features", "TresPerNode",
)  # fmt: skip
#: The file of ``scontrol show job -o``'s lines in a run's folder.
SCONTROL = "scontrol.txt.gz"
#: Files of a case's folder shared by its runs.
SHARED = ("slurm.conf", "workload.csv", "gres.conf", "assoc.txt")


def parse_scontrol(text: str) -> list[dict[str, str]]:
    """The jobs of ``scontrol show job -o`` output: one dict a line, ``Key=Value`` words (a
    value holds no blank for the harness's jobs; it may hold ``=``: ``TRES=cpu=4,node=1``)."""
    jobs = []
    for line in text.splitlines():
        if not line.strip():
            continue
        job = {}
        for word in line.split():
            key, sep, value = word.partition("=")
            if not sep:
                raise ValueError(f"scontrol line: {word!r} is not Key=Value")
            job[key] = value
        if "JobId" not in job:
            raise ValueError(f"scontrol line without JobId: {line[:60]!r}")
        jobs.append(job)
    return jobs


def kept_scontrol(text: str) -> str:
    """``scontrol show job -o`` output reduced to the fields of :data:`KEPT`, by job id."""
    jobs = sorted(parse_scontrol(text), key=lambda job: int(job["JobId"]))
    return "".join(
        " ".join(f"{key}={job[key]}" for key in KEPT if key in job) + "\n" for job in jobs
    )


def _null(value: str) -> str:
    return "" if value == "(null)" else value


def _sorted_tres(tres: str) -> str:
    return ",".join(sorted(t for t in _null(tres).split(",") if t))


def _gpus(job: dict[str, str]) -> str:
    """``,gres/gpu=N`` for a job given GPUs that its TRES does not list (without slurmdbd,
    slurmctld tracks no GPU TRES: ``AccountingStorageTRES=gres/gpu`` needs slurmdbd), from
    ``TresPerNode=gres:gpu:2`` times its nodes; else nothing."""
    if "gres/gpu" in job.get("TRES", ""):
        return ""
    per_node = job.get("TresPerNode", "")
    count = per_node.rsplit(":", 1)[-1] if per_node.startswith("gres:gpu:") else ""
    if not count.isdigit():
        return ""
    return f",gres/gpu={int(count) * int(job['NumNodes'])}"


def sacct_from_scontrol(text: str) -> str:
    """sacct's ``--parsable2`` lines (header and :data:`SACCT_FIELDS`) written from
    ``scontrol show job -o`` of ended jobs, for a run without accounting.

    Field for field: ``User`` is the name of ``UserId`` (``simu1(1001)``); times, the time
    limit, ``State`` and ``ExitCode`` as scontrol prints them (sacct prints the same formats);
    ``NNodes``, ``NCPUS`` from ``NumNodes``, ``NumCPUs``; ``ReqCPUS`` is ``NumCPUs`` (the
    harness's jobs ask ``--ntasks`` one CPU a task and get what they ask); ``AllocTRES`` and
    ``ReqTRES`` are ``TRES`` (scontrol keeps only the allocated TRES of a job that ran), sorted
    by name as sacct prints them, with ``gres/gpu`` from ``TresPerNode`` when slurmctld tracks
    no GPU TRES (without slurmdbd); ``ReqMem`` the memory of ``TRES``, ``0`` if none (where
    memory is not allocated, sacct prints the node's ``RealMemory`` for a job that asked for
    none); ``(null)`` is empty, as sacct prints it.
    """
    lines = ["|".join(SACCT_FIELDS)]
    for job in sorted(parse_scontrol(text), key=lambda job: int(job["JobId"])):
        tres = _sorted_tres(job.get("TRES", "") + _gpus(job))
        memory = next((t.split("=", 1)[1] for t in tres.split(",") if t.startswith("mem=")), "0")
        fields = {
            "JobID": job["JobId"],
            "JobIDRaw": job["JobId"],
            "JobName": job["JobName"],
            "User": job["UserId"].split("(", 1)[0],
            "Account": _null(job["Account"]),
            "Partition": job["Partition"],
            "QOS": _null(job["QOS"]),
            "Submit": job["SubmitTime"],
            "Eligible": job["EligibleTime"],
            "Start": job["StartTime"],
            "End": job["EndTime"],
            "Timelimit": job["TimeLimit"],
            "NNodes": job["NumNodes"],
            "NCPUS": job["NumCPUs"],
            "ReqCPUS": job["NumCPUs"],
            "ReqMem": memory,
            "AllocTRES": tres,
            "ReqTRES": tres,
            "State": job["JobState"],
            "ExitCode": job["ExitCode"],
        }
        lines.append("|".join(fields[name] for name in SACCT_FIELDS))
    return "\n".join(lines) + "\n"


def write_scontrol(folder: Path, text: str) -> None:
    """Write ``scontrol show job -o``'s lines, reduced to :data:`KEPT`, into ``folder``
    (gzip, without a time stamp: the same lines give the same bytes)."""
    (folder / SCONTROL).write_bytes(gzip.compress(kept_scontrol(text).encode(), mtime=0))


def parse_sacct(text: str) -> list[dict[str, str]]:
    """The lines of sacct ``--parsable2`` output, one dict a job, by the header's names."""
    rows = text.splitlines()
    if not rows:
        raise ValueError("sacct output is empty")
    header = rows[0].split("|")
    jobs = []
    for row in rows[1:]:
        values = row.split("|")
        if len(values) != len(header):
            raise ValueError(f"sacct line of {len(values)} fields, header {len(header)}: {row!r}")
        jobs.append(dict(zip(header, values, strict=True)))
    return jobs


def _seconds(stamp: str) -> float:
    """A ``YYYY-MM-DDTHH:MM:SS`` time of the harness's records (UTC) as Unix seconds."""
    return datetime.fromisoformat(stamp).replace(tzinfo=UTC).timestamp()


@dataclass(frozen=True)
class RecordedRun:
    """One recorded run: its folder, and its case's (the files the runs share)."""

    folder: Path

    @property
    def case_folder(self) -> Path:
        return self.folder.parent

    @property
    def name(self) -> str:
        return f"{self.case_folder.name}/{self.folder.name}"

    @property
    def sacct(self) -> Path:
        return self.folder / "sacct.txt"

    def scontrol_text(self) -> str:
        """``scontrol show job -o``'s lines (:data:`KEPT`)."""
        return gzip.decompress((self.folder / SCONTROL).read_bytes()).decode()

    @property
    def conf(self) -> Path:
        return self.case_folder / "slurm.conf"

    @property
    def assoc(self) -> Path | None:
        path = self.case_folder / "assoc.txt"
        return path if path.exists() else None

    def info(self) -> dict[str, Any]:
        """run.json."""
        data: dict[str, Any] = json.loads((self.folder / "run.json").read_text())
        return data

    def started_by(self) -> dict[str, str]:
        """Which of Slurm's schedulers started each job (scontrol's ``Scheduler``: ``main``
        or ``backfill``), by job name."""
        jobs = parse_scontrol(self.scontrol_text())
        return {job["JobName"]: job.get("Scheduler", "-").lower() for job in jobs}

    def jobs(self) -> list[dict[str, str]]:
        """The sacct lines, by job id."""
        return parse_sacct(self.sacct.read_text())

    def schedule(self) -> Schedule:
        """What real Slurm did: each job's submit, start and end, by job name."""
        jobs = self.jobs()
        unended = [job["JobName"] for job in jobs if job["State"] != "COMPLETED"]
        if unended:
            raise ValueError(f"{self.sacct}: jobs not COMPLETED: {', '.join(unended)}")
        return Schedule.of(
            [job["JobName"] for job in jobs],
            [_seconds(job["Submit"]) for job in jobs],
            [_seconds(job["Start"]) for job in jobs],
            [_seconds(job["End"]) for job in jobs],
        )


def recorded_runs(case_folder: Path) -> list[RecordedRun]:
    """The runs recorded in a case's folder, in order (run1, run2, ...)."""
    runs = [p for p in case_folder.glob("run*") if (p / "sacct.txt").exists()]
    return [RecordedRun(p) for p in sorted(runs, key=lambda p: int(p.name[3:] or 0))]
