"""A recorded run replayed in sitesim: the same jobs, at the submit times Slurm recorded, under
the SLURM scheduler on the platform of the same slurm.conf.

In process, what these commands do (the jobs keeping the GPUs, memory and constraints of their
sacct lines, as a replay of the lines themselves reads them; not their node counts, below)::

    sitesim convert run1/sacct.txt -o jobs.swf --mapping names.json
    sitesim replay jobs.swf --platform slurm.conf -s SLURM --param conf=slurm.conf \\
        --param time_zero=UNIXSTARTTIME [--param assoc=assoc.txt --param mapping=names.json]

with the trace's ``UnixStartTime`` as the clock of Slurm's rounding (``time_zero``), and one
translation the commands leave to their user:

- **partitions**: ``sitesim convert`` numbers partitions by first submission, and a replay on
  a slurm.conf platform maps SWF partition number k to the file's k-th partition (by
  :meth:`~sitesim.platform.Platform.swf_number`); the jobs' numbers are rewritten by name so
  each job runs in the partition it ran in.
"""

from __future__ import annotations

import dataclasses
import tempfile
import warnings
from pathlib import Path

import numpy as np

from sitesim.engine.site import SiteResult
from sitesim.formats.sacct import read_sacct
from sitesim.platform.description import Platform
from sitesim.runs.config import ReplayConfig
from sitesim.runs.replay import run_replay
from sitesim.schedulers.slurm import SlurmConfigWarning
from sitesim.slurm.conf import read_slurm_conf
from sitesim.workload.names import mapping_json
from sitesim.workload.swf import COLUMN, SWFTrace, write_swf
from validation.slurm.agreement import Schedule
from validation.slurm.records import RecordedRun, parse_sacct

#: Keys of the case's node lines that the harness adds (where each slurmd listens).
ADDRESS_KEYS = ("NodeAddr", "Port")


@dataclasses.dataclass(frozen=True)
class Replayed:
    """sitesim's schedule of a recorded run, the run's result, and what sitesim said it does
    not model among the case's own settings (the harness's lines are not listed)."""

    schedule: Schedule
    result: SiteResult
    not_modelled: list[str]

    def started_by(self) -> dict[str, str]:
        """Which of sitesim's schedulers started each job (``main`` or ``backfill``)."""
        decisions = self.result.decisions
        assert decisions is not None
        by_id = dict(zip(decisions["id"].tolist(), decisions["started_by"].tolist(), strict=True))
        ids = self.result.records["id"].tolist()
        return {name: by_id.get(i, "-") for name, i in zip(self.schedule.names, ids, strict=True)}


def case_warnings(messages: list[str], conf: Path) -> list[str]:
    """The SLURM scheduler's warnings (``file:line: KEY: ...``) about the case's lines of the
    slurm.conf the harness wrote: not those of its first block (the daemons' plumbing, up to
    the first blank line) nor the nodes' addresses."""
    lines = conf.read_text().splitlines()
    plumbing = lines.index("") + 1 if "" in lines else 0
    kept = []
    for message in messages:
        where, _, rest = message.partition(": ")
        line = where.rsplit(":", 1)[-1]
        key = rest.split(":", 1)[0]
        ours = where.startswith(str(conf)) and line.isdigit()
        if ours and (int(line) <= plumbing or key in ADDRESS_KEYS):
            continue
        kept.append(message)
    return kept


def renumber_partitions(trace: SWFTrace, names: list[str], platform: Platform) -> SWFTrace:
    """``trace`` with each job's partition number (field 16, numbered as ``names`` lists the
    partitions) the one a replay on ``platform`` maps to the partition of that name; the jobs
    keep the GPUs, memory and features the sacct lines say they asked for, but not their node
    counts: those are the nodes Slurm gave (without slurmdbd the lines are written from
    scontrol), and no case's job asks for a node count (``sbatch -n`` only), so a job of 40
    tasks that ran on two nodes would be held to two nodes of 20 cores (case d then agrees
    for 25/38 jobs, not 38/38)."""
    number = {part.name: platform.swf_number(k) for k, part in enumerate(platform.partitions)}
    unknown = sorted(set(names) - set(number))
    if unknown:
        raise ValueError(f"partitions {', '.join(unknown)} are not in the slurm.conf")
    data = trace.data.copy()
    old = data[:, COLUMN["partition"]].astype(np.int64)
    new = np.array([-1, *(number[name] for name in names)], dtype=np.float64)
    data[:, COLUMN["partition"]] = np.where(old > 0, new[np.clip(old, 0, None)], -1.0)
    requests = trace.requests
    if requests is not None:
        requests = dataclasses.replace(requests, nodes=np.zeros_like(requests.nodes))
    return dataclasses.replace(trace, data=data, requests=requests)


def replay(
    run: RecordedRun, params: dict[str, str] | None = None, scheduler: str = "SLURM"
) -> Replayed:
    """Replay ``run`` in sitesim under SLURM with its slurm.conf (and its associations);
    ``params`` adds or overrides scheduler parameters. ``scheduler="EASY"``: under EASY on
    the same platform instead, for contrast (``params`` ignored).

    Raises:
        ValueError: sitesim refused jobs of the run (the reasons are named).
    """
    converted = read_sacct([str(run.sacct)])
    conf = read_slurm_conf(run.conf)
    assert conf.platform is not None
    trace = renumber_partitions(
        converted.trace, converted.names.get("partitions", []), conf.platform
    )
    with tempfile.TemporaryDirectory(prefix="slurm-replay-") as scratch:
        swf = Path(scratch) / "jobs.swf"
        write_swf(swf, trace.data, trace.header)
        origin = trace.header_value("UnixStartTime")
        assert origin is not None  # (sitesim convert writes it)
        scheduler_params: dict[str, str] = {"conf": str(run.conf), "time_zero": origin}
        if run.assoc is not None:
            mapping = Path(scratch) / "names.json"
            mapping.write_text(mapping_json(converted.names))
            scheduler_params |= {"assoc": str(run.assoc), "mapping": str(mapping)}
        scheduler_params |= params or {}
        if scheduler != "SLURM":
            scheduler_params = {}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", SlurmConfigWarning)
            config = ReplayConfig(
                trace=str(swf),
                platform=str(run.conf),
                scheduler=scheduler,
                scheduler_params=scheduler_params,
            )
            result = run_replay(config, trace=trace)
    said = [str(w.message) for w in caught if issubclass(w.category, SlurmConfigWarning)]
    if result.rejected:
        raise ValueError(f"{run.name}: sitesim refused jobs: {result.rejected}")
    names = converted.names["job names"]
    rec = result.records
    executable = trace.data[rec["trace_row"], COLUMN["executable"]].astype(np.int64)
    schedule = Schedule.of(
        [names[k - 1] for k in executable.tolist()], rec["submit"], rec["start"], rec["end"]
    )
    return Replayed(schedule, result, case_warnings(said, run.conf))


def jobs_by_name(run: RecordedRun) -> dict[str, dict[str, str]]:
    """The run's sacct lines by job name."""
    return {job["JobName"]: job for job in parse_sacct(run.sacct.read_text())}
