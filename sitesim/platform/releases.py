"""The resources running jobs hold, by estimated end, as NumPy columns the machine keeps.

One row per (running job, node): the node, the cores, GPUs and memory held there, and the
job's estimated end (``inf`` in a free row). A job takes rows when it starts and frees them when
it ends, so a pass reads what comes back and when without a Python loop over the running jobs
(:class:`~sitesim.platform.profile.NodeProfile`).

The rows by end are kept from one reading to the next: the rows freed since are dropped and
those taken since merged in (most readings follow one job's start or end), in the order a full
sort gives (by end, ties by row).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sitesim.platform.placement import Alloc


class Releases:
    """Rows of held resources, grown by doubling; free rows are reused."""

    __slots__ = (
        "_added", "_by_end", "_free_rows", "_gen", "_holding", "_sorted", "cores", "end",
        "gpus", "memory", "node", "version",
    )  # fmt: skip

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
        #: The held rows by end when last read (rows, their generations, ends); the rows taken
        #: since; and per row, how many times it was freed (a row freed since that reading is
        #: no longer in its place there).
        self._sorted: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._added: list[np.ndarray] = []
        self._gen = np.zeros(rows, dtype=np.int64)
        #: How many rows hold GPUs, and memory.
        self._holding = [0, 0]

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
        self._added.append(rows)
        holding = self._holding
        holding[0] += int(np.count_nonzero(alloc.gpus))
        holding[1] += int(np.count_nonzero(alloc.memory))
        return rows

    def remove(self, rows: np.ndarray) -> None:
        holding = self._holding
        holding[0] -= int(np.count_nonzero(self.gpus[rows]))
        holding[1] -= int(np.count_nonzero(self.memory[rows]))
        self.end[rows] = math.inf
        self.cores[rows] = self.gpus[rows] = self.memory[rows] = 0
        self._free_rows.extend(rows[::-1].tolist())
        self._gen[rows] += 1
        self.version += 1

    def by_end(self) -> tuple[Any, ...]:
        """The held rows by estimated end: ends, nodes, cores, GPUs and memory (GPUs or memory
        None where no row holds any); sorted once per version."""
        cached = self._by_end
        if cached is not None and cached[0] == self.version:
            return cached[1]
        order = self._order()
        rows = (
            self._sorted[2], self.node[order], self.cores[order],  # type: ignore[index]
            self.gpus[order] if self._holding[0] else None,
            self.memory[order] if self._holding[1] else None,
        )  # fmt: skip
        self._by_end = (self.version, rows)
        return rows

    def _order(self) -> np.ndarray:
        """The held rows by end, ties by row: the last order with the rows freed since
        dropped and those taken since merged in (a full sort when there is none yet, or when
        more rows were taken since than an eighth of those it holds)."""
        added, self._added = self._added, []
        kept = self._sorted
        new = np.concatenate(added) if added else np.zeros(0, dtype=np.int64)
        if kept is None or 8 * len(new) > len(kept[0]):
            held = np.flatnonzero(np.isfinite(self.end))
            order = held[np.argsort(self.end[held], kind="stable")]
            self._sorted = (order, self._gen[order], self.end[order])
            return order
        rows, gens, ends = kept
        keep = self._gen[rows] == gens
        if not keep.all():  # (freed since)
            rows, gens, ends = rows[keep], gens[keep], ends[keep]
        if len(new):
            # (by row; a row freed and taken again since is there twice)
            new = np.unique(new) if len(added) > 1 else np.sort(new)
            new = new[np.isfinite(self.end[new])]  # (not freed since)
            new_ends = self.end[new]
            by_end = np.argsort(new_ends, kind="stable")  # (ties by row)
            new, new_ends = new[by_end], new_ends[by_end]
            at = np.searchsorted(ends, new_ends, side="right")
            first = np.searchsorted(ends, new_ends, side="left")
            for k in np.flatnonzero(first < at).tolist():  # (ties with kept rows: by row)
                lo = int(first[k])
                at[k] = lo + int(np.searchsorted(rows[lo : at[k]], new[k]))
            at += np.arange(len(new))
            old = np.ones(len(rows) + len(new), dtype=bool)
            old[at] = False
            merged = []
            for column, values in ((rows, new), (gens, self._gen[new]), (ends, new_ends)):
                out = np.empty(len(old), dtype=column.dtype)
                out[old] = column
                out[at] = values
                merged.append(out)
            rows, gens, ends = merged
        self._sorted = (rows, gens, ends)
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
        gen = np.zeros(size, dtype=np.int64)
        gen[:old] = self._gen
        self._gen = gen
        self._free_rows[:0] = range(size - 1, old - 1, -1)
