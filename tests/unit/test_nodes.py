"""Placement, the node machine's outages, and the site boundary on platforms, on hand-built
platforms with exact expectations."""

from __future__ import annotations

import math
from collections.abc import Generator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from sitesim.cli.main import main
from sitesim.engine.job import Job, JobState
from sitesim.engine.site import Site
from sitesim.errors import ConfigError, InvalidJobError
from sitesim.platform.description import Platform
from sitesim.platform.downtime import FAILURE, MAINTENANCE, Outages
from sitesim.platform.placement import Demand, Partitions, Request, capacity, place
from sitesim.runs.config import ReplayConfig, RunConfig, SiteConfig
from sitesim.runs.runner import run
from sitesim.schedulers import create

MIXED = {
    "nodes": [
        {"type": "small", "count": 2, "cores": 4, "memory": "8G"},
        {"type": "big", "count": 2, "cores": 8, "gpus": 2, "memory": "16G"},
    ],
    "partitions": [
        {"name": "whole", "nodes": ["small", "big"], "max_time": "2:00:00"},
        {"name": "packed", "nodes": ["small", "big"], "allocation": "shared"},
        {"name": "gpu", "nodes": ["big"], "allocation": "shared"},
    ],
}


def parts(**changes: Any) -> Partitions:
    return Partitions(Platform.from_dict({**MIXED, **changes}))


def test_exclusive_first_fit_takes_whole_nodes_from_the_lowest() -> None:
    p = parts()
    alloc = place(p, Demand(0, cores=6), capacity(p.platform))
    assert alloc is not None
    assert alloc.nodes.tolist() == [0, 1]
    assert alloc.cores.tolist() == [4, 4]  # (whole nodes: every core)
    assert alloc.memory.tolist() == [8192, 8192]


def test_exclusive_best_fit_prefers_the_smallest_nodes_that_fit() -> None:
    p = parts(placement="best_fit")
    free = capacity(p.platform)
    free.cores[0] = 3  # node 0 is partly busy: not free for a whole-node job
    alloc = place(p, Demand(0, cores=4), free)
    assert alloc is not None and alloc.nodes.tolist() == [1]


def test_shared_packs_cores_and_best_fit_takes_the_tightest_node() -> None:
    p = parts()
    free = capacity(p.platform)
    free.cores[:] = [4, 1, 8, 3]
    first = place(p, Demand(1, cores=5), free)
    assert first is not None
    assert (first.nodes.tolist(), first.cores.tolist()) == ([0, 1], [4, 1])
    best = place(parts(placement="best_fit"), Demand(1, cores=2), free)
    assert best is not None and (best.nodes.tolist(), best.cores.tolist()) == ([3], [2])
    wide = place(parts(placement="best_fit"), Demand(1, cores=10), free)  # (no node holds it)
    assert wide is not None and (wide.nodes.tolist(), wide.cores.tolist()) == ([0, 2], [2, 8])


def first_fit(free_cores: list[int], want: int, late: list[bool]) -> tuple[list, list] | None:
    """First fit of ``want`` cores, node by node, the nodes in ``late`` after the others:
    (nodes, cores taken), ascending; None if they are not there."""
    taken: dict[int, int] = {}
    for node in sorted(range(len(free_cores)), key=lambda k: late[k]):  # (stable: by index)
        if want and free_cores[node]:
            taken[node] = min(free_cores[node], want)
            want -= taken[node]
    return None if want else (sorted(taken), [taken[k] for k in sorted(taken)])


@given(
    st.lists(st.integers(0, 8), min_size=4, max_size=4),
    st.integers(1, 30),
    st.none() | st.lists(st.booleans(), min_size=4, max_size=4),
)
@example([4, 4, 8, 8], 21, [True, False, False, False])  # (a late node before the others)
def test_shared_first_fit_of_cores_alone_takes_the_first_free_cores(
    free_cores: list[int], cores: int, last: list[bool] | None
) -> None:
    p = parts()
    free = capacity(p.platform)
    free.cores[:] = np.minimum(free_cores, p.platform.cores)
    alloc = place(p, Demand(1, cores), free, None if last is None else np.array(last))
    expected = first_fit(free.cores.tolist(), cores, last or [False] * 4)
    assert (alloc is None) == (expected is None)
    if alloc is not None and expected is not None:
        assert (alloc.nodes.tolist(), alloc.cores.tolist()) == expected
        assert not alloc.gpus.any() and not alloc.memory.any()


