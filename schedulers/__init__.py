"""Schedulers, one module per family, all on one :class:`~sitesim.schedulers.base.Scheduler` base.

Every scheduler is registered by the name the CLI knows it by (``--scheduler EASY``); a
researcher's own is named by the import path of its class (``mypkg.sched:FairEASY``).
:func:`create` builds one from either name and validated parameters.
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
from sitesim.import_paths import is_import_path, load

from .base import Scheduler, scheduler_label, shadow_time
from .conservative import Conservative
from .creasy import CREASY
from .economic import ECON
from .genetic import GA
from .planning import DynP, Planning
from .queue_order import EASY, FCFS, LJF, SCDF, SJF, PriorityFIFO
from .slurm import SLURM
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
        SLURM,
    )
}


def scheduler_class(name: str) -> type[Scheduler]:
    """The class a scheduler name stands for: a registered name (any case), or the import path
    of a :class:`Scheduler` subclass (``mypkg.sched:FairEASY``), whose module is imported.

    Raises:
        ConfigError: an unknown name, or a path that cannot be imported or names no scheduler.
    """
    cls = REGISTRY.get(name.upper()) if isinstance(name, str) else None
    if cls is not None:
        return cls
    if not is_import_path(name):
        raise ConfigError(
            f"unknown scheduler {name!r}; choose one of {', '.join(REGISTRY)}, or name your "
            "own by its import path (module:Class)"
        )
    found = load(name, "scheduler")
    if not (isinstance(found, type) and issubclass(found, Scheduler)):
        raise ConfigError(
            f"scheduler {name} is {found!r}, not a subclass of sitesim.schedulers.base.Scheduler"
        )
    return found


def canonical_name(name: str) -> str:
    """The name a configuration stores: a registered name in capitals, an import path as given
    (or the registered name of the class it names).

    Raises:
        ConfigError: see :func:`scheduler_class`.
    """
    cls = scheduler_class(name)
    return cls.name if REGISTRY.get(cls.name) is cls else name


def parameters(name: str) -> set[str]:
    """The parameter names scheduler ``name`` takes, those of its ``__init__`` (e.g.
    ``{"alpha"}`` for CREASY); ``name`` is registered or an import path."""
    signature = inspect.signature(scheduler_class(name).__init__)
    return {
        key
        for key, parameter in signature.parameters.items()
        if key != "self" and parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)
    }


def stored_params(name: str, scheduler: Scheduler, given: dict[str, Any]) -> dict[str, Any]:
    """The parameters a configuration stores for ``scheduler``, built by
    ``create(name, **given)``: every one, defaults included, so that they rebuild it.

    A registered scheduler reports them itself (:meth:`Scheduler.params`). A scheduler named by
    its import path stores what it was given, and the defaults of its ``__init__`` that are
    numbers or text: ``create(name, **stored)`` passes the same arguments again, whatever its
    :meth:`~Scheduler.params` says.
    """
    if REGISTRY.get(name) is type(scheduler):
        return scheduler.params()
    signature = inspect.signature(type(scheduler).__init__)
    defaults = {
        key: parameter.default
        for key, parameter in signature.parameters.items()
        if isinstance(parameter.default, int | float | str)
        and not isinstance(parameter.default, bool)
    }
    return {**defaults, **{key: value for key, value in given.items() if value is not None}}


def label(name: str, params: dict[str, Any]) -> str:
    """The label of scheduler ``name`` with ``params`` (:func:`scheduler_label`), the files it
    names shown by their names when ``name`` is registered."""
    known = REGISTRY.get(name.upper()) if isinstance(name, str) else None
    return scheduler_label(name, params, known.file_parameters if known is not None else ())


def registered(scheduler: Scheduler) -> bool:
    """True when ``create(scheduler.name, **scheduler.params())`` rebuilds ``scheduler``."""
    return REGISTRY.get(scheduler.name) is type(scheduler) and scheduler.describable


def create(name: str, **params: Any) -> Scheduler:
    """A scheduler by (case-insensitive) name, e.g. ``create("CREASY", alpha=3000)``, or by
    the import path of its class, e.g. ``create("mypkg.sched:FairEASY", half_life=7)``.

    Parameters whose value is None are ignored, so CLI options left unset pass through.

    Raises:
        ConfigError: unknown name, or a parameter the scheduler does not take.
    """
    cls = scheduler_class(name)
    label = cls.name if REGISTRY.get(cls.name) is cls else name
    given = {key: value for key, value in params.items() if value is not None}
    accepted = parameters(name)
    for key in given:
        if key not in accepted:
            takes = f"takes {', '.join(sorted(accepted))}" if accepted else "takes no parameters"
            raise ConfigError(f"scheduler {label} does not take {key!r} ({label} {takes})")
    return cls(**given)


__all__ = [
    "CREASY", "EASY", "ECON", "FCFS", "GA", "LJF", "PRIO", "REGISTRY", "SCDF", "SJF", "SLURM",
    "Conservative", "DynP", "FirstPrice", "Planning", "PriorityFIFO", "Scheduler",
    "canonical_name", "create", "label", "parameters", "registered", "scheduler_class",
    "scheduler_label", "shadow_time", "stored_params",
]  # fmt: skip
