"""Slurm's quality of service (QOS): a priority and the limits a job is held to.

A job runs under its user's default QOS (the association's ``Def QOS``; ``normal`` when none
is named, as in Slurm). The limits modelled, as ``sacctmgr show qos`` names them:

- ``Priority``: the QOS priority; the multifactor QOS factor is it over the largest.
- ``MaxWall``: a job asking more time is refused at submission (Slurm holds it pending with
  ``QOSMaxWallDurationPerJobLimit`` forever unless the QOS changes: sitesim refuses and
  counts it).
- ``MaxSubmitJobsPerUser`` (``MaxSubmitPU``): a submission beyond this many of the user's jobs
  waiting or running is refused and counted (``QOSMaxSubmitJobPerUserLimit``).
- ``MaxJobsPerUser`` (``MaxJobsPU``): beyond this many running jobs of the user, the others
  wait with reason ``QOSMaxJobsPerUserLimit``.
- ``GrpTRES`` (all jobs of the QOS together) and ``MaxTRESPerUser`` (``MaxTRESPU``; each
  user's jobs together) over the TRES ``cpu``, ``node``, ``mem`` (MB) and ``gres/gpu``: a job
  that would take them over waits with reason ``QOSGrpCpuLimit``, ``QOSMaxCpuPerUserLimit``,
  ... (a job larger than a cap on its own is refused: it could never start).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from sitesim.errors import ConfigError

#: The trackable resources (TRES) the limits may name, as Slurm spells them.
TRES = ("cpu", "node", "mem", "gres/gpu")
#: The reason word of each TRES in a pending reason (``QOSGrpCpuLimit``, ...).
_REASON_WORD = {"cpu": "Cpu", "node": "Node", "mem": "Mem", "gres/gpu": "GRES"}
DEFAULT_QOS = "normal"


@dataclass(frozen=True)
class QOS:
    """One QOS and its limits (None or empty: no limit).

    Attributes:
        name: its name.
        priority: its priority (>= 0).
        max_wall: the longest time limit a job may ask, seconds.
        max_jobs_per_user: running jobs per user.
        max_submit_jobs_per_user: waiting and running jobs per user.
        grp_tres: caps on what all its running jobs hold together, by TRES.
        max_tres_per_user: caps on what each user's running jobs hold together, by TRES.
    """

    name: str
    priority: int = 0
    max_wall: float = math.inf
    max_jobs_per_user: int | None = None
    max_submit_jobs_per_user: int | None = None
    grp_tres: Mapping[str, int] = field(default_factory=dict)
    max_tres_per_user: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        where = f"QOS {self.name}"
        if self.priority < 0:
            raise ConfigError(f"{where}: Priority must be >= 0, got {self.priority}")
        if not self.max_wall > 0:
            raise ConfigError(f"{where}: MaxWall must be > 0, got {self.max_wall}")
        for key, limit in (
            ("MaxJobsPerUser", self.max_jobs_per_user),
            ("MaxSubmitJobsPerUser", self.max_submit_jobs_per_user),
        ):
            if limit is not None and limit < 0:
                raise ConfigError(f"{where}: {key} must be >= 0, got {limit}")
        for key, caps in (("GrpTRES", self.grp_tres), ("MaxTRESPerUser", self.max_tres_per_user)):
            for tres, cap in caps.items():
                if tres not in TRES:
                    raise ConfigError(
                        f"{where}: {key}: unknown TRES {tres!r}; sitesim models {', '.join(TRES)}"
                    )
                if cap < 0:
                    raise ConfigError(f"{where}: {key}: {tres} must be >= 0, got {cap}")

    @property
    def limits_running(self) -> bool:
        """True if it limits what may run at once (jobs per user or TRES caps)."""
        return bool(self.max_jobs_per_user is not None or self.grp_tres or self.max_tres_per_user)


def reason(kind: str, tres: str) -> str:
    """The pending reason squeue shows for a TRES cap: ``kind`` ``Grp`` or ``MaxPerUser``."""
    word = _REASON_WORD[tres]
    return f"QOSGrp{word}Limit" if kind == "Grp" else f"QOSMax{word}PerUserLimit"


def parse_tres(text: str, where: str) -> dict[str, int]:
    """``cpu=64,node=4,gres/gpu=8,mem=100G`` as a table (memory in MB, suffixes K, M, G, T).

    Raises:
        ConfigError: ``where: problem``, naming an unknown TRES or a bad count.
    """
    caps: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, value = part.partition("=")
        name = name.strip().lower()
        if name not in TRES:
            raise ConfigError(f"{where}: unknown TRES {name!r}; sitesim models {', '.join(TRES)}")
        found = re.fullmatch(r"(\d+)([KMGT]?)", value.strip().upper())
        if found is None or (found[2] and name != "mem"):
            raise ConfigError(f"{where}: {name}={value.strip()!r} is not a whole number >= 0")
        megabytes = {"": 1.0, "K": 1 / 1024, "M": 1.0, "G": 1024.0, "T": 1024.0**2}[found[2]]
        caps[name] = int(int(found[1]) * megabytes)
    return caps
