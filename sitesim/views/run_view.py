"""A run as the views need it: its records, where each job ran, what started it, its
configuration and summary; from a :class:`~sitesim.engine.site.SiteResult` in memory
(:meth:`RunView.from_result`) or read back from the folder a run wrote (:func:`read_run`).

A run folder is trusted only whole: results.json is written last and lists every other file
with its size and sha256 (:func:`sitesim.results.report.write_outputs`), so a folder without it, or
whose files differ from what it lists, is refused with one line naming the file.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sitesim import schedulers as scheduler_names
from sitesim.engine.job import JobState
from sitesim.engine.records import read_records_csv
from sitesim.engine.site import SiteResult
from sitesim.errors import SitesimError
from sitesim.models.cycles import ActivityCycle, CycleShares
from sitesim.models.dynamics import PCONT_A, PCONT_B
from sitesim.models.streams import stream
from sitesim.platform.description import Platform
from sitesim.platform.values import PlatformError
from sitesim.results.report import (
    JOBS_NAME,
    PLACEMENT_NAME,
    PRIORITIES_NAME,
    RESULTS_NAME,
    RUNS_NAME,
    SWF_NAME,
    USERS_NAME,
)

if TYPE_CHECKING:
    from sitesim.platform.downtime import Outages

DAY = 86_400.0
#: What started a job (:attr:`RunView.started_by`): not recorded, Slurm's main scheduler, its
#: backfill scheduler.
UNKNOWN, MAIN, BACKFILL = 0, 1, 2
_STARTERS = {"main": MAIN, "backfill": BACKFILL}


@dataclass(frozen=True)
class NodeSpans:
    """Where jobs ran on a platform, as ranges of nodes: record ``job[k]`` held nodes
    ``first[k]`` to ``last[k] - 1`` (one row per range: a job on nodes '0-3,17' has two)."""

    job: np.ndarray
    first: np.ndarray
    last: np.ndarray

    @classmethod
    def parse(cls, nodes: list[str]) -> NodeSpans:
        """From each record's node ranges, ``'0-3,17'`` ('' for a job that never ran)."""
        job, first, last = [], [], []
        for k, text in enumerate(nodes):
            if not text:
                continue
            for part in text.split(","):
                low, _, high = part.partition("-")
                job.append(k)
                first.append(int(low))
                last.append(int(high or low) + 1)
        return cls(np.array(job, np.int64), np.array(first, np.int64), np.array(last, np.int64))


