"""How closely two schedules of the same jobs agree: job by job and in total.

A :class:`Schedule` is what one run did with a workload: each job's submit, start and end
time (seconds, any origin: each schedule is measured from its own first submission, so two
real runs started at different hours compare). :func:`agree` compares a schedule with a
reference one (real Slurm's), job by job by name:

- ``within(s)``: jobs whose start, from the first submission, differs by at most ``s``
  seconds (10 and 30 are reported);
- ``order``: the fraction of pairs of jobs that start in the same order in both, two jobs
  starting in the same second counting as a third order (so a pair agrees when both runs
  start them together, or both start the same one first);
- the mean wait (start minus submit) and the makespan (last end minus first submission) of
  each;
- ``first``: the job that disagrees (by more than 10 s) and starts first in the reference:
  where the two schedules part.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

#: The tolerances the report counts, seconds.
TOLERANCES = (10, 30)


@dataclass(frozen=True)
class Schedule:
    """One run of a workload: per job (by name) its submit, start and end times, seconds."""

    names: tuple[str, ...]
    submit: np.ndarray
    start: np.ndarray
    end: np.ndarray

    def __post_init__(self) -> None:
        n = len(self.names)
        if len(set(self.names)) != n:
            raise ValueError("a schedule names each job once")
        for label in ("submit", "start", "end"):
            if getattr(self, label).shape != (n,):
                raise ValueError(f"{label}: {n} times expected, one a job")

    @classmethod
    def of(
        cls,
        names: Sequence[str],
        submit: npt.ArrayLike,
        start: npt.ArrayLike,
        end: npt.ArrayLike,
    ) -> Schedule:
        """A schedule from plain sequences."""
        return cls(
            tuple(names),
            np.asarray(submit, dtype=np.float64),
            np.asarray(start, dtype=np.float64),
            np.asarray(end, dtype=np.float64),
        )

    @property
    def origin(self) -> float:
        """The first submission."""
        return float(self.submit.min())

    def aligned(self, names: Sequence[str]) -> Schedule:
        """The same schedule with its jobs in the order of ``names`` (the same set)."""
        if sorted(names) != sorted(self.names):
            missing = sorted(set(names) ^ set(self.names))
            raise ValueError(f"the schedules differ in their jobs: {', '.join(missing[:5])}")
        where = {name: k for k, name in enumerate(self.names)}
        rows = np.array([where[name] for name in names], dtype=np.int64)
        return Schedule(tuple(names), self.submit[rows], self.start[rows], self.end[rows])

    def mean_wait(self) -> float:
        """Mean of start minus submit, seconds."""
        return float(np.mean(self.start - self.submit))

    def makespan(self) -> float:
        """Last end minus first submission, seconds."""
        return float(self.end.max() - self.origin)


@dataclass(frozen=True)
class Agreement:
    """A schedule against a reference one (see the module's docstring).

    Attributes:
        names: the jobs, in the reference's order.
        difference: per job, its start from the first submission in the schedule minus the
            same in the reference, seconds.
        within: jobs within each of :data:`TOLERANCES` seconds.
        pairs, pairs_agreeing: pairs of jobs, and those whose start order agrees.
        mean_wait, mean_wait_reference, makespan, makespan_reference: seconds.
        first: the first job (by reference start) more than 10 s off, or None.
    """

    names: tuple[str, ...]
    difference: np.ndarray
    within: dict[int, int]
    pairs: int
    pairs_agreeing: int
    mean_wait: float
    mean_wait_reference: float
    makespan: float
    makespan_reference: float
    first: str | None

    @property
    def jobs(self) -> int:
        """Jobs compared."""
        return len(self.names)

    @property
    def order(self) -> float:
        """Fraction of pairs of jobs started in the same order (1.0 with fewer than 2 jobs)."""
        return self.pairs_agreeing / self.pairs if self.pairs else 1.0


def agree(reference: Schedule, other: Schedule) -> Agreement:
    """``other`` against ``reference``, job by job (by name) and in total."""
    other = other.aligned(reference.names)
    ref_start = reference.start - reference.origin
    start = other.start - other.origin
    difference = start - ref_start
    within = {s: int(np.count_nonzero(np.abs(difference) <= s)) for s in TOLERANCES}
    ref_order = np.sign(ref_start[:, None] - ref_start[None, :])
    order = np.sign(start[:, None] - start[None, :])
    upper = np.triu(np.ones(ref_order.shape, dtype=bool), k=1)
    off = np.flatnonzero(np.abs(difference) > TOLERANCES[0])
    first = None
    if len(off):
        k = off[np.lexsort((reference.submit[off], ref_start[off]))[0]]
        first = reference.names[int(k)]
    return Agreement(
        names=reference.names,
        difference=difference,
        within=within,
        pairs=int(upper.sum()),
        pairs_agreeing=int(np.count_nonzero((ref_order == order) & upper)),
        mean_wait=other.mean_wait(),
        mean_wait_reference=reference.mean_wait(),
        makespan=other.makespan(),
        makespan_reference=reference.makespan(),
        first=first,
    )
