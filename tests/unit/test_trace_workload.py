"""Turning SWF lines into replayable jobs: impossible jobs, estimates, load scaling."""

from __future__ import annotations

import numpy as np
import pytest

from sitesim.errors import ConfigError, InvalidJobError
from sitesim.models.trace_user import TraceWorkload
from sitesim.workload.swf import read_swf

#     job submit wait run procs cpu mem reqp reqt reqm st usr grp exe q part prec think
TRACE = """\
; MaxProcs: 8
1   0   0  100  4 -1 -1  4  200 -1 1 1 1 -1 0 -1 -1 -1
2  10   0   -1  2 -1 -1  2   60 -1 5 2 1 -1 0 -1 -1 -1
3   5   0   50 -1 -1 -1  2   -1 -1 1 1 1 -1 0 -1  1 30
4  20   0   50 16 -1 -1 16  100 -1 1 3 1 -1 0 -1 -1 -1
5  20   0   10 -1 -1 -1 -1   10 -1 1 3 1 -1 0 -1 -1 -1
6  30   0   10  1 -1 -1  1   20 -1 1 3 1 -1 0 -1 -1 -1
"""


@pytest.fixture
def trace(tmp_path):  # type: ignore[no-untyped-def]
    path = tmp_path / "w.swf"
    path.write_text(TRACE)
    return read_swf(path)


def test_lenient_skips_and_counts_impossible_jobs(trace):
    w = TraceWorkload.from_swf(trace, 8)
    assert w.skipped == {"unknown size": 1, "unknown runtime": 1, "larger than the machine": 1}
    assert w.number.tolist() == [1, 3, 6]  # sorted by submit time
    assert w.size.tolist() == [4, 2, 1]  # job 3 takes its requested processors
    assert w.estimate.tolist() == [200, 50, 20]  # job 3 has no request: its runtime
    assert w.estimates_filled == 1
    assert w.preceding.tolist() == [-1, 1, -1] and w.think[1] == 30


def test_strict_names_the_first_impossible_line(trace):
    with pytest.raises(InvalidJobError, match=r"w\.swf:6: job 5 has no processor count"):
        TraceWorkload.from_swf(trace, 8, strict=True)


def test_exact_estimates(trace):
    w = TraceWorkload.from_swf(trace, 8, estimates="exact")
    assert np.array_equal(w.estimate, w.runtime) and w.estimates_filled == 0
    with pytest.raises(ConfigError, match="estimates must be 'trace' or 'exact'"):
        TraceWorkload.from_swf(trace, 8, estimates="perfect")  # type: ignore[arg-type]


def test_load_scaling():
    w = TraceWorkload.from_jobs([0, 100, 200], [2, 2, 2], [50, 50, 50])
    assert w.offered_load(4) == pytest.approx(300 / (4 * 200))
    half = w.scaled(0.5)
    assert half.submit.tolist() == [0, 50, 100]
    target, factor = w.at_load(0.75, 4)
    assert target.offered_load(4) == pytest.approx(0.75) and factor == pytest.approx(0.5)
    with pytest.raises(ConfigError, match="scale factor must be > 0"):
        w.scaled(0)
    with pytest.raises(ConfigError, match="load must be > 0"):
        w.at_load(-1, 4)


def test_from_jobs_validates():
    with pytest.raises(ConfigError, match="every size must be >= 1"):
        TraceWorkload.from_jobs([0], [0], [1])
    with pytest.raises(ConfigError, match="same length"):
        TraceWorkload.from_jobs([0, 1], [1], [1])


def test_a_negative_runtime_or_submit_time_is_not_an_unknown_one(tmp_path):
    path = tmp_path / "n.swf"
    path.write_text(
        "; MaxProcs: 8\n"
        "1   0 0   -1 1 -1 -1 1 10 -1 1 1 1 -1 0 -1 -1 -1\n"
        "2   5 0 -500 1 -1 -1 1 10 -1 1 1 1 -1 0 -1 -1 -1\n"
        "3  -7 0   10 1 -1 -1 1 10 -1 1 1 1 -1 0 -1 -1 -1\n"
        "4  -1 0   10 1 -1 -1 1 10 -1 1 1 1 -1 0 -1 -1 -1\n"
        "5 9.5 0 -0.5 1 -1 -1 1 10 -1 1 1 1 -1 0 -1 -1 -1\n"
        "6  10 0   10 1 -1 -1 1 10 -1 1 1 1 -1 0 -1 -1 -1\n"
    )
    w = TraceWorkload.from_swf(read_swf(path), 8)
    assert w.skipped == {
        "unknown runtime": 1, "negative runtime": 2, "negative submit time": 1,
        "unknown submit time": 1,
    }  # fmt: skip
    assert w.number.tolist() == [6]
