"""The job state machine."""

from __future__ import annotations

import math

import pytest

from sitesim.engine.job import Job, JobState, JobStateError


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
    with pytest.raises(JobStateError, match=r"^at t = 0 s job 3 \(user 0\) cannot be"):
        getattr(job, steps[-1])(0.0)


@pytest.mark.parametrize("field", ["size", "runtime", "estimate"])
def test_a_job_changed_after_its_submission_cannot_start_or_end(field):
    job = Job(size=4, runtime=10.0, estimate=20.0, id=5, user=2)
    job.mark_submitted(0.0)
    setattr(job, field, 1)
    with pytest.raises(JobStateError, match=rf"^at t = 3 s job 5 \(user 2\) has {field} 1 "):
        job.mark_started(3.0)
    if field == "runtime":
        return  # (a running job's end is already set: its size and estimate are checked)
    started = Job(size=4, runtime=10.0, estimate=20.0, id=6)
    started.mark_submitted(0.0)
    assert started.mark_started(3.0) == 10.0  # (its duration)
    setattr(started, field, 2)
    with pytest.raises(JobStateError, match=rf"^at t = 13 s job 6 \(user 0\) has {field} 2 "):
        started.mark_ended(13.0)
