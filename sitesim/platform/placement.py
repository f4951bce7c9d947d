"""Where a job runs: what it asks for, the nodes it gets, and the placement policies.

A job's :class:`Demand` is fixed at submission (:func:`demand_of`): its partition, cores (the
job's ``size``: tasks × cores per task), GPUs and memory per node, and optionally a node count.
:func:`place` finds an :class:`Alloc` for it on free resources, given as three arrays (free
cores, GPUs and memory per node), or says it does not fit.

- **Exclusive** partitions give whole nodes: the job gets every core, GPU and byte of memory of
  each node it is placed on. With a node count it gets that many nodes (each with enough cores
  for its share of the tasks); without, nodes until their cores cover the job's.
- **Shared** partitions pack jobs onto nodes: with a node count, that many nodes with the
  job's share of cores free on each; without, cores taken from node after node (each node with
  the job's GPUs and memory free) until the job's cores are covered.

Placement policies order the candidate nodes: ``first_fit`` by index; ``best_fit`` the tightest
first (shared: fewest free cores; exclusive: smallest nodes), ties by index, as Slurm's
consumable-resources selection prefers. Nodes in ``last`` (a mask) come after the others, in
the same order (a reservation prefers nodes that are busy now, so that backfilling can use the
free ones).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from sitesim.platform.description import Platform


class Request(NamedTuple):
    """What a job asks for beyond its cores (``Job.ask``; None asks for nothing more).

    Attributes:
        partition: a partition name, or None for the default one (or the SWF mapping).
        nodes: a node count (0: as many as the cores need).
        gpus: GPUs per node.
        memory: memory per node, MB.
        swf: the trace's partition number (field 16; -1 if none), mapped by the platform.
        constraint: the features its nodes must have, as Slurm writes them (``a100&bigmem``,
            :mod:`sitesim.platform.features`); empty: none.
    """

    partition: str | None = None
    nodes: int = 0
    gpus: int = 0
    memory: int = 0
    swf: int = -1
    constraint: str = ""


class Demand(NamedTuple):
    """A job's request resolved against a platform (``Job.demand``): ``nodeset`` > 0 restricts
    it to the nodes of :attr:`Partitions.nodesets` ``[nodeset]`` (those its constraint
    allows); 0: any node of its partition."""

    part: int
    cores: int
    nodes: int = 0
    gpus: int = 0
    memory: int = 0
    nodeset: int = 0


class Alloc(NamedTuple):
    """Resources held by a job: the nodes (ascending) and what it holds on each."""

    nodes: np.ndarray
    cores: np.ndarray
    gpus: np.ndarray
    memory: np.ndarray


class Free(NamedTuple):
    """Free resources per node: cores, GPUs and memory (MB)."""

    cores: np.ndarray
    gpus: np.ndarray
    memory: np.ndarray

    def copy(self) -> Free:
        return Free(self.cores.copy(), self.gpus.copy(), self.memory.copy())

    def on(self, nodes: np.ndarray) -> Free:
        """What is free on ``nodes`` (a copy, aligned with them)."""
        return Free(self.cores[nodes], self.gpus[nodes], self.memory[nodes])

    def take(self, alloc: Alloc) -> None:
        nodes = alloc.nodes
        self.cores[nodes] -= alloc.cores
        self.gpus[nodes] -= alloc.gpus
        self.memory[nodes] -= alloc.memory

    def give(self, alloc: Alloc) -> None:
        nodes = alloc.nodes
        self.cores[nodes] += alloc.cores
        self.gpus[nodes] += alloc.gpus
        self.memory[nodes] += alloc.memory

    def holds(self, alloc: Alloc) -> bool:
        """True if every resource ``alloc`` takes is free here."""
        nodes = alloc.nodes
        return not (
            np.count_nonzero(self.cores[nodes] < alloc.cores)
            or np.count_nonzero(self.gpus[nodes] < alloc.gpus)
            or np.count_nonzero(self.memory[nodes] < alloc.memory)
        )


def capacity(platform: Platform) -> Free:
    """Every node's resources, free (a fresh copy)."""
    return Free(platform.cores.copy(), platform.gpus.copy(), platform.memory.copy())


