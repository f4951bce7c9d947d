"""What each job of a trace asks for beyond its processors: the columns SWF has no field for.

A site's log (``sacct``) says more about a job than SWF can hold: its GPUs, its memory per
node, its node count, the features its nodes must have, its partition by name. A trace read
from such a log carries them as :class:`JobRequests`, one entry per job line, beside its SWF
data (``SWFTrace.requests``); a replay on a platform places each job by them, and the workload
table (``sitesim convert --to parquet`` or ``csv``) keeps them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: The columns, their meaning and unit (the workload table's schema documents them).
COLUMNS = {
    "nodes": "node count asked for (0: as many as its cores need)",
    "gpus_per_node": "GPUs on each of its nodes",
    "memory_per_node_mb": "memory on each of its nodes, MB (0: none asked)",
    "constraint": "the features its nodes must have, as Slurm writes them (a100&bigmem)",
    "partition_name": "its partition by name (empty: by the SWF partition number)",
}


@dataclass(frozen=True)
class JobRequests:
    """Per job line of a trace (row order), what it asks for beyond its processors.

    Attributes:
        nodes: node count (0: as many as its cores need).
        gpus_per_node: GPUs on each node.
        memory_per_node_mb: memory on each node, MB (0: none asked).
        constraint: the node features asked for (empty: none).
        partition_name: the partition's name (empty: none named).
        source: ``file:line`` of a row of the trace as read (for messages), or None.
        origin: per row, its row in the trace as read (what ``source`` takes).
    """

    nodes: np.ndarray
    gpus_per_node: np.ndarray
    memory_per_node_mb: np.ndarray
    constraint: np.ndarray
    partition_name: np.ndarray
    source: Callable[[int], str] | None = None
    origin: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.nodes)

    def rows(self, selected: np.ndarray | slice) -> JobRequests:
        """The requests of rows ``selected``, in that order."""
        origin = np.arange(len(self)) if self.origin is None else self.origin
        return JobRequests(
            self.nodes[selected],
            self.gpus_per_node[selected],
            self.memory_per_node_mb[selected],
            self.constraint[selected],
            self.partition_name[selected],
            self.source,
            origin[selected],
        )

    def location(self, row: int) -> str | None:
        """``file:line`` of row ``row``, if known."""
        if self.source is None:
            return None
        return self.source(row if self.origin is None else int(self.origin[row]))

    def asks_more(self) -> bool:
        """True if any job asks for more than cores in a partition (GPUs, memory, a node
        count, features)."""
        return bool(
            (self.nodes > 0).any()
            or (self.gpus_per_node > 0).any()
            or (self.memory_per_node_mb > 0).any()
            or (self.constraint != "").any()
        )

    def counts(self) -> dict[str, int]:
        """How many jobs ask for each: GPUs, memory, a node count, features."""
        return {
            "gpus": int((self.gpus_per_node > 0).sum()),
            "memory": int((self.memory_per_node_mb > 0).sum()),
            "nodes": int((self.nodes > 0).sum()),
            "constraint": int((self.constraint != "").sum()),
        }

    @classmethod
    def empty(cls, n: int) -> JobRequests:
        """``n`` jobs that ask for nothing more."""
        zeros = np.zeros(n, dtype=np.int64)
        text = np.full(n, "", dtype=object)
        return cls(zeros, zeros.copy(), zeros.copy(), text, text.copy())
