"""The gymnasium environment: a site (users in the loop, or an open replay) whose scheduler
asks an agent at each decision.

The agent drives an ordinary sitesim scheduler (:mod:`sitesim.gym.policies`) on an ordinary
run (:func:`sitesim.runs.runner.prepare`): when the scheduler's pass must decide and no action
is pending, it raises :class:`Decision`, which ends the run's :meth:`Site.run
<sitesim.engine.site.Site.run>` where it stands (every event before it processed, the pass not
yet made, nothing started in it); :meth:`SiteEnv.step` stores the action and calls
``Site.run`` again, which makes the pass again, now with the action, and goes on to the next
decision. The engine is unchanged: the state lives in the site's objects, not in a suspended
call. After a start in the ``"start"`` and ``"next"`` actions the scheduler asks for another
pass at the same instant, so each decision sees the jobs started before it as running.

An episode is one run; its result (``info["result"]`` of the last step, and
:attr:`SiteEnv.result`) is what :func:`sitesim.run` returns for the same run with this
scheduler: records, summary, ``sitesim.to_pandas(result)``, the run folder and the report.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, SupportsFloat

import gymnasium
import numpy as np
from gymnasium import spaces

from sitesim.engine.job import Job
from sitesim.engine.resources import Resources
from sitesim.engine.site import SiteResult
from sitesim.errors import ConfigError, SitesimError, require
from sitesim.gym.episodes import Episodes, episodes_of
from sitesim.gym.observation import JOB_FEATURES, Observer
from sitesim.gym.policies import ACTIONS, Deciding, LinearPriority
from sitesim.gym.rewards import Reward
from sitesim.runs.build import PreparedRun
from sitesim.runs.config import ReplayConfig, SiteConfig

#: The ways an action is read: a job to start or wait, SchedGym's next job, or the weights of
#: a linear priority for EASY backfilling.
ALL_ACTIONS = (*ACTIONS, "priority")


class Decision(Exception):
    """Raised by the agent's scheduler when a pass must decide and no action is pending: the
    run stops there for the agent (:class:`SiteEnv` catches it)."""


class ActionError(SitesimError, ValueError):
    """An action the environment cannot take: outside its action space, or not allowed now
    (see ``info["action_mask"]``)."""


class LegalDiscrete(spaces.Discrete):
    """A discrete action space whose :meth:`sample`, without a mask of its own, draws among the
    actions allowed now (:attr:`legal`, set by the environment at every step): a random agent
    written as ``env.action_space.sample()`` takes only legal actions."""

    def __init__(self, n: int) -> None:
        super().__init__(n)
        #: 1 for the actions allowed now (None: all).
        self.legal: np.ndarray | None = None

    def sample(self, mask: Any = None, probability: Any = None) -> np.int64:
        if mask is None and probability is None and self.legal is not None and self.legal.any():
            mask = self.legal
        return super().sample(mask=mask, probability=probability)


class _PickAgent(Deciding):
    """:class:`~sitesim.gym.policies.Deciding` asking the environment (``"start"``, ``"next"``)."""

    name = "AGENT"

    def __init__(self, env: SiteEnv) -> None:
        super().__init__(env.k, env.actions, env.backfill, env.layout)
        self.observer = env.observer_for()
        self.reward = Reward(env.reward_kind, 0.0, None)  # (the run's, once it is prepared)
        self.pending: int | None = None
        self.again: Callable[[], None] = _nothing

    def submit(self, job: Job, now: float) -> None:
        super().submit(job, now)
        self.reward.submitted(job)

    def job_ended(self, job: Job, now: float) -> None:
        super().job_ended(job, now)
        self.reward.ended(job)

    def select(self, now: float, resources: Resources) -> list[Job]:
        started: list[Job] = []
        self.off_queue = 0
        action, self.pending = self.pending, None
        if action is not None:  # the agent's answer to the pass it stopped
            if self.apply(action, now, resources, started) and self.more(resources):
                self.again()  # decide again at this instant, with the job started
            return started
        if not self.queue:
            return started
        if self.held is not None:
            if self.serve_held(resources, started) and self.more(resources):
                self.again()
            return started
        if self.observe(now, resources, started):
            raise Decision
        return started

    def more(self, resources: Resources) -> bool:
        """After a start: True if the next pass at this instant would ask the agent again
        (a job shown fits; with ``"next"``, a job waits), so that it is asked for."""
        queue = self.queue
        if self.actions == "next":
            return bool(queue)
        if not queue:
            return False
        return bool(np.count_nonzero(self.observer.fits(queue[: self.k], resources)))


class _PriorityAgent(LinearPriority):
    """:class:`~sitesim.gym.policies.LinearPriority` asking the environment for its weights at
    every pass where a job could start (``"priority"``)."""

    name = "AGENT"
    skip_idle_passes = True  # (select returns at once)

    def __init__(self, env: SiteEnv) -> None:
        super().__init__()
        self.observer = env.observer_for()
        self.reward = Reward(env.reward_kind, 0.0, None)  # (the run's, once it is prepared)
        self.pending: np.ndarray | None = None
        self.obs = np.zeros(0, np.float32)

    def submit(self, job: Job, now: float) -> None:
        super().submit(job, now)
        self.reward.submitted(job)

    def job_ended(self, job: Job, now: float) -> None:
        super().job_ended(job, now)
        self.reward.ended(job)

    def select(self, now: float, resources: Resources) -> list[Job]:
        weights, self.pending = self.pending, None
        if weights is not None:  # the agent's answer to the pass it stopped
            self.weights = weights
            return LinearPriority.select(self, now, resources)
        if not resources.free or not self.queue:
            return []
        if np.count_nonzero(self.observer.fits(self.queue, resources)):  # (else no order matters)
            self.obs = self.observer.observe(now, self.queue, resources, ())
            raise Decision
        return []


def _nothing() -> None:
    pass


#: How many seeds in a row :meth:`SiteEnv.reset` tries when an episode ends before its first
#: decision (a small site may have a seed whose jobs all start with no choice to make): the
#: next seed is played instead, and said in ``info["skipped_seeds"]``.
NO_DECISION_TRIES = 10


class SiteEnv(gymnasium.Env[np.ndarray, Any]):
    """A site whose scheduler asks the agent at each decision (see the module docstring).

    Observation: a flat ``float32`` vector of the first ``k`` waiting jobs and the machine
    (:mod:`sitesim.gym.observation`, sitesim or SchedGym layout); :attr:`feature_names` names
    each value. Actions (``actions``):

    - ``"start"``: ``Discrete(k + 1)``; ``i < k`` starts the job in row ``i`` (it must fit
      now), ``k`` waits until the next arrival or end. A decision comes whenever a job shown
      fits; waiting is allowed only while a job runs. ``info["action_mask"]`` (and
      :meth:`action_masks`) says which actions are allowed; the action space samples only
      those.
    - ``"next"``: ``Discrete(k)``, SchedGym's: the job in row ``i`` starts next, every other
      waiting for it (with ``backfill``, EASY's backfilling behind it).
    - ``"priority"``: ``Box(-1, 1, (9,))``, the weights of a linear priority over each waiting
      job's row (:class:`~sitesim.gym.policies.LinearPriority`) for EASY backfilling, at every
      pass where a job could start.

    Reward: a summary metric paid as it accrues, the episode's return being the metric
    (:mod:`sitesim.gym.rewards`). ``reset(seed=s)`` runs the episode of seed ``s`` (for a
    configuration, the run ``sitesim run --seed s`` makes); ``reset()`` draws the next seed
    from the environment's generator.

    Args:
        source: the episodes: a :class:`~sitesim.runs.config.SiteConfig` (users in the loop), a
            :class:`~sitesim.runs.config.ReplayConfig` (an open replay), or a function
            ``episode(seed, scheduler)`` (:mod:`sitesim.gym.episodes`, e.g.
            :class:`~sitesim.gym.episodes.OpenReplay`).
        k: waiting jobs shown, ``k >= 1``.
        actions: ``"start"``, ``"next"`` or ``"priority"``.
        reward: a key of :data:`sitesim.gym.rewards.REWARDS`.
        dense: pay the reward as it accrues (else all at the last step).
        backfill: with ``"next"``, backfill behind the job every other waits for.
        layout: ``"sitesim"`` or ``"schedgym"`` (with ``"start"`` or ``"next"``).
        max_runtime: SchedGym's runtime normalization, seconds.
        max_user: SchedGym's user-id normalization (default: the configuration's users, or 1).
    """

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012 - gymnasium's attribute

    def __init__(
        self,
        source: SiteConfig | ReplayConfig | Episodes,
        *,
        k: int = 16,
        actions: str = "start",
        reward: str = "bsld",
        dense: bool = True,
        backfill: bool = False,
        layout: str = "sitesim",
        max_runtime: float = 12 * 3600.0,
        max_user: int | None = None,
    ) -> None:
        require(
            actions in ALL_ACTIONS,
            f"actions must be one of {', '.join(ALL_ACTIONS)}, got {actions!r}",
        )
        require(
            actions != "priority" or layout == "sitesim",
            "actions='priority' weighs the rows of the sitesim layout: use layout='sitesim'",
        )
        if reward == "jobs_per_session" and isinstance(source, ReplayConfig):
            raise ConfigError(
                "reward jobs_per_session: a trace replay's jobs belong to no session; "
                "choose another reward or a SiteConfig"
            )
        Reward(reward, 0.0, None)  # (checks the name)
        self.episodes = episodes_of(source)
        if max_user is None:
            max_user = source.users if isinstance(source, SiteConfig) else 1
        self.k, self.actions, self.layout = k, actions, layout
        self.reward_kind, self.dense, self.backfill = reward, bool(dense), bool(backfill)
        self.max_runtime, self.max_user = max_runtime, max_user
        observer = self.observer_for()  # (checks k, layout and the normalizations)
        #: The name of each value of the observation.
        self.feature_names = observer.names
        low, high = observer.bounds()
        self.observation_space = spaces.Box(low, high, dtype=np.float32)
        self.action_space: spaces.Space[Any]
        if actions == "priority":
            width = len(JOB_FEATURES)
            self.action_space = spaces.Box(-1.0, 1.0, (width,), dtype=np.float32)
        else:
            self.action_space = LegalDiscrete(k + 1 if actions == "start" else k)
        self._empty = self._empty_observation(observer)
        self._prepared: PreparedRun | None = None
        self._agent: _PickAgent | _PriorityAgent | None = None
        self._begun = False
        #: The result of the last episode that ended (None before).
        self.result: SiteResult | None = None
        #: The seed of the current episode.
        self.episode_seed: int | None = None

    def observer_for(self) -> Observer:
        """A fresh observer with this environment's settings."""
        return Observer(self.k, self.layout, max_runtime=self.max_runtime, max_user=self.max_user)

    # -- the gymnasium interface --------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        first = int(seed) if seed is not None else int(self.np_random.integers(2**31 - 1))
        for episode_seed in range(first, first + NO_DECISION_TRIES):
            self._begin(episode_seed)
            obs = self._advance()
            if self.result is None:  # (a decision: the episode is under way)
                info = self._info()
                if episode_seed != first:
                    info["skipped_seeds"] = list(range(first, episode_seed))
                return obs, info
        raise ConfigError(
            f"the episodes of seeds {first} to {first + NO_DECISION_TRIES - 1} all ended before "
            "their first decision: they have no job that a decision could start"
        )

    def step(self, action: Any) -> tuple[np.ndarray, SupportsFloat, bool, bool, dict[str, Any]]:
        agent, prepared = self._agent, self._prepared
        if agent is None or prepared is None:
            raise ActionError(
                "step() without an episode under way: call reset() first (the last episode "
                "ended, or a step was interrupted)"
            )
        agent.pending = self._checked(action)
        prepared.site.pass_due = True  # (the pass the decision stopped is made again)
        reward = agent.reward
        obs = self._advance()
        result = self.result
        if result is None:
            return obs, reward.step(), False, False, self._info()
        correction = reward.correction(result.summary)
        info: dict[str, Any] = {"result": result, "correction": correction}
        if isinstance(self.action_space, spaces.Discrete):  # (no action follows: any)
            info["action_mask"] = np.ones(self.action_space.n, np.int8)
        return obs, reward.step(result.summary), True, False, info

    def action_masks(self) -> np.ndarray:
        """The actions allowed now (True), as sb3-contrib's MaskablePPO asks for them (all,
        once the episode ended)."""
        agent = self._agent
        if isinstance(agent, _PickAgent):
            return agent.mask.astype(bool)
        size = self.action_space.n if isinstance(self.action_space, spaces.Discrete) else 1
        return np.ones(int(size), dtype=bool)

    def close(self) -> None:
        self._prepared = self._agent = None

    # -- the run -----------------------------------------------------------------------------
    def _begin(self, seed: int) -> None:
        """Prepare the episode of ``seed``, with a fresh agent scheduler and reward."""
        self._prepared, self._agent, self.result, self._begun = None, None, None, False
        self.episode_seed = seed
        agent: _PickAgent | _PriorityAgent
        agent = _PriorityAgent(self) if self.actions == "priority" else _PickAgent(self)
        prepared = self.episodes(seed, agent)
        agent.reward = Reward(self.reward_kind, prepared.warmup, prepared.until, self.dense)
        if isinstance(agent, _PickAgent):
            agent.again = partial(setattr, prepared.site, "pass_due", True)
        self._agent, self._prepared = agent, prepared

    def _advance(self) -> np.ndarray:
        """Run to the next decision (its observation) or to the end (:attr:`result` set)."""
        prepared, agent = self._prepared, self._agent
        assert prepared is not None and agent is not None
        try:
            if self._begun:
                result = prepared.site.run(warmup=prepared.warmup)
            else:
                self._begun = True
                result = prepared.site.run(until=prepared.until, warmup=prepared.warmup)
        except Decision:
            if isinstance(self.action_space, LegalDiscrete) and isinstance(agent, _PickAgent):
                self.action_space.legal = agent.mask
            return agent.obs
        except BaseException:
            self._prepared = self._agent = None  # (a run stopped halfway cannot go on)
            raise
        self.result = prepared.complete(result)
        self._prepared = self._agent = None
        if isinstance(self.action_space, LegalDiscrete):
            self.action_space.legal = None
        return self._empty.copy()

    def _info(self) -> dict[str, Any]:
        agent = self._agent
        if isinstance(agent, _PickAgent):
            return {"action_mask": agent.mask}  # (a new array at each decision)
        return {}

    def _checked(self, action: Any) -> int | np.ndarray:
        """``action`` as the scheduler takes it.

        Raises:
            ActionError: outside the action space, or not allowed now.
        """
        agent = self._agent
        if isinstance(agent, _PriorityAgent):
            weights = np.asarray(action, dtype=np.float64)
            if weights.shape != (len(JOB_FEATURES),) or not np.all(np.abs(weights) <= 1.0):
                raise ActionError(
                    f"action {action!r}: the priority action is {len(JOB_FEATURES)} weights in "
                    f"[-1, 1], one per job feature ({', '.join(JOB_FEATURES)})"
                )
            return weights
        assert isinstance(agent, _PickAgent)
        n = agent.actions_count
        if type(action) is int and 0 <= action < n and agent.mask[action]:
            return action  # (the common case, at once)
        value = np.asarray(action)
        if value.shape != () or value.dtype.kind not in "iu" or not 0 <= int(value) < n:
            what = (
                f"0..{n - 2} start the job in that row, {n - 1} waits"
                if self.actions == "start"
                else f"0..{n - 1}: the job in that row starts next"
            )
            raise ActionError(f"action {action!r} is out of range: the actions are {what}")
        chosen = int(value)
        if not agent.mask[chosen]:
            allowed = ", ".join(str(a) for a in np.flatnonzero(agent.mask))
            why = (
                "waiting, while no job runs"
                if self.actions == "start" and chosen == n - 1
                else f"row {chosen}, which "
                + ("holds no job" if chosen >= len(agent.shown) else "does not fit now")
            )
            raise ActionError(
                f"action {chosen} is not allowed now ({why}); allowed: {allowed} "
                "(info['action_mask'])"
            )
        return chosen

    def _empty_observation(self, observer: Observer) -> np.ndarray:
        """The observation of an empty queue on an idle machine (the last step's)."""
        low, _ = observer.bounds()
        obs = np.zeros_like(low)
        if self.layout == "schedgym":
            rows = obs.reshape(self.k, -1)
            rows[:] = (0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0)
        else:
            obs[-1] = 1.0  # (cos of midnight; the rest 0)
        return obs


#: The environment's id: ``gymnasium.make("sitesim/Site-v0", source=config)`` once this module
#: is imported (or ``gymnasium.make("sitesim.gym.env:sitesim/Site-v0", ...)``, which imports it).
ENV_ID = "sitesim/Site-v0"
if ENV_ID not in gymnasium.registry:
    gymnasium.register(ENV_ID, entry_point="sitesim.gym.env:SiteEnv")
