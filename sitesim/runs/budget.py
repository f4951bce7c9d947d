"""What a run will hold, estimated before it starts, and the rule that refuses a run that
cannot fit in memory (docs/reference/run.md#limits).

A site-level run keeps every job until it ends, so its memory grows with the jobs its users
submit: users x days x the jobs a user submits a day. The numbers below were measured with
CPython 3.11 on the development machine (peak resident memory over the run, divided by its jobs
or users), rounded up:

- a site-level run: 0.9-1.3 KB per job (3 to 250 users, 128 to 10^7 processors); 2.2-2.3 KB
  when its outputs are written (their texts are built in memory);
- a replay: 0.7 KB per job (CEA-Curie, 313,000 jobs, and SDSC-BLUE, 233,000: reading, run,
  records), 2.2 KB with its outputs;
- a user: 70-80 KB (its random streams and drawn workload); a synthetic user 140 KB;
- jobs a user submits a day on an idle machine (the most; a busy machine slows users down), on
  the shipped profile: complete users 4.5 (250 users, 60 days), static users 12 (250 users,
  20 days). Shorter runtimes (``--runtime-scale`` below 1) and narrower batches raise it (to
  10 and 24 at a scale of 0.001, measured), so the estimate is low for them. The synthetic
  workload submits its arrival rate, load x procs / E[size x service].
- a planned run of a sweep, in the parent process: about 0.75 KB, 4 KB with its task and row.

A run whose estimate exceeds the memory limit is refused before anything runs, with the
largest setting that would fit; one that needs more than half of it gets a warning. The limit
is the memory available now (``MemAvailable``), or ``SITESIM_MEMORY_LIMIT`` (``64G``,
``512M``; ``0`` for no limit).
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sitesim.errors import ConfigError
from sitesim.platform.description import Platform
from sitesim.platform.values import format_duration
from sitesim.runs.config import DRAIN_OUTAGES, ReplayConfig, RunConfig, SiteConfig

if TYPE_CHECKING:
    from sitesim.platform.downtime import Downtime

#: Bytes a site-level run holds per job at its peak, without and with its outputs written.
SITE_JOB_BYTES = 1_300
#: Bytes a replay holds per job (the trace's arrays included).
REPLAY_JOB_BYTES = 700
#: Bytes per job while outputs (SWF, jobs.csv) are built.
WRITTEN_JOB_BYTES = 2_400
#: Bytes per user (its random streams and drawn workload), by user model.
USER_BYTES = {"complete": 80_000, "static": 80_000, "synthetic": 150_000}
#: Jobs a user submits a day on an idle machine (the shipped profile).
JOBS_PER_USER_DAY = {"complete": 4.5, "static": 12.0}
#: The interpreter and the modules a run imports.
BASE_BYTES = 100_000_000
#: Bytes the parent of a sweep holds per planned run (plan, task, row).
PLANNED_RUN_BYTES = 4_000
#: A warning above this share of the limit.
WARN_SHARE = 0.5
#: The environment variable that sets the limit.
LIMIT_VARIABLE = "SITESIM_MEMORY_LIMIT"
DAY = 86_400.0


@dataclass(frozen=True)
class Estimate:
    """What one run will hold: its jobs and its peak memory in bytes."""

    jobs: float
    memory: float

    def __str__(self) -> str:
        return f"submit about {_count(self.jobs)} jobs and need about {size_text(self.memory)}"


def site_estimate(config: SiteConfig, *, write: bool = False) -> Estimate:
    """The jobs and memory of a site-level run (``write``: its outputs are written)."""
    jobs = config.days * _jobs_per_day(config)
    per_job = WRITTEN_JOB_BYTES if write else SITE_JOB_BYTES
    users = config.users * USER_BYTES.get(config.model, USER_BYTES["complete"])
    return Estimate(jobs, BASE_BYTES + users + jobs * per_job)


def replay_estimate(jobs: int, *, write: bool = False) -> Estimate:
    """The memory of a replay of ``jobs`` jobs."""
    return Estimate(jobs, BASE_BYTES + jobs * (WRITTEN_JOB_BYTES if write else REPLAY_JOB_BYTES))


def _jobs_per_day(config: SiteConfig) -> float:
    if config.model == "synthetic":
        return config.user_model().synthetic.arrival_rate(config.procs) * DAY
    return config.users * JOBS_PER_USER_DAY.get(config.model, JOBS_PER_USER_DAY["complete"])


def memory_limit() -> float | None:
    """The memory a run may use: ``SITESIM_MEMORY_LIMIT``, else the memory available now;
    None for no limit (the variable set to 0, or nothing known).

    Raises:
        ConfigError: the variable is not a size.
    """
    text = os.environ.get(LIMIT_VARIABLE, "").strip()
    if text:
        limit = parse_size(text)
        return limit or None
    return available_memory()


def parse_size(text: str) -> float:
    """``64G``, ``512M``, ``1.5T``, ``2000000`` (bytes) -> bytes."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d*)?)\s*([kKmMgGtT]?)i?[bB]?\s*", text)
    if not match:
        raise ConfigError(
            f"{LIMIT_VARIABLE} must be a size such as 64G, 512M or 0 (no limit), got {text!r}"
        )
    unit = match.group(2).upper()
    return float(match.group(1)) * (1024 ** ("KMGT".index(unit) + 1) if unit else 1)


