"""The running jobs' rows by estimated end (:class:`~sitesim.platform.releases.Releases`): the
order kept from one reading to the next, of a group's rows or of all, is the order of a full
sort (by end, ties by row)."""

from __future__ import annotations

from collections.abc import Iterator
from unittest import mock

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sitesim.platform import releases as module
from sitesim.platform.placement import Alloc
from sitesim.platform.releases import Releases


@pytest.fixture(autouse=True, scope="module")
def _merged_from_one_row() -> Iterator[None]:
    """Readings merged however few rows a group holds (the tests' tables are small)."""
    with mock.patch.object(module, "MERGED", 1):
        yield


def _alloc(nodes: list[int], gpus: int = 0) -> Alloc:
    n = len(nodes)
    return Alloc(
        np.array(nodes, dtype=np.int64),
        np.arange(1, n + 1, dtype=np.int64),
        np.full(n, gpus, dtype=np.int64),
        np.zeros(n, dtype=np.int64),
    )


#: Each node's group of partitions: the nodes of the first rows alternate between two, and
#: a job's fresh nodes are given its group as it starts.
GROUPS = np.zeros(1000, dtype=np.int64)


def _full_sort(releases: Releases, group: int | None) -> tuple[np.ndarray, ...]:
    held = np.isfinite(releases.end)
    if group is not None:
        held &= GROUPS[releases.node] == group
    held = np.flatnonzero(held)
    order = held[np.argsort(releases.end[held], kind="stable")]
    return releases.end[order], releases.node[order], releases.cores[order], releases.gpus[order]


#: One step: take rows for a job (node count, end, GPUs, group), free a running job's
#: (index), or read the rows by end (of a group, or of all).
STEP = st.one_of(
    st.tuples(
        st.just("add"), st.integers(1, 5), st.sampled_from([10.0, 20.0, 30.0, 40.0]),
        st.integers(0, 1), st.integers(0, 1),
    ),
    st.tuples(st.just("remove"), st.integers(0, 1000)),
    st.tuples(st.just("read"), st.sampled_from([None, 0, 1])),
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.lists(STEP, max_size=80))
@example(  # (a row taken since a reading, freed, and taken again by another group)
    steps=[
        ("remove", 0), ("remove", 0), ("add", 1, 10.0, 0, 0), ("add", 1, 10.0, 0, 0),
        ("remove", 0), ("remove", 427), ("add", 1, 10.0, 0, 1),
    ]
)  # fmt: skip
def test_rows_by_end_as_a_full_sort(steps: list[tuple]) -> None:
    GROUPS[:40] = np.arange(40) % 2
    releases = Releases(GROUPS, rows=4)  # (small: rows are reused, and the columns grow)
    # (many rows held first: a reading then merges the few taken since, not a full sort)
    running = [releases.add(_alloc([k]), 10.0 * (1 + k % 4)) for k in range(40)]
    node = 40
    reads = [("read", None), ("read", 0), ("read", 1)]
    for step in [*reads, *steps, *reads]:
        if step[0] == "add":
            _, count, end, gpus, group = step
            nodes = list(range(node, node + count))
            GROUPS[nodes] = group
            running.append(releases.add(_alloc(nodes, gpus), end))
            node += count
        elif step[0] == "remove" and running:
            releases.remove(running.pop(step[1] % len(running)))
        elif step[0] == "read":
            ends, nodes, cores, gpus, memory = releases.by_end(step[1])
            want = _full_sort(releases, step[1])
            np.testing.assert_array_equal(ends, want[0])
            np.testing.assert_array_equal(nodes, want[1])
            np.testing.assert_array_equal(cores, want[2])
            if gpus is None:
                assert not want[3].any()
            else:
                np.testing.assert_array_equal(gpus, want[3])
            assert memory is None
        for view in releases._views.values():  # (none keeps what it will not merge)
            assert 8 * len(view.added) <= len(view.rows) + 8


def test_a_row_taken_again_goes_before_kept_rows_of_its_end() -> None:
    releases = Releases(rows=64)
    jobs = [releases.add(_alloc([k]), 30.0) for k in range(20)]
    releases.by_end()
    releases.remove(jobs[0])
    again = releases.add(_alloc([99]), 30.0)  # (row 0 again, with the end of rows 1-19)
    nodes = releases.by_end()[1]
    assert again.tolist() == [0]
    assert nodes.tolist() == [99, *range(1, 20)]


def test_a_row_freed_and_taken_again_between_readings() -> None:
    releases = Releases(rows=8)
    first = releases.add(_alloc([0, 1, 2]), 50.0)
    releases.add(_alloc([3]), 20.0)
    releases.by_end()
    releases.remove(first)
    again = releases.add(_alloc([7]), 5.0)  # (reuses a row of the first job)
    assert set(again.tolist()) <= set(first.tolist())
    ends, nodes, _, _, _ = releases.by_end()
    assert ends.tolist() == [5.0, 20.0]
    assert nodes.tolist() == [7, 3]
