"""A site on a platform of nodes: the site boundary's checks, outages, the placement records
and the per-partition statistics.

:func:`attach` gives a :class:`~sitesim.site.Site` a :class:`~sitesim.node_machine.NodeMachine`
and a :class:`~sitesim.node_pass.NodePass`. At submission each job's request
(:class:`~sitesim.placement.Request` in ``Job.ask``, or none) is resolved to a
:class:`~sitesim.placement.Demand`: the partition named, else the one the platform maps the
job's SWF partition number to, else the default partition. A job its partition can never run is
refused by reason (lenient) or stops the run (strict), like any impossible job.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from sitesim.job import Job
from sitesim.metrics import HOUR, MINUTE, slowdowns, window_jobs
from sitesim.node_machine import NodeMachine
from sitesim.node_pass import NodePass
from sitesim.placement import Demand, Partitions, Request, fits_ever
from sitesim.platform import Platform

if TYPE_CHECKING:
    from sitesim.config import RunConfig
    from sitesim.downtime import Outages
    from sitesim.schedulers.base import Scheduler
    from sitesim.site import Site

#: Why the site refuses a job on a platform (keys of ``Site.rejected``).
UNKNOWN_PARTITION = "unknown partition"
OVER_TIME_LIMIT = "time limit above its partition's"
NO_GPUS = "asks for GPUs its partition has not"
TOO_LARGE = "larger than its partition"

#: One row per record of a run on a platform.
PLACEMENT_DTYPE = np.dtype(
    [
        ("partition", np.int32),
        ("nodes", np.int32),
        ("cores", np.int64),
        ("gpus", np.int64),
        ("memory", np.int64),
        ("requeues", np.int32),
    ]
)

PARTITION_DTYPE = np.dtype(
    [
        ("partition", "U32"),
        ("nodes", np.int64),
        ("cores", np.int64),
        ("jobs", np.int64),
        ("wait_mean_min", np.float64),
        ("response_mean_min", np.float64),
        ("slowdown_mean", np.float64),
        ("bsld_mean", np.float64),
        ("core_utilization", np.float64),
    ]
)


@dataclass(frozen=True)
class PlatformRecords:
    """Where each record's job ran: ``table`` (one :data:`PLACEMENT_DTYPE` row per record;
    nodes, cores, GPUs and memory held by its last run) and ``nodes`` (its nodes as ranges,
    ``'0-3,17'``; empty if it never ran)."""

    table: np.ndarray
    nodes: list[str]


def attach(site: Site, platform: Platform, scheduler: Scheduler) -> None:
    """Give ``site`` the nodes of ``platform`` and the pass that schedules on them."""
    parts = Partitions(platform)

    def ended(job: Job) -> None:
        node_pass._changes += 1
        site._job_ended(job)

    def killed(job: Job, requeue: bool) -> None:
        node_pass._changes += 1
        if requeue:
            site.scheduler.submit(job, site.env.now)
            site.pass_due = True
        else:
            site._job_ended(job)

    machine = NodeMachine(site.env, parts, ended, killed)
    site.nodes = machine
    site.machine = machine  # type: ignore[assignment]  # (the site reads procs and running)
    site._node_pass = node_pass = NodePass(machine, scheduler)
    site._demand = _resolver(site, parts)  # type: ignore[method-assign]


def _resolver(site: Site, parts: Partitions) -> Any:
    platform = parts.platform
    swf = platform.swf_partitions()
    names = {p.name: k for k, p in enumerate(platform.partitions)}
    default = platform.default
    feasible: dict[Demand, bool] = {}
    mix = PartitionMix(parts, site.seed)

    def resolve(job: Job) -> tuple[str, str] | None:
        ask: Request | None = job.ask
        if ask is None:
            part, nodes, gpus, memory = mix.draw(job), 0, 0, 0
        else:
            nodes, gpus, memory = ask.nodes, ask.gpus, ask.memory
            if ask.partition is not None:
                found = names.get(ask.partition)
                if found is None:
                    return UNKNOWN_PARTITION, (
                        f"asks for partition {ask.partition!r}; the partitions are "
                        + ", ".join(names)
                    )
                part = found
            else:
                part = swf.get(ask.swf, default)
        if nodes > job.size:
            return TOO_LARGE, f"asks for {nodes} nodes for {job.size} cores: a core a node at least"
        if job.estimate > parts.max_time[part]:
            return OVER_TIME_LIMIT, (
                f"asks for {job.estimate:g} s in partition {platform.partitions[part].name!r}, "
                f"whose limit is {parts.max_time[part]:g} s"
            )
        if gpus > parts.max_gpus[part]:
            return NO_GPUS, (
                f"asks for {gpus} GPUs per node; partition "
                f"{platform.partitions[part].name!r} has at most {parts.max_gpus[part]}"
            )
        demand = Demand(part, int(job.size), nodes, gpus, memory)
        ok = feasible.get(demand)
        if ok is None:
            ok = feasible[demand] = fits_ever(parts, demand)
        if not ok:
            return TOO_LARGE, (
                f"asks for {job.size} cores"
                + (f" on {nodes} nodes" if nodes else "")
                + (f", {gpus} GPUs and {memory} MB per node" if gpus or memory else "")
                + f"; partition {platform.partitions[part].name!r} cannot hold it"
            )
        job.demand = demand
        return None

    return resolve


class PartitionMix:
    """The partition of each job that names none (a simulated user's): the default one, or,
    when the platform gives partitions a ``share``, one drawn by the shares among those that
    can hold the job (its cores and estimate), from a stream of the run's seed. A job no
    partition with a share can hold goes to the default partition."""

    #: Uniform numbers drawn at a time.
    BLOCK = 4096
    #: The random stream of the draws, beside the run's seed.
    STREAM = 0x9A27

    def __init__(self, parts: Partitions, seed: int) -> None:
        shares = np.array([p.share for p in parts.platform.partitions], dtype=np.float64)
        self.parts = parts
        self.default = parts.platform.default
        self.shares = shares if shares.sum() > 0 else None
        self._rng = np.random.default_rng([seed, self.STREAM])
        self._uniform: list[float] = []
        self._fits: dict[tuple[int, float], np.ndarray] = {}

    def draw(self, job: Job) -> int:
        if self.shares is None:
            return self.default
        key = (int(job.size), job.estimate)
        weights = self._fits.get(key)
        if weights is None:
            holds = np.array(
                [
                    cores >= job.size and job.estimate <= limit
                    for cores, limit in zip(
                        self.parts.total_cores, self.parts.max_time, strict=True
                    )
                ]
            )
            weights = np.cumsum(np.where(holds, self.shares, 0.0))
            self._fits[key] = weights
        if weights[-1] <= 0:
            return self.default
        if not self._uniform:
            self._uniform = self._rng.random(self.BLOCK).tolist()
        return int(np.searchsorted(weights, self._uniform.pop() * weights[-1], side="right"))


def build_site(
    config: RunConfig, procs: int, scheduler: Scheduler, horizon: float, **options: Any
) -> Site:
    """The site of a configured run: ``procs`` processors, or the configuration's platform
    with its outages up to ``horizon`` (drawn from the run's seed)."""
    from sitesim.site import Site

    platform = config.make_platform()
    site = Site(platform or procs, scheduler, seed=config.seed, **options)
    if platform is not None and platform.downtime and site.nodes is not None:
        from sitesim.downtime import Downtime

        names = {p.name: p.nodes for p in platform.partitions}
        downtime = Downtime.from_dict(platform.downtime, names, platform.nodes, platform.name, None)
        outages = downtime.outages(horizon, [config.seed, OUTAGE_STREAM])
        add_outages(site, outages, downtime.on_failure == "requeue")
    return site


#: The random stream of node failures, beside the run's seed.
OUTAGE_STREAM = 0x0D0E


# -- outages -----------------------------------------------------------------------------------
def add_outages(site: Site, outages: Outages, requeue: bool) -> None:
    """Take nodes down and bring them back as ``outages`` say; tell the pass about the
    maintenance windows (known in advance; failures are not)."""
    from sitesim.downtime import MAINTENANCE

    machine, node_pass = site.nodes, site._node_pass
    if machine is None or node_pass is None:
        raise ValueError("outages need a site on a platform of nodes, not on processors")
    machine.outages = outages
    maintenance = outages.kind == MAINTENANCE
    if maintenance.any():
        node_pass._windows = node_pass._window_allocs(_subset(outages, maintenance))
    n = len(outages)
    if not n:
        return
    times = np.concatenate([outages.up, outages.down])
    going = np.concatenate([np.zeros(n, bool), np.ones(n, bool)])  # (back before down)
    nodes = np.concatenate([outages.node, outages.node])
    order = np.lexsort((nodes, going, times))
    times, going, nodes = times[order], going[order], nodes[order]
    cut = np.flatnonzero((times[1:] != times[:-1]) | (going[1:] != going[:-1])) + 1
    groups = list(
        zip(np.split(times, cut), np.split(going, cut), np.split(nodes, cut), strict=True)
    )
    env = site.env
    step = [0]

    def fire(_event: Any) -> None:
        k = step[0]
        _, group_going, group_nodes = groups[k]
        if group_going[0]:
            machine.go_down(group_nodes, requeue)
        else:
            machine.come_up(group_nodes)
        site.scheduler.nodes_changed()
        node_pass._changes += 1
        node_pass.forget_past_windows(env.now)
        site.pass_due = True
        step[0] = k + 1
        if k + 1 < len(groups):
            env.after(float(groups[k + 1][0][0]) - env.now, callbacks, None)
        else:
            machine.outages_pending = False

    callbacks: list[Callable[[Any], None]] = [fire]
    machine.outages_pending = True
    env.after(float(groups[0][0][0]) - env.now, callbacks, None)


def _subset(outages: Outages, keep: np.ndarray) -> Outages:
    kept = (outages.node[keep], outages.down[keep], outages.up[keep], outages.kind[keep])
    return type(outages)(*kept)


# -- results -----------------------------------------------------------------------------------
def placement_records(site: Site, count: int) -> PlatformRecords:
    """The placement of the first ``count`` records (by job id)."""
    machine = site.nodes
    assert machine is not None
    placed = machine.placed
    table = np.zeros(count, dtype=PLACEMENT_DTYPE)
    table["partition"] = -1
    nodes = [""] * count
    for jid, (part, n, cores, gpus, memory, text) in placed.items():
        if jid <= count:
            table[jid - 1] = (part, n, cores, gpus, memory, machine.requeues.get(jid, 0))
            nodes[jid - 1] = text
    for job in site.jobs:  # waiting or running still (a run cut short), or never placed
        if job is not None and job.id <= count and job.demand is not None:
            table["partition"][job.id - 1] = job.demand.part
    return PlatformRecords(table, nodes)


def platform_summary(
    site: Site, records: np.ndarray, placement: PlatformRecords, window: tuple[float, float]
) -> tuple[dict[str, Any], np.ndarray]:
    """The platform's flat statistics and the per-partition table: utilization of the cores,
    GPUs and memory jobs held and availability (the share of node-time up) over ``window``;
    node-hours down, jobs requeued or failed and the work lost over the whole run."""
    machine = site.nodes
    assert machine is not None
    platform = machine.parts.platform
    t0, t1 = window
    length = max(t1 - t0, 0.0)
    table = placement.table
    ran = np.isfinite(records["start"]) & np.isfinite(records["end"])
    start = np.maximum(records["start"], t0)
    end = np.minimum(records["end"], t1)
    held = np.where(ran, np.maximum(end - start, 0.0), 0.0)

    def used(column: str, total: int) -> float:
        if not total or not length:
            return math.nan
        return float((table[column] * held).sum()) / (total * length)

    downtime = machine.outages
    down_hours = window_down = 0.0
    if downtime is not None:
        down_hours = downtime.node_hours(site.now)  # (the whole run)
        window_down = downtime.node_hours(t1) - downtime.node_hours(t0)
    summary: dict[str, Any] = {
        "nodes": platform.nodes,
        "cores": platform.total_cores,
        "gpus": platform.total_gpus,
        "core_utilization": used("cores", platform.total_cores),
        "gpu_utilization": used("gpus", platform.total_gpus),
        "memory_utilization": used("memory", platform.total_memory),
        "availability": 1.0 - window_down * HOUR / (platform.nodes * length) if length else 1.0,
        "node_hours_down": down_hours,
        "jobs_requeued": machine.requeued,
        "jobs_failed": machine.failed,
        "work_lost_core_h": machine.work_lost / HOUR,
    }
    rows = np.zeros(len(platform.partitions), dtype=PARTITION_DTYPE)
    parts = machine.parts
    in_window = window_jobs(records, window)
    chosen = table[in_window["id"] - 1]["partition"] if len(in_window) else np.zeros(0, np.int32)
    slowdown, bounded = slowdowns(in_window)
    for k, part in enumerate(platform.partitions):
        mine = chosen == k
        sel = in_window[mine]
        jobs = len(sel)
        rows[k]["partition"] = part.name
        rows[k]["nodes"] = len(part.nodes)
        rows[k]["cores"] = parts.total_cores[k]
        rows[k]["jobs"] = jobs
        rows[k]["wait_mean_min"] = _mean(sel["wait"]) / MINUTE
        rows[k]["response_mean_min"] = _mean(sel["response"]) / MINUTE
        rows[k]["slowdown_mean"] = _mean(slowdown[mine])
        rows[k]["bsld_mean"] = _mean(bounded[mine])
        in_part = table["partition"] == k
        busy = float((table["cores"][in_part] * held[in_part]).sum())
        total = parts.total_cores[k] * length
        rows[k]["core_utilization"] = busy / total if total else math.nan
    return summary, rows


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if len(values) else math.nan
