"""Decomposing a trace into users, think times, sessions and batches (users.md definitions)."""

from __future__ import annotations

import numpy as np
import pytest

from sitesim.errors import SitesimError
from sitesim.workload.activity import decompose
from sitesim.workload.swf import COLUMN, SWFTrace


def trace(jobs, header=("; MaxProcs: 64",)):  # type: ignore[no-untyped-def]
    """An in-memory trace from (submit, wait, runtime, size, user[, request]) tuples."""
    data = np.full((len(jobs), 18), -1.0)
    for i, job in enumerate(jobs):
        submit, wait, runtime, size, user = job[:5]
        data[i, COLUMN["job"]] = i + 1
        data[i, COLUMN["submit"]] = submit
        data[i, COLUMN["wait"]] = wait
        data[i, COLUMN["runtime"]] = runtime
        data[i, COLUMN["procs"]] = size
        data[i, COLUMN["user"]] = user
        data[i, COLUMN["req_time"]] = job[5] if len(job) > 5 else -1
    return SWFTrace("hand.swf", list(header), data)


def by_user(activity, user):  # type: ignore[no-untyped-def]
    return activity.user == user


def test_think_time_is_next_submit_minus_this_end():
    # one user: job 1 ends at 100; job 2 submitted at 150 -> think 50; job 2 ends at 160
    a = decompose(trace([(0, 0, 100, 1, 7), (150, 5, 5, 1, 7), (400, 0, 10, 1, 7)]))
    assert a.think[:2].tolist() == [50.0, 240.0]
    assert np.isnan(a.think[2])  # nothing follows the user's last job


def test_negative_think_makes_a_batch():
    # jobs 1-3 overlap (each submitted before the previous ended): one batch of width 3
    jobs = [(0, 0, 100, 1, 1), (10, 0, 100, 1, 1), (30, 0, 5, 1, 1), (200, 0, 5, 1, 1)]
    a = decompose(trace(jobs))
    assert a.think[:3].tolist() == [-90.0, -80.0, 165.0]
    assert a.batch.tolist() == [0, 0, 0, 1]
    assert a.widths.tolist() == [3, 1]
    assert a.inter_submission.tolist() == [10.0, 20.0]


def test_sessions_break_above_the_threshold_only():
    # think 1200 s (= threshold) continues the session, 1201 s starts a new one
    jobs = [(0, 0, 10, 1, 1), (1210, 0, 10, 1, 1), (2421, 0, 10, 1, 1)]
    a = decompose(trace(jobs))
    assert a.think[:2].tolist() == [1200.0, 1201.0]
    assert a.session.tolist() == [0, 0, 1]
    assert a.short_thinks.tolist() == [1200.0] and a.breaks.tolist() == [1201.0]


def test_breaks_longer_than_eight_hours_are_left_out():
    jobs = [(0, 0, 10, 1, 1), (10 + 8 * 3600, 0, 10, 1, 1), (20 + 16 * 3600 + 1, 0, 10, 1, 1)]
    a = decompose(trace(jobs))
    assert a.breaks.tolist() == [8 * 3600.0]  # the 8 h 1 s break is not a "break" sample
    assert a.session.tolist() == [0, 1, 2]


def test_zero_think_starts_a_new_batch_but_is_no_short_think():
    a = decompose(trace([(0, 0, 10, 1, 1), (10, 0, 10, 1, 1)]))
    assert a.think[0] == 0 and a.batch.tolist() == [0, 1] and a.session.tolist() == [0, 0]
    assert len(a.short_thinks) == 0


def test_interleaved_users_are_separated():
    jobs = [(0, 0, 100, 1, 1), (5, 0, 10, 2, 2), (50, 0, 10, 1, 1), (300, 0, 10, 2, 2)]
    a = decompose(trace(jobs))
    assert a.user.tolist() == [1, 1, 2, 2]
    assert a.think[by_user(a, 1)][0] == -50.0  # 50 - 100
    assert a.think[by_user(a, 2)][0] == 285.0  # 300 - 15
    assert a.users == 2 and a.batch.tolist() == [0, 0, 1, 2]


