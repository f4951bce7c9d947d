"""Planning-based scheduling and self-tuning dynP on hand-built queues."""

from __future__ import annotations

import pytest

from sitesim.errors import ConfigError
from sitesim.schedulers import DynP, Planning, create
from sitesim.schedulers.planning import METRICS, decide, plan, score
from tests.conftest import on_procs
from tests.unit.test_policies import R, queue_of, three_jobs, waiting


def test_plan_places_each_job_at_its_earliest_fit_in_order():
    # 10 processors, R holds 6 until 100. FCFS order 1, 2, 3: job 1 (8) at 100; job 2 (4) now;
    # job 3 (4 x 50) cannot end before job 1 takes 8 at 100, so after job 1.
    jobs = three_jobs()
    assert plan(jobs, on_procs(3.0, 4, R))[0] == [100.0, 3.0, 200.0]
    # SJF order 2, 3, 1: job 3 follows job 2 at 53, so job 1 waits for it until 103
    assert plan([jobs[1], jobs[2], jobs[0]], on_procs(3.0, 4, R))[0] == [3.0, 53.0, 103.0]


def test_planning_starts_what_is_planned_for_now_and_keeps_the_plan():
    policy = queue_of(Planning("FCFS"), three_jobs())
    assert [j.id for j in policy.allocate(3.0, on_procs(3.0, 4, R))] == [
        2
    ]  # backfilled into the hole
    assert [j.id for j in policy.queue] == [1, 3]
    assert (
        policy.allocate(53.0, on_procs(53.0, 8, R)) == []
    )  # job 3 is planned at 200, behind job 1
    assert [j.id for j in policy.allocate(100.0, on_procs(100.0, 10, []))] == [1]
    assert [j.id for j in policy.allocate(200.0, on_procs(200.0, 10, []))] == [3]


def test_planning_orders():
    jobs = [waiting(1, 2, 300, 0.0), waiting(2, 8, 100, 1.0), waiting(3, 1, 200, 2.0)]
    assert [j.id for j in queue_of(Planning("SJF"), jobs).ordered("SJF")] == [2, 3, 1]
    assert [j.id for j in queue_of(Planning("LJF"), jobs).ordered("LJF")] == [1, 3, 2]
    assert [j.id for j in queue_of(Planning("FCFS"), jobs).ordered("FCFS")] == [1, 2, 3]


def test_scores_of_a_plan_by_hand():
    jobs = three_jobs()  # submits 1, 2, 3; estimates 100, 50, 50; sizes 8, 4, 4
    # areas 800, 200, 200 are in proportion 8 : 2 : 2
    fcfs = [100.0, 3.0, 200.0]  # responses 199, 51, 247
    sjf = [103.0, 3.0, 53.0]  # responses 202, 51, 100
    expected = {
        "ART": ((199 + 51 + 247) / 3, (202 + 51 + 100) / 3),
        "ARTwA": ((199 * 8 + 51 * 2 + 247 * 2) / 12, (202 * 8 + 51 * 2 + 100 * 2) / 12),
        "ARTwW": ((199 * 8 + 51 * 4 + 247 * 4) / 16, (202 * 8 + 51 * 4 + 100 * 4) / 16),
        "SLD": ((1.99 + 1.02 + 4.94) / 3, (2.02 + 1.02 + 2.0) / 3),
        "SLDwA": ((1.99 * 8 + 1.02 * 2 + 4.94 * 2) / 12, (2.02 * 8 + 1.02 * 2 + 2.0 * 2) / 12),
        "SLDwW": ((1.99 * 8 + 1.02 * 4 + 4.94 * 4) / 16, (2.02 * 8 + 1.02 * 4 + 2.0 * 4) / 16),
        "makespan": (250.0, 203.0),
    }  # fmt: skip
    assert set(expected) == set(METRICS)
    for metric, (a, b) in expected.items():
        assert score(metric, jobs, fcfs) == pytest.approx(a), metric
        assert score(metric, jobs, sjf) == pytest.approx(b), metric


EQUAL = {"FCFS": 1.0, "SJF": 1.0, "LJF": 1.0}