class Partitions:
    """A platform's partitions as arrays placement reads: each one's nodes, whether it is
    exclusive, and the most any single job may ask there (for the site's checks)."""

    def __init__(self, platform: Platform) -> None:
        self.platform = platform
        self.nodes = [np.array(p.nodes, dtype=np.int64) for p in platform.partitions]
        #: Per partition: a mask over all nodes, True on its own.
        self.member = []
        for nodes in self.nodes:
            mask = np.zeros(platform.nodes, dtype=bool)
            mask[nodes] = True
            self.member.append(mask)
        self.exclusive = [p.allocation == "exclusive" for p in platform.partitions]
        self.best_fit = platform.placement == "best_fit"
        cores, gpus, memory = platform.cores, platform.gpus, platform.memory
        #: Per partition: its cores in all, most GPUs and memory on one node, time limit.
        self.total_cores = [int(cores[n].sum()) for n in self.nodes]
        self.max_gpus = [int(gpus[n].max()) for n in self.nodes]
        self.max_memory = [int(memory[n].max()) for n in self.nodes]
        self.max_time = [p.max_time for p in platform.partitions]
        #: Node capacities in each partition's order for whole-node placement.
        self._caps = [(cores[n], gpus[n], memory[n]) for n in self.nodes]
        #: How placement reads a partition's nodes: a slice when they are contiguous.
        self.select: list[slice | np.ndarray] = [
            slice(int(n[0]), int(n[-1]) + 1) if int(n[-1]) - int(n[0]) + 1 == len(n) else n
            for n in self.nodes
        ]
        #: The cores of every node of a partition, when they all have as many (else 0).
        self.uniform = [int(c[0]) if (c == c[0]).all() else 0 for c, _, _ in self._caps]
        #: Per partition, its group: partitions share a group when they share nodes, directly
        #: or through others (what is held in one group never touches another's nodes).
        self.group = list(range(len(self.nodes)))
        for k, mask in enumerate(self.member):
            for j in range(k):
                if (mask & self.member[j]).any():
                    old, new = self.group[k], self.group[j]
                    self.group = [new if g == old else g for g in self.group]
        #: Per node, its partitions' group (-1: in no partition).
        self.node_group = np.full(platform.nodes, -1, dtype=np.int64)
        for k, nodes in enumerate(self.nodes):
            self.node_group[nodes] = self.group[k]
        #: Masks over all nodes a demand's ``nodeset`` indexes (0: every node), and the
        #: index of each constraint's (:meth:`nodeset`).
        self.nodesets: list[np.ndarray] = [np.ones(platform.nodes, dtype=bool)]
        self._nodeset_of: dict[str, int] = {}

    def nodeset(self, constraint: str) -> int:
        """The index in :attr:`nodesets` of the nodes that satisfy ``constraint`` (0 for
        none), registered on first use.

        Raises:
            ValueError: not a constraint (:func:`sitesim.platform.features.parse_constraint`).
        """
        if not constraint:
            return 0
        found = self._nodeset_of.get(constraint)
        if found is None:
            from sitesim.platform.features import constraint_mask, parse_constraint

            mask = constraint_mask(parse_constraint(constraint), self.platform)
            found = self._nodeset_of[constraint] = len(self.nodesets)
            self.nodesets.append(mask)
        return found