def test_ties_keep_file_order():
    a = decompose(trace([(0, 0, 10, 4, 1), (0, 0, 20, 8, 1)]))
    assert a.size.tolist() == [4, 8] and a.think[0] == -10.0 and a.widths.tolist() == [2]


def test_jobs_with_missing_fields_are_excluded_and_counted():
    jobs = [
        (0, 0, 10, 1, 1),
        (5, -1, 10, 1, 1),
        (6, 0, -1, 1, 1),
        (7, 0, 3, 1, -1),
        (20, 0, 1, 1, 1),
    ]
    a = decompose(trace(jobs))
    assert len(a) == 2
    assert a.excluded == {"unknown user": 1, "unknown wait": 1, "unknown runtime": 1}
    assert a.think[0] == 10.0  # job 5 follows job 1 directly
    with pytest.raises(SitesimError, match="no job has a known user, submit time, wait"):
        decompose(trace([(0, -1, 10, 1, 1)]))


def test_size_repetitions_are_runs_per_user():
    sizes = [4, 4, 4, 8, 8, 4]
    jobs = [(10 * i, 0, 1, s, 1) for i, s in enumerate(sizes)] + [(0, 0, 1, 4, 2)]
    a = decompose(trace(jobs))
    assert sorted(a.size_repetitions.tolist()) == [1, 1, 2, 3]


def test_think_definitions():
    # job 1 runs [0, 500); job 2 [100, 130); job 3 submitted at 200
    jobs = [(0, 0, 500, 1, 1), (100, 0, 30, 1, 1), (200, 0, 10, 1, 1)]
    last = decompose(trace(jobs), definition="last")
    most = decompose(trace(jobs), definition="max")
    arrival = decompose(trace(jobs), definition="arrival")
    assert last.think[:2].tolist() == [-400.0, 70.0]  # from the previous job's end
    assert most.think[:2].tolist() == [-400.0, -300.0]  # from the latest end so far (500)
    assert arrival.think[:2].tolist() == [100.0, 100.0]
    assert most.widths.tolist() == [3] and last.widths.tolist() == [2, 1]


def test_estimate_ratios_need_both_values():
    a = decompose(trace([(0, 0, 100, 1, 1, 300), (1, 0, 0, 1, 1, 60), (2, 0, 50, 1, 1)]))
    assert a.estimate_ratios.tolist() == [3.0]


def test_local_clock_from_unix_start_and_time_zone():
    header = ("; UnixStartTime: 893466664", "; TimeZoneString: US/Pacific")
    # 893466664 is Fri Apr 24 1998, 18:11:04 PDT; +3 days is Monday 18:11
    a = decompose(trace([(0, 0, 1, 1, 1), (3 * 86400, 0, 1, 1, 1)], header))
    assert a.hour.tolist() == [18, 18] and a.weekday.tolist() == [4, 0]
    assert a.clock == "local time, US/Pacific"
    winter = decompose(trace([(200 * 86400, 0, 1, 1, 1)], header))  # Nov 10 1998: PST
    assert winter.hour.tolist() == [17]


def test_local_clock_without_a_start_time_starts_monday_midnight():
    a = decompose(trace([(0, 0, 1, 1, 1), (86400 * 5 + 3600 * 13, 0, 1, 1, 1)]))
    assert a.hour.tolist() == [0, 13] and a.weekday.tolist() == [0, 5]


def test_unknown_zone_falls_back_to_the_numeric_offset():
    header = ("; UnixStartTime: 0", "; TimeZone: -18000", "; TimeZoneString: Nowhere/Special")
    a = decompose(trace([(0, 0, 1, 1, 1)], header))
    assert a.hour.tolist() == [19] and a.weekday.tolist() == [2]  # Wed Dec 31 1969, 19:00
    assert "TimeZone header" in a.clock
