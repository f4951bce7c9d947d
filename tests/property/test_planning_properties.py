"""Planning-based scheduling and dynP on random workloads (Hypothesis)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sitesim.engine.job import MIN_ESTIMATE
from sitesim.schedulers import Conservative, DynP, Planning
from sitesim.schedulers.planning import DECIDERS, METRICS, TUNING
from tests.conftest import run_jobs
from tests.property.test_invariants import Workload, schedule, workloads


def exact(workload: Workload) -> Workload:
    """The workload with every job running to its estimate. Estimates are at least
    MIN_ESTIMATE, so a shorter job is lengthened to it: a zero-length job with a 1 s estimate
    ends before its estimate, and then the two schedulers differ by design
    (``test_a_zero_length_job_is_compressed_in_reservation_order_and_replanned_in_fcfs_order``
    in tests/model/test_event_order.py)."""
    procs, jobs = workload
    return procs, [
        (submit, size, max(runtime, MIN_ESTIMATE), max(runtime, MIN_ESTIMATE))
        for submit, size, runtime, _ in jobs
    ]


@given(workloads(max_jobs=40))
def test_planning_fcfs_starts_jobs_as_conservative_backfilling_when_estimates_are_exact(
    workload: Workload,
) -> None:
    procs, jobs = exact(workload)
    assert schedule(jobs, procs, Planning("FCFS")) == schedule(jobs, procs, Conservative())


@given(
    workloads(max_jobs=40),
    st.sampled_from(METRICS),
    st.sampled_from(DECIDERS),
    st.sampled_from(TUNING),
    st.sampled_from(["FCFS", "SJF"]),
)
def test_dynp_counts_every_start_and_every_switch(
    workload: Workload, metric: str, decider: str, tuning: str, preferred: str
) -> None:
    procs, jobs = workload
    policy = DynP(metric=metric, decider=decider, tuning=tuning, preferred=preferred)
    run_jobs(jobs, procs, policy)
    stats = policy.stats()
    assert sum(stats[f"started_{p}"] for p in ("FCFS", "SJF", "LJF")) == len(jobs)
    # at most one step per pass with arrivals (half), or with arrivals or early ends (full)
    most = len(jobs) if tuning == "half" else 2 * len(jobs)
    assert stats["policy_switches"] <= stats["self_tuning_steps"] <= most
