"""Invariants of platforms of nodes on random platforms and workloads (Hypothesis).

- N one-core nodes in one partition give the schedules of ``--procs N`` (every scheduler but
  conservative backfilling, the planners and SLURM's backfill, which reserve concrete nodes
  for many waiting jobs: a node a reservation holds is not interchangeable with another, so
  their schedules on nodes can differ);
- conservative backfilling on nodes never starts a job later than the start it promised, and
  its plan carried from pass to pass gives the schedule of a plan made anew at every pass, as
  its compressions that keep the last one's answers where nothing changed on a job's nodes
  give those of compressions that search for every job;
- no node's cores, GPUs or memory are ever over-allocated, and a job runs only on nodes of its
  partition; the machine's count of each partition's free cores and idle nodes is exact
  after every start and end;
- no job runs into a maintenance window on its nodes;
- EASY never starts the job it reserves first in a pass (the first that does not fit, in
  arrival order) after the time it reserved for it;
- an earliest start reused from an earlier pass (nothing changed on its group's nodes) gives
  the schedule that searching it again gives. (The reservations of other partitions'
  first blocked jobs can move later, when a job ahead of them in the queue takes their nodes
  first at a later pass; so can Slurm's.)
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any
from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sitesim.engine.job import Job, JobState
from sitesim.engine.site import Site
from sitesim.models.trace_user import TraceUser, TraceWorkload
from sitesim.platform.description import Platform
from sitesim.platform.downtime import Downtime, Outages
from sitesim.platform.machine import NodeMachine
from sitesim.platform.placement import Request
from sitesim.platform.resources import NodePlan, NodeResources
from sitesim.schedulers import EASY, REGISTRY, create
from tests.property.test_invariants import Workload, workloads

#: Schedulers that need utility functions to order jobs are left to their own tests.
SCHEDULERS = sorted(set(REGISTRY) - {"FIRSTPRICE", "PRIO"})
#: Those whose reservations on one partition never depend on which nodes they hold (the
#: planners reserve concrete nodes for every waiting job, SLURM's backfill for every job it
#: tests in a cycle, as Slurm's does; a node a reservation holds is not interchangeable with
#: another: a job reserved now on a node free now keeps a short job off it, where on
#: processors any of the cores free then would do).
ONE_RESERVATION = sorted(set(SCHEDULERS) - {"CONSERVATIVE", "PLAN", "DYNP", "SLURM"})


def one_core_nodes(procs: int) -> Platform:
    """N one-core nodes in one exclusive partition, run on the node machine (the memory makes
    it more than the plain processor machine, and no job asks for any)."""
    return Platform.from_dict(
        {
            "nodes": [{"type": "n", "count": procs, "cores": 1, "memory": 1}],
            "partitions": [{"name": "all", "nodes": ["n"]}],
        }
    )


def replay(jobs: list[tuple[float, int, float, float]], machine: Any, scheduler: str) -> Any:
    submit, size, runtime, estimate = (list(column) for column in zip(*jobs, strict=True))
    site = Site(machine, create(scheduler))
    site.add_user(TraceUser(TraceWorkload.from_jobs(submit, size, runtime, estimate)))
    return site.run()


@given(workloads(max_jobs=25), st.sampled_from(ONE_RESERVATION))
def test_one_core_nodes_give_the_schedules_of_procs(workload: Workload, name: str) -> None:
    procs, jobs = workload
    plain = replay(jobs, procs, name).records
    nodes = replay(jobs, one_core_nodes(procs), name)
    assert nodes.platform is not None  # (it ran on the node machine)
    assert np.array_equal(plain["start"], nodes.records["start"])
    assert np.array_equal(plain["end"], nodes.records["end"])


# -- random platforms --------------------------------------------------------------------------
@st.composite
def platforms(draw: st.DrawFn, downtime: bool = False) -> Platform:
    """One to three node types, one to three partitions over random (overlapping) node sets,
    exclusive or shared, first or best fit; optionally weekly-ish maintenance windows."""
    types = [
        {
            "type": f"t{k}",
            "count": draw(st.integers(1, 4)),
            "cores": draw(st.integers(1, 8)),
            "gpus": draw(st.sampled_from([0, 0, 1, 2])),
            "memory": draw(st.sampled_from([0, 8, 16])),
        }
        for k in range(draw(st.integers(1, 3)))
    ]
    if len(types) == 1 and types[0]["cores"] == 1 and not types[0]["gpus"]:
        types[0]["memory"] = 8  # (not the plain processor machine: these test the nodes)
    total = sum(t["count"] for t in types)
    parts = []
    for k in range(draw(st.integers(1, 3))):
        members = draw(st.sets(st.integers(0, total - 1), min_size=1, max_size=total))
        parts.append(
            {
                "name": f"p{k}",
                "nodes": [",".join(map(str, sorted(members)))],
                "allocation": draw(st.sampled_from(["exclusive", "shared"])),
            }
        )
    data: dict[str, Any] = {
        "nodes": types,
        "partitions": parts,
        "placement": draw(st.sampled_from(["first_fit", "best_fit"])),
    }
    if downtime:
        windows = [
            {
                "start": str(draw(st.integers(0, 4))),  # minutes
                "duration": str(draw(st.integers(1, 3))),
                "every": str(draw(st.sampled_from([6, 10]))),
                "nodes": [str(draw(st.integers(0, total - 1)))],
            }
            for _ in range(draw(st.integers(1, 2)))
        ]
        data["downtime"] = {"maintenance": windows}
    return Platform.from_dict(data)


Asked = tuple[float, int, float, float, Request]


@st.composite
def requests(draw: st.DrawFn, platform: Platform, max_jobs: int = 20) -> list[Asked]:
    """Jobs (submit, cores, runtime, estimate, request), some of which no partition can hold."""
    jobs = []
    for _ in range(draw(st.integers(1, max_jobs))):
        part = draw(st.sampled_from(platform.partitions))
        cores = draw(st.integers(1, 12))
        nodes = draw(st.sampled_from([0, 0, 1, 2]))
        ask = Request(
            partition=part.name,
            nodes=min(nodes, cores),
            gpus=draw(st.sampled_from([0, 0, 0, 1])),
            memory=draw(st.sampled_from([0, 0, 4])),
        )
        submit = float(draw(st.sampled_from([0, 0, 30, 60]) | st.integers(0, 600)))
        runtime = float(draw(st.integers(0, 200)))
        estimate = float(draw(st.sampled_from([runtime, runtime + 30]) | st.integers(1, 300)))
        jobs.append((submit, cores, runtime, max(estimate, 1.0), ask))
    return sorted(jobs, key=lambda j: j[0])


class Submitter:
    """Submits the jobs at their times."""

    def __init__(self, jobs: list[Asked]) -> None:
        self.jobs = jobs

    def run(self, site: Site) -> Generator[Any, Any, None]:
        for submit, cores, runtime, estimate, ask in self.jobs:
            if submit > site.now:
                yield site.env.timeout(submit - site.now)
            site.submit(Job(cores, runtime, estimate, ask=ask))


def run_on(platform: Platform, jobs: list[Asked], scheduler: Any) -> Site:
    site = Site(platform, scheduler)
    if platform.downtime:
        site.machine.add_outages(outages_of(platform), requeue=True)
    site.add_user(Submitter(jobs))
    site.run()
    return site


def outages_of(platform: Platform) -> Outages:
    names = {p.name: p.nodes for p in platform.partitions}
    downtime = Downtime.from_dict(platform.downtime, names, platform.nodes, "test", None)
    return downtime.outages(2000.0, 1)


def check_allocations(site: Site, platform: Platform) -> list[Job]:
    """Every job that ran: on nodes of its partition, and no node over-allocated at any
    instant (from the allocations each job held)."""
    ran = [job for job in site.jobs if job is not None and job.state is not JobState.REJECTED]
    events: list[tuple[float, int, Job]] = []
    for job in ran:
        assert job.state in (JobState.COMPLETED, JobState.KILLED)  # every job ended
        assert job.start >= job.submit
        part = platform.partitions[job.demand.part]
        assert set(job.alloc.nodes.tolist()) <= set(part.nodes)
        assert int(job.alloc.cores.sum()) >= job.size
        events += [(job.start, 1, job), (job.end, 0, job)]
    use = np.zeros((3, platform.nodes), dtype=np.int64)
    cap = np.stack([platform.cores, platform.gpus, platform.memory])
    for _, starting, job in sorted(events, key=lambda e: (e[0], e[1])):
        held = np.stack([job.alloc.cores, job.alloc.gpus, job.alloc.memory])
        use[:, job.alloc.nodes] += held if starting else -held
        assert (use <= cap).all()
    return ran


@settings(deadline=None)
@given(st.data(), st.sampled_from(sorted(REGISTRY)))
def test_no_node_is_over_allocated_and_jobs_stay_in_their_partition(
    data: st.DataObject, name: str
) -> None:
    platform = data.draw(platforms())
    jobs = data.draw(requests(platform))
    site = run_on(platform, jobs, create(name))
    ran = check_allocations(site, platform)
    assert len(ran) + sum(site.rejected.values()) == len(jobs)


@settings(deadline=None)
@given(st.data(), st.booleans())
def test_each_partitions_free_cores_and_idle_nodes_are_counted_exactly(
    data: st.DataObject, downtime: bool
) -> None:
    """What the machine counts per partition as jobs start and end (what a pass screens a job
    with) is what a count afresh gives after each start and end."""
    platform = data.draw(platforms(downtime=downtime))
    jobs = data.draw(requests(platform))
    member = [np.asarray(p.nodes) for p in platform.partitions]
    hold = NodeMachine._hold

    def counted(machine: NodeMachine, *args: Any) -> None:
        hold(machine, *args)
        cores = machine.available.cores
        idle = cores == platform.cores
        assert machine.part_free.tolist() == [int(cores[nodes].sum()) for nodes in member]
        assert machine.part_idle.tolist() == [int(idle[nodes].sum()) for nodes in member]

    with mock.patch.object(NodeMachine, "_hold", counted):
        run_on(platform, jobs, create("EASY"))


@settings(deadline=None)
@given(st.data(), st.sampled_from(SCHEDULERS))
def test_no_job_runs_into_a_maintenance_window_on_its_nodes(data: st.DataObject, name: str) -> None:
    platform = data.draw(platforms(downtime=True))
    jobs = data.draw(requests(platform))
    site = run_on(platform, jobs, create(name))
    ran = check_allocations(site, platform)
    outages = outages_of(platform)
    for job in ran:
        mine = np.isin(outages.node, job.alloc.nodes)
        overlap = (outages.down[mine] < job.end) & (outages.up[mine] > job.start)
        assert not overlap.any(), f"job {job.id} ran [{job.start}, {job.end}) into a window"


#: Two groups of partitions (``a`` and ``low`` share nodes; ``b`` has its own), all shared: a
#: job's earliest start is often found again while the other group changes.
TWO_GROUPS_DATA: dict[str, Any] = {
    "nodes": [{"type": "a", "count": 3, "cores": 4}, {"type": "b", "count": 2, "cores": 4}],
    "partitions": [
        {"name": "a", "nodes": ["a"], "allocation": "shared"},
        {"name": "low", "nodes": ["0-1"], "allocation": "shared"},
        {"name": "b", "nodes": ["b"], "allocation": "shared"},
    ],
}
TWO_GROUPS = Platform.from_dict(TWO_GROUPS_DATA)
#: The same, its nodes failing now and then (jobs killed and requeued, nodes back later);
#: and with ``low`` and ``b`` giving whole nodes (``low``'s shared with ``a``'s jobs).
TWO_GROUPS_FAILING = Platform.from_dict(
    {**TWO_GROUPS_DATA, "downtime": {"failures": {"mtbf": "00:30:00", "mttr": "00:01:00"}}}
)
TWO_GROUPS_WHOLE = Platform.from_dict(
    {
        **TWO_GROUPS_DATA,
        "partitions": [
            {**p, "allocation": "shared" if p["name"] == "a" else "exclusive"}
            for p in TWO_GROUPS_DATA["partitions"]
        ],
    }
)


@st.composite
def cores_only(draw: st.DrawFn) -> list[Asked]:
    """Jobs asking for cores alone on TWO_GROUPS, some of them running past their estimates."""
    jobs = []
    for _ in range(draw(st.integers(5, 40))):
        runtime = float(draw(st.integers(1, 200)))
        estimate = float(draw(st.sampled_from([runtime, runtime + 50]) | st.integers(1, 300)))
        part = draw(st.sampled_from(["a", "low", "b"]))
        submit = float(draw(st.sampled_from([0, 100, 200]) | st.integers(0, 400)))
        jobs.append((submit, draw(st.integers(1, 8)), runtime, estimate, Request(part)))
    return sorted(jobs, key=lambda j: j[0])


#: Schedulers whose passes ask the machine for a blocked job's earliest start (as GA's do; the
#: others plan on a plan of their own, or start jobs in order only).
ASK_EARLIEST = ["CREASY", "EASY", "ECON", "PRIORITY"]


@settings(deadline=None, max_examples=max(200, settings.default.max_examples))
@given(
    cores_only(),
    st.sampled_from(ASK_EARLIEST),
    st.sampled_from([TWO_GROUPS, TWO_GROUPS_FAILING, TWO_GROUPS_WHOLE]),
)
def test_a_start_found_again_is_the_one_searched_again(
    jobs: list[Asked], name: str, platform: Platform
) -> None:
    reused = run_on(platform, jobs, create(name))
    with mock.patch.object(NodeResources, "_untouched", lambda *_: None):  # (always search)
        searched = run_on(platform, jobs, create(name))
    assert placements(reused) == placements(searched)


def test_a_start_on_whole_nodes_is_searched_again_once_an_end_may_bring_it_forward() -> None:
    """An early end of a job estimated to end no earlier than the start found makes its node
    idle from now: the whole-node job's start comes forward (to 200 here, from 500), and a
    backfilled job that would run past it must wait."""
    platform = Platform.from_dict(
        {
            "nodes": [{"type": "n", "count": 3, "cores": 4}],
            "partitions": [
                {"name": "s", "nodes": ["n"], "allocation": "shared"},
                {"name": "x", "nodes": ["n"], "allocation": "exclusive"},
            ],
        }
    )
    jobs = [
        (0.0, 4, 100.0, 100.0, Request("s")),  # node 0 until 100
        (0.0, 4, 200.0, 200.0, Request("s")),  # node 1 until 200
        (0.0, 1, 60.0, 500.0, Request("s")),  # a core of node 2, estimated until 500
        (1.0, 12, 100.0, 100.0, Request("x")),  # every node, whole: from 500, found at 2
        (2.0, 1, 5.0, 5.0, Request("s")),
        (70.0, 1, 250.0, 250.0, Request("s")),  # would run past 200
    ]
    for always_search in (False, True):
        with mock.patch.object(
            NodeResources, "_untouched", (lambda *_: None) if always_search else
            NodeResources._untouched,
        ):  # fmt: skip
            site = run_on(platform, jobs, create("EASY"))
        assert [j.start for j in site.jobs if j is not None] == [0, 0, 0, 200, 2, 300]


class RecordingEASY(EASY):
    """EASY that remembers the first reservation it made in each pass: (job, reserved
    start)."""

    def __init__(self) -> None:
        super().__init__()
        self.made: list[tuple[Job, float]] = []
        self._passes = self._reserved_in = 0

    def select(self, now: float, resources: Any) -> list[Job]:
        self._passes += 1
        return super().select(now, resources)

    @property  # type: ignore[override]
    def reservation(self) -> tuple[Job, float] | None:
        return self.made[-1] if self.made else None

    @reservation.setter
    def reservation(self, value: tuple[Job, float] | None) -> None:
        if value is not None and self._reserved_in != self._passes:
            self._reserved_in = self._passes
            self.made.append(value)


@settings(deadline=None)
@given(st.data())
def test_easy_on_a_platform_never_delays_its_first_reserved_job(data: st.DataObject) -> None:
    platform = data.draw(platforms())
    jobs = data.draw(requests(platform, max_jobs=25))
    policy = RecordingEASY()
    run_on(platform, jobs, policy)
    for job, reserved in policy.made:
        assert job.start <= reserved, f"job {job.id} reserved at {reserved}, began {job.start}"


@settings(deadline=None)
@given(st.data())
def test_conservative_on_a_platform_never_starts_a_job_after_its_promise(
    data: st.DataObject,
) -> None:
    platform = data.draw(platforms())
    jobs = data.draw(requests(platform, max_jobs=25))
    policy = create("CONSERVATIVE")
    site = run_on(platform, jobs, policy)
    for job in site.jobs:
        if job is not None and job.id in policy.promised:  # type: ignore[attr-defined]
            assert job.start <= policy.promised[job.id]  # type: ignore[attr-defined]


def placements(site: Site) -> list[tuple[float, float, list[int] | None, list[int] | None]]:
    """Each job's start, end, nodes and cores on each."""
    return [
        (job.start, job.end, *((None, None) if job.alloc is None else
                               (job.alloc.nodes.tolist(), job.alloc.cores.tolist())))
        for job in site.jobs
        if job is not None
    ]  # fmt: skip


