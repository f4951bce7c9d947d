"""Running a configuration: the one entry point from a :class:`~sitesim.runs.config.RunConfig` to a
result, used by the CLI, ``sitesim rerun`` and sweeps; and what :func:`sitesim.simulate` and
:func:`sitesim.replay` share: how a run takes its scheduler and its progress function."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sitesim.engine.site import SiteResult
from sitesim.errors import ConfigError
from sitesim.runs.build import PreparedRun
from sitesim.runs.config import ReplayConfig, RunConfig, SiteConfig
from sitesim.schedulers import Scheduler, registered


def run(config: RunConfig, *, progress: Callable[[float], None] | None = None) -> SiteResult:
    """Run ``config`` and return its result, whose ``config`` is ``config`` resolved (file
    sha256s, machine size): running that again gives byte-identical outputs.

    Args:
        config: a :class:`SiteConfig` or :class:`ReplayConfig`.
        progress: called with the fraction of the run simulated so far.
    """
    return prepare(config).run(progress)


def prepare(config: RunConfig, *, scheduler: Scheduler | None = None) -> PreparedRun:
    """The run of ``config`` built to the point where it starts
    (:class:`~sitesim.runs.build.PreparedRun`): :meth:`~sitesim.runs.build.PreparedRun.run`
    gives what :func:`run` gives.

    Args:
        config: a :class:`SiteConfig` or :class:`ReplayConfig`.
        scheduler: a fresh scheduler object to run instead of building the one the
            configuration names (given the run's seed, as :func:`sitesim.simulate` gives it).
    """
    if isinstance(config, SiteConfig):
        from sitesim.runs.simulate import prepare_site

        return prepare_site(config, scheduler=scheduler)
    if isinstance(config, ReplayConfig):
        from sitesim.runs.replay import prepare_replay

        if scheduler is not None:
            scheduler.use_seed(config.seed)
        return prepare_replay(config, scheduler=scheduler)
    raise ConfigError(f"not a run configuration: {config!r}")


def scheduler_settings(
    scheduler: str | Scheduler, params: Mapping[str, Any], caller: str
) -> tuple[dict[str, Any], Scheduler | None]:
    """How a run takes its scheduler, given by name (with its parameters) or as an object: the
    configuration settings that describe it, and the object to run (None: the configuration
    builds it).

    A name (registered, or the import path of a class) goes into the configuration, which
    checks the parameters and builds the scheduler. An object runs as it is: a registered one
    is described by its name and parameters, another by nothing (the run has no configuration).

    Args:
        scheduler: a name or a fresh scheduler object.
        params: the scheduler's parameters (None values are left out), only with a name.
        caller: the function's name, for errors.

    Raises:
        ConfigError: parameters given beside an object.
    """
    given = {key: value for key, value in params.items() if value is not None}
    if isinstance(scheduler, str):
        return {"scheduler": scheduler, "scheduler_params": given}, None
    if given:
        raise ConfigError(
            f"{', '.join(sorted(given))}: not a setting of {caller}(); give scheduler "
            "parameters to the scheduler object"
        )
    if registered(scheduler):
        return {"scheduler": scheduler.name, "scheduler_params": scheduler.params()}, scheduler
    return {}, scheduler


def progress_function(progress: Any, called_with: str) -> Any:
    """``progress`` as the function to call, or None for none (None or False).

    Raises:
        ConfigError: anything else that cannot be called (True, a number).
    """
    if progress is None or progress is False:
        return None
    if not callable(progress):
        raise ConfigError(
            f"progress must be a function (called with {called_with}), or None or False for "
            f"none; got {progress!r}"
        )
    return progress
