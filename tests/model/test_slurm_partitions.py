"""A partition's order and access keys in slurm.conf, as Slurm 22.05.8 applies them:
``PriorityTier`` orders the queue before priority (job_scheduler.c:2095-2120); a job whose
account, QOS or node count the partition does not allow never runs there (node_scheduler.c:
2374-2392, job_scheduler.c:742-745): sitesim refuses it at submission, counted by reason."""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sitesim.engine.job import JobState
from sitesim.engine.site import Site
from sitesim.models.trace_user import TraceUser, TraceWorkload
from sitesim.schedulers.slurm import SLURM, SlurmConfigWarning
from sitesim.slurm.conf import PartitionPolicy, SlurmConfError, read_slurm_conf

#: One 4-core node in two partitions; the main scheduler at every pass.
CONF = """\
NodeName=n1 CPUs=4
PartitionName=low Nodes=n1 Default=YES {low}
PartitionName=high Nodes=n1 {high}
"""


def run(
    tmp_path: Path, jobs: list[tuple[float, int, float, int, int]], low: str = "", high: str = "",
    **scheduler: Any,
) -> tuple[np.ndarray, dict[str, int]]:  # fmt: skip
    """Records (by submission) of ``jobs`` (submit, size, runtime, partition: 1 low / 2 high,
    user), and the submissions refused, by reason."""
    conf = tmp_path / "slurm.conf"
    conf.write_text(CONF.format(low=low, high=high), encoding="utf-8")
    platform = read_slurm_conf(conf).platform
    assert platform is not None
    site = Site(platform, SLURM(conf=str(conf), batch_sched_delay=-1, **scheduler))
    submit, size, runtime, part, user = (list(c) for c in zip(*jobs, strict=True))
    workload = TraceWorkload.from_jobs(submit, size, runtime, runtime, user)
    site.add_user(TraceUser(dataclasses.replace(workload, partition=np.array(part))))
    return np.sort(site.run().records, order="submit"), site.rejected


#: A job holding the node to 100 s, then a job of partition low (1 s) and one of high (2 s).
QUEUE = [(0.0, 4, 100.0, 1, 1), (1.0, 4, 10.0, 1, 1), (2.0, 4, 10.0, 2, 1)]


def test_a_higher_priority_tier_goes_first(tmp_path: Path) -> None:
    assert run(tmp_path, QUEUE)[0]["start"].tolist() == [0.0, 100.0, 110.0]  # by submission
    tiered, _ = run(tmp_path, QUEUE, high="PriorityTier=2")
    assert tiered["start"].tolist() == [0.0, 110.0, 100.0]


def test_max_nodes_refuses_a_job_that_needs_more(tmp_path: Path) -> None:
    conf = "NodeName=n[1-2] CPUs=4\nPartitionName=p Nodes=n[1-2] Default=YES MaxNodes=1\n"
    path = tmp_path / "slurm.conf"
    path.write_text(conf, encoding="utf-8")
    platform = read_slurm_conf(path).platform
    assert platform is not None
    site = Site(platform, SLURM(conf=str(path)))
    site.add_user(TraceUser(TraceWorkload.from_jobs([0.0, 0.0], [4, 8], [10.0, 10.0])))
    records = site.run().records
    assert records["size"].tolist() == [4]
    assert site.rejected == {"more nodes than the partition's MaxNodes": 1}


def test_allow_accounts_refuses_the_jobs_of_other_accounts(tmp_path: Path) -> None:
    jobs = [(0.0, 1, 10.0, 2, 1), (0.0, 1, 10.0, 2, 2), (0.0, 1, 20.0, 1, 2)]
    accounts = {"physics": {"users": [1]}, "chemistry": {"users": [2]}}
    records, refused = run(tmp_path, jobs, high="AllowAccounts=physics", accounts=accounts)
    # user 2's job in high is refused; its job in low and user 1's in high run
    ran = sorted(zip(records["user"].tolist(), records["runtime"].tolist(), strict=True))
    assert ran == [(1, 10.0), (2, 20.0)]
    assert refused == {"account not in the partition's AllowAccounts": 1}


def test_allow_accounts_without_accounts_is_warned_and_not_applied(tmp_path: Path) -> None:
    with pytest.warns(SlurmConfigWarning, match="AllowAccounts/DenyAccounts of partition high"):
        records, _ = run(tmp_path, [(0.0, 1, 10.0, 2, 1)], high="AllowAccounts=physics")
    assert records["state"].tolist() == [JobState.COMPLETED]


def test_allow_qos_refuses_other_qos_and_deny_qos_only_without_it(tmp_path: Path) -> None:
    jobs = [(0.0, 1, 10.0, 2, 1)]  # (every job runs under the QOS "normal" here)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        allowed = run(tmp_path, jobs, high="AllowQos=normal,high")[1]
        refused = run(tmp_path, jobs, high="AllowQos=high")[1]
        denied = run(tmp_path, jobs, high="DenyQos=normal")[1]
        ignored = run(tmp_path, jobs, high="AllowQos=ALL DenyQos=normal")[1]
    assert allowed == {}
    assert refused == {"QOS not in the partition's AllowQos": 1}
    assert denied == ignored == {"QOS in the partition's DenyQos": 1}  # (ALL is no list)


def test_partition_keys_read_and_bad_values_named(tmp_path: Path) -> None:
    path = tmp_path / "slurm.conf"
    path.write_text(
        CONF.format(low="", high="PriorityTier=3 MaxNodes=UNLIMITED AllowAccounts=a,b"),
        encoding="utf-8",
    )
    conf = read_slurm_conf(path)
    assert conf.partition_policies == {
        "high": PartitionPolicy(tier=3, allow_accounts=frozenset({"a", "b"}))
    }
    assert not any("PriorityTier" in w or "AllowAccounts" in w for w in conf.warnings)
    for bad, message in [
        ("PriorityTier=70000", "slurm.conf:3: PriorityTier: 70000 is over 65533"),
        ("MaxNodes=many", "slurm.conf:3: MaxNodes: 'many' is not a whole number"),
        ("AllowAccounts=a,,b", "slurm.conf:3: AllowAccounts: 'a,,b': an empty name"),
    ]:
        path.write_text(CONF.format(low="", high=bad), encoding="utf-8")
        with pytest.raises(SlurmConfError, match=message):
            read_slurm_conf(path)