def available_memory() -> float | None:
    """Bytes of memory available now (Linux: ``MemAvailable``), else the physical memory; None
    when unknown."""
    try:
        with open("/proc/meminfo") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return None


def check_memory(
    need: Estimate, what: str, fits: str, *, limit: float | None = None, warn: bool = True
) -> None:
    """Refuse a run (or runs at once) that will not fit in memory; warn of one that needs more
    than half of it (on stderr, for the command line; ``warn=False`` for the library, which
    never prints).

    Args:
        need: the estimate (for runs at once, their sum).
        what: the run, for the message (``"a run of 3 users for 1e+09 days"``).
        fits: the largest setting that fits (``"--days <= 5.2e+05"``), for the error.
        limit: the limit (default: :func:`memory_limit`).

    Raises:
        ConfigError: the estimate exceeds the limit.
    """
    limit = memory_limit() if limit is None else limit
    if limit is None:
        return
    if need.memory > limit:
        raise ConfigError(
            f"{what} would {need} of memory, more than the {size_text(limit)} available: give "
            f"{fits} ({LIMIT_VARIABLE} sets the limit; docs/reference/run.md#limits)"
        )
    if warn and need.memory > WARN_SHARE * limit:
        print(
            f"sitesim: warning: {what} will {need} of memory, "
            f"{100 * need.memory / limit:.0f} % of the {size_text(limit)} available",
            file=sys.stderr,
        )


def check_site_run(
    config: SiteConfig, *, write: bool = False, runs: int = 1, warn: bool = True
) -> None:
    """:func:`check_memory` for a site-level run (``runs`` of them at once), naming the
    longest horizon that fits, or the most users; and :func:`check_outages` for its platform.
    Every site-level run of the library is checked so (``warn=False``); the command line
    checks first, with the warning.

    Raises:
        ConfigError: the run will not fit in memory, or its platform's outages are too many.
    """
    platform = config.make_platform()
    if platform is not None:
        from sitesim.platform.downtime import NO_DATE  # (a site-level run's clock: no date)

        platform = platform.on_clock(NO_DATE, config.platform_name)
        check_outages(platform, config.days * DAY + DRAIN_OUTAGES, config.platform_name)
    limit = memory_limit()
    if limit is None:
        return
    one = site_estimate(config, write=write)
    need = Estimate(one.jobs * runs, BASE_BYTES + runs * (one.memory - BASE_BYTES))
    at_once = f" ({runs} at once)" if runs > 1 else ""
    what = f"a run of {config.users:,} {config.model} users for {config.days:g} days{at_once}"
    room = (limit - BASE_BYTES) / runs  # (for each run)
    user_bytes = USER_BYTES.get(config.model, USER_BYTES["complete"])
    jobs_per_day = _jobs_per_day(config)
    job_bytes = WRITTEN_JOB_BYTES if write else SITE_JOB_BYTES
    days = (room - config.users * user_bytes) / (jobs_per_day * job_bytes)
    if config.model == "synthetic":  # (its jobs grow with the machine, not the users)
        fits = f"--days <= {_count(_round_down(days))}"
        if days < 1:
            procs = config.procs * room / (config.days * jobs_per_day * job_bytes)
            fits = f"--procs <= {_count(_round_down(procs))} (or a lower --load)"
    elif days >= 1:
        fits = f"--days <= {_count(_round_down(days))} with {config.users:,} users"
    else:
        per_user = user_bytes + config.days * jobs_per_day / config.users * job_bytes
        fits = f"--users <= {int(room // per_user):,} for {config.days:g} days"
    if runs > 1:
        fits += " or fewer --workers"
    check_memory(need, what, fits, limit=limit, warn=warn)


