"""Exact event logs on tiny sites: the same-instant ordering every scheduler relies on."""

from __future__ import annotations

import pytest

from sitesim.engine.job import Job, JobState
from sitesim.engine.site import Site
from sitesim.models.trace_user import TraceUser, TraceWorkload
from sitesim.results.timeline import busy
from sitesim.schedulers import EASY, FCFS, Conservative, Planning
from tests.conftest import run_jobs


def log(result):  # type: ignore[no-untyped-def]
    r = result.records
    return [
        (int(i), float(s), float(e)) for i, s, e in zip(r["id"], r["start"], r["end"], strict=True)
    ]


def test_freed_processors_are_reused_at_the_same_instant():
    # A holds all 4 processors until t = 10; B starts at 10, not later
    result = run_jobs([(0, 4, 10), (0, 4, 5)], procs=4, scheduler=FCFS())
    assert log(result) == [(1, 0, 10), (2, 10, 15)]
    times, levels = busy(result.records)
    assert dict(zip(times.tolist(), levels.tolist(), strict=True)) == {0.0: 4, 10.0: 4, 15.0: 0}
    # (never 8 at t = 10)


def test_arrival_and_termination_at_one_instant_share_one_pass():
    # at t = 10: A ends, C arrives; the single pass sees both, FCFS starts B (older) then C
    jobs = [(0, 2, 10), (0, 2, 7), (1, 2, 3), (10, 1, 4)]
    result = run_jobs(jobs, procs=4, scheduler=FCFS())
    assert log(result) == [(1, 0, 10), (2, 0, 7), (3, 7, 10), (4, 10, 14)]


def test_one_allocation_pass_per_instant():
    site = Site(8, FCFS())
    work = TraceWorkload.from_jobs([0, 0, 0, 0, 5], [2, 2, 2, 2, 1], [10, 10, 20, 20, 1])
    site.add_user(TraceUser(work))
    site.run()
    # instants with arrivals or ends: 0, 5, 6, 10, 20 -> five passes, not one per event
    assert site.passes == 5


def test_zero_length_job_ends_after_the_pass_and_triggers_another():
    result = run_jobs([(0, 4, 0), (0, 4, 3)], procs=4, scheduler=FCFS())
    assert log(result) == [(1, 0, 0), (2, 0, 3)]


def test_jobs_are_killed_at_their_estimate():
    result = run_jobs([(0, 1, 100, 50), (0, 1, 40, 50)], procs=1, scheduler=FCFS())
    assert log(result) == [(1, 0, 50), (2, 50, 90)]
    assert result.records["state"].tolist() == [JobState.KILLED, JobState.COMPLETED]


def test_easy_backfills_on_a_live_site():
    # 4 procs: A (3, est 100) runs; B (4) must wait for A; C (1, est 50) backfills at t = 1
    jobs = [(0, 3, 100), (1, 4, 10), (1, 1, 50), (2, 1, 200)]
    result = run_jobs(jobs, procs=4, scheduler=EASY())
    # D (est 200) would end after the shadow time t = 100 and there are no extra processors
    assert log(result) == [(1, 0, 100), (2, 100, 110), (3, 1, 51), (4, 110, 310)]


class Resubmitter:
    """Waits for each job and submits the next one the instant it ends (zero think time)."""

    def __init__(self, count: int) -> None:
        self.count = count

    def run(self, site: Site):  # type: ignore[no-untyped-def]
        for _ in range(self.count):
            job = Job(size=2, runtime=10.0, estimate=10.0, user=1)
            site.submit(job)
            ended = yield site.completion(job)
            assert ended is job and site.now == job.end


def test_a_job_submitted_on_a_completion_is_in_that_instants_pass():
    site = Site(2, FCFS())
    site.add_user(Resubmitter(3))
    result = site.run()
    assert log(result) == [(1, 0, 10), (2, 10, 20), (3, 20, 30)]
    assert site.passes == 4  # 0, 10, 20 and the final end at 30


def test_horizon_stops_submissions_then_the_machine_drains():
    site = Site(1, FCFS())
    site.add_user(TraceUser(TraceWorkload.from_jobs([0, 10, 20, 30], [1] * 4, [25] * 4)))
    result = site.run(until=15)
    assert log(result) == [(1, 0, 25), (2, 25, 50)]
    assert (result.summary.window_start_d, result.summary.window_end_d) == (0.0, 15.0 / 86400)


