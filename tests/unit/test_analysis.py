"""The user-behaviour analysis on hand-made activity."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sitesim.workload.activity import decompose
from sitesim.workload.analysis import (
    Followed,
    analyze,
    analyze_followed,
    fit_continue,
    weighted_median,
)
from tests.unit.test_activity import trace


def test_fit_recovers_a_known_curve():
    r = [1.0, 8.0, 25.0, 80.0, 600.0]
    rows = [{"median_response_min": x, "continue_probability": 0.8 / (0.05 * x + 1)} for x in r]
    fit = fit_continue(rows)
    assert fit["a"] == pytest.approx(0.8, abs=1e-6) and fit["b"] == pytest.approx(0.05, abs=1e-6)
    assert fit["r2"] == pytest.approx(1.0) and fit["rmse"] < 1e-6
    assert math.isnan(fit_continue(rows[:2])["a"])  # too few points


def test_weighted_median():
    assert weighted_median(np.array([1.0, 2, 3]), np.ones(3)) == 2.0
    assert weighted_median(np.array([1.0, 2, 3]), np.array([10.0, 1, 1])) == 1.0
    assert math.isnan(weighted_median(np.array([]), np.array([])))


def user_jobs():  # type: ignore[no-untyped-def]
    """User 1: quick jobs (response 1 min) followed by 2-min thinks; then one slow job
    (response 200 min) followed by a 3-hour break; then a last job."""
    jobs, t = [], 0.0
    for _ in range(4):
        jobs.append((t, 0, 60, 1, 1))
        t += 60 + 120
    jobs.append((t, 6000, 6000, 1, 1))  # waits 100 min, runs 100 min: slowdown 2
    t += 12000 + 3 * 3600
    jobs.append((t, 0, 60, 1, 1))
    return decompose(trace(jobs))


def test_bins_medians_and_continue_probabilities():
    result = analyze_followed(Followed([user_jobs()]))
    r1, r5 = result["response_bins"][0], result["response_bins"][4]
    assert r1["jobs"] == 4 and r1["median_think_min"] == 2.0 and r1["continue_probability"] == 1.0
    assert r5["jobs"] == 1 and r5["median_think_min"] == 180.0 and r5["continue_probability"] == 0.0
    assert r5["median_response_min"] == 200.0
    s1, s2 = result["slowdown_bins"][0], result["slowdown_bins"][2]
    assert s1["jobs"] == 4 and s2["jobs"] == 1  # slowdown 2 falls in S3 [2, 4)
    assert result["rs_jobs"][0][0] == 4 and result["rs_jobs"][4][2] == 1
    assert result["rs_median_think_min"][4][2] == 180.0
    # W: waited <= 5 min excludes the slow job; E: ran <= 5 min too
    assert result["expectations"]["W"][4]["jobs"] == 0
    assert result["think"]["negative_fraction"] == 0.0


def test_combined_gives_each_trace_equal_weight():
    quick = user_jobs()
    # a second, much bigger trace where every think is a 10-hour break
    slow = decompose(trace([(i * 40000.0, 0, 60, 1, 3) for i in range(40)]))
    result = analyze([quick, slow])
    r1 = result["combined"]["response_bins"][0]
    # each trace's followed jobs weigh 1 in all: trace 1 puts 4/5 of its weight in R1 (all
    # continue), trace 2 all of it (none continue): 0.8 / 1.8, not 4 / 43 as pooled jobs would
    assert r1["continue_probability"] == pytest.approx(0.8 / 1.8)


def test_weekly_points():
    jobs = [(d * 86400.0, 0, 100, 2, 1) for d in range(21)] + [(3 * 86400.0, 0, 1000, 4, 1)]
    result = analyze([decompose(trace(jobs))])
    week = result["traces"]["hand.swf"]["weekly"]
    assert week["weeks"] == 3 and week["jobs"] == [8, 7, 7]
    assert week["mean_node_seconds"][1] == 200.0
