"""Hourly time series: exact means of step functions."""

from __future__ import annotations

import numpy as np
import pytest

import sitesim
from sitesim.results.timeline import hourly, mean_level


def test_mean_level_integrates_intervals_exactly():
    edges = np.array([0.0, 10.0, 20.0, 30.0])
    level = mean_level(np.array([5.0, 15.0]), np.array([15.0, 40.0]), np.array([1.0, 2.0]), edges)
    # [0,10): 1 x 5 s; [10,20): 1 x 5 s + 2 x 5 s; [20,30): 2 x 10 s
    assert level.tolist() == [0.5, 1.5, 2.0]


def test_hourly_series_of_a_run_agree_with_its_summary():
    result = sitesim.simulate(10, "EASY", days=7, warmup_days=0, seed=3)
    series = hourly(result, 0.0, 7 * 86400.0)
    assert len(series["hour"]) == 7 * 24
    assert np.mean(series["utilization"]) == pytest.approx(result.summary.utilization)
    assert series["sessions_started"].sum() == result.summary.sessions
    assert (series["waiting"] >= 0).all() and (series["sessions"] >= 0).all()
