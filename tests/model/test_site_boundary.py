"""The site trusts neither its users nor its scheduler: what crosses the boundary is checked."""

from __future__ import annotations

import dataclasses
import math

import pytest
from simpy import Interrupt

import sitesim
from sitesim.engine.job import Job, JobState
from sitesim.engine.site import AFTER_HORIZON, RecordBlocks, Site
from sitesim.errors import InvalidJobError, SchedulerError
from sitesim.models.trace_user import TraceUser, TraceWorkload
from sitesim.models.utility import UtilityFunction
from sitesim.schedulers import FCFS, Scheduler, create


class Endless:
    """A custom user that ignores the horizon: a job every 100 s, forever."""

    def __init__(self, size: int = 1, runtime: float = 50.0, catch: bool = False) -> None:
        self.size, self.runtime, self.catch = size, runtime, catch

    def run(self, site):  # type: ignore[no-untyped-def]
        while True:
            try:
                site.submit(Job(self.size, self.runtime, max(self.runtime, 1.0)))
                yield site.env.timeout(100)
            except Interrupt:
                if not self.catch:
                    raise
                yield site.env.timeout(100)  # keeps going after the horizon


def test_a_user_that_never_stops_ends_at_the_horizon():
    site = Site(4, FCFS())
    site.add_user(Endless())
    result = site.run(until=1000)
    assert [job.submit for job in site.jobs] == [100.0 * k for k in range(10)]
    assert (result.records["state"] == JobState.COMPLETED).all()
    assert site.now == 1000.0  # the run ends at the horizon (the last job ended at 950)


def test_a_user_that_catches_the_stop_cannot_submit_after_the_horizon():
    site = Site(4, FCFS())
    site.add_user(Endless(runtime=1500.0, catch=True))
    result = site.run(until=1000)
    assert len(site.jobs) == 10 and (result.records["submit"] < 1000).all()
    # it kept trying every 100 s until the machine drained, and the run ended there
    assert site.now == result.records["end"].max() == 4600.0
    assert result.rejected == {AFTER_HORIZON: 36}  # at 1100, 1200, ..., 4600
    assert result.summary.jobs_skipped == 0  # refusals after the horizon are not skipped jobs


@pytest.mark.parametrize(
    ("job", "reason"),
    [
        (Job(9, 10.0, 10.0), "larger than the machine"),
        (Job(0, 10.0, 10.0), "size below 1 or fractional"),
        (Job(1.5, 10.0, 10.0), "size below 1 or fractional"),  # type: ignore[arg-type]
        (Job(1, -5.0, 10.0), "unknown or negative runtime"),
        (Job(1, math.nan, 10.0), "unknown or negative runtime"),
        (Job(1, 10.0, 0.0), "estimate below 1 s or not finite"),
        (Job(1, 10.0, math.inf), "estimate below 1 s or not finite"),
    ],
)
def test_an_impossible_job_is_counted_not_fatal(job, reason):
    class OneBadJob:
        def run(self, site):  # type: ignore[no-untyped-def]
            site.submit(Job(2, 10.0, 10.0))
            assert site.submit(job) is False
            yield site.completion(job)  # fires at once: the user is not left hanging
            site.submit(Job(1, 10.0, 10.0))

    site = Site(8, FCFS())
    site.add_user(OneBadJob())
    result = site.run(until=100)
    assert job.state is JobState.REJECTED and job.id == 0
    assert len(site.jobs) == 2 and result.rejected == {reason: 1}
    assert result.summary.jobs_skipped == 1 and result.summary.jobs == 2


def test_strict_mode_stops_at_an_impossible_job_with_a_clear_message():
    site = Site(8, FCFS(), strict=True)
    site.add_user(Endless(size=9))
    with pytest.raises(InvalidJobError, match=r"job of user 0 submitted at t = 0 s needs 9 "):
        site.run(until=1000)


def test_an_oversized_job_from_a_custom_user_in_a_site_level_run():
    def factory(uid, profile, procs, seed):  # type: ignore[no-untyped-def]
        return Endless(size=procs + 1 if uid == 1 else 1)

    result = sitesim.simulate(3, "EASY", model=factory, procs=16, days=1, warmup_days=0)
    assert result.config is None  # a custom user model: not reproducible from a configuration
    assert result.rejected == {"larger than the machine": 864}
    assert result.summary.jobs == 2 * 864 and result.summary.jobs_skipped == 864


class Forgetful(FCFS):
    """Returns the jobs to start and leaves them in its queue: the site dequeues them."""

    name = "FORGETFUL"

    def select(self, now, resources):  # type: ignore[no-untyped-def]
        return [job for job in self.queue if job.size <= resources.free][:1]


class Greedy(Scheduler):
    name = "GREEDY"

    def select(self, now, resources):  # type: ignore[no-untyped-def]
        return list(self.queue)  # ignores the free processors


class Repeater(Scheduler):
    """Starts every job it ever saw, again and again."""

    name = "REPEATER"

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[Job] = []

    def submit(self, job, now):  # type: ignore[no-untyped-def]
        super().submit(job, now)
        self.seen.append(job)

    def select(self, now, resources):  # type: ignore[no-untyped-def]
        return self.seen[-1:]


class Lazy(Scheduler):
    name = "LAZY"

    def select(self, now, resources):  # type: ignore[no-untyped-def]
        return []


