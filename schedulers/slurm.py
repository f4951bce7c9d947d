"""SLURM: Slurm's scheduling as a site configures it, in one scheduler.

Every pass runs Slurm's two schedulers, as ``slurmctld`` runs them:

1. **The main scheduler**: pending jobs in priority order (multifactor priority, then submit
   time, then job id: :mod:`sitesim.slurm.multifactor`), at most ``default_queue_depth`` of them;
   each starts if it fits now; the first that does not fit blocks its partition (the jobs of
   that partition behind it wait with reason ``Priority``) and its partition's nodes for the
   rest of the pass (a job of a partition sharing them starts on the others only:
   src/slurmctld/job_scheduler.c:1985-1992 in Slurm 22.05.8). A job held by a QOS limit is
   passed over with its reason (``QOSMaxJobsPerUserLimit``, ``QOSGrpCpuLimit``, ...).
2. **The backfill scheduler**, every ``bf_interval`` seconds (0: every pass): the pending jobs
   again in priority order, at most ``bf_max_job_test`` of them and ``bf_max_job_user`` per
   user; each is placed at its earliest start on the resources as the running jobs' time
   limits free them and the reservations made so far in the cycle allow; a job whose start is
   now starts; a later one gets a reservation if its start is within ``bf_window`` and its
   partition has had fewer than ``bf_job_part_count_reserve`` (0: any number) reservations in
   this cycle. As in Slurm 22.05.8 (src/plugins/sched/backfill/backfill.c), a job is tested
   with its exact time limit; a reservation's start and end are rounded *down* to multiples of
   ``bf_resolution`` on the clock, and it lasts one step at least (backfill.c:2857-2864 and
   3298-3299); a job that would end exactly when a reservation begins collides with it
   (``node_space[j].begin_time <= end_time``, backfill.c:2417). The cycle's plan is a table
   of at most ``bf_node_space_size`` records (:class:`_PlanTable`): when it is full, the
   cycle stops at the next reservation (backfill.c:2997-3021). On nodes, a reservation's
   start is found as Slurm's backfill finds it
   (:meth:`~sitesim.platform.whole_nodes.WholeNodeResources.slurm_start`), with Slurm's
   estimate of when the running jobs give their resources back (:func:`will_run_releases`:
   in groups, each at its last end).

Limiting cases (checked by property tests), with reservations as EASY and conservative
backfilling make them (at the earliest start, half-open: the tests override
:meth:`SLURM._earliest` and :meth:`SLURM._enter`) and ``batch_sched_delay=-1``: with one
partition, a
backfill cycle at every pass and ``bf_job_part_count_reserve=1`` (and no other limit) the
schedule is EASY's in the same priority order; with no limit at all it is conservative
backfilling's (jobs that end at their time limits; conservative compresses its schedule in
another order when jobs end early).

Fairshare usage and priorities are recomputed every ``PriorityCalcPeriod`` (0: at every pass);
a job's priority factors, its last pending reason and the scheduler that started it are kept
in :attr:`SLURM.decisions` (written as ``priorities.csv``). Where this simplifies Slurm:
docs/reference/slurm.md.
"""

from __future__ import annotations

import math
import warnings
from bisect import insort
from collections import Counter, deque
from collections.abc import Mapping
from dataclasses import replace
from itertools import islice
from operator import is_
from pathlib import Path
from typing import Any

import numpy as np

from sitesim.engine.job import Job
from sitesim.engine.machine import ProcessorResources
from sitesim.engine.profile import AvailabilityProfile
from sitesim.engine.resources import Resources
from sitesim.engine.scheduler import Observer
from sitesim.errors import ConfigError
from sitesim.platform.description import Platform
from sitesim.platform.whole_nodes import WholeNodeResources
from sitesim.slurm.accounts import AccountTable
from sitesim.slurm.associations import Associations
from sitesim.slurm.conf import PartitionPolicy
from sitesim.slurm.multifactor import WEIGHT_MAX, Multifactor, SlurmSettings
from sitesim.slurm.qos import DEFAULT_QOS, QOS, reason

from .base import Scheduler

#: One row of :attr:`SLURM.decisions` per started job.
DECISION_DTYPE = np.dtype(
    [
        ("id", np.int64),
        ("user", np.int64),
        ("priority", np.int64),
        ("age", np.float64),
        ("fairshare", np.float64),
        ("job_size", np.float64),
        ("partition", np.float64),
        ("qos", np.float64),
        ("tres", np.float64),
        ("reason", "U32"),
        ("started_by", "U8"),
    ]
)


class _Waiting:
    """The jobs of a group of partitions that wait for their reservation in a cycle, in
    order, with the lowest of their lower bounds (a deque of increasing minima)."""

    __slots__ = ("jobs", "lows")

    def __init__(self) -> None:
        self.jobs: deque[tuple[Job, float, float]] = deque()
        self.lows: deque[float] = deque()

    def push(self, job: Job, duration: float, bound: float) -> None:
        self.jobs.append((job, duration, bound))
        while self.lows and self.lows[-1] > bound:
            self.lows.pop()
        self.lows.append(bound)

    def pop(self) -> tuple[Job, float]:
        job, duration, bound = self.jobs.popleft()
        if self.lows[0] == bound:
            self.lows.popleft()
        return job, duration

    def lowest(self) -> float:
        return self.lows[0] if self.lows else math.inf


class _PlanTable:
    """How many records a backfill cycle's plan takes in Slurm's table of free nodes over
    time (``node_space``, src/plugins/sched/backfill/backfill.c in Slurm 22.05.8), which holds
    at most ``bf_node_space_size`` (backfill.c:733-736: ``bf_max_job_test`` by default).

    The table starts as one record, from now to the end of ``bf_window``, both rounded down
    to ``bf_resolution`` (backfill.c:1808-1825). Each reservation splits the record its start
    falls in (unless a record ends there) and the one its end falls in (unless one ends there,
    or the end lies beyond the table), each split a record more (``_add_reservation``,
    backfill.c:3272-3356); so does a job started on whole nodes (``_bf_reserve_running``,
    backfill.c:1419-1470, when the table has room). Slurm also merges two neighbouring records
    whose free nodes are the same (backfill.c:3357-3379) without giving the record back; a
    later split at the merged boundary costs a record again. That merge is not modelled: the
    table here fills no earlier than Slurm's."""

    __slots__ = ("_ends", "_pairs", "_records", "begin", "end", "size", "step", "upper")

    def __init__(self, begin: float, end: float, size: int, step: float) -> None:
        self.begin, self.end, self.size, self.step = begin, end, size, step
        #: The reservations entered, until the table could be full (two records each at
        #: most); from then on, the records' ends (None until then) and their count.
        self._pairs: list[tuple[float, float]] = []
        self._ends: set[float] | None = None
        self._records = 1
        #: No fewer records than the table holds.
        self.upper = 1

    def add(self, start: float, end: float) -> None:
        """A reservation from ``start`` to ``end`` (rounded down already)."""
        if self._ends is None:
            self._pairs.append((start, end))
            self.upper += 2
        else:
            self._split(start, end, self._ends)
            self.upper = self._records

    def could_fill(self, more: int) -> bool:
        """Whether the table holds ``size`` records once ``more`` are added."""
        if self.upper + more < self.size:
            return False
        return self.records + more >= self.size

    @property
    def full(self) -> bool:
        return self.could_fill(0)

    @property
    def records(self) -> int:
        if self._ends is None:
            self._ends = ends = {self.end}
            for start, end in self._pairs:
                self._split(start, end, ends)
            self._pairs = []
            self.upper = self._records
        return self._records

    def _split(self, start: float, end: float, ends: set[float]) -> None:
        start = max(start, self.begin)
        if start >= self.end:
            return  # (no record holds it)
        if start not in ends:
            ends.add(start)
            self._records += 1
        end = max(end, start + self.step)
        if end < self.end and end not in ends:
            ends.add(end)
            self._records += 1