@dataclass(frozen=True)
class RunView:
    """One run, as the Gantt chart, the user lanes and the HTML report read it.

    Attributes:
        label: the scheduler with its parameters (``CREASY alpha=6000``).
        procs: processors (cores, on a platform).
        records: the per-job records (:mod:`sitesim.engine.records`).
        summary: the flat summary (:class:`sitesim.engine.metrics.Summary` as a dict).
        config: the configuration that reproduces the run (None for a custom run).
        platform: the platform of nodes (None: ``procs`` processors).
        partition, cores, requeues: per record on a platform: the partition index (-1: none),
            the cores held, the times it was requeued.
        spans: per record on a platform, its nodes (:class:`NodeSpans`).
        started_by: per record, :data:`MAIN`, :data:`BACKFILL` or :data:`UNKNOWN` (None when
            the scheduler records no decisions).
        per_partition, per_account: the run's tables, as rows (empty when it has none).
        platform_stats: utilization, availability and outages on a platform.
        accounts: each user's account (SLURM runs), else empty.
        source: the run folder it was read from ('' for a run in memory).
    """

    label: str
    procs: int
    records: np.ndarray
    summary: dict[str, Any]
    config: dict[str, Any] | None = None
    platform: Platform | None = None
    partition: np.ndarray | None = None
    cores: np.ndarray | None = None
    requeues: np.ndarray | None = None
    spans: NodeSpans | None = None
    started_by: np.ndarray | None = None
    per_partition: list[dict[str, Any]] = field(default_factory=list)
    per_account: list[dict[str, Any]] = field(default_factory=list)
    platform_stats: dict[str, Any] = field(default_factory=dict)
    accounts: dict[int, str] = field(default_factory=dict)
    source: str = ""

    @classmethod
    def from_result(cls, result: SiteResult) -> RunView:
        """The view of a run in memory."""
        placement = result.placement
        table = None if placement is None else placement.table
        accounts = (
            {}
            if result.per_account is None
            else _accounts(result.scheduler, result.scheduler_params, result.records)
        )
        return cls(
            label=result.label,
            procs=result.procs,
            records=result.records,
            summary=result.summary.as_dict(),
            config=None if result.config is None else result.config.to_dict(),
            platform=result.platform,
            partition=None if table is None else table["partition"].astype(np.int64),
            cores=None if table is None else table["cores"].astype(np.int64),
            requeues=None if table is None else table["requeues"].astype(np.int64),
            spans=None if placement is None else NodeSpans.parse(placement.nodes),
            started_by=(
                None
                if result.decisions is None
                else _starters(
                    result.records["id"],
                    result.decisions["id"],
                    result.decisions["started_by"].tolist(),
                )
            ),
            per_partition=_rows(result.per_partition),
            per_account=_rows(result.per_account),
            platform_stats=dict(result.platform_stats),
            accounts=accounts,
        )

    # -- what the views ask ----------------------------------------------------------------
    @property
    def ran(self) -> np.ndarray:
        """The records that ran (completed, killed at their estimate, or failed with a node)."""
        state = self.records["state"]
        ran = (state == JobState.COMPLETED) | (state == JobState.KILLED)
        return ran | ((state == JobState.FAILED) & np.isfinite(self.records["start"]))

    @property
    def has_sessions(self) -> bool:
        """Whether any job belongs to a session: site-level runs have sessions; an open trace
        replay has none, and its tables show sessions as not applicable."""
        return bool((self.records["session"] >= 0).any())

    @property
    def span(self) -> tuple[float, float]:
        """From the first submission to the last end (seconds)."""
        rec = self.records
        if not len(rec):
            return 0.0, 0.0
        ends = rec["end"][np.isfinite(rec["end"])]
        last = float(ends.max()) if len(ends) else float(rec["submit"].max())
        return float(rec["submit"].min()), max(last, float(rec["submit"].max()))

    @property
    def pcont(self) -> tuple[float, float]:
        """The run's p_cont(r) = a / (b r + 1) constants (the defaults for a replay)."""
        config = self.config or {}
        return float(config.get("pcont_a", PCONT_A)), float(config.get("pcont_b", PCONT_B))

    def cycles(self, users: np.ndarray) -> list[ActivityCycle] | None:
        """The activity cycles of ``users`` (ids), drawn again from the run's seed exactly as
        the run drew them; None unless the run's users were built-in complete users."""
        config = self.config or {}
        if config.get("model", "complete") != "complete" or "seed" not in config:
            return None
        shares = CycleShares(
            day=float(config.get("day_share", 0.7)),
            weekday=float(config.get("weekday_share", 0.8)),
            max_shift_minutes=float(config.get("shift_max_min", 60.0)),
        )
        seed = int(config["seed"])
        return [ActivityCycle.draw(stream(seed, int(u), "cycle"), shares) for u in users]

    @property
    def nodes(self) -> int:
        """Rows of the Gantt chart: the platform's nodes, else the processors."""
        return self.platform.nodes if self.platform is not None else self.procs

    def outages(self) -> Outages | None:
        """The platform's maintenance windows and failures up to the last end
        (:class:`sitesim.platform.downtime.Outages`), drawn again from the run's seed exactly as the
        run drew them; None without downtime."""
        platform = self.platform
        if platform is None or not platform.downtime or self.config is None:
            return None
        from sitesim.platform.boundary import OUTAGE_STREAM
        from sitesim.platform.downtime import Downtime

        names = {p.name: p.nodes for p in platform.partitions}
        try:
            downtime = Downtime.from_dict(
                platform.downtime, names, platform.nodes, platform.name, None
            )
        except (PlatformError, ValueError, OSError) as err:
            raise SitesimError(f"{self.source or self.label}: its downtime: {err}") from None
        return downtime.outages(self.span[1], [int(self.config["seed"]), OUTAGE_STREAM])


