"""sitesim's SLURM scheduler against real Slurm 22.05.8, on the runs validation/slurm/harness.py
recorded (tests/data/slurm_real; docs/results/real-slurm.md).

Each recorded run is replayed in sitesim (the jobs at the submit times Slurm recorded, the same
slurm.conf and associations) and compared with what Slurm did, job by job. The counts asserted
are those measured when the runs were recorded: a floor, to be raised as sitesim comes closer
to Slurm, never lowered to make a change pass. The tables print with ``pytest -s``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sitesim.platform.description import Platform
from sitesim.slurm.conf import read_slurm_conf
from sitesim.workload.swf import COLUMN, SWFTrace
from validation.slurm.compare import compare_case, summary_table
from validation.slurm.records import (
    SACCT_FIELDS,
    parse_sacct,
    recorded_runs,
    sacct_from_scontrol,
)
from validation.slurm.replay import renumber_partitions, replay

DATA = Path(__file__).resolve().parent / "data" / "slurm_real"

#: Per case and run: jobs of 38 whose start in sitesim's replay is within 10 s and within 30 s
#: of real Slurm's, as measured when the runs were recorded.
FLOOR: dict[str, dict[str, tuple[int, int]]] = {
    "a_fifo": {"run1": (38, 38), "run2": (38, 38)},
    "b_resolution1": {"run1": (38, 38), "run2": (38, 38)},
    "c_jobsize": {"run1": (38, 38), "run2": (38, 38)},
    "d_partitions": {"run1": (38, 38), "run2": (38, 38)},
    "e_fairshare": {"run1": (38, 38), "run2": (38, 38)},
    "f_resources": {"run1": (35, 37), "run2": (28, 33)},
}

#: The cases whose mean wait in sitesim is within 5 % of each real run's.
MEAN_WAIT_WITHIN_5_PERCENT = tuple(FLOOR)


def test_every_recorded_case_has_a_floor():
    recorded = sorted(p.name for p in DATA.iterdir() if recorded_runs(p))
    assert recorded == sorted(FLOOR)


@pytest.mark.parametrize("case", sorted(FLOOR))
def test_sitesim_agrees_with_real_slurm_at_least_as_measured(case):
    comparison = compare_case(DATA / case)
    print("\n" + summary_table(comparison))
    for row in comparison.rows:
        if row.label.startswith("sitesim vs "):
            run = row.label.removeprefix("sitesim vs ")
            within_10, within_30 = FLOOR[case][run]
            assert row.agreement.within[10] >= within_10, row.label
            assert row.agreement.within[30] >= within_30, row.label
            if case in MEAN_WAIT_WITHIN_5_PERCENT:
                a = row.agreement
                assert abs(a.mean_wait - a.mean_wait_reference) <= 0.05 * a.mean_wait_reference


def start_of(case: str, run: int, job: str) -> tuple[float, float]:
    """A job's start, from the run's first submission, in real Slurm and in sitesim's replay."""
    recorded = recorded_runs(DATA / case)[run - 1]
    real, simulated = recorded.schedule(), replay(recorded).schedule
    k, j = real.names.index(job), simulated.names.index(job)
    return real.start[k] - real.origin, simulated.start[j] - simulated.origin


def test_reservations_abut_and_start_when_slurm_estimates_running_jobs_end() -> None:
    """Case c, run 1, at 08:55:00 (150 s): Slurm reserved j19 from 08:57:00 (the last end of
    the running jobs it takes off together, job_test.c:1966-2057) to 08:58:00, where j23's
    reservation begins (a reservation may end where another begins: backfill.c:3391-3421),
    and so started j22 (1 min) at once, clear of both. sitesim reserved j19 after j23, at
    the end of the jobs' estimates, and started j22 a minute later."""
    real, simulated = start_of("c_jobsize", 1, "j22")
    assert real == 150.0
    assert abs(simulated - real) <= 10


def test_a_reservation_starts_at_the_last_end_of_a_group_of_running_jobs() -> None:
    """Case e, run 1, at 09:45:43 (149 s): Slurm reserved j23 (32 cores) from 09:47:19, the end
    of j20, the last of the four running jobs ending within 30 s of 09:47:00 (job_test.c:
    1966-2057), though 32 cores were free from 09:46:43; j22 (1 min, ending 09:46:43) ran
    clear of it and started at once. A reservation at the first end that frees enough
    blocked it."""
    real, simulated = start_of("e_fairshare", 1, "j22")
    assert real == 149.0
    assert abs(simulated - real) <= 10


def test_sacct_lines_written_from_scontrol_are_those_sacct_prints():
    """The cases without slurmdbd write sacct.txt from scontrol: on the case with slurmdbd
    the two agree field for field, but for ReqTRES, which scontrol keeps only as allocated
    (a job asking for 1 node and given 2), and ReqMem of a job that asked for no memory (sacct
    prints the node's, scontrol nothing; this case's jobs ask for none)."""
    for run in recorded_runs(DATA / "e_fairshare"):
        real = parse_sacct(run.sacct.read_text())
        written = parse_sacct(sacct_from_scontrol(run.scontrol_text()))
        assert len(real) == len(written) == 38
        for ours, theirs in zip(written, real, strict=True):
            for name in SACCT_FIELDS:
                if name not in ("ReqTRES", "ReqMem"):
                    assert ours[name] == theirs[name], (run.name, ours["JobID"], name)
            assert (ours["ReqMem"], theirs["ReqMem"]) == ("0", "1M")  # (RealMemory: 1 MB)


def test_partitions_are_renumbered_by_name_for_the_slurm_conf():
    platform = read_slurm_conf(DATA / "d_partitions" / "slurm.conf").platform
    assert isinstance(platform, Platform)
    data = np.full((3, len(COLUMN)), -1.0)
    data[:, COLUMN["partition"]] = [1, 2, -1]  # convert's numbers: short first seen
    trace = SWFTrace("t", [], data)
    out = renumber_partitions(trace, ["short", "batch"], platform)
    assert out.data[:, COLUMN["partition"]].tolist() == [2, 1, -1]  # batch is the conf's 1st
    with pytest.raises(ValueError, match="debug"):
        renumber_partitions(trace, ["short", "debug"], platform)
