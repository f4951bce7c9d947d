"""Slurm's main and backfill schedulers on tiny sites: exact schedules of hand-built queues.

Each case sets one of Slurm's scheduler parameters (slurm.conf.html, SchedulerParameters) and
checks the start times it gives on a 4-processor machine.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sitesim.engine.site import Site
from sitesim.models.trace_user import TraceUser, TraceWorkload
from sitesim.schedulers import SLURM
from tests.conftest import run_jobs

#: Backfill at every pass, every limit lifted (as in the property tests), the main scheduler
#: at every pass (a job may start as it is submitted).
UNLIMITED: dict[str, Any] = {
    "batch_sched_delay": -1,
    "bf_interval": 0,
    "default_queue_depth": 10**6,
    "bf_max_job_test": 10**6,
    "bf_window": 10**6,
    "bf_resolution": 1,
}


def starts(jobs: list[tuple[float, int, float, float]], **settings: Any) -> list[float]:
    records = run_jobs(jobs, 4, SLURM(**{**UNLIMITED, **settings})).records
    return records["start"].tolist()


#: A 4-wide job running to 100, a 4-wide job waiting (reserved at 100), and a 1-wide job that
#: fits now: it backfills if it ends by 100.
BLOCKED = [(0.0, 3, 100.0, 100.0), (1.0, 4, 50.0, 50.0), (2.0, 1, 90.0, 90.0)]


def test_backfill_starts_a_job_that_ends_before_the_reservation() -> None:
    assert starts(BLOCKED) == [0.0, 100.0, 2.0]


def test_bf_max_job_test_stops_the_cycle_before_a_job_it_could_start() -> None:
    assert starts(BLOCKED, bf_max_job_test=1) == [0.0, 100.0, 150.0]


def test_on_processors_a_reservation_keeps_its_start() -> None:
    # the wide job's reservation from 100 s: on nodes it would be entered from 60 s (rounded
    # down to a minute), on processors it keeps its start (held from 60 s, processors busy
    # until 100 s would be counted twice): the narrow job, ending at 92 s, backfills
    assert starts(BLOCKED, bf_resolution=60, bf_window=10) == [0.0, 100.0, 2.0]


def test_beyond_bf_window_a_job_gets_no_reservation() -> None:
    # the wide job's start (100 s) is beyond a 1-minute window: no reservation is made, and a
    # long narrow job takes a processor past 100 s, delaying it
    jobs = [(0.0, 3, 100.0, 100.0), (1.0, 4, 50.0, 50.0), (2.0, 1, 500.0, 500.0)]
    assert starts(jobs) == [0.0, 502.0, 2.0] or starts(jobs)[1] == 100.0
    assert starts(jobs, bf_window=1) == [0.0, 502.0, 2.0]
    assert starts(jobs, bf_window=10) == [0.0, 100.0, 150.0]


def test_one_reservation_a_partition_lets_later_jobs_pass_the_second_blocked_job() -> None:
    jobs = [
        (0.0, 3, 100.0, 100.0),
        (1.0, 2, 50.0, 50.0),  # reserved on [100, 150)
        (2.0, 4, 50.0, 50.0),  # reserved on [150, 200), unless one reservation is the limit
        (3.0, 1, 400.0, 400.0),  # fits now and beside job 2, but runs into job 3's slot
    ]
    assert starts(jobs) == [0.0, 100.0, 150.0, 200.0]
    assert starts(jobs, bf_job_part_count_reserve=1) == [0.0, 100.0, 403.0, 3.0]


def test_a_full_plan_table_stops_the_cycle() -> None:
    # 3 of 4 processors busy to 100 s; two 4-wide jobs wait, then a 1-wide job of 10 s. The
    # first reservation (100-150 s) splits the table's one record twice: 3 records, the whole
    # table with bf_node_space_size=3, so the cycle stops at the second reservation and the
    # small job is not tested (backfill.c:2997-3021); with room for two more it backfills.
    jobs = [
        (0.0, 3, 100.0, 100.0),
        (0.0, 4, 50.0, 50.0),
        (0.0, 4, 50.0, 50.0),
        (0.0, 1, 10.0, 10.0),
    ]
    assert starts(jobs, bf_node_space_size=5)[3] == 0.0
    assert starts(jobs, bf_node_space_size=3)[3] == 200.0


def test_the_plan_table_counts_records_as_slurm_splits_them() -> None:
    from sitesim.schedulers.slurm import _PlanTable

    table = _PlanTable(0.0, 1000.0, 10, 60.0)
    table.add(120.0, 180.0)  # (two splits: [0,120) [120,180) [180,1000))
    table.add(180.0, 240.0)  # (its start is a record's end: one split)
    table.add(0.0, 0.0)  # (one step at least: [0,0) [0,60) [60,120) ...)
    table.add(900.0, 2000.0)  # (its end beyond the table: one split)
    assert table.records == 1 + 2 + 1 + 2 + 1
    table.add(1200.0, 1300.0)  # (beyond the table: none)
    assert table.records == 7 and not table.full


def test_a_backfill_cycle_waits_for_bf_interval() -> None:
    # the backfill cycle at t=0 finds nothing to start; the narrow job arriving at 10 cannot
    # pass the blocked wide one in the main scheduler, so it starts at the next cycle, 30 s
    # after the last (the scheduler wakes itself: no job arrives or ends then)
    jobs = [(0.0, 3, 100.0, 100.0), (0.0, 4, 50.0, 50.0), (10.0, 1, 20.0, 20.0)]
    assert starts(jobs, bf_interval=30) == [0.0, 100.0, 30.0]
    assert starts(jobs, bf_interval=0) == [0.0, 100.0, 10.0]


def test_default_queue_depth_limits_the_main_scheduler_only() -> None:
    jobs = [(0.0, 1, 10.0, 10.0), (0.0, 1, 10.0, 10.0), (0.0, 1, 10.0, 10.0)]
    # one job a main pass; the backfill cycle at the same pass starts the others
    assert starts(jobs, default_queue_depth=1) == [0.0, 0.0, 0.0]
    slurm = SLURM(**{**UNLIMITED, "default_queue_depth": 1})
    run_jobs(jobs, 4, slurm)
    assert slurm.stats()["started_by_main"] == 1 and slurm.stats()["started_by_backfill"] == 2


def test_job_size_weight_puts_large_jobs_first() -> None:
    # both wait behind a 4-wide job; the larger one starts first when size is weighted
    jobs = [(0.0, 4, 10.0, 10.0), (1.0, 1, 10.0, 10.0), (2.0, 4, 10.0, 10.0)]
    assert starts(jobs, bf_job_part_count_reserve=1) == [0.0, 10.0, 20.0]
    weighted = starts(jobs, PriorityWeightJobSize=1000, PriorityCalcPeriod=0)
    assert weighted == [0.0, 20.0, 10.0]


def test_decisions_record_each_start_with_its_factors_and_reason() -> None:
    jobs = [(0.0, 4, 10.0, 10.0), (1.0, 1, 10.0, 10.0), (2.0, 4, 10.0, 10.0)]
    slurm = SLURM(**{**UNLIMITED, "PriorityWeightJobSize": 1000, "PriorityCalcPeriod": 0})
    run_jobs(jobs, 4, slurm)
    table = slurm.decision_records()
    assert table["id"].tolist() == [1, 3, 2]
    # job size: (1 node, the minimum a job asking only cores has, / 4 + cores / 4) / 2
    assert table["job_size"].tolist() == [0.625, 0.625, 0.25]
    assert table["priority"].tolist() == [625, 625, 250]
    # (no pass looks at a queue while no processor is free: a job that waited only then is
    # recorded as waiting for resources)
    assert table["reason"].tolist() == ["None", "Resources", "Resources"]
    assert table["started_by"].tolist() == ["main", "main", "main"]
    assert np.all(table["age"] >= 0)


# -- QOS limits (qos.html; sacctmgr show qos --parsable2 output written by hand) ------------
QOS_HEADER = "Name|Priority|MaxWall|MaxTRESPU|MaxJobsPU|MaxSubmitPU|GrpTRES\n"


def run_users(
    jobs: list[tuple[float, int, float, int]], qos_line: str, tmp_path: Path
) -> tuple[Any, SLURM]:
    """Jobs ``(submit, size, runtime, user)`` on 4 processors under a QOS ``normal``."""
    path = tmp_path / "qos.txt"
    path.write_text(QOS_HEADER + qos_line + "\n")
    slurm = SLURM(qos=str(path), **UNLIMITED)
    submit, size, runtime, user = (list(c) for c in zip(*jobs, strict=True))
    site = Site(4, slurm)
    site.add_user(TraceUser(TraceWorkload.from_jobs(submit, size, runtime, runtime, user)))
    return site.run(), slurm


def test_max_jobs_per_user_holds_a_users_second_job(tmp_path: Path) -> None:
    jobs = [(0.0, 1, 10.0, 1), (0.0, 1, 10.0, 1), (0.0, 1, 10.0, 2)]
    result, slurm = run_users(jobs, "normal|0|||1||", tmp_path)
    assert result.records["start"].tolist() == [0.0, 10.0, 0.0]
    table = slurm.decision_records()
    assert table["reason"][table["id"] == 2].tolist() == ["QOSMaxJobsPerUserLimit"]


def test_max_tres_per_user_caps_the_cores_a_user_holds(tmp_path: Path) -> None:
    jobs = [(0.0, 2, 10.0, 1), (0.0, 2, 10.0, 1), (0.0, 2, 10.0, 2)]
    result, slurm = run_users(jobs, "normal|0||cpu=3|||", tmp_path)
    assert result.records["start"].tolist() == [0.0, 10.0, 0.0]
    assert "QOSMaxCpuPerUserLimit" in slurm.decision_records()["reason"].tolist()


def test_grp_tres_caps_the_whole_qos(tmp_path: Path) -> None:
    jobs = [(0.0, 2, 10.0, 1), (0.0, 2, 10.0, 2)]
    result, slurm = run_users(jobs, "normal|0|||||cpu=2", tmp_path)
    assert result.records["start"].tolist() == [0.0, 10.0]
    assert slurm.decision_records()["reason"].tolist() == ["None", "QOSGrpCpuLimit"]


def test_submissions_over_a_submit_limit_or_max_wall_are_refused(tmp_path: Path) -> None:
    jobs = [(0.0, 1, 10.0, 1), (0.0, 1, 10.0, 1), (0.0, 1, 10.0, 1), (0.0, 1, 7200.0, 2)]
    result, slurm = run_users(jobs, "normal|0|01:00:00|||2|", tmp_path)
    assert result.rejected == {
        "QOSMaxSubmitJobPerUserLimit": 1,
        "QOSMaxWallDurationPerJobLimit": 1,
    }
    assert len(result.records) == 2
    assert slurm.stats()["refused_QOSMaxSubmitJobPerUserLimit"] == 1


def test_a_job_larger_than_a_cap_is_refused_as_it_could_never_start(tmp_path: Path) -> None:
    result, _ = run_users([(0.0, 4, 10.0, 1)], "normal|0||cpu=2|||", tmp_path)
    assert result.rejected == {"QOSMaxCpuPerUserLimit": 1}


def test_a_reservation_holds_its_nodes_whole_on_shared_nodes() -> None:
    # Two 4-core nodes shared by jobs. A 4-core job fills node 0 to 100 s, a 3-core job holds
    # node 1 to 50 s; a 2-core job waits and is reserved on node 1 from 50 s. A 1-core job
    # fits now on node 1's free core and runs long: EASY lets it (node 1 keeps the 2 cores
    # the reservation needs), Slurm's backfill does not (the reservation takes node 1 whole:
    # backfill.c's node-space map), and it starts once the reserved job has.
    from sitesim.platform.description import Platform
    from sitesim.schedulers import EASY

    platform = Platform.from_dict(
        {
            "nodes": [{"type": "n", "count": 2, "cores": 4}],
            "partitions": [{"name": "all", "nodes": ["n"], "allocation": "shared"}],
        }
    )
    submit, size, runtime = [0.0, 0.0, 1.0, 2.0], [4, 3, 2, 1], [100.0, 50.0, 100.0, 1000.0]

    def run(scheduler: Any) -> list[float]:
        site = Site(platform, scheduler)
        site.add_user(TraceUser(TraceWorkload.from_jobs(submit, size, runtime, runtime)))
        return np.sort(site.run().records, order="id")["start"].tolist()  # type: ignore[no-any-return]

    assert run(EASY()) == [0.0, 0.0, 50.0, 2.0]
    assert run(SLURM(bf_job_part_count_reserve=1, **UNLIMITED)) == [0.0, 0.0, 50.0, 50.0]


# Rules of Slurm 22.05.8's schedulers (src/ in its source) that the records of real Slurm runs
# show (tests/data/slurm_real; docs/results/real-slurm.md): each case below is a small one
# built as the recorded runs are, on one 64-core node or processors, at Slurm's defaults
# (bf_interval=30, bf_resolution=60).

#: Each rule apart from slurmctld's timing (the main scheduler at every pass).
ONE_RULE: dict[str, Any] = {"batch_sched_delay": -1}

#: A 32-core job holding half the node to 230 s; a 64-core job waiting (reserved from 230 s);
#: a 32-core job that fits beside the first, its time limit a parameter.
HALF = [(0.0, 32, 230.0, 230.0), (0.0, 64, 60.0, 60.0)]


def on_node_or_processors(
    jobs: list[tuple[float, int, float, float]], on_node: bool, **settings: Any
) -> list[float]:
    """Start times on one 64-core node (a platform) or on 64 processors."""
    from sitesim.platform.description import Platform

    if not on_node:
        return run_jobs(jobs, 64, SLURM(**ONE_RULE, **settings)).records["start"].tolist()  # type: ignore[no-any-return]
    platform = Platform.from_dict(
        {
            "nodes": [{"type": "n", "count": 1, "cores": 64}],
            "partitions": [{"name": "batch", "nodes": ["n"], "allocation": "shared"}],
        }
    )
    submit, size, runtime, estimate = (list(c) for c in zip(*jobs, strict=True))
    site = Site(platform, SLURM(**ONE_RULE, **settings))
    site.add_user(TraceUser(TraceWorkload.from_jobs(submit, size, runtime, estimate)))
    return np.sort(site.run().records, order="id")["start"].tolist()  # type: ignore[no-any-return]


@pytest.mark.parametrize("on_node", [True])  # (on processors a reservation keeps its start)
def test_a_reservation_is_rounded_down_on_the_clock_and_candidates_keep_their_limits(
    on_node: bool,
) -> None:
    # Time 0 at 07:59:43 (case a, run 1): the reservation from 230 s (08:03:33) is entered
    # from 08:03:00, 197 s (backfill.c:2857-2864). A job of a 190 s limit ends before it
    # and backfills at once; one of 200 s runs into it and starts after the wide job.
    # (Rounding the candidate's limit up to 240 s instead, and keeping the reservation at
    # 230 s, turned the first away too.)
    zero = 1795766383.0
    for limit, first in ((190.0, 0.0), (200.0, 290.0)):
        jobs = [*HALF, (0.0, 32, limit, limit)]
        assert on_node_or_processors(jobs, on_node, time_zero=zero)[2] == first, limit
    # time 0 on the minute: the reservation is entered from 180 s, and the 190 s job waits
    jobs = [*HALF, (0.0, 32, 190.0, 190.0)]
    assert on_node_or_processors(jobs, on_node)[2] == 290.0


def test_a_replay_takes_its_clock_from_the_traces_unix_start_time(tmp_path: Path) -> None:
    # The case above replayed from an SWF file whose header puts time 0 at 07:59:43: the
    # 190 s job backfills at once, as with time_zero given; a time_zero given wins.
    import sitesim
    from sitesim.platform.description import Platform

    lines = ["; UnixStartTime: 1795766383", "; MaxProcs: 64"]
    for k, (submit, size, runtime, limit) in enumerate([*HALF, (0.0, 32, 190.0, 190.0)]):
        lines.append(f"{k + 1} {submit:g} -1 {runtime:g} {size} -1 -1 {size} {limit:g} "
                     "-1 1 1 1 -1 1 -1 -1 -1")  # fmt: skip
    trace = tmp_path / "t.swf"
    trace.write_text("\n".join(lines) + "\n", encoding="utf-8")
    node = Platform.from_dict(
        {
            "nodes": [{"type": "n", "count": 1, "cores": 64}],
            "partitions": [{"name": "batch", "nodes": ["n"], "allocation": "shared"}],
        }
    )

    def third(**given: Any) -> float:
        result = sitesim.replay(trace, "SLURM", platform=node, **ONE_RULE, **given)
        return float(np.sort(result.records, order="id")["start"][2])

    assert third() == 0.0
    assert third(time_zero=0) == 290.0
    assert "time_zero" not in sitesim.replay(trace, "SLURM", platform=node).config.scheduler_params


@pytest.mark.parametrize("on_node", [True, False])
def test_a_job_ending_when_a_reservation_begins_runs_into_it(on_node: bool) -> None:
    # The reservation from 180 s (on the minute: not moved); a job of a 180 s limit would end
    # exactly then. Slurm tests node_space[j].begin_time <= end_time (backfill.c:2417): it
    # does not backfill (it starts after the wide job); one of 179 s does.
    half = [(0.0, 32, 180.0, 180.0), (0.0, 64, 60.0, 60.0)]
    assert on_node_or_processors([*half, (0.0, 32, 180.0, 180.0)], on_node)[2] == 240.0
    assert on_node_or_processors([*half, (0.0, 32, 179.0, 179.0)], on_node)[2] == 0.0


def test_a_partition_that_cannot_start_its_job_keeps_its_nodes_from_the_main_pass() -> None:
    # Case d: nodes n1, n2 of 32 cores; batch on both, short on n2. A 32-core batch job runs
    # on n1 to 300 s, a 64-core batch job waits. A 16-core short job arriving at 5 s fits on
    # n2, but the main scheduler has taken batch's nodes (n1, n2) out of its pass once the
    # 64-core job could not start (job_scheduler.c:1985-1992): the backfill cycle at 30 s
    # starts it (in the recorded runs, such short jobs started at the next cycle, by backfill).
    from sitesim.platform.description import Platform

    platform = Platform.from_dict(
        {
            "nodes": [
                {"type": "n1", "count": 1, "cores": 32},
                {"type": "n2", "count": 1, "cores": 32},
            ],
            "partitions": [
                {"name": "batch", "nodes": ["n1", "n2"], "allocation": "shared"},
                {"name": "short", "nodes": ["n2"], "allocation": "shared"},
            ],
        }
    )
    jobs = [(0.0, 32, 300.0, 300.0, 1), (0.0, 64, 60.0, 60.0, 1), (5.0, 16, 60.0, 60.0, 2)]
    submit, size, runtime, estimate, part = (list(c) for c in zip(*jobs, strict=True))
    site = Site(platform, SLURM(**ONE_RULE))
    workload = TraceWorkload.from_jobs(submit, size, runtime, estimate)
    site.add_user(TraceUser(dataclasses.replace(workload, partition=np.array(part))))
    records = np.sort(site.run().records, order="id")
    assert records["start"].tolist() == [0.0, 300.0, 30.0]


def test_the_main_scheduler_runs_as_slurmctld_times_it() -> None:
    # Case a's first jobs (small: each fits at once), submitted at 0, 0, 5, 6, 10, 23, 24 s;
    # real Slurm started them at 3, 3, 6, 9, 12, 24, 27 s (run 1). A batch job is not started
    # as it is submitted (job_mgr.c:5497); the main scheduler runs for it at the background
    # thread's next tick, 3 s (batch_sched_delay) after its last such pass at the soonest
    # (controller.c:2221-2236). (The first two: Slurm's background pass before the first
    # submission is not known; sitesim starts them at its first tick.)
    submit = [0.0, 0.0, 5.0, 6.0, 10.0, 23.0, 24.0]
    jobs = [(t, 1, 600.0, 600.0) for t in submit]
    started = run_jobs(jobs, 64, SLURM()).records["start"].tolist()
    assert started == [1.0, 1.0, 6.0, 9.0, 12.0, 24.0, 27.0]
    assert run_jobs(jobs, 64, SLURM(batch_sched_delay=-1)).records["start"].tolist() == submit
