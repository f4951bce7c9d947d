"""Learning a linear priority without a GPU or a framework: the cross-entropy method.

The cross-entropy method (Rubinstein 1999; for policies, Szita & Lőrincz 2006, "Learning Tetris
Using the Noisy Cross-Entropy Method") keeps a Gaussian over the weights: each iteration draws a
population of weight vectors, scores each, and refits the Gaussian to the best few (the elite),
the spread kept above a floor (the "noise" of Szita & Lőrincz) so that it does not collapse
early. Here the weights are those of :class:`~sitesim.gym.policies.LinearPriority`, EASY
backfilling in the order of a linear priority over each waiting job's row, the ``"priority"``
action of :class:`~sitesim.gym.env.SiteEnv`, and a candidate's score is an episode's return
(:func:`episode_return`), the summary metric the environment pays.

An episode is run as an ordinary run of :class:`~sitesim.gym.policies.LinearPriority` rather
than stepped through the environment: the environment with the same weights at every step
gives the same schedule and the same return (a test checks it), at a fraction of the cost.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sitesim.errors import require
from sitesim.gym.episodes import Episodes, episodes_of
from sitesim.gym.policies import LinearPriority
from sitesim.gym.rewards import REWARDS
from sitesim.runs.config import ReplayConfig, SiteConfig

#: ``score(candidates, iteration)``: each candidate's score, higher better.
Score = Callable[[list[np.ndarray], int], Sequence[float]]


@dataclass(frozen=True)
class Training:
    """What :func:`cross_entropy` found.

    Attributes:
        weights: the Gaussian's mean after the last iteration: the policy learned.
        spread: its standard deviations.
        history: per iteration, the best, elite mean and population mean scores.
    """

    weights: np.ndarray
    spread: np.ndarray
    history: list[dict[str, Any]] = field(default_factory=list)


def cross_entropy(
    score: Score,
    mean: Sequence[float],
    *,
    spread: float = 0.5,
    iterations: int = 8,
    population: int = 16,
    elite: int = 4,
    floor: float = 0.05,
    bounds: tuple[float, float] = (-1.0, 1.0),
    seed: int = 0,
) -> Training:
    """The cross-entropy method (see the module docstring).

    Args:
        score: the candidates' scores, higher better, given the iteration (0-based): score
            every candidate of an iteration on the same episodes (common random numbers).
        mean: the first Gaussian's mean (e.g. EASY's weights).
        spread: its standard deviation in every weight.
        iterations, population, elite: iterations, candidates each, and how many best ones
            the next Gaussian is fitted to.
        floor: the smallest standard deviation kept.
        bounds: candidates are clipped to them (the ``"priority"`` action's [-1, 1]).
        seed: the seed of the draws.
    """
    require(iterations >= 1, f"iterations must be >= 1, got {iterations}")
    require(1 <= elite <= population, f"elite must be in 1..population, got {elite}")
    rng = np.random.default_rng(seed)
    centre = np.clip(np.asarray(mean, dtype=float), *bounds)
    sd = np.full(len(centre), float(spread))
    history = []
    for iteration in range(iterations):
        draws = centre + sd * rng.standard_normal((population, len(centre)))
        candidates = list(np.clip(draws, *bounds))
        candidates[0] = centre  # (the current mean is scored too: progress is measured)
        scores = np.asarray(score(candidates, iteration), dtype=float)
        best = np.argsort(-scores, kind="stable")[:elite]
        chosen = np.array([candidates[i] for i in best])
        centre = chosen.mean(axis=0)
        sd = np.maximum(chosen.std(axis=0), floor)
        history.append(
            {
                "iteration": iteration + 1,
                "mean_score": float(scores[0]),
                "best_score": float(scores[best[0]]),
                "elite_score": float(scores[best].mean()),
                "population_score": float(scores.mean()),
            }
        )
    return Training(weights=centre, spread=sd, history=history)


def episode_return(
    weights: Sequence[float], source: SiteConfig | ReplayConfig | Episodes, seed: int, reward: str
) -> float:
    """The return of the episode of ``seed`` under :class:`LinearPriority` with ``weights``:
    the reward's summary metric (times its sign) of the run, as :class:`~sitesim.gym.env.
    SiteEnv` pays it with these weights at every step."""
    field_name, sign = REWARDS[reward]
    result = episodes_of(source)(seed, LinearPriority(weights)).run()
    return sign * float(getattr(result.summary, field_name))
