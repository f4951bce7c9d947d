"""Schedulers that decide on observations: the scheduler an agent drives, and the ordinary
schedulers a trained linear policy becomes.

Each is an ordinary sitesim scheduler (:class:`~sitesim.engine.scheduler.Scheduler`: it decides
in ``select(now, resources)``), so it runs on processors and on platforms, from the command line
by its import path (``sitesim run -s sitesim.gym.policies:LinearPriority --param
weights=...``), in sweeps and reruns; the environment (:class:`sitesim.gym.env.SiteEnv`) drives
the same classes.

- :class:`Deciding` starts jobs one decision at a time on the observation of the pass
  (:mod:`sitesim.gym.observation`), with the action of :meth:`Deciding.decide`; in the actions
  ``"start"`` (start a job shown, or wait) or ``"next"`` (SchedGym's: the job to start next,
  everything waiting for it until it starts, or EASY's backfilling behind it).
- :class:`LinearPick` is a :class:`Deciding` whose decision is a linear score of each job's row.
- :class:`LinearPriority` is EASY backfilling whose order is a linear priority over every
  waiting job's row: the built-in backfilling scheduler the ``"priority"`` action drives.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from sitesim.engine.scheduler import Scheduler
from sitesim.errors import ConfigError, SchedulerError, require
from sitesim.gym.observation import JOB_FEATURES, Observer
from sitesim.schedulers.queue_order import EASY

if TYPE_CHECKING:
    from sitesim.engine.job import Job
    from sitesim.engine.resources import Resources

#: How a :class:`Deciding` scheduler's action is read.
ACTIONS = ("start", "next")
#: EASY's order as a :class:`LinearPriority`: the longest wait first (arrival order).
ARRIVAL_ORDER = tuple(1.0 if name == "wait" else 0.0 for name in JOB_FEATURES)


def parse_weights(weights: str | float | Sequence[float], count: int, what: str) -> np.ndarray:
    """Weights given as text (``"0.5,-1,0"``) or numbers, checked: ``count`` finite numbers.

    Raises:
        ConfigError: another count, or a value that is not a finite number.
    """
    if isinstance(weights, str):
        parts = [part.strip() for part in weights.split(",")] if weights.strip() else []
        try:
            values = [float(part) for part in parts]
        except ValueError:
            raise ConfigError(
                f"{what} must be {count} numbers separated by commas, got {weights!r}"
            ) from None
    elif isinstance(weights, int | float):
        values = [float(weights)]  # (one number on the command line)
    else:
        values = [float(value) for value in weights]
    require(
        len(values) == count and all(math.isfinite(v) for v in values),
        f"{what} must be {count} finite numbers (one per feature), got {len(values)}: {weights!r}",
    )
    return np.array(values)


def weights_text(weights: np.ndarray) -> str:
    """Weights as the text :func:`parse_weights` reads back exactly (shortest round trip)."""
    return ",".join(repr(float(w)) for w in weights)


class Deciding(Scheduler):
    """Starts jobs one decision at a time, on the observation of the pass.

    While a decision is to be made, the pass observes the first ``k`` waiting jobs and the
    machine (:class:`~sitesim.gym.observation.Observer`) and asks :meth:`decide` for an action,
    given the observation and the mask of the actions allowed:

    - ``actions="start"``: action ``i < k`` starts the ``i``-th job shown, which must fit now;
      action ``k`` waits (until the next pass: the next arrival or end). A decision is made
      whenever a job shown fits; waiting is allowed only while a job runs (an idle machine
      would have nothing to wake it but an arrival).
    - ``actions="next"``, SchedGym's: action ``i < k`` makes the ``i``-th job shown the next to
      start: now if it fits, else every other job waits until it has started (with
      ``backfill``, jobs that fit behind it start by EASY's rule, if they do not delay it).
      A decision is made whenever jobs wait and none is held.

    Args:
        k: waiting jobs shown, ``k >= 1``.
        actions: ``"start"`` or ``"next"``.
        backfill: with ``"next"``, backfill behind the job held.
        layout: the observation's layout, ``"sitesim"`` or ``"schedgym"``.
    """

    def __init__(
        self, k: int = 16, actions: str = "start", backfill: bool = False, layout: str = "sitesim"
    ) -> None:
        super().__init__()
        require(actions in ACTIONS, f"actions must be one of {', '.join(ACTIONS)}, got {actions!r}")
        self.observer = Observer(k, layout)
        self.k = k
        self.actions = actions
        self.backfill = bool(backfill)
        #: The job every other waits for (``"next"``), if one is held.
        self.held: Job | None = None
        #: The last observation, its mask and the jobs it showed.
        self.obs = np.zeros(0, np.float32)
        self.mask = np.zeros(self.actions_count, np.int8)
        self.shown: list[Job] = []
        #: Jobs this pass started and took off the queue at once (the first of ``started``).
        self.off_queue = 0

    @property
    def actions_count(self) -> int:
        """How many actions there are: ``k + 1`` (``"start"``: the last waits) or ``k``."""
        return self.k + 1 if self.actions == "start" else self.k

    # -- what the site tells it -------------------------------------------------------------
    def on_site(self, machine: Any) -> None:
        self.observer.on_site(machine)

    def submit(self, job: Job, now: float) -> None:
        self.queue.append(job)
        self.observer.submit(job, now)

    def job_ended(self, job: Job, now: float) -> None:
        self.observer.ended(job, now)

    def dequeue(self, started: list[Job]) -> None:
        self.observer.remove(self.queue, started[self.off_queue :])  # (the rest are off)

    def withdraw(self, jobs: list[Job]) -> None:
        self.observer.withdraw(self.queue, jobs)
        if self.held in jobs:
            self.held = None

    # -- the pass ----------------------------------------------------------------------------
    def select(self, now: float, resources: Resources) -> list[Job]:
        started: list[Job] = []
        self.off_queue = 0
        if not self.queue or (self.held is not None and not self.serve_held(resources, started)):
            return started
        while self.observe(now, resources, started):
            if not self.apply(self.decide(self.obs, self.mask), now, resources, started):
                break
        return started

    def decide(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """The action to take on observation ``obs``; ``mask[a]`` is 1 where action ``a`` is
        allowed."""
        raise NotImplementedError(f"{type(self).__name__} must define decide(obs, mask)")

    def observe(self, now: float, resources: Resources, started: Sequence[Job]) -> bool:
        """Observe the pass (:attr:`obs`, :attr:`mask`, :attr:`shown`) if a decision is to be
        made; True if one is."""
        queue = self.queue
        if not queue:
            return False
        shown = queue[: self.k]
        fits = self.observer.fits(shown, resources)
        if self.actions == "start" and not fits.any():
            return False
        n = len(shown)
        mask = np.zeros(self.actions_count, np.int8)
        if self.actions == "start":
            mask[:n] = fits
            mask[self.k] = bool(resources.running) or bool(started)
        else:
            mask[:n] = 1
        self.obs = self.observer.observe(now, queue, resources, started, fits)
        self.mask, self.shown = mask, shown
        return True

    def apply(self, action: int, now: float, resources: Resources, started: list[Job]) -> bool:
        """Take ``action`` (checked against :attr:`mask`) in the pass; True if a job started
        and the pass may decide again.

        Raises:
            SchedulerError: the action is not allowed.
        """
        mask = self.mask
        if not (isinstance(action, int | np.integer) and 0 <= action < len(mask) and mask[action]):
            allowed = ", ".join(str(a) for a in np.flatnonzero(mask))
            raise SchedulerError(
                f"scheduler {self.name or type(self).__name__}: at t = {now:g} s the policy "
                f"chose action {action!r}, which is not allowed (allowed: {allowed})"
            )
        if action >= len(self.shown):
            return False  # wait
        job = self.shown[action]
        where = resources.fits_now(job)
        if where is None:  # ("next": the job every other waits for)
            self.held = job
            if self.backfill:
                self.backfill_behind(job, resources, started)
            return False
        self.start_now(job, where, resources, started)
        return True

    def start_now(self, job: Job, where: Any, resources: Resources, started: list[Job]) -> None:
        """``job`` starts in this pass: off the queue at once, so that the next decision of
        the pass no longer shows it."""
        resources.take_now(job, where)
        started.append(job)
        self.observer.remove(self.queue, [job])
        self.off_queue += 1

    def serve_held(self, resources: Resources, started: list[Job]) -> bool:
        """Start the held job if it fits now (True: the pass may decide again), else backfill
        behind it if asked to."""
        held = self.held
        assert held is not None
        where = resources.fits_now(held)
        if where is None:
            if self.backfill:
                self.backfill_behind(held, resources, started)
            return False
        self.start_now(held, where, resources, started)
        self.held = None
        return True

    def backfill_behind(self, held: Job, resources: Resources, started: list[Job]) -> None:
        """EASY's backfilling behind ``held``: it is reserved at its earliest start, and the
        other waiting jobs, in arrival order, start if they fit clear of it."""
        jobs = [held, *(job for job in self.queue if job is not held)]
        resources.backfill(jobs, 0, started)

    def params(self) -> dict[str, Any]:
        return {
            "k": self.k, "actions": self.actions, "backfill": int(self.backfill),
            "layout": self.observer.layout,
        }  # fmt: skip


class LinearPick(Deciding):
    """Starts, at each decision, the job shown with the highest linear score of its row, or
    waits when the wait score is higher (the ``"start"`` actions, sitesim layout).

    Args:
        weights: one weight per job feature (:data:`~sitesim.gym.observation.JOB_FEATURES`),
            then the score of waiting: text (``"0,0,0,0,-1,1,0,0,0,-5"``) or numbers. The
            default starts the job that waited longest (first fit, in arrival order) and never
            waits.
        k: waiting jobs shown.
    """

    name = "LINEAR-PICK"

    def __init__(
        self,
        weights: str | Sequence[float] = weights_text(np.array([*ARRIVAL_ORDER, -1e9])),
        k: int = 16,
    ) -> None:
        super().__init__(k, "start")
        self.weights = parse_weights(weights, len(JOB_FEATURES) + 1, "LinearPick weights")

    def decide(self, obs: np.ndarray, mask: np.ndarray) -> int:
        width = len(JOB_FEATURES)
        scores = np.empty(self.k + 1)
        scores[: self.k] = obs[: self.k * width].reshape(self.k, width) @ self.weights[:width]
        scores[self.k] = self.weights[width]
        scores[mask == 0] = -np.inf
        return int(np.argmax(scores))

    def params(self) -> dict[str, Any]:
        return {"weights": weights_text(self.weights), "k": self.k}


class LinearPriority(EASY):
    """EASY backfilling in the order of a linear priority: each waiting job's row of the
    sitesim layout (:data:`~sitesim.gym.observation.JOB_FEATURES`) times the weights, highest
    first, ties by arrival. ``fits`` is read at the start of the pass.

    Args:
        weights: one weight per job feature, text (``"0,0,0,0,0,1,0,0,0"``) or numbers. The
            default, the wait alone, is EASY's arrival order.
    """

    name = "LINEAR"

    def __init__(self, weights: str | Sequence[float] = weights_text(np.array(ARRIVAL_ORDER))):
        super().__init__()
        self.weights = parse_weights(weights, len(JOB_FEATURES), "LinearPriority weights")
        self.observer = Observer(1)
        self._resources: Resources | None = None

    def on_site(self, machine: Any) -> None:
        self.observer.on_site(machine)

    def submit(self, job: Job, now: float) -> None:
        self.queue.append(job)
        self.observer.submit(job, now)

    def job_ended(self, job: Job, now: float) -> None:
        self.observer.ended(job, now)

    def dequeue(self, started: list[Job]) -> None:
        self.observer.remove(self.queue, started)

    def withdraw(self, jobs: list[Job]) -> None:
        self._withdrawn = True
        self.observer.withdraw(self.queue, jobs)

    def select(self, now: float, resources: Resources) -> list[Job]:
        if not resources.free or not self.queue:
            return []
        self._resources = resources
        try:
            return EASY.select(self, now, resources)
        finally:
            self._resources = None

    def ordered(self, now: float) -> list[Job]:
        queue = self.queue
        if len(queue) < 2:
            return queue
        scores = self.priorities(now, queue)
        order = np.lexsort((np.arange(len(queue)), -scores))
        return [queue[i] for i in order.tolist()]

    def priorities(self, now: float, queue: list[Job]) -> np.ndarray:
        """The priority of every waiting job, in queue order."""
        resources = self._resources
        if resources is None:
            raise SchedulerError(f"{self.name}: priorities are read in a pass only")
        fits = self.observer.fits(queue, resources)
        return self.observer.rows(now, len(queue), fits) @ self.weights

    def params(self) -> dict[str, Any]:
        return {"weights": weights_text(self.weights)}
