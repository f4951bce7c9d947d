"""Feedback trace replay and dependency violations, on hand-built traces."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sitesim
from sitesim.models.feedback import AFTER_END, AFTER_SUBMIT, AT_TIME, FeedbackPlan
from sitesim.models.trace_user import TraceWorkload
from sitesim.results.report import write_outputs
from sitesim.runs.config import ReplayConfig
from sitesim.runs.replay import run_replay
from sitesim.workload.swf import SWFTrace

#: One SWF line: job, submit, wait, runtime, procs, ..., request, ..., user, ..., preceding, think.
LINE = "{n} {t} {w} {r} {p} -1 -1 {p} {e} -1 1 {u} 1 -1 0 -1 {pre} {th}"


def trace(jobs, procs=4, name="t.swf"):  # type: ignore[no-untyped-def]
    """An SWFTrace of (submit, wait, runtime, size, user[, preceding, think]) tuples."""
    lines = []
    for n, job in enumerate(jobs, start=1):
        t, w, r, p, u, *dep = job
        pre, th = dep if dep else (-1, -1)
        lines.append(LINE.format(n=n, t=t, w=w, r=r, p=p, e=r, u=u, pre=pre, th=th))
    data = np.array([[float(x) for x in line.split()] for line in lines])
    return SWFTrace(name, [f"; MaxProcs: {procs}"], data)


def test_dependencies_are_inferred_from_the_trace():
    #        submit wait run size user
    jobs = [
        (0, 0, 100, 1, 1),  # a: a session starts
        (150, 0, 100, 1, 1),  # b: 50 s after a ended -> after a's end, think 50
        (160, 0, 100, 1, 1),  # c: before b ended -> same batch as b, 10 s after it
        (5000, 0, 100, 1, 1),  # d: after a break > 20 min -> its timestamp
        (20, 0, 10, 1, 2),  # e: another user's first job
        (31, 0, 10, 1, 2),  # f: 1 s after e ended
    ]
    work = TraceWorkload.from_swf(trace(jobs), 4)
    plan = FeedbackPlan.of(work)
    by_submit = dict(zip(work.submit.tolist(), range(len(work)), strict=True))
    expected = {
        0: (AT_TIME, -1, 0), 150: (AFTER_END, 0, 50), 160: (AFTER_SUBMIT, 150, 10),
        5000: (AT_TIME, -1, 0), 20: (AT_TIME, -1, 0), 31: (AFTER_END, 20, 1),
    }  # fmt: skip
    for submit, (kind, anchor, delay) in expected.items():
        i = by_submit[submit]
        assert plan.kind[i] == kind, submit
        assert plan.anchor[i] == (by_submit[anchor] if anchor >= 0 else -1), submit
        assert plan.delay[i] == delay, submit
    assert plan.dependent == 3 and plan.source == "inferred (last, 20 min)"
    arrival = FeedbackPlan.of(work, definition="arrival")
    assert arrival.kind[by_submit[150]] == AFTER_SUBMIT and arrival.delay[by_submit[150]] == 150


def test_max_waits_for_the_job_of_the_session_that_ended_last():
    jobs = [(0, 0, 500, 1, 1), (10, 0, 20, 1, 1), (1300, 0, 10, 1, 1)]
    work = TraceWorkload.from_swf(trace(jobs), 4)
    last, latest = FeedbackPlan.of(work), FeedbackPlan.of(work, definition="max")
    # "last": job 3 follows job 2, which ended at 30 (think 1270 s: a break); "max": job 1
    # ended last, at 500 (think 800 s): a dependency on job 1
    assert last.kind[2] == AT_TIME
    assert (latest.kind[2], latest.anchor[2], latest.delay[2]) == (AFTER_END, 0, 800)


def test_fields_17_and_18_are_the_dependencies_when_present():
    jobs = [(0, 0, 100, 1, 1), (400, 0, 50, 1, 1, 1, 300), (410, 0, 50, 1, 1)]
    plan = FeedbackPlan.of(TraceWorkload.from_swf(trace(jobs), 4))
    assert plan.source == "fields" and plan.kind.tolist() == [AT_TIME, AFTER_END, AT_TIME]
    assert plan.delay[1] == 300


def test_a_dependent_job_follows_its_predecessors_simulated_end():
    # two users share 2 processors. User 1: job A (2 procs, 100 s), then B 50 s after A's end.
    # User 2's job X (2 procs, 300 s) arrives first, so under FCFS A waits 300 s: in the open
    # replay B arrives at 150 before A even started; in the feedback replay at A's end + 50.
    jobs = [(0, 0, 300, 2, 2), (1, 0, 100, 2, 1), (151, 0, 100, 2, 1)]
    path = trace(jobs, procs=2)
    opened = sitesim.replay(path, "FCFS")
    fed = run_replay(ReplayConfig(trace="t.swf", scheduler="FCFS", feedback=True), trace=path)
    starts = opened.records["start"][np.argsort(opened.records["trace_row"])]
    assert starts.tolist() == [0.0, 300.0, 400.0]
    rec = fed.records
    submit = dict(zip(rec["trace_row"].tolist(), rec["submit"].tolist(), strict=True))
    assert submit == {0: 0.0, 1: 1.0, 2: 450.0}  # A ended at 400: B at 400 + 50
    b = rec[rec["trace_row"] == 2][0]
    assert b["preceding"] == rec[rec["trace_row"] == 1][0]["id"] and b["think"] == 50.0
    assert opened.summary.submission_violations == 0  # the trace has no field 17
    moved = fed.workload["feedback"]
    assert (moved["jobs_moved"], moved["jobs_moved_later"], moved["moved_by_p50_h"]) == (
        1, 1, 299 / 3600,
    )  # fmt: skip


def test_violations_of_a_compressed_site_level_trace(tmp_path):
    """No violation at the trace's own load; compressed, jobs arrive before their predecessor
    ended, and under EASY some start before it started."""
    result = sitesim.simulate(8, "EASY", model="static", days=14, warmup_days=0, seed=2)
    assert result.summary.dependent_jobs > 0
    assert result.summary.submission_violations == result.summary.ordering_violations == 0
    write_outputs(tmp_path, result)
    swf = tmp_path / "simulated.swf"
    own = sitesim.replay(swf, "EASY")
    assert own.summary.submission_violations == 0
    fractions = [sitesim.replay(swf, "FCFS", load=load).summary for load in (0.5, 0.9)]
    assert 0 < fractions[0].submission_violations < fractions[1].submission_violations
    assert all(f.ordering_violations == 0 for f in fractions)  # FCFS keeps the order


def test_an_open_replay_of_a_site_level_trace_under_its_own_scheduler_is_the_same_run(tmp_path):
    """What makes experiment 1 fair: replaying the site-level trace open-loop under the same
    scheduler starts every job at the same time."""
    for scheduler in ("FCFS", "EASY", "CONSERVATIVE", "CREASY"):
        site = sitesim.simulate(6, scheduler, model="static", days=10, warmup_days=0, seed=5)
        write_outputs(tmp_path / scheduler, site)
        again = sitesim.replay(tmp_path / scheduler / "simulated.swf", scheduler)
        for column in ("submit", "start", "end", "size"):
            assert np.array_equal(again.records[column], site.records[column]), column


@st.composite
def traces(draw):  # type: ignore[no-untyped-def]
    n = draw(st.integers(1, 25))
    jobs, t = [], 0
    for _ in range(n):
        t += draw(st.sampled_from([0, 5, 60, 600, 3000]))
        jobs.append((t, draw(st.integers(0, 300)), draw(st.integers(0, 400)),
                     draw(st.integers(1, 4)), draw(st.integers(1, 3))))  # fmt: skip
    return trace(jobs)


@given(traces(), st.sampled_from(["last", "max", "arrival"]), st.sampled_from(["FCFS", "EASY"]))
def test_feedback_never_submits_a_dependent_job_before_its_predecessor_ended(t, think, name):
    config = ReplayConfig(trace="t.swf", scheduler=name, feedback=True, think=think)
    rec = run_replay(config, trace=t).records
    dependent = rec["preceding"] > 0
    assert (rec["submit"][dependent] >= rec["end"][rec["preceding"][dependent] - 1]).all()
    assert len(rec) == len(t)  # every job is submitted once
    assert sorted(rec["trace_row"].tolist()) == list(range(len(t)))


def test_feedback_keeps_every_timestamp_when_the_scheduler_matches_the_trace():
    """If the simulation serves every job as the trace recorded, nothing moves."""
    jobs = [(0, 0, 100, 1, 1), (150, 0, 100, 1, 1), (160, 0, 100, 1, 1), (5000, 0, 10, 1, 2)]
    result = run_replay(ReplayConfig(trace="t.swf", feedback=True), trace=trace(jobs, procs=8))
    assert result.workload["feedback"]["jobs_moved"] == 0
    assert result.records["submit"].tolist() == [0, 150, 160, 5000]


@pytest.mark.parametrize("bad", [{"think": "first"}, {"threshold_min": 0}])
def test_feedback_settings_are_checked(bad):
    with pytest.raises(sitesim.SitesimError):
        sitesim.ReplayConfig(trace="t.swf", feedback=True, **bad)
