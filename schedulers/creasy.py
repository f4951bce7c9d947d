"""CREASY: EASY backfilling with a user-aware priority (criticality + seniority).

    priority(j)    = α · criticality(j) + seniority(j)
    criticality(j) = 0.04 / (0.05 · R(j) + 1)²      (|d p_cont / dr|, users.md §3)
    seniority(j)   = minutes job j has waited so far
    R(j)           = waited so far + estimate, in minutes

A job whose response is still short is critical: delaying it is most likely to end its owner's
session. Criticality is at most 0.04 while seniority grows without bound, so every job
eventually has the highest priority and EASY's guarantee against starvation holds for every α.
α = 0 is exactly EASY.
"""

from __future__ import annotations

from typing import Any

from sitesim.errors import require
from sitesim.job import Job

from .queue_order import EASY

#: The α values studied in the original evaluation.
STUDIED_ALPHAS = (0.0, 1500.0, 3000.0, 4500.0, 6000.0)


def criticality(response_minutes: float) -> float:
    """|d p_cont / dr| of p_cont(r) = 0.8 / (0.05 r + 1), r in minutes."""
    return 0.04 / (0.05 * response_minutes + 1.0) ** 2


class CREASY(EASY):
    """EASY with priority α · criticality + seniority, recomputed at every pass.

    Args:
        alpha: weight of criticality against seniority (minutes), ``alpha >= 0``.
    """

    name = "CREASY"

    def __init__(self, alpha: float = 6000.0) -> None:
        require(alpha >= 0, f"alpha must be >= 0, got {alpha}")
        super().__init__(priority=self.job_priority)
        self.alpha = float(alpha)

    def job_priority(self, job: Job, now: float) -> float:
        """α · criticality(R) + seniority, in minutes."""
        waited = (now - job.submit) / 60.0
        return self.alpha * criticality(waited + job.estimate / 60.0) + waited

    def params(self) -> dict[str, Any]:
        return {"alpha": self.alpha}
