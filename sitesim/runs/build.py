"""The site of a configured run: its machine (processors, or the configuration's platform with
its outages) and its scheduler; and a run prepared to the point where it starts
(:class:`PreparedRun`), which the run functions run whole and a caller may drive itself."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sitesim.engine.site import Site, SiteResult
from sitesim.platform.boundary import OUTAGE_STREAM
from sitesim.platform.downtime import NO_DATE, Clock, Downtime
from sitesim.runs.budget import check_outages

if TYPE_CHECKING:
    from sitesim.engine.scheduler import Scheduler
    from sitesim.runs.config import RunConfig


def build_site(
    config: RunConfig,
    procs: int,
    scheduler: Scheduler,
    horizon: float,
    clock: Clock = NO_DATE,
    **options: Any,
) -> Site:
    """The site of a configured run: ``procs`` processors, or the configuration's platform
    with its outages up to ``horizon`` (drawn from the run's seed as the run reaches them),
    its maintenance windows placed on the run's ``clock`` (a replay's trace gives it; a
    site-level run has no date: :meth:`~sitesim.platform.description.Platform.on_clock`).

    Raises:
        ConfigError: the outages up to ``horizon`` are too many
            (:func:`sitesim.runs.budget.check_outages`), or a window is dated and the clock
            has no date.
    """
    platform = config.make_platform()
    if platform is not None and platform.downtime:
        platform = platform.on_clock(clock, config.platform_name)
    site = Site(platform or procs, scheduler, seed=config.seed, **options)
    if platform is not None and platform.downtime and site.platform is not None:
        check_outages(platform, horizon, config.platform_name)
        names = {p.name: p.nodes for p in platform.partitions}
        downtime = Downtime.from_dict(platform.downtime, names, platform.nodes, platform.name, None)
        outages = downtime.stream(horizon, [config.seed, OUTAGE_STREAM])
        site.machine.add_outages(outages, downtime.on_failure == "requeue")  # type: ignore[union-attr]
    return site


@dataclass(frozen=True)
class PreparedRun:
    """A configured run, built to the point where it starts: its site with its users, and
    what the run function adds to the site's result.

    :meth:`run` runs it whole, as :func:`sitesim.run` does, and then the site lets go of its
    users and jobs (:meth:`~sitesim.engine.site.Site.release`). A caller that drives the run
    itself (the reinforcement-learning environment, :mod:`sitesim.gym`, stops it at each
    decision its scheduler hands out) calls ``site.run(until=until, warmup=warmup)`` first,
    ``site.run(warmup=warmup)`` to go on after a stop, and :attr:`complete` on the result.

    Attributes:
        site: the site, its users added.
        until: the horizon, in seconds (None: the run ends when its users are done).
        warmup: seconds at the start left out of the measurement window.
        span: the simulated times a progress function reports as 0 and 1.
        complete: what the run function does to the site's result (the configuration it
            describes, facts about the workload).
    """

    site: Site
    until: float | None
    warmup: float
    span: tuple[float, float]
    complete: Callable[[SiteResult], SiteResult]

    def run(self, progress: Callable[[float], None] | None = None) -> SiteResult:
        """Run it whole; ``progress`` is called with the fraction of :attr:`span` simulated."""
        first, last = self.span
        length = last - first
        report = None
        if progress is not None:
            report = lambda now: progress(min(max((now - first) / length, 0.0), 1.0))  # noqa: E731
        result = self.site.run(
            until=self.until, warmup=self.warmup, progress=report, progress_step=length / 200
        )
        self.site.release()
        return self.complete(result)