def search_every_time(plan: NodePlan, job: Job, start: float, where: Any) -> tuple[float, Any]:
    """:meth:`NodePlan.move_up` without the last compression's answers."""
    moved = plan.profile.earliest_on(where, job.estimate, start)
    return plan.earliest(job) if moved is None else (moved, where)


#: Conservative backfilling's shortcuts on nodes, each undone: a plan made anew at every pass
#: instead of one carried; compressions that search for every job instead of keeping the last
#: one's answers.
UNDONE = {
    "carried": lambda: mock.patch.object(NodeResources, "carries_plans", False),
    "kept": lambda: mock.patch.object(NodePlan, "move_up", search_every_time),
}


@settings(deadline=None, max_examples=max(400, settings.default.max_examples))
@given(st.data(), st.sampled_from(sorted(UNDONE)))
def test_conservative_on_a_platform_schedules_as_without_its_shortcuts(
    data: st.DataObject, shortcut: str
) -> None:
    platform = data.draw(platforms(downtime=data.draw(st.booleans())))
    jobs = data.draw(requests(platform, max_jobs=25))
    fast = run_on(platform, jobs, create("CONSERVATIVE"))
    with UNDONE[shortcut]():
        plain = run_on(platform, jobs, create("CONSERVATIVE"))
    assert placements(fast) == placements(plain)