def workload(n: int = 3, size: int = 2):  # type: ignore[no-untyped-def]
    return TraceWorkload.from_jobs([10.0 * k for k in range(n)], [size] * n, [25.0] * n)


def test_a_scheduler_need_not_dequeue_what_it_starts():
    site = Site(2, Forgetful())
    site.add_user(TraceUser(workload()))
    result = site.run()
    assert result.records["start"].tolist() == [0.0, 25.0, 50.0]
    assert site.scheduler.queue == []


@pytest.mark.parametrize(
    ("scheduler", "message"),
    [
        (Greedy(), "scheduler GREEDY: at t = 10 s job 3 was started on 2 processors when 0 "),
        (Repeater(), r"scheduler REPEATER: at t = 25 s job 3 \(user 0\) cannot be started: "),
        (Lazy(), "scheduler LAZY leaves 3 jobs waiting on an idle machine after the last"),
    ],
)
def test_a_scheduler_that_breaks_the_contract_is_named(scheduler, message):
    site = Site(4, scheduler)
    site.add_user(TraceUser(TraceWorkload.from_jobs([0, 0, 10], [2, 2, 2], [25, 25, 25])))
    with pytest.raises(SchedulerError, match=message):
        site.run()


def test_a_stalled_scheduler_is_found_at_the_horizon_too():
    site = Site(4, Lazy())
    site.add_user(Endless())
    with pytest.raises(SchedulerError, match="LAZY leaves 10 jobs waiting on an idle machine"):
        site.run(until=1000)


def test_a_scheduler_returning_a_job_twice_is_named():
    class Twice(Scheduler):
        name = "TWICE"

        def select(self, now, resources):  # type: ignore[no-untyped-def]
            return self.queue[:1] * 2

    site = Site(8, Twice())
    site.add_user(TraceUser(workload(1, 1)))
    with pytest.raises(SchedulerError, match=r"TWICE: at t = 0 s job 1 .*returned it twice\)$"):
        site.run()


def test_an_open_replay_that_retires_ended_jobs_gives_the_same_result(monkeypatch):
    # blocks of 3 ended jobs become records early; records, metrics and utility texts match
    monkeypatch.setattr(RecordBlocks, "BLOCK", 3)
    n = 20
    work = TraceWorkload.from_jobs(
        [5.0 * k for k in range(n)], [1 + k % 3 for k in range(n)], [7.0 + k % 5 for k in range(n)]
    )
    value = UtilityFunction.of([0.0, 100.0], [50.0, 0.0])
    work = dataclasses.replace(work, utility=tuple(value if k % 4 else None for k in range(n)))
    results = []
    for keep in (True, False):
        site = Site(3, create("EASY"), keep_jobs=keep)
        site.add_user(TraceUser(work))
        results.append(site.run())
    kept, retired = results
    assert kept.records.tobytes() == retired.records.tobytes()
    assert repr(kept.summary) == repr(retired.summary)  # (NaN fields: compared as text)
    assert kept.utility == retired.utility
    assert len(kept.utility) == 15


class Shrinker(FCFS):
    """Starts each job on one processor, whatever it asked for."""

    name = "SHRINKER"

    def select(self, now, resources):  # type: ignore[no-untyped-def]
        for job in self.queue:
            job.size = 1
        return super().select(now, resources)


class Inventor(FCFS):
    """Starts a job it made up, never submitted."""

    name = "INVENTOR"

    def select(self, now, resources):  # type: ignore[no-untyped-def]
        return [Job(1, 10.0, 10.0, user=7)]


def test_a_scheduler_that_starts_a_job_never_submitted_is_named():
    site = Site(4, Inventor())
    site.add_user(TraceUser(workload(1, 1)))
    message = r"^scheduler INVENTOR: at t = 0 s job 0 \(user 7\) cannot be started: it was never"
    with pytest.raises(SchedulerError, match=message):
        site.run()


class Overbooker(FCFS):
    """Overrides the checked pass and starts every waiting job."""

    name = "OVERBOOKER"

    def allocate(self, now, resources):  # type: ignore[no-untyped-def]
        started, self.queue = self.queue, []
        return started


def test_a_scheduler_that_changes_a_job_is_named():
    site = Site(128, Shrinker())
    site.add_user(TraceUser(TraceWorkload.from_jobs([0.0, 5.0], [128, 64], [100.0, 100.0])))
    message = r"^scheduler SHRINKER: at t = 0 s job 1 \(user 0\) has size 1 \(submitted with 128\)"
    with pytest.raises(SchedulerError, match=message):
        site.run()


def test_an_overridden_allocation_that_overbooks_is_named():
    site = Site(4, Overbooker())
    site.add_user(TraceUser(TraceWorkload.from_jobs([0.0, 0.0, 0.0], [2, 2, 2], [9.0] * 3)))
    message = "^scheduler OVERBOOKER: at t = 0 s job 3 was started on 2 processors when 0 were"
    with pytest.raises(SchedulerError, match=message):
        site.run()


def test_a_scheduler_object_serves_one_site_only():
    scheduler = create("ECON")
    Site(8, scheduler)
    with pytest.raises(SchedulerError, match="ECON scheduler object already served a site"):
        Site(8, scheduler)
