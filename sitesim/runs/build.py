"""The site of a configured run: its machine (processors, or the configuration's platform with
its outages) and its scheduler."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sitesim.engine.site import Site
from sitesim.platform.boundary import OUTAGE_STREAM
from sitesim.platform.downtime import Downtime
from sitesim.runs.budget import check_outages

if TYPE_CHECKING:
    from sitesim.engine.scheduler import Scheduler
    from sitesim.runs.config import RunConfig


def build_site(
    config: RunConfig, procs: int, scheduler: Scheduler, horizon: float, **options: Any
) -> Site:
    """The site of a configured run: ``procs`` processors, or the configuration's platform
    with its outages up to ``horizon`` (drawn from the run's seed as the run reaches them).

    Raises:
        ConfigError: the outages up to ``horizon`` are too many
            (:func:`sitesim.runs.budget.check_outages`).
    """
    platform = config.make_platform()
    site = Site(platform or procs, scheduler, seed=config.seed, **options)
    if platform is not None and platform.downtime and site.platform is not None:
        check_outages(platform, horizon, config.platform_name)
        names = {p.name: p.nodes for p in platform.partitions}
        downtime = Downtime.from_dict(platform.downtime, names, platform.nodes, platform.name, None)
        outages = downtime.stream(horizon, [config.seed, OUTAGE_STREAM])
        site.machine.add_outages(outages, downtime.on_failure == "requeue")  # type: ignore[union-attr]
    return site
