"""The availability profile of the planning schedulers, against a brute-force timeline."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sitesim.engine.profile import AvailabilityProfile


def free_at(profile: AvailabilityProfile, t: float) -> int:
    """Processors free at time ``t`` (at or after the profile's start)."""
    k = max(i for i, start in enumerate(profile.times) if start <= t)
    return profile.free[k]


def brute_force_start(profile: AvailabilityProfile, size: int, duration: int) -> float:
    """The earliest whole second from which ``size`` processors stay free for ``duration``."""
    t = int(profile.times[0])
    while not all(free_at(profile, t + d) >= size for d in range(max(duration, 1))):
        t += 1
    return float(t)


@given(
    st.integers(1, 8),
    st.lists(st.tuples(st.integers(1, 30), st.integers(1, 4)), max_size=5),
    st.lists(st.tuples(st.integers(1, 8), st.integers(0, 20)), min_size=1, max_size=8),
)
def test_place_takes_the_earliest_fit_and_only_its_processors(
    idle: int, running: list[tuple[int, int]], jobs: list[tuple[int, int]]
) -> None:
    procs = idle + sum(size for _, size in running)
    ends = sorted((float(end), k, size) for k, (end, size) in enumerate(running))
    profile = AvailabilityProfile(0.0, idle, ends)
    for size, duration in jobs:
        size = min(size, procs)
        expected = brute_force_start(profile, size, duration)
        before = {t: free_at(profile, t) for t in range(0, 80)}
        assert profile.place(size, duration) == expected
        for t in range(0, 80):  # taken exactly on [start, start + duration)
            taken = size if expected <= t < expected + duration else 0
            assert free_at(profile, t) == before[t] - taken
        assert profile.times == sorted(set(profile.times))  # strictly increasing steps


@given(
    st.integers(1, 8),
    st.lists(st.tuples(st.integers(1, 30), st.integers(1, 4)), max_size=5),
    st.lists(st.tuples(st.integers(1, 8), st.integers(0, 20)), min_size=1, max_size=8),
)
def test_placing_all_in_one_call_is_placing_each(
    idle: int, running: list[tuple[int, int]], jobs: list[tuple[int, int]]
) -> None:
    # (a conservative schedule's compression on processors re-plans its queue in one call)
    procs = idle + sum(size for _, size in running)
    ends = sorted((float(end), k, size) for k, (end, size) in enumerate(running))
    one, each = AvailabilityProfile(0.0, idle, ends), AvailabilityProfile(0.0, idle, ends)
    jobs = [(min(size, procs), float(duration)) for size, duration in jobs]
    assert one.place_all(jobs) == [each.place(size, duration) for size, duration in jobs]
    assert (one.times, one.free) == (each.times, each.free)
