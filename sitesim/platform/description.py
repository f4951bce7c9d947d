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

import hashlib
import math
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from sitesim.engine.machine import Machine
from sitesim.errors import ConfigError

if TYPE_CHECKING:
    from sitesim.engine.event_queue import SiteEnvironment
    from sitesim.engine.job import Job
    from sitesim.platform.machine import NodeMachine

Allocation = Literal["exclusive", "shared"]
Placement = Literal["first_fit", "best_fit"]
ALLOCATIONS: tuple[Allocation, ...] = ("exclusive", "shared")
PLACEMENTS: tuple[Placement, ...] = ("first_fit", "best_fit")
#: More nodes than this is refused before anything runs (ten times today's largest machines).
MAX_NODES = 1_000_000
#: More memory a node than this (MB; 1024T) is refused (a hundred times today's largest nodes).
MAX_MEMORY = 1024**3
#: Longer times than this (seconds; 100 years) are refused: a time limit, a maintenance window
#: or a failure time beyond it is a slip (``UNLIMITED`` says "no limit" where it is allowed).
MAX_TIME = 36_500 * 86_400.0
_MAX_TIME_TEXT = "36500-00:00:00 (100 years)"
#: The largest share of a partition (shares are relative weights).
MAX_SHARE = 1e18
#: The largest SWF partition number (field 16 holds at most 18 digits).
MAX_SWF = 10**18 - 1


class PlatformError(ConfigError):
    """A bad platform description: the message names the file, the key and the allowed values."""


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
        return read_platform(str(path))[0]

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


#: The platforms shipped with sitesim (``--platform curie``), by name.
BUILTIN_PLATFORMS = ("curie",)
_CACHE: dict[tuple[str, float, int], tuple[Platform, str]] = {}


def read_platform(name: str) -> tuple[Platform, str]:
    """The platform in file ``name`` (or a shipped one, :data:`BUILTIN_PLATFORMS`) and the
    sha256 of the file's bytes: a TOML platform, or a ``slurm.conf`` (a name ending in
    ``.conf``: :mod:`sitesim.slurm.conf`). Files are read once while they do not change.

    Raises:
        PlatformError: the file cannot be read or is not a valid platform.
    """
    if name in BUILTIN_PLATFORMS:
        from importlib import resources

        raw = resources.files("sitesim").joinpath(f"data/platforms/{name}.toml").read_bytes()
        where, base = f"sitesim {name} platform", None
        key = (name, 0.0, 0)
    else:
        path = Path(name)
        try:
            stat = path.stat()
            key = (str(path.resolve()), stat.st_mtime, stat.st_size)
            if key in _CACHE:
                return _CACHE[key]
            raw = path.read_bytes()
        except OSError as err:
            raise PlatformError(
                f"{name}: cannot read the platform file: {err.strerror or err}"
            ) from None
        where, base = name, path.parent
    if key in _CACHE:
        return _CACHE[key]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise PlatformError(f"{where}: not a text file (a platform is TOML)") from None
    if name.endswith(".conf"):  # a site's slurm.conf: its NodeName and PartitionName lines
        from sitesim.slurm.conf import read_slurm_conf

        found_conf = read_slurm_conf(name)
        if found_conf.platform is None:
            raise PlatformError(f"{name}: no NodeName and PartitionName lines: no platform")
        platform = found_conf.platform
    else:
        platform = Platform.loads(text, where, base)
    if name in BUILTIN_PLATFORMS:
        platform = replace(platform, name=name)
    _CACHE[key] = found = (platform, hashlib.sha256(raw).hexdigest())
    return found


# -- node ranges -------------------------------------------------------------------------------
def format_nodes(nodes: Iterable[int] | np.ndarray) -> str:
    """Node indices as compact ranges: ``[0, 1, 2, 3, 17]`` -> ``'0-3,17'``."""
    if isinstance(nodes, np.ndarray) and len(nodes):  # (a job's nodes: ascending, often one run)
        first, last = int(nodes[0]), int(nodes[-1])
        if last - first + 1 == len(nodes):
            return str(first) if first == last else f"{first}-{last}"
        nodes = nodes.tolist()
    parts: list[str] = []
    run_start = prev = None
    for node in sorted(nodes):
        if prev is not None and node == prev + 1:
            prev = node
            continue
        if run_start is not None:
            parts.append(str(run_start) if run_start == prev else f"{run_start}-{prev}")
        run_start = prev = node
    if run_start is not None:
        parts.append(str(run_start) if run_start == prev else f"{run_start}-{prev}")
    return ",".join(parts)


