"""Site-level (closed) simulation: simulated users in the loop with the scheduler."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from typing import Any

from sitesim.config import DEFAULT_PROFILE, WARMUP_DAYS, SiteConfig
from sitesim.errors import ConfigError
from sitesim.models.users import UserKind, UserModel
from sitesim.profile import WorkloadProfile, read_profile
from sitesim.schedulers import Scheduler, create, registered
from sitesim.site import Site, SiteResult, User

DAY = 86_400.0

#: A custom user model: ``factory(uid, profile, procs, seed)`` returns user ``uid`` (1-based),
#: any object with a ``run(site)`` process method (:class:`sitesim.site.User`).
UserFactory = Callable[[int, WorkloadProfile, int, int], User]
Progress = Callable[[float], None]


def simulate(
    users: int,
    scheduler: str | Scheduler = "EASY",
    *,
    model: UserKind | UserModel | UserFactory = "complete",
    procs: int = 128,
    days: float = 182.0,
    warmup_days: float = WARMUP_DAYS,
    profile: str | os.PathLike[str] | WorkloadProfile | None = None,
    seed: int = 1,
    strict: bool = False,
    progress: Progress | None = None,
    **scheduler_params: Any,
) -> SiteResult:
    """Run ``users`` simulated users on a site for ``days`` days.

    Users submit until the horizon; the machine then drains so every job completes. Metrics
    cover the jobs submitted between the warm-up and the horizon.

    Args:
        users: number of users (ids 1..users).
        scheduler: a scheduler name (with its parameters as keyword arguments, e.g.
            ``alpha=3000``) or a fresh scheduler object.
        model: ``"complete"``, ``"static"``, ``"synthetic"`` (experiment 5's Poisson workload,
            configuration 1 at offered load 0.5; a :class:`UserModel` with a
            :class:`~sitesim.models.synthetic.SyntheticWorkload` chooses others), a
            :class:`UserModel`, or a user factory ``factory(uid, profile, procs, seed)``
            returning any object with ``run(site)``.
        procs: machine size.
        days: horizon in days.
        warmup_days: days excluded from the metrics.
        profile: a profile JSON file, a :class:`WorkloadProfile`, or None for the shipped one.
        seed: root seed of every random stream.
        strict: an impossible job stops the run instead of being skipped and counted.
        progress: called with the fraction of the horizon simulated so far.

    Returns:
        The result. Its ``config`` reproduces the run (:func:`sitesim.run`), unless the run
        used a custom scheduler object, user factory or in-memory profile (then it is None).
    """
    if isinstance(scheduler, str):
        scheduler = create(scheduler, **scheduler_params)
    elif scheduler_params:
        raise ConfigError("give scheduler parameters to the scheduler object, not simulate()")
    user_model = UserModel(kind=model) if isinstance(model, str) else model
    in_memory = isinstance(profile, WorkloadProfile)
    if profile is None or isinstance(profile, WorkloadProfile):
        profile_name = DEFAULT_PROFILE  # (a profile object is used as it is, below)
    else:
        profile_name = os.fspath(profile)
    # A configuration validates every setting, even of a run it cannot fully describe.
    config = SiteConfig(
        users=users,
        procs=procs,
        days=days,
        warmup_days=warmup_days,
        profile=profile_name,
        seed=seed,
        strict=strict,
        **(SiteConfig.model_settings(user_model) if isinstance(user_model, UserModel) else {}),
    )
    if registered(scheduler):
        config = config.replace(scheduler=scheduler.name, scheduler_params=scheduler.params())
    if registered(scheduler) and isinstance(user_model, UserModel) and not in_memory:
        return run_site(config, scheduler=scheduler, progress=progress)
    workload = profile if isinstance(profile, WorkloadProfile) else read_profile(config.profile)[0]
    if isinstance(user_model, UserModel):
        population: Sequence[User] = user_model.users(users, workload, procs, seed)
    else:
        population = [user_model(uid, workload, procs, seed) for uid in range(1, users + 1)]
    return _run(config, scheduler, population, progress)  # no configuration: custom pieces


def run_site(
    config: SiteConfig, *, scheduler: Scheduler | None = None, progress: Progress | None = None
) -> SiteResult:
    """Run the site-level simulation ``config`` describes.

    The profile is read from its file; when the configuration names a sha256, the file must
    still have it. The result's configuration is ``config`` with the sha256 filled in.

    Args:
        config: the run.
        scheduler: the scheduler the configuration describes, if already built.
        progress: called with the fraction of the horizon simulated so far.
    """
    profile, sha256 = read_profile(config.profile)
    if config.profile_sha256 is not None and config.profile_sha256 != sha256:
        raise ConfigError(
            f"profile {config.profile} has changed since the run: its sha256 is {sha256}, "
            f"the run used {config.profile_sha256}"
        )
    config = dataclasses.replace(config, profile_sha256=sha256)
    users = config.user_model().users(config.users, profile, config.procs, config.seed)
    result = _run(config, scheduler or config.make_scheduler(), users, progress)
    return dataclasses.replace(result, config=config)


def _run(
    config: SiteConfig, scheduler: Scheduler, users: Sequence[User], progress: Progress | None
) -> SiteResult:
    """The simulation itself, with every piece built."""
    site = Site(config.procs, scheduler, strict=config.strict, cancel_expired=config.cancel_expired)
    for user in users:
        site.add_user(user)
    horizon = config.days * DAY
    report = None if progress is None else (lambda now: progress(min(now / horizon, 1.0)))
    return site.run(
        until=horizon, warmup=config.warmup_days * DAY, progress=report, progress_step=horizon / 200
    )
