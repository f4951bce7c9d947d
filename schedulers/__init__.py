"""Schedulers, one module per family, all on one :class:`~sitesim.schedulers.base.Scheduler` base.

Every scheduler is registered by the name the CLI knows it by (``--scheduler EASY``);
:func:`create` builds one from that name and validated parameters.
"""

from __future__ import annotations

import inspect
from typing import Any

if __name__ != "sitesim.schedulers":  # the folder schedulers/ is installed as sitesim.schedulers
    raise ImportError(
        f"import sitesim.schedulers, not {__name__!r} (the folder schedulers/ is installed as "
        "sitesim.schedulers; loading it twice would give two copies of every class)"
    )

from sitesim.errors import ConfigError

from .base import Scheduler, scheduler_label, shadow_time
from .conservative import Conservative
from .creasy import CREASY
from .economic import ECON
from .genetic import GA
from .planning import DynP, Planning
from .queue_order import EASY, FCFS, LJF, SCDF, SJF, PriorityFIFO
from .utility import PRIO, FirstPrice

#: Scheduler classes by CLI name.
REGISTRY: dict[str, type[Scheduler]] = {
    cls.name: cls
    for cls in (
        FCFS,
        EASY,
        Conservative,
        CREASY,
        SJF,
        LJF,
        SCDF,
        PriorityFIFO,
        PRIO,
        FirstPrice,
        GA,
        Planning,
        DynP,
        ECON,
    )
}


def parameters(name: str) -> set[str]:
    """The parameter names scheduler ``name`` takes (e.g. ``{"alpha"}`` for CREASY)."""
    return set(inspect.signature(REGISTRY[name.upper()].__init__).parameters) - {"self"}


def registered(scheduler: Scheduler) -> bool:
    """True when ``create(scheduler.name, **scheduler.params())`` rebuilds ``scheduler``."""
    return REGISTRY.get(scheduler.name) is type(scheduler) and scheduler.describable


def create(name: str, **params: Any) -> Scheduler:
    """A scheduler by (case-insensitive) name, e.g. ``create("CREASY", alpha=3000)``.

    Parameters whose value is None are ignored, so CLI options left unset pass through.

    Raises:
        ConfigError: unknown name, or a parameter the scheduler does not take.
    """
    cls = REGISTRY.get(name.upper())
    if cls is None:
        raise ConfigError(f"unknown scheduler {name!r}; choose one of {', '.join(REGISTRY)}")
    given = {key: value for key, value in params.items() if value is not None}
    accepted = parameters(cls.name)
    for key in given:
        if key not in accepted:
            takes = f"takes {', '.join(sorted(accepted))}" if accepted else "takes no parameters"
            raise ConfigError(f"scheduler {cls.name} does not take {key!r} ({cls.name} {takes})")
    return cls(**given)


__all__ = [
    "CREASY", "EASY", "ECON", "FCFS", "GA", "LJF", "PRIO", "REGISTRY", "SCDF", "SJF",
    "Conservative", "DynP", "FirstPrice", "Planning", "PriorityFIFO", "Scheduler",
    "create", "parameters", "registered", "scheduler_label", "shadow_time",
]  # fmt: skip