class _RoomyTable(_PlanTable):
    """The table of a cycle that cannot fill it (fewer jobs to test than half its records):
    nothing to count."""

    def add(self, start: float, end: float) -> None:
        pass


#: The table of every cycle that cannot fill its own (one for all: nothing is counted).
_ROOMY = _RoomyTable(0.0, math.inf, 1 << 62, 1.0)


class _Cycle:
    """A backfill cycle's plan and what it found (:meth:`SLURM._backfill`).

    On processors, a cycle that could not fill its table and tested every job it saw is kept,
    and the next one resumes it, testing only the jobs behind those it tested, while nothing
    but new jobs came behind them (``changes``: no job started or ended, none left, the
    order stood). Its tests of the jobs it saw would come out the same: the same jobs run, to
    the same estimated ends (none ended, and none runs past its time limit), so no step of
    the kept plan falls between the two cycles and the plan is moved to start now; a job the
    kept cycle started fitted clear of every reservation made before it, so those stay where
    they were. Only the window moves (it ends ``bf_window`` after the cycle): the cycle
    resumes while it ends no later than ``until``, the earliest of the starts and lower
    bounds the kept cycle found beyond its own.
    """

    __slots__ = (
        "beyond", "bounds", "changes", "horizon", "pending", "plan", "position",
        "rejected", "reserved", "table", "tested", "until", "waiting",
    )  # fmt: skip

    def __init__(self, on_procs: bool) -> None:
        self.horizon = math.inf
        self.table: _PlanTable = _ROOMY
        self.until = math.inf
        #: Reservations made, by partition.
        self.reserved: Counter[int] = Counter()
        #: By group of partitions: jobs tested, waiting to be placed (lazily).
        self.waiting: dict[int, _Waiting] = {}
        #: Demands that did not fit clear of the plan, with the shortest duration tried (the
        #: plan only holds more as the cycle goes on).
        self.rejected: dict[tuple[int, Any], float] = {}
        #: By demand (the same all cycle): the bound, and where a reservation from it is
        #: entered at the earliest (on nodes, rounded down: :meth:`SLURM._enter`).
        self.bounds: dict[tuple[int, Any], tuple[float, float]] = {}
        #: On processors, by size: the shortest duration found to start beyond the window.
        self.beyond: dict[int, float] | None = {} if on_procs else None
        self.tested = self.pending = 0
        #: Kept for the next cycle: its plan (None: nothing planned yet), where in the queue
        #: it resumes, and ``SLURM._changes`` then.
        self.plan: AvailabilityProfile | None = None
        self.position = 0
        self.changes = -1


#: How often slurmctld's background thread wakes (src/slurmctld/controller.c:2006-2009: ten
#: sleeps of 0.1 s), seconds.
TICK = 1.0

#: The first window of Slurm's start estimate (job_test.c:1971: ``time_window = 30``).
WILL_RUN_WINDOW = 30.0


def will_run_releases(ends: np.ndarray, time_zero: float = 0.0) -> np.ndarray:
    """When Slurm's select plugin counts the running jobs' resources back in its estimate of
    a pending job's start (``_will_run_test``, src/plugins/select/cons_common/job_test.c:
    1966-2057 in Slurm 22.05.8), from their ends (ascending, time 0 at ``time_zero`` on the
    clock). It takes them off in groups and tries the job after each: the first group is the
    first end and every end up to 30 s after it rounded up to the next multiple of 30 s on the
    clock (``end_time``); then the window doubles, at least once and until it reaches the next
    end, and the next group is every end up to ``end_time`` plus the window. A job that fits
    once a group is off starts at the group's last end: each end is released at it."""
    out = np.empty_like(ends)
    n = len(ends)
    if not n:
        return out
    first = float(ends[0])
    barrier = first + WILL_RUN_WINDOW - (first + time_zero) % WILL_RUN_WINDOW
    window, i = WILL_RUN_WINDOW, 0
    while i < n:
        j = max(i + 1, int(np.searchsorted(ends, barrier + window, side="right")))
        out[i:j] = ends[j - 1]
        i = j
        if i < n:
            window *= 2
            while ends[i] > barrier + window:
                window *= 2
    return out


