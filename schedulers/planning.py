"""Planning-based scheduling and Streit's self-tuning dynP (schedulers.md).

A *planning-based* scheduler (as in the CCS resource manager) plans, at every pass, a full
schedule of all waiting jobs in its policy's order, each at its earliest fit for its whole
estimate in the availability profile, and starts the jobs planned to start now. Backfilling is
implicit: a later job planned into a hole starts before an earlier one. The policies: ``FCFS``
(submit time), ``SJF`` (estimate ascending), ``LJF`` (estimate descending), ties by arrival.

*Self-tuning dynP* switches the active policy at run time: at a *self-tuning step* it plans
under each of FCFS, SJF and LJF, scores every plan with a *self-tuning metric* over the waiting
jobs' planned starts and estimated ends (smaller is better), and a *decider* picks the policy.
*Half* self-tuning steps on job submissions; *full* also when a job ends earlier than estimated.

The plan is kept between passes while it stays valid: when nothing arrived and every job that
ended ended at its estimate, the running jobs free their processors when the plan assumed they
would, and the jobs due now are the ones the plan put at now.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sitesim.engine.job import Job
from sitesim.engine.resources import Resources
from sitesim.errors import require

from .base import Scheduler

#: The basic policies, in the order the deciders break ties.
POLICIES: tuple[str, ...] = ("FCFS", "SJF", "LJF")

_ORDER: dict[str, Callable[[Job], tuple[float, int]]] = {
    "FCFS": lambda job: (job.submit, job.id),
    "SJF": lambda job: (job.estimate, job.id),
    "LJF": lambda job: (-job.estimate, job.id),
}


def plan(order: Sequence[Job], resources: Resources) -> tuple[list[float], list[Any]]:
    """Plan ``order``: each job, in turn, at its earliest fit for its estimate in a new plan of
    ``resources`` (:meth:`~sitesim.engine.resources.Resources.new_plan`). Returns the starts
    and where each job is planned (None: nowhere, at an infinite start)."""
    place = resources.new_plan().place
    starts, wheres = [], []
    for job in order:
        start, where = place(job)
        starts.append(start)
        wheres.append(where)
    return starts, wheres


def _by_start(entry: tuple[float, Job, Any]) -> float:
    return entry[0]


def _check_policy(policy: str) -> str:
    name = str(policy).upper()
    require(name in POLICIES, f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    return name


class Planning(Scheduler):
    """Planning-based scheduling under one policy.

    Args:
        policy: ``FCFS``, ``SJF`` or ``LJF``.
    """

    name = "PLAN"

    def __init__(self, policy: str = "FCFS") -> None:
        super().__init__()
        self.policy = _check_policy(policy)
        #: the current plan: (planned start, job, where), by start; None when it must be made
        #: anew.
        self._plan: list[tuple[float, Job, Any]] | None = None
        self._arrivals = 0  # submissions since the last pass
        self._early = 0  # jobs that ended before their estimate since the last pass

    def submit(self, job: Job, now: float) -> None:
        super().submit(job, now)
        self._arrivals += 1
        self._plan = None

    def job_ended(self, job: Job, now: float) -> None:
        if now != job.start + job.estimate:  # early (or, if the machine allowed it, late)
            self._early += 1
            self._plan = None

    def withdraw(self, jobs: list[Job]) -> None:
        super().withdraw(jobs)
        self._plan = None

    def nodes_changed(self) -> None:
        self._plan = None

    def ordered(self, policy: str) -> list[Job]:
        """The waiting jobs in ``policy``'s order."""
        return sorted(self.queue, key=_ORDER[policy])

    def select(self, now: float, resources: Resources) -> list[Job]:
        if self._plan is None and self.queue:
            order, (starts, wheres) = self.choose(now, resources)
            self._plan = sorted(zip(starts, order, wheres, strict=True), key=_by_start)
        self._arrivals = self._early = 0
        if not self._plan:
            return []
        due = 0
        for start, _, _ in self._plan:
            if start > now:
                break
            due += 1
        started = []
        for _, job, where in self._plan[:due]:
            if where is None or not resources.free_now(where):  # (planned on other nodes)
                where = resources.fits_now(job)
            if where is None:  # still waiting: plan again at the next pass
                self._plan = None
                continue
            resources.take_now(job, where)
            started.append(job)
        if self._plan is not None:
            del self._plan[:due]
        self.count_started(started)
        return started

    def choose(
        self, now: float, resources: Resources
    ) -> tuple[list[Job], tuple[list[float], list[Any]]]:
        """The plan of this pass: the waiting jobs in order, their planned starts and where
        (dynP decides the policy here)."""
        order = self.ordered(self.policy)
        return order, plan(order, resources)

    def count_started(self, started: list[Job]) -> None:
        """Jobs started now, under the active policy (dynP counts them)."""

    def params(self) -> dict[str, Any]:
        return {"policy": self.policy}


# -- self-tuning metrics: each maps (submit, start, estimate, size) of the waiting jobs to a score