_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


def parse_nodes(text: str) -> list[int]:
    """``'0-3,17'`` -> ``[0, 1, 2, 3, 17]`` (ValueError naming the bad part)."""
    return [node for low, high in node_ranges(text) for node in range(low, high + 1)]


def node_ranges(text: str) -> list[tuple[int, int]]:
    """``'0-3,17'`` -> ``[(0, 3), (17, 17)]``: the ranges, not expanded (ValueError naming the
    bad part)."""
    ranges: list[tuple[int, int]] = []
    for part in text.split(","):
        match = _RANGE.match(part.strip())
        if not match:
            raise ValueError(f"{part!r} is not a node index or a range such as '0-3'")
        low = int(match[1])
        high = int(match[2]) if match[2] is not None else low
        if high < low:
            raise ValueError(f"the range {part!r} is reversed")
        ranges.append((low, high))
    return ranges


def _resolve_nodes(
    spec: Sequence[str], by_type: Mapping[str, range], total: int, check: _Checker, key: str
) -> tuple[int, ...]:
    nodes = check.node_set(spec, total, key, by_type)
    if not nodes:
        raise check.error(key, "names no node")
    return tuple(sorted(nodes))


# -- durations and sizes -----------------------------------------------------------------------
_SLURM_TIME = re.compile(r"^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$")


def parse_duration(text: str) -> float:
    """A time limit in Slurm's syntax, in seconds: ``minutes``, ``minutes:seconds``,
    ``hours:minutes:seconds``, ``days-hours``, ``days-hours:minutes``,
    ``days-hours:minutes:seconds``, or ``UNLIMITED`` / ``INFINITE`` (inf).

    Raises:
        ValueError: any other text.
    """
    text = text.strip()
    if text.upper() in ("UNLIMITED", "INFINITE"):
        return math.inf
    match = _SLURM_TIME.match(text)
    if not match:
        raise ValueError(
            f"{text!r} is not a time in Slurm's syntax (minutes, [days-]hours:minutes:seconds, "
            "days-hours, or UNLIMITED)"
        )
    if len(text) > 40:  # (a time of more digits than any float holds exactly)
        raise ValueError(f"{text!r} is not a time: too many digits")
    days, a, b, c = (int(g) if g is not None else None for g in match.groups())
    assert a is not None
    if days is not None:  # days-hours[:minutes[:seconds]]
        return float(((days * 24 + a) * 60 + (b or 0)) * 60 + (c or 0))
    if c is not None:  # hours:minutes:seconds
        return float((a * 60 + (b or 0)) * 60 + c)
    if b is not None:  # minutes:seconds
        return float(a * 60 + b)
    return float(a * 60)  # minutes


def minutes(value: int) -> float:
    """A whole number of minutes in seconds (one beyond any float is simply very large)."""
    return float(min(value, 10**15)) * 60.0


