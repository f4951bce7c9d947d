"""Site-level (closed) simulation: simulated users in the loop with the scheduler."""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Literal, Unpack

from sitesim.engine.collector import fewer_collections
from sitesim.engine.site import SiteResult, User
from sitesim.errors import ConfigError
from sitesim.import_paths import is_import_path, load, path_of
from sitesim.models.users import UserKind, UserModel
from sitesim.platform.boundary import RequestsWarning, check_request_mix
from sitesim.runs.budget import check_site_run
from sitesim.runs.build import PreparedRun, build_site
from sitesim.runs.config import (
    DEFAULT_PROFILE,
    DRAIN_OUTAGES,
    WARMUP_DAYS,
    SiteConfig,
    SiteSettings,
)
from sitesim.runs.options import progress_function, scheduler_settings, split_settings
from sitesim.schedulers import Scheduler, registered
from sitesim.workload.profile import WorkloadProfile, read_profile

DAY = 86_400.0

#: A custom user model: ``factory(uid, profile, procs, seed)`` returns user ``uid`` (1-based),
#: any object with a ``run(site)`` process method (:class:`sitesim.engine.site.User`).
UserFactory = Callable[[int, WorkloadProfile, int, int], User]
Progress = Callable[[float], None]


def simulate(
    users: int,
    scheduler: str | Scheduler = "EASY",
    *,
    model: UserKind | str | UserModel | UserFactory = "complete",
    procs: int = 128,
    days: float = 182.0,
    warmup_days: float = WARMUP_DAYS,
    profile: str | os.PathLike[str] | WorkloadProfile | None = None,
    seed: int = 1,
    strict: bool = False,
    progress: Progress | Literal[False] | None = None,
    **settings: Unpack[SiteSettings],
) -> SiteResult:
    """Run ``users`` simulated users on a site for ``days`` days.

    Users submit until the horizon; the machine then drains so every job completes. Metrics
    cover the jobs submitted between the warm-up and the horizon.

    Args:
        users: number of users (ids 1..users).
        scheduler: a scheduler name, registered or the import path of a class of one's own
            (``"mypkg.sched:FairEASY"``), with its parameters as keyword arguments (e.g.
            ``alpha=3000``); or a fresh scheduler object.
        model: ``"complete"``, ``"static"``, ``"synthetic"`` (experiment 5's Poisson workload,
            configuration 1 at offered load 0.5; a :class:`UserModel` with a
            :class:`~sitesim.models.synthetic.SyntheticWorkload` chooses others), a
            :class:`UserModel`, or a user factory ``factory(uid, profile, procs, seed)``
            returning any object with ``run(site)``: the function, or its import path
            (``"mypkg.users:population"``).
        procs: machine size.
        days: horizon in days.
        warmup_days: days excluded from the metrics.
        profile: a profile JSON file, a :class:`WorkloadProfile`, or None for the shipped one.
        seed: root seed of every random stream (the scheduler's too: :meth:`Scheduler.use_seed`).
        strict: an impossible job stops the run instead of being skipped and counted.
        progress: called with the fraction of the horizon simulated so far (None or False:
            not called).
        settings: any other setting of a :class:`~sitesim.runs.config.SiteConfig`, typed by
            :class:`~sitesim.runs.config.SiteSettings` (``estimates="ratio"``,
            ``utility=True``, ``platform=Platform(...)`` or a platform file, ...; they override
            those of a :class:`UserModel`); with a scheduler name, also the scheduler's
            parameters, in ``scheduler_params={"alpha": 3000}`` or as keywords (``alpha=3000``;
            type checkers know only the settings).

    Returns:
        The result. Its ``config`` reproduces the run (:func:`sitesim.run`), unless the run
        used a scheduler object that is not registered, a user factory that no import path
        names, or an in-memory profile (then it is None).

    Raises:
        ConfigError: a bad setting; a scheduler parameter beside a scheduler object; a setting
            of the built-in user models beside a user factory.
    """
    report = progress_function(progress, "the fraction of the horizon simulated")
    run_settings, params = split_settings(SiteConfig, settings)
    described, custom = scheduler_settings(scheduler, params, "simulate")
    population: UserModel | UserFactory | None = None
    if type(model) is UserModel:
        run_settings = {**SiteConfig.model_settings(model), **run_settings}
    elif isinstance(model, str):
        run_settings["model"] = model
    elif isinstance(model, UserModel) or path_of(model) is None:
        population = model  # a subclass, or a function no import path names
    else:
        run_settings["model"] = path_of(model)
    if isinstance(profile, WorkloadProfile):  # used as it is; the configuration names the
        workload, name = profile, DEFAULT_PROFILE  # shipped one
    else:
        workload, name = None, DEFAULT_PROFILE if profile is None else os.fspath(profile)
    given: dict[str, Any] = {"users": users, "procs": procs, "days": days}
    given.update(warmup_days=warmup_days, profile=name, seed=seed, strict=strict)
    # A configuration validates every setting, even of a run it cannot fully describe.
    config = SiteConfig(**given, **described, **run_settings)
    if population is not None and not isinstance(population, UserModel):
        config.refuse_model_settings(f"the user factory {population!r}")
    return run_site(config, scheduler=custom, users=population, profile=workload, progress=report)


