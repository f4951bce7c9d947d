"""Metric formulas on hand-built records."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from sitesim.engine import records
from sitesim.engine.job import Job
from sitesim.engine.metrics import Summary, busy_seconds, per_user, summarize
from sitesim.engine.records import job_records, records_csv
from sitesim.output import to_json


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
    assert s.jobs == 4
    assert s.wait_mean_min == pytest.approx((0 + 60 + 600 + 0) / 4 / 60)
    assert s.wait_max_min == 10.0
    assert s.slowdown_mean == pytest.approx((1 + 1.5 + 121 + 1) / 4)
    assert s.bsld_mean == pytest.approx((1 + 1.5 + 60.5 + 1) / 4)
    assert s.short_jobs == 2 and s.short_response_mean_min == pytest.approx((30 + 605) / 2 / 60)
    assert s.medium_jobs == 1
    assert s.long_slowdown_mean == 1.0
    # busy: 30 + 240 + 5 + 14400 processor-seconds in a 4 x 3600 window
    assert s.utilization == pytest.approx((30 + 240 + 5 + 14400) / (4 * 3600))
    assert s.offered_load == s.utilization  # every job ended inside the window
    assert s.throughput_per_h == pytest.approx(4.0)
    assert s.makespan_d == 3600.0 / 86400
    assert (s.sessions, s.batches, s.active_users) == (0, 0, 1)
    assert math.isnan(s.jobs_per_session)  # no sessions in a trace-like run


def test_window_selects_submissions_and_clips_busy_time():
    jobs = [finished(1, 0.0, 0.0, 100.0), finished(2, 50.0, 100.0, 100.0)]
    rec = job_records(jobs)
    s = summarize(rec, procs=1, window=(40.0, 150.0))
    assert s.jobs == 1 and s.wait_mean_min == 50.0 / 60
    assert busy_seconds(rec, 40.0, 150.0) == 110.0
    assert s.utilization == pytest.approx(1.0)


def test_zero_runtime_slowdown_uses_one_second():
    rec = job_records([finished(1, 0.0, 4.0, 0.0)])
    s = summarize(rec, procs=1, window=(0.0, 10.0))
    assert s.slowdown_mean == 4.0 and s.bsld_mean == 1.0


def test_killed_jobs_count_their_cut_runtime():
    rec = job_records([finished(1, 0.0, 0.0, 500.0, estimate=300.0)])
    assert rec["runtime"][0] == 300.0 and rec["killed"][0]
    assert summarize(rec, procs=1, window=(0.0, 300.0)).jobs_killed == 1


def test_empty_runs_give_nan_not_errors():
    s = summarize(job_records([]), procs=4, window=(0.0, 0.0))
    assert s.jobs == 0 and math.isnan(s.wait_mean_min) and math.isnan(s.utilization)


def test_sessions_and_the_per_user_table():
    jobs = [
        finished(1, 0.0, 0.0, 60.0, user=1),
        finished(2, 100.0, 100.0, 60.0, user=1),
        finished(3, 5000.0, 5000.0, 120.0, user=1),
        finished(4, 0.0, 60.0, 60.0, user=2),
    ]
    for job, (session, batch) in zip(jobs, [(0, 0), (0, 1), (1, 2), (0, 0)], strict=True):
        job.session, job.batch = session, batch
    rec = job_records(jobs)
    s = summarize(rec, procs=1, window=(0.0, 6000.0))
    assert (s.active_users, s.sessions, s.batches) == (2, 3, 4)
    assert s.jobs_per_session == 4 / 3 and s.jobs_per_batch == 1.0
    assert s.batches_per_session == 4 / 3  # user 1: batches 0, 1 | 2; user 2: batch 0
    assert s.sessions_per_user == 1.5 and s.batches_per_user == 2.0
    table = per_user(rec, (0.0, 6000.0))
    assert table["user"].tolist() == [1, 2]
    assert table["jobs"].tolist() == [3, 1]
    assert table["sessions"].tolist() == [2, 1] and table["batches"].tolist() == [3, 1]
    assert table["response_mean_min"].tolist() == [(60 + 60 + 120) / 3 / 60, 2.0]


def test_a_summary_is_one_flat_row_with_units_in_its_names():
    s = summarize(job_records([finished(1, 0.0, 30.0, 90.0)]), procs=2, window=(0.0, 600.0))
    row = s.as_dict()
    assert list(row) == list(Summary.fields())
    assert all(isinstance(v, int | float) for v in row.values())
    assert {"wait_mean_min", "throughput_per_h", "makespan_d", "jobs_per_session"} <= set(row)
    back = Summary.from_dict(json.loads(to_json(row)))
    assert back.as_dict().keys() == row.keys() and back.wait_mean_min == 0.5
    assert math.isnan(back.jobs_per_session)


def test_records_csv():
    job = Job(2, 10.0, 20.0, id=1, user=5)
    job.mark_submitted(0.5)
    text = records_csv(job_records([job]))
    header, row = text.splitlines()
    assert header.startswith("id,user,size,submit,start,end,wait")
    values = dict(zip(header.split(","), row.split(","), strict=True))
    assert values["submit"] == "0.5" and values["start"] == "" and values["state"] == "waiting"
    assert np.isnan(job_records([job])["wait"][0])


def test_records_csv_written_a_block_at_a_time_is_the_same_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    jobs = [finished(k, 0.0, float(k), 10.0 + k, user=k % 3) for k in range(1, 8)]
    whole = records_csv(job_records(jobs))
    monkeypatch.setattr(records, "CSV_BLOCK", 3)  # (blocks of 3, 3 and 1 records)
    assert records_csv(job_records(jobs)) == whole
    assert whole.count("\n") == 8 and whole.endswith("\n")
    assert records_csv(job_records([])) == whole.splitlines()[0] + "\n"


def test_sessions_in_a_mixed_population_count_only_jobs_in_sessions():
    """Users 1 and 3 work in sessions; user 2's jobs belong to none (session -1, a custom user
    model). Counted by hand: user 1 has sessions 0 and 1 (batches 0, 1, 2), user 2 none, user
    3 session 0 (batch 0). Before the fix user 2's jobs were credited to user 1."""
    jobs = []
    for jid, (user, session, batch) in enumerate(
        [(1, 0, 0), (1, 0, 1), (1, 1, 2), (2, -1, -1), (2, -1, -1), (2, -1, -1), (3, 0, 0)],
        start=1,
    ):
        job = finished(jid, float(jid), float(jid), 10.0, user=user)
        job.session, job.batch = session, batch
        jobs.append(job)
    rec = job_records(jobs)
    s = summarize(rec, procs=1, window=(0.0, 100.0))
    table = per_user(rec, (0.0, 100.0))
    assert table["sessions"].tolist() == [2, 0, 1]
    assert table["batches"].tolist() == [3, 0, 1]
    assert (s.sessions, s.batches, s.active_users) == (3, 4, 3)
    assert s.jobs_per_session == pytest.approx(4 / 3)  # the 4 jobs in sessions, not all 7
    assert s.jobs_per_batch == pytest.approx(4 / 4)
    assert s.batches_per_session == pytest.approx(4 / 3)  # user 2's jobs are in no batch
    assert s.sessions_per_user == pytest.approx(3 / 2)  # over the users with sessions
    assert s.batches_per_user == pytest.approx(4 / 2)


def test_batches_per_session_counts_a_batch_once_however_wide():
    """One session of two batches, three jobs then one: 4 jobs, 2 batches in the session;
    a second session of one batch of one job. Counted by hand: 5 jobs, 3 batches, 2
    sessions."""
    jobs = []
    for jid, (session, batch) in enumerate([(0, 0), (0, 0), (0, 0), (0, 1), (1, 2)], start=1):
        job = finished(jid, float(jid), float(jid), 10.0, user=1)
        job.session, job.batch = session, batch
        jobs.append(job)
    s = summarize(job_records(jobs), procs=4, window=(0.0, 100.0))
    assert s.jobs_per_session == 5 / 2 and s.batches_per_session == 3 / 2
    assert math.isnan(summarize(job_records(jobs[:0]), 4, (0.0, 100.0)).batches_per_session)