def place(
    parts: Partitions, demand: Demand, free: Free, last: np.ndarray | None = None
) -> Alloc | None:
    """An allocation for ``demand`` on ``free`` resources, or None if it does not fit.

    ``last``: a boolean mask over all nodes; those nodes are used only after the others.
    """
    k = demand.part
    sel = parts.select[k]  # (a slice when the partition's nodes are contiguous: views)
    cores_free = free.cores[sel]
    gpus, memory, count, want = demand.gpus, demand.memory, demand.nodes, demand.cores
    cap_cores, cap_gpus, cap_mem = parts._caps[k]
    exclusive = parts.exclusive[k]
    if exclusive:  # idle nodes only, whole (every job holds a core on each of its nodes)
        ok = cores_free == cap_cores
        if demand.nodeset:
            ok &= parts.nodesets[demand.nodeset][sel]
        if gpus:
            ok &= cap_gpus >= gpus
        if memory:
            ok &= cap_mem >= memory
        have = cap_cores
        uniform = parts.uniform[k]
        if uniform and not count:  # (identical nodes: want / uniform of them, rounded up)
            if np.count_nonzero(ok) * uniform < want:
                return None  # (not enough idle nodes: the common answer, found fast)
            if not parts.best_fit:
                late = None if last is None else last[sel]
                chosen = _first_idle(ok, -(-want // uniform), late)
                nodes = parts.nodes[k][chosen]
                return Alloc(nodes, cap_cores[chosen], cap_gpus[chosen], cap_mem[chosen])
    else:
        if not (count or demand.nodeset or gpus or memory or parts.best_fit):
            return _first_cores(
                parts.nodes[k], cores_free, want, None if last is None else last[sel]
            )
        if not count and int(cores_free.sum()) < want:
            return None
        ok = cores_free > 0
        if demand.nodeset:
            ok &= parts.nodesets[demand.nodeset][sel]
        if gpus:
            ok &= free.gpus[sel] >= gpus
        if memory:
            ok &= free.memory[sel] >= memory
        have = cores_free
    share = -(-want // count) if count else 1  # cores per node with a node count
    if count and exclusive and share > 1:
        ok &= have >= share
    elif count:  # shared: want // count cores on each node, one more on want % count of them
        ok &= have >= want // count
    candidates = ok.nonzero()[0]
    if count and len(candidates) < count:
        return None
    if not len(candidates):
        return None
    if not count and int(have[candidates].sum()) < want:
        return None
    nodes = parts.nodes[k]
    if last is not None or parts.best_fit:
        whole = share if count else want  # (what one node must hold to take the job alone)
        candidates = _order(candidates, have, nodes, parts.best_fit, last, whole)
    if count:
        if exclusive:
            chosen = candidates[:count]
            taken = have[chosen]
        else:
            base, extra = divmod(want, count)
            roomy = have[candidates] > base  # (can take base + 1)
            if int(roomy.sum()) < extra:
                return None
            more = candidates[roomy][:extra]  # the first that can take one more, then the rest
            rest = candidates[~np.isin(candidates, more)][: count - extra]
            chosen = np.concatenate([more, rest])
            taken = np.full(count, base, dtype=np.int64)
            taken[:extra] += 1
            if len(chosen) < count:
                return None
    else:
        cumulative = have[candidates].cumsum()
        used = int(cumulative.searchsorted(want)) + 1  # nodes until the cores are covered
        chosen = candidates[:used]
        taken = have[chosen].copy()
        if not exclusive:
            taken[-1] -= int(cumulative[used - 1]) - want  # the last node: only what is left
    if len(chosen) > 1 and (last is not None or parts.best_fit or (count and not exclusive)):
        order = chosen.argsort(kind="stable")  # (ascending nodes)
        chosen, taken = chosen[order], taken[order]
    picked = nodes[chosen]
    n = len(picked)
    if exclusive:
        return Alloc(picked, taken, cap_gpus[chosen], cap_mem[chosen])  # (indexed: copies)
    return Alloc(picked, taken, np.full(n, gpus, np.int64), np.full(n, memory, np.int64))


def _first_cores(
    nodes: np.ndarray, cores_free: np.ndarray, want: int, late: np.ndarray | None = None
) -> Alloc | None:
    """First fit of ``want`` cores on a shared partition's nodes (``nodes``, their free cores
    ``cores_free``), nothing else asked: every free core of node after node, in index order,
    the last node only what is left to take; the nodes in ``late`` (a mask) after the
    others."""
    if late is not None and np.count_nonzero(late):
        early = np.where(late, 0, cores_free)
        short = want - int(early.sum())
        if short <= 0:  # (the others hold them)
            return _first_cores(nodes, early, want)
        rest = _first_cores(nodes, np.where(late, cores_free, 0), short)
        if rest is None:
            return None
        chosen = (early > 0).nonzero()[0]  # (all of the others, then the late nodes': ascending)
        picked = np.concatenate([nodes[chosen], rest.nodes])
        at = picked.argsort(kind="stable")
        taken = np.concatenate([early[chosen], rest.cores])[at]
        return Alloc(picked[at], taken, np.zeros(len(at), np.int64), np.zeros(len(at), np.int64))
    cumulative = cores_free.cumsum()
    if not len(cumulative) or cumulative[-1] < want:
        return None
    used = int(cumulative.searchsorted(want)) + 1  # (nodes up to the one that covers them)
    chosen = (cores_free[:used] > 0).nonzero()[0]  # (a mask: NumPy finds its ones faster)
    taken = cores_free[chosen]
    taken[-1] -= int(cumulative[used - 1]) - want
    n = len(chosen)
    return Alloc(nodes[chosen], taken, np.zeros(n, np.int64), np.zeros(n, np.int64))


def _first_idle(ok: np.ndarray, count: int, late: np.ndarray | None) -> np.ndarray:
    """First fit of ``count`` whole nodes: the positions of the first ``count`` nodes where
    ``ok`` (there are as many), those in ``late`` after the others, ascending."""
    if late is None:
        return ok.nonzero()[0][:count]
    early = (ok & ~late).nonzero()[0]
    if len(early) >= count:
        return early[:count]
    return np.sort(np.concatenate([early, (ok & late).nonzero()[0][: count - len(early)]]))


def _order(
    candidates: np.ndarray,
    have: np.ndarray,
    nodes: np.ndarray,
    best_fit: bool,
    last: np.ndarray | None,
    whole: int,
) -> np.ndarray:
    """The candidates (positions in the partition) in placement order: first fit by index;
    best fit the tightest node that holds ``whole`` cores alone first, else the largest
    first (the fewest nodes); nodes in ``last`` after the others."""
    if not best_fit:  # (index order, those in ``last`` after the others)
        assert last is not None
        late = last[nodes[candidates]]
        return (
            np.concatenate([candidates[~late], candidates[late]])
            if np.count_nonzero(late)
            else candidates
        )
    cores = have[candidates]
    holds = cores >= whole
    keys = [candidates, np.where(holds, cores, -cores), ~holds]
    if last is not None:
        late = last[nodes[candidates]]
        if np.count_nonzero(late):
            keys.append(late)
    return candidates[np.lexsort(keys)]


def fits_ever(parts: Partitions, demand: Demand) -> bool:
    """True if ``demand`` fits on its partition's nodes when they are all free."""
    return place(parts, demand, capacity(parts.platform)) is not None