def run_site(
    config: SiteConfig,
    *,
    scheduler: Scheduler | None = None,
    users: UserModel | UserFactory | None = None,
    profile: WorkloadProfile | None = None,
    progress: Progress | None = None,
) -> SiteResult:
    """Run the site-level simulation ``config`` describes, or one with custom pieces in place of
    some of its settings.

    The profile is read from its file; when the configuration names a sha256, the file must
    still have it.

    Args:
        config: the run.
        scheduler: a fresh scheduler object to run instead of building the one the
            configuration names; it is given the run's seed (:meth:`Scheduler.use_seed`).
        users: a user factory (or a :class:`UserModel`) to draw the users instead of the
            configuration's model.
        profile: a profile object to use instead of the configuration's file.
        progress: called with the fraction of the horizon simulated so far.

    Returns:
        The result. Its configuration is ``config`` with the profile's sha256 filled in, or
        None when a custom piece ran that the configuration does not describe (a scheduler
        object that is not registered, ``users``, ``profile``).
    """
    return prepare_site(config, scheduler=scheduler, users=users, profile=profile).run(progress)


def prepare_site(
    config: SiteConfig,
    *,
    scheduler: Scheduler | None = None,
    users: UserModel | UserFactory | None = None,
    profile: WorkloadProfile | None = None,
) -> PreparedRun:
    """The run :func:`run_site` runs (the same arguments), built to the point where it starts
    (:class:`~sitesim.runs.build.PreparedRun`)."""
    check_site_run(config, warn=False)  # (an absurd horizon or size, before anything runs)
    profile_name = config.profile if profile is None else "(given)"
    if profile is None:
        profile, sha256 = read_profile(config.profile)
        if config.profile_sha256 is not None and config.profile_sha256 != sha256:
            raise ConfigError(
                f"profile {config.profile} has changed since the run: its sha256 is {sha256}, "
                f"the run used {config.profile_sha256}"
            )
        config = dataclasses.replace(config, profile_sha256=sha256).with_platform_sha256()
        described = users is None
    else:
        described = False
    # (the users and their processes live on: built without scanning them again and again)
    with fewer_collections(building=True):
        population = users_of(config, profile, users)
        if scheduler is None:
            scheduler = config.make_scheduler()
        else:
            scheduler.use_seed(config.seed)
            described = described and registered(scheduler)
        horizon = config.days * DAY
        site = build_site(  # (outages go on while the machine drains after the horizon)
            config,
            config.procs,
            scheduler,
            horizon + DRAIN_OUTAGES,
            strict=config.strict,
            cancel_expired=config.cancel_expired,
        )
        if site.platform is not None:
            model = users or (None if is_import_path(config.model) else config.user_model())
            if isinstance(model, UserModel):  # (a user factory of one's own may ask for anything)
                synthetic = model.kind == "synthetic"
                source = "the synthetic model" if synthetic else f"profile {profile_name}"
                mix = None if synthetic else profile.requests
                for warning in check_request_mix(mix, site.platform, source):
                    warnings.warn(warning, RequestsWarning, stacklevel=2)
        for user in population:
            site.add_user(user)
    stored = config if described else None
    return PreparedRun(
        site=site,
        until=horizon,
        warmup=config.warmup_days * DAY,
        span=(0.0, horizon),
        complete=lambda result: dataclasses.replace(result, config=stored),
    )


def users_of(
    config: SiteConfig, profile: WorkloadProfile, users: UserModel | UserFactory | None = None
) -> Sequence[User]:
    """The users of a run: drawn by ``users`` if given, else by the configuration's model, a
    built-in :class:`UserModel` or the user factory its import path names."""
    if users is None and is_import_path(config.model):
        users = load(config.model, "user factory")
    if users is None:
        users = config.user_model()
    if isinstance(users, UserModel):
        return users.users(config.users, profile, config.procs, config.seed)
    return [users(uid, profile, config.procs, config.seed) for uid in range(1, config.users + 1)]
