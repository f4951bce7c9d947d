"""The platform: a site's nodes and partitions, as one validated, frozen description.

A platform is a list of **node types** (how many nodes, their cores, GPUs and memory) numbered
in order (the first type's nodes are 0, 1, ...), and a list of **partitions**: a name, the
nodes it may use (node types and/or index ranges; partitions may overlap), a maximum time
limit, and how jobs are allocated in it: ``exclusive`` (whole nodes) or ``shared`` (cores, GPUs
and memory packed onto nodes). One partition is the default. ``placement`` says which nodes the
machine picks for a job: ``first_fit`` (the lowest-numbered that fit) or ``best_fit`` (the
tightest, as Slurm's consumable-resources selection does).

``Platform.processors(N)`` is what ``--procs N`` means: N one-core nodes in one exclusive
partition. A run on it is run by the plain processor machine, which gives the same schedules as
before platforms existed (a property test checks the node machine gives them too).

The TOML file (``--platform site.toml``; every key in docs/reference/platform.md)::

    placement = "first_fit"
    default_partition = "normal"

    [[nodes]]
    type = "cpu"
    count = 400
    cores = 64
    memory = "256G"

    [[nodes]]
    type = "gpu"
    count = 40
    cores = 32
    gpus = 4
    memory = "512G"

    [[partitions]]
    name = "normal"
    nodes = ["cpu"]
    max_time = "2-00:00:00"

    [[partitions]]
    name = "gpu"
    nodes = ["gpu"]
    allocation = "shared"
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

import msgspec
import numpy as np
from msgspec import Meta

from sitesim.engine.machine import Machine
from sitesim.platform.values import (
    MAX_NODES,
    MAX_SHARE,
    MAX_SWF,
    MAX_TIME_TEXT,
    MAX_WHOLE,
    PlatformError,
    format_duration,
    node_set,
    parse_memory,
    time_value,
)
from sitesim.schema import Table, problem, read

if TYPE_CHECKING:
    from sitesim.engine.event_queue import SiteEnvironment
    from sitesim.engine.job import Job
    from sitesim.platform.downtime import Clock
    from sitesim.platform.machine import NodeMachine

Allocation = Literal["exclusive", "shared"]
Placement = Literal["first_fit", "best_fit"]
ALLOCATIONS: tuple[Allocation, ...] = ("exclusive", "shared")
PLACEMENTS: tuple[Placement, ...] = ("first_fit", "best_fit")


@dataclass(frozen=True, slots=True)
class NodeType:
    """``count`` identical nodes: ``cores`` cores, ``gpus`` GPUs and ``memory`` MB each, and
    the ``features`` a job's constraint may ask for (slurm.conf's ``Feature=``)."""

    name: str
    count: int
    cores: int
    gpus: int = 0
    memory: int = 0
    features: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.name, "count": self.count, "cores": self.cores}
        if self.gpus:
            data["gpus"] = self.gpus
        if self.memory:
            data["memory"] = f"{self.memory}M"
        if self.features:
            data["features"] = list(self.features)
        return data


@dataclass(frozen=True, slots=True)
class Partition:
    """A named set of nodes jobs are submitted to.

    Attributes:
        name: what jobs and the summaries call it.
        nodes: the nodes it may use, ascending indices.
        max_time: the longest time limit a job may ask for here (seconds; inf: unlimited).
        allocation: ``exclusive`` (a job gets whole nodes) or ``shared`` (packed onto nodes).
        swf: SWF partition numbers (field 16) whose jobs are submitted here.
        spec: the nodes as the file wrote them (node types and ranges), for saving.
        share: the share of the simulated users' jobs submitted here (site-level runs;
            :func:`sitesim.platform.boundary.attach` draws each job's partition by the shares).
    """

    name: str
    nodes: tuple[int, ...]
    max_time: float = math.inf
    allocation: Allocation = "exclusive"
    swf: tuple[int, ...] = ()
    spec: tuple[str, ...] = ()
    share: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "nodes": list(self.spec)}
        if self.share:
            data["share"] = self.share
        if math.isfinite(self.max_time):
            data["max_time"] = format_duration(self.max_time)
        if self.allocation != "exclusive":
            data["allocation"] = self.allocation
        if self.swf:
            data["swf"] = list(self.swf)
        return data


@dataclass(frozen=True)
class Platform:
    """A site's nodes and partitions (see the module's docstring).

    Attributes:
        node_types: the node types, nodes numbered in this order.
        partitions: the partitions; ``default`` indexes the default one.
        placement: ``first_fit`` or ``best_fit``.
        downtime: maintenance windows and failures (:mod:`sitesim.platform.downtime`; its own
        table). name: what the platform is called (the file's stem; "N processors" for the
        shorthand).
    """

    node_types: tuple[NodeType, ...]
    partitions: tuple[Partition, ...]
    default: int = 0
    placement: Placement = "first_fit"
    downtime: Mapping[str, Any] = field(default_factory=dict)
    name: str = ""
    #: Per-node capacities (cores, GPUs, memory MB) and node type index, as arrays.
    cores: np.ndarray = field(init=False, repr=False, compare=False)
    gpus: np.ndarray = field(init=False, repr=False, compare=False)
    memory: np.ndarray = field(init=False, repr=False, compare=False)
    node_type: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        types = self.node_types
        counts = [t.count for t in types]
        set_ = object.__setattr__
        set_(self, "node_type", np.repeat(np.arange(len(types)), counts))
        for name in ("cores", "gpus", "memory"):
            values = np.repeat(np.array([getattr(t, name) for t in types], np.int64), counts)
            values.setflags(write=False)
            set_(self, name, values)

    # -- shorthand and sizes -------------------------------------------------------------
    @classmethod
    def processors(cls, procs: int) -> Platform:
        """``--procs N``: N one-core nodes in one exclusive partition named ``all``."""
        if not (isinstance(procs, int) and 1 <= procs <= MAX_NODES):
            raise PlatformError(f"procs must be a whole number in [1, {MAX_NODES}], got {procs!r}")
        return cls(
            (NodeType("proc", procs, 1),),
            (Partition("all", tuple(range(procs)), spec=("proc",)),),
            name=f"{procs} processors",
        )

    @property
    def is_processors(self) -> bool:
        """True for N one-core nodes, one exclusive partition, no downtime: the plain machine
        (the processor machine gives the same schedules, faster)."""
        return (
            len(self.node_types) == 1
            and self.node_types[0].cores == 1
            and not self.node_types[0].gpus
            and not self.node_types[0].memory
            and len(self.partitions) == 1
            and self.partitions[0].allocation == "exclusive"
            and len(self.partitions[0].nodes) == self.nodes
            and not self.downtime
        )

    def build_machine(
        self,
        env: SiteEnvironment,
        *,
        seed: int,
        reservations: str,
        on_end: Callable[[Job], None],
        on_requeue: Callable[[Job], None],
        on_change: Callable[[], None],
    ) -> Machine | NodeMachine:
        """The machine of a site on this platform (:class:`~sitesim.engine.site.Site` builds
        it): N processors when :attr:`is_processors`, else its nodes
        (:class:`~sitesim.platform.machine.NodeMachine`; the arguments are its own)."""
        if self.is_processors:
            return Machine(env, self.nodes, on_end)
        from sitesim.platform.machine import NodeMachine

        return NodeMachine(
            env, self, seed=seed, reservations=reservations, on_end=on_end,
            on_requeue=on_requeue, on_change=on_change,
        )  # fmt: skip

    @property
    def nodes(self) -> int:
        return sum(t.count for t in self.node_types)

    @property
    def total_cores(self) -> int:
        return int(self.cores.sum())

    @property
    def total_gpus(self) -> int:
        return int(self.gpus.sum())

    @property
    def total_memory(self) -> int:
        return int(self.memory.sum())

    @property
    def features(self) -> tuple[str, ...]:
        """Every feature of a node type, in the order first met."""
        return tuple(dict.fromkeys(f for t in self.node_types for f in t.features))

    def with_feature(self, feature: str) -> np.ndarray:
        """A mask over the nodes: True on those that have ``feature``."""
        have = np.array([feature in t.features for t in self.node_types], dtype=bool)
        return np.repeat(have, [t.count for t in self.node_types])

    def partition_index(self, name: str) -> int:
        """The index of the partition called ``name`` (KeyError if none)."""
        for k, part in enumerate(self.partitions):
            if part.name == name:
                return k
        raise KeyError(name)

    def swf_partitions(self) -> dict[int, int]:
        """SWF partition number -> partition index: the numbers of the partitions' ``swf``
        lists, and for each partition without a list its own number (:meth:`swf_number`)."""
        return {self.swf_number(k): k for k in range(len(self.partitions))} | {
            number: k for k, part in enumerate(self.partitions) for number in part.swf
        }

    def swf_number(self, k: int) -> int:
        """The SWF partition number of partition ``k`` (what a run on this platform writes in
        field 16): the first of its ``swf`` list; for a partition without one, the smallest
        number >= 1 that no list uses, in the partitions' order (so a replay maps it back)."""
        swf = self.partitions[k].swf
        if swf:
            return swf[0]
        used = {number for part in self.partitions for number in part.swf}
        free = (n for n in range(1, len(used) + len(self.partitions) + 1) if n not in used)
        listless = [j for j, part in enumerate(self.partitions) if not part.swf]
        return dict(zip(listless, free, strict=False))[k]

    # -- files -----------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | Path) -> Platform:
        """Read a platform file (TOML).

        Raises:
            PlatformError: the file cannot be read, or a key is unknown or out of range (the
                message names the file and the key).
        """
        path = Path(path)
        return platform_from_bytes(read_bytes(str(path)), str(path), path.parent)

    @classmethod
    def loads(cls, text: str, where: str, base: Path | None = None) -> Platform:
        """A platform from the text of a TOML file (``where`` names it in errors)."""
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as err:
            raise PlatformError(f"{where}: not a TOML file: {err}") from None
        if base is not None or "/" in where or where.endswith(".toml"):
            data.setdefault("name", Path(where).stem)
        return cls.from_dict(data, where=where, base=base)

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Any], where: str = "platform", base: Path | None = None
    ) -> Platform:
        """Build and validate a platform from its TOML tables (or :meth:`to_dict`'s output).
        ``base`` is the folder relative file names (a failure file) are read from.

        Raises:
            PlatformError: ``where: key: problem`` (the schema :class:`_PlatformTable`, then
                the rules between keys).
        """
        table = read(data, _PlatformTable, where, PlatformError)
        types = _node_types(table.nodes, where)
        total = sum(t.count for t in types)
        parts = _partitions(table.partitions, types, where)
        names = [p.name for p in parts]
        wanted = table.default_partition
        if wanted is not None and wanted not in names:
            raise _error(
                where,
                "default_partition",
                f"{wanted!r} is not a partition; one of {', '.join(names)}",
            )
        downtime = _downtime(table.downtime, base)
        if downtime:
            from sitesim.platform.downtime import Downtime

            Downtime.check(downtime, {p.name: p.nodes for p in parts}, total, where, None)
        default = 0 if wanted is None else names.index(wanted)
        return cls(tuple(types), tuple(parts), default, table.placement, downtime, table.name)

    def on_clock(self, clock: Clock, where: str | None = None) -> Platform:
        """This platform with its maintenance windows placed on a run's ``clock``: those dated
        by the calendar or repeated on weekdays or weekends written as windows from time 0
        (:func:`~sitesim.platform.downtime.placed_table`); itself when it has none.

        Raises:
            PlatformError: a dated window and a clock of no date (naming ``where``, default the
                platform's name, and the window).
        """
        if not self.downtime.get("maintenance"):
            return self
        from sitesim.platform.downtime import placed_table

        names = {p.name: p.nodes for p in self.partitions}
        table = placed_table(self.downtime, names, self.nodes, where or self.name, clock)
        return self if table is self.downtime else replace(self, downtime=table)

    def to_dict(self) -> dict[str, Any]:
        """The platform as TOML tables (:meth:`from_dict` rebuilds it)."""
        data: dict[str, Any] = {"name": self.name, "placement": self.placement}
        data["default_partition"] = self.partitions[self.default].name
        data["nodes"] = [t.to_dict() for t in self.node_types]
        data["partitions"] = [p.to_dict() for p in self.partitions]
        if self.downtime:
            data["downtime"] = dict(self.downtime)
        return data

    def describe(self) -> str:
        """One line: nodes, cores, GPUs and partitions."""
        gpus = f", {self.total_gpus:,} GPUs" if self.total_gpus else ""
        return (
            f"{self.name or 'platform'}: {self.nodes:,} nodes, {self.total_cores:,} cores{gpus}, "
            f"{len(self.partitions)} partitions"
        )


