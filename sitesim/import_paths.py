"""Code named by an import path, ``module:attribute`` (``mypkg.sched:FairEASY``).

A researcher's own scheduler or user factory is named this way in a configuration, a sweep
file or on the command line, so that results.json can say what ran and ``sitesim rerun`` (with
``--allow-import``), process pools and Dask workers can load it again. The module is imported
by name from the import path (``sys.path``: an installed package, or a folder on
``PYTHONPATH``); nothing is read from a file path.
"""

from __future__ import annotations

import importlib
import re
import sys
from typing import Any

from sitesim.errors import ConfigError

#: ``package.module:Name`` (the attribute may be dotted: ``module:Class.factory``).
_PATH = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


def is_import_path(text: object) -> bool:
    """True when ``text`` has the form of an import path, ``module:attribute``."""
    return isinstance(text, str) and _PATH.fullmatch(text) is not None


def module_of(path: str) -> str:
    """The module an import path names (``mypkg.sched`` of ``mypkg.sched:FairEASY``)."""
    return path.partition(":")[0]


def load(path: str, what: str) -> Any:
    """The object ``path`` names, its module imported if it is not yet.

    Args:
        path: ``module:attribute``.
        what: what the path names, for errors (``"scheduler"``, ``"user factory"``).

    Raises:
        ConfigError: a malformed path, a module that cannot be imported (or fails while being
            imported), or an attribute it does not have.
    """
    if not is_import_path(path):
        raise ConfigError(f"{what} {path!r} is not an import path of the form module:name")
    module_name, _, attribute = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        raise ConfigError(
            f"{what} {path}: cannot import module {module_name} ({err}); install it, or add "
            "the folder that holds it to PYTHONPATH"
        ) from None
    except Exception as err:  # the module's own code failed
        raise ConfigError(
            f"{what} {path}: importing module {module_name} failed: {type(err).__name__}: {err}"
        ) from None
    value: Any = module
    for part in attribute.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise ConfigError(f"{what} {path}: module {module_name} has no {attribute}") from None
    return value


def path_of(obj: Any) -> str | None:
    """The import path that names ``obj`` (a module-level function or class), or None when none
    does: defined in ``__main__``, inside a function, or not found under its own name."""
    module_name = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if not isinstance(module_name, str) or not isinstance(qualname, str):
        return None
    path = f"{module_name}:{qualname}"
    if module_name == "__main__" or not is_import_path(path):
        return None  # (a lambda or a function defined in a function has "<" in its name)
    value: Any = sys.modules.get(module_name)
    for part in qualname.split("."):
        value = getattr(value, part, None)
    return path if value is obj else None