def test_progress_reports_without_changing_the_run():
    jobs = [(t, 1 + t % 3, 7 + t % 11) for t in range(0, 400, 3)]
    plain = run_jobs(jobs, procs=4, scheduler=EASY())
    seen: list[float] = []
    site = Site(4, EASY())
    w = TraceWorkload.from_jobs(*zip(*jobs, strict=True))
    site.add_user(TraceUser(w))
    tracked = site.run(progress=seen.append, progress_step=50.0)
    assert len(seen) >= 7 and seen == sorted(seen)
    assert log(tracked) == log(plain)


def test_simpys_own_methods_give_the_same_runs(monkeypatch):  # type: ignore[no-untyped-def]
    # the engine's environment keeps the clock as an attribute, pushes job ends and trace
    # arrivals onto SimPy's queue and runs the loop itself; the public one (should SimPy keep
    # another layout) goes through SimPy's methods instead
    import sitesim
    from sitesim.engine import event_queue

    def runs():  # type: ignore[no-untyped-def]
        closed = sitesim.run(sitesim.SiteConfig(users=12, days=14, scheduler="EASY", seed=3))
        jobs = [(k * 40 % 900, 1 + k % 8, 30 + k * 37 % 500) for k in range(300)]
        open_ = run_jobs(jobs, procs=8, scheduler=EASY())
        return closed, open_

    fast = runs()
    assert isinstance(Site(4, FCFS()).env, event_queue.Environment)
    monkeypatch.setattr(event_queue, "environment", event_queue.PublicEnvironment)
    assert not isinstance(Site(4, FCFS()).env, event_queue.Environment)
    slow = runs()
    for a, b in zip(fast, slow, strict=True):
        assert len(a.records) > 100
        assert a.records.tobytes() == b.records.tobytes()
        assert a.scheduler_stats == b.scheduler_stats


def test_a_zero_length_job_is_compressed_in_reservation_order_and_replanned_in_fcfs_order():
    """Planning FCFS equals conservative backfilling only while every job runs its estimate.
    Jobs 1, 3, 4, 5 and 6 run 0 s on 1 s estimates (the least), so they end early. After
    jobs 1, 3 and 4 end at t = 0, conservative compresses in order of reservation: job 7
    (reserved at 1) before job 6 (reserved at 2) takes a processor at 0, and job 6, needing 3,
    waits until jobs 2 and 7 end at t = 2. PLAN replans every waiting job in FCFS order:
    job 6 before job 7, at 0 once job 5 has ended; then job 7 at 0 too. Both keep their own
    rules: conservative never moves a job later than its reservation; PLAN gives no promise."""
    jobs = [(0, 1, 0), (0, 1, 2), (0, 1, 0), (0, 1, 0), (0, 1, 0), (0, 3, 0), (0, 1, 2)]
    assert [start for _, start, _ in log(run_jobs(jobs, 4, Conservative()))] == [
        0, 0, 0, 0, 0, 2, 0,
    ]  # fmt: skip
    assert [start for _, start, _ in log(run_jobs(jobs, 4, Planning("FCFS")))] == [0] * 7


@pytest.mark.parametrize("layout", [True, False])
def test_a_site_advanced_step_by_step_runs_as_in_one_go(layout, monkeypatch):
    """Pausing at every hour (and inspecting the queue) changes nothing: the same records as
    one run to the horizon (with the engine's environment and with SimPy's public one)."""
    import numpy as np

    from sitesim.engine import event_queue

    monkeypatch.setattr(event_queue, "_LAYOUT", layout)

    from sitesim.models.users import UserModel
    from sitesim.workload.profile import default_profile

    def site() -> Site:
        s = Site(16, EASY())
        for uid in range(1, 5):
            s.add_user(UserModel().user(uid, default_profile(), 16, seed=3))
        return s

    whole = site().run(until=3 * 86400.0)
    stepped = site()
    seen = []
    for t in range(3600, 3 * 86400, 3600):
        stepped.advance(t)
        assert stepped.now == t
        seen.append(len(stepped.scheduler.queue))
    result = stepped.run(until=3 * 86400.0)
    assert len(result.records) == len(whole.records) > 20
    for name in ("id", "user", "submit", "start", "end", "session", "batch"):
        assert np.array_equal(result.records[name], whole.records[name], equal_nan=True), name
    assert max(seen) > 0  # (jobs were seen waiting)