# -- the file's schema ---------------------------------------------------------------------------
_Name = Annotated[str, Meta(min_length=1, description="be a non-empty name")]
_MAX_TIME = f"a time limit > 0 and at most {MAX_TIME_TEXT}, or UNLIMITED"


class _NodeRow(Table):
    """A ``[[nodes]]`` table."""

    type: _Name
    count: Annotated[int, Meta(ge=1, le=MAX_WHOLE)]
    cores: Annotated[int, Meta(ge=1, le=MAX_WHOLE)]
    gpus: Annotated[int, Meta(ge=0, le=MAX_WHOLE)] = 0
    memory: Annotated[
        int | str, Meta(description="be a memory size (MB as a number, or text such as '256G')")
    ] = 0
    features: Annotated[
        list[Annotated[str, Meta(pattern=r"^[A-Za-z0-9_.:\-]+$")]],
        Meta(description="list feature names (letters, digits, _ . : -)"),
    ] = msgspec.field(default_factory=list)


class _PartitionRow(Table):
    """A ``[[partitions]]`` table."""

    name: _Name
    nodes: Annotated[
        str | list[str], Meta(description="list node types or index ranges such as '0-3,17'")
    ]
    max_time: Annotated[int | str, Meta(description=f"be {_MAX_TIME}")] = "UNLIMITED"
    allocation: Allocation = "exclusive"
    swf: Annotated[
        list[Annotated[int, Meta(ge=0, le=MAX_SWF)]],
        Meta(description=f"list SWF partition numbers in [0, {MAX_SWF}]"),
    ] = msgspec.field(default_factory=list)
    share: Annotated[
        float, Meta(ge=0, le=MAX_SHARE, description=f"be a number in [0, {MAX_SHARE:g}]")
    ] = 0.0


