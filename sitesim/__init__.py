"""sitesim: site-level simulation of parallel-computer job schedulers.

Users are SimPy processes that submit jobs and wait for them; the machine keeps the running
jobs and schedules each one's end as an event; the scheduler is a plain policy object, which the
site's event loop asks once per instant, after that instant's arrivals and job ends, which
waiting jobs to start (docs/background/engine.md). Open (trace replay) and closed (users in the
loop) evaluations run on the same engine.

What a scenario script needs is here::

    import sitesim

    result = sitesim.simulate(20, "EASY", days=28)            # users in the loop
    result = sitesim.replay("trace.swf.gz", "CREASY", load=0.9)  # open trace replay
    result = sitesim.run(sitesim.SiteConfig(users=20, days=28))  # a configuration
    table = sitesim.sweep(sitesim.SiteConfig(days=28), {"users": [10, 20]}, seeds=4)
    frame = sitesim.to_pandas(result)                          # the jobs (needs pandas)
    tables = sitesim.load("runs/first")                        # a run folder, as DataFrames

The names are loaded on first use, so ``import sitesim`` (and the ``sitesim`` command) starts
fast.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

#: Public name -> (module, attribute).
_EXPORTS = {
    "simulate": ("sitesim.runs.simulate", "simulate"),
    "replay": ("sitesim.runs.replay", "replay"),
    "run": ("sitesim.runs.runner", "run"),
    "sweep": ("sitesim.sweeps.sweep", "sweep"),
    "RunConfig": ("sitesim.runs.config", "RunConfig"),
    "SiteConfig": ("sitesim.runs.config", "SiteConfig"),
    "ReplayConfig": ("sitesim.runs.config", "ReplayConfig"),
    "SiteResult": ("sitesim.engine.site", "SiteResult"),
    "Summary": ("sitesim.engine.metrics", "Summary"),
    "Site": ("sitesim.engine.site", "Site"),
    "Job": ("sitesim.engine.job", "Job"),
    "UserModel": ("sitesim.models.users", "UserModel"),
    "WorkloadProfile": ("sitesim.workload.profile", "WorkloadProfile"),
    "read_swf": ("sitesim.workload.swf", "read_swf"),
    "write_swf": ("sitesim.workload.swf", "write_swf"),
    "create_scheduler": ("sitesim.schedulers", "create"),
    "SitesimError": ("sitesim.errors", "SitesimError"),
    "load": ("sitesim.formats.tables", "load"),
    "to_pandas": ("sitesim.formats.tables", "to_pandas"),
}

__all__ = [
    "Job",
    "ReplayConfig",
    "RunConfig",
    "Site",
    "SiteConfig",
    "SiteResult",
    "SitesimError",
    "Summary",
    "UserModel",
    "WorkloadProfile",
    "__version__",
    "create_scheduler",
    "load",
    "read_swf",
    "replay",
    "run",
    "simulate",
    "sweep",
    "to_pandas",
    "write_swf",
]  # fmt: skip

if TYPE_CHECKING:
    __version__: str
    from sitesim.engine.job import Job
    from sitesim.engine.metrics import Summary
    from sitesim.engine.site import Site, SiteResult
    from sitesim.errors import SitesimError
    from sitesim.formats.tables import load, to_pandas
    from sitesim.models.users import UserModel
    from sitesim.runs.config import ReplayConfig, RunConfig, SiteConfig
    from sitesim.runs.replay import replay
    from sitesim.runs.runner import run
    from sitesim.runs.simulate import simulate
    from sitesim.schedulers import create as create_scheduler
    from sitesim.sweeps.sweep import sweep
    from sitesim.workload.profile import WorkloadProfile
    from sitesim.workload.swf import read_swf, write_swf


def __getattr__(name: str) -> Any:
    if name == "__version__":
        value: Any = _installed_version()
    else:
        try:
            module, attribute = _EXPORTS[name]
        except KeyError:
            raise AttributeError(f"module 'sitesim' has no attribute {name!r}") from None
        value = getattr(import_module(module), attribute)
    globals()[name] = value  # later lookups skip this function
    return value


def _installed_version() -> str:
    """The installed package's version (read on first use: the metadata lookup is slow)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sitesim")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0+unknown"


def __dir__() -> list[str]:
    return sorted(__all__)
