"""The resources running jobs hold, by estimated end, as NumPy columns the machine keeps.

One row per (running job, node): the node, the cores, GPUs and memory held there, and the
job's estimated end (``inf`` in a free row). A job takes rows when it starts and frees them when
it ends, so a pass reads what comes back and when without a Python loop over the running jobs
(:class:`~sitesim.platform.profile.NodeProfile`).

Each row belongs to the group of partitions of its node
(:attr:`~sitesim.platform.placement.Partitions.node_group`: groups share no nodes), so a question
about one partition reads its group's rows alone. The rows by end, of a group or of all, are
kept from one reading to the next: the rows freed since are dropped and those taken since
merged in (most readings follow one job's start or end), in the order a full sort gives (by
end, ties by row).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sitesim.platform.placement import Alloc

#: A group's rows by end are merged from the last reading when it holds this many rows at
#: least, else sorted afresh (cheaper below: 6 us against 18 for 100 rows, 53 against 31 for
#: 3,000, a start and an end between readings).
MERGED = 1500


class Releases:
    """Rows of held resources, grown by doubling; free rows are reused."""

    __slots__ = (
        "_by_end", "_free_rows", "_versions", "_views", "cores", "end", "freed",
        "gpus", "memory", "node", "node_group",
    )  # fmt: skip

    def __init__(self, node_group: np.ndarray | None = None, rows: int = 1024) -> None:
        #: Per node, its group of partitions (None: every node in group 0).
        self.node_group = node_group
        self.node = np.zeros(rows, dtype=np.int64)
        self.cores = np.zeros(rows, dtype=np.int64)
        self.gpus = np.zeros(rows, dtype=np.int64)
        self.memory = np.zeros(rows, dtype=np.int64)
        self.end = np.full(rows, math.inf)
        self._free_rows: list[int] = list(range(rows - 1, -1, -1))
        #: Per group (None: all), a count of the adds and removes (a cached reading is then
        #: stale), and the last reading with that count.
        self._versions: dict[int | None, int] = {}
        self._by_end: dict[int | None, tuple[int, tuple[Any, ...]]] = {}
        #: Per group read before (None: all), its rows by end then and the rows taken since.
        self._views: dict[int | None, _View] = {}
        #: Per row, how many times it was freed (a row freed since a view was read is no
        #: longer in its place there).
        self.freed = np.zeros(rows, dtype=np.int64)

    def add(self, alloc: Alloc, end: float) -> np.ndarray:
        """Hold ``alloc`` (on the nodes of one group) until ``end``; returns its rows."""
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
        self._changed(self._group_of(int(alloc.nodes[0])), rows)
        return rows

    def remove(self, rows: np.ndarray) -> None:
        self.end[rows] = math.inf
        self.cores[rows] = self.gpus[rows] = self.memory[rows] = 0
        self._free_rows.extend(rows[::-1].tolist())
        self.freed[rows] += 1
        self._changed(self._group_of(int(self.node[rows[0]])), None)

    def _group_of(self, node: int) -> int:
        return 0 if self.node_group is None else int(self.node_group[node])

    def _changed(self, group: int, taken: np.ndarray | None) -> None:
        versions, views = self._versions, self._views
        for key in (group, None):
            versions[key] = versions.get(key, 0) + 1
            view = views.get(key)
            if view is not None and taken is not None:
                view.added.append(taken)
                if 8 * len(view.added) > len(view.rows) + 8:  # (read next by a full sort)
                    del views[key]

    def version(self, group: int | None = None) -> int:
        """A count of the rows of ``group`` (None: of all) taken and freed."""
        return self._versions.get(group, 0)

    def by_end(self, group: int | None = None) -> tuple[Any, ...]:
        """The held rows of ``group`` (None: of all) by estimated end: ends, nodes, cores, GPUs
        and memory (GPUs or memory None where no row holds any); sorted once per change."""
        version = self.version(group)
        cached = self._by_end.get(group)
        if cached is not None and cached[0] == version:
            return cached[1]
        view = self._views.get(group)
        if view is None:
            view = self._views[group] = _View(self, group)
        else:
            view.merge(self)
        order = view.rows
        gpus, memory = self.gpus[order], self.memory[order]
        rows = (
            view.ends, self.node[order], self.cores[order],
            gpus if np.count_nonzero(gpus) else None, memory if np.count_nonzero(memory) else None,
        )  # fmt: skip
        self._by_end[group] = (version, rows)
        return rows

    def _grow(self, need: int) -> None:
        old = len(self.end)
        size = max(2 * old, old + need)
        for name in ("node", "cores", "gpus", "memory", "freed"):
            column = getattr(self, name)
            grown = np.zeros(size, dtype=np.int64)
            grown[:old] = column
            setattr(self, name, grown)
        end = np.full(size, math.inf)
        end[:old] = self.end
        self.end = end
        self._free_rows[:0] = range(size - 1, old - 1, -1)


class _View:
    """The held rows of a group (or of all) by end, ties by row, as last read: the rows, how
    many times each had been freed then, their ends; and the rows taken since."""

    __slots__ = ("added", "ends", "gens", "group", "rows")

    def __init__(self, releases: Releases, group: int | None) -> None:
        self.group = group
        self.added: list[np.ndarray] = []
        self._sort(releases)

    def _sort(self, releases: Releases) -> None:
        """The held rows of the group (of all) by end, ties by row."""
        held = np.isfinite(releases.end)
        if self.group is not None and releases.node_group is not None:
            held &= releases.node_group[releases.node] == self.group
        rows = held.nonzero()[0]
        rows = rows[releases.end[rows].argsort(kind="stable")]
        self.rows, self.gens, self.ends = rows, releases.freed[rows], releases.end[rows]

    def merge(self, releases: Releases) -> None:
        """Bring the order up to date: the rows freed since dropped and those taken since
        merged in (a full sort when it holds fewer than :data:`MERGED` rows, or when more
        were taken than an eighth of them)."""
        added, self.added = self.added, []
        new = np.concatenate(added) if added else np.zeros(0, dtype=np.int64)
        rows, gens, ends = self.rows, self.gens, self.ends
        if len(rows) < MERGED or 8 * len(new) > len(rows):
            self._sort(releases)
            return
        keep = releases.freed[rows] == gens
        if np.count_nonzero(keep) < len(keep):  # (freed since)
            rows, gens, ends = rows[keep], gens[keep], ends[keep]
        if len(new):
            # (by row; a row freed and taken again since is there twice)
            new = np.unique(new) if len(added) > 1 else np.sort(new)
            new = new[np.isfinite(releases.end[new])]  # (not freed since)
            if self.group is not None and releases.node_group is not None:
                new = new[releases.node_group[releases.node[new]] == self.group]  # (not reused)
            new_ends = releases.end[new]
            by_end = new_ends.argsort(kind="stable")  # (ties by row)
            new, new_ends = new[by_end], new_ends[by_end]
            at = ends.searchsorted(new_ends, side="right")
            first = ends.searchsorted(new_ends, side="left")
            for k in (first < at).nonzero()[0].tolist():  # (ties with kept rows: by row)
                lo = int(first[k])
                at[k] = lo + int(rows[lo : at[k]].searchsorted(new[k]))
            at += np.arange(len(new))
            old = np.ones(len(rows) + len(new), dtype=bool)
            old[at] = False
            merged = []
            for column, values in ((rows, new), (gens, releases.freed[new]), (ends, new_ends)):
                out = np.empty(len(old), dtype=column.dtype)
                out[old] = column
                out[at] = values
                merged.append(out)
            rows, gens, ends = merged
        self.rows, self.gens, self.ends = rows, gens, ends