def _round_down(value: float) -> float:
    """Two significant digits, rounded down."""
    if value <= 0:
        return 0.0
    scale = 10 ** (math.floor(math.log10(value)) - 1)
    return math.floor(value / scale) * scale


def _count(value: float) -> str:
    return f"{value:,.0f}" if 1 <= value < 1e7 else f"{value:.2g}"


def size_text(n: float) -> str:
    """Bytes as ``512 MB``, ``17 TB`` (powers of 1024)."""
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if n < 1024 or unit == "PB":
            return f"{n:.0f} {unit}" if n >= 10 or unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.0f} PB"  # (unreachable)


def check_plan(runs: int) -> None:
    """Refuse a sweep whose plan alone (``runs`` planned runs, before any is expanded) would
    not fit in memory.

    Raises:
        ConfigError: naming the number of runs.
    """
    limit = memory_limit()
    if limit is not None and BASE_BYTES + runs * PLANNED_RUN_BYTES > limit:
        raise ConfigError(
            f"the sweep plans {_count(runs)} runs (factor levels x seeds), which would need "
            f"about {size_text(BASE_BYTES + runs * PLANNED_RUN_BYTES)} of memory only to plan, "
            f"more than the {size_text(limit)} available: give at most "
            f"{_count(_round_down((limit - BASE_BYTES) / PLANNED_RUN_BYTES))} runs "
            f"({LIMIT_VARIABLE} sets the limit; docs/reference/run.md#limits)"
        )


