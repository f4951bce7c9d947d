"""What :func:`sitesim.simulate` and :func:`sitesim.replay` share: how a run takes its
scheduler (by name with its parameters, or as an object) and its progress option."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sitesim.errors import ConfigError
from sitesim.schedulers import Scheduler, registered

if TYPE_CHECKING:
    from sitesim.runs.config import RunConfig


def split_settings(
    kind: type[RunConfig], settings: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The keyword arguments of :func:`sitesim.simulate` or :func:`sitesim.replay` split into
    the settings of a run of ``kind`` and the scheduler's parameters: those of
    ``scheduler_params``, and every keyword that is not a setting.

    Raises:
        ConfigError: ``scheduler_params`` is not a table, or names a parameter that is also
            given as a keyword.
    """
    fields = set(kind.settings()) - {"scheduler", "scheduler_params"}
    run = {key: value for key, value in settings.items() if key in fields}
    given = settings.get("scheduler_params") or {}
    if not isinstance(given, Mapping):
        raise ConfigError(f"scheduler_params must be a table of values, got {given!r}")
    params = {key: value for key, value in settings.items() if key not in fields}
    params.pop("scheduler_params", None)
    twice = sorted(set(params) & set(given))
    if twice:
        raise ConfigError(f"{', '.join(twice)}: given in scheduler_params and as a keyword")
    return run, {**given, **params}


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
