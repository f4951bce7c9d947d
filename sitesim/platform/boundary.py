"""A site on a platform of nodes: the site boundary's checks, the placement records and the
per-partition statistics.

At submission each job's request (:class:`~sitesim.platform.placement.Request` in ``Job.ask``,
or none) is resolved to a :class:`~sitesim.platform.placement.Demand` (:class:`Resolver`): the
partition named, else the one the platform maps the job's SWF partition number to, else the
default partition (a simulated user's job: one drawn by the partitions' shares,
:class:`PartitionMix`). A job its partition can never run is refused by reason (lenient) or
stops the run (strict), like any impossible job. When the result is collected,
:class:`PartitionTables` gives where each job ran, the platform's statistics and one row per
partition.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from sitesim.engine.metrics import HOUR, MINUTE, slowdowns, window_jobs
from sitesim.platform.placement import Demand, Partitions, Request, fits_ever

if TYPE_CHECKING:
    from sitesim.engine.job import Job
    from sitesim.platform.description import Platform
    from sitesim.platform.machine import NodeMachine
    from sitesim.workload.request_mix import RequestMix
    from sitesim.workload.requests import JobRequests

#: Why the site refuses a job on a platform (keys of ``Site.rejected``).
UNKNOWN_PARTITION = "unknown partition"
OVER_TIME_LIMIT = "time limit above its partition's"
NO_GPUS = "asks for GPUs its partition has not"
NO_FEATURES = "asks for node features its partition has not"
TOO_LARGE = "larger than its partition"
#: The reasons above.
PLATFORM_REFUSALS = (UNKNOWN_PARTITION, OVER_TIME_LIMIT, NO_GPUS, NO_FEATURES, TOO_LARGE)

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
        ("gpus", np.int64),
        ("gpu_utilization", np.float64),
        ("memory_mb", np.int64),
        ("memory_utilization", np.float64),
    ]
)


@dataclass(frozen=True)
class PlatformRecords:
    """Where each record's job ran: ``table`` (one :data:`PLACEMENT_DTYPE` row per record;
    nodes, cores, GPUs and memory held by its last run) and ``nodes`` (its nodes as ranges,
    ``'0-3,17'``; empty if it never ran)."""

    table: np.ndarray
    nodes: list[str]


class Resolver:
    """Resolves each job's request to its demand on the platform (``job.demand``), or says why
    the job cannot run there: ``(reason, detail)``; called by the site for every submission."""

    def __init__(self, parts: Partitions, seed: int) -> None:
        platform = parts.platform
        self.parts = parts
        self._swf = platform.swf_partitions()
        self._names = {p.name: k for k, p in enumerate(platform.partitions)}
        self._feasible: dict[Demand, bool] = {}
        self._mix = PartitionMix(parts, seed)
        #: Memory is placed only on a platform that models it (slurm.conf: CR_*_Memory).
        self._memory = platform.total_memory > 0

    def __call__(self, job: Job) -> tuple[str, str] | None:
        parts = self.parts
        platform = parts.platform
        names = self._names
        ask: Request | None = job.ask
        nodeset = 0
        if ask is None:
            part, nodes, gpus, memory = self._mix.draw(job), 0, 0, 0
        else:
            nodes, gpus = ask.nodes, ask.gpus
            memory = ask.memory if self._memory else 0
            if ask.partition is not None:
                found = names.get(ask.partition)
                if found is None:
                    return UNKNOWN_PARTITION, (
                        f"asks for partition {ask.partition!r}; the partitions are "
                        + ", ".join(names)
                    )
                part = found
            else:
                part = self._swf.get(ask.swf, platform.default)
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
        if ask is not None and ask.constraint:
            try:
                nodeset = parts.nodeset(ask.constraint)
            except ValueError as err:
                return NO_FEATURES, str(err)
            if not parts.nodesets[nodeset][parts.nodes[part]].any():
                return NO_FEATURES, (
                    f"asks for nodes with {ask.constraint!r}; no node of partition "
                    f"{platform.partitions[part].name!r} has them (features: "
                    f"{', '.join(platform.features) or 'none'})"
                )
        demand = Demand(part, int(job.size), nodes, gpus, memory, nodeset)
        ok = self._feasible.get(demand)
        if ok is None:
            ok = self._feasible[demand] = fits_ever(parts, demand)
        if not ok:
            return TOO_LARGE, (
                f"asks for {job.size} cores"
                + (f" on {nodes} nodes" if nodes else "")
                + (f", {gpus} GPUs and {memory} MB per node" if gpus or memory else "")
                + (f", on nodes with {ask.constraint!r}" if nodeset and ask is not None else "")
                + f"; partition {platform.partitions[part].name!r} cannot hold it"
            )
        job.demand = demand
        return None


class RequestsWarning(UserWarning):
    """What the jobs of a run ask for that its platform cannot give or does not model."""


def check_requests(requests: JobRequests, platform: Platform) -> list[str]:
    """Refuse what no node of ``platform`` can ever give a trace's jobs: a feature no node
    has, more memory a node than any node has (when the platform places memory); the
    warnings: jobs that ask for memory on a platform that does not place it.

    Raises:
        InvalidJobError: ``file:line: field Constraints|ReqMem: problem``, at the first such
            job.
    """
    from sitesim.errors import InvalidJobError
    from sitesim.platform.features import unknown_features

    def fail(row: int, key: str, problem: str) -> InvalidJobError:
        where = requests.location(row) or f"job {row + 1}"
        return InvalidJobError(f"{where}: field {key}: {problem}")

    name = platform.name or "the platform"
    constraints = requests.constraint
    asked = np.flatnonzero(constraints != "")
    if len(asked):
        texts, first = np.unique(constraints[asked].astype(str), return_index=True)
        for text, k in zip(texts.tolist(), first.tolist(), strict=True):
            row = int(asked[k])
            try:
                unknown = unknown_features(text, platform)
            except ValueError as err:
                raise fail(row, "Constraints", str(err)) from None
            if unknown:
                known = ", ".join(platform.features) or "none"
                raise fail(
                    row, "Constraints",
                    f"{text!r}: feature {unknown[0]!r} is on no node of {name} (features: "
                    f"{known})",
                )  # fmt: skip
    memory = requests.memory_per_node_mb
    warnings: list[str] = []
    if platform.total_memory == 0:
        if (memory > 0).any():
            warnings.append(
                f"{int((memory > 0).sum()):,} jobs ask for memory; {name} does not place "
                "memory (no node memory, or slurm.conf without CR_*_Memory): ignored"
            )
        return warnings
    most = int(platform.memory.max())
    over = np.flatnonzero(memory > most)
    if len(over):
        row = int(over[0])
        raise fail(
            row, "ReqMem",
            f"{int(memory[row]):,} MB a node: no node of {name} has that much (the most: "
            f"{most:,} MB)",
        )  # fmt: skip
    return warnings


def check_request_mix(mix: RequestMix | None, platform: Platform, source: str) -> list[str]:
    """What the simulated users of a run on ``platform`` will ask for that it cannot give, as
    warnings (one line each), given the request mix they draw from (``source`` names it:
    ``profile NAME``).

    - the platform has GPUs and no job will ask for any (a profile without a request mix, or
      whose jobs ask for none);
    - the mix names partitions the platform has not, or node features no node has: those
      jobs are refused (unknown partition, node features), counted as other refusals are;
    - the mix asks for memory and the platform does not place memory: ignored.
    """
    from sitesim.platform.features import unknown_features

    name = platform.name or "the platform"
    warnings = []
    if platform.total_gpus and (mix is None or not mix.share(lambda c: c.gpus_per_node > 0)):
        why = "has no request mix" if mix is None else "has no job that asked for GPUs"
        warnings.append(
            f"{name} has {platform.total_gpus:,} GPUs and no job of the simulated users will ask "
            f"for any: {source} {why} (`sitesim profile site.sacct` builds one from a "
            "site's log)"
        )
    if mix is None:
        return warnings
    names = [p.name for p in platform.partitions]
    missing = sorted({c.partition for c in mix.classes if c.partition and c.partition not in names})
    if missing:
        share = mix.share(lambda c: c.partition in missing)
        warnings.append(
            f"{source}: {share:.1%} of its jobs ask for partitions {name} has not "
            f"({', '.join(missing)}; its partitions: {', '.join(names)}): they are refused"
        )

    def unknown(text: str) -> bool:
        try:
            return bool(text) and bool(unknown_features(text, platform))
        except ValueError:
            return True

    if mix.share(lambda c: unknown(c.constraint)):
        share = mix.share(lambda c: unknown(c.constraint))
        warnings.append(
            f"{source}: {share:.1%} of its jobs ask for node features no node of {name} "
            f"has (features: {', '.join(platform.features) or 'none'}): they are refused"
        )
    memory = mix.share(lambda c: c.memory_per_node_mb > 0)
    if memory and platform.total_memory == 0:
        warnings.append(
            f"{source}: {memory:.1%} of its jobs ask for memory; {name} does not place "
            "memory (no node memory, or slurm.conf without CR_*_Memory): ignored"
        )
    return warnings


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


#: The random stream of node failures, beside the run's seed.
OUTAGE_STREAM = 0x0D0E


# -- results -----------------------------------------------------------------------------------
class PartitionTables:
    """What a run on a platform adds to its result: where each job ran (``placement``), the
    platform's statistics (``platform_stats``) and the per-partition table
    (``per_partition``)."""

    def __init__(self, machine: NodeMachine) -> None:
        self.machine = machine

    def collect(
        self, records: np.ndarray, window: tuple[float, float], jobs: list[Job | None]
    ) -> dict[str, Any]:
        placement = self.placement(len(records), jobs)
        stats, partitions = self.summary(records, placement, window)
        return {"placement": placement, "platform_stats": stats, "per_partition": partitions}

    def placement(self, count: int, jobs: list[Job | None]) -> PlatformRecords:
        """The placement of the first ``count`` records (by job id)."""
        machine = self.machine
        table = np.zeros(count, dtype=PLACEMENT_DTYPE)
        table["partition"] = -1
        nodes = [""] * count
        for jid, (part, n, cores, gpus, memory, text) in machine.placed.items():
            if jid <= count:
                table[jid - 1] = (part, n, cores, gpus, memory, machine.requeues.get(jid, 0))
                nodes[jid - 1] = text
        for job in jobs:  # waiting or running still (a run cut short), or never placed
            if job is not None and job.id <= count and job.demand is not None:
                table["partition"][job.id - 1] = job.demand.part
        return PlatformRecords(table, nodes)

    def summary(
        self, records: np.ndarray, placement: PlatformRecords, window: tuple[float, float]
    ) -> tuple[dict[str, Any], np.ndarray]:
        """The platform's flat statistics and the per-partition table: utilization of the
        cores, GPUs and memory jobs held and availability (the share of node-time up) over
        ``window``; node-hours down, jobs requeued or failed and the work lost over the whole
        run."""
        machine = self.machine
        platform = machine.parts.platform
        t0, t1 = window
        length = max(t1 - t0, 0.0)
        table = placement.table
        ran = np.isfinite(records["start"]) & np.isfinite(records["end"])
        start = np.maximum(records["start"], t0)
        end = np.minimum(records["end"], t1)
        held = np.where(ran, np.maximum(end - start, 0.0), 0.0)

        def used(column: str, total: int, rows: Any = slice(None)) -> float:
            """What the jobs of ``rows`` held of ``column`` over ``total`` and the window."""
            if not total or not length:
                return math.nan
            return float((table[column][rows] * held[rows]).sum()) / (total * length)

        down_hours = machine.down_seconds(machine.env.now) / HOUR  # (the whole run)
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
        chosen = (
            table[in_window["id"] - 1]["partition"] if len(in_window) else np.zeros(0, np.int32)
        )
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
            gpus = int(platform.gpus[parts.nodes[k]].sum())
            memory = int(platform.memory[parts.nodes[k]].sum())  # (0: memory not placed)
            rows[k]["core_utilization"] = used("cores", int(parts.total_cores[k]), in_part)
            rows[k]["gpus"], rows[k]["memory_mb"] = gpus, memory
            rows[k]["gpu_utilization"] = used("gpus", gpus, in_part)
            rows[k]["memory_utilization"] = used("memory", memory, in_part)
        return summary, rows


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if len(values) else math.nan