def _accounts(scheduler: str, params: dict[str, Any], records: np.ndarray) -> dict[int, str]:
    """Each user's account, from the account tree of the run's scheduler built again from its
    name and parameters (SLURM); empty when it cannot be built or has none."""
    from sitesim.schedulers import create

    try:
        associations = getattr(create(scheduler, **params), "associations", None)
    except (SitesimError, OSError, ValueError, TypeError):
        return {}
    if associations is None:
        return {}
    return {u: associations.account_of(u) for u in np.unique(records["user"]).tolist()}


def _starters(ids: np.ndarray, started: np.ndarray, by: list[str]) -> np.ndarray:
    """Per record (by id), what started it."""
    out = np.zeros(len(ids), np.int8)
    if len(started):
        where = np.searchsorted(ids, started)
        out[where] = [_STARTERS.get(name, UNKNOWN) for name in by]
    return out


def _rows(table: np.ndarray | None) -> list[dict[str, Any]]:
    if table is None:
        return []
    names = table.dtype.names or ()
    return [{name: row[name].item() for name in names} for row in table]


# -- run folders ---------------------------------------------------------------------------------
def read_run(folder: str | Path) -> RunView:
    """The run a folder holds, checked against its results.json.

    Raises:
        SitesimError: one line: not a folder (:func:`check_run_folder`), not a run folder (or
            one holding several runs), half-written (results.json missing, or a file that
            differs from what it lists), or a run written without its per-job records.
    """
    path = check_run_folder(folder)
    results = path / RESULTS_NAME
    try:
        document = json.loads(results.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise SitesimError(f"{results}: not a results.json ({err})") from None
    if not isinstance(document, dict) or not isinstance(document.get("summary"), dict):
        raise SitesimError(f"{results}: not a results.json of a run (no summary)")
    listed = document.get("files") or {}
    if JOBS_NAME not in listed:
        raise SitesimError(
            f"{path}: holds no per-job records ({JOBS_NAME}); the run was written with its "
            "results only: run it again with its full outputs (sitesim rerun --out DIR)"
        )
    jobs = _checked(path, JOBS_NAME, listed)
    try:
        records = read_records_csv(jobs.decode(), str(path / JOBS_NAME))
    except (UnicodeDecodeError, ValueError) as err:
        raise SitesimError(str(err)) from None
    platform = None
    if document.get("platform") is not None:
        try:
            platform = Platform.from_dict(document["platform"], where=f"{results}: platform")
        except PlatformError as err:
            raise SitesimError(str(err)) from None
    partition = cores = requeues = spans = None
    if platform is not None and PLACEMENT_NAME in listed:
        names = {p.name: k for k, p in enumerate(platform.partitions)}
        rows = list(csv.reader(io.StringIO(_checked(path, PLACEMENT_NAME, listed).decode())))[1:]
        if len(rows) != len(records):
            raise SitesimError(f"{path / PLACEMENT_NAME}: {len(rows):,} rows for "
                               f"{len(records):,} jobs")  # fmt: skip
        partition = np.array([names.get(r[1], -1) for r in rows], np.int64)
        cores = np.array([int(r[4]) for r in rows], np.int64)
        requeues = np.array([int(r[7]) for r in rows], np.int64)
        spans = NodeSpans.parse([r[2] for r in rows])
    started_by = None
    if PRIORITIES_NAME in listed:
        rows = list(csv.reader(io.StringIO(_checked(path, PRIORITIES_NAME, listed).decode())))
        column = rows[0].index("started_by") if rows and "started_by" in rows[0] else None
        if column is not None:
            ids = np.array([int(r[0]) for r in rows[1:]], np.int64)
            started_by = _starters(records["id"], ids, [r[column] for r in rows[1:]])
    config = document.get("config")
    scheduler = str(document.get("scheduler", "?"))
    params = dict(document.get("scheduler_params") or {})
    per_account = list(document.get("per_account") or [])
    return RunView(
        label=scheduler_names.label(scheduler, params),
        procs=int(document.get("procs") or 0),
        records=records,
        summary=document["summary"],
        config=config if isinstance(config, dict) else None,
        platform=platform,
        partition=partition,
        cores=cores,
        requeues=requeues,
        spans=spans,
        started_by=started_by,
        per_partition=list(document.get("per_partition") or []),
        per_account=per_account,
        platform_stats=dict(document.get("platform_stats") or {}),
        accounts=_accounts(scheduler, params, records) if per_account else {},
        source=str(path),
    )


def check_run_folder(folder: str | Path) -> Path:
    """``folder`` if it is a folder holding a run's results.json (its files are checked when
    :func:`read_run` reads them).

    Raises:
        SitesimError: one line: no such folder, a file, not a run folder (or one holding
            several runs), or a half-written one.
    """
    path = Path(folder)
    if path.is_dir():
        if not (path / RESULTS_NAME).is_file():
            raise SitesimError(_not_a_run(path))
        return path
    if not path.exists():
        raise SitesimError(f"{path}: no such run folder")
    where = (
        f"give the folder that holds it ({path.parent})"
        if path.name == RESULTS_NAME
        else "give the folder a run wrote (its --out)"
    )
    raise SitesimError(f"{path}: is a file, not a run folder: {where}")


def _not_a_run(path: Path) -> str:
    """Why a folder without results.json is not a run to read."""
    runs = sorted(p.parent.name for p in path.glob(f"*/{RESULTS_NAME}"))
    if runs:
        shown = ", ".join(runs[:3]) + (f" and {len(runs) - 3:,} more" if len(runs) > 3 else "")
        return f"{path}: holds several runs ({shown}): give one of their folders"
    run_files = (SWF_NAME, JOBS_NAME, USERS_NAME, RUNS_NAME)
    if any((path / name).exists() for name in run_files) or any(path.glob(".*.tmp")):
        return (
            f"{path}: half-written run folder: {RESULTS_NAME}, written last, is missing (the run "
            "was interrupted): run it again"
        )
    others = sorted(p.name for p in path.iterdir() if p.suffix in (".json", ".csv", ".png"))
    if others:  # (a scenario's or an analysis' outputs: complete, just not one run's)
        shown = ", ".join(others[:3]) + (
            f" and {len(others) - 3:,} more" if len(others) > 3 else ""
        )
        return (
            f"{path}: not a run folder (no {RESULTS_NAME}): it holds other results ({shown}); "
            "give the folder of one run (the --out of sitesim run or replay with one run, or "
            "one run's folder in it)"
        )
    return f"{path}: not a run folder (no {RESULTS_NAME})"


def _checked(path: Path, name: str, listed: dict[str, Any]) -> bytes:
    """The bytes of a file results.json lists, checked against its size and sha256."""
    file = path / name
    try:
        data = file.read_bytes()
    except OSError as err:
        raise SitesimError(f"{file}: listed in {RESULTS_NAME} but {err.strerror}") from None
    entry = listed.get(name) or {}
    if entry.get("bytes") not in (None, len(data)) or entry.get("sha256") not in (
        None,
        hashlib.sha256(data).hexdigest(),
    ):
        raise SitesimError(
            f"{file}: half-written or changed since the run ({len(data):,} bytes; "
            f"{RESULTS_NAME} lists {entry.get('bytes', 0):,} and their sha256)"
        )
    return data


def parse_window(text: str) -> tuple[float, float]:
    """``--window A:B`` in days (either side may be empty: from the start, to the end) as
    seconds; NaN for an open side.

    Raises:
        SitesimError: not two numbers, or B <= A.
    """
    low, sep, high = text.partition(":")
    try:
        start = float(low) * DAY if low.strip() else math.nan
        end = float(high) * DAY if high.strip() else math.nan
    except ValueError:
        start = end = math.inf
    if not sep or math.isinf(start) or math.isinf(end) or end <= start:
        raise SitesimError(f"--window {text}: give days as A:B with A < B (e.g. 3:5, or 10:)")
    return start, end


def clip_window(view: RunView, window: tuple[float, float] | None) -> tuple[float, float]:
    """The time window drawn: ``window`` (seconds; NaN sides open) within the run's span; the
    whole span without one.

    Raises:
        SitesimError: a window that does not overlap the run.
    """
    first, last = view.span
    if last <= first:
        last = first + 3600.0
    if window is None:
        return first, last
    low = first if math.isnan(window[0]) else window[0]
    high = last if math.isnan(window[1]) else window[1]
    if high <= first or low >= last or high <= low:
        raise SitesimError(
            f"the window (days {low / DAY:g} to {high / DAY:g}) lies outside the run "
            f"(days {first / DAY:.2f} to {last / DAY:.2f})"
        )
    return low, high
