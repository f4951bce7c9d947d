"""Running a configuration: the one entry point from a :class:`~sitesim.runs.config.RunConfig` to a
result, used by the CLI, ``sitesim rerun`` and sweeps."""

from __future__ import annotations

from collections.abc import Callable

from sitesim.engine.site import SiteResult
from sitesim.errors import ConfigError
from sitesim.runs.build import PreparedRun
from sitesim.runs.config import ReplayConfig, RunConfig, SiteConfig
from sitesim.runs.replay import prepare_replay
from sitesim.runs.simulate import prepare_site
from sitesim.schedulers import Scheduler


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
        return prepare_site(config, scheduler=scheduler)
    if isinstance(config, ReplayConfig):
        if scheduler is not None:
            scheduler.use_seed(config.seed)
        return prepare_replay(config, scheduler=scheduler)
    raise ConfigError(f"not a run configuration: {config!r}")
