"""A researcher's own pieces, written as docs/howto/own-scheduler.md shows, in a module that
the tests name by its import path (``tests.fairshare:FairEASY``, ``tests.fairshare:population``):
an EASY with a fairshare priority, and a mixed population of users."""

from __future__ import annotations

from typing import Any

from sitesim.engine.job import Job
from sitesim.engine.site import User
from sitesim.models.users import UserModel
from sitesim.schedulers import EASY
from sitesim.workload.profile import WorkloadProfile


class FairEASY(EASY):
    """EASY backfilling in fairshare order: the jobs of the users who used the fewest
    processor-seconds lately first (usage halves every ``half_life`` hours)."""

    name = "FAIREASY"

    def __init__(self, half_life: float = 24.0) -> None:
        super().__init__(priority=self.fairshare)
        self.half_life = float(half_life)
        self.usage: dict[int, tuple[float, float]] = {}  # user -> (usage, when)

    def used(self, user: int, now: float) -> float:
        amount, when = self.usage.get(user, (0.0, now))
        return amount * 0.5 ** ((now - when) / (3600.0 * self.half_life))

    def fairshare(self, job: Job, now: float) -> float:
        return -self.used(job.user, now)

    def job_ended(self, job: Job, now: float) -> None:
        super().job_ended(job, now)
        self.usage[job.user] = (self.used(job.user, now) + job.size * (now - job.start), now)

    def params(self) -> dict[str, Any]:
        return {"half_life": self.half_life}


def population(uid: int, profile: WorkloadProfile, procs: int, seed: int) -> User:
    """User ``uid`` of a mixed population: every third a complete user, the others static."""
    kind = "complete" if uid % 3 == 0 else "static"
    return UserModel(kind=kind).user(uid, profile, procs, seed)
