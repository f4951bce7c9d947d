"""The resources running jobs hold, by estimated end, as NumPy columns the machine keeps.

One row per (running job, node): the node, the cores, GPUs and memory held there, and the
job's estimated end (``inf`` in a free row). A job takes rows when it starts and frees them when
it ends, so a pass reads what comes back and when without a Python loop over the running jobs
(:class:`~sitesim.platform.profile.NodeProfile`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sitesim.platform.placement import Alloc


class Releases:
    """Rows of held resources, grown by doubling; free rows are reused."""

    __slots__ = ("_by_end", "_free_rows", "cores", "end", "gpus", "memory", "node", "version")

    def __init__(self, rows: int = 1024) -> None:
        self.node = np.zeros(rows, dtype=np.int64)
        self.cores = np.zeros(rows, dtype=np.int64)
        self.gpus = np.zeros(rows, dtype=np.int64)
        self.memory = np.zeros(rows, dtype=np.int64)
        self.end = np.full(rows, math.inf)
        self._free_rows: list[int] = list(range(rows - 1, -1, -1))
        #: Changes with every add and remove (a profile's cached sort is then stale).
        self.version = 0
        self._by_end: tuple[int, tuple[Any, ...]] | None = None

    def add(self, alloc: Alloc, end: float) -> np.ndarray:
        """Hold ``alloc`` until ``end``; returns its rows."""
        n = len(alloc.nodes)
        free = self._free_rows
        if len(free) < n:
            self._grow(n)
        rows = np.array(free[-n:][::-1], dtype=np.int64)
        del free[-n:]
        self.node[rows] = alloc.nodes
        self.cores[rows] = alloc.cores
        self.gpus[rows] = alloc.gpus
        self.memory[rows] = alloc.memory
        self.end[rows] = end
        self.version += 1
        return rows

    def remove(self, rows: np.ndarray) -> None:
        self.end[rows] = math.inf
        self.cores[rows] = self.gpus[rows] = self.memory[rows] = 0
        self._free_rows.extend(rows[::-1].tolist())
        self.version += 1

    def by_end(self) -> tuple[Any, ...]:
        """The held rows by estimated end: ends, nodes, cores, GPUs and memory (GPUs or memory
        None where no row holds any); sorted once per version."""
        cached = self._by_end
        if cached is not None and cached[0] == self.version:
            return cached[1]
        held = np.flatnonzero(np.isfinite(self.end))
        order = held[np.argsort(self.end[held], kind="stable")]
        gpus, memory = self.gpus[order], self.memory[order]
        rows = (
            self.end[order], self.node[order], self.cores[order],
            gpus if gpus.any() else None, memory if memory.any() else None,
        )  # fmt: skip
        self._by_end = (self.version, rows)
        return rows

    def _grow(self, need: int) -> None:
        old = len(self.end)
        size = max(2 * old, old + need)
        for name in ("node", "cores", "gpus", "memory"):
            column = getattr(self, name)
            grown = np.zeros(size, dtype=np.int64)
            grown[:old] = column
            setattr(self, name, grown)
        end = np.full(size, math.inf)
        end[:old] = self.end
        self.end = end
        self._free_rows[:0] = range(size - 1, old - 1, -1)