class _PlatformTable(Table):
    """A platform file (docs/reference/platform.md)."""

    nodes: Annotated[
        list[_NodeRow], Meta(min_length=1, description="be one or more [[nodes]] tables")
    ]
    partitions: Annotated[
        list[_PartitionRow], Meta(min_length=1, description="be one or more [[partitions]] tables")
    ]
    name: str = ""
    placement: Placement = "first_fit"
    default_partition: str | None = None
    downtime: Annotated[dict[str, Any], Meta(description="be a table")] = msgspec.field(
        default_factory=dict
    )


_V = TypeVar("_V")


def _value(parse: Callable[[Any], _V], value: Any, where: str, key: str) -> _V:
    """``parse(value)``; its ValueError as the platform's error at ``key``."""
    try:
        return parse(value)
    except ValueError as err:
        raise _error(where, key, str(err)) from None


def _error(where: str, key: str, says: str) -> PlatformError:
    return problem(where, key, says, PlatformError)


def _node_types(rows: list[_NodeRow], where: str) -> list[NodeType]:
    """The node types of the ``[[nodes]]`` tables, each named once, at most
    :data:`MAX_NODES` nodes in all."""
    types: list[NodeType] = []
    for k, row in enumerate(rows):
        if any(t.name == row.type for t in types):
            raise _error(where, f"nodes[{k}].type", f"node type {row.type!r} is defined twice")
        memory = _value(parse_memory, row.memory, where, f"nodes[{k}].memory")
        features = tuple(dict.fromkeys(row.features))
        types.append(NodeType(row.type, row.count, row.cores, row.gpus, memory, features))
    total = sum(t.count for t in types)
    if total > MAX_NODES:
        raise _error(where, "nodes", f"{total:,} nodes in all; at most {MAX_NODES:,}")
    return types


