"""Metric formulas on hand-built records."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sitesim.job import Job
from sitesim.metrics import busy_seconds, summarize
from sitesim.records import job_records, records_csv


def finished(jid, submit, start, runtime, size=1, estimate=None, user=0):  # type: ignore[no-untyped-def]
    job = Job(size, runtime, estimate if estimate is not None else runtime, id=jid, user=user)
    job.mark_submitted(submit)
    job.mark_started(start)
    job.mark_ended(start + job.duration)
    return job


def test_wait_response_slowdown_and_classes():
    jobs = [
        finished(1, 0.0, 0.0, 30.0),  # short, no wait: slowdown 1
        finished(2, 0.0, 60.0, 120.0, size=2),  # medium: wait 60, r 180, sd 1.5
        finished(3, 10.0, 610.0, 5.0),  # short: wait 600, r 605, sd 121, bsld 60.5
        finished(4, 0.0, 0.0, 3600.0, size=4),  # long
    ]
    rec = job_records(jobs)
    s = summarize(rec, procs=4, window=(0.0, 3600.0))
    assert s["jobs"] == 4
    assert s["wait"]["mean"] == pytest.approx((0 + 60 + 600 + 0) / 4)
    assert s["wait"]["p100"] == s["max_wait"] == 600.0
    assert s["slowdown"]["mean"] == pytest.approx((1 + 1.5 + 121 + 1) / 4)
    assert s["bounded_slowdown"]["mean"] == pytest.approx((1 + 1.5 + 60.5 + 1) / 4)
    short = s["by_runtime_class"]["short"]
    assert short["jobs"] == 2 and short["mean_response"] == pytest.approx((30 + 605) / 2)
    assert s["by_runtime_class"]["medium"]["jobs"] == 1
    assert s["by_runtime_class"]["long"]["mean_slowdown"] == 1.0
    # busy: 30 + 240 + 5 + 14400 processor-seconds in a 4 x 3600 window
    assert s["utilization"] == pytest.approx((30 + 240 + 5 + 14400) / (4 * 3600))
    assert s["throughput_per_hour"] == pytest.approx(4.0)
    assert s["makespan"] == 3600.0


def test_window_selects_submissions_and_clips_busy_time():
    jobs = [finished(1, 0.0, 0.0, 100.0), finished(2, 50.0, 100.0, 100.0)]
    rec = job_records(jobs)
    s = summarize(rec, procs=1, window=(40.0, 150.0))
    assert s["jobs"] == 1 and s["wait"]["mean"] == 50.0
    assert busy_seconds(rec, 40.0, 150.0) == 110.0
    assert s["utilization"] == pytest.approx(1.0)


def test_zero_runtime_slowdown_uses_one_second():
    rec = job_records([finished(1, 0.0, 4.0, 0.0)])
    s = summarize(rec, procs=1, window=(0.0, 10.0))
    assert s["slowdown"]["mean"] == 4.0 and s["bounded_slowdown"]["mean"] == 1.0


def test_killed_jobs_count_their_cut_runtime():
    rec = job_records([finished(1, 0.0, 0.0, 500.0, estimate=300.0)])
    assert rec["runtime"][0] == 300.0 and rec["killed"][0]
    assert summarize(rec, procs=1, window=(0.0, 300.0))["killed"] == 1


def test_empty_runs_give_nan_not_errors():
    s = summarize(job_records([]), procs=4, window=(0.0, 0.0))
    assert s["jobs"] == 0 and math.isnan(s["wait"]["mean"]) and math.isnan(s["utilization"])


def test_records_csv():
    job = Job(2, 10.0, 20.0, id=1, user=5)
    job.mark_submitted(0.5)
    text = records_csv(job_records([job]))
    header, row = text.splitlines()
    assert header.startswith("id,user,size,submit,start,end,wait")
    values = dict(zip(header.split(","), row.split(","), strict=True))
    assert values["submit"] == "0.5" and values["start"] == "" and values["state"] == "waiting"
    assert np.isnan(job_records([job])["wait"][0])
