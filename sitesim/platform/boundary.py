"""A site on a platform of nodes: the site boundary's checks, outages, the placement records
and the per-partition statistics.

:func:`attach` gives a :class:`~sitesim.engine.site.Site` a
:class:`~sitesim.platform.machine.NodeMachine` and a :class:`~sitesim.platform.passes.NodePass`. At
submission each job's request (:class:`~sitesim.platform.placement.Request` in ``Job.ask``, or none)
is resolved to a :class:`~sitesim.platform.placement.Demand`: the partition named, else the one the
platform maps the job's SWF partition number to, else the default partition. A job its partition can
never run is refused by reason (lenient) or stops the run (strict), like any impossible job.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from sitesim.engine.job import Job
from sitesim.engine.metrics import HOUR, MINUTE, slowdowns, window_jobs
from sitesim.platform.description import Platform, format_nodes
from sitesim.platform.machine import NodeMachine
from sitesim.platform.passes import NodePass
from sitesim.platform.placement import Demand, Partitions, Request, fits_ever

if TYPE_CHECKING:
    from sitesim.engine.site import Site
    from sitesim.platform.downtime import Outages, OutageStream
    from sitesim.runs.config import RunConfig
    from sitesim.schedulers.base import Scheduler

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


#: A trace replayed on a platform is likely on the wrong one when the platform has this many
#: times more (or fewer) cores than the trace's machine (its header's MaxProcs)...
FAR_FROM_TRACE = 10.0
#: ... or when the offered load on the platform is below this (and no --load set it).
IDLE_LOAD = 0.05


def trace_mismatch(
    trace: str, trace_procs: int | None, platform: Platform, load: float, load_set: bool
) -> str | None:
    """A warning (one line) when a trace looks replayed on a platform it was not recorded
    on: the platform has :data:`FAR_FROM_TRACE` times more or fewer cores than the trace's
    MaxProcs, or (unless ``load_set``: the load was asked for) the offered load is below
    :data:`IDLE_LOAD`; None otherwise.

    Args:
        trace: the trace's name.
        trace_procs: its machine's size (the header's MaxProcs), None if unknown.
        platform: the platform it is replayed on.
        load: the offered load on the platform.
        load_set: the load was set (``--load``), not the trace's own.
    """
    cores = platform.total_cores
    problems = []
    if trace_procs:
        ratio = cores / trace_procs
        if not 1 / FAR_FROM_TRACE <= ratio <= FAR_FROM_TRACE:
            times = f"{ratio:,.0f} times as many" if ratio > 1 else f"1/{1 / ratio:,.0f} of them"
            problems.append(
                f"{trace} was recorded on {trace_procs:,} processors (its MaxProcs) and platform "
                f"{platform.name or '(unnamed)'} has {cores:,} cores, {times}"
            )
    if not load_set and math.isfinite(load) and load < IDLE_LOAD:
        problems.append(
            f"the offered load on {platform.name or 'the platform'} is {load:.3g}, below "
            f"{IDLE_LOAD:g}: the machine would stand nearly idle"
        )
    if not problems:
        return None
    hint = "" if load_set else " --load L sets the offered load"
    return "; ".join(problems) + f" (is it the trace's platform?{hint})"


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
    with its outages up to ``horizon`` (drawn from the run's seed as the run reaches them).

    Raises:
        ConfigError: the outages up to ``horizon`` are too many
            (:func:`sitesim.runs.budget.check_outages`).
    """
    from sitesim.engine.site import Site

    platform = config.make_platform()
    site = Site(platform or procs, scheduler, seed=config.seed, **options)
    if platform is not None and platform.downtime and site.nodes is not None:
        from sitesim.platform.downtime import Downtime
        from sitesim.runs.budget import check_outages

        check_outages(platform, horizon, config.platform)
        names = {p.name: p.nodes for p in platform.partitions}
        downtime = Downtime.from_dict(platform.downtime, names, platform.nodes, platform.name, None)
        outages = downtime.stream(horizon, [config.seed, OUTAGE_STREAM])
        add_outages(site, outages, downtime.on_failure == "requeue")
    return site


#: The random stream of node failures, beside the run's seed.
OUTAGE_STREAM = 0x0D0E


