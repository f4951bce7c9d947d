"""The machine of a platform: nodes with cores, GPUs and memory, jobs placed on them, and
nodes that go down (maintenance windows, failures).

The scheduler decides which jobs start; the node pass (:mod:`sitesim.platform.passes`) places each
on concrete resources (:func:`sitesim.platform.placement.place`) and the machine checks, as it
starts the job, that no node, core, GPU or byte of memory is over-allocated and that every node is
in the job's partition and up. A job holds its allocation until it ends.

Outages (:mod:`sitesim.platform.downtime`) take nodes down. A job running on a node that goes down
is killed and requeued (``on_failure = "requeue"``, as Slurm's ``--requeue``) or recorded as
failed; the machine counts requeues, node-seconds down and the core-seconds of work lost.
A node is down while any outage covers it.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, insort
from collections.abc import Callable
from typing import Any

import numpy as np

from sitesim.engine.event_queue import SiteEnvironment
from sitesim.engine.job import Job
from sitesim.engine.machine import OverAllocationError
from sitesim.platform.description import format_nodes
from sitesim.platform.placement import Alloc, Free, Partitions, capacity
from sitesim.platform.releases import Releases


class NodeMachine:
    """A platform's nodes shared by jobs.

    Attributes:
        procs: cores in all (the machine's size for the metrics).
        free: resources free now (down nodes hold nothing free).
        running: ``(estimated end, id, job)`` ascending, as schedulers see the running jobs.
        up: True for each node that is up.
        requeued, failed: jobs requeued and failed after a node went down.
        work_lost: core-seconds of work the killed runs had done.
    """

    def __init__(
        self,
        env: SiteEnvironment,
        parts: Partitions,
        on_end: Callable[[Job], None],
        on_kill: Callable[[Job, bool], None],
    ) -> None:
        self.env = env
        self.parts = parts
        platform = parts.platform
        self.procs = platform.total_cores
        self.free: Free = capacity(platform)
        self.running: list[tuple[float, int, Job]] = []
        self.up = np.ones(platform.nodes, dtype=bool)
        self._down = np.zeros(platform.nodes, dtype=np.int64)  # outages covering each node
        self._on_end = on_end
        self._on_kill = on_kill
        self._end_callbacks: list[Callable[[Any], None]] = [self._end]
        self._runs: dict[int, int] = {}  # job id -> run number (a killed run's end is ignored)
        #: What the running jobs hold, by estimated end (rows of each job in ``_rows``).
        self.releases = Releases()
        self._rows: dict[int, np.ndarray] = {}
        #: Outages are still to come (set by :func:`sitesim.platform.boundary.add_outages`).
        self.outages_pending = False
        self.requeued = 0
        self.failed = 0
        self.work_lost = 0.0
        #: Requeues of each job, by id.
        self.requeues: dict[int, int] = {}
        #: Where each job's last run was, by id: partition, nodes, cores, GPUs and memory
        #: held, and the nodes as ranges (``'0-3,17'``).
        self.placed: dict[int, tuple[int, int, int, int, int, str]] = {}
        #: Nodes down, and when that number changed: (time, nodes down from then), for the
        #: node-time down (:meth:`down_seconds`).
        self.nodes_down = 0
        self._down_times = array("d")
        self._down_counts = array("d")

    def start(self, job: Job, alloc: Alloc) -> None:
        """Start ``job`` now on ``alloc``.

        Raises:
            OverAllocationError: a node is down, outside the job's partition, or short of a
                resource the allocation takes.
            JobStateError: the job is not waiting, or was changed since it was submitted.
        """
        nodes = alloc.nodes
        free = self.free
        if (
            not self.up[nodes].all()
            or not free.holds(alloc)
            or int(alloc.cores.sum()) < job.size
            or not self.parts.member[job.demand.part][nodes].all()
        ):
            raise OverAllocationError(
                f"at t = {self.env.now:g} s job {job.id} was placed on nodes that are down, "
                "outside its partition, or short of the cores, GPUs or memory it takes"
            )
        env = self.env
        now = env.now
        duration = job.mark_started(now)
        free.take(alloc)
        job.alloc = alloc
        insort(self.running, (now + job.estimate, job.id, job))
        self._rows[job.id] = self.releases.add(alloc, now + job.estimate)
        run = self._runs.get(job.id, 0) + 1
        self._runs[job.id] = run
        env.after(duration, self._end_callbacks, (job, run))

    def _end(self, event: Any) -> None:
        job, run = event._value
        if self._runs.get(job.id) != run:
            return  # this run was killed when its node went down
        del self._runs[job.id]
        job.mark_ended(self.env.now)
        self._release(job)
        self._on_end(job)

    def _release(self, job: Job) -> None:
        running = self.running
        del running[bisect_left(running, (job.start + job.estimate, job.id))]
        self.releases.remove(self._rows.pop(job.id))
        alloc: Alloc = job.alloc
        self.placed[job.id] = (
            job.demand.part, len(alloc.nodes), int(alloc.cores.sum()), int(alloc.gpus.sum()),
            int(alloc.memory.sum()), format_nodes(alloc.nodes),
        )  # fmt: skip
        self.free.give(alloc)
        down = alloc.nodes[~self.up[alloc.nodes]]
        if len(down):  # (nothing is free on a down node)
            self._zero(down)

    # -- outages ---------------------------------------------------------------------------
    def go_down(self, nodes: np.ndarray, requeue: bool) -> list[Job]:
        """Outages begin on ``nodes``: jobs running there are killed (requeued, or failed
        when ``requeue`` is False); returns them."""
        np.add.at(self._down, nodes, 1)  # (a node may begin two outages at once)
        fresh = np.unique(nodes[self.up[nodes]])  # (up until now)
        self.up[nodes] = False
        if not len(fresh):
            return []
        self._count_down(len(fresh))
        hit = np.zeros(len(self.up), dtype=bool)
        hit[fresh] = True
        now = self.env.now
        killed = [  # (a job whose run ends at this instant ends: its end event is due)
            job
            for _, _, job in self.running
            if job.start + job.duration > now and hit[job.alloc.nodes].any()
        ]
        for job in killed:
            self._runs[job.id] = -1
            self.work_lost += (now - job.start) * int(job.alloc.cores.sum())
            self._release(job)
            if requeue:
                job.mark_requeued(now)
                self.requeued += 1
                self.requeues[job.id] = self.requeues.get(job.id, 0) + 1
            else:
                job.mark_failed(now)
                self.failed += 1
            job.alloc = None if requeue else job.alloc
            self._on_kill(job, requeue)
        self._zero(fresh)
        return killed

    def come_up(self, nodes: np.ndarray) -> None:
        """Outages end on ``nodes``; a node no outage covers any more is up again, idle."""
        np.subtract.at(self._down, nodes, 1)
        back = np.unique(nodes[self._down[nodes] == 0])
        if len(back):
            self._count_down(-len(back))
            self.up[back] = True
            platform = self.parts.platform
            self.free.cores[back] = platform.cores[back]
            self.free.gpus[back] = platform.gpus[back]
            self.free.memory[back] = platform.memory[back]

    def _count_down(self, change: int) -> None:
        self.nodes_down += change
        now = self.env.now
        if self._down_times and self._down_times[-1] == now:  # (two groups at one instant)
            self._down_counts[-1] = self.nodes_down
        else:
            self._down_times.append(now)
            self._down_counts.append(self.nodes_down)

    def down_seconds(self, until: float) -> float:
        """Node-seconds down from time 0 to ``until``: each node counted once while any
        outage covers it."""
        times = np.frombuffer(self._down_times)
        if not len(times):
            return 0.0
        ends = np.minimum(np.append(times[1:], math.inf), until)
        return float(np.frombuffer(self._down_counts) @ np.maximum(ends - times, 0.0))

    def _zero(self, nodes: np.ndarray) -> None:
        self.free.cores[nodes] = 0
        self.free.gpus[nodes] = 0
        self.free.memory[nodes] = 0
