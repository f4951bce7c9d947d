"""A run's platform by name: a TOML platform file, a site's ``slurm.conf`` (a name ending in
``.conf``), a TOML file beside a ``slurm.conf`` that adds what Slurm keeps elsewhere (its
``slurm_conf`` key: :func:`beside_slurm_conf`), or a platform sitesim ships
(:data:`BUILTIN_PLATFORMS`)."""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Mapping
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

from sitesim.platform.description import (
    Platform,
    platform_from_bytes,
    platform_text,
    read_bytes,
)
from sitesim.platform.values import PlatformError
from sitesim.slurm.conf import read_slurm_conf
from sitesim.slurm.reservations import reservation_windows

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
    elif b"slurm_conf" in raw and "slurm_conf" in (data := _toml(raw, where)):
        platform, conf_raw = beside_slurm_conf(data, where, base or Path("."))
        return platform, hashlib.sha256(raw + conf_raw).hexdigest()  # (not kept: two files)
    else:
        platform = platform_from_bytes(raw, where, base)
    if name in BUILTIN_PLATFORMS:
        platform = replace(platform, name=name)
    _CACHE[key] = found = (platform, hashlib.sha256(raw).hexdigest())
    return found


#: The keys of a TOML file beside a slurm.conf (:func:`beside_slurm_conf`).
BESIDE_KEYS = ("slurm_conf", "name", "shares", "reservations", "downtime")


def _toml(raw: bytes, where: str) -> dict[str, Any]:
    try:
        return tomllib.loads(platform_text(raw, where))
    except tomllib.TOMLDecodeError as err:
        raise PlatformError(f"{where}: not a TOML file: {err}") from None


def beside_slurm_conf(data: Mapping[str, Any], where: str, base: Path) -> tuple[Platform, bytes]:
    """The platform of a site described in its own terms: the nodes and partitions of the
    ``slurm.conf`` that ``slurm_conf`` names (relative to ``base``, the TOML file's folder),
    with what Slurm keeps elsewhere: the share of the simulated users' jobs each partition
    gets (``[shares]``, by partition name), maintenance reservations as ``scontrol`` writes
    them (``reservations``: :mod:`sitesim.slurm.reservations`, windows of the platform's
    downtime), and failures and more windows (``[downtime]``, as in a platform file). Also
    returns the conf's bytes (they are part of the platform's identity).

    Raises:
        PlatformError: ``where: key: problem``, or the conf's own error.
    """
    for key in data:
        if key not in BESIDE_KEYS:
            raise PlatformError(
                f"{where}: {key}: not a key beside slurm_conf (the nodes and partitions are the "
                f"slurm.conf's); the keys are {', '.join(BESIDE_KEYS)}"
            )
    conf_name = data["slurm_conf"]
    if not isinstance(conf_name, str) or not conf_name.endswith(".conf"):
        raise PlatformError(f"{where}: slurm_conf: must name a slurm.conf file (ending in .conf)")
    conf_path = base / conf_name
    try:
        conf_raw = conf_path.read_bytes()
    except OSError as err:
        raise PlatformError(
            f"{where}: slurm_conf: cannot read {conf_path}: {err.strerror or err}"
        ) from None
    found = read_slurm_conf(conf_path)
    if found.platform is None:
        raise PlatformError(f"{conf_path}: no NodeName and PartitionName lines: no platform")
    tables = found.platform.to_dict()
    tables["name"] = data.get("name", Path(where).stem)
    shares = data.get("shares", {})
    if not isinstance(shares, Mapping):
        raise PlatformError(f"{where}: shares: must be a table of partition = share")
    partitions = {p["name"]: p for p in tables["partitions"]}
    for partition, share in shares.items():
        if partition not in partitions:
            raise PlatformError(
                f"{where}: shares: {partition}: no such partition in {conf_name} "
                f"(it has {', '.join(partitions)})"
            )
        if isinstance(share, bool) or not isinstance(share, int | float) or not share >= 0:
            raise PlatformError(
                f"{where}: shares: {partition}: must be a number >= 0, got {share!r}"
            )
        partitions[partition]["share"] = share
    if "downtime" in data:
        tables["downtime"] = data["downtime"]
    if "reservations" in data:
        windows = reservation_windows(data["reservations"], where, found.platform, found.node_names)
        downtime = tables.get("downtime", {})
        earlier = downtime.get("maintenance", []) if isinstance(downtime, Mapping) else None
        if windows and isinstance(earlier, list):  # (else the table's own error, below)
            tables["downtime"] = {**downtime, "maintenance": [*earlier, *windows]}
    return Platform.from_dict(tables, where=where, base=base), conf_raw
