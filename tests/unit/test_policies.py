"""Scheduling policies on hand-built queues, without SimPy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sitesim.engine.job import Job, JobState
from sitesim.errors import ConfigError
from sitesim.schedulers import (
    CREASY,
    EASY,
    FCFS,
    LJF,
    REGISTRY,
    SCDF,
    SJF,
    Conservative,
    create,
    shadow_time,
)
from sitesim.schedulers.creasy import criticality
from tests.conftest import on_procs


class SecretJob(Job):
    """A job whose actual runtime cannot be read: policies may only use estimates. (The
    transitions read it, so the tests set the states a site would: :func:`as_submitted`,
    :func:`as_started`.)"""

    __slots__ = ("_secret",)

    @property  # type: ignore[override]
    def runtime(self) -> float:
        raise AssertionError("a policy read a job's actual runtime")

    @runtime.setter
    def runtime(self, value: float) -> None:
        self._secret = value


def as_submitted(job: Job, now: float) -> Job:
    """``job`` as the site leaves it when it accepts it at ``now``."""
    job.submit, job.state = now, JobState.WAITING
    return job


def as_started(job: Job, now: float) -> Job:
    """``job`` as the machine leaves it when it starts at ``now``."""
    job.start, job.state = now, JobState.RUNNING
    return job


def waiting(jid: int, size: int, estimate: float, submit: float, cls: type[Job] = SecretJob) -> Job:
    return as_submitted(cls(size=size, runtime=math.nan, estimate=estimate, id=jid), submit)


def queue_of(policy, jobs, now=None):  # type: ignore[no-untyped-def]
    for job in jobs:
        policy.submit(job, job.submit if now is None else now)
    return policy


# The three-job example of schedulers.md: on 10 processors a running job R holds 6 until
# t = 100 (its estimate), leaving room for job 2 or job 3 (4 processors each), not job 1 (8).
R = [(100.0, 99, 6)]


def three_jobs() -> list[Job]:
    return [waiting(1, 8, 100, 1.0), waiting(2, 4, 50, 2.0), waiting(3, 4, 50, 3.0)]


def test_fcfs_head_blocks_everyone():
    policy = queue_of(FCFS(), three_jobs())
    assert policy.allocate(3.0, on_procs(3.0, 4, R)) == []
    assert [j.id for j in policy.queue] == [1, 2, 3]
    # at t = 100 R has ended: job 1 starts; 2 and 3 must wait for it
    assert [j.id for j in policy.allocate(100.0, on_procs(100.0, 10, []))] == [1]
    assert [j.id for j in policy.allocate(200.0, on_procs(200.0, 10, []))] == [2, 3]


def test_easy_reserves_the_head_and_backfills_job_2():
    policy = queue_of(EASY(), three_jobs())
    started = policy.allocate(3.0, on_procs(3.0, 4, R))
    assert [j.id for j in started] == [2]
    assert policy.reservation is not None
    head, shadow = policy.reservation
    assert head.id == 1 and shadow == 100.0
    assert [j.id for j in policy.queue] == [1, 3]


def test_user_aware_order_backfills_the_newest_job_3():
    newest_first = EASY(priority=lambda job, now: job.submit)
    assert [
        j.id for j in queue_of(newest_first, three_jobs()).allocate(3.0, on_procs(3.0, 4, R))
    ] == [3]
    creasy = CREASY(alpha=6000)
    assert [j.id for j in queue_of(creasy, three_jobs()).allocate(3.0, on_procs(3.0, 4, R))] == [3]


def test_easy_backfills_past_the_shadow_on_extra_processors():
    # head needs 8 of 10 at t=100, so 2 processors are extra: a long 2-processor job may run
    policy = queue_of(EASY(), [waiting(1, 8, 100, 0.0), waiting(2, 2, 1000, 0.0)])
    assert [j.id for j in policy.allocate(0.0, on_procs(0.0, 4, R))] == [2]
    # ... but a long 3-processor job would delay the head
    policy = queue_of(EASY(), [waiting(1, 8, 100, 0.0), waiting(2, 3, 1000, 0.0)])
    assert policy.allocate(0.0, on_procs(0.0, 4, R)) == []


def test_easy_counts_jobs_started_in_the_same_pass_for_the_shadow():
    # 10 free: job 1 (6 procs, est 50) starts; job 2 (8) is blocked until job 1's estimate
    jobs = [waiting(1, 6, 50, 0.0), waiting(2, 8, 10, 0.0), waiting(3, 4, 60, 0.0)]
    policy = queue_of(EASY(), jobs)
    assert [j.id for j in policy.allocate(0.0, on_procs(0.0, 10, []))] == [
        1
    ]  # job 3 would end after t=50
    assert policy.reservation is not None and policy.reservation[1] == 50.0


def test_easy_ends_at_shadow_exactly_may_backfill():
    policy = queue_of(EASY(), [waiting(1, 8, 100, 0.0), waiting(2, 4, 97, 0.0)])
    assert [j.id for j in policy.allocate(3.0, on_procs(3.0, 4, R))] == [2]  # ends at 100 = shadow


def test_shadow_time():
    running = [(10.0, 1, 2), (20.0, 2, 3), (30.0, 3, 5)]
    assert shadow_time(4, 1, running) == (20.0, 2)
    assert shadow_time(3, 1, running) == (10.0, 0)
    assert shadow_time(11, 1, running) == (30.0, 0)
    with pytest.raises(RuntimeError):
        shadow_time(12, 1, running)


def test_the_extra_processors_count_every_job_ending_at_the_shadow_time():
    # 2 processors free; two 2-processor jobs end at 100: a 4-processor head is reserved at 100
    # with 2 extra processors (the comparison with pyss found the second job left out)
    running = [(100.0, 1, 2), (100.0, 2, 2), (1000.0, 3, 2)]
    assert shadow_time(4, 2, running) == (100.0, 2)
    assert shadow_time(3, 2, running) == (100.0, 3)
    policy = queue_of(EASY(), [waiting(4, 4, 10, 1.0), waiting(5, 2, 500, 2.0)])
    assert [j.id for j in policy.allocate(2.0, on_procs(2.0, 2, running))] == [
        5
    ]  # on the extra processors


def test_static_orders_sjf_ljf_scdf():
    def jobs() -> list[Job]:
        return [waiting(1, 2, 300, 0.0), waiting(2, 8, 100, 0.0), waiting(3, 1, 200, 0.0)]

    assert [j.id for j in queue_of(SJF(), jobs()).queue] == [2, 3, 1]
    assert [j.id for j in queue_of(LJF(), jobs()).queue] == [1, 3, 2]
    # demand: 600, 800, 200
    assert [j.id for j in queue_of(SCDF(), jobs()).queue] == [3, 1, 2]
    # no backfilling: SJF's head (job 2, 8 procs) blocks the others
    assert queue_of(SJF(), jobs()).allocate(0.0, on_procs(0.0, 4, [])) == []


def test_static_order_ties_stay_fifo():
    jobs = [waiting(i, 1, 100, 0.0) for i in (1, 2, 3)]
    assert [j.id for j in queue_of(SJF(), jobs).queue] == [1, 2, 3]


def test_creasy_priority_formula():
    assert criticality(0.0) == pytest.approx(0.04)
    assert criticality(20.0) == pytest.approx(0.04 / 4)
    policy = CREASY(alpha=1000)
    job = waiting(1, 1, 600, 0.0, cls=Job)  # estimate 10 min
    # at t = 5 min: seniority 5, R = 15 min, criticality 0.04 / 1.75²
    assert policy.job_priority(job, 300.0) == pytest.approx(1000 * 0.04 / 1.75**2 + 5)


def test_creasy_alpha_zero_orders_like_easy():
    jobs = [waiting(i, 1 + i % 3, 100 * i, float(i)) for i in range(1, 8)]
    assert CREASY(alpha=0).ordered(10.0) == []
    policy = queue_of(CREASY(alpha=0), jobs)
    assert policy.ordered(10.0) == policy.queue


def test_creasy_orders_long_and_short_queues_alike():
    """The NumPy path (long queues) and the Python path (short ones) agree, ties included."""
    rng = np.random.default_rng(8)
    policy = CREASY(alpha=4500)
    for i in range(1, 201):
        submit = float(rng.integers(0, 50) * 60)  # many equal submit times
        job = waiting(i, int(rng.integers(1, 64)), float(rng.choice([60, 600, 3600])), submit)
        policy.submit(job, submit)
    now = 3600.0
    numpy_order = [policy.queue[i].id for i in policy._order(now).tolist()]
    python_order = [job.id for job in EASY.ordered(policy, now)]  # by job_priority()
    assert numpy_order == python_order
    assert [job.id for job in policy.ordered(now)] == python_order  # (inlined arithmetic)


def test_conservative_reserves_every_job():
    policy = queue_of(Conservative(), three_jobs(), now=3.0)
    started = policy.allocate(3.0, on_procs(3.0, 4, R))
    assert [j.id for j in started] == [2]  # fits now and ends (t=53) before job 1 needs it
    res = {job.id: t for job, t in policy.reservation.items()}
    # job 1 at R's end; job 3 cannot overlap job 1 (8 + 4 > 10) so it follows it
    assert res == {1: 100.0, 3: 200.0}
    assert policy.promised == {1: 100.0, 2: 3.0, 3: 200.0}


def test_conservative_compresses_when_a_job_ends_early():
    policy = queue_of(Conservative(), three_jobs(), now=3.0)
    (job2,) = policy.allocate(3.0, on_procs(3.0, 4, R))
    as_started(job2, 3.0)
    job2.end = 10.0
    policy.job_ended(job2, 10.0)  # 43 s before its estimate
    started = policy.allocate(10.0, on_procs(10.0, 4, R))
    assert [j.id for j in started] == [3]  # [10, 60) fits before job 1 needs 8 at t=100
    assert {job.id: t for job, t in policy.reservation.items()} == {1: 100.0}


def test_conservative_does_not_disturb_earlier_reservations():
    # job 2 could start now but would collide with job 1's reservation: it waits
    jobs = [waiting(1, 8, 100, 0.0), waiting(2, 4, 200, 0.0)]
    policy = queue_of(Conservative(), jobs, now=0.0)
    assert policy.allocate(0.0, on_procs(0.0, 4, R)) == []
    assert {job.id: t for job, t in policy.reservation.items()} == {1: 100.0, 2: 200.0}


def test_conservative_inserts_an_arrival_by_reservation_then_id():
    # the queue's order is (reservation, id), where insort with that key puts a job; a job
    # with a smaller id than others reserved at the same time (requeued on nodes) goes first
    rng = np.random.default_rng(7)
    for _ in range(200):
        policy = Conservative()
        n = int(rng.integers(0, 12))
        ids = rng.permutation(40)[: n + 1] + 1
        jobs = [waiting(int(i), 1, 10.0, 0.0) for i in ids]
        for job in jobs:
            policy.reservation[job] = float(rng.integers(0, 4))
        queue = sorted(jobs[:n], key=lambda j: (policy.reservation[j], j.id))
        expected = sorted(jobs, key=lambda j: (policy.reservation[j], j.id))
        policy._insert(queue, jobs[n], policy.reservation[jobs[n]])
        assert queue == expected


def drive(policy, jobs, procs, pass_times=()):  # type: ignore[no-untyped-def]
    """A minimal event loop without SimPy: passes at every arrival and every (estimated) end,
    plus at ``pass_times``. Jobs end exactly at their estimates. Returns the start times."""
    pending = sorted(jobs, key=lambda j: j.submit)
    running: list[tuple[float, int, int]] = []
    extra = sorted(pass_times)
    starts = {}
    while pending or running or policy.queue:
        now = min([j.submit for j in pending[:1]] + [r[0] for r in running[:1]] + extra[:1])
        extra = [t for t in extra if t > now]
        while running and running[0][0] <= now:
            end, jid, _ = running.pop(0)
            job = next(j for j in jobs if j.id == jid)
            job.end, job.state = end, JobState.COMPLETED  # (mark_ended reads the runtime)
            policy.job_ended(job, now)
        while pending and pending[0].submit <= now:
            policy.submit(pending.pop(0), now)
        free = procs - sum(size for _, _, size in running)
        for job in policy.allocate(now, on_procs(now, free, running)):
            as_started(job, now)
            starts[job.id] = now
            running.append((now + job.estimate, job.id, job.size))
            running.sort()
        assert sum(size for _, _, size in running) <= procs
    return starts


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_policy_uses_estimates_only(name):
    jobs = [waiting(i, 1 + (7 * i) % 9, 10.0 * i, float(i)) for i in range(1, 12)]
    starts = drive(create(name), jobs, procs=10, pass_times=[13.5, 77.7])
    assert sorted(starts) == list(range(1, 12))
    assert all(starts[j.id] >= j.submit for j in jobs)


def test_conservative_survives_a_late_pass():
    """A pass that comes after a reservation was due re-plans instead of trusting a stale plan."""
    policy = queue_of(Conservative(), three_jobs(), now=3.0)
    (job2,) = policy.allocate(3.0, on_procs(3.0, 4, R))
    as_started(job2, 3.0)
    # R and job 2 ended on time, but no pass came until t = 150: job 1 is overdue
    started = policy.allocate(150.0, on_procs(150.0, 10, []))
    assert [j.id for j in started] == [1]
    assert {job.id: t for job, t in policy.reservation.items()} == {3: 250.0}


def test_registry_and_create():
    assert set(REGISTRY) == {"FCFS", "EASY", "CONSERVATIVE", "CREASY", "SJF", "LJF", "SCDF",
                             "PRIORITY", "PRIO", "FIRSTPRICE", "GA", "PLAN", "DYNP",
                             "ECON", "SLURM"}  # fmt: skip
    assert isinstance(create("creasy", alpha=1500), CREASY)
    assert create("CREASY", alpha=1500).params() == {"alpha": 1500.0}
    assert repr(create("CREASY", alpha=3000)) == "CREASY(alpha=3000.0)"
    with pytest.raises(ConfigError, match="unknown scheduler 'NOPE'; choose one of FCFS"):
        create("NOPE")
    with pytest.raises(ConfigError, match="EASY does not take 'alpha'"):
        create("EASY", alpha=1.0)
    with pytest.raises(ConfigError, match="alpha must be >= 0"):
        create("CREASY", alpha=-1)
