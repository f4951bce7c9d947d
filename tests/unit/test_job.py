"""The job state machine."""

from __future__ import annotations

import math

import pytest

from sitesim.job import Job, JobState, JobStateError


def test_life_of_a_job():
    job = Job(size=4, runtime=100.0, estimate=120.0, id=7)
    assert job.state is JobState.CREATED and math.isnan(job.submit)
    job.mark_submitted(10.0)
    job.mark_started(15.0)
    job.mark_ended(115.0)
    assert job.state is JobState.COMPLETED
    assert (job.wait, job.response, job.duration, job.killed) == (5.0, 105.0, 100.0, False)


def test_a_job_that_outruns_its_estimate_is_killed_at_it():
    job = Job(size=1, runtime=500.0, estimate=300.0)
    assert job.killed and job.duration == 300.0
    job.mark_submitted(0.0)
    job.mark_started(0.0)
    job.mark_ended(300.0)
    assert job.state is JobState.KILLED


def test_cancel_a_waiting_job():
    job = Job(size=1, runtime=1.0, estimate=1.0)
    job.mark_submitted(0.0)
    job.mark_cancelled(5.0)
    assert job.state is JobState.CANCELLED and job.end == 5.0


@pytest.mark.parametrize(
    "steps",
    [("mark_started",), ("mark_submitted", "mark_submitted"), ("mark_ended",),
     ("mark_submitted", "mark_ended"), ("mark_cancelled",)],
)  # fmt: skip
def test_illegal_transitions_raise(steps):
    job = Job(size=1, runtime=1.0, estimate=1.0, id=3)
    for step in steps[:-1]:
        getattr(job, step)(0.0)
    with pytest.raises(JobStateError, match="job 3 cannot be"):
        getattr(job, steps[-1])(0.0)