@pytest.mark.parametrize(
    ("decider", "scores", "current", "chosen"),
    [
        ("simple", EQUAL, "SJF", "FCFS"),  # ties: FCFS, then SJF, then LJF
        ("simple", {"FCFS": 2.0, "SJF": 1.0, "LJF": 1.0}, "LJF", "SJF"),
        ("simple", {"FCFS": 2.0, "SJF": 3.0, "LJF": 1.0}, "FCFS", "LJF"),
        ("advanced", EQUAL, "SJF", "SJF"),  # the current policy ties the minimum: kept
        ("advanced", {"FCFS": 2.0, "SJF": 1.0, "LJF": 1.0}, "LJF", "LJF"),
        ("advanced", {"FCFS": 1.0, "SJF": 2.0, "LJF": 1.0}, "SJF", "FCFS"),
        ("advanced", {"FCFS": 1.0, "SJF": 1.0, "LJF": 0.5}, "SJF", "LJF"),
        ("preferred", EQUAL, "SJF", "SJF"),  # on P: stay unless another is strictly better
        ("preferred", {"FCFS": 0.5, "SJF": 1.0, "LJF": 1.0}, "SJF", "FCFS"),
        ("preferred", {"FCFS": 1.0, "SJF": 1.0, "LJF": 2.0}, "FCFS", "SJF"),  # back to P on a tie
        ("preferred", {"FCFS": 1.0, "SJF": 2.0, "LJF": 1.0}, "LJF", "LJF"),  # P worse: advanced
        ("preferred", {"FCFS": 1.0, "SJF": 2.0, "LJF": 3.0}, "LJF", "FCFS"),
    ],
)
def test_deciders_on_ties(decider, scores, current, chosen):  # type: ignore[no-untyped-def]
    assert decide(decider, scores, current, preferred="SJF") == chosen


def test_fcfs_preferred_decider():
    assert decide("preferred", {"FCFS": 1.0, "SJF": 0.5, "LJF": 0.5}, "FCFS", "FCFS") == "SJF"
    assert decide("preferred", {"FCFS": 0.5, "SJF": 0.5, "LJF": 0.6}, "SJF", "FCFS") == "FCFS"


def test_dynp_switches_to_the_policy_with_the_best_plan():
    policy = queue_of(DynP(metric="SLD", decider="simple"), three_jobs())
    assert [j.id for j in policy.allocate(3.0, on_procs(3.0, 4, R))] == [2]
    assert policy.policy == "SJF"  # SLD 1.68 against FCFS's and LJF's 2.65
    assert policy.last_scores["SJF"] < policy.last_scores["FCFS"] == policy.last_scores["LJF"]
    # nothing arrived and nothing ended early: no step, the SJF plan is kept (job 3 at 53)
    assert [j.id for j in policy.allocate(53.0, on_procs(53.0, 4, R))] == [3]
    assert policy.stats() == {
        "self_tuning_steps": 1,
        "policy_switches": 1,
        "started_FCFS": 0,
        "started_SJF": 2,
        "started_LJF": 0,
    }
    assert policy.params()["policy"] == "FCFS"  # the initial policy: rebuilds the scheduler


def test_dynp_makespan_metric_can_prefer_another_policy():
    # makespan 250 under FCFS, 203 under SJF
    policy = queue_of(DynP(metric="makespan", decider="advanced"), three_jobs())
    policy.allocate(3.0, on_procs(3.0, 4, R))
    assert policy.policy == "SJF"


def test_half_and_full_self_tuning():
    for tuning, steps in (("half", 1), ("full", 2)):
        policy = queue_of(DynP(tuning=tuning), three_jobs())
        (job,) = policy.allocate(3.0, on_procs(3.0, 4, R))  # a step: jobs arrived
        job.start = 3.0
        policy.job_ended(job, 10.0)  # estimated to end at 53: early
        policy.allocate(10.0, on_procs(10.0, 8, R))  # full: another step; half: a re-plan only
        assert policy.steps == steps, tuning


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"policy": "SRF"}, "policy must be one of FCFS, SJF, LJF"),
        ({"metric": "BSLD"}, "metric must be one of ART"),
        ({"decider": "clever"}, "decider must be one of simple, advanced, preferred"),
        ({"tuning": "some"}, "tuning must be one of half, full"),
        ({"preferred": "X"}, "policy must be one of"),
    ],
)
def test_parameters_are_checked(params, message):  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match=message):
        create("DYNP", **params)


def test_plan_policy_is_checked_and_case_insensitive():
    assert create("PLAN", policy="sjf").params() == {"policy": "SJF"}
    with pytest.raises(ConfigError, match="policy must be one of"):
        create("PLAN", policy="EASY")