# -- outages -----------------------------------------------------------------------------------
def add_outages(site: Site, outages: Outages | OutageStream, requeue: bool) -> None:
    """Take nodes down and bring them back as ``outages`` say (rows, or a stream of them drawn
    as the run reaches them); tell the pass about the maintenance windows (known in advance;
    failures are not). A node whose outage never ends (``up`` infinite) stays down."""
    from sitesim.platform.downtime import MAINTENANCE, Downtime, Outages

    machine, node_pass = site.nodes, site._node_pass
    if machine is None or node_pass is None:
        raise ValueError("outages need a site on a platform of nodes, not on processors")
    if isinstance(outages, Outages):
        maintenance = _subset(outages, outages.kind == MAINTENANCE)
        blocks: Iterator[tuple[float, Outages]] = iter([(math.inf, outages)])
    else:  # (every window up to the horizon: the passes plan around them)
        windows = Downtime(outages.downtime.windows)
        maintenance = windows.outages(outages.horizon, outages.seed)
        blocks = outages.blocks()
    if len(maintenance):
        node_pass._windows = node_pass._window_allocs(maintenance)
    _OutageFeed(site, machine, node_pass, blocks, requeue).start()


class _OutageFeed:
    """Fires the outages' events in time order: at each instant with events, nodes back up
    first, then nodes going down, each a group (one event) in node order. Events are built a
    block of outages at a time; an outage that outlasts its block comes back in a later one."""

    def __init__(
        self,
        site: Site,
        machine: NodeMachine,
        node_pass: NodePass,
        blocks: Iterator[tuple[float, Outages]],
        requeue: bool,
    ) -> None:
        self.site, self.machine, self.node_pass = site, machine, node_pass
        self.blocks = blocks
        self.requeue = requeue
        self.callbacks: list[Callable[[Any], None]] = [self.fire]
        self.later = (np.empty(0, np.int64), np.empty(0))  # ups after the block: node, time
        self.times = np.empty(0)  # the block's events: time, going down, node (sorted)
        self.going = np.empty(0, bool)
        self.nodes = np.empty(0, np.int64)
        self.starts = np.zeros(1, np.int64)  # where each group begins (and the end)
        self.group = 0

    def start(self) -> None:
        """Schedule the first group (if any)."""
        self.machine.outages_pending = self._load()
        if self.machine.outages_pending:
            self._schedule()

    def _load(self) -> bool:
        """The events of the next blocks, up to the first block with any; False if none is
        left. An up time of ``math.inf`` is never fired."""
        for end, rows in self.blocks:
            node = np.concatenate([self.later[0], rows.node])
            time = np.concatenate([self.later[1], rows.up])
            now = time < end
            self.later = (node[~now & (time < math.inf)], time[~now & (time < math.inf)])
            times = np.concatenate([time[now], rows.down])
            going = np.concatenate([np.zeros(int(now.sum()), bool), np.ones(len(rows), bool)])
            nodes = np.concatenate([node[now], rows.node])
            if not len(times):
                continue
            order = np.lexsort((nodes, going, times))  # (back before down)
            self.times, self.going, self.nodes = times[order], going[order], nodes[order]
            cut = np.flatnonzero(
                (self.times[1:] != self.times[:-1]) | (self.going[1:] != self.going[:-1])
            )
            self.starts = np.concatenate([[0], cut + 1, [len(self.times)]])
            self.group = 0
            return True
        return False

    def _schedule(self) -> None:
        env = self.site.env
        env.after(float(self.times[self.starts[self.group]]) - env.now, self.callbacks, None)

    def fire(self, _event: Any) -> None:
        """The next group: its nodes go down (their jobs killed) or come back."""
        low, high = self.starts[self.group], self.starts[self.group + 1]
        nodes = self.nodes[low:high]
        if self.going[low]:
            self.machine.go_down(nodes, self.requeue)
        else:
            self.machine.come_up(nodes)
        site, node_pass = self.site, self.node_pass
        site.scheduler.nodes_changed()
        node_pass._changes += 1
        node_pass.forget_past_windows(site.env.now)
        site.pass_due = True
        self.group += 1
        if self.group + 1 < len(self.starts) or self._load():
            self._schedule()
        else:
            self.machine.outages_pending = False


def down_for_good(machine: NodeMachine, waiting: int) -> str:
    """Why a run on an idle machine with jobs waiting and no outage to come cannot go on."""
    down = format_nodes(np.flatnonzero(~machine.up))
    return (
        f"{waiting:,} jobs are still waiting on an idle machine after the last submission, and "
        f"nodes {down} are down for good (an outage that never ends, such as a maintenance "
        "window with duration UNLIMITED): jobs that need them would never start"
    )


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

    down_hours = machine.down_seconds(site.now) / HOUR  # (the whole run)
    window_down = (machine.down_seconds(t1) - machine.down_seconds(t0)) / HOUR
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
