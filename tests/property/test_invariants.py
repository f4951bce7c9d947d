"""Invariants of every scheduler on random workloads (Hypothesis)."""

from __future__ import annotations

from unittest.mock import patch

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from sitesim.engine import machine
from sitesim.engine.job import JobState
from sitesim.schedulers import CREASY, EASY, ECON, REGISTRY, Conservative, create, queue_order
from sitesim.schedulers.base import Scheduler
from tests.conftest import run_jobs

Workload = tuple[int, list[tuple[float, int, float, float]]]


@st.composite
def workloads(draw: st.DrawFn, max_jobs: int = 30) -> Workload:
    """A machine size and jobs (submit, size, runtime, estimate) with many ties and kills."""
    procs = draw(st.integers(1, 16))
    n = draw(st.integers(1, max_jobs))
    jobs = []
    for _ in range(n):
        submit = draw(st.sampled_from([0.0, 0.0, 5.0, 10.0]) | st.floats(0, 300).map(round))
        size = draw(st.integers(1, procs))
        runtime = float(draw(st.integers(0, 120)))
        estimate = draw(
            st.sampled_from([runtime, runtime * 2, runtime + 1]) | st.integers(0, 150).map(float)
        )
        jobs.append((submit, size, runtime, estimate))
    return procs, jobs


def max_busy(records: np.ndarray) -> int:
    """Most processors in use at any instant; a job's interval is [start, end)."""
    events = sorted(
        [(s, 1, size) for s, size in zip(records["start"], records["size"], strict=True)]
        + [(e, 0, -size) for e, size in zip(records["end"], records["size"], strict=True)]
    )  # at equal times ends (0) come before starts (1)
    busy = peak = 0
    for _, _, delta in events:
        busy += delta
        peak = max(peak, busy)
    return peak


@given(workloads(), st.sampled_from(sorted(REGISTRY)))
def test_every_scheduler_keeps_the_basic_invariants(workload: Workload, name: str) -> None:
    procs, jobs = workload
    rec = run_jobs(jobs, procs, create(name)).records
    assert len(rec) == len(jobs)
    assert max_busy(rec) <= procs  # no over-allocation
    assert (rec["start"] >= rec["submit"]).all()  # no job starts before it is submitted
    ended = (rec["state"] == JobState.COMPLETED) | (rec["state"] == JobState.KILLED)
    assert ended.all()  # every job ends
    assert np.array_equal(rec["end"] - rec["start"], rec["runtime"])
    cut = np.minimum(rec["estimate"], [j[2] for j in sorted(jobs, key=lambda j: j[0])])
    assert np.allclose(rec["runtime"], cut)  # a job runs its runtime, cut at its estimate


class RecordingEASY(EASY):
    """EASY that remembers every reservation it made: (job, shadow time)."""

    def __init__(self) -> None:
        super().__init__()
        self.made: list[tuple[int, float]] = []

    def backfill(self, now, free, running, queue, started):  # type: ignore[no-untyped-def]
        super().backfill(now, free, running, queue, started)
        assert self.reservation is not None
        self.made.append((self.reservation[0].id, self.reservation[1]))


@given(workloads(max_jobs=40))
def test_easy_never_delays_its_reserved_job_past_the_shadow_time(workload: Workload) -> None:
    procs, jobs = workload
    policy = RecordingEASY()
    rec = run_jobs(jobs, procs, policy).records
    start = dict(zip(rec["id"].tolist(), rec["start"].tolist(), strict=True))
    for jid, shadow in policy.made:
        assert start[jid] <= shadow


@given(workloads(max_jobs=40))
def test_conservative_never_delays_a_job_past_its_first_reservation(workload: Workload) -> None:
    procs, jobs = workload
    policy = Conservative()
    rec = run_jobs(jobs, procs, policy).records
    for jid, start in zip(rec["id"].tolist(), rec["start"].tolist(), strict=True):
        assert start <= policy.promised[jid]


