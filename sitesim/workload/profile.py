"""Workload profiles: every empirical distribution the user models draw from (users.md §5).

A profile is built from one or more SWF traces (:func:`build_profile`, ``sitesim profile``),
giving each trace **equal weight** so a huge trace does not drown the others, and is stored as a
small JSON file. sitesim ships a default profile (:func:`default_profile`) built from the real
traces of the original study; ``scripts/build_default_profile.sh`` rebuilds it.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from sitesim.errors import ConfigError, SitesimError
from sitesim.output import atomic_write, to_json
from sitesim.workload.activity import (
    BREAK_MAX,
    SESSION_THRESHOLD,
    Activity,
    ThinkDefinition,
    decompose,
)
from sitesim.workload.distributions import Discrete, Quantiles, checked_shares, from_dict
from sitesim.workload.request_mix import RequestMix
from sitesim.workload.requests import JobRequests
from sitesim.workload.size_classes import size_class, size_class_key
from sitesim.workload.swf import SWFTrace

FORMAT, VERSION = "sitesim-profile", 1
#: Runtime tables conditioned on size are kept per power-of-two size class with at least this
#: many jobs; other classes fall back to the overall runtime table.
MIN_CLASS_JOBS = 200


@dataclass(frozen=True)
class WorkloadProfile:
    """The empirical distributions of a workload (times in seconds).

    Attributes:
        sizes: processors per job (discrete; restrict to the machine with ``restricted(N)``).
        runtimes: actual runtimes.
        runtimes_by_size: runtime tables per power-of-two size class (for correlated draws).
        size_repetitions: how many successive jobs of a user keep the same size.
        batch_widths: jobs per batch.
        inter_submission: gaps between submissions inside a batch.
        think_short: think times in (0, 20 min] between batches of a session.
        breaks: think times in (20 min, 8 h] between sessions.
        estimate_ratios: requested time / runtime.
        waits: waits in the source traces.
        max_estimate: the longest requested time in the sources (caps estimates).
        daily: share of submissions per hour of the day (24, local time).
        weekly: share of submissions per day of the week (7, Monday first).
        sources: name, sha256, job counts, users and machine size of each source trace.
        settings: how the traces were decomposed (think definition, thresholds).
        requests: what the jobs ask for beyond their cores (partition, GPUs, memory, node
            features), when a source trace says (a site's ``sacct`` log); None: nothing more
            (the jobs of the simulated users go to the platform's default partition, or one
            drawn by the partitions' shares).
    """

    sizes: Discrete
    runtimes: Quantiles
    runtimes_by_size: dict[int, Quantiles]
    size_repetitions: Discrete
    batch_widths: Discrete
    inter_submission: Quantiles
    think_short: Quantiles
    breaks: Quantiles
    estimate_ratios: Quantiles
    waits: Quantiles
    max_estimate: float
    daily: np.ndarray
    weekly: np.ndarray
    sources: list[dict[str, Any]] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    requests: RequestMix | None = None

    DISCRETE = ("sizes", "size_repetitions", "batch_widths")
    QUANTILES = (
        "runtimes", "inter_submission", "think_short", "breaks", "estimate_ratios", "waits",
    )  # fmt: skip
    DISTRIBUTIONS = DISCRETE + QUANTILES

    @property
    def machine_sizes(self) -> list[int]:
        return [int(s["procs"]) for s in self.sources if s.get("procs")]

    def runtime_table(self, size: int) -> Quantiles:
        """Runtimes of jobs of this size's class (the overall table if the class is rare)."""
        return self.runtimes_by_size.get(int(size_class(size)), self.runtimes)

    # -- JSON ------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "sources": self.sources,
            "settings": self.settings,
            "max_estimate": self.max_estimate,
            "daily": self.daily.tolist(),
            "weekly": self.weekly.tolist(),
            "distributions": {name: getattr(self, name).to_dict() for name in self.DISTRIBUTIONS},
            "runtimes_by_size": {str(k): q.to_dict() for k, q in self.runtimes_by_size.items()},
            **({} if self.requests is None else {"requests": self.requests.to_dict()}),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "profile") -> WorkloadProfile:
        """A profile from :meth:`to_dict` output, validated entry by entry; errors name
        ``where`` and the entry."""
        if not isinstance(data, Mapping) or data.get("format") != FORMAT:
            raise ConfigError(f"{where}: not a sitesim workload profile (no 'format': '{FORMAT}')")
        if data.get("version") != VERSION:
            raise ConfigError(
                f"{where}: profile version {data.get('version')!r}; this sitesim reads {VERSION}"
            )
        try:
            dists = _mapping(data["distributions"], f"{where}: distributions")
            kwargs: dict[str, Any] = {
                name: _checked(dists, name, f"{where}: distributions.{name}")
                for name in cls.DISTRIBUTIONS
            }
            by_size = _mapping(data["runtimes_by_size"], f"{where}: runtimes_by_size")
            kwargs["runtimes_by_size"] = {
                size_class_key(key, f"{where}: runtimes_by_size"): _checked(
                    by_size, key, f"{where}: runtimes_by_size.{key}", bounds=_DURATION
                )
                for key in by_size
            }
            kwargs["daily"] = checked_shares(data["daily"], 24, f"{where}: daily")
            kwargs["weekly"] = checked_shares(data["weekly"], 7, f"{where}: weekly")
            kwargs["max_estimate"] = _positive(data["max_estimate"], f"{where}: max_estimate")
            kwargs["sources"] = list(data["sources"])
            kwargs["settings"] = dict(_mapping(data["settings"], f"{where}: settings"))
            if "requests" in data:
                kwargs["requests"] = RequestMix.from_dict(data["requests"], f"{where}: requests")
        except KeyError as err:
            raise ConfigError(f"{where}: missing key {err}") from None
        except TypeError as err:
            raise ConfigError(f"{where}: {err}") from None
        return cls(**kwargs)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the profile as JSON, atomically."""
        atomic_write(path, to_json(self.to_dict()))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> WorkloadProfile:
        """Read and validate a profile JSON file."""
        return read_profile(os.fspath(path))[0]

    def __repr__(self) -> str:
        names = ", ".join(str(s.get("name")) for s in self.sources)
        return f"WorkloadProfile(sources=[{names}], sizes={self.sizes!r})"


#: What the values of each distribution must be: (lowest, lowest allowed?, whole numbers?).
_DURATION = (0.0, True, False)
_BOUNDS = {
    "sizes": (1.0, True, True),
    "size_repetitions": (1.0, True, True),
    "batch_widths": (1.0, True, True),
    "runtimes": _DURATION,
    "inter_submission": _DURATION,
    "think_short": _DURATION,
    "breaks": _DURATION,
    "waits": _DURATION,
    "estimate_ratios": (0.0, False, False),
}


def _mapping(data: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where}: expected an object, got {_short(data)}")
    return data


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _checked(
    dists: Mapping[str, Any], name: str, where: str, bounds: tuple[float, bool, bool] | None = None
) -> Any:
    """The distribution ``dists[name]``, of the kind and in the range its name requires."""
    data = _mapping(dists[name], where)
    dist = from_dict(data, where)
    kind = Discrete if name in WorkloadProfile.DISCRETE else Quantiles
    if not isinstance(dist, kind):
        raise ConfigError(f"{where}: must be {kind.__name__.lower()}, not {data.get('kind')!r}")
    low, inclusive, whole = bounds or _BOUNDS[name]
    values = dist.values if isinstance(dist, Discrete) else dist.x
    smallest = float(values.min())
    if smallest < low or (not inclusive and smallest == low):
        relation = ">=" if inclusive else ">"
        raise ConfigError(f"{where}: values must be {relation} {low:g}, found {smallest:g}")
    if whole and not np.all(values == np.round(values)):
        raise ConfigError(f"{where}: values must be whole numbers")
    return dist


def _positive(value: Any, where: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not (math.isfinite(value) and value > 0)
    ):
        raise ConfigError(f"{where}: must be a number > 0, got {_short(value)}")
    return float(value)


#: The name a run configuration gives the profile shipped with sitesim.
DEFAULT_PROFILE = "default"
#: The profiles shipped with sitesim, by name (a file of that name is not read).
BUILTIN_PROFILES = {
    DEFAULT_PROFILE: "data/default_profile.json",
    "thesis": "data/thesis_profile.json",  # sitesim.workload.thesis_regime
}


def read_profile(name: str) -> tuple[WorkloadProfile, str]:
    """The profile stored in file ``name`` (or a shipped one, for ``"default"`` and
    ``"thesis"``) and the sha256 of the file's bytes.

    Raises:
        SitesimError: the file cannot be read; ConfigError: it is not a valid profile.
    """
    if name in BUILTIN_PROFILES:
        raw = resources.files("sitesim").joinpath(BUILTIN_PROFILES[name]).read_bytes()
        where = f"sitesim {name} profile"
    else:
        where = name
        try:
            raw = Path(name).read_bytes()
        except OSError as err:
            raise SitesimError(f"{name}: cannot read: {err.strerror or err}") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(
            f"{where}: not a text file (a profile is JSON; is it compressed or binary?)"
        ) from None
    except json.JSONDecodeError as err:
        raise ConfigError(f"{where}: not valid JSON: {err}") from None
    return WorkloadProfile.from_dict(data, where=where), hashlib.sha256(raw).hexdigest()


def default_profile() -> WorkloadProfile:
    """The profile shipped with sitesim (see docs/reference/profiles.md)."""
    return read_profile(DEFAULT_PROFILE)[0]


# -- building ---------------------------------------------------------------------------------
def build_profile(
    traces: Sequence[SWFTrace],
    *,
    definition: ThinkDefinition = "last",
    threshold: float = SESSION_THRESHOLD,
) -> WorkloadProfile:
    """A profile from SWF traces, each trace with equal weight; with the request mix when a
    trace says what its jobs ask for beyond their processors (a site's ``sacct`` log; a trace
    that does not counts as jobs that ask for nothing more)."""
    if not traces:
        raise ConfigError("a profile needs at least one trace")
    requests = None
    if any(t.requests is not None for t in traces):
        requests = RequestMix.fit([_sizes_and_requests(t) for t in traces])
    activities = [decompose(t, definition=definition, threshold=threshold) for t in traces]
    pooled = _Pool(activities)
    sizes = pooled.samples(lambda a: a.size[a.size > 0], "job sizes")
    classes = size_class(sizes.values)
    runtimes_by_size = {}
    for cls_ in np.unique(classes).tolist():
        pick = classes == cls_
        if pick.sum() >= MIN_CLASS_JOBS:
            runtimes_by_size[int(cls_)] = Quantiles.fit(
                pooled.runtime_of_sizes.values[pick], pooled.runtime_of_sizes.weights[pick]
            )
    estimates = np.concatenate([a.estimate[a.estimate > 0] for a in activities])
    return WorkloadProfile(
        sizes=Discrete.fit(sizes.values, sizes.weights),
        runtimes=pooled.quantiles(lambda a: a.runtime, "runtimes"),
        runtimes_by_size=runtimes_by_size,
        size_repetitions=pooled.discrete(lambda a: a.size_repetitions, "size repetitions"),
        batch_widths=pooled.discrete(lambda a: a.widths, "batch widths"),
        inter_submission=pooled.quantiles(
            lambda a: a.inter_submission, "inter-submission times (no job overlaps another)"
        ),
        think_short=pooled.quantiles(lambda a: a.short_thinks, "think times in (0, threshold]"),
        breaks=pooled.quantiles(lambda a: a.breaks, "breaks (think times in (threshold, 8 h])"),
        estimate_ratios=pooled.quantiles(
            lambda a: a.estimate_ratios, "estimate/runtime ratios (no requested times)"
        ),
        waits=pooled.quantiles(lambda a: a.wait, "waits"),
        max_estimate=float(estimates.max()) if len(estimates) else float(pooled.max_runtime),
        daily=pooled.shares(lambda a: np.bincount(a.hour, minlength=24)),
        weekly=pooled.shares(lambda a: np.bincount(a.weekday, minlength=7)),
        sources=[_source(t, a) for t, a in zip(traces, activities, strict=True)],
        settings={
            "think_definition": definition,
            "session_threshold_s": threshold,
            "break_max_s": BREAK_MAX,
            "weighting": "equal weight per trace",
            "runtimes_by_size": f"power-of-two size classes with >= {MIN_CLASS_JOBS} jobs",
        },
        requests=requests,
    )


def _sizes_and_requests(trace: SWFTrace) -> tuple[np.ndarray, JobRequests]:
    """Each job's size (processors allocated, else requested) and requests (none asked when
    the trace does not say)."""
    procs, asked = trace.column("procs"), trace.column("req_procs")
    size = np.where(procs > 0, procs, asked)
    requests = JobRequests.empty(len(trace)) if trace.requests is None else trace.requests
    return size, requests


@dataclass
class _Weighted:
    values: np.ndarray
    weights: np.ndarray


class _Pool:
    """Samples from several traces, each trace's samples sharing a total weight of 1."""

    def __init__(self, activities: list[Activity]) -> None:
        self.activities = activities
        self.runtime_of_sizes = self.samples(lambda a: a.runtime[a.size > 0], "runtimes")
        self.max_runtime = max(float(a.runtime.max()) for a in activities)

    def samples(self, pick: Any, what: str = "a profile distribution") -> _Weighted:
        values, weights = [], []
        for activity in self.activities:
            sample = np.asarray(pick(activity), dtype=np.float64)
            if len(sample):
                values.append(sample)
                weights.append(np.full(len(sample), 1.0 / len(sample)))
        if not values:
            raise SitesimError(f"the traces give no samples of {what}")
        return _Weighted(np.concatenate(values), np.concatenate(weights))

    def quantiles(self, pick: Any, what: str) -> Quantiles:
        s = self.samples(pick, what)
        return Quantiles.fit(s.values, s.weights)

    def discrete(self, pick: Any, what: str) -> Discrete:
        s = self.samples(pick, what)
        return Discrete.fit(s.values, s.weights)

    def shares(self, counts: Any) -> np.ndarray:
        total = np.zeros(len(counts(self.activities[0])))
        for activity in self.activities:
            c = np.asarray(counts(activity), dtype=np.float64)
            total += c / c.sum()
        return total / total.sum()


def _source(trace: SWFTrace, activity: Activity) -> dict[str, Any]:
    return {
        "name": Path(trace.name).name,
        "sha256": trace.sha256,
        "jobs": len(trace),
        "jobs_used": len(activity),
        "jobs_excluded": activity.excluded,
        "users": activity.users,
        "procs": trace.max_procs,
        "clock": activity.clock,
    }