def _weighted(values: list[float], weights: list[float]) -> float:
    total = sum(weights)
    return sum(v * w for v, w in zip(values, weights, strict=True)) / total if total else 0.0


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def score(metric: str, jobs: Sequence[Job], starts: Sequence[float]) -> float:
    """A plan's self-tuning ``metric`` over ``jobs`` planned at ``starts`` (smaller is better).

    Responses are planned start + estimate - submit; slowdowns are response / estimate (an
    estimate of 0 counts as 1 s); widths are sizes and areas size x estimate. Sums run over the
    jobs in the given order, so plans that place every job alike score exactly alike.
    """
    ends = [start + job.estimate for job, start in zip(jobs, starts, strict=True)]
    if metric == "makespan":
        return max(ends)
    responses = [end - job.submit for job, end in zip(jobs, ends, strict=True)]
    if metric.startswith("SLD"):
        values = [r / max(job.estimate, 1.0) for job, r in zip(jobs, responses, strict=True)]
    else:
        values = responses
    if metric.endswith("wA"):
        return _weighted(values, [job.size * job.estimate for job in jobs])
    if metric.endswith("wW"):
        return _weighted(values, [float(job.size) for job in jobs])
    return _mean(values)


#: The self-tuning metrics.
METRICS: tuple[str, ...] = ("ART", "ARTwA", "ARTwW", "SLD", "SLDwA", "SLDwW", "makespan")
DECIDERS: tuple[str, ...] = ("simple", "advanced", "preferred")
TUNING: tuple[str, ...] = ("half", "full")


def decide(decider: str, scores: dict[str, float], current: str, preferred: str = "SJF") -> str:
    """The policy a decider picks from the plans' ``scores`` (smaller is better).

    - ``simple``: the minimum; ties go to FCFS, then SJF, then LJF.
    - ``advanced``: as simple, but the current policy is kept when it ties the minimum.
    - ``preferred``: on the preferred policy, stay unless another is strictly better; on
      another, return to the preferred one as soon as it is at least as good as the best,
      otherwise decide as ``advanced``.
    """
    best = min(scores.values())
    if decider == "preferred":
        if scores[preferred] <= best:
            return preferred
    elif decider == "simple":
        return next(p for p in POLICIES if scores[p] == best)
    if scores[current] == best:
        return current
    return next(p for p in POLICIES if scores[p] == best)


class DynP(Planning):
    """Self-tuning dynP: planning-based, switching between FCFS, SJF and LJF.

    Args:
        metric: the self-tuning metric: ``ART``, ``ARTwA``, ``ARTwW``, ``SLD``, ``SLDwA``,
            ``SLDwW`` or ``makespan``.
        decider: ``simple``, ``advanced`` or ``preferred``.
        preferred: the preferred policy of the ``preferred`` decider (``SJF``, ``FCFS``,
            ``LJF``).
        tuning: ``half`` (a self-tuning step on job submissions) or ``full`` (also when a job
            ends earlier than its estimate).
        policy: the policy active before the first step.
    """

    name = "DYNP"

    def __init__(
        self,
        metric: str = "SLDwA",
        decider: str = "advanced",
        preferred: str = "SJF",
        tuning: str = "half",
        policy: str = "FCFS",
    ) -> None:
        super().__init__(policy)
        self.initial = self.policy
        require(metric in METRICS, f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
        require(
            decider in DECIDERS, f"decider must be one of {', '.join(DECIDERS)}, got {decider!r}"
        )
        require(tuning in TUNING, f"tuning must be one of {', '.join(TUNING)}, got {tuning!r}")
        self.metric = metric
        self.decider = decider
        self.preferred = _check_policy(preferred)
        self.tuning = tuning
        self.steps = 0
        self.switches = 0
        self.started_under = dict.fromkeys(POLICIES, 0)
        #: the scores of the last self-tuning step, by policy
        self.last_scores: dict[str, float] = {}

    def choose(
        self, now: float, resources: Resources
    ) -> tuple[list[Job], tuple[list[float], list[Any]]]:
        if not (self._arrivals or (self.tuning == "full" and self._early)):
            return super().choose(now, resources)
        plans = self.step(now, resources)
        return plans[self.policy]

    def step(
        self, now: float, resources: Resources
    ) -> dict[str, tuple[list[Job], tuple[list[float], list[Any]]]]:
        """One self-tuning step: plan under every policy, score each plan, and let the decider
        set the active policy. Returns each policy's plan (order, starts)."""
        self.steps += 1
        canonical = sorted(self.queue, key=_ORDER["FCFS"])
        position = {job: k for k, job in enumerate(canonical)}
        plans: dict[str, tuple[list[Job], tuple[list[float], list[Any]]]] = {}
        scores: dict[str, float] = {}
        by_arrival = [0.0] * len(canonical)
        for policy in POLICIES:
            order = self.ordered(policy)
            planned = plan(order, resources)
            for job, start in zip(order, planned[0], strict=True):
                by_arrival[position[job]] = start
            plans[policy] = (order, planned)
            scores[policy] = score(self.metric, canonical, by_arrival)
        self.last_scores = scores
        chosen = decide(self.decider, scores, self.policy, self.preferred)
        if chosen != self.policy:
            self.switches += 1
            self.policy = chosen
        return plans

    def count_started(self, started: list[Job]) -> None:
        self.started_under[self.policy] += len(started)

    def params(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "decider": self.decider,
            "preferred": self.preferred,
            "tuning": self.tuning,
            "policy": self.initial,
        }

    def stats(self) -> dict[str, Any]:
        return {
            "self_tuning_steps": self.steps,
            "policy_switches": self.switches,
            **{f"started_{policy}": n for policy, n in self.started_under.items()},
        }
