"""Slurm's multifactor job priority and the scheduler's settings, by Slurm's own names.

The priority of a pending job (Slurm's priority/multifactor page, "Multifactor 'Factors'")::

    priority = PriorityWeightAge       * age_factor
             + PriorityWeightFairshare * fairshare_factor
             + PriorityWeightJobSize   * job_size_factor
             + PriorityWeightPartition * partition_factor
             + PriorityWeightQOS       * qos_factor
             + sum over TRES t of PriorityWeightTRES[t] * tres_factor[t]

truncated to a whole number and kept to at most 2**32 - 1 (Slurm's priority is a 32-bit unsigned
integer: slurmctld logs "priority exceeds 32 bits" and caps it; each weight is 32-bit unsigned
too), every factor in [0, 1]:

- age: time since submission over ``PriorityMaxAge``, at most 1 (sitesim's jobs are eligible
  when submitted);
- fairshare: :mod:`sitesim.slurm.fairshare` (classic or Fair Tree);
- job size (``PriorityFavorSmall=NO``): the mean of the job's requested minimum node count
  (1 when it asks only cores) over the machine's nodes and its cores over the machine's cores;
  ``YES``: the mean of the complements; with ``PriorityFlags=SMALL_RELATIVE_TO_TIME``: the
  job's cores (at least its minimum nodes times the average cores per node) over its time
  limit in minutes, over the machine's cores (one minus that with ``PriorityFavorSmall=YES``),
  as Slurm's ``set_priority_factors`` does (``priority_multifactor.c`` of 22.05.8, lines
  2091-2147: ``min_nodes = job_ptr->details->min_nodes``);
- partition: its ``PriorityJobFactor`` over the largest of any partition;
- QOS: its ``Priority`` over the largest of any QOS;
- TRES: what the job asks of each TRES (``CPU``, ``Mem``, ``Node``, ``GRES/gpu``) over its
  partition's total.

Slurm recomputes the priorities of pending jobs every ``PriorityCalcPeriod`` minutes (the same
thread decays fairshare usage); a job submitted in between gets its priority at submission.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any, Literal

from sitesim.errors import ConfigError
from sitesim.platform.values import parse_duration

#: PriorityUsageResetPeriod values.
RESETS = ("NONE", "NOW", "DAILY", "WEEKLY", "MONTHLY", "QUARTERLY", "YEARLY")
#: PriorityFlags sitesim models (the others are refused: they change what is computed).
FLAGS = ("FAIR_TREE", "NO_FAIR_TREE", "SMALL_RELATIVE_TO_TIME")
#: The TRES a PriorityWeightTRES may weigh, as Slurm spells them (case-insensitive).
WEIGHT_TRES = ("CPU", "MEM", "NODE", "GRES/GPU")
#: The largest priority weight: Slurm's weights are 32-bit unsigned (slurm.conf(5), the
#: ``PriorityWeight*`` keys; ``uint32_t`` in slurmctld).
WEIGHT_MAX = 2**32 - 1
#: The factors weighed by a ``PriorityWeight*`` whole number.
WEIGHT_FACTORS = ("Age", "Fairshare", "JobSize", "Partition", "QOS")
#: Why a weight is bounded, as errors say it.
WEIGHT_BOUND = f"at most {WEIGHT_MAX} (Slurm's weights are 32-bit unsigned)"


@dataclass(frozen=True)
class SlurmSettings:
    """The SLURM scheduler's settings (Slurm's defaults), times in seconds.

    The fields are Slurm's slurm.conf keys (the priority plugin) and SchedulerParameters
    entries (the backfill scheduler), spelt as Slurm spells them.
    """

    PriorityWeightAge: int = 0
    PriorityWeightFairshare: int = 0
    PriorityWeightJobSize: int = 0
    PriorityWeightPartition: int = 0
    PriorityWeightQOS: int = 0
    PriorityWeightTRES: str = ""
    PriorityMaxAge: float = 7 * 86_400.0
    PriorityFavorSmall: bool = False
    PriorityCalcPeriod: float = 300.0
    PriorityDecayHalfLife: float = 7 * 86_400.0
    PriorityUsageResetPeriod: str = "NONE"
    PriorityFlags: str = ""
    default_queue_depth: int = 100
    bf_interval: float = 30.0  # (-1: no backfill cycles; 0: one at every pass)
    bf_max_job_test: int = 500
    bf_window: float = 1440 * 60.0
    bf_resolution: float = 60.0
    bf_max_job_user: int = 0
    bf_job_part_count_reserve: int = 0
    bf_node_space_size: int = 0  # (0: bf_max_job_test, as Slurm's default)
    batch_sched_delay: float = 3.0  # (-1: the main scheduler at every pass)

    @classmethod
    def build(cls, given: Mapping[str, Any], where: str = "SLURM") -> SlurmSettings:
        """Settings from values as slurm.conf writes them (text) or as numbers: times in
        Slurm's units (``PriorityMaxAge`` and ``PriorityDecayHalfLife`` in Slurm's time syntax
        or minutes, ``PriorityCalcPeriod`` and ``bf_window`` in minutes, ``bf_interval`` and
        ``bf_resolution`` in seconds; a bf_interval of 0 runs the backfill scheduler at every
        pass; ``batch_sched_delay`` in seconds, -1 runs the main scheduler at every pass).

        Raises:
            ConfigError: ``where: key: problem``, naming the allowed values.
        """
        known = {f.name: f for f in fields(cls)}
        values: dict[str, Any] = {}
        for key, raw in given.items():
            if raw is None:
                continue
            if key not in known:
                raise ConfigError(
                    f"{where}: unknown setting {key!r}; settings are {', '.join(known)}"
                )
            try:
                values[key] = _CONVERTERS[key](raw)
            except ValueError as err:
                raise ConfigError(f"{where}: {key}: {err}") from None
        settings = cls(**values)
        settings._check(where)
        return settings

    def _check(self, where: str) -> None:
        if self.bf_window < self.bf_resolution:
            raise ConfigError(
                f"{where}: bf_window ({self.bf_window / 60:g} min) is shorter than "
                f"bf_resolution ({self.bf_resolution:g} s): the window must hold one step"
            )
        flags = self.flags
        if "FAIR_TREE" in flags and "NO_FAIR_TREE" in flags:
            raise ConfigError(f"{where}: PriorityFlags: FAIR_TREE and NO_FAIR_TREE together")
        try:
            _ = self.tres_weights
        except ConfigError as err:
            raise ConfigError(f"{where}: {err}") from None

    @property
    def flags(self) -> tuple[str, ...]:
        return tuple(f for f in self.PriorityFlags.upper().replace(" ", "").split(",") if f)

    @property
    def algorithm(self) -> str:
        """The fairshare algorithm: ``fair_tree`` (Slurm's default) or ``classic``."""
        return "classic" if "NO_FAIR_TREE" in self.flags else "fair_tree"

    @property
    def tres_weights(self) -> dict[str, int]:
        """PriorityWeightTRES as a table, TRES names in capitals."""
        weights: dict[str, int] = {}
        for part in filter(None, (p.strip() for p in self.PriorityWeightTRES.split(","))):
            name, _, value = part.partition("=")
            name = name.strip().upper()
            if name not in WEIGHT_TRES or not value.strip().isdigit():
                raise ConfigError(
                    f"PriorityWeightTRES: {part!r} is not TRES=WEIGHT with TRES one of "
                    f"{', '.join(WEIGHT_TRES)} and a whole number weight >= 0"
                )
            if int(value) > WEIGHT_MAX:
                raise ConfigError(f"PriorityWeightTRES: {part!r}: a weight is {WEIGHT_BOUND}")
            weights[name] = int(value)
        return weights

    def changed(self) -> dict[str, Any]:
        """The settings that differ from Slurm's defaults, in Slurm's units."""
        default = SlurmSettings()
        return self.in_slurm_units(
            f.name for f in fields(self) if getattr(self, f.name) != getattr(default, f.name)
        )

    def in_slurm_units(self, names: Iterable[str]) -> dict[str, Any]:
        """The settings ``names``, in Slurm's units and in the order of the fields, whatever
        their values (a setting equal to Slurm's default included): what a configuration
        stores of the settings it was given."""
        wanted = set(names)
        return {
            f.name: _in_slurm_units(f.name, getattr(self, f.name))
            for f in fields(self)
            if f.name in wanted
        }


# -- the settings' conversion: one converter a key, from text (slurm.conf) or a number -------------
def _whole(low: int, high: int | None = None) -> Callable[[Any], int]:
    """A whole number >= ``low`` (at most ``high``, a weight's bound)."""

    def convert(raw: Any) -> int:
        text = str(int(raw) if isinstance(raw, float) and raw.is_integer() else raw).strip()
        if not text.lstrip("-").isdigit() or int(text) < low:
            raise ValueError(f"must be a whole number >= {low}, got {raw!r}")
        if high is not None and int(text) > high:
            raise ValueError(f"{int(text)} is too large: a weight is {WEIGHT_BOUND}")
        return int(text)

    return convert


def _interval(unit: Literal["minutes", "seconds"], least: float) -> Callable[[Any], float]:
    """A number of ``unit`` >= ``least``, in seconds (minutes also in Slurm's time syntax)."""

    def convert(raw: Any) -> float:
        text = str(raw).strip()
        try:
            value = float(text)
        except ValueError:
            try:
                value = parse_duration(text) / 60 if unit == "minutes" else math.nan
            except ValueError:
                value = math.nan
        if not (value >= least and math.isfinite(value)):
            raise ValueError(f"must be a number of {unit} >= {least:g}, got {raw!r}")
        return value * 60 if unit == "minutes" else value

    return convert


def _seconds_or_off(raw: Any) -> float:
    """Seconds >= 0, or -1: ``bf_interval`` (as Slurm: no backfill scheduler) and
    ``batch_sched_delay`` (sitesim's own: the main scheduler at every pass, a job started in
    the second it is submitted)."""
    try:
        if float(str(raw).strip()) == -1:
            return -1.0
    except ValueError:
        pass  # (said below)
    return _interval("seconds", 0.0)(raw)


def _duration(positive: bool) -> Callable[[Any], float]:
    """A time in Slurm's syntax (a number: minutes), in seconds; > 0 when ``positive``."""

    def convert(raw: Any) -> float:
        value = float(raw) * 60 if isinstance(raw, int | float) else parse_duration(str(raw))
        if not (value > 0 if positive else value >= 0):
            raise ValueError(f"must be a time {'>' if positive else '>='} 0, got {raw!r}")
        return value

    return convert


def _yes_no(raw: Any) -> bool:
    text = str(raw).strip().upper()
    if text not in ("YES", "NO"):
        raise ValueError(f"must be YES or NO, got {raw!r}")
    return text == "YES"


def _reset(raw: Any) -> str:
    text = str(raw).strip().upper()
    if text not in RESETS:
        raise ValueError(f"must be one of {', '.join(RESETS)}, got {raw!r}")
    return text


def _flags(raw: Any) -> str:
    text = str(raw).strip()
    for flag in filter(None, text.upper().replace(" ", "").split(",")):
        if flag not in FLAGS:
            raise ValueError(f"flag {flag!r} is not modelled; sitesim models {', '.join(FLAGS)}")
    return text


#: Each setting's converter (:meth:`SlurmSettings.build`), in Slurm's units: PriorityMaxAge and
#: PriorityDecayHalfLife in Slurm's time syntax or minutes, PriorityCalcPeriod and bf_window in
#: minutes, bf_interval and bf_resolution in seconds.
_CONVERTERS: dict[str, Callable[[Any], Any]] = {
    **{f"PriorityWeight{k}": _whole(0, WEIGHT_MAX) for k in WEIGHT_FACTORS},
    "PriorityWeightTRES": lambda raw: str(raw).strip(),  # (checked by tres_weights)
    "PriorityMaxAge": _duration(positive=True),
    "PriorityFavorSmall": _yes_no,
    "PriorityCalcPeriod": _interval("minutes", 0.0),
    "PriorityDecayHalfLife": _duration(positive=False),
    "PriorityUsageResetPeriod": _reset,
    "PriorityFlags": _flags,
    "default_queue_depth": _whole(1),
    "bf_interval": _seconds_or_off,
    "bf_max_job_test": _whole(1),
    "bf_window": _interval("minutes", 1.0),
    "bf_resolution": _interval("seconds", 1.0),
    "bf_max_job_user": _whole(0),
    "bf_job_part_count_reserve": _whole(0),
    "bf_node_space_size": _whole(0),
    "batch_sched_delay": _seconds_or_off,
}
_MINUTES = {"PriorityCalcPeriod", "bf_window"}
_DURATIONS = {"PriorityMaxAge", "PriorityDecayHalfLife"}


def _in_slurm_units(key: str, value: Any) -> Any:
    if key in _MINUTES:
        return value / 60
    if key in _DURATIONS:
        whole = round(value)
        days, rest = divmod(whole, 86_400)
        return f"{days}-{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
    if key == "PriorityFavorSmall":
        return "YES" if value else "NO"
    return value


class Multifactor:
    """The priority of jobs under :class:`SlurmSettings`, on a machine of ``nodes`` nodes and
    ``cores`` cores.

    Args:
        settings: the weights and flags.
        nodes, cores: the machine's (the job size factor's denominators).
        partition_factors: ``PriorityJobFactor`` by partition index (missing: 0... as Slurm's
            default of 1 each, all equal).
        qos_priorities: QOS priority by name.
        partition_tres: per partition index, its totals ``{"CPU": .., "MEM": .., "NODE": ..,
            "GRES/GPU": ..}`` (for the TRES factors).
    """

    def __init__(
        self,
        settings: SlurmSettings,
        nodes: int,
        cores: int,
        partition_factors: Mapping[int, int] | None = None,
        qos_priorities: Mapping[str, int] | None = None,
        partition_tres: Mapping[int, Mapping[str, float]] | None = None,
    ) -> None:
        self.s = settings
        self.nodes, self.cores = nodes, cores
        factors = dict(partition_factors or {})
        top = max(factors.values(), default=0)
        self.partition = {k: v / top for k, v in factors.items()} if top else {}
        qos = dict(qos_priorities or {})
        top_qos = max(qos.values(), default=0)
        self.qos = {k: v / top_qos for k, v in qos.items()} if top_qos else {}
        self.partition_tres = partition_tres or {}
        self.tres_weights = settings.tres_weights
        self.max_age = settings.PriorityMaxAge
        self.w_age = settings.PriorityWeightAge
        self.w_fs = settings.PriorityWeightFairshare
        self.relative = "SMALL_RELATIVE_TO_TIME" in settings.flags

    def job_size(self, nodes: int, cores: int, time_limit: float) -> float:
        """The job size factor of a job of ``nodes`` nodes and ``cores`` cores."""
        small = self.s.PriorityFavorSmall
        if self.relative:
            size = max(nodes * self.cores / self.nodes, cores)
            factor = size / max(time_limit / 60, 1.0) / self.cores
            if small:
                factor = 1.0 - factor
        elif small:
            factor = ((self.nodes - nodes) / self.nodes + (self.cores - cores) / self.cores) / 2
        else:
            factor = (nodes / self.nodes + cores / self.cores) / 2
        return min(max(factor, 0.0), 1.0)

    def static_factors(
        self,
        nodes: int,
        cores: int,
        gpus: int,
        memory: float,
        time_limit: float,
        part: int,
        qos: str,
        min_nodes: int | None = None,
    ) -> tuple[float, float, float, float]:
        """The factors that do not change while a job waits: job size, partition, QOS, and
        the weighted sum of its TRES factors.

        Args:
            nodes, cores, gpus, memory: what the job holds (the TRES factors).
            time_limit: its time limit, seconds.
            part: its partition's index.
            qos: its QOS's name.
            min_nodes: its requested minimum node count, which the job size factor reads
                (Slurm's ``details->min_nodes``: 1 when only tasks are asked); default
                ``nodes``.
        """
        js = self.job_size(nodes if min_nodes is None else min_nodes, cores, time_limit)
        pf = self.partition.get(part, 0.0)
        qf = self.qos.get(qos, 0.0)
        tres = 0.0
        if self.tres_weights:
            totals = self.partition_tres.get(part, {})
            asked: dict[str, float] = {"CPU": cores, "NODE": nodes, "GRES/GPU": gpus, "MEM": memory}
            for name, weight in self.tres_weights.items():
                total = totals.get(name, 0.0)
                if total > 0:
                    tres += weight * min(asked[name] / total, 1.0)
        return js, pf, qf, tres

    def static_part(self, js: float, pf: float, qf: float, tres: float) -> float:
        """The weighted sum of the static factors."""
        s = self.s
        return (
            s.PriorityWeightJobSize * js
            + s.PriorityWeightPartition * pf
            + s.PriorityWeightQOS * qf
            + tres
        )

    def age(self, waited: float) -> float:
        """The age factor after ``waited`` seconds pending."""
        return min(max(waited, 0.0) / self.max_age, 1.0)

    def priority(self, static: float, waited: float, fairshare: float) -> int:
        """The job priority (a whole number, as Slurm's, at most :data:`WEIGHT_MAX`)."""
        return min(int(static + self.w_age * self.age(waited) + self.w_fs * fairshare), WEIGHT_MAX)
