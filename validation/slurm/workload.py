"""A case's workload: sleep jobs submitted at fixed offsets (``workload.csv``).

Columns (``make_workloads.py`` wrote the cases' files): ``name``, ``offset`` (seconds after
the first submission), ``cpus`` (``--ntasks``: one CPU a task), ``runtime`` (seconds of
``sleep``), ``limit`` (``--time``, whole minutes: Slurm's unit), and, empty when not asked,
``user`` (submitted with ``--uid``; root otherwise), ``account``, ``partition``, ``gres``,
``mem``, ``constraint``.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

COLUMNS = (
    "name", "offset", "cpus", "runtime", "limit", "user", "account", "partition", "gres", "mem",
    "constraint",
)  # fmt: skip


@dataclass(frozen=True)
class SleepJob:
    """One job of a workload."""

    name: str
    offset: int
    cpus: int
    runtime: int
    limit: int
    user: str = ""
    account: str = ""
    partition: str = ""
    gres: str = ""
    mem: str = ""
    constraint: str = ""

    def sbatch_args(self, chdir: Path) -> list[str]:
        """The sbatch command that submits this job (run as root), working in ``chdir``."""
        args = [
            "sbatch", "--parsable", f"--job-name={self.name}", f"--ntasks={self.cpus}",
            f"--time={self.limit}", "--output=/dev/null", "--error=/dev/null",
            f"--chdir={chdir}",
        ]  # fmt: skip
        for option, value in (
            ("--uid", self.user), ("--account", self.account), ("--partition", self.partition),
            ("--gres", self.gres), ("--mem", self.mem), ("--constraint", self.constraint),
        ):  # fmt: skip
            if value:
                args.append(f"{option}={value}")
        return [*args, f"--wrap=sleep {self.runtime}"]


def read_workload(path: Path) -> list[SleepJob]:
    """The jobs of a workload.csv, in submission order.

    Raises:
        ValueError: a missing column, a value that is not a whole number, a runtime not under
            its limit, offsets out of order, a name used twice (the message names the line).
    """
    jobs: list[SleepJob] = []
    with path.open(newline="") as source:
        reader = csv.DictReader(source)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or ())]
        if missing:
            raise ValueError(f"{path}:1: missing columns {', '.join(missing)}")
        for line, row in enumerate(reader, start=2):
            try:
                job = SleepJob(
                    name=row["name"],
                    offset=int(row["offset"]),
                    cpus=int(row["cpus"]),
                    runtime=int(row["runtime"]),
                    limit=int(row["limit"]),
                    **{c: row[c].strip() for c in COLUMNS[5:]},
                )
            except ValueError as err:
                raise ValueError(f"{path}:{line}: {err}") from None
            if job.cpus < 1 or job.runtime < 1 or job.runtime >= 60 * job.limit:
                raise ValueError(f"{path}:{line}: cpus and runtime >= 1, runtime < limit")
            if jobs and job.offset < jobs[-1].offset:
                raise ValueError(f"{path}:{line}: offset {job.offset} before the line above's")
            if any(j.name == job.name for j in jobs):
                raise ValueError(f"{path}:{line}: job name {job.name!r} used twice")
            jobs.append(job)
    return jobs
