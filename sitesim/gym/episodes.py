"""Where an environment's episodes come from: a configured run, for a seed, with the agent's
scheduler in place of the configuration's.

An episode source is a function ``episode(seed, scheduler)`` returning the
:class:`~sitesim.runs.build.PreparedRun` of that seed. A configuration is one
(:func:`episodes_of`): a :class:`~sitesim.runs.config.SiteConfig` (users in the loop) or a
:class:`~sitesim.runs.config.ReplayConfig` (an open replay of its trace), run with the episode's
seed. :class:`OpenReplay` is the conventional evaluation the thesis questions: the trace a
site-level run under a given scheduler (EASY) produced with that seed, replayed open.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

from sitesim.errors import ConfigError
from sitesim.runs.build import PreparedRun
from sitesim.runs.config import ReplayConfig, SiteConfig

if TYPE_CHECKING:
    from sitesim.engine.scheduler import Scheduler
    from sitesim.workload.swf import SWFTrace

#: ``episode(seed, scheduler)``: the run of an episode, prepared with the agent's scheduler.
Episodes = Callable[[int, "Scheduler"], PreparedRun]


def episodes_of(source: SiteConfig | ReplayConfig | Episodes) -> Episodes:
    """The episode source a configuration describes (its seed replaced by the episode's), or
    ``source`` itself if it is already one.

    Raises:
        ConfigError: neither a run configuration nor a function.
    """
    if isinstance(source, SiteConfig | ReplayConfig):
        config = source

        def episode(seed: int, scheduler: Scheduler) -> PreparedRun:
            from sitesim.runs.runner import prepare

            return prepare(config.replace(seed=seed), scheduler=scheduler)

        return episode
    if callable(source):
        return source
    raise ConfigError(
        "the environment's episodes come from a SiteConfig, a ReplayConfig or a function "
        f"episode(seed, scheduler) returning a PreparedRun; got {source!r}"
    )


class OpenReplay:
    """Episodes that replay open the trace a site-level run produced: for seed ``s``, the run
    of ``site`` with seed ``s`` under ``scheduler`` (the conventional evaluation's recorded
    trace), its jobs replayed at their timestamps on the same machine, measured from the same
    warm-up (:func:`sitesim.sweeps.compare.open_replay` does the same for a named scheduler).

    Args:
        site: the site whose users make the trace (its scheduler is replaced).
        scheduler: the scheduler the trace is recorded under.
        keep: traces kept in memory, by seed (the most recently used).
    """

    def __init__(self, site: SiteConfig, scheduler: str = "EASY", keep: int = 32) -> None:
        self.site = site.replace(scheduler=scheduler, scheduler_params={})
        self.keep = keep
        self._traces: OrderedDict[int, SWFTrace] = OrderedDict()

    def trace(self, seed: int) -> SWFTrace:
        """The site-level run's trace for ``seed``."""
        trace = self._traces.get(seed)
        if trace is None:
            from sitesim.results.report import result_trace
            from sitesim.runs.runner import run

            result = run(self.site.replace(seed=seed))
            trace = result_trace(result, f"site-level trace of seed {seed}")
            self._traces[seed] = trace
            while len(self._traces) > self.keep:
                self._traces.popitem(last=False)
        self._traces.move_to_end(seed)
        return trace

    def config(self, seed: int) -> ReplayConfig:
        """The replay's configuration for ``seed`` (its trace is :meth:`trace`)."""
        return ReplayConfig(
            trace=f"site-level trace of seed {seed}",
            procs=self.site.procs,
            warmup_days=self.site.warmup_days,
            seed=seed,
            platform=self.site.platform,
        )

    def __call__(self, seed: int, scheduler: Scheduler) -> PreparedRun:
        from sitesim.runs.replay import prepare_replay

        scheduler.use_seed(seed)
        return prepare_replay(self.config(seed), trace=self.trace(seed), scheduler=scheduler)
