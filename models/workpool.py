"""The workpool: what a user's jobs look like (users.md §1).

Two-level sampling captures the "locality of sampling" of real users, who resubmit the same job:

1. draw a job *shape*: a size from the profile's size distribution restricted to sizes <= N
   (the machine), and a runtime from the runtime distribution (or, with ``correlated=True``,
   from the runtimes of jobs of that size's power-of-two class);
2. draw a *repetition count* from the profile's size repetitions, and reuse the shape for that
   many successive jobs of this user before drawing a new one.

The estimate (requested time) is the runtime (``exact``, the default, as in the original study),
a constant overestimation ``factor`` times it, or the runtime times a ``ratio`` drawn from the
profile's requested/actual runtime ratios, capped at the profile's longest request. Estimates
are never below :data:`sitesim.engine.job.MIN_ESTIMATE`. Runtimes and estimates are whole seconds.

When the profile has a request mix (built from a site's log: :mod:`sitesim.workload.request_mix`)
each shape also draws what its jobs ask for beyond their cores (:attr:`Workpool.ask`: partition,
GPUs and memory per node, node features), from the mix's table of the size's class, one uniform
of the user's ``request`` stream a shape; a profile without one draws nothing (``ask`` None).

``runtime_scale`` (a workload transform of the sensitivity studies) multiplies every runtime
drawn before it is rounded, and the cap on requests with it; each draw still uses one uniform,
so a scaled user submits the same sequence of sizes with scaled runtimes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from sitesim.engine.job import MIN_ESTIMATE
from sitesim.errors import require
from sitesim.platform.placement import Request
from sitesim.workload.distributions import Discrete
from sitesim.workload.profile import WorkloadProfile
from sitesim.workload.request_mix import RequestClass

from .streams import Drawn, Streams, StreamTable, Transform, rounded

EstimateKind = Literal["exact", "factor", "ratio"]


@dataclass(frozen=True)
class EstimateModel:
    """How users estimate runtimes: ``exact``, ``factor`` (× ``factor``) or profile ``ratio``."""

    kind: EstimateKind = "exact"
    factor: float = 1.0

    def __post_init__(self) -> None:
        require(
            self.kind in ("exact", "factor", "ratio"),
            f"estimate model must be exact, factor or ratio, got {self.kind!r}",
        )
        require(
            math.isfinite(self.factor) and self.factor > 0,
            f"estimate factor must be > 0, got {self.factor}",
        )

    @classmethod
    def parse(cls, text: str) -> EstimateModel:
        """``exact``, ``ratio`` or ``factor:F`` (e.g. ``factor:2``)."""
        kind, _, value = text.partition(":")
        if kind == "factor":
            try:
                factor = float(value)
            except ValueError:
                factor = math.nan
            require(not math.isnan(factor), f"estimate model factor:F needs a number, got {text!r}")
            return cls("factor", factor)
        require(not value, f"estimate model {kind!r} takes no value, got {text!r}")
        return cls(kind)  # type: ignore[arg-type]

    def __str__(self) -> str:
        return f"factor:{self.factor:g}" if self.kind == "factor" else self.kind


class Workpool:
    """The job shapes ``(size, runtime, estimate)`` of one user, in order, and what the jobs of
    the current shape ask for beyond their cores (:attr:`ask`).

    Args:
        profile: the workload profile.
        procs: machine size; sizes are drawn from the sizes <= procs.
        seed, user: select the user's random streams.
        correlated: draw runtimes from the runtimes of the size's class.
        estimates: the estimate model.
    """

    _size = Drawn("size")
    _runtime = Drawn("runtime")
    _repeat = Drawn("repetition")
    _ratio = Drawn("estimate")
    _request = Drawn("request")

    def __init__(
        self,
        profile: WorkloadProfile,
        procs: int,
        seed: int,
        user: int,
        *,
        correlated: bool = False,
        estimates: EstimateModel | None = None,
        runtime_scale: float = 1.0,
        streams: Streams | None = None,
    ) -> None:
        self.profile = profile
        self.correlated = correlated
        self.estimates = estimates or EstimateModel()
        self.runtime_scale = runtime_scale
        if streams is None:
            made = self.transforms(profile, procs, correlated, runtime_scale)
            streams = StreamTable.alone(seed, user, made)
        self._streams = streams
        self._shape = (1, 0.0, MIN_ESTIMATE)
        self._left = 0
        mix = profile.requests
        self._asks = None if mix is None else [as_request(c) for c in mix.classes]
        self._ask_tables: dict[int, Discrete] = {}  # (by size)
        #: What the jobs of the current shape ask for (None: nothing more than cores).
        self.ask: Request | None = None

    @staticmethod
    def transforms(
        profile: WorkloadProfile, procs: int, correlated: bool = False, runtime_scale: float = 1.0
    ) -> dict[str, Transform]:
        """The maps from uniforms to values of a workpool's streams (those of every user of a
        population: :class:`~sitesim.models.streams.StreamTable`)."""
        runtimes = profile.runtimes.from_uniform
        return {
            "size": profile.sizes.restricted(procs).from_uniform,
            # (correlated: uniforms; the table depends on the size drawn)
            **({} if correlated else {"runtime": rounded(lambda u: runtimes(u) * runtime_scale)}),
            "repetition": profile.size_repetitions.from_uniform,
            "estimate": profile.estimate_ratios.from_uniform,
        }

    def next_shape(self) -> tuple[int, float, float]:
        """The shape of the user's next job."""
        if self._left == 0:
            self._shape = self.draw_shape()
            if self._asks is not None:
                self.ask = self.draw_ask(self._shape[0])
            self._left = int(self._repeat())
        self._left -= 1
        return self._shape

    def draw_shape(self) -> tuple[int, float, float]:
        """A new shape (the first sampling level), without repetition."""
        size = int(self._size())
        runtime: float
        if self.correlated:
            u = np.array([self._runtime()])
            table = self.profile.runtime_table(size)
            runtime = float(np.rint(table.from_uniform(u) * self.runtime_scale)[0])
        else:
            runtime = self._runtime()
        model = self.estimates
        estimate: float
        if model.kind == "exact":
            estimate = runtime
        elif model.kind == "factor":
            estimate = round(runtime * model.factor)
        else:
            cap = self.profile.max_estimate * self.runtime_scale
            estimate = round(min(runtime * self._ratio(), cap))
        return size, runtime, max(estimate, MIN_ESTIMATE)

    def draw_ask(self, size: int) -> Request | None:
        """What a job of ``size`` cores asks for, drawn from the profile's request mix."""
        assert self.profile.requests is not None and self._asks is not None
        table = self._ask_tables.get(size)
        if table is None:
            table = self._ask_tables[size] = self.profile.requests.table(size)
        u = np.array([self._request()])
        return self._asks[int(table.from_uniform(u)[0])]


def as_request(request: RequestClass) -> Request | None:
    """A request class as a job's request on a platform (None: it asks for nothing more, and
    the job's partition is chosen as for any job that names none)."""
    if not request.asks_more():
        return None
    return Request(
        partition=request.partition or None,
        gpus=request.gpus_per_node,
        memory=request.memory_per_node_mb,
        constraint=request.constraint,
    )
