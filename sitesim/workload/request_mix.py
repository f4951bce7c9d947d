"""What a site's jobs ask for beyond their cores, as a distribution the simulated users draw
from: the request mix of a workload profile (docs/reference/profiles.md).

A site's log (``sacct``) says, for every job, its partition, GPUs per node, memory per node and
the node features it needs (:class:`~sitesim.workload.requests.JobRequests`). The mix is their
empirical joint distribution: each distinct combination is a **request class**, with its share
of the jobs overall and within each power-of-two size class (the size classes of
:func:`~sitesim.workload.size_classes.size_class`), each source trace weighing the same. A job of
size ``s`` draws its class from the table of ``s``'s size class, or from the overall table when
no job of the sources had a size in that class.

A job's node count is not kept: a drawn job takes as many nodes as its cores need.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from sitesim.errors import ConfigError
from sitesim.workload.distributions import Discrete, checked_shares
from sitesim.workload.requests import JobRequests
from sitesim.workload.size_classes import size_class, size_class_key


class RequestClass(NamedTuple):
    """One combination of requests (Slurm's ``--partition``, ``--gpus-per-node``, ``--mem``,
    ``--constraint``).

    Attributes:
        partition: the partition's name (empty: none named).
        gpus_per_node: GPUs on each node.
        memory_per_node_mb: memory on each node, MB (0: none asked).
        constraint: the node features, as Slurm writes them (empty: none).
    """

    partition: str = ""
    gpus_per_node: int = 0
    memory_per_node_mb: int = 0
    constraint: str = ""

    def asks_more(self) -> bool:
        """True if it asks for more than cores in the default partition."""
        return self != RequestClass()


@dataclass(frozen=True)
class RequestMix:
    """The request classes of a workload and their shares.

    Attributes:
        classes: the distinct request classes, in order of first appearance.
        overall: the share of each class among all jobs.
        by_size: per power-of-two size class, the share of each class among its jobs.
    """

    classes: tuple[RequestClass, ...]
    overall: np.ndarray
    by_size: dict[int, np.ndarray]

    def table(self, size: int) -> Discrete:
        """The distribution of class indices for a job of ``size`` cores."""
        shares = self.by_size.get(int(size_class(size)), self.overall)
        return Discrete(np.arange(len(self.classes)), shares)

    def share(self, pick: Any) -> float:
        """The overall share of the jobs whose class satisfies ``pick(RequestClass)``."""
        chosen = np.array([bool(pick(c)) for c in self.classes])
        return float(self.overall[chosen].sum())

    @classmethod
    def fit(cls, sources: Sequence[tuple[np.ndarray, JobRequests]]) -> RequestMix:
        """The mix of jobs of several traces, each trace with equal weight.

        Args:
            sources: per trace, each job's size (cores; jobs of size <= 0 are left out) and
                its requests.
        """
        index: dict[RequestClass, int] = {}
        codes, weights, sizes = [], [], []
        for size, requests in sources:
            keep = np.flatnonzero(np.asarray(size) > 0)
            if not len(keep):
                continue
            rows = zip(
                requests.partition_name[keep].tolist(), requests.gpus_per_node[keep].tolist(),
                requests.memory_per_node_mb[keep].tolist(), requests.constraint[keep].tolist(),
                strict=True,
            )  # fmt: skip
            found = [
                index.setdefault(RequestClass(str(p), int(g), int(m), str(c)), len(index))
                for p, g, m, c in rows
            ]
            codes.append(np.array(found, dtype=np.int64))
            weights.append(np.full(len(keep), 1.0 / len(keep)))
            sizes.append(np.asarray(size)[keep])
        if not codes:
            raise ConfigError("the traces give no job to fit a request mix to")
        code, weight = np.concatenate(codes), np.concatenate(weights)
        classes = size_class(np.concatenate(sizes))
        n = len(index)

        def shares(pick: np.ndarray) -> np.ndarray:
            mass = np.bincount(code[pick], weights=weight[pick], minlength=n)
            return mass / mass.sum()

        by_size = {int(k): shares(classes == k) for k in np.unique(classes).tolist()}
        return cls(tuple(index), shares(np.ones(len(code), dtype=bool)), by_size)

    # -- JSON ------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "classes": [c._asdict() for c in self.classes],
            "overall": _plain(self.overall),
            "by_size": {str(k): _plain(v) for k, v in sorted(self.by_size.items())},
        }

    @classmethod
    def from_dict(cls, data: Any, where: str = "requests") -> RequestMix:
        """A mix from :meth:`to_dict` output, validated; errors name ``where`` and the entry."""
        if not isinstance(data, Mapping):
            raise ConfigError(f"{where}: expected an object")
        try:
            entries = data["classes"]
            if not isinstance(entries, list) or not entries:
                raise ConfigError(f"{where}.classes: expected a list of request classes")
            classes = tuple(
                _request_class(entry, f"{where}.classes[{k}]") for k, entry in enumerate(entries)
            )
            if len(set(classes)) != len(classes):
                raise ConfigError(f"{where}.classes: a request class appears twice")
            overall = checked_shares(data["overall"], len(classes), f"{where}.overall")
            by_size_data = data["by_size"]
            if not isinstance(by_size_data, Mapping):
                raise ConfigError(f"{where}.by_size: expected an object")
            by_size = {
                size_class_key(key, f"{where}.by_size"): checked_shares(
                    value, len(classes), f"{where}.by_size.{key}"
                )
                for key, value in by_size_data.items()
            }
        except KeyError as err:
            raise ConfigError(f"{where}: missing key {err}") from None
        return cls(classes, overall, by_size)


def _plain(shares: np.ndarray) -> list[float]:
    return [round(float(x), 12) for x in shares.tolist()]


def _request_class(entry: Any, where: str) -> RequestClass:
    if not isinstance(entry, Mapping):
        raise ConfigError(f"{where}: expected an object")
    unknown = set(entry) - set(RequestClass._fields)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {sorted(unknown)[0]!r} (allowed: "
            f"{', '.join(RequestClass._fields)})"
        )
    partition, constraint = entry.get("partition", ""), entry.get("constraint", "")
    if not isinstance(partition, str) or not isinstance(constraint, str):
        raise ConfigError(f"{where}: partition and constraint must be text")
    counts = []
    for key in ("gpus_per_node", "memory_per_node_mb"):
        value = entry.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigError(f"{where}.{key}: must be a whole number >= 0, got {value!r}")
        counts.append(value)
    return RequestClass(partition, counts[0], counts[1], constraint)
