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
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from sitesim.engine.machine import Machine
from sitesim.platform.values import (
    MAX_NODES,
    MAX_SHARE,
    MAX_SWF,
    PlatformError,
    _Checker,
    _resolve_nodes,
    format_duration,
)

if TYPE_CHECKING:
    from sitesim.engine.event_queue import SiteEnvironment
    from sitesim.engine.job import Job
    from sitesim.platform.machine import NodeMachine

Allocation = Literal["exclusive", "shared"]
Placement = Literal["first_fit", "best_fit"]
ALLOCATIONS: tuple[Allocation, ...] = ("exclusive", "shared")
PLACEMENTS: tuple[Placement, ...] = ("first_fit", "best_fit")


@dataclass(frozen=True, slots=True)
class NodeType:
    """``count`` identical nodes: ``cores`` cores, ``gpus`` GPUs and ``memory`` MB each."""

    name: str
    count: int
    cores: int
    gpus: int = 0
    memory: int = 0

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.name, "count": self.count, "cores": self.cores}
        if self.gpus:
            data["gpus"] = self.gpus
        if self.memory:
            data["memory"] = f"{self.memory}M"
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
        ``base`` is the folder relative file names (a failure file) are read from."""
        check = _Checker(where)
        check.keys(data, "", ("name", "placement", "default_partition", "nodes", "partitions",
                              "downtime"))  # fmt: skip
        placement = check.choice(data, "placement", PLACEMENTS, "first_fit")
        node_rows = check.tables(data, "nodes")
        types: list[NodeType] = []
        for k, row in enumerate(node_rows):
            key = f"nodes[{k}]"
            check.keys(row, key, ("type", "count", "cores", "gpus", "memory"))
            name = check.name(row, f"{key}.type")
            if any(t.name == name for t in types):
                raise check.error(f"{key}.type", f"node type {name!r} is defined twice")
            count = check.whole(row, key, "count", 1)
            types.append(
                NodeType(
                    name,
                    count,
                    check.whole(row, key, "cores", 1),
                    check.whole(row, key, "gpus", 0, 0),
                    check.memory(row, key),
                )
            )
        total = sum(t.count for t in types)
        if total > MAX_NODES:
            raise check.error("nodes", f"{total:,} nodes in all; at most {MAX_NODES:,}")
        starts = np.cumsum([0] + [t.count for t in types]).tolist()
        by_type = {t.name: range(starts[k], starts[k + 1]) for k, t in enumerate(types)}
        parts: list[Partition] = []
        seen_swf: dict[int, str] = {}
        for k, row in enumerate(check.tables(data, "partitions")):
            key = f"partitions[{k}]"
            check.keys(row, key, ("name", "nodes", "max_time", "allocation", "swf", "share"))
            name = check.name(row, f"{key}.name")
            if any(p.name == name for p in parts):
                raise check.error(f"{key}.name", f"partition {name!r} is defined twice")
            spec = row.get("nodes")
            if isinstance(spec, str):
                spec = [spec]
            if not isinstance(spec, list) or not spec or not all(isinstance(s, str) for s in spec):
                raise check.error(
                    f"{key}.nodes",
                    f"must list node types ({', '.join(by_type)}) or index ranges such as "
                    f"'0-3,17', got {spec!r}",
                )
            nodes = _resolve_nodes(spec, by_type, total, check, f"{key}.nodes")
            max_time = check.duration(row, f"{key}.max_time")
            allocation = check.choice(row, "allocation", ALLOCATIONS, "exclusive", key)
            swf = row.get("swf", [])
            if not isinstance(swf, list) or not all(
                isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= MAX_SWF for n in swf
            ):
                raise check.error(
                    f"{key}.swf", f"must list SWF partition numbers in [0, {MAX_SWF}], got {swf!r}"
                )
            for number in swf:
                if number in seen_swf:
                    raise check.error(
                        f"{key}.swf",
                        f"SWF partition {number} is mapped to {seen_swf[number]!r} too",
                    )
                seen_swf[number] = name
            share = row.get("share", 0.0)
            if (
                isinstance(share, bool)
                or not isinstance(share, int | float)
                or not 0 <= share <= MAX_SHARE
            ):
                raise check.error(
                    f"{key}.share", f"must be a number in [0, {MAX_SHARE:g}], got {share!r}"
                )
            part = Partition(name, nodes, max_time, allocation, tuple(swf), tuple(spec), share)
            parts.append(part)
        default = 0
        if "default_partition" in data:
            wanted = data["default_partition"]
            names = [p.name for p in parts]
            if wanted not in names:
                raise check.error(
                    "default_partition", f"{wanted!r} is not a partition; one of {', '.join(names)}"
                )
            default = names.index(wanted)
        downtime = data.get("downtime", {})
        if not isinstance(downtime, Mapping):
            raise check.error("downtime", f"must be a table, got {downtime!r}")
        failures = downtime.get("failures")
        if (
            base is not None
            and isinstance(failures, Mapping)
            and isinstance(failures.get("file"), str)
        ):
            file = Path(failures["file"])  # (relative to the platform file's folder)
            if not file.is_absolute():
                failures = {**failures, "file": str(base / file)}
                downtime = {**downtime, "failures": failures}
        if downtime:
            from sitesim.platform.downtime import Downtime

            Downtime.from_dict(downtime, {p.name: p.nodes for p in parts}, total, check.where, None)
        name = data.get("name", "")
        if not isinstance(name, str):
            raise check.error("name", f"must be a string, got {name!r}")
        return cls(tuple(types), tuple(parts), default, placement, dict(downtime), name)

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
