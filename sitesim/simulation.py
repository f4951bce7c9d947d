"""Site-level (closed) simulation: simulated users in the loop with the scheduler."""

from __future__ import annotations

from collections.abc import Callable

from sitesim.errors import require
from sitesim.models.users import UserModel
from sitesim.profile import WorkloadProfile, default_profile
from sitesim.schedulers.base import Scheduler
from sitesim.site import Site, SiteResult

DAY = 86_400.0
#: Default warm-up excluded from the metrics (days): one week, one full weekly cycle.
WARMUP_DAYS = 7.0


def simulate(
    users: int,
    scheduler: Scheduler,
    *,
    model: UserModel | None = None,
    procs: int = 128,
    days: float = 182.0,
    profile: WorkloadProfile | None = None,
    profile_name: str = "sitesim default profile",
    seed: int = 1,
    warmup_days: float = WARMUP_DAYS,
    progress: Callable[[float], None] | None = None,
) -> SiteResult:
    """Run ``users`` simulated users on a site for ``days`` days.

    Users submit until the horizon; the machine then drains so every job completes. Metrics
    cover the jobs submitted between the warm-up and the horizon.

    Args:
        users: number of users (ids 1..users).
        scheduler: a fresh scheduler.
        model: the user model (default: complete users with the spec's constants).
        procs: machine size.
        days: horizon in days.
        profile: the workload profile (default: the shipped one).
        profile_name: how the results name the profile.
        seed: root seed of every random stream.
        warmup_days: days excluded from the metrics.
        progress: called with the fraction of the horizon simulated so far.
    """
    require(days > 0, f"days must be > 0, got {days}")
    require(0 <= warmup_days < days, f"warm-up must be in [0, {days:g}) days, got {warmup_days}")
    model = model or UserModel()
    profile = profile or default_profile()
    horizon = days * DAY
    site = Site(
        procs,
        scheduler,
        config={
            "mode": "site-level",
            "users": users,
            "user_model": model.to_dict(),
            "days": days,
            "profile": profile_name,
            "profile_sources": [s.get("name") for s in profile.sources],
            "seed": seed,
        },
    )
    for user in model.users(users, profile, procs, seed):
        site.add_user(user)
    report = None if progress is None else (lambda now: progress(min(now / horizon, 1.0)))
    return site.run(
        until=horizon, warmup=warmup_days * DAY, progress=report, progress_step=horizon / 200
    )