def schedule(jobs: list[tuple[float, int, float, float]], procs: int, policy: Scheduler) -> list:  # type: ignore[type-arg]
    rec = run_jobs(jobs, procs, policy).records
    return list(zip(rec["id"].tolist(), rec["start"].tolist(), strict=True))


@given(workloads(max_jobs=40))
def test_creasy_with_alpha_zero_is_exactly_easy(workload: Workload) -> None:
    procs, jobs = workload
    assert schedule(jobs, procs, CREASY(alpha=0)) == schedule(jobs, procs, EASY())


@given(workloads(max_jobs=40), st.sampled_from(["const", "prop", "inv"]))
def test_econ_with_zero_income_is_exactly_easy(workload: Workload, transfer: str) -> None:
    procs, jobs = workload
    econ = schedule(jobs, procs, ECON(transfer, income=0))
    assert econ == schedule(jobs, procs, EASY())


@given(workloads(), st.sampled_from(sorted(REGISTRY)))
def test_same_workload_same_schedule(workload: Workload, name: str) -> None:
    procs, jobs = workload
    assert schedule(jobs, procs, create(name)) == schedule(jobs, procs, create(name))


@given(workloads())
def test_fcfs_starts_jobs_in_arrival_order(workload: Workload) -> None:
    procs, jobs = workload
    starts = [s for _, s in schedule(jobs, procs, create("FCFS"))]
    assert starts == sorted(starts)


def _arrival(job: object, now: float) -> float:
    """A constant priority: EASY's own order, without its arrival-order shortcuts."""
    return 0.0


@given(
    workloads(max_jobs=40),
    st.sampled_from([0, 3, 64]),
    st.sampled_from([1, 3, 1024]),
    st.sampled_from([0, 1024]),
)
def test_easy_shortcuts_decide_exactly_as_the_plain_pass(
    workload: Workload, screen: int, chunk: int, merge: int
) -> None:
    # the NumPy screen of long queues (forced on with a small threshold, in chunks of a few
    # jobs), the reuse of a blocked pass and the shadow time read from the running jobs with
    # those the pass started merged in (forced on) or inserted into a copy must start every
    # job when the plain pass does
    procs, jobs = workload
    with (
        patch.object(queue_order, "SCREEN_QUEUE", screen),
        patch.object(machine, "SCREEN_QUEUE", screen),
        patch.object(machine, "SCREEN_CHUNK", chunk),
        patch.object(machine, "MERGE_RUNNING", merge),
    ):
        fast = run_jobs(jobs, procs, EASY()).records
    plain = run_jobs(jobs, procs, EASY(priority=_arrival)).records
    assert np.array_equal(fast["start"], plain["start"])


@given(workloads(max_jobs=40), st.sampled_from(["FCFS", "EASY", "CREASY", "PRIO", "SJF"]))
def test_skipping_idle_passes_changes_no_schedule(workload: Workload, name: str) -> None:
    # the site does not ask these policies when no processor is free or no job waits
    procs, jobs = workload
    skipped = run_jobs(jobs, procs, create(name)).records
    asked = create(name)
    asked.skip_idle_passes = False  # type: ignore[misc]  # (an instance: ask every pass)
    assert np.array_equal(skipped["start"], run_jobs(jobs, procs, asked).records["start"])


def test_a_new_select_does_not_inherit_skipping_idle_passes() -> None:
    class Noisy(EASY):
        def select(self, now: float, free: int, running: list) -> list:  # type: ignore[type-arg]
            return EASY.select(self, now, free, running)

    class Quiet(EASY):
        skip_idle_passes = True

        def select(self, now: float, free: int, running: list) -> list:  # type: ignore[type-arg]
            return EASY.select(self, now, free, running)

    assert EASY.skip_idle_passes and Quiet.skip_idle_passes and not Noisy.skip_idle_passes