def check_sweep(runs: Sequence[tuple[str, RunConfig]], *, workers: int, write: bool) -> None:
    """Refuse a sweep whose largest run, or its runs at once on ``workers`` processes, would
    not fit in memory; warn of one that needs more than half of it.

    Raises:
        ConfigError: naming the largest run, and the setting that would fit.
    """
    limit = memory_limit()
    if limit is None or not runs:
        return
    estimates = [(name, run_estimate(config, write=write)) for name, config in runs]
    name, largest = max(estimates, key=lambda pair: pair[1].memory)
    at_once = max(min(workers, len(runs)), 1)
    jobs = sum(estimate.jobs for _, estimate in estimates)
    if largest.memory > limit:
        check_memory(largest, f"run {name}", "a shorter horizon, fewer users or a shorter trace")
    plan = len(runs) * PLANNED_RUN_BYTES
    need = Estimate(jobs, BASE_BYTES + plan + at_once * (largest.memory - BASE_BYTES))
    fit = int((limit - BASE_BYTES - plan) // max(largest.memory - BASE_BYTES, 1))
    what = f"the sweep ({len(runs):,} runs, {at_once} at once, the largest {name})"
    check_memory(need, what, f"--workers <= {max(fit, 1)}", limit=limit)


def run_estimate(config: RunConfig, *, write: bool = False) -> Estimate:
    """:func:`site_estimate` or, for a replay, :func:`replay_estimate` of its trace's jobs."""
    if isinstance(config, SiteConfig):
        return site_estimate(config, write=write)
    if isinstance(config, ReplayConfig):
        from sitesim.formats.traces import read_trace_cached  # (the sweep reads it anyway)

        jobs = len(read_trace_cached(config.trace))
        stop = jobs if config.stop_job is None else min(config.stop_job, jobs)
        return replay_estimate(max(stop - config.start_job, 0), write=write)
    return Estimate(0, BASE_BYTES)


def check_replay(jobs: int, *, write: bool = False) -> None:
    """:func:`check_memory` for a replay of ``jobs`` jobs.

    Raises:
        ConfigError: the replay will not fit in memory.
    """
    fits = "--jobs START:STOP (an excerpt of the trace)"
    check_memory(replay_estimate(jobs, write=write), "the replay", fits)


# -- outages -----------------------------------------------------------------------------------
#: Most outages a run may draw up to its outages' horizon (drawn failures, failure-file rows and
#: maintenance windows, a window counted once however many nodes it takes): each is an event
#: and a scheduling pass, 50-90 us measured where jobs are killed, so ten million take 10-15
#: minutes.
MAX_OUTAGES = 10_000_000
#: Bytes a run keeps per outage (the machine's record of how many nodes are down, two 16-byte
#: entries).
OUTAGE_BYTES = 32
#: Bytes per node and window the maintenance windows need while the passes are told of them
#: (all are known in advance): 116 measured (100,000 nodes, 105 weekly windows).
WINDOW_NODE_BYTES = 150
#: Bytes per failure drawn ahead of the run (a node's current round of at most 64).
DRAWN_BYTES = 24


@dataclass(frozen=True)
class OutageEstimate:
    """What a platform's downtime draws up to a horizon: outages (events; a window once) and
    the memory they need, and why there are so many (for the message)."""

    events: float
    memory: float
    detail: str


def outage_estimate(downtime: Downtime, horizon: float) -> OutageEstimate:
    """The outages of ``downtime`` up to ``horizon`` (seconds; finite), estimated from its
    rates: each failing node fails horizon / (mtbf + mttr) times (each time at least 1 s)."""
    windows = node_windows = 0.0
    for window in downtime.windows:
        if window.start < horizon:
            count = 1.0 if math.isinf(window.every) else (horizon - window.start) / window.every
            windows += math.ceil(count)
            node_windows += math.ceil(count) * len(window.nodes)
    failures = per_node = 0.0
    if math.isfinite(downtime.mtbf):
        per_node = horizon / (max(downtime.mtbf, 1.0) + max(downtime.mttr, 1.0))
        failures = len(downtime.failure_nodes) * per_node
    events = windows + failures + len(downtime.failure_file)
    memory = (
        OUTAGE_BYTES * events
        + WINDOW_NODE_BYTES * node_windows
        + DRAWN_BYTES * len(downtime.failure_nodes) * min(per_node, 64.0)
    )
    parts = []
    if failures:
        parts.append(
            f"{_count(failures)} failures of {len(downtime.failure_nodes):,} nodes "
            f"(mtbf {format_duration(downtime.mtbf)}, mttr {format_duration(downtime.mttr)})"
        )
    if windows:
        parts.append(f"{_count(windows)} maintenance windows on {_count(node_windows)} nodes")
    if downtime.failure_file:
        parts.append(f"{len(downtime.failure_file):,} rows of the failure file")
    return OutageEstimate(events, memory, " and ".join(parts))


def check_outages(
    platform: Platform, horizon: float, where: str | None = None, *, limit: float | None = None
) -> None:
    """Refuse a platform whose downtime would draw more than :data:`MAX_OUTAGES` outages up to
    ``horizon`` (the run's outages' horizon, seconds), or whose outages alone would not fit in
    memory. Nothing to check without downtime.

    Args:
        platform: the platform, its windows placed on the run's clock
            (:meth:`~sitesim.platform.description.Platform.on_clock`; a dated window on none
            is refused).
        horizon: seconds.
        where: the platform file, for the message (default: the platform's name).
        limit: the memory limit (default: :func:`memory_limit`).

    Raises:
        ConfigError: naming the file, the outages and what to change.
    """
    if not platform.downtime or not horizon > 0:
        return
    from sitesim.platform.downtime import Downtime

    names = {part.name: part.nodes for part in platform.partitions}
    name = where or platform.name
    downtime = Downtime.from_dict(platform.downtime, names, platform.nodes, name, None)
    need = outage_estimate(downtime, horizon)
    what = (
        f"{where or platform.name or 'platform'}: downtime: {need.detail} over "
        f"{horizon / DAY:,.0f} days (the run and the time it may take to drain)"
    )
    remedy = "give a longer mtbf, mttr or every, fewer nodes, or a shorter run"
    if need.events > MAX_OUTAGES:
        raise ConfigError(
            f"{what}: more than the {MAX_OUTAGES:,} outages a run may draw (each is an event "
            f"and a scheduling pass); {remedy}"
        )
    limit = memory_limit() if limit is None else limit
    if limit is not None and need.memory > limit - BASE_BYTES:
        raise ConfigError(
            f"{what} would need about {size_text(need.memory)} of memory, more than the "
            f"{size_text(limit)} available; {remedy} ({LIMIT_VARIABLE} sets the limit; "
            "docs/reference/run.md#limits)"
        )