def _plain(value: Any) -> Any:
    """``value`` with every mapping a dict and every sequence but text a list: what a
    configuration stores (and ``results.json`` holds)."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


class SlurmConfigWarning(UserWarning):
    """A setting of a Slurm configuration file that sitesim reads but does not model."""


#: The settings a SLURM scheduler takes, besides ``conf``, ``assoc``, ``mapping``, ``qos``,
#: ``accounts``.
SETTINGS = tuple(SlurmSettings.__dataclass_fields__)


class SLURM(Scheduler):
    """Slurm's main and backfill schedulers with the multifactor priority, fairshare and QOS.

    Every setting has Slurm's name and default (docs/reference/slurm.md). Besides them:

    Args:
        conf: a ``slurm.conf`` to take the Priority* keys, SchedulerParameters and the
            partitions' PriorityJobFactor from (settings given here win).
        assoc: the association tree: a TOML file (:mod:`sitesim.slurm.associations`) or the output
            of ``sacctmgr show assoc --parsable2``. Default: every user its own account.
        mapping: the mapping file of ``sitesim convert --mapping`` that numbered the trace's
            users: the ``assoc`` listing's user names are read through it.
        accounts: instead of ``assoc``, accounts by blocks of users (``"2x10,8x2"``), or by
            name, a mapping (``{"physics": 10, "chemistry": 4}``: users numbered in that
            order; or each a list of user ids, or a table with ``shares``, ``parent``,
            ``users``: :meth:`~sitesim.slurm.associations.Associations.named`).
        qos: the output of ``sacctmgr show qos --parsable2`` (default: one QOS, ``normal``,
            without limits).
        time_zero: the Unix time of the run's time 0 (a trace's ``UnixStartTime``): Slurm
            rounds its backfill reservations to multiples of ``bf_resolution`` on the clock,
            so where time 0 falls between two multiples moves them. Default: in a replay, the
            trace's ``UnixStartTime`` (:meth:`use_clock`); else 0 (time 0 on a multiple).
    """

    name = "SLURM"
    reservations = "whole_nodes"
    #: A backfill cycle on processors may resume the last (:class:`_Cycle`).
    _keeps_cycles = True
    skip_idle_passes = True
    timed = True
    file_parameters = ("conf", "assoc", "qos", "mapping")

    def __init__(
        self,
        conf: str | None = None,
        assoc: str | None = None,
        accounts: str | Mapping[str, Any] | None = None,
        qos: str | None = None,
        mapping: str | None = None,
        time_zero: float | None = None,
        PriorityWeightAge: int | None = None,
        PriorityWeightFairshare: int | None = None,
        PriorityWeightJobSize: int | None = None,
        PriorityWeightPartition: int | None = None,
        PriorityWeightQOS: int | None = None,
        PriorityWeightTRES: str | None = None,
        PriorityMaxAge: str | float | None = None,
        PriorityFavorSmall: str | None = None,
        PriorityCalcPeriod: float | None = None,
        PriorityDecayHalfLife: str | float | None = None,
        PriorityUsageResetPeriod: str | None = None,
        PriorityFlags: str | None = None,
        default_queue_depth: int | None = None,
        bf_interval: float | None = None,
        bf_max_job_test: int | None = None,
        bf_window: float | None = None,
        bf_resolution: float | None = None,
        bf_max_job_user: int | None = None,
        bf_job_part_count_reserve: int | None = None,
        bf_node_space_size: int | None = None,
        batch_sched_delay: float | None = None,
    ) -> None:
        super().__init__()
        given = {k: v for k, v in locals().items() if k in SETTINGS and v is not None}
        if isinstance(accounts, Mapping):
            accounts = _plain(accounts)
        self._files = {
            "conf": conf, "assoc": assoc, "accounts": accounts, "qos": qos, "mapping": mapping
        }  # fmt: skip
        self._given = given
        #: Whether ``time_zero`` was given (else a replay's trace gives it: :meth:`use_clock`).
        self._clock_given = time_zero is not None
        try:
            self.time_zero = float(time_zero or 0.0)
        except (TypeError, ValueError):
            raise ConfigError(
                f"SLURM: time_zero: must be a Unix time in seconds (a trace's UnixStartTime), "
                f"got {time_zero!r}"
            ) from None
        if not math.isfinite(self.time_zero):
            raise ConfigError(f"SLURM: time_zero: must be a finite Unix time, got {time_zero!r}")
        #: When the running jobs give back in a reservation's plan (Slurm's start estimate).
        self._releases = self._will_run
        base: dict[str, Any] = {}
        self.partition_factors: dict[str, int] = {}
        #: The access and order keys of the conf's partitions, by name; by partition index once
        #: the machine is known (None: none set), and each partition's PriorityTier if they differ.
        self.partition_policies: dict[str, PartitionPolicy] = {}
        #: The platform's partitions, by index (known once the machine is: on_site).
        self._partitions: list[str] = []
        self._policies: list[PartitionPolicy | None] = []
        self._tiers: list[int] | None = None
        #: What the configuration files hold that sitesim does not model, each once.
        self.warnings: list[str] = []
        if conf is not None:
            base = self._read_conf(conf)
        self.settings = SlurmSettings.build({**base, **given})
        self.user_qos: dict[int, str] = {}
        self.associations = self._associations(assoc, accounts, mapping)
        #: With an association file, the users it lists, and the run's users it does not.
        self._listed = frozenset(self.associations.users) if assoc is not None else None
        self._unlisted: set[int] = set()
        self.qos: dict[str, QOS] = {DEFAULT_QOS: QOS(DEFAULT_QOS)}
        if qos is not None:
            from sitesim.slurm.conf import read_sacctmgr_qos

            table = read_sacctmgr_qos(qos)
            self.qos = {DEFAULT_QOS: QOS(DEFAULT_QOS), **table.qos}
            self.warnings.extend(table.warnings)
        for warning in self.warnings:
            warnings.warn(warning, SlurmConfigWarning, stacklevel=2)
        s = self.settings
        self._use_fairshare = s.PriorityWeightFairshare > 0
        self.fairshare: Any = None
        if self._use_fairshare:
            from sitesim.slurm.fairshare import Fairshare

            self.fairshare = Fairshare(
                self.associations,
                algorithm=s.algorithm,
                half_life=s.PriorityDecayHalfLife,
                reset=s.PriorityUsageResetPeriod,
            )
        self._timed_priority = s.PriorityWeightAge > 0 or self._use_fairshare
        self._limits = any(q.limits_running for q in self.qos.values())
        self._submit_limits = any(
            q.max_submit_jobs_per_user is not None or q.max_wall < math.inf or q.limits_running
            for q in self.qos.values()
        )
        self.multifactor: Multifactor | None = None  # (known once the machine is: on_site)
        #: Per partition: whether it shares nodes with another.
        self._shared: list[bool] = [False]
        self._on_nodes = False
        self._node_cores: list[int] = []
        #: Per waiting job: the weighted sum of its static factors, and each of them.
        self._static: dict[Job, tuple[float, float, float, float, float]] = {}
        self._priority: dict[Job, int] = {}
        self._factors: dict[Job, tuple[float, float]] = {}  # (age, fairshare) last computed
        self._reason: dict[Job, str] = {}
        #: The waiting jobs whose last pending reason is in ``_reason`` (or none was given):
        #: every other waiting job's is ``Priority`` (given to many at once: :meth:`_main`).
        self._told: set[Job] = set()
        self._running: dict[Job, tuple[str, int, int, int, int, int]] = {}
        self._held_user: Counter[tuple[str, int, str]] = Counter()  # (qos, user, tres)
        self._held_group: Counter[tuple[str, str]] = Counter()  # (qos, tres)
        self._jobs_of_user: Counter[int] = Counter()  # waiting and running
        self._next_calc = -math.inf
        #: The first submission since the main scheduler's last background pass (None: none),
        #: that pass, and whether a job ended (or nodes changed) since the last main pass.
        self._fresh: float | None = None
        self._last_batch = -math.inf
        self._ended = False
        self._dirty = True
        #: Something changed since the last pass (a job arrived or ended, nodes, the order).
        self._changed = True
        #: After the last pass, a waiting job fitted on what was free.
        self._fits = False
        #: Counts what frees resources (a running job stops, nodes change): until it moves,
        #: what did not fit still does not (what is free only shrinks as jobs start).
        self._freed = 0
        self._known_at = 0
        #: Counts what changes a backfill cycle's plan or the order of the jobs it tests (a
        #: start, an end, a job leaving, nodes, a new order, a job queued ahead of others);
        #: while it stands, the next cycle resumes the last one kept (:class:`_Cycle`).
        self._changes = 0
        self._cycle: _Cycle | None = None
        #: Demands that cannot start on what is free, and jobs the main scheduler found not
        #: to fit, since ``_freed`` last moved.
        self._cannot: set[tuple[int, Any]] = set()
        self._no_fit: set[Job] = set()
        #: Per partition, the fewest cores a plain demand (cores only) was found not to fit
        #: with since ``_freed`` last moved: no more cores fit either.
        self._too_many: dict[int, int] = {}
        #: The waiting jobs by demand: plain ones by partition and cores, the others apart.
        self._plain_waiting: dict[int, dict[int, set[Job]]] = {}
        #: Per partition of ``_plain_waiting``, its fewest cores.
        self._fewest: dict[int, int] = {}
        self._other_waiting: set[Job] = set()
        self.decisions: list[tuple[Any, ...]] = []
        self._cycles = 0
        self._main_starts = 0
        self._backfill_starts = 0
        self._refused: Counter[str] = Counter()

    # -- configuration ---------------------------------------------------------------------
    def _read_conf(self, conf: str) -> dict[str, Any]:
        """The scheduling settings of a slurm.conf (sched/builtin: no backfill;
        priority/basic: no weights, first in first out)."""
        from sitesim.slurm.conf import read_slurm_conf

        found = read_slurm_conf(conf)
        self.partition_factors = dict(found.partition_factors)
        self.partition_policies = dict(found.partition_policies)
        self.warnings.extend(found.warnings)
        settings = {key: value for key, value in found.settings.items() if key in SETTINGS}
        if found.settings.get("SchedulerType", "").lower() == "sched/builtin":
            settings["bf_interval"] = "-1"
        if found.settings.get("PriorityType", "").lower() == "priority/basic":
            settings = {k: v for k, v in settings.items() if not k.startswith("PriorityWeight")}
        return settings

    def _associations(
        self, assoc: str | None, accounts: str | Mapping[str, Any] | None, mapping: str | None
    ) -> Associations:
        if assoc is not None and accounts is not None:
            raise ConfigError("SLURM: give assoc (a file) or accounts (blocks of users), not both")
        toml = assoc is not None and Path(assoc).suffix.lower() == ".toml"
        if mapping is not None and (assoc is None or toml):
            raise ConfigError(
                "SLURM: mapping numbers the users of a sacctmgr listing (assoc=assoc.txt); "
                + ("a TOML association file names them by number" if toml else "give one")
            )
        if isinstance(accounts, Mapping):
            return Associations.named(accounts)
        if accounts is not None:
            return Associations.blocks(accounts)
        if assoc is None:
            return Associations.flat()
        if toml:
            return Associations.load(assoc)
        from sitesim.slurm.conf import read_sacctmgr_assoc
        from sitesim.workload.names import UserNumbers

        numbers = UserNumbers.load(mapping) if mapping is not None else None
        table = read_sacctmgr_assoc(assoc, numbers)
        self.user_qos = dict(table.default_qos)
        self.warnings.extend(table.warnings)
        return table.associations

    def params(self) -> dict[str, Any]:
        """The files and every setting given, in Slurm's units, also one equal to Slurm's
        default (it wins over ``conf``, whose settings are read from it again)."""
        files = {key: value for key, value in self._files.items() if value is not None}
        clock = {"time_zero": self.time_zero} if self._clock_given else {}
        return {**files, **clock, **self.settings.in_slurm_units(self._given)}

    def on_site(self, machine: Any) -> None:
        platform = machine.platform or Platform.processors(machine.procs)
        self._on_platform(platform)

    def _on_platform(self, platform: Platform) -> None:
        partitions = []
        for p in platform.partitions:
            nodes = np.asarray(p.nodes)
            totals = {
                "CPU": float(platform.cores[nodes].sum()),
                "NODE": float(len(nodes)),
                "MEM": float(platform.memory[nodes].sum()),
                "GRES/GPU": float(platform.gpus[nodes].sum()),
            }
            partitions.append(totals)
            largest = int(platform.cores[nodes].max())
            self._node_cores.append(largest)
        factors = {
            k: self.partition_factors.get(p.name, 1) for k, p in enumerate(platform.partitions)
        }
        self.multifactor = Multifactor(
            self.settings,
            platform.nodes,
            platform.total_cores,
            partition_factors=factors,
            qos_priorities={name: q.priority for name, q in self.qos.items()},
            partition_tres=dict(enumerate(partitions)),
        )
        self._on_nodes = not platform.is_processors
        self._partitions = [p.name for p in platform.partitions]
        policies = [self.partition_policies.get(p.name) for p in platform.partitions]
        self._policies = policies if any(policies) else []
        tiers = [1 if p is None else p.tier for p in self._policies]
        self._tiers = tiers if len(set(tiers)) > 1 else None
        if self._tiers is not None:
            self._key = self._tiered_key  # type: ignore[method-assign]
        self._check_accounts_known(platform)
        member = [np.isin(np.arange(platform.nodes), p.nodes) for p in platform.partitions]
        self._shared = [
            any((mine & other).any() for j, other in enumerate(member) if j != k)
            for k, mine in enumerate(member)
        ]

    def _check_accounts_known(self, platform: Platform) -> None:
        """AllowAccounts and DenyAccounts name accounts: without an association file or
        ``accounts`` every user is its own account, which no such list names. Warned, once,
        and not applied."""
        given = self._files["assoc"] is not None or self._files["accounts"] is not None
        if given or not self._policies:
            return
        named = [
            p.name
            for p, policy in zip(platform.partitions, self._policies, strict=True)
            if policy is not None and (policy.allow_accounts is not None or policy.deny_accounts)
        ]
        if named:
            warnings.warn(
                f"{self._files['conf']}: AllowAccounts/DenyAccounts of partition "
                f"{', '.join(named)}: not applied, the run has no accounts (give assoc=... "
                "or accounts=...)",
                SlurmConfigWarning,
                stacklevel=3,
            )
            self._policies = [
                None if p is None else replace(p, allow_accounts=None, deny_accounts=frozenset())
                for p in self._policies
            ]

    def _parts(self, job: Job) -> tuple[int, int, int, int]:
        """What the job holds: nodes, cores, GPUs, memory (MB). Without a node count, the
        nodes its cores fill on its partition's largest nodes."""
        demand = job.demand
        if not self._on_nodes or demand is None:
            return job.size, job.size, 0, 0
        nodes = demand.nodes or -(-demand.cores // self._node_cores[demand.part])
        return nodes, demand.cores, demand.gpus * nodes, demand.memory * nodes

    def _min_nodes(self, job: Job) -> int:
        """The job's requested minimum node count, as the job size factor reads it: its
        request's node count, else 1 (Slurm's default when only tasks are asked: job_mgr.c,
        ``job_desc_msg->min_nodes = 1``), on processors too (each a one-core node)."""
        demand = job.demand
        if self._on_nodes and demand is not None and demand.nodes:
            return demand.nodes
        return 1

    # -- arrivals, ends ----------------------------------------------------------------------
    def admit(self, job: Job) -> str | None:
        """Refuse a submission that never runs (a partition's AllowAccounts, AllowQos,
        MaxNodes) or over a QOS limit: the reason, or None to accept."""
        if self._policies:
            policy = self._policies[self._part(job)]
            if policy is not None:
                refusal = policy.refusal(
                    self.associations.account_of(job.user),
                    self._qos_name(job),
                    self._parts(job)[0],
                )
                if refusal is not None:
                    self._refused[refusal] += 1
                    return refusal
        if not self._submit_limits:
            return None
        qos = self.qos.get(self.user_qos.get(job.user, DEFAULT_QOS))
        if qos is None:
            return None
        refusal = None
        if job.estimate > qos.max_wall:
            refusal = "QOSMaxWallDurationPerJobLimit"
        elif (
            qos.max_submit_jobs_per_user is not None
            and self._jobs_of_user[job.user] >= qos.max_submit_jobs_per_user
        ):
            refusal = "QOSMaxSubmitJobPerUserLimit"
        elif qos.max_jobs_per_user == 0:
            refusal = "QOSMaxJobsPerUserLimit"
        else:
            held = self._tres(job)
            for caps, kind in ((qos.grp_tres, "Grp"), (qos.max_tres_per_user, "MaxPerUser")):
                for tres, cap in caps.items():
                    if held[tres] > cap:
                        refusal = reason(kind, tres)
        if refusal is not None:
            self._refused[refusal] += 1
        return refusal

    def submit(self, job: Job, now: float) -> None:
        if job in self._running:  # requeued after a node failed: it stopped running
            self._stopped(job, now)
            self._jobs_of_user[job.user] -= 1
        if self.multifactor is None:  # used without a site: the machine is not known
            self._on_platform(Platform.processors(1))
        self._jobs_of_user[job.user] += 1
        if self._listed is not None and job.user not in self._listed:
            self._in_no_account(job.user)
        nodes, cores, gpus, memory = self._parts(job)
        mf = self.multifactor
        assert mf is not None
        js, pf, qf, tres = mf.static_factors(
            nodes,
            cores,
            gpus,
            memory,
            job.estimate,
            self._part(job),
            self._qos_name(job),
            min_nodes=self._min_nodes(job),
        )
        self._static[job] = (mf.static_part(js, pf, qf, tres), js, pf, qf, tres)
        self._priority[job] = self._compute(job, now)
        if self._fresh is None:
            self._fresh = now
        insort(self.queue, job, key=self._key)
        self._told.add(job)
        if self.queue[-1] is not job:  # (queued ahead of others)
            self._changes += 1
        self._waits(job, True)
        self._dirty = self._changed = True

    def _in_no_account(self, user: int) -> None:
        """A user of the run the association file does not list: charged to an account of
        its own (as fairshare adds it); the first is warned, unless the mapping's check
        already named them, and all are counted."""
        if not self._unlisted and self._files["mapping"] is None:
            warnings.warn(
                f"{self._files['assoc']}: user {user} of the trace is in no account: charged to "
                "an account of its own under root with one share (so is every such user; "
                "scheduler_stats.users_in_no_account counts them)",
                SlurmConfigWarning,
                stacklevel=2,
            )
        self._unlisted.add(user)

    def _key(self, job: Job) -> tuple[float, ...]:
        return (-self._priority[job], job.submit, job.id)

    def _tiered_key(self, job: Job) -> tuple[float, ...]:
        """The queue's order with partitions of several PriorityTiers: the tier first."""
        assert self._tiers is not None
        return (-self._tiers[self._part(job)], -self._priority[job], job.submit, job.id)

    def job_ended(self, job: Job, now: float) -> None:
        self._stopped(job, now)
        self._jobs_of_user[job.user] -= 1
        self._dirty = self._changed = self._ended = True

    def withdraw(self, jobs: list[Job]) -> None:
        super().withdraw(jobs)
        for job in jobs:
            self._waits(job, False)
            self._forget(job)
            self._jobs_of_user[job.user] -= 1
        self._dirty = self._changed = self._ended = True
        self._changes += 1

    def nodes_changed(self) -> None:
        self._dirty = self._changed = self._ended = True
        self._freed += 1
        self._changes += 1

    def _forget(self, job: Job) -> None:
        for table in (self._static, self._priority, self._factors, self._reason):
            table.pop(job, None)
        self._told.discard(job)

    # -- priorities --------------------------------------------------------------------------
    def _compute(self, job: Job, now: float, fs: float | None = None) -> int:
        """The job's priority at ``now`` (``fs``: its user's fairshare factor, if known)."""
        mf = self.multifactor
        assert mf is not None
        if fs is None:
            fs = self.fairshare.factor(job.user) if self._use_fairshare else 0.0
        waited = now - job.submit
        self._factors[job] = (mf.age(waited), fs)
        return mf.priority(self._static[job][0], waited, fs)

    def _recalculate(self, now: float) -> None:
        """Slurm's decay thread: usage and priorities as of the last PriorityCalcPeriod
        boundary (or now, with a period of 0); a new order of the queue is a change."""
        period = self.settings.PriorityCalcPeriod
        at = now if period == 0 else math.floor(now / period) * period
        if self._use_fairshare:
            self.fairshare.advance(at)
        if self._timed_priority and self.queue:
            queue = self.queue
            factor: dict[int, float] = {}
            if self._use_fairshare:
                users = list({job.user for job in queue})
                factor = dict(zip(users, self.fairshare.factors(users).tolist(), strict=True))
            mf = self.multifactor
            assert mf is not None
            priority, factors, static = self._priority, self._factors, self._static
            w_age, w_fs, max_age, top = mf.w_age, mf.w_fs, mf.max_age, WEIGHT_MAX
            for job in queue:  # (mf.priority, inlined: every waiting job, every period)
                age = (at - job.submit) / max_age
                age = 0.0 if age < 0.0 else (1.0 if age > 1.0 else age)
                fs = factor.get(job.user, 0.0)
                factors[job] = (age, fs)
                value = int(static[job][0] + w_age * age + w_fs * fs)
                priority[job] = value if value < top else top
            before = list(queue)
            queue.sort(key=self._key)
            if not all(map(is_, before, queue)):
                self._dirty = self._changed = True  # a new order: a cycle may start others
                self._changes += 1
        self._next_calc = at + period if period else now

    # -- the pass ----------------------------------------------------------------------------
    def select(self, now: float, resources: Resources) -> list[Job]:
        return [job for job, _ in self.schedule(now, resources)]

    def schedule(self, now: float, res: Resources) -> list[tuple[Job, Any]]:
        """One pass on ``res``: the main scheduler, then a backfill cycle if one is due. Returns
        the jobs started (each taken on ``res``) and where."""
        if now >= self._next_calc and (self._use_fairshare or self._timed_priority):
            self._recalculate(now)
        s = self.settings
        step = s.bf_interval
        # (cycles come every bf_interval from time 0; one with nothing new is not run)
        cycle_due = step == 0 or (step > 0 and self._dirty and now % step == 0)
        # (the batch thread's run is noted even when nothing changed since the last pass:
        # one that stopped at a blocked partition before the new jobs saw none of them)
        main_due = self._main_due(now) and self._changed
        if not main_due and not cycle_due:
            return []  # a pass with nothing new, or none of slurmctld's: it would start nothing
        if self._known_at != self._freed:  # (what did not fit may fit now)
            self._no_fit.clear()
            self._cannot.clear()
            self._too_many.clear()
            self._known_at = self._freed
        started: list[tuple[Job, Any]] = []
        if main_due:
            self._changed = False
            self._main(now, res, started)
        if cycle_due:
            if self._any_fits(res):
                self._backfill(now, res, started)
            else:  # (a cycle in which no job fits on what is free starts nothing)
                self._cycles += 1
                self._dirty = False
        elif started:
            self._dirty = True
        self._fits = self._any_fits(res)
        return started

    def _main_due(self, now: float) -> bool:
        """Whether slurmctld runs its main scheduler now, noting it. With ``batch_sched_delay``
        -1, at every pass. Else as Slurm 22.05.8 does: when a job has ended (its epilog's RPC
        calls schedule(): src/slurmctld/proc_req.c:2032), and for the jobs submitted since
        its background thread last ran it, at that thread's first tick (once a second:
        controller.c:2006-2009) at least ``batch_sched_delay`` after then
        (controller.c:2221-2236)."""
        if self.settings.batch_sched_delay < 0:
            return True
        due, self._ended = self._ended, False
        if self._fresh is not None and now >= self._batch_due():
            self._fresh, self._last_batch, due = None, now, True
        return due

    def _batch_due(self) -> float:
        """When the background thread runs the main scheduler for the jobs submitted since it
        last did (:meth:`_main_due`)."""
        assert self._fresh is not None
        return max(self._fresh + TICK, self._last_batch + self.settings.batch_sched_delay)

    def _unseen(self, now: float) -> float:
        """The submission time of the jobs a pass at ``now`` does not see: ``now`` when
        slurmctld's timing is modelled (a batch job is never started as it is submitted: the
        RPC only queues it, src/slurmctld/job_mgr.c:5496-5497), else NaN (equal to none)."""
        return now if self.settings.batch_sched_delay >= 0 else math.nan

    def _main(self, now: float, res: Resources, started: list[tuple[Job, Any]]) -> None:
        """The main scheduler's pass (the module docstring), appending the jobs it starts."""
        s = self.settings
        no_fit = self._no_fit
        blocked: set[int] = set()
        groups = res.groups
        withheld: set[int] = set()  # (the groups of the blocked partitions that share nodes)
        tested = 0
        queue = self.queue
        unseen = self._unseen(now)
        for k, job in enumerate(queue):
            if tested >= s.default_queue_depth:
                break
            if job.submit == unseen:  # (seen by a later pass: the next for new jobs)
                self._changed = True
                self._fresh = now if self._fresh is None else self._fresh
                continue
            demand = job.demand
            part = 0 if demand is None else demand.part
            if part in blocked:
                self._told.discard(job)  # ("Priority")
                continue
            tested += 1
            if self._limits and (why := self._held(job)) is not None:
                self._reason[job] = why
                self._told.add(job)
                continue
            if groups[part] in withheld:  # (not on the nodes of a blocked partition)
                alloc = res.fits_now_outside(job, blocked)
            else:
                alloc = None if job in no_fit else res.fits_now(job)
                if alloc is None:
                    no_fit.add(job)
            if alloc is None:
                blocked.add(part)
                if self._shared[part]:
                    withheld.add(groups[part])
                self._reason[job] = "Resources"
                self._told.add(job)
                if blocked.issuperset(self._waiting_parts()):  # (the rest wait behind them)
                    told = self._told  # (all behind this one: "Priority")
                    self._told = {earlier for earlier in islice(queue, k + 1) if earlier in told}
                    break
                continue
            res.take_now(job, alloc)
            self._started(job, now, "main")
            started.append((job, alloc))

    def _could_start_now(self, res: Resources, job: Job) -> bool:
        """``res.could_start_now``, remembering the demands that cannot until something is
        freed (what is free only shrinks as jobs start)."""
        demand = job.demand
        if demand is None or not (demand.nodes or demand.gpus or demand.memory or demand.nodeset):
            part, cores = (0, job.size) if demand is None else (demand.part, demand.cores)
            if cores >= self._too_many.get(part, 1 << 62):
                return False
            if res.could_start_now(job):
                return True
            self._too_many[part] = cores
            return False
        key = (job.size, demand)
        if key in self._cannot:
            return False
        if res.could_start_now(job):
            return True
        self._cannot.add(key)
        return False

    def _any_fits(self, res: Resources) -> bool:
        """True if a job still waiting fits on what is free now (a new order could start it):
        of plain demands, those with the fewest cores in each partition."""
        plain = self._plain_waiting
        for part, cores in self._fewest.items():
            if self._could_start_now(res, next(iter(plain[part][cores]))):
                return True
        return any(self._could_start_now(res, job) for job in self._other_waiting)

    def _waiting_parts(self) -> set[int]:
        """The partitions of the jobs waiting (those started in this pass left out)."""
        parts = set(self._plain_waiting)
        for job in self._other_waiting:
            parts.add(job.demand.part)
        return parts

    def _waits(self, job: Job, waiting: bool) -> None:
        """Index ``job`` among the waiting jobs by demand (``waiting``), or take it out."""
        demand = job.demand
        if demand is None or not (demand.nodes or demand.gpus or demand.memory or demand.nodeset):
            part, cores = (0, job.size) if demand is None else (demand.part, demand.cores)
            by_cores = self._plain_waiting.setdefault(part, {})
            if waiting:
                by_cores.setdefault(cores, set()).add(job)
                if cores < self._fewest.get(part, 1 << 62):
                    self._fewest[part] = cores
                return
            jobs = by_cores.get(cores)
            if jobs is not None:
                jobs.discard(job)
                if not jobs:
                    del by_cores[cores]
                    if not by_cores:
                        del self._plain_waiting[part]
                        del self._fewest[part]
                    elif cores == self._fewest[part]:
                        self._fewest[part] = min(by_cores)
        elif waiting:
            self._other_waiting.add(job)
        else:
            self._other_waiting.discard(job)

    def _backfill(self, now: float, res: Resources, started: list[tuple[Job, Any]]) -> None:
        """One backfill cycle (see the module docstring).

        Reservations are placed lazily, to the same plan: nothing a cycle plans outlives it,
        and a reservation matters only to the jobs after it that could start now on nodes of
        its group of partitions (``res.groups``: groups share no nodes) and run up to its start,
        which is no earlier than its lower bound (``res.lower_bound``) rounded down to
        ``bf_resolution``. So when a job comes that could start now, the reservations of its
        group wait for are placed in order while it still fits clear of them and runs up to
        the lowest rounded bound of those left; once
        it no longer fits, more reservations cannot make it fit. A job whose bound lies beyond
        ``bf_window`` gets no reservation and is not placed at all. On nodes a start changes
        how every reservation before it is planned (the nodes busy now are taken first, and
        its end regroups Slurm's estimate of the releases): there, every reservation waiting
        is placed before a job starts. Once the reservations waiting could fill the plan's
        table (two records each at most: :class:`_PlanTable`), they are placed, and every
        later one as its job is tested, so that the cycle stops where Slurm's does.

        On processors a cycle resumes the last one where it stopped when only new jobs came
        since, behind those it tested (:class:`_Cycle`).
        """
        s = self.settings
        self._cycles += 1
        done = {job for job, _ in started}
        horizon = now + s.bf_window
        groups = res.groups
        on_nodes = isinstance(res, WholeNodeResources)
        #: Per partition, whether a job holds whole nodes (a start takes records: _PlanTable).
        whole = res.parts.exclusive if isinstance(res, WholeNodeResources) else None
        table = self._table(now)
        size = table.size
        limit_hit = new = False
        starts_before = len(started)
        unseen = self._unseen(now)
        max_test, max_user, limits = s.bf_max_job_test, s.bf_max_job_user, self._limits
        could_start_now = self._could_start_now
        #: On processors a job could start now if it needs no more than are free: no
        #: demand to remember (what is free only shrinks within a cycle).
        procs = res if isinstance(res, ProcessorResources) else None
        on_procs = procs is not None
        cycle, self._cycle = self._cycle, None  # (kept on processors only)
        jobs = self.queue
        if (
            procs is not None
            and cycle is not None
            and cycle.changes == self._changes
            and table is _ROOMY
            and horizon <= cycle.until
        ):
            procs.adopt(cycle.plan)
            jobs = jobs[cycle.position :]
        else:
            cycle = _Cycle(on_procs)
        cycle.horizon, cycle.table = horizon, table
        tested, pending, eager = cycle.tested, cycle.pending, False
        per_user: Counter[int] = Counter()
        waiting, rejected, bounds = cycle.waiting, cycle.rejected, cycle.bounds
        unseen_count = 0
        for job in jobs:
            if job in done:
                continue
            if job.submit == unseen:  # (not seen until the next cycle)
                new = True
                unseen_count += 1
                continue
            if tested >= max_test:
                limit_hit = True
                break
            if max_user:
                if per_user[job.user] >= max_user:
                    limit_hit = True
                    continue
                per_user[job.user] += 1
            tested += 1
            if limits and (why := self._held(job)) is not None:
                self._reason[job] = why
                self._told.add(job)
                continue
            duration = job.estimate
            demand = job.demand
            group = 0 if demand is None else groups[demand.part]
            ahead = waiting.get(group)
            key = (job.size, demand)
            if job.size <= res.free if on_procs else could_start_now(res, job):
                where = (
                    None if duration >= rejected.get(key, math.inf) else res.fits_now(job, duration)
                )
                if on_nodes and where is not None and waiting:  # (see above)
                    self._place_waiting(waiting, res, cycle)
                    pending, ahead = 0, None
                    where = res.fits_now(job, duration)
                while where is not None and ahead is not None and now + duration >= ahead.lowest():
                    earlier, length = ahead.pop()
                    pending -= 1
                    if self._reserve(earlier, length, res, cycle):
                        where = res.fits_now(job, duration)
                if where is None:
                    rejected[key] = min(duration, rejected.get(key, math.inf))
                else:
                    res.take_now(job, where)
                    self._started(job, now, "backfill")
                    started.append((job, where))
                    done.add(job)
                    if whole is not None and whole[demand.part] and not table.full:
                        table.add(table.begin, self._round_down(now + duration))  # (1419-1470)
                    continue
            bound = bounds.get(key)  # (it waits for a reservation of its own)
            if bound is None:
                at = self._bound(res, job)
                bound = bounds[key] = (at, self._round_down(at) if on_nodes else at)
            if bound[0] >= horizon:
                if bound[0] < cycle.until:
                    cycle.until = bound[0]
                continue  # (no reservation, whatever the plan)
            if (
                not eager
                and table.upper + 2 * pending + 2 >= size  # (could_fill's first test, inlined)
                and table.could_fill(2 * (pending + 1))
            ):
                self._place_waiting(waiting, res, cycle)
                pending, eager = 0, True
            if eager:
                if self._reserve(job, duration, res, cycle) is None:
                    limit_hit = True  # (the table is full: the cycle stops here)
                    break
                continue
            if ahead is None:
                ahead = waiting[group] = _Waiting()
            ahead.push(job, duration, bound[1])
            pending += 1
        self._dirty = new or (limit_hit and len(started) > starts_before)
        if (
            self._keeps_cycles
            and procs is not None
            and table is _ROOMY
            and not (limit_hit or limits or max_user)
            and all(job.submit == unseen for job in self.queue[len(self.queue) - unseen_count :])
        ):  # (kept for the next cycle: every job it tested, then only those not seen yet)
            cycle.tested = tested - (len(started) - starts_before)
            cycle.pending = pending
            cycle.plan = procs.profile
            cycle.position = len(self.queue) - unseen_count - len(started)
            cycle.changes = self._changes
            self._cycle = cycle

    def _table(self, now: float) -> _PlanTable:
        """The plan's table of a cycle at ``now`` (:class:`_PlanTable`)."""
        s = self.settings
        size = s.bf_node_space_size or s.bf_max_job_test
        if 1 + 2 * min(len(self.queue), s.bf_max_job_test) < size:
            return _ROOMY
        return _PlanTable(
            self._round_down(now), self._round_down(now + s.bf_window), size, s.bf_resolution
        )

    def _place_waiting(self, waiting: dict[int, _Waiting], res: Resources, cycle: _Cycle) -> None:
        """Place every reservation waiting, in order (they cannot fill the table)."""
        for ahead in waiting.values():
            while ahead.jobs:
                placed = self._reserve(*ahead.pop(), res, cycle)
                assert placed is not None  # (room for two records each was left)
        waiting.clear()

    def _bound(self, res: Resources, job: Job) -> float:
        """No plan of this cycle starts ``job`` before this time (``res.lower_bound``)."""
        return res.lower_bound(job)

    def _reserve(self, job: Job, duration: float, res: Resources, cycle: _Cycle) -> bool | None:
        """Reserve ``job`` (which cannot start now) at its earliest start in the cycle's plan
        if one is due: within the window, under its partition's count. True if reserved; None
        if one is due but the plan's table is full (the cycle stops: backfill.c:2997-3021).

        On processors a job is not searched for if one of its size, no longer, found its
        start beyond the window in this cycle (``cycle.beyond``): the plan only fills as the
        cycle goes on, and a longer job starts no earlier."""
        horizon, beyond = cycle.horizon, cycle.beyond
        if beyond is not None and duration >= beyond.get(job.size, math.inf):
            return False
        start, where = self._earliest(res, job, duration, horizon)
        if start >= horizon:
            if beyond is not None:
                beyond[job.size] = duration
            if start < cycle.until:
                cycle.until = start
            return False
        limit = self.settings.bf_job_part_count_reserve
        part = self._part(job)
        reserved = cycle.reserved
        if where is None or (limit and reserved[part] >= limit):
            return False
        table = cycle.table
        if table.upper >= table.size and table.full:  # (full's first test, inlined)
            return None
        reserved[part] += 1
        entered = self._enter(res, job, start, where, duration)
        if table is not _ROOMY:  # (nothing to count)
            table.add(*entered)
        return True

    def _earliest(
        self, res: Resources, job: Job, duration: float, horizon: float
    ) -> tuple[float, Any]:
        """The start of ``job`` (which cannot start now) in the cycle's plan, and where: on
        nodes as Slurm's backfill plans it (:meth:`WholeNodeResources.slurm_start`, with
        Slurm's estimate of when running jobs end); on processors the earliest, the running
        jobs ending at their time limits."""
        if isinstance(res, WholeNodeResources):
            return res.slurm_start(job, duration, horizon, self._releases, self._round_down)
        return res.earliest(job, duration, horizon)

    def _enter(
        self, res: Resources, job: Job, start: float, where: Any, duration: float
    ) -> tuple[float, float]:
        """Reserve ``where`` for ``job``, planned to start at ``start`` and run ``duration``
        seconds, as Slurm 22.05.8 enters it in its plan: start and end rounded down to
        multiples of ``bf_resolution`` on the clock (src/plugins/sched/backfill/backfill.c:
        2857-2864), one step at least (backfill.c:3298-3299), and closed at its start (a job
        ending then collides with it: backfill.c:2417). On processors the start is kept: held
        from the rounded start, processors still busy then would be counted twice (Slurm holds
        whole nodes, those the job will have, from then on). Returns the start and end as
        Slurm enters them (what the plan's table counts: :class:`_PlanTable`)."""
        step, zero = self.settings.bf_resolution, self.time_zero
        slot = (start + zero) // step * step - zero  # (self._round_down, inlined)
        end = max((start + duration + zero) // step * step - zero, slot + step)
        begin = slot if isinstance(res, WholeNodeResources) else start
        res.reserve(job, begin, where, end - begin, closed=True)
        return slot, end

    def use_clock(self, unix_time: float) -> None:
        """A replay's time 0 on the clock (its trace's ``UnixStartTime``), unless ``time_zero``
        was given."""
        if not self._clock_given:
            self.time_zero = float(unix_time)

    def _will_run(self, ends: np.ndarray) -> np.ndarray:
        return will_run_releases(ends, self.time_zero)

    def _round_down(self, t: float) -> float:
        """``t`` rounded down to a multiple of ``bf_resolution`` on the clock (time 0 is
        ``time_zero`` on it)."""
        step, zero = self.settings.bf_resolution, self.time_zero
        return (t + zero) // step * step - zero

    # -- QOS ---------------------------------------------------------------------------------
    def _qos_name(self, job: Job) -> str:
        return self.user_qos.get(job.user, DEFAULT_QOS)

    def _part(self, job: Job) -> int:
        demand = job.demand
        return demand.part if demand is not None else 0

    def _tres(self, job: Job) -> dict[str, int]:
        nodes, cores, gpus, memory = self._parts(job)
        return {"cpu": cores, "node": nodes, "gres/gpu": gpus, "mem": memory}

    def _held(self, job: Job) -> str | None:
        """The QOS limit that holds the job now, as squeue's reason, or None."""
        name = self._qos_name(job)
        qos = self.qos.get(name)
        if qos is None or not qos.limits_running:
            return None
        user = job.user
        jobs_cap = qos.max_jobs_per_user
        if jobs_cap is not None and self._held_user[(name, user, "jobs")] >= jobs_cap:
            return "QOSMaxJobsPerUserLimit"
        if qos.grp_tres or qos.max_tres_per_user:
            asked = self._tres(job)
            for tres, cap in qos.grp_tres.items():
                if self._held_group[(name, tres)] + asked[tres] > cap:
                    return reason("Grp", tres)
            for tres, cap in qos.max_tres_per_user.items():
                if self._held_user[(name, user, tres)] + asked[tres] > cap:
                    return reason("MaxPerUser", tres)
        return None

    def _started(self, job: Job, now: float, by: str) -> None:
        nodes, cores, gpus, memory = self._parts(job)
        name = self._qos_name(job)
        self._running[job] = (name, nodes, cores, gpus, memory, job.user)
        self._changes += 1
        if self._limits:
            self._hold(job, name, 1)
        if self._use_fairshare:
            self.fairshare.start(job.user, cores, now)
        self._waits(job, False)
        if by == "main":
            self._main_starts += 1
        else:
            self._backfill_starts += 1
        age, fs = self._factors[job]
        _, js, pf, qf, tres = self._static[job]
        why = self._reason.get(job) if job in self._told else "Priority"
        if why is None:  # never looked at while it waited: only full passes were skipped
            why = "Resources" if now > job.submit else "None"
        self.decisions.append(
            (job.id, job.user, self._priority[job], age, fs, js, pf, qf, tres, why, by)
        )
        self._forget(job)

    def _hold(self, job: Job, name: str, sign: int) -> None:
        for tres, amount in self._tres(job).items():
            self._held_user[(name, job.user, tres)] += sign * amount
            self._held_group[(name, tres)] += sign * amount
        self._held_user[(name, job.user, "jobs")] += sign

    def _stopped(self, job: Job, now: float) -> None:
        entry = self._running.pop(job, None)
        if entry is None:
            return
        self._freed += 1
        self._changes += 1
        name, _, cores, _, _, user = entry
        if self._limits:
            self._hold(job, name, -1)
        if self._use_fairshare:
            self.fairshare.stop(user, cores, now)

    # -- the engine's questions --------------------------------------------------------------
    def next_pass(self, now: float) -> float:
        """When this scheduler wants a pass with no event (a backfill cycle, a priority
        recalculation), or inf."""
        if not self.queue:
            return math.inf
        s = self.settings
        wake = math.inf
        if self._dirty and s.bf_interval > 0 and self._fits:
            wake = (math.floor(now / s.bf_interval) + 1) * s.bf_interval  # the next cycle
        if self._timed_priority and s.PriorityCalcPeriod > 0 and self._fits:
            wake = min(wake, self._next_calc)
        if self._fresh is not None and s.batch_sched_delay >= 0:
            wake = min(wake, self._batch_due())
        return wake

    def decision_records(self) -> np.ndarray:
        """One :data:`DECISION_DTYPE` row per started job, in start order."""
        return np.array(self.decisions, dtype=DECISION_DTYPE)

    def observers(self) -> list[Observer]:
        """The per-account table (:mod:`sitesim.slurm.accounts`) and the decisions (each
        started job's priority, factors, last pending reason and what started it)."""
        return [AccountTable(self.associations), _Decisions(self)]

    def resolved_settings(self) -> dict[str, Any]:
        """Every setting as the run used it, in Slurm's units: each of :data:`SETTINGS` (as
        given, else as ``conf`` sets it, else Slurm's default); with ``conf``, each
        partition's ``PriorityJobFactor`` and the keys of :meth:`PartitionPolicy.in_slurm_terms`
        too, named ``"<partition>: <key>"``."""
        resolved = self.settings.in_slurm_units(SETTINGS)
        if self._files["conf"] is not None:
            for name in self._partitions:
                policy = self.partition_policies.get(name, PartitionPolicy())
                keys = {"PriorityJobFactor": self.partition_factors.get(name, 1),
                        **policy.in_slurm_terms()}  # fmt: skip
                resolved.update({f"{name}: {key}": value for key, value in keys.items()})
        return resolved

    def stats(self) -> dict[str, Any]:
        return {
            "settings": self.settings.changed(),
            "resolved_settings": self.resolved_settings(),
            **({"not_modelled": list(self.warnings)} if self.warnings else {}),
            "backfill_cycles": self._cycles,
            "started_by_main": self._main_starts,
            "started_by_backfill": self._backfill_starts,
            **({"users_in_no_account": len(self._unlisted)} if self._listed is not None else {}),
            **{f"refused_{key}": count for key, count in sorted(self._refused.items())},
        }


class _Decisions:
    """Adds the SLURM scheduler's decisions to a run's result."""

    def __init__(self, scheduler: SLURM) -> None:
        self.scheduler = scheduler

    def collect(self, records: np.ndarray, window: tuple[float, float]) -> dict[str, Any]:
        return {"decisions": self.scheduler.decision_records()}
