"""What a learned policy decides on: the first k waiting jobs and the machine, as numbers.

The observation of a pass is one flat ``float32`` vector. In the **sitesim layout** it is k
rows of :data:`JOB_FEATURES`, the first k waiting jobs in arrival order (rows past the queue's
end all zeros), then :data:`MACHINE_FEATURES`:

====================  ==========================================================================
job feature           value (each in [0, 1])
====================  ==========================================================================
``present``           1 for a waiting job, 0 for an empty row
``size``              its cores / the machine's cores
``gpus``              its GPUs (GPUs per node × nodes asked, one node if it names none) /
                      the machine's GPUs; 0 without GPUs
``estimate``          its requested time, on the time scale below
``fits``              1 if the job could start now (where the pass stands), else 0
``wait``              how long it has waited so far, on the time scale
``session_time``      time since its user's session began, on the time scale
``batch_jobs``        jobs of its batch submitted so far, on the count scale
``batch_open``        jobs of its batch not ended yet (what its user still waits for)
====================  ==========================================================================

Sessions and batches are those a scheduler can see (:mod:`sitesim.gym.sessions`). The time
scale is ``log1p(t / 1 min) / log1p(1 week / 1 min)``, capped at 1 (a week or more); the count
scale ``log1p(n) / log1p(1000)``, capped at 1.

====================  ==========================================================================
machine feature       value
====================  ==========================================================================
``free_cores``        cores free now / the machine's cores
``free_gpus``         GPUs free now / the machine's GPUs (0 without GPUs)
``waiting``           jobs waiting, on the count scale
``released_15m``      cores the running jobs give back within 15 min by their estimates /
``released_1h``       the machine's cores, and within 1 h, 4 h and a day: a compact profile
``released_4h``       of future releases
``released_1d``
``day_sin``           sin and cos of the time of day (time 0 is midnight), in [-1, 1]
``day_cos``
====================  ==========================================================================

The **SchedGym layout** is that of SchedGym, the environment of RLScheduler (Zhang et al.,
SC '20; ``HPCSimPickJobs.py``, ``build_observation``, of github.com/DIR-LAB/deep-batch-scheduler):
k rows (128 there) of 8 features, no machine features: wait / 12 h, requested time /
``max_runtime`` (SchedGym divides by the trace's longest runtime), requested processors / the
machine's, requested memory, user id / ``max_user``, group id and executable id, each capped at
1 − 1e-5, and "can schedule now" (1 − 1e-5 or 1e-5). sitesim's jobs carry no memory, group or
executable, which SchedGym then sets to 1, as it does for a trace that has none. An empty row is
``[0, 1, 1, 1, 1, 1, 1, 0]``. SchedGym shows a long queue's jobs chosen by several heuristics;
here the first k in arrival order (the same as SchedGym's while k jobs or fewer wait).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from sitesim.engine.machine import ProcessorResources
from sitesim.errors import require
from sitesim.gym.sessions import Sessions

if TYPE_CHECKING:
    from sitesim.engine.job import Job
    from sitesim.engine.resources import Resources

JOB_FEATURES = (
    "present", "size", "gpus", "estimate", "fits", "wait", "session_time", "batch_jobs",
    "batch_open",
)  # fmt: skip
MACHINE_FEATURES = (
    "free_cores", "free_gpus", "waiting", "released_15m", "released_1h", "released_4h",
    "released_1d", "day_sin", "day_cos",
)  # fmt: skip
SCHEDGYM_FEATURES = ("wait", "estimate", "size", "memory", "user", "group", "executable", "fits")
LAYOUTS = ("sitesim", "schedgym")
#: The columns of :class:`Waiting`'s table.
COLUMNS = (
    "present", "size", "gpus", "estimate", "submit_min", "session_min", "batch", "cores",
    "estimate_s", "user", "id",
)  # fmt: skip
#: The horizons of ``released_*``, seconds.
RELEASES = (900.0, 3600.0, 14_400.0, 86_400.0)
#: Where the time scale reaches 1: a week, in minutes.
TIME_TOP = 7 * 24 * 60.0
#: Where the count scale reaches 1.
COUNT_TOP = 1000.0
#: SchedGym's wait normalization (its MAX_WAIT_TIME), and its cap below 1.
SCHEDGYM_WAIT = 12 * 3600.0
SCHEDGYM_CAP = 1.0 - 1e-5
_TIME = 1.0 / math.log1p(TIME_TOP)
_COUNT = 1.0 / math.log1p(COUNT_TOP)
#: Per column of (wait, session time, batch jobs, batch open), in minutes and counts: the
#: normalization after log1p.
_NORM = np.array([_TIME, _TIME, _COUNT, _COUNT])
_SUBMIT, _CORES, _ESTIMATE, _USER = (
    COLUMNS.index(c) for c in ("submit_min", "cores", "estimate_s", "user")
)
_DAY = 86_400.0


def time_scale(seconds: np.ndarray) -> np.ndarray:
    """Durations on the time scale: ``log1p(t / 1 min) / log1p(1 week)``, capped at 1."""
    return np.minimum(np.log1p(np.maximum(seconds, 0.0) / 60.0) * _TIME, 1.0)


def count_scale(counts: np.ndarray) -> np.ndarray:
    """Counts on the count scale: ``log1p(n) / log1p(1000)``, capped at 1."""
    return np.minimum(np.log1p(counts) * _COUNT, 1.0)


class Waiting:
    """The waiting jobs' numbers, one row each in a NumPy table kept in the order of a queue
    in arrival order (a row appended as a job arrives, deleted as it leaves): the first k rows
    are read without a Python step per job.

    Columns (:data:`COLUMNS`): the ``present``, ``size``, ``gpus`` and ``estimate`` features
    (fixed at arrival), its submit time and its session's start (minutes), its batch, its
    size (cores), estimate (seconds), user and id.
    """

    __slots__ = ("_ids", "table", "used")

    def __init__(self) -> None:
        self.table = np.zeros((64, len(COLUMNS)))
        self.used = 0
        self._ids: list[int] = []  # (for the positions of leaving jobs)

    def __len__(self) -> int:
        return self.used

    def append(self, job: Job, row: tuple[float, ...]) -> None:
        """A job joined the end of the queue, with its row."""
        if self.used == len(self.table):
            self.table = np.concatenate([self.table, np.zeros_like(self.table)])
        self.table[self.used] = row
        self.used += 1
        self._ids.append(job.id)

    def first(self, n: int) -> np.ndarray:
        """The first ``n`` rows (a view)."""
        return self.table[:n]

    def remove(self, queue: list[Job], jobs: Sequence[Job]) -> None:
        """Take ``jobs`` off ``queue`` and off the table (jobs not in the queue are
        ignored)."""
        if len(jobs) == 1 and queue and queue[0] is jobs[0]:
            positions = [0]
        else:
            positions = []
            ids = self._ids
            for job in jobs:
                k = bisect_left(ids, job.id)  # (ids grow with arrival)
                if not (k < len(queue) and queue[k] is job):
                    try:  # (a requeued job waits again behind later ones)
                        k = queue.index(job)
                    except ValueError:
                        continue
                positions.append(k)
            positions.sort(reverse=True)
        table, used = self.table, self.used
        for k in positions:
            del queue[k], self._ids[k]
            table[k : used - 1] = table[k + 1 : used]
            used -= 1
        self.used = used


class Observer:
    """Keeps what the observation needs as jobs arrive, start and end, and builds it.

    A scheduler that decides on observations (:mod:`sitesim.gym.policies`) owns one and tells
    it of every arrival (:meth:`submit`), end (:meth:`ended`) and job leaving the queue
    (:meth:`remove`, which takes it off the queue too).

    Args:
        k: jobs shown, ``k >= 1``.
        layout: ``"sitesim"`` or ``"schedgym"`` (see the module docstring).
        max_runtime: SchedGym's runtime normalization, seconds.
        max_user: SchedGym's user-id normalization.
    """

    def __init__(
        self,
        k: int,
        layout: str = "sitesim",
        *,
        max_runtime: float = 12 * 3600.0,
        max_user: int = 1,
    ) -> None:
        require(
            isinstance(k, int) and not isinstance(k, bool) and k >= 1,
            f"k (the waiting jobs an observation shows) must be an integer >= 1, got {k!r}",
        )
        require(layout in LAYOUTS, f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
        require(max_runtime > 0, f"max_runtime must be > 0 s, got {max_runtime}")
        require(max_user >= 1, f"max_user must be >= 1, got {max_user}")
        self.k = k
        self.layout = layout
        self.max_runtime = float(max_runtime)
        self.max_user = int(max_user)
        self.sessions = Sessions()
        self.waiting = Waiting()
        self.cores = 1
        self.total_gpus = 0
        self._nodes = False
        #: The latest time it was told of (an arrival or an end).
        self.clock = 0.0

    # -- shape -------------------------------------------------------------------------------
    @property
    def job_features(self) -> tuple[str, ...]:
        """The names of a job row's features."""
        return JOB_FEATURES if self.layout == "sitesim" else SCHEDGYM_FEATURES

    @property
    def machine_features(self) -> tuple[str, ...]:
        """The names of the machine's features (none in the SchedGym layout)."""
        return MACHINE_FEATURES if self.layout == "sitesim" else ()

    @property
    def names(self) -> list[str]:
        """The name of every value of the observation, in order (``job3.wait``, ...)."""
        rows = [f"job{i}.{name}" for i in range(self.k) for name in self.job_features]
        return rows + [f"machine.{name}" for name in self.machine_features]

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """The lowest and highest value of each element of the observation."""
        size = self.k * len(self.job_features) + len(self.machine_features)
        low, high = np.zeros(size, np.float32), np.ones(size, np.float32)
        if self.layout == "sitesim":
            low[-2:] = -1.0  # (day_sin, day_cos)
        return low, high

    # -- what happens ------------------------------------------------------------------------
    def on_site(self, machine: Any) -> None:
        """The machine: its cores (``procs``) and, on a platform, its GPUs."""
        self.cores = int(machine.procs)
        platform = machine.platform
        self._nodes = platform is not None
        self.total_gpus = int(platform.total_gpus) if platform is not None else 0

    def submit(self, job: Job, now: float) -> None:
        """A job arrived (it joined the end of the queue)."""
        self.clock = now
        session, batch = self.sessions.submit(job, now)
        gpus = 0.0
        demand = job.demand
        if demand is not None and demand.gpus and self.total_gpus:
            gpus = demand.gpus * max(demand.nodes, 1) / self.total_gpus
        estimate = min(math.log1p(job.estimate / 60.0) * _TIME, 1.0)
        row = (1.0, job.size / self.cores, gpus, estimate, job.submit / 60.0, session / 60.0)
        self.waiting.append(job, (*row, batch, job.size, job.estimate, job.user, job.id))

    def ended(self, job: Job, now: float) -> None:
        """A job ended."""
        self.clock = now
        self.sessions.ended(job, now)

    def remove(self, queue: list[Job], jobs: Sequence[Job]) -> None:
        """Jobs left the queue to start: off ``queue`` and the table."""
        if jobs:
            self.waiting.remove(queue, jobs)

    def withdraw(self, queue: list[Job], jobs: Sequence[Job]) -> None:
        """Waiting jobs left without starting (cancelled, at the latest time it was told of):
        off ``queue`` and the table, and they count as ended for their users."""
        self.waiting.remove(queue, jobs)
        for job in jobs:
            self.sessions.ended(job, self.clock)

    # -- the observation ---------------------------------------------------------------------
    def fits(self, jobs: Sequence[Job], resources: Resources) -> np.ndarray:
        """Whether each of ``jobs`` (the first waiting jobs, in queue order) could start now,
        where the pass stands."""
        n = len(jobs)
        if type(resources) is ProcessorResources and resources.profile is None:
            if not resources.free:
                return np.zeros(n, dtype=bool)
            return self.waiting.first(n)[:, _CORES] <= resources.free  # (free cores decide)
        fits = np.zeros(n, dtype=bool)
        free = resources.free
        tried: dict[tuple[Any, float], bool] = {}
        for i, job in enumerate(jobs):
            if job.size > free:  # (fewer cores free in all: nowhere)
                continue
            key = (job.demand if self._nodes else job.size, job.estimate)
            known = tried.get(key)
            if known is None:
                known = tried[key] = resources.fits_now(job) is not None
            fits[i] = known
        return fits

    def rows(
        self, now: float, n: int, fits: np.ndarray, out: np.ndarray | None = None
    ) -> np.ndarray:
        """The sitesim layout's rows of the first ``n`` waiting jobs (``n`` × 9; into ``out``
        if given); ``fits`` as :meth:`fits` gives it."""
        table = self.waiting.first(n)
        rows = np.empty((n, len(JOB_FEATURES))) if out is None else out
        rows[:, :4] = table[:, :4]
        rows[:, 4] = fits
        # wait, session time, batch jobs and batch open: one scale with per-column factors
        scaled = np.empty((n, 4))
        np.subtract(now / 60.0, table[:, 4:6], out=scaled[:, :2])
        scaled[:, 2:] = self.sessions.table()[table[:, 6].astype(np.intp)]
        np.log1p(scaled, out=scaled)
        np.multiply(scaled, _NORM, out=scaled)
        np.minimum(scaled, 1.0, out=rows[:, 5:])
        return rows

    def observe(
        self,
        now: float,
        queue: Sequence[Job],
        resources: Resources,
        started: Sequence[Job],
        fits: np.ndarray | None = None,
    ) -> np.ndarray:
        """The observation of the pass at ``now``.

        Args:
            now: the clock.
            queue: the waiting jobs, in arrival order (those of :attr:`waiting`).
            resources: the resources of the pass.
            started: the jobs this pass started so far (they hold their cores until their
                estimated ends, as the running jobs do).
            fits: :meth:`fits` of the jobs shown, if known.
        """
        n = min(self.k, len(queue))
        if fits is None:
            fits = self.fits(queue[:n], resources)
        if self.layout == "schedgym":
            return self._schedgym(now, n, fits)
        width = len(JOB_FEATURES)
        obs = np.zeros(self.k * width + len(MACHINE_FEATURES), dtype=np.float32)
        if n:
            self.rows(now, n, fits, obs[: n * width].reshape(n, width))
        obs[self.k * width :] = self.machine(now, len(queue), resources, started)
        return obs

    def machine(
        self, now: float, waiting: int, resources: Resources, started: Sequence[Job]
    ) -> list[float]:
        """The machine's features (:data:`MACHINE_FEATURES`)."""
        cores = self.cores
        free_gpus = 0.0
        if self.total_gpus:
            work = getattr(resources, "work", None)
            if work is not None:
                free_gpus = float(work.gpus.sum()) / self.total_gpus
        running = resources.running  # (ascending estimated ends)
        positions = [bisect_right(running, (now + horizon, math.inf)) for horizon in RELEASES]
        cores_of = itemgetter(2)
        released, total, last = [], 0.0, 0
        for k in positions:
            total += sum(map(cores_of, running[last:k]))
            last = k
            released.append(total)
        for job in started:
            after = job.estimate
            for i, horizon in enumerate(RELEASES):
                if after <= horizon:
                    released[i] += job.size
        phase = 2.0 * math.pi * (now % _DAY) / _DAY
        return [
            resources.free / cores,
            free_gpus,
            min(math.log1p(waiting) * _COUNT, 1.0),
            *(value / cores for value in released),
            math.sin(phase),
            math.cos(phase),
        ]

    def _schedgym(self, now: float, n: int, fits: np.ndarray) -> np.ndarray:
        """The SchedGym layout (see the module docstring)."""
        rows = np.empty((self.k, len(SCHEDGYM_FEATURES)), dtype=np.float32)
        rows[:] = (0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0)  # empty rows
        if n:
            table, cap = self.waiting.first(n), SCHEDGYM_CAP
            wait = now - 60.0 * table[:, _SUBMIT]
            rows[:n, 0] = np.minimum(wait / SCHEDGYM_WAIT, cap)
            rows[:n, 1] = np.minimum(table[:, _ESTIMATE] / self.max_runtime, cap)
            rows[:n, 2] = np.minimum(table[:, _CORES] / self.cores, cap)
            rows[:n, 4] = np.minimum(table[:, _USER] / self.max_user, cap)
            rows[:n, 7] = np.where(fits, cap, 1e-5)
        return rows.ravel()
