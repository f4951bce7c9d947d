"""Augmenting a trace with utility functions (utility.md §2), for utility-based replays.

Each job of an SWF trace gets a utility function, appended to its line after field 18 (the SWF
extension sitesim reads back), and a priority level, written into field 15 (the queue number;
0 is the highest level). Generators:

- ``lee-snavely`` (default): :class:`~sitesim.models.utility.LeeSnavely`, with the job's
  priority, size, requested time and recorded wait;
- ``linear``, ``convex``, ``flat``, ``mix``: the kinds of the robustness study, with the same
  start value and deadline (the requested time plus the Lee & Snavely slack); ``mix`` picks one
  of the three per job.

**Priorities.** When the header names the queues (``; Queue: N name``, as SDSC-BLUE's does),
the names set the level: interactive and express 0, high 1, normal 2, low and standby 3,
others 2 (normal). Otherwise every job is level 2 of 4 (the trace says nothing about
priority). A job with an unknown queue is normal.
"""

from __future__ import annotations

import re
from typing import cast

import numpy as np

from sitesim.errors import require
from sitesim.models.utility import KINDS, Kind, LeeSnavely, UtilityFunction, kind_function
from sitesim.workload.swf import COLUMN, SWFTrace

#: Queue names and the priority level they mean (0 = highest), out of four levels.
QUEUE_LEVELS = {"interactive": 0, "express": 0, "high": 1, "normal": 2, "low": 3, "standby": 3}
NORMAL = 2
GENERATORS = ("lee-snavely", *KINDS)
_QUEUE_LINE = re.compile(r";\s*Queue:\s*(\d+)\s+(\S+)", re.IGNORECASE)


def queue_levels(trace: SWFTrace) -> np.ndarray:
    """Each job's priority level (0 = highest) from its queue's name in the header."""
    names = {}
    for line in trace.header:
        match = _QUEUE_LINE.match(line)
        if match:
            names[int(match.group(1))] = match.group(2).lower()
    levels = {number: QUEUE_LEVELS.get(name, NORMAL) for number, name in names.items()}
    queue = trace.column("queue").astype(np.int64)
    return np.array([levels.get(q, NORMAL) for q in queue.tolist()], dtype=np.int64)


def augment(
    trace: SWFTrace,
    *,
    generator: str = "lee-snavely",
    lee_snavely: LeeSnavely | None = None,
    seed: int = 1,
) -> SWFTrace:
    """A copy of ``trace`` whose every job with a known size carries a utility function and a
    priority level (field 15). Deterministic for a seed."""
    require(generator in GENERATORS, f"generator must be one of {', '.join(GENERATORS)}")
    maker = lee_snavely or LeeSnavely()
    rng = np.random.default_rng(seed)
    levels = queue_levels(trace)
    col = trace.column
    size = np.where(col("procs") > 0, col("procs"), col("req_procs"))
    requested = np.where(col("req_time") > 0, col("req_time"), np.maximum(col("runtime"), 0))
    wait = np.maximum(col("wait"), 0)
    data = trace.data.copy()
    data[:, COLUMN["queue"]] = levels
    tails = dict(trace.tails)
    for row in range(len(trace)):
        if size[row] <= 0:
            continue
        function = maker.function(rng, int(levels[row]), int(size[row]), requested[row], wait[row])
        if generator != "lee-snavely":
            function = _kind(generator, rng, function, maker, requested[row], wait[row])
        tails[row] = function.to_text()
    note = f"; Note: utility functions by sitesim utility augment ({generator}, seed {seed})"
    return SWFTrace(trace.name, [*trace.header, note], data, tails, first_row=trace.first_row)


def _kind(
    generator: str,
    rng: np.random.Generator,
    drawn: UtilityFunction,
    maker: LeeSnavely,
    requested: float,
    wait: float,
) -> UtilityFunction:
    """The robustness study's kind, with the Lee & Snavely start value and deadline."""
    kinds: tuple[Kind, ...] = ("linear", "convex", "flat")
    kind = kinds[int(rng.integers(3))] if generator == "mix" else cast(Kind, generator)
    deadline = requested + max(maker.factor * wait, 10.0)
    return kind_function(kind, drawn.start_value, deadline, requested)
