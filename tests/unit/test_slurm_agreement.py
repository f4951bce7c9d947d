"""The arithmetic of the real-Slurm harness (validation/slurm/agreement.py) on a hand-made pair
of schedules, every number worked out by hand."""

from __future__ import annotations

import pytest

from validation.slurm.agreement import Schedule, agree

#: Four jobs; the first submission at 100.
REFERENCE = Schedule.of(
    ["a", "b", "c", "d"],
    submit=[100, 100, 110, 120],
    start=[100, 105, 140, 200],
    end=[150, 160, 200, 260],
)
#: The same jobs an hour later, in another order: from the first submission (1000), a starts
#: at 0 (0 s off), b at 0 (-5 s: now with a), c at 51 (+11 s), d at 45 (-55 s: before c).
OTHER = Schedule.of(
    ["d", "c", "b", "a"],
    submit=[1020, 1010, 1000, 1000],
    start=[1045, 1051, 1000, 1000],
    end=[1105, 1111, 1055, 1050],
)


def test_a_schedule_against_a_reference_job_by_job():
    a = agree(REFERENCE, OTHER)
    assert a.names == ("a", "b", "c", "d")
    assert a.difference.tolist() == [0, -5, 11, -55]
    assert a.within == {10: 2, 30: 3}
    assert a.first == "c"  # (off by more than 10 s, and first to start in the reference)


def test_pairs_agree_when_their_order_is_the_same_a_tie_being_an_order():
    a = agree(REFERENCE, OTHER)
    # (a,b): a first against together; (c,d): c first against d first; the 4 others agree
    assert (a.pairs, a.pairs_agreeing) == (6, 4)
    assert a.order == pytest.approx(4 / 6)


def test_mean_waits_and_makespans_of_both():
    a = agree(REFERENCE, OTHER)
    assert a.mean_wait_reference == (0 + 5 + 30 + 80) / 4
    assert a.mean_wait == (0 + 0 + 41 + 25) / 4
    assert (a.makespan_reference, a.makespan) == (160, 111)


def test_a_schedule_agrees_with_itself_shifted():
    shifted = Schedule.of(
        REFERENCE.names, REFERENCE.submit + 7, REFERENCE.start + 7, REFERENCE.end + 7
    )
    a = agree(REFERENCE, shifted)
    assert a.within == {10: 4, 30: 4}
    assert (a.order, a.first) == (1.0, None)


def test_schedules_of_other_jobs_are_refused():
    fewer = Schedule.of(["a", "b"], [0, 0], [0, 1], [2, 3])
    with pytest.raises(ValueError, match="differ in their jobs: c, d"):
        agree(REFERENCE, fewer)
    with pytest.raises(ValueError, match="each job once"):
        Schedule.of(["a", "a"], [0, 0], [0, 1], [2, 3])
