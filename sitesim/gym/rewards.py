"""An episode's reward: one summary metric of the run, paid as it accrues.

Each reward is a field of the episode's :class:`~sitesim.engine.metrics.Summary`, maximized
(:data:`REWARDS`: the negative mean bounded slowdown, wait or response; throughput, jobs per
session or the utility earned). Step *t* pays Φ(*t*) − Φ(*t* − 1), where Φ is the metric over
the jobs that ended so far (their values as their records hold them, with the summary's
formulas and measurement window); the step that ends the episode pays the rest, the
summary's value less everything paid before. So an episode's undiscounted return *is* the
summary's metric, never a proxy of it. What the last step pays beyond Φ's own increment (the
``correction`` of the last step's info) is rounding for every metric whose window the episode
knows as it runs; for throughput in an open replay, whose window ends with the trace's last
submission, all of it. With ``dense=False`` every step pays 0 and the last the whole metric.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from sitesim.engine.job import JobState
from sitesim.engine.metrics import BSLD_TAU, HOUR, MINUTE, Summary
from sitesim.errors import ConfigError, require

if TYPE_CHECKING:
    from sitesim.engine.job import Job

#: Reward name -> (the summary field, its sign: the reward is sign × field).
REWARDS: dict[str, tuple[str, float]] = {
    "bsld": ("bsld_mean", -1.0),
    "wait": ("wait_mean_min", -1.0),
    "response": ("response_mean_min", -1.0),
    "throughput": ("throughput_per_h", 1.0),
    "jobs_per_session": ("jobs_per_session", 1.0),
    "utility": ("utility_total", 1.0),
}
_ENDED = (JobState.COMPLETED, JobState.KILLED)


class Reward:
    """The reward of one episode (see the module docstring).

    Args:
        kind: a key of :data:`REWARDS`.
        warmup: seconds after the window's start reference left out: the window begins at
            ``warmup`` (a site) or at the first submission plus ``warmup`` (a replay).
        until: the horizon of a site (the window's end), or None for a replay.
        dense: pay the metric as it accrues (else all of it at the end).
    """

    def __init__(self, kind: str, warmup: float, until: float | None, dense: bool = True) -> None:
        require(kind in REWARDS, f"reward must be one of {', '.join(REWARDS)}, got {kind!r}")
        self.kind = kind
        self.field, self.sign = REWARDS[kind]
        self.dense = dense
        self._warmup = warmup
        self._start = warmup if until is not None else math.nan  # (a replay: first + warmup)
        self._hours = (until - warmup) / HOUR if until is not None else math.nan
        self._ended: list[Job] = []
        self._submitted = 0  # in the window (throughput)
        self._sum = 0.0  # of the per-job values of the window's ended jobs
        self._count = 0
        self._sessions: set[tuple[int, int]] = set()
        self.paid = 0.0

    def submitted(self, job: Job) -> None:
        """A job was accepted (at its submit time)."""
        if self._start != self._start:
            self._start = job.submit + self._warmup
        if self.dense and job.submit >= self._start:
            self._submitted += 1

    def ended(self, job: Job) -> None:
        """A job ended."""
        if self.dense:
            self._ended.append(job)

    @property
    def potential(self) -> float:
        """Φ: the metric (times its sign) over what happened so far."""
        if self._ended:
            self._take(self._ended)
            self._ended = []
        kind = self.kind
        if kind == "throughput":
            value = self._submitted / self._hours if self._hours == self._hours else 0.0
        elif kind == "jobs_per_session":
            value = self._count / len(self._sessions) if self._sessions else 0.0
        elif kind == "utility":
            value = self._sum
        else:
            value = self._sum / self._count if self._count else 0.0
        return self.sign * value

    def step(self, summary: Summary | None = None) -> float:
        """The reward of a step; ``summary``, the episode's, when the step ends it."""
        if summary is not None:
            return self.final(summary)
        if not self.dense:
            return 0.0
        reward = self.potential - self.paid
        self.paid += reward
        return reward

    def final(self, summary: Summary) -> float:
        """What the last step pays: the summary's metric less what was paid before.

        Raises:
            ConfigError: the summary has no value for the metric (NaN: jobs per session in a
                replay, whose jobs belong to no session; utility without utility functions).
        """
        value = float(getattr(summary, self.field))
        if math.isnan(value):
            raise ConfigError(
                f"reward {self.kind}: the episode's summary has no {self.field} (NaN); "
                + (
                    "its jobs belong to no session (a trace replay): choose another reward"
                    if self.kind == "jobs_per_session"
                    else "its jobs carry no utility function (a site with utility=True)"
                    if self.kind == "utility"
                    else "no job of its window ended"
                )
            )
        reward = self.sign * value - self.paid
        self.paid += reward
        return reward

    def correction(self, summary: Summary) -> float:
        """The summary's metric less Φ over every job (0 up to rounding where Φ is known as
        the episode runs)."""
        return self.sign * float(getattr(summary, self.field)) - self.potential

    def _take(self, jobs: list[Job]) -> None:
        """Add the window's ended jobs among ``jobs`` to the sums: each job's value as its
        record holds it (:func:`~sitesim.engine.records.job_records`: the response is end −
        submit, the runtime what it ran, :attr:`Job.duration <sitesim.engine.job.Job.
        duration>`) and as the summary computes it from there (the bounded slowdown of
        :func:`~sitesim.engine.metrics.slowdowns`, τ = :data:`~sitesim.engine.metrics.
        BSLD_TAU`), the same floating-point operations one job at a time."""
        start, kind = self._start, self.kind
        total, count = 0.0, 0
        for job in jobs:
            if job.submit < start or job.state not in _ENDED:
                continue
            if kind == "bsld":
                total += max((job.end - job.submit) / max(job.duration, BSLD_TAU), 1.0)
            elif kind == "wait":
                total += (job.start - job.submit) / MINUTE
            elif kind == "response":
                total += (job.end - job.submit) / MINUTE
            elif kind == "utility":
                if job.utility is None:
                    continue
                total += job.utility(job.end - job.submit)
            elif kind == "jobs_per_session":
                if job.session < 0:
                    continue
                self._sessions.add((job.user, job.session))
            else:
                continue
            count += 1
        self._sum += total
        self._count += count
