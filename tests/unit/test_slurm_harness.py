"""The pure parts of the real-Slurm harness (validation/slurm): the slurm.conf it writes, the
sbatch command of a job, the workload file's checks, scontrol's lines read and turned into
sacct's. Starting Slurm itself is not tested here (harness.py run, minutes a case)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sitesim.slurm.conf import expand_hostlist
from validation.slurm.local_slurm import Node, node_lines
from validation.slurm.records import SACCT_FIELDS, kept_scontrol, parse_sacct, sacct_from_scontrol
from validation.slurm.workload import SleepJob, read_workload

#: One job as ``scontrol show job -o`` prints it (22.05.8; fields cut).
SCONTROL = (
    "JobId=7 JobName=j07 UserId=simu1(999) GroupId=root(0) Account=a1 QOS=normal "
    "Priority=4294901753 JobState=COMPLETED Reason=None ExitCode=0:0 TimeLimit=00:08:00 "
    "SubmitTime=2026-11-27T07:26:52 EligibleTime=2026-11-27T07:26:52 "
    "StartTime=2026-11-27T07:26:58 EndTime=2026-11-27T07:29:53 Scheduler=Backfill "
    "Partition=batch NodeList=n[1-2] NumNodes=2 NumCPUs=40 NumTasks=40 "
    "TRES=cpu=40,mem=40000M,node=2,billing=40,gres/gpu=2 WorkDir=/tmp\n"
)


def test_each_node_gets_a_line_of_its_own_with_its_address():
    conf = (
        "NodeName=DEFAULT CPUs=4\n"
        "PartitionName=p Nodes=ALL\n"
        "NodeName=n[1-2] CPUs=8 Gres=gpu:a100:2 # two\n"
        "NodeName=m1 CPUs=8\n"
    )
    lines, nodes = node_lines(conf, expand_hostlist, lambda k: f"Port={100 + k}")
    assert lines == [
        "NodeName=DEFAULT CPUs=4",
        "PartitionName=p Nodes=ALL",  # (in place: the order of the file is kept)
        "NodeName=n1 CPUs=8 Gres=gpu:a100:2 Port=100",
        "NodeName=n2 CPUs=8 Gres=gpu:a100:2 Port=101",
        "NodeName=m1 CPUs=8 Port=102",
    ]
    assert nodes == [Node("n1", [("a100", 2)]), Node("n2", [("a100", 2)]), Node("m1", [])]


def test_the_sbatch_command_of_a_job_asks_what_the_workload_says():
    job = SleepJob("j03", 5, 4, 130, 6, user="simu2", account="a1", gres="gpu:2", mem="8G")
    assert job.sbatch_args(Path("/w/jobs")) == [
        "sbatch", "--parsable", "--job-name=j03", "--ntasks=4", "--time=6",
        "--output=/dev/null", "--error=/dev/null", "--chdir=/w/jobs", "--uid=simu2",
        "--account=a1", "--gres=gpu:2", "--mem=8G", "--wrap=sleep 130",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("j01,0,4,120,2,,,,,,", "runtime < limit"),
        ("j01,0,4,x,3,,,,,,", "invalid literal"),
    ],
)
def test_a_bad_workload_line_is_named(tmp_path, row, message):
    path = tmp_path / "workload.csv"
    header = "name,offset,cpus,runtime,limit,user,account,partition,gres,mem,constraint"
    path.write_text(f"{header}\n{row}\n")
    with pytest.raises(ValueError, match=f"workload.csv:2: .*{message}"):
        read_workload(path)


def test_scontrol_lines_become_sacct_lines():
    (job,) = parse_sacct(sacct_from_scontrol(SCONTROL))
    assert list(job) == list(SACCT_FIELDS)
    assert job["User"] == "simu1"
    assert (job["Submit"], job["Start"], job["End"]) == (
        "2026-11-27T07:26:52", "2026-11-27T07:26:58", "2026-11-27T07:29:53"
    )  # fmt: skip
    assert (job["NNodes"], job["NCPUS"], job["Timelimit"]) == ("2", "40", "00:08:00")
    assert job["AllocTRES"] == "billing=40,cpu=40,gres/gpu=2,mem=40000M,node=2"  # (sorted)
    assert job["ReqMem"] == "40000M"


def test_gpus_without_a_gpu_tres_come_from_tres_per_node():
    """Without slurmdbd slurmctld tracks no GPU TRES: the GPUs are those asked per node."""
    line = SCONTROL.replace(",gres/gpu=2", "").replace(
        " WorkDir", " TresPerNode=gres:gpu:3 WorkDir"
    )
    (job,) = parse_sacct(sacct_from_scontrol(line))
    assert job["AllocTRES"] == "billing=40,cpu=40,gres/gpu=6,mem=40000M,node=2"  # (3 a node)


def test_the_kept_scontrol_fields():
    kept = kept_scontrol(SCONTROL)
    assert "GroupId" not in kept and "WorkDir" not in kept
    assert kept.startswith("JobId=7 JobName=j07 UserId=simu1(999) Account=a1")
