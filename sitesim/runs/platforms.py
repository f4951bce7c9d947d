"""A run's platform by name: a TOML platform file, a site's ``slurm.conf`` (a name ending in
``.conf``), or a platform sitesim ships (:data:`BUILTIN_PLATFORMS`)."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from importlib import resources
from pathlib import Path

from sitesim.platform.description import (
    Platform,
    platform_from_bytes,
    platform_text,
    read_bytes,
)
from sitesim.platform.values import PlatformError
from sitesim.slurm.conf import read_slurm_conf

#: The platforms sitesim ships, by name (``--platform curie``).
BUILTIN_PLATFORMS = ("curie",)
_CACHE: dict[tuple[str, float, int], tuple[Platform, str]] = {}


def read_platform(name: str) -> tuple[Platform, str]:
    """The platform in file ``name`` (or a shipped one, :data:`BUILTIN_PLATFORMS`) and the
    sha256 of the file's bytes: a TOML platform, or a ``slurm.conf`` (a name ending in
    ``.conf``: :mod:`sitesim.slurm.conf`). Files are read once while they do not change.

    Raises:
        PlatformError: the file cannot be read or is not a valid platform.
    """
    base: Path | None
    if name in BUILTIN_PLATFORMS:
        raw = resources.files("sitesim").joinpath(f"data/platforms/{name}.toml").read_bytes()
        where, base = f"sitesim {name} platform", None
        key = (name, 0.0, 0)
    else:
        path = Path(name)
        try:
            stat = path.stat()
        except OSError as err:
            raise PlatformError(
                f"{name}: cannot read the platform file: {err.strerror or err}"
            ) from None
        key = (str(path.resolve()), stat.st_mtime, stat.st_size)
        if key in _CACHE:
            return _CACHE[key]
        raw = read_bytes(name)
        where, base = name, path.parent
    if key in _CACHE:
        return _CACHE[key]
    if name.endswith(".conf"):  # a site's slurm.conf: its NodeName and PartitionName lines
        platform_text(raw, where)  # (text, or refused as a platform file is)
        found_conf = read_slurm_conf(name)
        if found_conf.platform is None:
            raise PlatformError(f"{name}: no NodeName and PartitionName lines: no platform")
        platform = found_conf.platform
    else:
        platform = platform_from_bytes(raw, where, base)
    if name in BUILTIN_PLATFORMS:
        platform = replace(platform, name=name)
    _CACHE[key] = found = (platform, hashlib.sha256(raw).hexdigest())
    return found
