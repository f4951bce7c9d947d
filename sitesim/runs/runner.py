"""Running a configuration: the one entry point from a :class:`~sitesim.runs.config.RunConfig` to a
result, used by the CLI, ``sitesim rerun`` and sweeps."""

from __future__ import annotations

from collections.abc import Callable

from sitesim.engine.site import SiteResult
from sitesim.errors import ConfigError
from sitesim.runs.config import ReplayConfig, RunConfig, SiteConfig
from sitesim.runs.replay import run_replay
from sitesim.runs.simulate import run_site


def run(config: RunConfig, *, progress: Callable[[float], None] | None = None) -> SiteResult:
    """Run ``config`` and return its result, whose ``config`` is ``config`` resolved (file
    sha256s, machine size): running that again gives byte-identical outputs.

    Args:
        config: a :class:`SiteConfig` or :class:`ReplayConfig`.
        progress: called with the fraction of the run simulated so far.
    """
    if isinstance(config, SiteConfig):
        return run_site(config, progress=progress)
    if isinstance(config, ReplayConfig):
        return run_replay(config, progress=progress)
    raise ConfigError(f"not a run configuration: {config!r}")