IDENTICAL = {
    "nodes": [{"type": "n", "count": 6, "cores": 4, "gpus": 1, "memory": "1G"}],
    "partitions": [{"name": "whole", "nodes": ["n"]}],
}


@given(
    st.lists(st.booleans(), min_size=6, max_size=6),
    st.none() | st.lists(st.booleans(), min_size=6, max_size=6),
    st.integers(1, 24),
)
def test_whole_identical_nodes_are_placed_as_that_many_nodes_would_be(
    idle: list[bool], last: list[bool] | None, cores: int
) -> None:
    p = Partitions(Platform.from_dict(IDENTICAL))
    free = capacity(p.platform)
    free.cores[:] = np.where(idle, 4, 1)
    late = None if last is None else np.array(last)
    by_count = place(p, Demand(0, cores), free, late)
    general = place(p, Demand(0, cores, nodes=-(-cores // 4)), free, late)
    assert (by_count is None) == (general is None) == (sum(idle) * 4 < cores)
    if by_count is not None and general is not None:
        assert all(np.array_equal(a, b) for a, b in zip(by_count, general, strict=True))


def test_shared_with_a_node_count_and_gpus_per_node() -> None:
    p = parts()
    alloc = place(p, Demand(2, cores=6, nodes=2, gpus=1, memory=1000), capacity(p.platform))
    assert alloc is not None
    assert alloc.nodes.tolist() == [2, 3]
    assert alloc.cores.tolist() == [3, 3]
    assert alloc.gpus.tolist() == [1, 1]
    assert alloc.memory.tolist() == [1000, 1000]
    free = capacity(p.platform)
    free.gpus[2] = 0
    assert place(p, Demand(2, cores=6, nodes=2, gpus=1), free) is None


class At:
    """Submits jobs ``(time, job)`` at their times."""

    def __init__(self, jobs: list[tuple[float, Job]]) -> None:
        self.jobs = jobs

    def run(self, site: Site) -> Generator[Any, Any, None]:
        for time, job in self.jobs:
            if time > site.now:
                yield site.env.timeout(time - site.now)
            site.submit(job)


def outages(rows: list[tuple[int, float, float, int]]) -> Outages:
    node, down, up, kind = (np.array(c) for c in zip(*rows, strict=True))
    return Outages(
        node.astype(np.int64), down.astype(float), up.astype(float), kind.astype(np.int8)
    )


def test_a_job_on_a_failing_node_is_requeued_and_its_lost_work_counted() -> None:
    site = Site(Platform.from_dict(MIXED), create("EASY"))
    site.machine.add_outages(outages([(0, 100.0, 400.0, FAILURE)]), requeue=True)
    job = Job(4, 1000.0, 2000.0)
    site.add_user(At([(0.0, job)]))
    result = site.run()
    assert job.state is JobState.COMPLETED
    assert job.start == 100.0 and job.end == 1100.0  # again at once, on node 1
    assert result.placement is not None and result.placement.nodes == ["1"]
    assert result.placement.table["requeues"].tolist() == [1]
    stats = result.platform_stats
    assert stats["jobs_requeued"] == 1
    assert stats["work_lost_core_h"] == pytest.approx(4 * 100 / 3600)
    assert stats["node_hours_down"] == pytest.approx(300 / 3600)


def test_without_requeue_a_job_on_a_failing_node_is_recorded_as_failed() -> None:
    site = Site(Platform.from_dict(MIXED), create("FCFS"))
    site.machine.add_outages(outages([(0, 100.0, 400.0, FAILURE)]), requeue=False)
    job = Job(4, 1000.0, 2000.0)
    site.add_user(At([(0.0, job)]))
    result = site.run()
    assert job.state is JobState.FAILED and job.end == 100.0
    assert result.records["runtime"].tolist() == [100.0]
    assert result.platform_stats["jobs_failed"] == 1


def test_a_node_in_two_outages_at_once_stays_down_until_both_end() -> None:
    nodes = [{"type": "n", "count": 1, "cores": 2}]
    platform = Platform.from_dict({"nodes": nodes, "partitions": [{"name": "p", "nodes": "n"}]})
    site = Site(platform, create("EASY"))
    rows = [(0, 0.0, 60.0, MAINTENANCE), (0, 0.0, 120.0, MAINTENANCE)]
    site.machine.add_outages(outages(rows), requeue=True)
    job = Job(1, 0.0, 1.0)
    site.add_user(At([(0.0, job)]))
    site.run()
    assert job.start == 120.0


def test_backfilling_never_starts_a_job_that_would_run_into_a_window() -> None:
    site = Site(Platform.from_dict(MIXED), create("EASY"))
    rows = [(n, 3600.0, 7200.0, MAINTENANCE) for n in range(4)]
    site.machine.add_outages(outages(rows), requeue=True)
    long, short = Job(4, 3000.0, 3601.0), Job(4, 100.0, 3600.0)
    site.add_user(At([(0.0, long), (0.0, short)]))
    site.run()
    assert short.start == 0.0  # ends by the window's start
    assert long.start == 7200.0  # (its estimate would overlap the window)


@pytest.mark.parametrize(
    ("ask", "estimate", "reason"),
    [
        (Request(partition="nope"), 60.0, "unknown partition"),
        (Request(partition="whole"), 7201.0, "time limit above its partition's"),
        (Request(partition="packed", gpus=1), 60.0, "larger than its partition"),
        (Request(partition="whole", gpus=3), 60.0, "asks for GPUs its partition has not"),
        (Request(partition="gpu"), 60.0, None),
    ],
)
def test_the_site_boundary_on_a_platform(ask: Request, estimate: float, reason: str | None) -> None:
    cores = 17 if ask.gpus == 1 else 2  # (17 cores on GPU nodes: more than they have)
    site = Site(Platform.from_dict(MIXED), create("EASY"))
    site.add_user(At([(0.0, Job(cores, 10.0, estimate, ask=ask))]))
    site.run()
    assert site.rejected == ({reason: 1} if reason else {})
    strict = Site(Platform.from_dict(MIXED), create("EASY"), strict=True)
    strict.add_user(At([(0.0, Job(cores, 10.0, estimate, ask=ask))]))
    if reason is None:
        strict.run()
    else:
        with pytest.raises(InvalidJobError, match="partition"):
            strict.run()


def test_a_platform_run_reruns_from_its_configuration(tmp_path: Path) -> None:
    path = tmp_path / "site.toml"
    path.write_text(
        '[[nodes]]\ntype = "n"\ncount = 8\ncores = 4\n\n[[partitions]]\nname = "all"\n'
        'nodes = ["n"]\nallocation = "shared"\n\n[downtime.failures]\nmtbf = "20-00:00:00"\n'
        'mttr = "4:00:00"\n'
    )
    config = SiteConfig(users=8, days=14, warmup_days=0, platform=str(path))
    assert config.procs == 32  # (the default partition's cores)
    first = run(config)
    assert first.config is not None and first.config.platform_sha256 is not None
    again = run(RunConfig.from_dict(first.config.to_dict()))
    assert again.summary == first.summary
    assert again.platform_stats == first.platform_stats
    assert first.platform_stats["node_hours_down"] > 0
    path.write_text(path.read_text().replace("count = 8", "count = 9"))
    with pytest.raises(Exception, match="has changed since the run"):
        run(RunConfig.from_dict(first.config.to_dict()))


def test_the_cli_refuses_a_bad_platform_file_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[[nodes]]\ntype = "n"\ncount = 0\ncores = 4\n')
    out = tmp_path / "out"
    args = ["run", "--platform", str(bad), "--users", "2", "--days", "2", "--out", str(out)]
    assert main(args) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "nodes[0].count" in lines[0] and str(bad) in lines[0]
    assert not out.exists()


SHARED = {
    **MIXED,
    "partitions": [
        {"name": "whole", "nodes": ["small", "big"], "share": 3},
        {"name": "gpu", "nodes": ["big"], "allocation": "shared", "share": 1},
    ],
}


def write_platform(folder: Path, data: dict[str, Any]) -> Path:
    """``data`` as a platform file in ``folder``."""
    tables = [("nodes", t) for t in data["nodes"]] + [("partitions", p) for p in data["partitions"]]
    text = "".join(
        f"[[{name}]]\n" + "".join(f"{k} = {v!r}\n" for k, v in table.items())
        for name, table in tables
    )
    path = folder / "site.toml"
    path.write_text(text.replace("'", '"'))
    return path


@pytest.mark.filterwarnings("ignore:site has 4 GPUs:sitesim.platform.boundary.RequestsWarning")
def test_simulated_users_jobs_are_spread_over_the_partitions_by_their_shares(
    tmp_path: Path,
) -> None:
    path = write_platform(tmp_path, SHARED)
    config = SiteConfig(users=20, days=28, warmup_days=0, platform=str(path), seed=3)
    result = run(config)
    assert result.placement is not None
    part = result.placement.table["partition"]
    on_gpu = result.records["size"][part == 1]
    assert len(on_gpu) and on_gpu.max() <= 16  # (only jobs the GPU nodes can hold)
    small = result.records["size"] <= 16
    share = float((part[small] == 1).mean())
    assert 0.15 < share < 0.35  # (a quarter of the jobs that fit both)
    assert np.array_equal(run(config).placement.table, result.placement.table)  # type: ignore[union-attr]


def test_a_job_that_ends_as_a_window_begins_is_not_killed() -> None:
    site = Site(Platform.from_dict(MIXED), create("EASY"))
    site.machine.add_outages(
        outages([(n, 100.0, 200.0, MAINTENANCE) for n in range(4)]), requeue=True
    )
    job = Job(4, 100.0, 100.0)
    site.add_user(At([(0.0, job)]))
    result = site.run()
    assert job.state is JobState.COMPLETED and job.end == 100.0
    assert result.platform_stats["jobs_requeued"] == 0


@pytest.mark.parametrize("name", ["CONSERVATIVE", "PLAN", "DYNP"])
def test_planners_never_start_a_job_into_a_later_window(name: str) -> None:
    nodes = [{"type": "n", "count": 2, "cores": 1, "memory": 1}]
    platform = Platform.from_dict({"nodes": nodes, "partitions": [{"name": "p", "nodes": "n"}]})
    site = Site(platform, create(name))
    site.machine.add_outages(outages([(0, 1000.0, 1100.0, MAINTENANCE)]), requeue=True)
    jobs = [Job(1, 500.0, 500.0), Job(1, 500.0, 500.0), Job(1, 800.0, 800.0)]
    site.add_user(At([(0.0, job) for job in jobs]))
    result = site.run()
    assert result.platform_stats["jobs_requeued"] == 0
    third = jobs[2]
    assert third.alloc.nodes.tolist() == [1] or third.start >= 1100.0


@pytest.mark.filterwarnings("ignore:site has 4 GPUs:sitesim.platform.boundary.RequestsWarning")
def test_a_site_level_trace_replayed_on_its_platform_keeps_each_jobs_partition(
    tmp_path: Path,
) -> None:
    from sitesim.results.report import result_trace
    from sitesim.runs.replay import run_replay

    path = write_platform(tmp_path, SHARED)
    closed = run(SiteConfig(users=12, days=14, warmup_days=0, platform=str(path)))
    assert closed.placement is not None
    assert set(closed.placement.table["partition"].tolist()) == {0, 1}
    trace = result_trace(closed)
    assert "; Partition: 2 gpu" in trace.header
    config = ReplayConfig(trace=trace.name, platform=str(path))
    opened = run_replay(config, trace=trace)
    assert opened.placement is not None
    assert np.array_equal(opened.placement.table["partition"], closed.placement.table["partition"])


# -- outages as the run reaches them (issue 32) ---------------------------------------------------
def identical(nodes: int) -> Platform:
    """``nodes`` 4-core nodes in one exclusive partition."""
    nodes_table = [{"type": "n", "count": nodes, "cores": 4}]
    return Platform.from_dict({"nodes": nodes_table, "partitions": [{"name": "p", "nodes": "n"}]})


def test_a_storm_of_failures_holds_one_block_not_every_failure_to_the_horizon() -> None:
    """4 nodes failing every 2 s on average over a 30-day horizon: 4.3 million outages, 2.5 GB
    when they were all drawn and turned into events before the run; the run of one short job
    ends in its first minutes and holds what it reached."""
    import tracemalloc

    from sitesim.platform.downtime import Downtime

    platform = identical(4)
    storm = Downtime(mtbf=1.0, mttr=1.0, failure_nodes=(0, 1, 2, 3))
    tracemalloc.start()
    try:
        site = Site(platform, create("EASY"))
        site.machine.add_outages(storm.stream(30 * 86_400.0, 1), requeue=True)
        job = Job(1, 5.0, 5.0)
        site.add_user(At([(0.0, job)]))
        result = site.run()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert job.state is JobState.COMPLETED
    assert result.platform_stats["jobs_requeued"] > 0
    assert site.now < 3600.0
    assert peak < 20 * 2**20, f"{peak / 2**20:.0f} MB"


def test_nodes_down_for_good_never_come_back_and_jobs_that_need_them_stop_the_run() -> None:
    platform = identical(2)
    site = Site(platform, create("EASY"))
    site.machine.add_outages(outages([(0, 100.0, math.inf, MAINTENANCE)]), requeue=True)
    small, large = Job(4, 50.0, 50.0), Job(8, 50.0, 50.0)
    site.add_user(At([(200.0, small), (300.0, large)]))
    with pytest.raises(ConfigError) as caught:
        site.run()
    assert str(caught.value) == (
        "1 jobs are still waiting on an idle machine after the last submission, and nodes 0 are "
        "down for good (an outage that never ends, such as a maintenance window with duration "
        "UNLIMITED): jobs that need them would never start"
    )
    assert (small.start, small.alloc.nodes.tolist()) == (200.0, [1])  # (not at t = inf)
    assert large.state is JobState.WAITING


def test_a_job_beside_a_node_down_for_good_runs_and_availability_counts_the_node() -> None:
    platform = identical(2)
    site = Site(platform, create("CONSERVATIVE"))
    site.machine.add_outages(outages([(0, 0.0, math.inf, MAINTENANCE)]), requeue=True)
    jobs = [Job(4, 3600.0, 3600.0), Job(4, 3600.0, 3600.0)]
    site.add_user(At([(0.0, jobs[0]), (3600.0, jobs[1])]))
    result = site.run()
    assert [job.start for job in jobs] == [0.0, 3600.0]
    assert result.platform_stats["availability"] == 0.5
    assert result.platform_stats["node_hours_down"] == 2.0


def test_the_machine_counts_the_node_time_the_rows_give(tmp_path: Path) -> None:
    """Node-hours down from the machine's record equal the union of each node's rows."""
    from sitesim.platform.downtime import Downtime

    (tmp_path / "f.csv").write_text("3,100,250\n3,250,300\n0,50.5,60\n1,7000,90000\n")
    downtime = Downtime.from_dict(
        {
            "maintenance": [
                {"start": "1:00:00", "duration": "0:30:00", "every": "6:00:00", "nodes": ["0-2"]},
                {"start": "1:10:00", "duration": "2:00:00", "nodes": [2, 3]},
            ],
            "failures": {"mtbf": "0:30:00", "mttr": "0:20:00", "nodes": ["1-3"], "file": "f.csv"},
        },
        {"whole": (0, 1, 2, 3)},
        4,
        "site.toml",
        tmp_path,
    )
    site = Site(Platform.from_dict(MIXED), create("EASY"))
    rows = downtime.outages(3 * 86_400.0, 5)
    site.machine.add_outages(downtime.stream(3 * 86_400.0, 5), requeue=True)
    site.add_user(At([(0.0, Job(4, 600.0, 900.0)), (2 * 86_400.0, Job(8, 600.0, 900.0))]))
    result = site.run()
    assert result.platform_stats["node_hours_down"] == pytest.approx(rows.node_hours(site.now))
    assert site.now > 2 * 86_400.0 and result.platform_stats["jobs_requeued"] >= 0


def test_merged_windows_keep_a_window_that_never_ends() -> None:
    from sitesim.platform.downtime import merged_intervals

    node, down, up = merged_intervals(
        np.array([0, 0, 1, 1]),
        np.array([0.0, 5.0, 3.0, 10.0]),
        np.array([math.inf, 7.0, 4.0, 12.0]),
    )
    assert (node.tolist(), down.tolist(), up.tolist()) == (
        [0, 1, 1],
        [0.0, 3.0, 10.0],
        [math.inf, 4.0, 12.0],
    )
