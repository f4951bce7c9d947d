"""Downtime: the [downtime] table, maintenance windows, generated failures, failure files."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from sitesim.platform.description import Platform
from sitesim.platform.downtime import (
    FAILURE,
    MAINTENANCE,
    NO_DATE,
    Clock,
    Downtime,
    DowntimeWarning,
    Outages,
    Window,
)
from sitesim.platform.values import PlatformError

HOUR, DAY = 3600.0, 86_400.0
PARTS = {"normal": tuple(range(8)), "gpu": (8, 9)}


def build(data: dict[str, Any], base: Path | None = None) -> Downtime:
    return Downtime.from_dict(data, PARTS, 10, "site.toml", base)


def rows(outages: Outages) -> list[tuple[int, float, float, int]]:
    return list(
        zip(
            outages.node.tolist(),
            outages.down.tolist(),
            outages.up.tolist(),
            outages.kind.tolist(),
            strict=True,
        )
    )


# -- the [downtime] table ----------------------------------------------------------------------
def test_a_full_table() -> None:
    downtime = build(
        {
            "on_failure": "fail",
            "maintenance": [
                {"start": "1-08:00:00", "duration": "4:00:00", "every": "7-00:00:00",
                 "partitions": ["gpu"]},
                {"start": "0", "duration": 30, "nodes": ["0-2", "5", 7]},
                {"start": "2-00:00:00", "duration": "1:00:00"},
            ],
            "failures": {"mtbf": "1000-00:00:00", "mttr": "4:00:00", "partitions": "normal"},
        }
    )  # fmt: skip
    assert downtime.on_failure == "fail"
    assert downtime.windows == (
        Window(DAY + 8 * HOUR, 4 * HOUR, 7 * DAY, (8, 9)),
        Window(0.0, 30 * 60.0, math.inf, (0, 1, 2, 5, 7)),
        Window(2 * DAY, HOUR, math.inf, tuple(range(10))),
    )
    assert (downtime.mtbf, downtime.mttr) == (1000 * DAY, 4 * HOUR)
    assert downtime.failure_nodes == tuple(range(8))
    assert downtime.failure_file == ()


def test_defaults() -> None:
    downtime = build({"failures": {"mtbf": "100-00:00:00", "mttr": "60"}})
    assert downtime.on_failure == "requeue"
    assert downtime.windows == ()
    assert downtime.failure_nodes == tuple(range(10))  # all nodes
    assert downtime.mttr == HOUR  # 60 minutes, as Slurm reads a bare number
    assert build({}) == Downtime()


@pytest.mark.parametrize(
    ("data", "key", "says"),
    [
        ({"maintainance": []}, "downtime.maintainance", "on_failure, maintenance, failures"),
        ({"on_failure": "retry"}, "downtime.on_failure", "requeue, fail"),
        ({"maintenance": {"start": "0"}}, "downtime.maintenance", "[[downtime.maintenance]]"),
        ({"maintenance": [{"start": "0", "duration": "1:00:00", "when": "x"}]},
         "downtime.maintenance[0].when", "start, duration, every, nodes, partitions"),
        ({"maintenance": [{"duration": "1:00:00"}]}, "downtime.maintenance[0].start", "missing"),
        ({"maintenance": [{"start": "0", "duration": "0"}]},
         "downtime.maintenance[0].duration", "> 0"),
        ({"maintenance": [{"start": "0", "duration": -5}]},
         "downtime.maintenance[0].duration", "> 0"),
        ({"maintenance": [{"start": "0", "duration": "-4:00:00"}]},
         "downtime.maintenance[0].duration", "Slurm's syntax"),
        ({"maintenance": [{"start": "0", "duration": 1.5}]},
         "downtime.maintenance[0].duration", "got 1.5"),
        ({"maintenance": [{"start": "UNLIMITED", "duration": "1"}]},
         "downtime.maintenance[0].start", ">= 0"),
        ({"maintenance": [{"start": "0", "duration": "1"},
                          {"start": "0", "duration": "1"},
                          {"start": "0", "duration": "4:00:00", "every": "3:00:00"}]},
         "downtime.maintenance[2].every", "shorter than the duration"),
        ({"maintenance": [{"start": "0", "duration": "1", "partitions": ["bigmem"]}]},
         "downtime.maintenance[0].partitions", "'bigmem' is not a partition; one of normal, gpu"),
        ({"maintenance": [{"start": "0", "duration": "1", "partitions": []}]},
         "downtime.maintenance[0].partitions", "normal, gpu"),
        ({"maintenance": [{"start": "0", "duration": "1", "partitions": ["gpu"],
                           "nodes": ["0"]}]},
         "downtime.maintenance[0]", "nodes or partitions, not both"),
        ({"maintenance": [{"start": "0", "duration": "1", "nodes": ["5-10"]}]},
         "downtime.maintenance[0].nodes", "nodes are 0-9"),
        ({"maintenance": [{"start": "0", "duration": "1", "nodes": ["3-1"]}]},
         "downtime.maintenance[0].nodes", "reversed"),
        ({"maintenance": [{"start": "0", "duration": "1", "nodes": []}]},
         "downtime.maintenance[0].nodes", "'0-99'"),
        ({"failures": []}, "downtime.failures", "table"),
        ({"failures": {"mtbf": "1-00:00:00", "mttr": "1:00:00", "rate": 1}},
         "downtime.failures.rate", "mtbf, mttr, nodes, partitions, file"),
        ({"failures": {"nodes": ["0-3"]}}, "downtime.failures", "give mtbf"),
        ({"failures": {"mtbf": "1-00:00:00"}}, "downtime.failures.mttr", "with mtbf"),
        ({"failures": {"mtbf": "1-00:00:00", "mttr": "0"}}, "downtime.failures.mttr", "> 0"),
        ({"failures": {"mtbf": "1-00:00:00", "mttr": "UNLIMITED"}},
         "downtime.failures.mttr", "> 0"),
        ({"failures": {"mtbf": "0:00:00", "mttr": "1"}}, "downtime.failures.mtbf", "> 0"),
        ({"failures": {"mtbf": "UNLIMITED", "mttr": "1"}}, "downtime.failures.mttr",
         "finite mtbf"),
        ({"failures": {"mtbf": "1-0", "mttr": "1", "partitions": ["cpu"]}},
         "downtime.failures.partitions", "one of normal, gpu"),
        ({"maintenance": [{"start": "0", "duration": "1:00:00", "every": 60}]},
         "downtime.maintenance[0].every", "equals the duration: each window begins as the last "
         "ends and the nodes never come back"),
        ({"maintenance": [{"start": "0", "duration": "1", "nodes": ["0-3", "3-5"]}]},
         "downtime.maintenance[0].nodes", "'3-5' names node 3 again; list each node once"),
        ({"maintenance": [{"start": "36501-00:00:00", "duration": "1"}]},
         "downtime.maintenance[0].start", "is absurd; must be a time >= 0 and at most "
         "36500-00:00:00 (100 years)"),
        ({"failures": {"mtbf": 10**20, "mttr": "1"}}, "downtime.failures.mtbf", "is absurd"),
        ({"failures": {"mtbf": "1-0", "mttr": "1", "nodes": [1, 1]}},
         "downtime.failures.nodes", "1 names node 1 again"),
        ({"maintenance": [{"start": "2026-13-01", "duration": "1"}]},
         "downtime.maintenance[0].start", "'2026-13-01' is not a date"),
        ({"maintenance": [{"start": "2026-01-05", "duration": "1", "every": "MONTHLY"}]},
         "downtime.maintenance[0].every", "'MONTHLY' is not a time in Slurm's syntax"),
        ({"maintenance": [{"start": "0", "duration": "1-00:00:00", "every": "WEEKDAY"}]},
         "downtime.maintenance[0].duration", "a window repeated on weekdays must be shorter "
         "than a day"),
        ({"failures": {"file": 3}}, "downtime.failures.file", "a file name"),
        ({"failures": {"file": "absent.csv"}}, "downtime.failures.file", "cannot read"),
    ],
)  # fmt: skip
def test_bad_tables_name_the_key(data: dict[str, Any], key: str, says: str, tmp_path: Path) -> None:
    with pytest.raises(PlatformError) as caught:
        build(data, tmp_path)
    message = str(caught.value)
    assert message.startswith(f"site.toml: {key}: "), message
    assert says in message
    assert "\n" not in message


# -- maintenance windows -----------------------------------------------------------------------
def test_a_recurring_window_gives_exact_rows() -> None:
    downtime = Downtime((Window(3600.0, 600.0, 1800.0, (0, 2)),))
    assert rows(downtime.outages(7200.0, seed=0)) == [
        (0, 3600.0, 4200.0, MAINTENANCE),
        (2, 3600.0, 4200.0, MAINTENANCE),
        (0, 5400.0, 6000.0, MAINTENANCE),
        (2, 5400.0, 6000.0, MAINTENANCE),
    ]
    # a window that begins at the horizon is not one before it; one that ends after it is
    assert len(downtime.outages(5400.0, 0)) == 2
    assert len(downtime.outages(5400.5, 0)) == 4
    assert downtime.outages(3600.0, 0).node.dtype == np.int64


def test_windows_interleave_sorted_by_down_then_node() -> None:
    weekly = Window(DAY + 8 * HOUR, 4 * HOUR, 7 * DAY, (5,))
    once = Window(DAY + 8 * HOUR, HOUR, math.inf, (1, 3))
    outages = Downtime((weekly, once)).outages(16 * DAY, 0)
    assert outages.node.tolist() == [1, 3, 5, 5, 5]
    assert outages.down.tolist() == [DAY + 8 * HOUR] * 3 + [
        8 * DAY + 8 * HOUR,
        15 * DAY + 8 * HOUR,
    ]
    assert (outages.up - outages.down).tolist() == [HOUR, HOUR, 4 * HOUR, 4 * HOUR, 4 * HOUR]
    assert outages.kind.dtype == np.int8 and outages.down.dtype == np.float64


def test_an_infinite_horizon_only_for_what_ends() -> None:
    once = Downtime((Window(10.0, 5.0, math.inf, (0,)),))
    assert rows(once.outages(math.inf, 0)) == [(0, 10.0, 15.0, MAINTENANCE)]
    with pytest.raises(ValueError, match="recurs without end"):
        Downtime((Window(10.0, 5.0, 100.0, (0,)),)).outages(math.inf, 0)
    with pytest.raises(ValueError, match="mtbf"):
        Downtime(mtbf=DAY, mttr=HOUR, failure_nodes=(0,)).outages(math.inf, 0)
    with pytest.raises(ValueError, match="horizon"):
        once.outages(math.nan, 0)


def test_constructors_check_their_fields() -> None:
    for bad in (
        lambda: Window(0.0, 0.0, math.inf, (0,)),
        lambda: Window(0.0, 10.0, 5.0, (0,)),
        lambda: Window(0.0, 10.0, 10.0, (0,)),  # (back to back: the node never comes back)
        lambda: Window(-1.0, 10.0, math.inf, (0,)),
        lambda: Window(0.0, 10.0, math.inf, ()),
        lambda: Window(0.0, 10.0, math.inf, (2, 1)),
        lambda: Downtime(mtbf=DAY, mttr=0.0, failure_nodes=(0,)),
        lambda: Downtime(mtbf=DAY, mttr=HOUR),  # which nodes?
        lambda: Downtime(mtbf=0.0),
        lambda: Downtime(on_failure="retry"),  # type: ignore[arg-type]
        lambda: Downtime(failure_file=((0, 5.0, 1.0),)),
    ):
        with pytest.raises(ValueError):
            bad()


def test_a_window_that_never_ends_once_is_one_row_with_no_end() -> None:
    forever = Downtime((Window(HOUR, math.inf, math.inf, (1, 2)),))
    assert rows(forever.outages(DAY, 0)) == [
        (1, HOUR, math.inf, MAINTENANCE),
        (2, HOUR, math.inf, MAINTENANCE),
    ]


# -- generated failures ------------------------------------------------------------------------
FAILING = Downtime(mtbf=10 * DAY, mttr=4 * HOUR, failure_nodes=tuple(range(50)))


def test_same_seed_same_failures_other_seed_other_failures() -> None:
    first, again, other = (FAILING.outages(200 * DAY, seed) for seed in (7, 7, 8))
    assert len(first) > 500
    for name in ("node", "down", "up", "kind"):
        assert np.array_equal(getattr(first, name), getattr(again, name))
    assert not np.array_equal(first.down[:100], other.down[:100])
    assert set(first.kind.tolist()) == {FAILURE}


def test_pinned_failures() -> None:
    # The streams' derivation is part of what a seed means: a change here changes every run.
    outages = Downtime(mtbf=10 * DAY, mttr=4 * HOUR, failure_nodes=(0, 1)).outages(30 * DAY, 1)
    assert [row[:3] for row in rows(outages)] == [
        (0, 309596.0, 311027.0),
        (1, 482630.0, 519489.0),
        (1, 1063204.0, 1080042.0),
        (0, 1091193.0, 1094487.0),
        (1, 1115403.0, 1122280.0),
        (0, 2281810.0, 2313638.0),
        (1, 2459889.0, 2480929.0),
    ]


def test_failures_form_a_renewal_process_in_whole_seconds() -> None:
    outages = FAILING.outages(200 * DAY, 3)
    assert np.all(outages.down < 200 * DAY)
    assert np.all(outages.down < outages.up)
    assert np.all(outages.down == np.rint(outages.down))
    assert np.all(outages.up == np.rint(outages.up))
    assert np.all(np.diff(outages.down) >= 0)
    order = np.lexsort((outages.down, outages.node))
    node, down, up = outages.node[order], outages.down[order], outages.up[order]
    same = node[1:] == node[:-1]
    assert np.all(down[1:][same] > up[:-1][same])  # a node is repaired before it fails again


def test_a_nodes_failures_depend_on_neither_other_nodes_nor_the_horizon() -> None:
    everyone = FAILING.outages(200 * DAY, 5)
    some = Downtime(mtbf=10 * DAY, mttr=4 * HOUR, failure_nodes=(3, 40)).outages(100 * DAY, 5)
    keep = np.isin(everyone.node, (3, 40)) & (everyone.down < 100 * DAY)
    assert len(some) > 10
    assert np.array_equal(some.node, everyone.node[keep])
    assert np.array_equal(some.down, everyone.down[keep])
    assert np.array_equal(some.up, everyone.up[keep])


def test_many_rounds_of_draws_and_far_apart_nodes() -> None:
    # ~1,000 failures a node: many rounds of draws; nodes far apart skip whole chunks of rows
    downtime = Downtime(mtbf=1000.0, mttr=100.0, failure_nodes=(0, 70_000, 200_001))
    outages = downtime.outages(1_100_000.0, 1)
    counts = np.bincount(np.searchsorted([0, 70_000, 200_001], outages.node))
    assert np.all((counts > 900) & (counts < 1100))
    alone = Downtime(mtbf=1000.0, mttr=100.0, failure_nodes=(200_001,)).outages(1_100_000.0, 1)
    assert np.array_equal(alone.down, outages.down[outages.node == 200_001])


def test_skipped_rows_of_draws_are_the_rows_a_full_draw_gives() -> None:
    everyone = Downtime(mtbf=1000.0, mttr=100.0, failure_nodes=tuple(range(140_000)))
    few = (0, 65_535, 65_536, 65_537, 139_999)
    outages = everyone.outages(2000.0, 4)
    keep = np.isin(outages.node, few)
    alone = Downtime(mtbf=1000.0, mttr=100.0, failure_nodes=few).outages(2000.0, 4)
    assert len(alone) >= 5
    assert np.array_equal(alone.node, outages.node[keep])
    assert np.array_equal(alone.down, outages.down[keep])
    assert np.array_equal(alone.up, outages.up[keep])


def test_up_and_repair_times_have_the_means_asked_for() -> None:
    # 1,000 nodes x ~180 failures: the sample means' standard errors are 0.25 %; the bounds
    # are 3 %, and the seed is fixed.
    mtbf, mttr, horizon = 1000.0, 100.0, 200_000.0
    outages = Downtime(mtbf=mtbf, mttr=mttr, failure_nodes=tuple(range(1000))).outages(horizon, 11)
    order = np.lexsort((outages.down, outages.node))
    node, down, up = outages.node[order], outages.down[order], outages.up[order]
    first = np.r_[True, node[1:] != node[:-1]]
    uptime = down - np.where(first, 0.0, np.r_[0.0, up[:-1]])
    repair = up - down
    assert len(uptime) > 150_000
    assert uptime.mean() == pytest.approx(mtbf, rel=0.03)
    assert uptime.std() == pytest.approx(mtbf, rel=0.03)  # exponential: std = mean
    assert repair.mean() == pytest.approx(mttr, rel=0.03)
    assert len(outages) == pytest.approx(1000 * horizon / (mtbf + mttr), rel=0.03)


def test_failures_during_maintenance_keep_both_rows() -> None:
    window = Window(0.0, 100 * DAY, math.inf, (0,))
    downtime = Downtime((window,), mtbf=DAY, mttr=HOUR, failure_nodes=(0,))
    outages = downtime.outages(50 * DAY, 2)
    assert outages.kind[0] == MAINTENANCE
    assert np.count_nonzero(outages.kind == FAILURE) > 20
    # the node is down the whole 50 days once, not more
    assert outages.node_hours(50 * DAY) == pytest.approx(50 * 24)


def test_a_seed_is_whole_numbers_not_negative() -> None:
    one, listed, keyed, again = (FAILING.outages(50 * DAY, s) for s in (7, [7], [7, 3], [7, 3]))
    assert np.array_equal(one.down, listed.down)
    assert np.array_equal(keyed.down, again.down)
    assert not np.array_equal(one.down[:20], keyed.down[:20])
    assert len(FAILING.outages(DAY, np.int64(3))) == len(FAILING.outages(DAY, 3))
    for seed in (-1, 1.5, True, [], [1, -2], "7", [7, 1.0]):
        with pytest.raises(ValueError, match="seed"):
            FAILING.outages(DAY, seed)  # type: ignore[arg-type]


# -- outages drawn as a run reaches them ---------------------------------------------------------
def mixed(tmp_path: Path) -> Downtime:
    (tmp_path / "f.csv").write_text("9,10,20\n3,5000,5001\n9,20,30\n0,90000,1e6\n")
    return build(
        {
            "maintenance": [
                {"start": "1:00:00", "duration": "0:30:00", "every": "6:00:00", "nodes": ["0-3"]},
                {"start": "2:00:00", "duration": "UNLIMITED", "nodes": [9]},
                {"start": "1:00:00", "duration": "2:00:00", "partitions": ["gpu"]},
            ],
            "failures": {"mtbf": "1-00:00:00", "mttr": "1:00:00", "nodes": ["0-5"],
                         "file": "f.csv"},
        },
        tmp_path,
    )  # fmt: skip


@pytest.mark.parametrize(
    "steps", [[5 * DAY], [1.0, 3600.0, 3601.0, 4 * DAY], [977.0 * k for k in range(443)]]
)
def test_a_stream_hands_out_the_rows_of_outages_in_order_once(
    steps: list[float], tmp_path: Path
) -> None:
    downtime = mixed(tmp_path)
    whole = downtime.outages(5 * DAY, [3, 1])
    stream = downtime.stream(5 * DAY, [3, 1])
    blocks = [stream.until(t) for t in [*steps, 10 * DAY, 20 * DAY]]
    assert len(whole) > 100
    for name in ("node", "down", "up", "kind"):
        joined = np.concatenate([getattr(block, name) for block in blocks])
        assert np.array_equal(joined, getattr(whole, name)), name
    reached = -math.inf
    for t, block in zip([*steps, 10 * DAY], blocks, strict=False):
        assert np.all((block.down >= reached) & (block.down < t))
        reached = t


def test_a_stream_in_blocks_draws_only_what_is_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sitesim.platform.downtime import OutageStream

    monkeypatch.setattr(OutageStream, "BLOCK_ROWS", 5)
    downtime = mixed(tmp_path)
    blocks = list(downtime.stream(5 * DAY, 8).blocks())
    assert len(blocks) > 5 and blocks[-1][0] == math.inf
    assert [end for end, _ in blocks[:-1]] == sorted(end for end, _ in blocks[:-1])
    whole = downtime.outages(5 * DAY, 8)
    assert np.array_equal(np.concatenate([b.down for _, b in blocks]), whole.down)
    assert np.array_equal(np.concatenate([b.node for _, b in blocks]), whole.node)
    # a storm over a long horizon: asking for the first hour draws the first hour's failures
    # (and at most a round of 4 to 64 ahead per node), not the year's 16 million
    storm = Downtime(mtbf=1.0, mttr=1.0, failure_nodes=tuple(range(4)))
    stream = storm.stream(365 * DAY, 1)
    first = stream.until(HOUR)
    assert 1000 < len(first) < 4 * HOUR
    assert len(stream._drawn[0]) <= 4 * 64


def test_the_rate_of_outages() -> None:
    weekly = Window(0.0, HOUR, 7 * DAY, (0, 1))
    once = Window(0.0, HOUR, math.inf, (2,))
    downtime = Downtime((weekly, once), mtbf=9 * HOUR, mttr=HOUR, failure_nodes=(0, 1, 2))
    assert downtime.rate() == pytest.approx(2 / (7 * DAY) + 3 / (10 * HOUR))
    assert Downtime().rate() == 0.0


# -- node-hours --------------------------------------------------------------------------------
def test_node_hours_clip_to_the_horizon_and_count_a_node_once() -> None:
    outages = Outages(
        np.array([1, 1, 1, 2, 1, 4], np.int64),
        np.array([0.0, HOUR, 5 * HOUR, 0.0, 2 * HOUR, 20 * HOUR]),
        np.array([10 * HOUR, 3 * HOUR, 12 * HOUR, 30 * HOUR, 4 * HOUR, 21 * HOUR]),
        np.zeros(6, np.int8),
    )
    # node 1: [0, 12 h) (nested and overlapping rows); node 2: [0, 11 h) once clipped; node 4:
    # after the horizon
    assert outages.node_hours(11 * HOUR) == pytest.approx(11 + 11)
    assert outages.node_hours(100 * HOUR) == pytest.approx(12 + 30 + 1)
    assert outages.node_hours(0.0) == 0.0
    assert len(outages) == 6
    assert Downtime().outages(DAY, 0).node_hours(DAY) == 0.0


def test_node_hours_of_a_weekly_window() -> None:
    weekly = Window(DAY + 8 * HOUR, 4 * HOUR, 7 * DAY, tuple(range(10)))
    outages = Downtime((weekly,)).outages(15 * DAY + 10 * HOUR, 0)
    # two whole windows and 2 h of the third, on 10 nodes
    assert len(outages) == 30
    assert outages.node_hours(15 * DAY + 10 * HOUR) == pytest.approx(10 * (4 + 4 + 2))


# -- failure files -----------------------------------------------------------------------------
def test_a_failure_file(tmp_path: Path) -> None:
    (tmp_path / "failures.csv").write_text(
        "# from the site's logs\nnode,down,up\n\n3, 100, 250   # disk\n3,250,300\n0,50.5,60\n"
    )
    downtime = build({"failures": {"file": "failures.csv"}}, tmp_path)
    assert downtime.failure_file == ((3, 100.0, 250.0), (3, 250.0, 300.0), (0, 50.5, 60.0))
    assert downtime.mtbf == math.inf
    assert rows(downtime.outages(260.0, 0)) == [
        (0, 50.5, 60.0, FAILURE),
        (3, 100.0, 250.0, FAILURE),
        (3, 250.0, 300.0, FAILURE),
    ]
    assert len(downtime.outages(250.0, 0)) == 2
    assert len(downtime.outages(math.inf, 0)) == 3


def test_a_failure_file_beside_generated_failures(tmp_path: Path) -> None:
    (tmp_path / "f.csv").write_text("9,10,20\n")
    data = {"failures": {"mtbf": "10-00:00:00", "mttr": "1:00:00", "nodes": ["0-1"],
                         "file": "f.csv"}}  # fmt: skip
    outages = build(data, tmp_path).outages(100 * DAY, 0)
    assert set(outages.node.tolist()) == {0, 1, 9}
    assert rows(outages)[0] == (9, 10.0, 20.0, FAILURE)


@pytest.mark.parametrize(
    ("text", "line", "says"),
    [
        ("node,down,up\n3,100,200\n\n3,300,250\n", 4, "node 3 is down from 300 to 250: reversed"),
        ("3,100,100\n", 1, "reversed"),
        ("3,100,200\n4,0,1\n# x\n3,150,400\n", 4,
         "node 3 is down from 150 to 400, overlapping line 1 (100 to 200)"),
        ("3,150,400\n3,100,200\n", 2, "node 3 is down from 100 to 200, overlapping line 1"),
        ("3,0,1000\n3,10,20\n3,30,40\n", 2, "overlapping line 1"),
        ("1,0,5\n2.5,10,20\n", 2, "node '2.5' is not a whole number"),
        ("10,0,5\n", 1, "node 10 is not a node of the platform; nodes are 0-9"),
        ("-1,0,5\n", 1, "nodes are 0-9"),
        ("1,-5,5\n", 1, "down -5 must be a finite time >= 0"),
        ("1,5,inf\n", 1, "up inf must be a finite time >= 0"),
        ("1,5,soon\n", 1, "up 'soon' is not a time in seconds"),
        ("1,5\n", 1, "3 fields expected (node,down,up), got 2"),
        ("1,5,6\nnode,down,up\n", 2, "node 'node' is not a whole number"),
    ],
)  # fmt: skip
def test_bad_failure_files_name_the_line(text: str, line: int, says: str, tmp_path: Path) -> None:
    (tmp_path / "failures.csv").write_text(text)
    with pytest.raises(PlatformError) as caught:
        build({"failures": {"file": "failures.csv"}}, tmp_path)
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'failures.csv'}:{line}: "), message
    assert says in message
    assert "\n" not in message


def test_a_failure_file_from_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("f.csv").write_text("1,0,5\n")
    assert build({"failures": {"file": "f.csv"}}).failure_file == ((1, 0.0, 5.0),)


# -- through the platform ----------------------------------------------------------------------
SITE = """
[[nodes]]
type = "cpu"
count = 8
cores = 4

