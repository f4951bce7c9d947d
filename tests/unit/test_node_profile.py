"""The plan of a pass on nodes (:class:`~sitesim.platform.profile.NodeProfile`) against a
search by brute force: a demand's earliest start is the first time, now or at a change, at
which it is placed on what stays free for its whole run; where it fits now clear of the
reservations; and when given resources (a reservation's own) are free for a run, no later than
a bound (Hypothesis)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sitesim.platform.description import Platform
from sitesim.platform.placement import Alloc, Demand, Free, Partitions, capacity, place
from sitesim.platform.profile import NodeProfile
from sitesim.platform.releases import Releases

PLATFORM = Platform.from_dict(
    {
        "nodes": [
            {"type": "a", "count": 4, "cores": 4},
            {"type": "b", "count": 3, "cores": 8},
            {"type": "c", "count": 2, "cores": 6},
        ],
        "partitions": [
            {"name": "all", "nodes": ["a", "b"], "allocation": "shared"},
            {"name": "b", "nodes": ["b"], "allocation": "shared"},
            {"name": "whole", "nodes": ["a"], "allocation": "exclusive"},
            {"name": "apart", "nodes": ["c"], "allocation": "shared"},  # (a group of its own)
        ],
    }
)
PARTS = Partitions(PLATFORM)
NOW = 100.0

#: Running jobs: (node, cores held there, estimated end).
RUNNING = st.lists(
    st.tuples(st.integers(0, 8), st.integers(1, 8), st.sampled_from([150.0, 200.0, 300.0])),
    max_size=12,
)
#: Reservations made before the question: (start, duration, partition, cores).
RESERVED = st.lists(
    st.tuples(
        st.sampled_from([100.0, 150.0, 250.0]), st.sampled_from([50.0, 100.0]),
        st.sampled_from([0, 1, 3]), st.integers(1, 12),
    ),
    max_size=2,
)  # fmt: skip
DEMAND = st.tuples(st.sampled_from([0, 1, 2, 3]), st.integers(1, 20), st.integers(0, 2))


def _profile(running: list[tuple[int, int, float]]) -> tuple[NodeProfile, Releases]:
    """A profile at NOW with ``running`` held (as much as each node has left)."""
    base = capacity(PLATFORM)
    releases = Releases(PARTS.node_group, rows=4)
    for node, cores, end in running:
        held = min(cores, int(base.cores[node]))
        if held:
            alloc = _on([node], [held])
            base.take(alloc)
            releases.add(alloc, end)
    return NodeProfile(PARTS, NOW, base, [], releases), releases


def _on(nodes: list[int], cores: list[int]) -> Alloc:
    zeros = np.zeros(len(nodes), dtype=np.int64)
    return Alloc(np.array(nodes), np.array(cores, dtype=np.int64), zeros, zeros.copy())


def _free_during(profile: NodeProfile, releases: Releases, start: float, end: float) -> Free:
    """What stays free on ``[start, end)`` by brute force: the least free at ``start`` and at
    every change inside (each state summed from the running jobs' rows and the profile's
    changes)."""
    times = [start] + [t for t in profile._times if start < t < end]
    lowest = None
    for t in times:
        state = profile.base.copy()
        for row in np.flatnonzero(releases.end <= t):
            state.cores[releases.node[row]] += releases.cores[row]
        for when, sign, alloc in zip(profile._times, profile._signs, profile._allocs, strict=True):
            if when <= t:
                state.cores[alloc.nodes] += sign * alloc.cores
        if lowest is not None:
            state = Free(*(np.minimum(a, b) for a, b in zip(lowest, state, strict=True)))
        lowest = state
    assert lowest is not None
    return lowest


def _reserve_where_free(
    profile: NodeProfile, releases: Releases, reserved: list[tuple[float, float, int, int]]
) -> None:
    """Make each reservation ``(start, duration, partition, cores)`` where it fits then (by
    brute force), if it does."""
    for start, length, part, cores in reserved:
        free = _free_during(profile, releases, start, start + length)
        if (at := place(PARTS, Demand(part, cores), free)) is not None:
            profile.reserve(start, length, at)


@settings(max_examples=300, deadline=None)
@given(RUNNING, RESERVED, DEMAND, st.sampled_from([30.0, 100.0, 400.0]))
def test_a_plan_on_nodes_as_a_brute_force_search(
    running: list[tuple[int, int, float]],
    reserved: list[tuple[float, float, int, int]],
    ask: tuple[int, int, int],
    duration: float,
) -> None:
    profile, releases = _profile(running)
    _reserve_where_free(profile, releases, reserved)
    part, cores, nodes = ask
    demand = Demand(part, cores, nodes=min(nodes, len(PARTS.nodes[part])))
    free_now = profile.base.cores > 0
    times = sorted({NOW, *releases.end[np.isfinite(releases.end)].tolist(), *profile._times})
    want: tuple[float, Alloc | None] = (math.inf, None)
    for t in times:
        if t < NOW:
            continue
        alloc = place(PARTS, demand, _free_during(profile, releases, t, t + duration), free_now)
        if alloc is not None:
            want = (t, alloc)
            break
    now_alloc = place(PARTS, demand, _free_during(profile, releases, NOW, NOW + duration))
    fits = profile.fits_now(demand, duration)
    assert (fits is None) == (now_alloc is None)
    if fits is not None:
        assert now_alloc is not None
        assert fits.nodes.tolist() == now_alloc.nodes.tolist()
    given = place(PARTS, demand, capacity(PLATFORM))  # (some resources of its partition)
    if given is not None:
        latest = 250.0
        free_from = None
        for t in times:
            if NOW <= t <= latest:
                free = _free_during(profile, releases, t, t + duration)
                if all((free[k][given.nodes] >= given[k + 1]).all() for k in range(3)):
                    free_from = t
                    break
        assert profile.earliest_on(given, duration, latest) == free_from
    start, where = profile.earliest(demand, duration)
    assert start == want[0]
    if want[1] is None:
        assert where is None
    else:
        assert where is not None
        assert where.nodes.tolist() == want[1].nodes.tolist()
        assert where.cores.tolist() == want[1].cores.tolist()


def _takings(profile: NodeProfile) -> list[tuple[float, list[int]]]:
    return [(taking.time, taking.after.cores.tolist()) for taking in profile._taking]


@settings(max_examples=300, deadline=None)
@given(RUNNING, RESERVED, DEMAND, st.sampled_from([30.0, 100.0, 400.0]), st.booleans())
def test_a_reservation_where_a_search_found_it_reads_what_is_free_then(
    running: list[tuple[int, int, float]],
    reserved: list[tuple[float, float, int, int]],
    ask: tuple[int, int, int],
    duration: float,
    on_its_nodes: bool,
) -> None:
    """A reservation where a search found it free leaves on its nodes what a reservation made
    without searching first leaves (the search keeps what is free): the start
    :meth:`NodeProfile.earliest_on` found for resources given, or the start and nodes
    :meth:`NodeProfile.earliest` found (past reservations or not, on shared or whole
    nodes)."""
    profiles = [_profile(running) for _ in range(2)]
    for profile, releases in profiles:
        _reserve_where_free(profile, releases, reserved)
    part, cores, nodes = ask
    demand = Demand(part, cores, nodes=min(nodes, len(PARTS.nodes[part])))
    (asked, _), (fresh, _) = profiles
    if on_its_nodes:
        where = place(PARTS, demand, capacity(PLATFORM))
        start = None if where is None else asked.earliest_on(where, duration, 400.0)
    else:
        start, where = asked.earliest(demand, duration)
    if where is None or start is None:
        return
    asked.reserve(start, duration, where)
    fresh.reserve(start, duration, where)
    assert _takings(asked) == _takings(fresh)


def test_a_reservation_placed_past_another_reads_what_is_free_at_its_own_start() -> None:
    """Every node of ``all`` is busy until 150 and a reservation takes 3 cores of node 0 on
    [160, 210): 2 cores for 100 s start at 150 on what stays free through [150, 250), a core
    of node 0 and one of node 1; at 150 itself node 0 has its 4 cores, so what the new
    reservation leaves there is 3 (not what stays free past the other one)."""
    running = [(node, int(PLATFORM.cores[node]), 150.0) for node in range(7)]
    profiles = [_profile(running) for _ in range(2)]
    for profile, releases in profiles:
        _reserve_where_free(profile, releases, [(160.0, 50.0, 0, 3)])
    (asked, _), (fresh, _) = profiles
    start, where = asked.earliest(Demand(0, 2), 100.0)
    assert where is not None and start == 150.0
    assert (where.nodes.tolist(), where.cores.tolist()) == ([0, 1], [1, 1])
    asked.reserve(start, 100.0, where)
    fresh.reserve(start, 100.0, where)
    assert _takings(asked) == _takings(fresh) == [(150.0, [3, 3]), (160.0, [0])]


#: Many reservations, their starts in any order: (start, duration, partition, cores).
MANY_RESERVED = st.lists(
    st.tuples(
        st.sampled_from([100.0, 120.0, 150.0, 200.0, 250.0, 300.0]),
        st.sampled_from([30.0, 50.0, 100.0]), st.sampled_from([0, 1, 3]), st.integers(1, 12),
    ),
    max_size=10,
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(RUNNING, MANY_RESERVED)
def test_what_each_reservation_leaves_is_what_is_free_right_after_it(
    running: list[tuple[int, int, float]], reserved: list[tuple[float, float, int, int]]
) -> None:
    """A reservation's taking keeps what is free on its nodes right after it, however many
    are made and in whatever order of their starts (by brute force)."""
    profile, releases = _profile(running)
    _reserve_where_free(profile, releases, reserved)
    for taking in profile._taking:
        then = _free_during(profile, releases, taking.time, taking.time)
        assert taking.after.cores.tolist() == then.cores[taking.alloc.nodes].tolist()


#: Nodes with GPUs and memory, one shared partition.
GPU_PLATFORM = Platform.from_dict(
    {
        "nodes": [{"type": "g", "count": 3, "cores": 4, "gpus": 2, "memory": 100}],
        "partitions": [{"name": "g", "nodes": ["g"], "allocation": "shared"}],
    }
)
GPU_PARTS = Partitions(GPU_PLATFORM)
#: Reservations after NOW: (start, duration, cores, GPUs and memory per node).
RESERVED_GPUS = st.lists(
    st.tuples(
        st.sampled_from([120.0, 150.0, 200.0]), st.sampled_from([30.0, 50.0, 100.0]),
        st.integers(1, 6), st.integers(0, 2), st.sampled_from([0, 50]),
    ),
    max_size=6,
)  # fmt: skip


def _free_of_all(profile: NodeProfile, start: float, end: float) -> Free:
    """Cores, GPUs and memory free on ``[start, end)`` with nothing running, by brute force:
    the least at ``start`` and at every change of the profile inside."""
    lowest = None
    for t in [start] + [t for t in profile._times if start < t < end]:
        state = capacity(GPU_PLATFORM)
        for when, sign, alloc in zip(profile._times, profile._signs, profile._allocs, strict=True):
            if when <= t:
                (state.give if sign > 0 else state.take)(alloc)
        lowest = state if lowest is None else Free(*map(np.minimum, lowest, state))
    assert lowest is not None
    return lowest


@settings(max_examples=200, deadline=None)
@given(RESERVED_GPUS, st.sampled_from([100.0, 130.0, 160.0]), st.sampled_from([20.0, 60.0, 200.0]))
def test_what_stays_free_over_a_window_counts_the_gpus_and_memory_taken(
    reserved: list[tuple[float, float, int, int, int]], start: float, length: float
) -> None:
    """What stays free from ``start`` for ``length`` seconds (the window a job must fit) is
    the least of each resource over it, GPUs and memory as well as cores, whether the
    reservations in it take any (by brute force)."""
    releases = Releases(GPU_PARTS.node_group, rows=4)
    profile = NodeProfile(GPU_PARTS, NOW, capacity(GPU_PLATFORM), [], releases)
    for at, duration, cores, gpus, memory in reserved:
        demand = Demand(0, cores, gpus=gpus, memory=memory)
        where = place(GPU_PARTS, demand, _free_of_all(profile, at, at + duration))
        if where is not None:
            profile.reserve(at, duration, where)
    window = profile._window(_free_of_all(profile, start, start), start, start + length)
    want = _free_of_all(profile, start, start + length)
    assert [a.tolist() for a in window] == [b.tolist() for b in want]