def _partitions(rows: list[_PartitionRow], types: list[NodeType], where: str) -> list[Partition]:
    """The partitions of the ``[[partitions]]`` tables: each named once, on node types and
    index ranges of ``types``' nodes, no SWF partition number mapped twice."""
    total = sum(t.count for t in types)
    starts = np.cumsum([0] + [t.count for t in types]).tolist()
    by_type = {t.name: range(starts[k], starts[k + 1]) for k, t in enumerate(types)}
    parts: list[Partition] = []
    seen_swf: dict[int, str] = {}
    for k, part in enumerate(rows):
        key = f"partitions[{k}]"
        if any(p.name == part.name for p in parts):
            raise _error(where, f"{key}.name", f"partition {part.name!r} is defined twice")
        spec = [part.nodes] if isinstance(part.nodes, str) else part.nodes
        if not spec or not all(spec):
            raise _error(
                where,
                f"{key}.nodes",
                f"must list node types ({', '.join(by_type)}) or index ranges such as "
                f"'0-3,17', got {part.nodes!r}",
            )
        nodes = _value(lambda s: node_set(s, total, by_type), spec, where, f"{key}.nodes")
        max_time = _value(_max_time, part.max_time, where, f"{key}.max_time")
        for number in part.swf:
            if number in seen_swf:
                mapped = f"SWF partition {number} is mapped to {seen_swf[number]!r} too"
                raise _error(where, f"{key}.swf", mapped)
            seen_swf[number] = part.name
        parts.append(
            Partition(
                part.name, tuple(sorted(nodes)), max_time, part.allocation, tuple(part.swf),
                tuple(spec), part.share,
            )
        )  # fmt: skip
    return parts


