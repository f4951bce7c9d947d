"""A platform's tables (``Platform.to_dict()`` or an inferred platform) as a platform file."""

from __future__ import annotations

import json
from typing import Any

from sitesim.platform.description import Platform


def platform_toml(tables: dict[str, Any], source: str) -> str:
    """The TOML text of a platform file holding ``tables`` (checked by building the
    :class:`~sitesim.platform.description.Platform` first); ``source`` is named in its first
    comment."""
    Platform.from_dict(tables)  # (refuses what a platform file could not hold)
    lines = [
        f"# The platform {source} shows, inferred by sitesim convert: a lower bound. Each",
        "# partition has its own node type, with as many nodes as its jobs held at once and as",
        "# many cores (GPUs) as one job held on one node. Correct counts, node sharing between",
        "# partitions and memory from the site's slurm.conf (docs/reference/platform.md).",
    ]
    for key, value in tables.items():
        if not isinstance(value, list):
            lines.append(f"{key} = {_value(value)}")
    for key, value in tables.items():
        if isinstance(value, list):
            for table in value:
                lines += ["", f"[[{key}]]"]
                lines += [f"{k} = {_value(v)}" for k, v in table.items()]
    return "\n".join(lines) + "\n"


def _value(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(str(value))  # (a TOML basic string is a JSON string)
