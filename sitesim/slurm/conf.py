"""A site's Slurm configuration as its operators write it: ``slurm.conf`` and ``sacctmgr``.

Three readers, each for one file:

- :func:`read_slurm_conf`: the nodes and partitions of a ``slurm.conf`` as a
  :class:`~sitesim.platform.description.Platform`, its ``Priority*`` keys and the
  ``SchedulerParameters`` entries sitesim models as settings (Slurm's spelling, values as written),
  each partition's ``PriorityJobFactor`` and its access and order keys (:class:`PartitionPolicy`).
- :func:`read_sacctmgr_assoc`: ``sacctmgr show assoc --parsable2`` as an
  :class:`~sitesim.slurm.associations.Associations` tree and each user's default QOS.
- :func:`read_sacctmgr_qos`: ``sacctmgr show qos --parsable2`` as :class:`~sitesim.slurm.qos.QOS`.

A key that parses but that sitesim does not model is listed once in the result's
``warnings`` (``file:line: KEY: not modelled by sitesim (ignored)``), never dropped silently.
A line sitesim cannot read raises :class:`SlurmConfError`, one line: ``file:line: key:
problem``. What is read, what is warned and why: docs/reference/slurm-conf.md.

Syntax followed: slurm.conf(5) (slurm.conf.html): DESCRIPTION (``Key=Value`` pairs, ``#``
comments, case-insensitive keys, ``Include``), NODE CONFIGURATION (node range expressions,
``NodeName=DEFAULT``), NODESET CONFIGURATION, PARTITION CONFIGURATION, ``SchedulerParameters``
and ``SelectType``/``SelectTypeParameters``; sacctmgr(1) (sacctmgr.html): ``--parsable2``
(``|``-separated, a header line), ``--parsable`` (a trailing ``|``), ``--noheader``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sitesim.errors import ConfigError
from sitesim.platform.description import Platform
from sitesim.platform.values import format_nodes, parse_duration
from sitesim.slurm.associations import ROOT, ROOT_USER, AccountRow, Associations, UserRow
from sitesim.slurm.multifactor import WEIGHT_MAX
from sitesim.slurm.qos import QOS, parse_tres
from sitesim.workload.names import UserNumbers


class SlurmConfError(ConfigError):
    """A Slurm file sitesim cannot read: one line, ``file:line: key: problem``."""


@dataclass(frozen=True)
class SlurmConf:
    """What sitesim reads of a ``slurm.conf``.

    Attributes:
        platform: the nodes and partitions (None if the file has no ``NodeName`` lines).
        settings: the scheduling settings as written, by Slurm's spelling: every ``Priority*``
            key, ``SchedulerType``, and the ``SchedulerParameters`` entries sitesim models
            (:data:`SCHEDULER_PARAMETERS`).
        partition_factors: ``PriorityJobFactor`` of each partition that sets one.
        warnings: each key that parses but is not modelled, once, in the order met.
        partition_policies: the access and order keys of each partition that sets one.
        node_names: each node's ``NodeName``, by the platform's node index.
    """

    platform: Platform | None
    settings: dict[str, str]
    partition_factors: dict[str, int]
    warnings: tuple[str, ...]
    partition_policies: dict[str, PartitionPolicy] = field(default_factory=dict)
    node_names: tuple[str, ...] = ()


@dataclass(frozen=True)
class PartitionPolicy:
    """What a partition's line says of the order of its jobs and of who may run there, as
    Slurm 22.05.8 applies it.

    Attributes:
        tier: ``PriorityTier`` (Slurm's default 1): the queue is ordered by it first, then by
            priority (``sort_job_queue2``, src/slurmctld/job_scheduler.c:2095-2120).
        max_nodes: ``MaxNodes`` (None: unlimited).
        allow_accounts: ``AllowAccounts`` (None: ``ALL``); exact names
            (``part_policy_valid_acct``, src/slurmctld/partition_mgr.c:2143).
        deny_accounts: ``DenyAccounts``, read only without ``AllowAccounts`` (as Slurm).
        allow_qos: ``AllowQos`` (None: ``ALL``).
        deny_qos: ``DenyQos``, read only without ``AllowQos``.
    """

    tier: int = 1
    max_nodes: int | None = None
    allow_accounts: frozenset[str] | None = None
    deny_accounts: frozenset[str] = frozenset()
    allow_qos: frozenset[str] | None = None
    deny_qos: frozenset[str] = frozenset()

    def refusal(self, account: str, qos: str, nodes: int) -> str | None:
        """Why a job of ``account`` under ``qos`` on ``nodes`` nodes never runs in this
        partition (Slurm keeps it pending: node_scheduler.c:2374-2392, job_scheduler.c:
        742-745, unless ``EnforcePartLimits`` rejects it at submission), or None."""
        if self.allow_accounts is not None:
            if account not in self.allow_accounts:
                return "account not in the partition's AllowAccounts"
        elif account in self.deny_accounts:
            return "account in the partition's DenyAccounts"
        if self.allow_qos is not None:
            if qos not in self.allow_qos:
                return "QOS not in the partition's AllowQos"
        elif qos in self.deny_qos:
            return "QOS in the partition's DenyQos"
        if self.max_nodes is not None and nodes > self.max_nodes:
            return "more nodes than the partition's MaxNodes"
        return None

    def in_slurm_terms(self) -> dict[str, Any]:
        """The keys as a partition's line writes them: ``PriorityTier`` always, the others
        where set (``MaxNodes``, ``AllowAccounts``, ``DenyAccounts``, ``AllowQos``,
        ``DenyQos``; names in alphabetical order, comma-separated)."""
        keys: dict[str, Any] = {"PriorityTier": self.tier}
        if self.max_nodes is not None:
            keys["MaxNodes"] = self.max_nodes
        for key, names in (("AllowAccounts", self.allow_accounts),
                           ("DenyAccounts", self.deny_accounts), ("AllowQos", self.allow_qos),
                           ("DenyQos", self.deny_qos)):  # fmt: skip
            if names:
                keys[key] = ",".join(sorted(names))
        return keys


@dataclass(frozen=True)
class AssocTable:
    """What sitesim reads of ``sacctmgr show assoc``.

    Attributes:
        associations: the account tree and the users in it.
        default_qos: user id -> the QOS its jobs run under (the ``Def QOS`` column), for the
            users that name one.
        warnings: each non-empty column sitesim does not model, once.
    """

    associations: Associations
    default_qos: dict[int, str]
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class QOSTable:
    """What sitesim reads of ``sacctmgr show qos``: the QOS by name, and each non-empty
    column sitesim does not model, once."""

    qos: dict[str, QOS]
    warnings: tuple[str, ...]


def _not_modelled(where: str, key: str, why: str = "") -> str:
    return f"{where}: {key}: not modelled by sitesim{f' ({why})' if why else ''} (ignored)"


class _Warnings:
    """Warnings listed once per key (case-insensitive), in the order first met."""

    def __init__(self) -> None:
        self._by_key: dict[str, str] = {}

    def add(self, key: str, message: str) -> None:
        self._by_key.setdefault(key.lower(), message)

    def ignored(self, where: str, key: str, why: str = "") -> None:
        self.add(key, _not_modelled(where, key, why))

    def all(self) -> tuple[str, ...]:
        return tuple(self._by_key.values())


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _split(text: str) -> tuple[str, ...]:
    return tuple(text.split("|"))


# -- values ------------------------------------------------------------------------------------
def _whole(low: int, high: int | None = None) -> Callable[[str], str | None]:
    """A check of a whole number in [low, high]: None if good, else the problem."""

    def check(value: str) -> str | None:
        top = f", at most {high:,}" if high is not None else ""
        if not re.fullmatch(r"[+-]?\d+", value.strip()):
            return f"{value!r} is not a whole number (>= {low}{top})"
        number = int(value)
        if number < low or (high is not None and number > high):
            return f"{number} is out of range: a whole number >= {low}{top}"
        return None

    return check


def _time(positive: bool) -> Callable[[str], str | None]:
    def check(value: str) -> str | None:
        try:
            seconds = parse_duration(value)
        except ValueError as err:
            return str(err)
        if positive and not seconds > 0:
            return f"{value!r}: must be a time > 0"
        return None

    return check


def _choice(*allowed: str) -> Callable[[str], str | None]:
    def check(value: str) -> str | None:
        if value.strip().upper() not in {a.upper() for a in allowed}:
            return f"{value!r} is not one of {', '.join(allowed)}"
        return None

    return check


def _weight(value: str) -> str | None:
    """A check of a priority weight: a whole number within 32 bits, unsigned."""
    problem = _whole(0, WEIGHT_MAX)(value)
    return f"{problem} (Slurm's weights are 32-bit unsigned)" if problem else None


def _tres_weights(value: str) -> str | None:
    for part in filter(None, (p.strip() for p in value.split(","))):
        name, sign, weight = part.partition("=")
        lower = name.strip().lower()
        known = lower in {"cpu", "mem", "node", "gres/gpu"} or re.fullmatch(
            r"gres/gpu:[a-z0-9_.\-]+", lower
        )
        if not sign or not known:
            return (
                f"{part!r}: a TRES weight is NAME=WEIGHT over cpu, mem, node, gres/gpu "
                "(or a typed gres/gpu:TYPE)"
            )
        problem = _weight(weight)
        if problem:
            return f"{name.strip()}: {problem}"
    return None


def _typed_gpu_weights(value: str, where: str, warn: _Warnings) -> str:
    """PriorityWeightTRES with typed GPU weights (``GRES/gpu:a100=200``) folded into one
    ``GRES/gpu`` weight (sitesim's GPUs have no type): the untyped weight if given, else the
    largest typed one; warned."""
    parts = [p.strip() for p in value.split(",") if p.strip()]
    typed = [p for p in parts if p.lower().startswith("gres/gpu:")]
    if not typed:
        return value
    rest = [p for p in parts if p not in typed]
    if not any(p.lower().startswith("gres/gpu=") for p in rest):
        top = max(int(p.partition("=")[2]) for p in typed)
        rest.append(f"GRES/gpu={top}")
    warn.add(
        "typed gpu weights",
        f"{where}: PriorityWeightTRES: {', '.join(typed)}: sitesim's GPUs have no type; "
        f"weighed as {next(p for p in rest if p.lower().startswith('gres/gpu='))} on every GPU",
    )
    return ",".join(rest)


def _flags(value: str) -> str | None:
    words = [f.strip().upper() for f in value.split(",") if f.strip()]
    if not all(re.fullmatch(r"[A-Z_]+", f) for f in words):
        return f"{value!r} is not a comma-separated list of flags"
    unknown = [f for f in words if f not in PRIORITY_FLAGS]
    if unknown:
        return f"{unknown[0]!r} is not a flag slurm.conf(5) documents ({', '.join(PRIORITY_FLAGS)})"
    return None


#: The ``PriorityFlags`` Slurm 22.05 reads (read_config.c), and what sitesim does with each:
#: the modelled ones are kept; the others are warned and left out.
PRIORITY_FLAGS = {
    "FAIR_TREE": "",
    "NO_FAIR_TREE": "",
    "SMALL_RELATIVE_TO_TIME": "",
    "DEPTH_OBLIVIOUS": "classic fairshare (as NO_FAIR_TREE) without the depth-oblivious formula",
    "ACCRUE_ALWAYS": "every job is eligible, and ages, from its submission",
    "CALCULATE_RUNNING": "running jobs' priorities are not recomputed",
    "INCR_ONLY": "priorities may fall",
    "MAX_TRES": "the TRES factors are summed",
    "NO_NORMAL_ALL": "the factors are normalized",
    "NO_NORMAL_ASSOC": "the factors are normalized",
    "NO_NORMAL_PART": "the factors are normalized",
    "NO_NORMAL_QOS": "the factors are normalized",
    "NO_NORMAL_TRES": "the factors are normalized",
}


def _modelled_flags(value: str, where: str, warn: _Warnings) -> str:
    """The flags of ``value`` sitesim models (DEPTH_OBLIVIOUS read as NO_FAIR_TREE, as Slurm
    turns Fair Tree off for it); each other flag warned with what sitesim does instead."""
    kept: list[str] = []
    for flag in (f.strip().upper() for f in value.split(",") if f.strip()):
        why = PRIORITY_FLAGS[flag]
        if flag == "DEPTH_OBLIVIOUS":
            kept.append("NO_FAIR_TREE")
        elif not why:
            kept.append(flag)
        if why:
            warn.add(flag, f"{where}: PriorityFlags={flag}: not modelled by sitesim ({why})")
    return ",".join(dict.fromkeys(kept))


#: The ``Priority*`` keys of slurm.conf(5), Slurm's spelling, and the check of each value.
#: Every one is kept in ``settings``; :data:`PRIORITY_NOT_MODELLED` are warned as well.
PRIORITY_KEYS: dict[str, Callable[[str], str | None]] = {
    "PriorityType": _choice("priority/multifactor", "priority/basic"),
    "PriorityCalcPeriod": _time(positive=True),
    "PriorityDecayHalfLife": _time(positive=False),
    "PriorityFavorSmall": _choice("YES", "NO"),
    "PriorityFlags": _flags,
    "PriorityMaxAge": _time(positive=False),
    "PriorityUsageResetPeriod": _choice(
        "NONE", "NOW", "DAILY", "WEEKLY", "MONTHLY", "QUARTERLY", "YEARLY"
    ),
    "PriorityWeightAge": _weight,
    "PriorityWeightAssoc": _weight,
    "PriorityWeightFairshare": _weight,
    "PriorityWeightJobSize": _weight,
    "PriorityWeightPartition": _weight,
    "PriorityWeightQOS": _weight,
    "PriorityWeightTRES": _tres_weights,
    "PriorityParameters": lambda value: None,
    "PrioritySiteFactorParameters": lambda value: None,
    "PrioritySiteFactorPlugin": lambda value: None,
}
PRIORITY_NOT_MODELLED = frozenset(
    {"PriorityWeightAssoc", "PriorityParameters", "PrioritySiteFactorParameters",
     "PrioritySiteFactorPlugin"}
)  # fmt: skip

#: The ``SchedulerParameters`` entries sitesim models and their ranges (slurm.conf(5),
#: SchedulerParameters; ``bf_interval=-1`` turns the backfill loop off, as in Slurm).
SCHEDULER_PARAMETERS: dict[str, Callable[[str], str | None]] = {
    "default_queue_depth": _whole(1),
    "bf_interval": lambda v: None if v.strip() == "-1" else _whole(1, 10_800)(v),
    "bf_max_job_test": _whole(1, 1_000_000),
    "bf_window": _whole(1, 43_200),
    "bf_resolution": _whole(1, 3600),
    "bf_max_job_user": _whole(0),
    "bf_job_part_count_reserve": _whole(0, 100_000),
    "bf_node_space_size": _whole(2, 2_000_000),
    "batch_sched_delay": _whole(0),
}
#: Slurm's defaults of the two entries checked against each other (minutes, seconds).
_BF_WINDOW_DEFAULT, _BF_RESOLUTION_DEFAULT = 1440, 60
#: Every backfill entry slurm.conf(5) documents: one not listed is a typo (an error).
_BF_DOCUMENTED = _words(
    "bf_allow_magnetic_slot bf_busy_nodes bf_continue bf_hetjob_immediate bf_hetjob_prio "
    "bf_interval bf_job_part_count_reserve bf_licenses bf_max_job_array_resv bf_max_job_assoc "
    "bf_max_job_part bf_max_job_start bf_max_job_test bf_max_job_user bf_max_job_user_part "
    "bf_max_time bf_min_age_reserve bf_min_prio_reserve bf_node_space_size bf_one_resv_per_job "
    "bf_resolution bf_running_job_reserve bf_topopt_enable bf_topopt_iterations bf_window "
    "bf_window_linear bf_yield_interval bf_yield_rpc_cnt bf_yield_sleep"
)

#: Node keys read (lower case): the rest of a ``NodeName`` line is warned.
_NODE_KEYS = _words(
    "nodename cpus procs boards sockets socketsperboard corespersocket threadspercore "
    "realmemory gres feature features"
)
#: Partition keys read (lower case).
_PARTITION_KEYS = _words(
    "partitionname nodes default maxtime oversubscribe shared exclusive priorityjobfactor state "
    "prioritytier maxnodes allowaccounts denyaccounts allowqos denyqos"
)


# -- lines -------------------------------------------------------------------------------------
_Pairs = list[tuple[str, str]]


def _split_pairs(text: str, where: str) -> _Pairs:
    """``Key=Value`` pairs separated by blanks; a value may be in double quotes."""
    if text.count('"') % 2:
        before = text[: text.rfind('"')].split() or ['"']
        raise SlurmConfError(f"{where}: {before[-1].split('=')[0]}: an unclosed quote")
    pairs: _Pairs = []
    for match in re.finditer(r'(?:[^\s"]|"[^"]*")+', text):
        token = match[0]
        key, sign, value = token.partition("=")
        if not sign or not key:
            raise SlurmConfError(f"{where}: {token}: not a Key=Value pair")
        pairs.append((key, value.replace('"', "")))
    return pairs


def _conf_lines(
    path: Path, top: Path, seen: tuple[Path, ...] = (), origin: str = ""
) -> Iterator[tuple[str, _Pairs]]:
    """Each line of a slurm.conf with pairs, as ``(file:line, pairs)``; ``Include`` files are
    read in place, a relative name from the folder of the top file (slurm.conf(5), INCLUDE
    MODIFIERS)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        where = f"{origin}: Include" if origin else str(path)
        raise SlurmConfError(f"{where}: cannot read {path}: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise SlurmConfError(f"{path}: not a text file") from None
    for number, raw in enumerate(text.splitlines(), 1):
        where = f"{path}:{number}"
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        first, _, rest = line.partition(" ")
        if first.lower() == "include" and "=" not in first:
            name = rest.strip()
            if not name or "%" in name:
                raise SlurmConfError(
                    f"{where}: Include: {name!r}: give a file name (modifiers such as %c are "
                    "not read)"
                )
            included = Path(name) if Path(name).is_absolute() else top.parent / name
            if included.resolve() in (p.resolve() for p in (path, *seen)):
                raise SlurmConfError(f"{where}: Include: {name} includes itself")
            yield from _conf_lines(included, top, (*seen, path), where)
            continue
        yield where, _split_pairs(line, where)


# -- node range expressions ---------------------------------------------------------------------
def expand_hostlist(text: str) -> list[str]:
    """Node names of a node range expression, in order: ``"tux[0-2,7],alpha"`` ->
    ``tux0 tux1 tux2 tux7 alpha``; several brackets multiply (``rack[0-1]_b[0-1]``); leading
    zeros fix the width (``linux[000-002]``). slurm.conf(5), NODE CONFIGURATION.

    Raises:
        ValueError: unbalanced brackets, an empty name, or a bad or reversed range.
    """
    names: list[str] = []
    for item in _top_level_split(text):
        if not item:
            raise ValueError(f"{text!r} has an empty node name")
        expanded = [""]
        for piece in re.split(r"(\[[^\[\]]*\])", item):
            if "[" in piece[1:] or "]" in piece[:-1] or piece.count("[") != piece.count("]"):
                raise ValueError(f"{item!r} has unbalanced brackets")
            if piece.startswith("["):
                choices = _bracket(piece[1:-1], item)
                expanded = [head + tail for head in expanded for tail in choices]
            else:
                expanded = [head + piece for head in expanded]
        names.extend(expanded)
    return names


def _top_level_split(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for k, char in enumerate(text):
        if char == "[":
            depth += 1
            if depth > 1:
                raise ValueError(f"{text!r} has nested brackets")
        elif char == "]":
            depth -= 1
            if depth < 0:
                raise ValueError(f"{text!r} has unbalanced brackets")
        elif char == "," and depth == 0:
            parts.append(text[start:k].strip())
            start = k + 1
    if depth:
        raise ValueError(f"{text!r} has unbalanced brackets")
    parts.append(text[start:].strip())
    return parts


def _bracket(inside: str, item: str) -> list[str]:
    out: list[str] = []
    for part in inside.split(","):
        found = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if found is None:
            raise ValueError(f"{item!r}: {part!r} is not a number or a range such as 0-31")
        low, high = found[1], found[2] if found[2] is not None else found[1]
        if int(high) < int(low):
            raise ValueError(f"{item!r}: the range {part.strip()!r} is reversed")
        width = len(low)
        out.extend(str(n).zfill(width) for n in range(int(low), int(high) + 1))
    return out


# -- slurm.conf ---------------------------------------------------------------------------------
@dataclass
class _NodeLine:
    where: str
    spec: str
    names: list[str]
    cpus: int
    gpus: int
    memory: int
    future: bool  # (State=FUTURE: not available, left out of the platform)
    features: tuple[str, ...] = ()


def read_slurm_conf(path: str | Path) -> SlurmConf:
    """Read a ``slurm.conf`` (see the module docstring and docs/reference/slurm-conf.md).

    Raises:
        SlurmConfError: the file (or an included one) cannot be read, or a line cannot be
            parsed, or a modelled key has a bad value: ``file:line: key: problem``.
    """
    top = Path(path)
    warn = _Warnings()
    settings: dict[str, str] = {}
    where_of: dict[str, str] = {}
    node_defaults: dict[str, tuple[str, str]] = {}
    part_defaults: dict[str, tuple[str, str]] = {}
    raw_nodes: list[tuple[str, dict[str, tuple[str, str]]]] = []
    raw_parts: list[tuple[str, dict[str, tuple[str, str]]]] = []
    nodesets: dict[str, tuple[str, str]] = {}
    select = {"selecttype": "select/cons_tres", "selecttypeparameters": ""}
    priority_lower = {k.lower(): k for k in PRIORITY_KEYS}
    for where, pairs in _conf_lines(top, top):
        first = pairs[0][0].lower()
        if first in ("nodename", "partitionname"):
            table = {k.lower(): (k, v) for k, v in pairs}
            name = pairs[0][1]
            defaults = node_defaults if first == "nodename" else part_defaults
            if name.upper() == "DEFAULT":
                defaults.update({k: kv for k, kv in table.items() if k != first})
            else:
                (raw_nodes if first == "nodename" else raw_parts).append(
                    (where, {**defaults, **table})
                )
            continue
        if first in ("downnodes", "frontendname"):
            warn.ignored(where, pairs[0][0])  # (a record of its own: its other keys with it)
            continue
        if first == "nodeset":
            table = {k.lower(): (k, v) for k, v in pairs}
            if "nodes" not in table:
                raise SlurmConfError(
                    f"{where}: NodeSet: only nodesets listing Nodes= are read (not Feature=)"
                )
            nodesets[pairs[0][1]] = (where, table["nodes"][1])
            continue
        for key, value in pairs:
            lower = key.lower()
            if lower in priority_lower:
                name = priority_lower[lower]
                problem = PRIORITY_KEYS[name](value)
                if problem:
                    raise SlurmConfError(f"{where}: {name}: {problem}")
                if name == "PriorityFlags":
                    value = _modelled_flags(value, where, warn)
                elif name == "PriorityWeightTRES":
                    value = _typed_gpu_weights(value, where, warn)
                settings[name] = value
                where_of[name] = where
                if name in PRIORITY_NOT_MODELLED:
                    warn.ignored(where, key)
            elif lower.startswith("priority"):
                raise SlurmConfError(
                    f"{where}: {key}: unknown Priority key; slurm.conf has "
                    f"{', '.join(PRIORITY_KEYS)}"
                )
            elif lower == "schedulerparameters":
                for name in SCHEDULER_PARAMETERS:
                    settings.pop(name, None)
                _scheduler_parameters(value, where, settings, where_of, warn)
            elif lower == "schedulertype":
                problem = _choice("sched/backfill", "sched/builtin")(value)
                if problem:
                    raise SlurmConfError(f"{where}: {key}: {problem}")
                settings["SchedulerType"] = value
            elif lower in select:
                select[lower] = value
                where_of[lower] = where
            elif lower == "grestypes":
                pass  # (declares the GRES the nodes' Gres= name; GPUs are read there)
            else:
                warn.ignored(where, key)
    _check_window(settings, where_of)
    linear, memory_counted, per_cpu = _selection(select, where_of, warn)
    lines = [_node_line(where, table, memory_counted, per_cpu, warn) for where, table in raw_nodes]
    nodes = [line for line in lines if not line.future]
    future = {name for line in lines if line.future for name in line.names}
    platform: Platform | None = None
    factors: dict[str, int] = {}
    policies: dict[str, PartitionPolicy] = {}
    names: tuple[str, ...] = ()
    if nodes:
        platform, factors, policies, names = _platform(
            top, nodes, raw_parts, nodesets, future, linear, warn
        )
    elif raw_parts:
        why = "every node is State=FUTURE" if lines else "no NodeName line defines nodes"
        raise SlurmConfError(f"{raw_parts[0][0]}: PartitionName: {why} (sitesim needs one)")
    return SlurmConf(platform, settings, factors, warn.all(), policies, names)


def _scheduler_parameters(
    value: str, where: str, settings: dict[str, str], where_of: dict[str, str], warn: _Warnings
) -> None:
    for entry in filter(None, (e.strip() for e in value.split(","))):
        name, sign, setting = entry.partition("=")
        lower = name.lower()
        if lower in SCHEDULER_PARAMETERS:
            problem = SCHEDULER_PARAMETERS[lower](setting) if sign else "needs a value"
            if problem:
                raise SlurmConfError(f"{where}: {lower}: {problem}")
            settings[lower] = setting.strip()
            where_of[lower] = where
        elif lower.startswith("bf_") and lower not in _BF_DOCUMENTED:
            raise SlurmConfError(f"{where}: {name}: unknown backfill parameter")
        else:
            warn.ignored(where, name)


def _check_window(settings: Mapping[str, str], where_of: Mapping[str, str]) -> None:
    window = int(settings.get("bf_window", _BF_WINDOW_DEFAULT))
    resolution = int(settings.get("bf_resolution", _BF_RESOLUTION_DEFAULT))
    if window * 60 < resolution:
        key = "bf_window" if "bf_window" in settings else "bf_resolution"
        raise SlurmConfError(
            f"{where_of[key]}: {key}: bf_window ({window} min = {window * 60} s) is shorter than "
            f"bf_resolution ({resolution} s)"
        )


def _selection(
    select: Mapping[str, str], where_of: Mapping[str, str], warn: _Warnings
) -> tuple[bool, bool, bool]:
    """SelectType and SelectTypeParameters: (whole nodes, memory consumable, CPUs counted
    one by one as CR_CPU does)."""
    kind = select["selecttype"].strip().lower()
    where = where_of.get("selecttype", "")
    if kind not in ("select/cons_tres", "select/cons_res", "select/linear"):
        raise SlurmConfError(
            f"{where}: SelectType: {select['selecttype']!r} is not one of select/cons_tres, "
            "select/cons_res, select/linear"
        )
    linear = kind == "select/linear"
    params = [p.strip().upper() for p in select["selecttypeparameters"].split(",") if p.strip()]
    where = where_of.get("selecttypeparameters", where)
    base = [p for p in params if p.startswith("CR_") and _CR.fullmatch(p)]
    for extra in sorted(set(params) - set(base), key=params.index):
        warn.ignored(where, f"SelectTypeParameters={extra}")
    if len(base) > 1:
        raise SlurmConfError(f"{where}: SelectTypeParameters: {', '.join(base)} conflict")
    mode = base[0] if base else ("" if linear else "CR_CORE_MEMORY")
    return linear, mode.endswith("MEMORY"), mode.startswith("CR_CPU")


_CR = re.compile(r"CR_(CPU|CORE|SOCKET)(_MEMORY)?|CR_MEMORY")


def _number(table: Mapping[str, tuple[str, str]], key: str, where: str, low: int) -> int | None:
    if key not in table:
        return None
    written, value = table[key]
    problem = _whole(low)(value)
    if problem:
        raise SlurmConfError(f"{where}: {written}: {problem}")
    return int(value)


def _node_line(
    where: str,
    table: Mapping[str, tuple[str, str]],
    memory_counted: bool,
    per_cpu: bool,
    warn: _Warnings,
) -> _NodeLine:
    spec = table["nodename"][1]
    try:
        names = expand_hostlist(spec)
    except ValueError as err:
        raise SlurmConfError(f"{where}: NodeName: {err}") from None
    if any(name.upper() in ("ALL", "DEFAULT") for name in names):
        raise SlurmConfError(f"{where}: NodeName: ALL and DEFAULT are not node names")
    future = table.get("state", ("", ""))[1].strip().upper() == "FUTURE"
    for key, (written, _) in table.items():
        if key not in _NODE_KEYS and not (key == "state" and future):
            warn.ignored(where, written)
    if future:  # (slurm.conf(5), State: FUTURE nodes are not available for use)
        warn.add(
            f"future {where}",
            f"{where}: State=FUTURE: nodes {spec} left out (Slurm schedules no job on them)",
        )
    cpus = _number(table, "cpus", where, 1)
    cpus = _number(table, "procs", where, 1) if cpus is None else cpus
    threads = _number(table, "threadspercore", where, 1) or 1
    if cpus is None:
        sockets = _number(table, "socketsperboard", where, 1) or _number(table, "sockets", where, 1)
        cpus = (
            (_number(table, "boards", where, 1) or 1)
            * (sockets or 1)
            * (_number(table, "corespersocket", where, 1) or 1)
            * threads
        )
    if threads > 1 and not per_cpu:
        warn.add(
            "threadspercore",
            f"{where}: ThreadsPerCore: {threads} threads a core: sitesim allocates CPUs one by "
            "one (as Slurm with CR_CPU), not whole cores",
        )
    memory = _number(table, "realmemory", where, 1) or 0
    if memory and not memory_counted:
        warn.ignored(where, table["realmemory"][0], "memory is not a consumable resource here")
        memory = 0
    gpus = _gres(table["gres"], where, warn) if "gres" in table else 0
    features: tuple[str, ...] = ()
    for key in ("feature", "features"):
        if key in table:
            written, value = table[key]
            listed = [f.strip() for f in value.split(",") if f.strip()]
            bad = next((f for f in listed if not re.fullmatch(r"[A-Za-z0-9_.:\-]+", f)), None)
            if bad is not None:
                raise SlurmConfError(
                    f"{where}: {written}: {bad!r} is not a feature name (letters, digits, _ . : -)"
                )
            features = tuple(dict.fromkeys([*features, *listed]))
    return _NodeLine(where, spec, names, cpus, gpus, memory, future, features)


def _gres(written_value: tuple[str, str], where: str, warn: _Warnings) -> int:
    """GPUs a node: the sum of the ``gpu[:type]:count`` entries; other GRES are warned."""
    written, value = written_value
    gpus = 0
    # (commas inside a socket binding, gpu:a100:4(S:0,1), do not separate entries)
    entries = re.split(r",(?![^(]*\))", value)
    for entry in filter(None, (e.strip() for e in entries)):
        entry = re.sub(r"\(S:[0-9,\-]+\)$", "", entry)  # (the sockets the GPUs sit on)
        fields = entry.split(":")
        if fields[0].lower() != "gpu" or "no_consume" in fields:
            warn.ignored(where, f"{written}={fields[0]}")
            continue
        found = re.fullmatch(r"(\d+)([KMGTP]?)", fields[-1].strip().upper()) if fields[1:] else None
        if found is None:
            raise SlurmConfError(f"{where}: {written}: {entry!r} is not gpu[:type]:count")
        gpus += int(found[1]) * 1024 ** "_KMGTP".index(found[2] or "_")
    return gpus


def _platform(
    top: Path,
    nodes: list[_NodeLine],
    raw_parts: list[tuple[str, dict[str, tuple[str, str]]]],
    nodesets: Mapping[str, tuple[str, str]],
    future: set[str],
    linear: bool,
    warn: _Warnings,
) -> tuple[Platform, dict[str, int], dict[str, PartitionPolicy], tuple[str, ...]]:
    """Node types by distinct (CPUs, GPUs, memory, features) in the order met, each named
    by its NodeName expressions; nodes numbered by type, within a type in the order of the
    lines; and the node names by index."""
    groups: dict[tuple[int, int, int, tuple[str, ...]], list[_NodeLine]] = {}
    for line in nodes:
        groups.setdefault((line.cpus, line.gpus, line.memory, line.features), []).append(line)
    index: dict[str, int] = {}
    node_tables: list[dict[str, Any]] = []
    for (cpus, gpus, memory, features), lines in groups.items():
        for line in lines:
            for name in line.names:
                if name in index:
                    raise SlurmConfError(f"{line.where}: NodeName: node {name} is defined twice")
                index[name] = len(index)
        spec = ",".join(line.spec for line in lines)
        table: dict[str, Any] = {"type": spec, "count": sum(len(x.names) for x in lines)}
        table |= {"cores": cpus, "gpus": gpus, "memory": memory, "features": list(features)}
        node_tables.append(table)
    part_tables: list[dict[str, Any]] = []
    factors: dict[str, int] = {}
    policies: dict[str, PartitionPolicy] = {}
    defaults: list[str] = []
    for where, table in raw_parts:
        name = table["partitionname"][1]
        if any(p["name"] == name for p in part_tables):
            raise SlurmConfError(f"{where}: PartitionName: partition {name} is defined twice")
        for key, (written, _) in table.items():
            if key not in _PARTITION_KEYS:
                warn.ignored(where, written)
        members = _partition_nodes(
            table.get("nodes", ("Nodes", ""))[1], where, index, nodesets, future
        )
        if not members:
            warn.add(
                f"nodes of {name}", f"{where}: Nodes: partition {name} has no nodes (left out)"
            )
            continue
        part: dict[str, Any] = {"name": name, "nodes": [format_nodes(members)]}
        if "maxtime" in table:
            written, value = table["maxtime"]
            problem = _time(positive=True)(value)
            if problem:
                raise SlurmConfError(f"{where}: {written}: {problem}")
            part["max_time"] = value
        part["allocation"] = "exclusive" if linear or _exclusive(table, where, warn) else "shared"
        factor = _number(table, "priorityjobfactor", where, 0)
        if factor is not None:
            if factor > 65_533:
                raise SlurmConfError(f"{where}: PriorityJobFactor: {factor} is over 65533")
            factors[name] = factor
        policy = _policy(table, where)
        if policy != PartitionPolicy():
            policies[name] = policy
        if "default" in table:
            written, value = table["default"]
            if _choice("YES", "NO")(value):
                raise SlurmConfError(f"{where}: {written}: {_choice('YES', 'NO')(value)}")
            if value.upper() == "YES":
                defaults.append(name)
        if "state" in table and table["state"][1].upper() != "UP":
            warn.ignored(where, f"State={table['state'][1].upper()}", "partitions are UP")
        part_tables.append(part)
    if not part_tables:
        raise SlurmConfError(f"{top}: PartitionName: no partition with nodes (sitesim needs one)")
    if len(defaults) > 1:
        raise SlurmConfError(f"{top}: Default: {' and '.join(defaults)} are both Default=YES")
    data: dict[str, Any] = {
        "name": top.stem,
        "placement": "first_fit" if linear else "best_fit",
        "nodes": node_tables,
        "partitions": part_tables,
    }
    if defaults:
        data["default_partition"] = defaults[0]
    try:
        return Platform.from_dict(data, where=str(top)), factors, policies, tuple(index)
    except ConfigError as err:
        raise SlurmConfError(str(err)) from None


def _policy(table: Mapping[str, tuple[str, str]], where: str) -> PartitionPolicy:
    """A partition line's :class:`PartitionPolicy`."""
    tier = _number(table, "prioritytier", where, 0)
    if tier is not None and tier > 65_533:
        raise SlurmConfError(f"{where}: PriorityTier: {tier} is over 65533")
    max_nodes = None
    if "maxnodes" in table and table["maxnodes"][1].strip().upper() not in (
        "UNLIMITED",
        "INFINITE",
    ):
        max_nodes = _number(table, "maxnodes", where, 0)

    def names(key: str) -> frozenset[str] | None:
        if key not in table:
            return None
        written, value = table[key]
        listed = [name.strip() for name in value.split(",")]
        if not all(listed):
            raise SlurmConfError(f"{where}: {written}: {value!r}: an empty name in the list")
        return None if [n.upper() for n in listed] == ["ALL"] else frozenset(listed)

    return PartitionPolicy(
        tier=1 if tier is None else tier,
        max_nodes=max_nodes,
        allow_accounts=names("allowaccounts"),
        deny_accounts=names("denyaccounts") or frozenset(),
        allow_qos=names("allowqos"),
        deny_qos=names("denyqos") or frozenset(),
    )


def _partition_nodes(
    text: str,
    where: str,
    index: Mapping[str, int],
    nodesets: Mapping[str, tuple[str, str]],
    future: set[str],
) -> list[int]:
    """The indexes of a partition's nodes (those of ``future``, State=FUTURE, left out)."""
    if text.strip().upper() == "ALL":
        return list(range(len(index)))
    try:
        names = expand_hostlist(text) if text.strip() else []
    except ValueError as err:
        raise SlurmConfError(f"{where}: Nodes: {err}") from None
    members: set[int] = set()
    for name in names:
        if name in nodesets:
            nodeset_where, nodeset = nodesets[name]
            members.update(_partition_nodes(nodeset, nodeset_where, index, {}, future))
        elif name in index:
            members.add(index[name])
        elif name in future:
            continue
        else:
            raise SlurmConfError(f"{where}: Nodes: {name} is no node of a NodeName line")
    return sorted(members)


def _exclusive(table: Mapping[str, tuple[str, str]], where: str, warn: _Warnings) -> bool:
    """Whole nodes: ``OverSubscribe=EXCLUSIVE`` (or the older ``Shared=``) or
    ``Exclusive=NODE``; YES and FORCE (several jobs a core) are warned."""
    whole = False
    for key in ("oversubscribe", "shared"):
        if key in table:
            written, value = table[key]
            mode = value.split(":", 1)[0].upper()
            if mode not in ("NO", "YES", "FORCE", "EXCLUSIVE") or not re.fullmatch(
                r"[A-Za-z]+(:\d+)?", value
            ):
                raise SlurmConfError(
                    f"{where}: {written}: {value!r} is not NO, YES[:n], FORCE[:n] or EXCLUSIVE"
                )
            whole = whole or mode == "EXCLUSIVE"
            if mode in ("YES", "FORCE"):
                warn.ignored(where, f"{written}={mode}", "a core runs one job at a time")
    if "exclusive" in table:
        written, value = table["exclusive"]
        mode = value.upper()
        if mode not in ("NO", "NODE", "USER", "TOPO"):
            raise SlurmConfError(f"{where}: {written}: {value!r} is not NO, NODE, USER or TOPO")
        whole = whole or mode == "NODE"
        if mode in ("USER", "TOPO"):
            warn.ignored(where, f"{written}={mode}")
    return whole


# -- sacctmgr --parsable2 -----------------------------------------------------------------------
#: The columns of ``sacctmgr show assoc`` and ``show qos`` without ``format=`` (their headers,
#: as sacctmgr prints them), for files written with ``--noheader``.
ASSOC_COLUMNS = _split(
    "Cluster|Account|User|Partition|Share|Priority|GrpJobs|GrpTRES|GrpSubmit|GrpWall|"
    "GrpTRESMins|MaxJobs|MaxTRES|MaxTRESPerNode|MaxSubmit|MaxWall|MaxTRESMins|QOS|Def QOS|"
    "GrpTRESRunMins"
)
QOS_COLUMNS = _split(
    "Name|Priority|GraceTime|Preempt|PreemptExemptTime|PreemptMode|Flags|UsageThres|"
    "UsageFactor|GrpTRES|GrpTRESMins|GrpTRESRunMins|GrpJobs|GrpSubmit|GrpWall|MaxTRES|"
    "MaxTRESPerNode|MaxTRESMins|MaxWall|MaxTRESPU|MaxJobsPU|MaxSubmitPU|MaxTRESPA|"
    "MaxTRESRunMinsPA|MaxTRESRunMinsPU|MaxJobsPA|MaxSubmitPA|MinTRES"
)
_Row = tuple[str, dict[str, str]]


def _parsable(path: str | Path, default: tuple[str, ...], marker: str) -> list[_Row]:
    """The rows of a ``|``-separated sacctmgr listing as ``(file:line, {column: value})``;
    the header names the columns (without one, sacctmgr's default columns)."""
    where = str(path)
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as err:
        raise SlurmConfError(f"{where}: cannot read: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise SlurmConfError(f"{where}: not a text file") from None
    numbered = [(n, line) for n, line in enumerate(lines, 1) if line.strip()]
    if not numbered:
        raise SlurmConfError(f"{where}: empty: no sacctmgr rows")
    cells = [(n, line.split("|")) for n, line in numbered]
    first = [c.strip() for c in cells[0][1]]
    if marker in first:  # (a header; --parsable ends it, and every line, with '|')
        trailing = first[-1] == ""
        columns, cells = first[:-1] if trailing else first, cells[1:]
    else:  # (--noheader: sacctmgr's default columns)
        columns = list(default)
        trailing = all(len(values) == len(columns) + 1 for _, values in cells)
    if trailing:
        cells = [(n, values[:-1]) for n, values in cells]
    rows: list[_Row] = []
    for number, values in cells:
        line_where = f"{where}:{number}"
        if len(values) != len(columns):
            raise SlurmConfError(
                f"{line_where}: {len(values)} fields where the header has {len(columns)} "
                f"({'|'.join(columns)})"
            )
        rows.append((line_where, dict(zip(columns, values, strict=True))))
    return rows


def _warn_columns(
    rows: list[_Row], read: set[str], warn: _Warnings, quiet: Mapping[str, str]
) -> None:
    """Warn each column not in ``read`` once, at its first non-empty value (a value equal to
    sacctmgr's own default, ``quiet``, is not a setting)."""
    for where, row in rows:
        for column, value in row.items():
            if column in read or not value.strip() or value.strip() == quiet.get(column):
                continue
            if column == "UsageFactor" and _is_one(value):
                continue
            warn.ignored(where, column)


def _is_one(value: str) -> bool:
    try:
        return float(value) == 1.0
    except ValueError:
        return False


class _UserIds:
    """The trace's number of each user a listing names: the name itself when it is a number,
    or, with a conversion's mapping, its number there; a listed user the mapping does not
    have (no job in the trace) gets a number after the mapping's."""

    def __init__(self, mapping: UserNumbers | None) -> None:
        self.mapping = mapping
        self.first_free = max(mapping.numbers.values(), default=0) + 1 if mapping else 0
        #: Listed users the mapping does not have, with the numbers given them.
        self.absent: dict[str, int] = {}
        self.first_absent = ""  # (the line of the first)

    def of(self, name: str, where: str) -> int:
        if name == ROOT and (self.mapping is None or ROOT not in self.mapping.numbers):
            return ROOT_USER  # (Slurm's own root user: uid 0, no job in the trace)
        if self.mapping is None:
            if not re.fullmatch(r"\d+", name):
                raise SlurmConfError(
                    f"{where}: User: {name!r} is a name, and the trace's users are numbers: "
                    "give the mapping that numbered them (mapping=names.json, written by "
                    "sitesim convert --mapping)"
                )
            return int(name)
        found = self.mapping.numbers.get(name)
        if found is not None:
            return found
        self.first_absent = self.first_absent or where
        return self.absent.setdefault(name, self.first_free + len(self.absent))

    def check(self, where: str, listed: set[int], warn: _Warnings) -> None:
        """Refuse a listing none of whose users the mapping has; warn the listed users
        without a job and the trace's users in no account."""
        mapping = self.mapping
        if mapping is not None and ROOT not in mapping.numbers:
            listed = listed - {ROOT_USER}
        if mapping is None or not listed:
            return
        absent, missing = len(self.absent), set(mapping.numbers.values()) - listed
        if absent == len(listed):
            raise SlurmConfError(
                f"{where}: User: none of its {absent} users is in {mapping.where} (the "
                "mapping of another log?)"
            )
        if absent:
            warn.add(
                "users without jobs",
                f"{self.first_absent}: User: {absent} of the {len(listed)} users listed "
                f"{'is' if absent == 1 else 'are'} not in {mapping.where} (no job in the "
                "trace); kept in their accounts",
            )
        if missing:
            numbers = sorted(missing)
            shown = ", ".join(map(str, numbers[:5])) + (", ..." if len(numbers) > 5 else "")
            warn.add(
                "users in no account",
                f"{mapping.where}: {len(numbers)} of the trace's {len(mapping.numbers)} users "
                f"{'is' if len(numbers) == 1 else 'are'} in no account of {where} "
                f"(user{'s' if len(numbers) > 1 else ''} {shown}): each is charged to an "
                "account of its own under root with one share",
            )


def read_sacctmgr_assoc(path: str | Path, mapping: UserNumbers | None = None) -> AssocTable:
    """Read ``sacctmgr show assoc --parsable2`` (sacctmgr(1): ``-P``; ``-p``, ``-n`` too).

    The columns read: ``Account``, ``User``, ``Share``, ``Def QOS``, the parent of each
    account (a ``ParentName`` or ``Par Name`` column, or the ``tree`` option's indented
    ``Account``), ``Cluster`` (one cluster), ``Partition`` (per-partition rows: the first of a
    user and account is used, warned), ``QOS`` (warned unless empty or ``normal``) and
    ``Def Acct`` if present (a user's default account). The ``root`` account's row is the
    implied root; its ``root`` user (the association ``sacctmgr add cluster`` makes) is kept,
    a user of the root account that Fair Tree ranks as Slurm does (fair_tree.c counts every
    user association), numbered :data:`~sitesim.slurm.associations.ROOT_USER` (uid 0) unless
    the mapping numbers ``root``.

    Users are the trace's numbers: a user name is a number, or, with ``mapping`` (the users
    of ``sitesim convert --mapping``), its number there. With a mapping, the listed users it
    does not have (no job in the trace) are kept under numbers after its own, and warned, as
    are the mapping's users in no account.

    Raises:
        SlurmConfError: unreadable, a bad row or value, no parent information, a user name
            that is not a number (without a mapping), no listed user in the mapping:
            ``file:line: column: problem``.
        AssociationError: a bad tree (a cycle, a user in several accounts with no default),
            naming the file.
    """
    rows = _parsable(path, ASSOC_COLUMNS, "Account")
    where = str(path)
    parent_column, tree = _assoc_layout(rows, where)
    warn = _Warnings()
    read = {"Cluster", "Account", "User", "Partition", "Share", "QOS", "Def QOS", "Def Acct"}
    _warn_columns(rows, read | {parent_column or ""}, warn, {"QOS": "normal"})
    clusters = sorted({row["Cluster"] for _, row in rows if row.get("Cluster", "").strip()})
    if len(clusters) > 1:
        raise SlurmConfError(
            f"{where}: Cluster: rows of clusters {', '.join(clusters)}; give one cluster's "
            "(sacctmgr show assoc cluster=NAME)"
        )
    found = _AssocRows(_UserIds(mapping), parent_column, tree)
    for line_where, row in rows:
        found.add(line_where, row, warn)
    found.ids.check(where, set(found.names), warn)
    associations = Associations.build(found.accounts, found.users, where)
    default_qos = {uid: qos for uid, qos in found.default_qos.items() if uid in associations.users}
    return AssocTable(associations, default_qos, warn.all())


def _assoc_layout(rows: list[_Row], where: str) -> tuple[str | None, bool]:
    """The column that names the accounts' parents (None: the ``tree`` option's indentation,
    or no account rows), and whether the listing is a tree.

    Raises:
        SlurmConfError: no Account or User column; account rows with no parent information.
    """
    columns = set(rows[0][1]) if rows else set(ASSOC_COLUMNS)
    parent_column = next((c for c in ("ParentName", "Par Name") if c in columns), None)
    for needed in ("Account", "User"):
        if needed not in columns:
            raise SlurmConfError(f"{where}: {needed}: no such column; columns {sorted(columns)}")
    tree = any(row["Account"].startswith(" ") for _, row in rows)
    accounts_only = (not row["User"].strip() and row["Account"].strip() != ROOT for _, row in rows)
    if parent_column is None and not tree and any(accounts_only):
        raise SlurmConfError(
            f"{where}: ParentName: no column gives the accounts' parents; list them with "
            "format=Account,User,Share,ParentName,DefaultQOS (or the tree option)"
        )
    return parent_column, tree


class _AssocRows:
    """The accounts, users and default QOS of a ``sacctmgr show assoc`` listing, row by row."""

    def __init__(self, ids: _UserIds, parent_column: str | None, tree: bool) -> None:
        self.ids, self.parent_column, self.tree = ids, parent_column, tree
        self.accounts: list[AccountRow] = []
        self.users: list[UserRow] = []
        self.default_qos: dict[int, str] = {}
        self.names: dict[int, str] = {}
        self.depth_stack: list[str] = []  # (tree: the accounts open at each depth)
        self.seen_pairs: set[tuple[int, str]] = set()
        self.warn = _Warnings()  # (the listing's: given with each row)

    def add(self, line_where: str, row: dict[str, str], warn: _Warnings) -> None:
        """One row: an account (no user) or a user's association."""
        self.warn = warn
        written = row["Account"]
        account = written.strip()
        if row.get("Partition", "").strip():
            warn.ignored(line_where, "Partition", "one association per user and account")
        if row.get("QOS", "").strip() not in ("", "normal"):
            warn.ignored(line_where, "QOS", "a user's jobs run under its Def QOS")
        if not account:
            raise SlurmConfError(f"{line_where}: Account: empty")
        user = row["User"].strip()
        if not user:
            self._account(line_where, row, account, len(written) - len(written.lstrip(" ")))
        else:
            self._user(line_where, row, account, user)

    def _account(self, line_where: str, row: dict[str, str], account: str, depth: int) -> None:
        if self.tree:
            del self.depth_stack[depth:]
            parent = self.depth_stack[-1] if self.depth_stack else None
            self.depth_stack.append(account)
        else:
            parent = row[self.parent_column].strip() if self.parent_column else None
        if account != ROOT:
            shares = _share(row.get("Share", "1"), line_where, self.warn)
            self.accounts.append((account, parent or ROOT, shares))

    def _user(self, line_where: str, row: dict[str, str], account: str, user: str) -> None:
        uid = self.ids.of(user, line_where)
        if self.names.setdefault(uid, user) != user:
            raise SlurmConfError(
                f"{line_where}: User: {user} and {self.names[uid]} are both sitesim user {uid}"
            )
        if (uid, account) in self.seen_pairs:
            return  # (another partition's row of the same association)
        self.seen_pairs.add((uid, account))
        is_default = row.get("Def Acct", "").strip() == account
        shares = _share(row.get("Share", "1"), line_where, self.warn)
        self.users.append((uid, account, shares, is_default))
        qos = row.get("Def QOS", "").strip()
        if qos and (is_default or uid not in self.default_qos):
            self.default_qos[uid] = qos


def _share(value: str, where: str, warn: _Warnings) -> float:
    text = value.strip() or "1"
    if text.lower() == "parent":
        warn.add(
            "share parent",
            f"{where}: Share: 'parent' (the association takes its parent's fairshare: in Fair "
            "Tree a user ranks first in its account) is not modelled by sitesim: read as 1 "
            "share (so is every such row)",
        )
        return 1.0
    if not re.fullmatch(r"\d+", text):
        raise SlurmConfError(f"{where}: Share: {value!r} is not a whole number >= 0")
    return float(text)


def read_sacctmgr_qos(path: str | Path) -> QOSTable:
    """Read ``sacctmgr show qos --parsable2`` (sacctmgr(1); ``-p``, ``-n`` too).

    The columns read: ``Name``, ``Priority``, ``MaxWall``, ``MaxJobsPU`` (or
    ``MaxJobsPerUser``), ``MaxSubmitPU`` (or ``MaxSubmitJobsPerUser``), ``GrpTRES``,
    ``MaxTRESPU`` (or ``MaxTRESPerUser``). Any other non-empty column is warned once
    (sacctmgr's defaults, ``GraceTime`` 00:00:00, ``PreemptMode`` cluster, ``UsageFactor``
    1, are not settings).

    Raises:
        SlurmConfError: unreadable, a bad row or value, an unknown TRES:
            ``file:line: column: problem``.
    """
    rows = _parsable(path, QOS_COLUMNS, "Name")
    aliases = {
        "MaxJobsPerUser": "MaxJobsPU",
        "MaxSubmitJobsPerUser": "MaxSubmitPU",
        "MaxTRESPerUser": "MaxTRESPU",
    }
    rows = [(where, {aliases.get(k, k): v for k, v in row.items()}) for where, row in rows]
    read = {"Name", "Priority", "MaxWall", "MaxJobsPU", "MaxSubmitPU", "GrpTRES", "MaxTRESPU"}
    warn = _Warnings()
    _warn_columns(rows, read, warn, {"GraceTime": "00:00:00", "PreemptMode": "cluster"})
    table: dict[str, QOS] = {}
    for where, row in rows:
        name = row.get("Name", "").strip()
        if not name:
            raise SlurmConfError(f"{where}: Name: empty")
        if name in table:
            raise SlurmConfError(f"{where}: Name: QOS {name} is listed twice")

        def count(column: str, where: str = where, row: dict[str, str] = row) -> int | None:
            value = row.get(column, "").strip()
            if not value:
                return None
            problem = _whole(0)(value)
            if problem:
                raise SlurmConfError(f"{where}: {column}: {problem}")
            return int(value)

        max_wall = math.inf
        if row.get("MaxWall", "").strip():
            problem = _time(positive=True)(row["MaxWall"])
            if problem:
                raise SlurmConfError(f"{where}: MaxWall: {problem}")
            max_wall = parse_duration(row["MaxWall"])
        tres = {}
        for column in ("GrpTRES", "MaxTRESPU"):
            try:
                tres[column] = parse_tres(row.get(column, ""), f"{where}: {column}")
            except ConfigError as err:
                raise SlurmConfError(str(err)) from None
        priority = count("Priority") or 0
        jobs, submit = count("MaxJobsPU"), count("MaxSubmitPU")
        try:
            table[name] = QOS(
                name, priority, max_wall, jobs, submit, tres["GrpTRES"], tres["MaxTRESPU"]
            )
        except ConfigError as err:
            raise SlurmConfError(f"{where}: {err}") from None
    return QOSTable(table, warn.all())