def _max_time(value: int | str) -> float:
    return time_value(value, zero=False, unlimited=True, allowed=_MAX_TIME, after_syntax=False)


def _downtime(downtime: dict[str, Any], base: Path | None) -> dict[str, Any]:
    """The ``[downtime]`` table with a relative failure file made relative to ``base`` (the
    platform file's folder)."""
    failures = downtime.get("failures")
    if (
        base is None
        or not isinstance(failures, Mapping)
        or not isinstance(failures.get("file"), str)
    ):
        return downtime
    file = Path(failures["file"])
    if file.is_absolute():
        return downtime
    return {**downtime, "failures": {**failures, "file": str(base / file)}}


def read_bytes(name: str) -> bytes:
    """The bytes of platform file ``name``.

    Raises:
        PlatformError: the file cannot be read.
    """
    try:
        return Path(name).read_bytes()
    except OSError as err:
        raise PlatformError(
            f"{name}: cannot read the platform file: {err.strerror or err}"
        ) from None


def platform_text(raw: bytes, where: str) -> str:
    """The text of a platform file's bytes.

    Raises:
        PlatformError: not UTF-8 text.
    """
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise PlatformError(f"{where}: not a text file (a platform is TOML)") from None


def platform_from_bytes(raw: bytes, where: str, base: Path | None) -> Platform:
    """A platform from the bytes of a TOML file (``where`` names it in errors; ``base``: the
    folder its relative paths start from)."""
    return Platform.loads(platform_text(raw, where), where, base)