[[nodes]]
type = "gpu"
count = 2
cores = 4
gpus = 2

[[partitions]]
name = "normal"
nodes = ["cpu"]

[[partitions]]
name = "gpu"
nodes = ["gpu"]

[downtime]
on_failure = "fail"

[[downtime.maintenance]]
start = "1-08:00:00"
duration = "4:00:00"
every = "7-00:00:00"
partitions = ["gpu"]

[downtime.failures]
file = "logs/failures.csv"
"""


def test_a_platform_file_with_downtime(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "failures.csv").write_text("0,10,20\n")
    (tmp_path / "site.toml").write_text(SITE)
    platform = Platform.load(tmp_path / "site.toml")
    assert platform.downtime["on_failure"] == "fail"
    downtime = Downtime.from_dict(
        platform.downtime,
        {p.name: p.nodes for p in platform.partitions},
        platform.nodes,
        "site.toml",
        tmp_path,
    )
    assert downtime.windows == (Window(DAY + 8 * HOUR, 4 * HOUR, 7 * DAY, (8, 9)),)
    assert downtime.failure_file == ((0, 10.0, 20.0),)
    assert not platform.is_processors


def test_a_platform_file_with_bad_downtime(tmp_path: Path) -> None:
    (tmp_path / "site.toml").write_text(
        SITE.replace('partitions = ["gpu"]', 'partitions = ["fat"]')
    )
    with pytest.raises(PlatformError, match=r"site.toml: downtime.maintenance\[0\].partitions: "
                       r"'fat' is not a partition; one of normal, gpu"):  # fmt: skip
        Platform.load(tmp_path / "site.toml")
    (tmp_path / "site.toml").write_text(SITE)
    with pytest.raises(PlatformError, match=r"downtime.failures.file: cannot read .*failures"):
        Platform.load(tmp_path / "site.toml")
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "failures.csv").write_text("0,10,20\n0,15,30\n")
    with pytest.raises(PlatformError, match=r"logs/failures.csv:2: node 0 is down from 15"):
        Platform.load(tmp_path / "site.toml")


def test_a_failure_file_beside_a_platform_file_named_by_a_relative_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "site" / "logs").mkdir(parents=True)
    (tmp_path / "site" / "logs" / "failures.csv").write_text("0,10,20\n")
    (tmp_path / "site" / "site.toml").write_text(SITE)
    platform = Platform.load("site/site.toml")
    assert platform.downtime["failures"]["file"] in ("logs/failures.csv", "site/logs/failures.csv")


def test_platform_from_dict_with_a_downtime_table() -> None:
    data = {
        "nodes": [{"type": "cpu", "count": 4, "cores": 1}],
        "partitions": [{"name": "all", "nodes": ["cpu"]}],
        "downtime": {"maintenance": [{"start": "0", "duration": "1", "every": "2"}]},
    }
    platform = Platform.from_dict(data)
    assert platform.downtime == data["downtime"]
    data["downtime"] = {"maintenance": [{"start": "0", "duration": "3", "every": "2"}]}
    with pytest.raises(PlatformError, match=r"^platform: downtime.maintenance\[0\].every: "):
        Platform.from_dict(data)


# -- windows on the run's clock: dates, weekdays and weekends --------------------------------------
def on(clock: Clock, **row: Any) -> tuple[Window, ...]:
    return Downtime.from_dict({"maintenance": [row]}, PARTS, 10, "site.toml", None, clock).windows


def test_weekday_windows_follow_slurms_advance_from_a_saturday() -> None:
    # time 0 a Monday (no date); the first window on Saturday 08:00 comes once, then Monday to
    # Friday every week (reservation.c:6560-6568: Friday's next is 3 days on, Saturday's 2)
    windows = on(NO_DATE, start="5-08:00:00", duration="1:00:00", every="WEEKDAY", nodes="0")
    assert windows == (
        Window(5 * DAY + 8 * HOUR, HOUR, math.inf, (0,)),
        *(Window((7 + k) * DAY + 8 * HOUR, HOUR, 7 * DAY, (0,)) for k in range(5)),
    )


def test_weekend_windows_that_cross_midnight_come_friday_and_saturday_nights() -> None:
    # Wednesday 23:00 for 2 hours ends on a Thursday: next 6 - tm_wday = 2 days on, Friday;
    # Friday's ends on a Saturday: 1 day on; Saturday's ends on a Sunday: 6 days on, Friday
    # (reservation.c:6569-6577), so the cycle is Friday and Saturday nights, every week.
    windows = on(NO_DATE, start="2-23:00:00", duration="2:00:00", every="WEEKEND", nodes="0")
    assert windows == (
        Window(2 * DAY + 23 * HOUR, 2 * HOUR, math.inf, (0,)),
        Window(4 * DAY + 23 * HOUR, 2 * HOUR, 7 * DAY, (0,)),
        Window(5 * DAY + 23 * HOUR, 2 * HOUR, 7 * DAY, (0,)),
    )


def test_weekdays_by_the_sites_clocks() -> None:
    # time 0: Thursday 1 January 2026, 00:00 UTC; in Tokyo (UTC+9) already 09:00
    clock = Clock(datetime(2026, 1, 1, tzinfo=UTC).timestamp())
    windows = on(clock, start="0-08:00:00", duration="1:00:00", every="WEEKDAY", nodes="0")
    assert [w.start / DAY for w in windows] == [d + 8 / 24 for d in (0, 1, 4, 5, 6)]
    tokyo = Clock(clock.unix, ZoneInfo("Asia/Tokyo"))
    windows = on(tokyo, start="0-20:00:00", duration="1:00:00", every="WEEKDAY", nodes="0")
    assert [w.start / HOUR for w in windows] == [20, 92, 116, 140, 164]  # (Fri 05:00, Mon ...)


def test_dated_windows_before_time_0() -> None:
    clock = Clock(datetime(2026, 1, 7, tzinfo=UTC).timestamp())  # Wednesday
    # under way at time 0: from time 0 to its end
    assert on(clock, start="2026-01-06T22:00", duration="4:00:00") == (
        Window(0.0, 2 * HOUR, math.inf, tuple(range(10))),
    )
    # weekly since Monday 08:00: the next on Monday 12 January
    assert on(clock, start="2026-01-05T08:00", duration="4:00:00", every="7-0", nodes="1") == (
        Window(5 * DAY + 8 * HOUR, 4 * HOUR, 7 * DAY, (1,)),
    )
    # daily since the 1st at 23:00 for 2 hours: one under way, then every day
    assert on(clock, start="2026-01-01T23:00", duration="2:00:00", every="1-0", nodes="1") == (
        Window(0.0, HOUR, math.inf, (1,)),
        Window(23 * HOUR, 2 * HOUR, DAY, (1,)),
    )
    with pytest.warns(DowntimeWarning, match=r"site.toml: old: ends before the run's time 0 "
                      r"\(2026-01-07T00:00:00 \(UTC\)\): no effect"):  # fmt: skip
        assert on(clock, start="2025-12-01", duration="60", name="old") == ()


def test_a_platform_file_may_date_its_windows() -> None:
    data = {
        "nodes": [{"type": "cpu", "count": 4, "cores": 1}],
        "partitions": [{"name": "all", "nodes": ["cpu"]}],
        "downtime": {"maintenance": [{"start": "2026-01-05T08:00", "duration": "60"}]},
    }
    platform = Platform.from_dict(data)  # (checked; placed by a run's clock)
    assert platform.downtime == data["downtime"]
    with pytest.raises(PlatformError, match=r"platform: downtime.maintenance\[0\]: starts 2026"):
        platform.on_clock(NO_DATE, "platform")
