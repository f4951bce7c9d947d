"""A user cancels a waiting job: exact event logs on a tiny site."""

from __future__ import annotations

import math
from typing import Any

import pytest

from sitesim.engine.job import Job, JobState
from sitesim.engine.site import Site
from sitesim.results.report import STATUS_CANCELLED, result_swf
from sitesim.schedulers import EASY, FCFS
from sitesim.workload.swf import COLUMN


class ImpatientUser:
    """Submits a job that fills the machine for 100 s, then at t = 10 a job of the whole
    machine; waits for it at most ``patience`` seconds and cancels it if it has not ended,
    then submits a small job."""

    id = 1

    def __init__(self, patience: float) -> None:
        self.patience = patience
        self.cancelled: bool | None = None

    def run(self, site: Site) -> Any:
        env = site.env
        site.submit(Job(4, 100, 100, user=1))
        yield env.timeout(10)
        wide = Job(4, 50, 50, user=1)
        site.submit(wide)
        done = site.completion(wide)
        yield done | env.timeout(self.patience)
        if not done.triggered:
            self.cancelled = site.cancel(wide)
        site.submit(Job(1, 5, 5, user=1))


@pytest.mark.parametrize("scheduler", [FCFS, EASY])
def test_a_user_cancels_a_waiting_job(scheduler):
    # Job 2 waits behind job 1 (4 processors until 100). At 40 the user gives up and cancels
    # it: it never runs, is recorded as cancelled (SWF status 5), and job 3, submitted at 40,
    # waits only for job 1 (under FCFS it would otherwise wait for job 2 as well).
    site = Site(4, scheduler())
    user = ImpatientUser(patience=30)
    site.add_user(user)
    result = site.run(until=1000)
    jobs = site.jobs
    assert user.cancelled is True
    assert [(j.id, j.state, j.submit, j.end) for j in jobs][1:] == [
        (2, JobState.CANCELLED, 10, 40),  # (a cancelled job "ends" when it is cancelled)
        (3, JobState.COMPLETED, 40, 105),
    ]
    assert math.isnan(jobs[1].start) and jobs[2].start == 100
    assert result.summary.jobs_cancelled == 1 and result.summary.jobs == 2
    swf = result_swf(result)
    assert swf[:, COLUMN["status"]].tolist() == [1, STATUS_CANCELLED, 1]
    assert STATUS_CANCELLED == 5


def test_a_job_that_started_cannot_be_cancelled():
    site = Site(4, FCFS())
    user = ImpatientUser(patience=500)  # job 2 ends at 150, before the user gives up
    site.add_user(user)
    site.run(until=1000)
    assert user.cancelled is None
    job = site.jobs[1]
    assert job.state is JobState.COMPLETED and site.cancel(job) is False
