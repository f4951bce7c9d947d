"""A case's recorded runs against sitesim and against each other: the tables the harness
prints and the regression test checks."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from validation.slurm.agreement import TOLERANCES, Agreement, Schedule, agree
from validation.slurm.records import RecordedRun, recorded_runs
from validation.slurm.replay import Replayed, replay


@dataclass(frozen=True)
class Row:
    """One line of a case's table: a schedule against a reference."""

    label: str
    agreement: Agreement


@dataclass(frozen=True)
class CaseComparison:
    """A case: each recorded run's real schedule and sitesim's replay of it; the rows
    (sitesim against each run, then each later run against the first: the floor, then
    sitesim's EASY against each run, for contrast)."""

    case: str
    runs: list[RecordedRun]
    real: list[Schedule]
    simulated: list[Schedule]
    rows: list[Row]
    not_modelled: list[str]
    replays: list[Replayed]


def compare_case(folder: Path, params: dict[str, str] | None = None) -> CaseComparison:
    """Replay each recorded run of the case in ``folder`` and compare.

    Raises:
        ValueError: no recorded run in ``folder``.
    """
    runs = recorded_runs(folder)
    if not runs:
        raise ValueError(f"{folder}: no recorded run (run1/sacct.txt, ...)")
    real = [run.schedule() for run in runs]
    replays = [replay(run, params) for run in runs]
    simulated = [r.schedule for r in replays]
    rows = [
        Row(f"sitesim vs {run.folder.name}", agree(ref, sim))
        for run, ref, sim in zip(runs, real, simulated, strict=True)
    ]
    rows += [
        Row(f"{run.folder.name} vs {runs[0].folder.name}", agree(real[0], other))
        for run, other in zip(runs[1:], real[1:], strict=True)
    ]
    rows += [
        Row(f"EASY vs {run.folder.name}", agree(ref, replay(run, scheduler="EASY").schedule))
        for run, ref in zip(runs, real, strict=True)
    ]
    keys = [m.split(": ")[1] for m in replays[0].not_modelled if m.count(": ") >= 2]
    return CaseComparison(folder.name, runs, real, simulated, rows, sorted(set(keys)), replays)


def summary_table(comparison: CaseComparison) -> str:
    """The case's rows: jobs within 10 and 30 s, pairwise order agreement, mean wait and
    makespan (the schedule's, then the reference's), the first job more than 10 s off."""
    n = comparison.rows[0].agreement.jobs
    head = (
        f"{'':20s}" + "".join(f"{f'<={s} s':>8s}" for s in TOLERANCES)
        + f"{'order':>8s}{'wait (s)':>16s}{'makespan (s)':>16s}  first off"
    )  # fmt: skip
    title = f"{comparison.case}: {n} jobs"
    if comparison.not_modelled:
        title += f"; not modelled by sitesim: {', '.join(comparison.not_modelled)}"
    lines = [title, head]
    for row in comparison.rows:
        a = row.agreement
        lines.append(
            f"{row.label:20s}" + "".join(f"{f'{a.within[s]}/{a.jobs}':>8s}" for s in TOLERANCES)
            + f"{a.order:8.3f}{f'{a.mean_wait:.1f}/{a.mean_wait_reference:.1f}':>16s}"
            + f"{f'{a.makespan:.0f}/{a.makespan_reference:.0f}':>16s}  {a.first or '-'}"
        )  # fmt: skip
    return "\n".join(lines)


def jobs_table(comparison: CaseComparison) -> str:
    """Per job (by the first run's start): its submission and start in each run and in
    sitesim's replay of the first run, seconds from the run's first submission, sitesim's
    minus the first run's, and which scheduler started it in the first run and in sitesim
    (``m``: the main one, ``b``: backfill)."""
    first = comparison.real[0]
    origin = first.origin
    order = np.lexsort((first.submit, first.start))
    runs = [s.aligned(first.names) for s in comparison.real]
    sim = comparison.simulated[0].aligned(first.names)
    real_by = comparison.runs[0].started_by()
    sim_by = comparison.replays[0].started_by()
    head = (
        f"{'job':6s}{'submit':>8s}" + "".join(f"{r.folder.name:>8s}" for r in comparison.runs)
        + f"{'sitesim':>9s}{'diff':>7s}  by"
    )  # fmt: skip
    lines = [head]
    for k in order.tolist():
        name = first.names[k]
        starts = "".join(f"{s.start[k] - s.origin:8.0f}" for s in runs)
        mine = sim.start[k] - sim.origin
        lines.append(
            f"{name:6s}{first.submit[k] - origin:8.0f}{starts}{mine:9.0f}"
            f"{mine - (first.start[k] - origin):7.0f}  {real_by[name][:1]}{sim_by[name][:1]}"
        )
    return "\n".join(lines)
