"""Reinforcement learning with users in the loop: a gymnasium environment over a site.

- :mod:`sitesim.gym.env`: :class:`~sitesim.gym.env.SiteEnv`, the environment (needs the ``rl``
  extra, ``gymnasium``): a site of users in the loop, or an open replay, on processors or a
  platform, whose scheduler asks the agent at each decision.
- :mod:`sitesim.gym.observation`: what the agent sees (the sitesim and SchedGym layouts).
- :mod:`sitesim.gym.policies`: the schedulers an agent drives, and those a trained linear policy
  becomes (:class:`~sitesim.gym.policies.LinearPriority`, :class:`~sitesim.gym.policies.
  LinearPick`): ordinary sitesim schedulers, run by ``sitesim run -s module:Class``.
- :mod:`sitesim.gym.rewards`: rewards that add up to a summary metric of the episode.
- :mod:`sitesim.gym.episodes`: where episodes come from (a configuration, the open replay of a
  site-level run's trace).
- :mod:`sitesim.gym.learn`: the cross-entropy method, a learner without a GPU or a framework.

Everything but :mod:`sitesim.gym.env` runs without gymnasium.
"""

from __future__ import annotations
