"""SLURM's limiting cases (Hypothesis): Slurm's main and backfill schedulers give

- EASY's schedule, with one partition, a backfill cycle at every pass and one reservation per
  partition (``bf_job_part_count_reserve=1``), every other limit lifted, in the same priority
  order (all weights 0: by submission, as EASY);
- conservative backfilling's schedule with no limit at all (jobs that end at their time
  limits: when a job ends early, conservative compresses its schedule in the order of its
  reservations, Slurm plans afresh in priority order);

on processors and, for EASY, on a platform of multi-core nodes in one partition; and the basic
invariants under Slurm's own defaults (a backfill cycle every 30 s, woken by the scheduler).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from sitesim.job import JobState
from sitesim.models.trace_user import TraceUser, TraceWorkload
from sitesim.platform import Platform
from sitesim.schedulers import EASY, SLURM, Conservative
from sitesim.schedulers.base import Scheduler
from sitesim.site import Site
from tests.conftest import run_jobs
from tests.property.test_invariants import Workload, max_busy, workloads

#: Every limit lifted: the whole queue tested by both schedulers, any start time, 1 s steps.
UNLIMITED = {
    "bf_interval": 0,
    "default_queue_depth": 10**9,
    "bf_max_job_test": 10**9,
    "bf_window": 10**9,
    "bf_resolution": 1,
}


def starts(jobs: list[tuple[float, int, float, float]], machine: Any, policy: Scheduler) -> list:  # type: ignore[type-arg]
    if isinstance(machine, int):
        records = run_jobs(jobs, machine, policy).records
    else:
        submit, size, runtime, estimate = (list(column) for column in zip(*jobs, strict=True))
        site = Site(machine, policy)
        site.add_user(TraceUser(TraceWorkload.from_jobs(submit, size, runtime, estimate)))
        records = site.run().records
    return sorted(zip(records["id"].tolist(), records["start"].tolist(), strict=True))


@given(workloads(max_jobs=40))
def test_one_reservation_a_partition_is_easy(workload: Workload) -> None:
    procs, jobs = workload
    slurm = SLURM(bf_job_part_count_reserve=1, **UNLIMITED)  # type: ignore[arg-type]
    assert starts(jobs, procs, slurm) == starts(jobs, procs, EASY())


@given(workloads(max_jobs=40))
def test_no_limit_is_conservative_backfilling(workload: Workload) -> None:
    procs, jobs = workload
    exact = [(submit, size, max(est, 1.0), max(est, 1.0)) for submit, size, _, est in jobs]
    slurm = SLURM(**UNLIMITED)  # type: ignore[arg-type]
    assert starts(exact, procs, slurm) == starts(exact, procs, Conservative())


def nodes(count: int, cores: int, allocation: str) -> Platform:
    return Platform.from_dict(
        {
            "nodes": [{"type": "n", "count": count, "cores": cores}],
            "partitions": [{"name": "all", "nodes": ["n"], "allocation": allocation}],
        }
    )


@given(
    workloads(max_jobs=30),
    st.integers(1, 4),
    st.sampled_from([1, 2, 4]),
    st.sampled_from(["exclusive", "shared"]),
)
def test_one_reservation_a_partition_is_easy_on_nodes(
    workload: Workload, count: int, cores: int, allocation: str
) -> None:
    _, jobs = workload
    platform = nodes(count, cores, allocation)
    jobs = [(s, min(size, count * cores), r, e) for s, size, r, e in jobs]
    slurm = SLURM(bf_job_part_count_reserve=1, **UNLIMITED)  # type: ignore[arg-type]
    assert starts(jobs, platform, slurm) == starts(jobs, platform, EASY())


@given(workloads(), st.sampled_from([{}, {"bf_interval": 0}, {"bf_max_job_test": 1}]))
def test_slurm_keeps_the_basic_invariants(workload: Workload, limits: dict[str, int]) -> None:
    procs, jobs = workload
    rec = run_jobs(jobs, procs, SLURM(**limits)).records  # type: ignore[arg-type]
    assert len(rec) == len(jobs)
    assert max_busy(rec) <= procs
    assert (rec["start"] >= rec["submit"]).all()
    assert np.isin(rec["state"], [JobState.COMPLETED, JobState.KILLED]).all()


class EveryCycle(SLURM):
    """SLURM that never judges a backfill cycle or a recomputation useless: it runs every
    cycle that is due and wakes for every one."""

    def _any_fits(self, res: Any, started: Any) -> bool:
        return True


@given(workloads(max_jobs=40), st.sampled_from([30, 600]))
def test_cycles_that_could_start_nothing_are_skipped_exactly(workload: Workload, step: int) -> None:
    procs, jobs = workload
    settings: dict[str, Any] = {"bf_interval": step, "PriorityWeightAge": 1000,
                                "PriorityWeightJobSize": 100, "PriorityCalcPeriod": 1}  # fmt: skip
    assert starts(jobs, procs, SLURM(**settings)) == starts(jobs, procs, EveryCycle(**settings))
