"""Feedback trace replay: a trace's jobs, with the users' dependencies kept (users.md §4).

An open replay submits every job at its timestamp, however the simulated scheduler serves the
jobs before it. A feedback replay keeps the trace's jobs but restores the feedback loop: a job
that the trace shows was submitted *after its user saw an earlier job end* is submitted the
same think time after that job's **simulated** end. The rules (docs/reference/replay.md):

1. **Dependencies from the trace's fields.** When the trace has SWF field 17 (preceding job)
   for some jobs, those fields are the dependencies: a job naming a replayed job is submitted
   ``think`` seconds (field 18; when unknown, the trace's own gap from that job's end, if it is
   not negative) after that job's simulated end. Other jobs keep their timestamps.
2. **Dependencies inferred** when no job has field 17, per user and in submit order, with the
   think-time delimitation of the analysis (``last``, ``max`` or ``arrival``) and the session
   threshold (20 min):

   - a user's first job, and a job after a think time above the threshold (a new session),
     keeps its timestamp;
   - a job submitted before the job it follows ended (a negative think time: the same batch)
     keeps its offset from its batch's first job, whenever that one is submitted;
   - any other job (a think time in [0, threshold]) depends on the job the think time is
     measured from: with ``last`` the job before it, submitted ``think`` after that job's
     simulated end; with ``max`` the job of its session that ended last in the trace; with
     ``arrival`` (think = time between submissions) the job before it, ``think`` after that
     job's simulated *submission*, so nothing depends on service and the replay stays open.

   A job whose reference point is unknown (the trace has no wait for the earlier job), or
   whose user is unknown, keeps its timestamp. A trace whose think times are all unknown is
   refused (:func:`sitesim.runs.replay.feedback_plan`), as ``sitesim analyze`` refuses it.
3. **Load scaling** scales the timestamps kept; think times and offsets are the users' and are
   not scaled.

A job that depends on an earlier one records it as its preceding job (the batch's for a job
inside a batch) and the think time since its end, as site-level jobs do, so the output trace
carries the dependencies and a dependent job is never submitted before its preceding job ended.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
from simpy.events import Event

from sitesim.engine.job import Job
from sitesim.errors import require
from sitesim.workload.activity import SESSION_THRESHOLD, ThinkDefinition, session_structure

from .trace_user import TraceWorkload

if TYPE_CHECKING:
    from sitesim.engine.site import Site

#: How a job's submission is anchored.
AT_TIME, AFTER_END, AFTER_SUBMIT = 0, 1, 2


@dataclass(frozen=True)
class FeedbackPlan:
    """For each job of a workload (in its order): what its submission waits for.

    Attributes:
        kind: :data:`AT_TIME` (its timestamp), :data:`AFTER_END` (``delay`` after ``anchor``'s
            end) or :data:`AFTER_SUBMIT` (``delay`` after ``anchor``'s submission).
        anchor: index of the job it waits for (-1 for AT_TIME).
        delay: seconds after the anchor's event.
        source: ``"fields"`` (SWF 17/18) or ``"inferred"`` (and the delimitation).
    """

    kind: np.ndarray
    anchor: np.ndarray
    delay: np.ndarray
    source: str

    @property
    def dependent(self) -> int:
        """Jobs whose submission waits for another job."""
        return int((self.kind != AT_TIME).sum())

    @staticmethod
    def has_fields(workload: TraceWorkload) -> bool:
        """Whether the workload's dependencies come from its fields (some job has field 17)
        rather than inferred."""
        return bool((workload.preceding > 0).any())

    @classmethod
    def of(
        cls,
        workload: TraceWorkload,
        *,
        definition: ThinkDefinition = "last",
        threshold: float = SESSION_THRESHOLD,
    ) -> FeedbackPlan:
        """The plan of an (unscaled) workload: from fields 17/18 if any job has them, else
        inferred with ``definition`` and ``threshold`` (seconds)."""
        require(threshold > 0, f"session threshold must be > 0 s, got {threshold}")
        n = len(workload)
        kind = np.full(n, AT_TIME, dtype=np.int8)
        anchor = np.full(n, -1, dtype=np.int64)
        delay = np.zeros(n)
        end = workload.submit + workload.wait + np.minimum(workload.runtime, workload.estimate)
        if cls.has_fields(workload):
            index_of = {int(number): i for i, number in enumerate(workload.number.tolist())}
            for i, number in enumerate(workload.preceding.tolist()):
                k = index_of.get(number, -1)
                if number <= 0 or k < 0 or k >= i:
                    continue  # no dependency, or on a job not replayed before this one
                think = workload.think[i]
                if not think >= 0:
                    think = workload.submit[i] - end[k]
                if think >= 0:
                    kind[i], anchor[i], delay[i] = AFTER_END, k, think
            return cls(kind, anchor, delay, "fields")
        order = np.lexsort((np.arange(n), workload.submit, workload.user))
        user, submit = workload.user[order], workload.submit[order]
        think, session, batch = session_structure(user, submit, end[order], definition, threshold)
        batch_first = np.searchsorted(batch, batch)  # position of each batch's first job
        session_first = np.searchsorted(session, session)
        for pos in range(1, n):
            i, k = order[pos], order[pos - 1]
            gap = think[pos - 1]
            if session[pos] != session[pos - 1] or not np.isfinite(gap) or user[pos] < 0:
                continue  # a new session (or user, an unknown end or user): its timestamp
            if batch[pos] == batch[pos - 1]:  # submitted before the job it follows ended
                first = order[batch_first[pos]]
                kind[i], anchor[i] = AFTER_SUBMIT, first
                delay[i] = workload.submit[i] - workload.submit[first]
            elif definition == "arrival":
                kind[i], anchor[i], delay[i] = AFTER_SUBMIT, k, gap
            else:
                if definition == "max":  # the job of the session that ended last
                    earlier = order[session_first[pos] : pos]
                    k = earlier[np.argmax(end[earlier])]
                kind[i], anchor[i], delay[i] = AFTER_END, k, gap
        return cls(kind, anchor, delay, f"inferred ({definition}, {threshold / 60:g} min)")


class FeedbackTraceUser:
    """Submits a workload's jobs as its plan says: timestamps, or after earlier jobs.

    The jobs kept at their timestamps are fed lazily in time order, one pending timeout at a
    time; a dependent job is submitted by a callback when its anchor job ends (or is submitted)
    plus its delay. The process lasts until every job is submitted, so the site stays open.
    """

    def __init__(self, workload: TraceWorkload, plan: FeedbackPlan) -> None:
        require(len(plan.kind) == len(workload), "the plan must have one entry per job")
        self.workload = workload
        self.plan = plan
        self.jobs: list[Job | None] = [None] * len(workload)
        self._left = len(workload)
        self._done: Event | None = None
        dependent = np.flatnonzero(plan.kind != AT_TIME)
        self._children: dict[int, list[int]] = {}
        for i in dependent.tolist():
            self._children.setdefault(int(plan.anchor[i]), []).append(i)

    def run(self, site: Site) -> Generator[Event, Any, None]:
        """Submit the jobs kept at their timestamps; wait until the others are submitted."""
        env = site.env
        self._done = env.event()
        w = self.workload
        timed = np.flatnonzero(self.plan.kind == AT_TIME)
        for i, submit in zip(timed.tolist(), w.submit[timed].tolist(), strict=True):
            if submit > env.now:
                yield env.timeout(submit - env.now)
            self._submit(site, i)
        if self._left:
            yield self._done

    def _submit(self, site: Site, i: int) -> None:
        w, plan = self.workload, self.plan
        job = Job(
            int(w.size[i]), float(w.runtime[i]), float(w.estimate[i]), user=int(w.user[i]),
            trace_row=int(w.rows[i]), priority=int(w.priority[i]), utility=w.utility[i],
            stated=(w.stated or w.utility)[i],
        )  # fmt: skip
        anchor = self.jobs[plan.anchor[i]] if plan.kind[i] != AT_TIME else None
        if anchor is not None and plan.kind[i] == AFTER_END:
            job.preceding, job.think = anchor.id, site.now - anchor.end
        elif anchor is not None and anchor.preceding > 0:  # inside a batch: the batch's
            previous = site.jobs[anchor.preceding - 1]
            job.preceding, job.think = previous.id, site.now - previous.end
        site.submit(job)
        self.jobs[i] = job
        self._left -= 1
        for child in self._children.get(i, ()):
            if plan.kind[child] == AFTER_SUBMIT:
                self._later(site, child)
            else:
                site.completion(job).callbacks.append(partial(self._anchor_ended, site, child))
        if not self._left and self._done is not None and not self._done.triggered:
            self._done.succeed()

    def _later(self, site: Site, i: int) -> None:
        """Submit job ``i`` after its delay."""
        delay = float(self.plan.delay[i])
        if delay <= 0:
            self._submit(site, i)
        else:
            site.env.timeout(delay).callbacks.append(partial(self._delay_passed, site, i))

    def _anchor_ended(self, site: Site, i: int, _event: Event) -> None:
        self._later(site, i)

    def _delay_passed(self, site: Site, i: int, _event: Event) -> None:
        self._submit(site, i)