def format_duration(seconds: float) -> str:
    """Seconds in Slurm's ``days-hours:minutes:seconds`` (``UNLIMITED`` for inf)."""
    if not math.isfinite(seconds):
        return "UNLIMITED"
    whole = round(seconds)
    days, rest = divmod(whole, 86_400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{days}-{hours:02d}:{minutes:02d}:{secs:02d}"


_MEMORY = re.compile(r"^(\d+(?:\.\d+)?)\s*([MGT]?)B?$", re.IGNORECASE)
_MB = {"": 1, "M": 1, "G": 1024, "T": 1024 * 1024}


def parse_memory(value: Any) -> int:
    """Memory in MB (Slurm's unit): an integer (MB) or text such as ``'256G'``, ``'512M'``; at
    most :data:`MAX_MEMORY` (1024T)."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"{value} is negative")
        megabytes = float(value) if value <= MAX_MEMORY else math.inf
    elif isinstance(value, str) and (match := _MEMORY.match(value.strip())):
        megabytes = float(match[1]) * _MB[match[2].upper()]
    else:
        raise ValueError(f"{value!r} is not a memory size (MB as a number, or text such as '256G')")
    if not megabytes <= MAX_MEMORY:
        raise ValueError(f"{value!r} is absurd: a node has at most {MAX_MEMORY // 1024**2}T")
    return int(megabytes)


def _nodes_text(nodes: Iterable[int]) -> str:
    """``'node 4'`` or ``'nodes 4-7'``."""
    found = sorted(nodes)
    return f"node{'s' if len(found) > 1 else ''} {format_nodes(found)}"


class _Checker:
    """Validation of one platform description; every error names ``where`` and the key."""

    def __init__(self, where: str) -> None:
        self.where = where

    def error(self, key: str, problem: str) -> PlatformError:
        return PlatformError(f"{self.where}: {key}: {problem}")

    def keys(self, table: Mapping[str, Any], key: str, allowed: Sequence[str]) -> None:
        for name in table:
            if name not in allowed:
                where = f"{key}.{name}" if key else name
                raise self.error(where, f"unknown key; the keys here are {', '.join(allowed)}")

    def tables(self, data: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
        rows = data.get(key)
        if not isinstance(rows, list) or not rows or not all(isinstance(r, Mapping) for r in rows):
            raise self.error(key, f"must be one or more [[{key}]] tables")
        return rows

    def name(self, table: Mapping[str, Any], key: str) -> str:
        value = table.get(key.rsplit(".", 1)[1])
        if not isinstance(value, str) or not value.strip():
            raise self.error(key, f"must be a non-empty name, got {value!r}")
        return value

    def whole(
        self, table: Mapping[str, Any], key: str, name: str, low: int, default: int | None = None
    ) -> int:
        value = table.get(name, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise self.error(f"{key}.{name}", f"must be a whole number >= {low}, got {value!r}")
        if value > MAX_NODES * 1024:
            raise self.error(f"{key}.{name}", f"{value:,} is absurd")
        return value

    def node_set(
        self,
        items: Sequence[str | int],
        count: int,
        key: str,
        by_type: Mapping[str, range] | None = None,
    ) -> set[int]:
        """The nodes of node type names (``by_type``), indices and ranges such as ``'0-3,17'``,
        each in 0..count-1 and named once: a range beyond the last node, or one that names a
        node an earlier item (or part) named, is an error."""
        nodes: set[int] = set()
        for item in items:
            if by_type is not None and isinstance(item, str) and item in by_type:
                ranges = [(by_type[item].start, by_type[item].stop - 1)]
            else:
                try:
                    if isinstance(item, bool) or not isinstance(item, str | int):
                        raise ValueError(f"{item!r} is not a node index or a range such as '0-3'")
                    ranges = [(item, item)] if isinstance(item, int) else node_ranges(item)
                except ValueError as err:
                    if by_type is None:
                        raise self.error(key, str(err)) from None
                    raise self.error(
                        key,
                        f"{item!r} is neither a node type ({', '.join(by_type)}) nor a range: "
                        f"{err}",
                    ) from None
            for low, high in ranges:
                if low < 0 or high >= count:
                    raise self.error(key, f"{item!r} names node {high}; nodes are 0-{count - 1}")
                span = range(low, high + 1)
                again = nodes.intersection(span)
                if again:
                    raise self.error(
                        key,
                        f"{item!r} names {_nodes_text(again)} again; list each node once "
                        "(ranges must not overlap)",
                    )
                nodes.update(span)
        return nodes

    def memory(self, table: Mapping[str, Any], key: str) -> int:
        try:
            return parse_memory(table.get("memory", 0))
        except ValueError as err:
            raise self.error(f"{key}.memory", str(err)) from None

    def duration(self, table: Mapping[str, Any], key: str) -> float:
        value = table.get(key.rsplit(".", 1)[1], "UNLIMITED")
        allowed = f"a time limit > 0 and at most {_MAX_TIME_TEXT}, or UNLIMITED"
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            seconds = minutes(value)  # (a number is minutes, as in slurm.conf)
        else:
            try:
                seconds = parse_duration(value) if isinstance(value, str) else -1.0
            except ValueError as err:
                raise self.error(key, str(err)) from None
        if not seconds > 0:
            raise self.error(key, f"must be {allowed}, got {value!r}")
        self.time_bound(key, value, seconds, allowed)
        return seconds

    def time_bound(self, key: str, value: Any, seconds: float, allowed: str) -> None:
        """Refuse a finite time longer than :data:`MAX_TIME` (``allowed`` says what is)."""
        if MAX_TIME < seconds < math.inf:
            shown = f"{value} minutes" if isinstance(value, int) else repr(value)
            raise self.error(key, f"{shown} is absurd; must be {allowed}")

    def choice(
        self,
        table: Mapping[str, Any],
        name: str,
        allowed: Sequence[Any],
        default: Any,
        key: str = "",
    ) -> Any:
        value = table.get(name, default)
        if value not in allowed:
            where = f"{key}.{name}" if key else name
            raise self.error(where, f"{value!r} is not one of {', '.join(allowed)}")
        return value
