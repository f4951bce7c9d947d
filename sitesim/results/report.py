"""Plain-text tables of results, and the files a run writes (SWF, results.json, jobs CSV)."""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sitesim import __version__
from sitesim.engine.job import JobState
from sitesim.engine.metrics import competitive_ratio
from sitesim.engine.records import format_value, records_csv
from sitesim.engine.site import AFTER_HORIZON, SiteResult
from sitesim.output import atomic_write, staged_folder, to_json
from sitesim.workload.swf import COLUMN, SWFTrace, format_swf

#: Files written into an output folder.
SWF_NAME, RESULTS_NAME, JOBS_NAME, USERS_NAME = (
    "simulated.swf", "results.json", "jobs.csv", "users.csv",
)  # fmt: skip
#: One flat row per run, for several runs.
RUNS_NAME = "runs.csv"
#: Written for runs on a platform: where each job ran, and the per-partition table.
PLACEMENT_NAME, PARTITIONS_NAME = "placement.csv", "partitions.csv"
ACCOUNTS_NAME, PRIORITIES_NAME = "accounts.csv", "priorities.csv"


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Left-aligned first column, right-aligned others; floats with 3 significant decimals."""
    text = [[_cell(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in text)) for i, h in enumerate(header)]

    def line(cells: Sequence[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = (c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True))
        return "  ".join([first, *rest]).rstrip()

    return "\n".join([line(list(header)), *(line(r) for r in text)])


def _cell(value: Any) -> str:
    if isinstance(value, float):
        if not math.isfinite(value):
            return "-"
        return f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"
    return str(value)


REPLAY_COLUMNS = (
    "Scheduler", "Jobs", "Utilization", "Throughput(jobs/h)", "Avg.Wait(min)",
    "Avg.Response(min)", "Avg.Slowdown", "Avg.BSLD", "Max.Wait(h)", "Makespan(d)",
)  # fmt: skip


#: Columns added when the trace records dependencies.
VIOLATION_COLUMNS = ("Sub.Viol(%)", "Ord.Viol(%)")


def replay_row(result: SiteResult, *, violations: bool = False) -> list[Any]:
    """One row of :data:`REPLAY_COLUMNS` (and :data:`VIOLATION_COLUMNS`)."""
    s = result.summary
    row = [
        result.label,
        s.jobs,
        s.utilization,
        s.throughput_per_h,
        s.wait_mean_min,
        s.response_mean_min,
        s.slowdown_mean,
        s.bsld_mean,
        s.wait_max_min / 60,
        s.makespan_d,
    ]
    if violations:
        row += [100 * s.submission_violations, 100 * s.ordering_violations]
    return row


RUN_COLUMNS = (
    "Users", "Utilization", "Throughput(jobs/h)", "Jobs/Session", "Avg.Response(min)",
    "Avg.Slowdown", "Scheduler",
)  # fmt: skip


def run_row(result: SiteResult) -> list[Any]:
    """One row of :data:`RUN_COLUMNS` (spec README §5)."""
    s = result.summary
    config = result.config
    users = config.headline().get("users", s.active_users) if config else s.active_users
    return [
        users,
        s.utilization,
        s.throughput_per_h,
        s.jobs_per_session,
        s.response_mean_min,
        s.slowdown_mean,
        result.label,
    ]


UTILITY_COLUMNS = (
    "Scheduler", "Utility", "Possible", "Earned(%)", "Earned p50(%)", "Share min", "Share mean",
    "Competitive ratio",
)  # fmt: skip


def utility_row(result: SiteResult) -> list[Any]:
    """One row of :data:`UTILITY_COLUMNS`."""
    s = result.summary
    return [
        result.label, s.utility_total, s.utility_possible, s.utility_earned_mean_pct,
        s.utility_earned_p50_pct, s.utility_share_min, s.utility_share_mean, s.competitive_ratio,
    ]  # fmt: skip


def with_competitive_ratio(result: SiteResult, reference: SiteResult) -> SiteResult:
    """``result`` with its competitive ratio: its aggregate utility / ``reference``'s (EASY on
    the same workload)."""
    ratio = competitive_ratio(result.summary.utility_total, reference.summary.utility_total)
    return dataclasses.replace(
        result, summary=dataclasses.replace(result.summary, competitive_ratio=ratio)
    )


def flat_row(result: SiteResult, **extra: Any) -> dict[str, Any]:
    """One flat row of a run: what it varied (users or trace, scheduler and parameters, seed),
    ``extra`` columns, then every summary field (and, on a platform with GPUs, the GPU
    utilization)."""
    config = result.config
    row: dict[str, Any] = {}
    if config is not None:
        row.update(config.headline())
    row["scheduler"] = result.scheduler
    row.update(result.scheduler_params)
    row["seed"] = None if config is None else config.seed
    row.update(extra)
    row.update(result.summary.as_dict())
    if result.platform_stats.get("gpus"):
        row["gpu_utilization"] = result.platform_stats["gpu_utilization"]
    return row


def csv_text(rows: Sequence[dict[str, Any]]) -> str:
    """Rows as CSV; NaN and None are empty cells.

    The columns are those of every row; a column some rows lack is placed after the column it
    follows in the first row that has it (so ``alpha`` stays beside ``scheduler``).
    """
    header: list[str] = []
    for row in rows:
        previous = -1
        for key in row:
            if key in header:
                previous = header.index(key)
            else:
                previous += 1
                header.insert(previous, key)
    lines = [",".join(header)]
    lines.extend(",".join(_csv_cell(row.get(key)) for key in header) for row in rows)
    return "\n".join(lines) + "\n"


def _csv_cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    if isinstance(value, float):
        return format_value(value)
    text = str(value)
    return '"' + text.replace('"', '""') + '"' if "," in text or '"' in text else text


def results_document(result: SiteResult) -> dict[str, Any]:
    """What results.json holds: the version, the configuration that reproduces the run (null
    if custom pieces made it), the workload facts, refused submissions, the flat summary and
    the scheduler's counters."""
    return {
        "sitesim_version": __version__,
        "config": None if result.config is None else result.config.to_dict(),
        "procs": result.procs,
        "scheduler": result.scheduler,
        "scheduler_params": result.scheduler_params,
        "workload": result.workload,
        "rejected": result.rejected,
        "summary": result.summary.as_dict(),
        "scheduler_stats": result.scheduler_stats,
        **(platform_document(result) if result.platform is not None else {}),
        **({"per_account": _rows(result.per_account)} if result.per_account is not None else {}),
    }


def jobs_refused(rejected: Mapping[str, int], workload: Mapping[str, Any]) -> dict[str, int]:
    """The jobs a run left out, by reason, from its ``rejected`` and ``workload`` (those of a
    :class:`~sitesim.engine.site.SiteResult` or its results.json): the submissions the site refused
    (impossible jobs, a QOS's limits) and, in a replay, the trace lines that could not become
    jobs; not a site-level run's submissions after its horizon (its users work on when it
    ends). They add up to the summary's ``jobs_skipped``."""
    refused = dict(workload.get("jobs_skipped", {}))  # (a replay's: its lines, then the site's)
    for reason, count in rejected.items():
        refused.setdefault(reason, count)
    refused.pop(AFTER_HORIZON, None)
    return {reason: count for reason, count in refused.items() if count}


def refused_text(refused: Mapping[str, int]) -> str:
    """``skipped N impossible jobs (reason count, ...)``: the jobs :func:`jobs_refused` gave."""
    detail = ", ".join(f"{reason} {count:,}" for reason, count in refused.items())
    return f"skipped {sum(refused.values()):,} impossible jobs ({detail})"


def platform_document(result: SiteResult) -> dict[str, Any]:
    """What results.json adds for a run on a platform: the platform, its statistics and the
    per-partition table."""
    assert result.platform is not None and result.per_partition is not None
    return {
        "platform": result.platform.to_dict(),
        "platform_stats": result.platform_stats,
        "per_partition": _rows(result.per_partition),
    }


def _rows(table: np.ndarray) -> list[dict[str, Any]]:
    """A structured array as a list of plain rows (JSON)."""
    return [{name: _plain_cell(row[name]) for name in table.dtype.names or ()} for row in table]


def _plain_cell(value: Any) -> Any:
    value = value.item() if hasattr(value, "item") else value
    return None if isinstance(value, float) and not math.isfinite(value) else value


PARTITION_COLUMNS = (
    "Partition", "Nodes", "Cores", "Jobs", "Avg.Wait(min)", "Avg.Response(min)",
    "Avg.BSLD", "Core.Util",
)  # fmt: skip


def platform_report(result: SiteResult) -> str:
    """A run on a platform in plain text: the platform, its statistics, the partitions."""
    assert result.platform is not None and result.per_partition is not None
    s = result.platform_stats
    # (a platform with GPUs, or that places memory: their utilization too, and each partition's)
    held = [(name, title, key) for name, title, key, has in (
        ("GPUs", "GPU.Util", "gpu_utilization", s["gpus"]),
        ("memory", "Mem.Util", "memory_utilization", result.platform.total_memory),
    ) if has]  # fmt: skip
    more = "".join(f", {name} {s[key]:.3f}" for name, _, key in held)
    lines = [
        f"{result.label} on {result.platform.describe()}",
        f"utilization: cores {s['core_utilization']:.3f}{more}; availability "
        f"{s['availability']:.4f} ({s['node_hours_down']:,.0f} node-hours down); jobs requeued "
        f"{s['jobs_requeued']:,}, failed {s['jobs_failed']:,}; work lost "
        f"{s['work_lost_core_h']:,.0f} core-hours",
    ]
    shown = [r for r in result.per_partition if r["jobs"] or r["core_utilization"] > 0]
    rows = [
        [r["partition"], int(r["nodes"]), int(r["cores"]), int(r["jobs"]),
         float(r["wait_mean_min"]), float(r["response_mean_min"]), float(r["bsld_mean"]),
         float(r["core_utilization"]), *(float(r[key]) for _, _, key in held)]
        for r in shown
    ]  # fmt: skip
    columns = (*PARTITION_COLUMNS, *(title for _, title, _ in held))
    lines.append(table(columns, rows))
    return "\n".join(lines)


ACCOUNT_COLUMNS = (
    "Account", "Users", "Share", "Usage", "Jobs", "Jobs/h", "Jobs/session", "Avg.Wait(min)",
    "Avg.Response(min)", "Core.h",
)  # fmt: skip


def details_report(result: SiteResult) -> str | None:
    """What a run prints after the summary table, if anything: its platform's report, and the
    per-account table when accounts group several users."""
    parts = []
    if result.platform is not None:
        parts.append(platform_report(result))
    accounts = result.per_account
    if accounts is not None and len(accounts) and (accounts["users"] > 1).any():
        parts.append(account_report(result))
    return "\n".join(parts) or None


def account_report(result: SiteResult) -> str:
    """The per-account table in plain text (runs under a scheduler with accounts)."""
    assert result.per_account is not None
    rows = [
        [r["account"], int(r["users"]), float(r["share"]), float(r["usage"]), int(r["jobs"]),
         float(r["jobs_per_hour"]), float(r["jobs_per_session"]), float(r["wait_mean_min"]),
         float(r["response_mean_min"]), float(r["core_hours"])]
        for r in result.per_account
    ]  # fmt: skip
    return table(ACCOUNT_COLUMNS, rows)


def placement_csv(result: SiteResult) -> str:
    """Where each job ran (platform runs): id, partition, nodes (ranges such as ``0-3,17``),
    and the nodes, cores, GPUs and memory (MB) it held, and how often it was requeued."""
    assert result.platform is not None and result.placement is not None
    names = [p.name for p in result.platform.partitions]
    table, nodes = result.placement.table, result.placement.nodes
    lines = ["id,partition,nodes,node_count,cores,gpus,memory_mb,requeues"]
    ids = result.records["id"].tolist()
    columns = zip(
        ids, table["partition"].tolist(), nodes, table["nodes"].tolist(),
        table["cores"].tolist(), table["gpus"].tolist(), table["memory"].tolist(),
        table["requeues"].tolist(), strict=True,
    )  # fmt: skip
    for jid, part, where, count, cores, gpus, memory, requeues in columns:
        name = names[part] if part >= 0 else ""
        lines.append(f'{jid},{name},"{where}",{count},{cores},{gpus},{memory},{requeues}')
    return "\n".join(lines) + "\n"


#: SWF status codes written for simulated jobs (a job killed at its estimate, or whose node
#: failed without a requeue, is written as failed: 0).
STATUS_COMPLETED, STATUS_KILLED, STATUS_CANCELLED = 1, 0, 5
#: Fields copied unchanged from the source trace into a replay's output.
_COPIED = ("cpu", "memory", "req_procs", "req_memory", "group", "executable", "queue", "partition")


def result_swf(result: SiteResult, source: SWFTrace | None = None) -> np.ndarray:
    """The simulated jobs as SWF rows (jobs × 18).

    Fields the simulation decides (submit, wait, runtime, processors, requested time, status,
    user, preceding job, think time) come from the records; with ``source`` the others (CPU
    time, memory, requested processors, group, application, queue, partition) are copied from
    the job's line in the source trace, and are -1 otherwise.
    """
    rec = result.records
    data = np.full((len(rec), len(COLUMN)), -1.0)
    state = rec["state"]
    ran = np.isfinite(rec["start"])
    data[:, COLUMN["job"]] = rec["id"]
    data[:, COLUMN["submit"]] = rec["submit"]
    data[:, COLUMN["wait"]] = np.where(ran, rec["wait"], -1.0)
    data[:, COLUMN["runtime"]] = np.where(ran, rec["runtime"], -1.0)
    data[:, COLUMN["procs"]] = rec["size"]
    data[:, COLUMN["req_procs"]] = rec["size"]
    data[:, COLUMN["req_time"]] = rec["estimate"]
    data[:, COLUMN["status"]] = np.select(
        [(state == JobState.KILLED) | (state == JobState.FAILED), state == JobState.CANCELLED],
        [STATUS_KILLED, STATUS_CANCELLED],
        STATUS_COMPLETED,
    )
    data[:, COLUMN["user"]] = rec["user"]
    data[:, COLUMN["preceding"]] = rec["preceding"]
    data[:, COLUMN["think"]] = np.where(np.isfinite(rec["think"]), rec["think"], -1.0)
    if source is not None:
        rows = rec["trace_row"]
        for name in _COPIED:
            data[:, COLUMN[name]] = source.data[rows, COLUMN[name]]
    elif result.platform is not None and result.placement is not None:  # its partitions
        platform, part = result.platform, result.placement.table["partition"]
        numbers = np.array([platform.swf_number(k) for k in range(len(platform.partitions))])
        data[:, COLUMN["partition"]] = np.where(part >= 0, numbers[np.maximum(part, 0)], -1)
    return data


def result_header(result: SiteResult, source: SWFTrace | None = None) -> list[str]:
    """SWF header lines naming the generator, machine, user model, scheduler and seed."""
    config = result.config
    params = result.scheduler_params
    scheduler = result.scheduler + (
        " (" + ", ".join(f"{k}={v}" for k, v in params.items()) + ")" if params else ""
    )
    mode = {"site": "site-level", "replay": "open replay"}.get(config.mode if config else "")
    lines = [
        "; Version: 2.2",
        f"; Computer: sitesim {__version__} simulated machine",
        f"; Note: generated by sitesim ({mode or 'simulation'})",
        f"; Note: scheduler {scheduler}",
        f"; Note: user model {_user_model(result)}",
        f"; Note: seed {config.seed if config else 'unknown (custom run)'}",
        f"; MaxJobs: {len(result.records)}",
        f"; MaxRecords: {len(result.records)}",
        f"; MaxNodes: {result.procs}",
        f"; MaxProcs: {result.procs}",
    ]
    platform = result.platform
    if platform is not None:
        lines[-2] = f"; MaxNodes: {platform.nodes}"
        lines.append(f"; Note: platform {platform.describe()}")
        lines.append(f"; MaxPartitions: {len(platform.partitions)}")
        lines += [
            f"; Partition: {platform.swf_number(k)} {part.name}"
            for k, part in enumerate(platform.partitions)
        ]
    if source is not None:
        lines.append(f"; Note: source header of {source.name} follows, each line marked '> '")
        lines.extend("; > " + line.lstrip(";").strip() for line in source.header)
    return lines


def _user_model(result: SiteResult) -> str:
    config = result.config
    if config is None:
        return "custom (not described by a configuration)"
    return config.submitted_by(result.workload)


def result_trace(result: SiteResult, name: str = "simulated trace") -> SWFTrace:
    """The jobs of a run as an SWF trace in memory, as ``simulated.swf`` would hold them: a
    site-level run's trace, ready for an open replay."""
    return SWFTrace(name, result_header(result), result_swf(result), dict(result.utility))


def write_outputs(
    out: str | Path,
    result: SiteResult,
    source: SWFTrace | None = None,
    *,
    users: bool = False,
    extra: dict[str, Any] | None = None,
) -> Path:
    """Write the simulated SWF, results.json (with ``extra`` entries) and the per-job CSV (and,
    with ``users``, the per-user CSV) into folder ``out``, all or nothing (results.json is the
    last to appear). results.json lists the other files with their size and sha256
    (``files``), so that a reader can tell a complete folder from a damaged one."""
    folder = Path(out)
    files: dict[str, Callable[[], str]] = {
        SWF_NAME: lambda: format_swf(
            result_swf(result, source), result_header(result, source), result.utility
        ),
        JOBS_NAME: lambda: records_csv(result.records),
    }
    if users:
        files[USERS_NAME] = lambda: records_csv(result.per_user)
    if result.platform is not None:
        files[PLACEMENT_NAME] = lambda: placement_csv(result)
        partitions = result.per_partition
        assert partitions is not None
        files[PARTITIONS_NAME] = lambda: records_csv(partitions)
    if result.per_account is not None:
        accounts = result.per_account
        files[ACCOUNTS_NAME] = lambda: records_csv(accounts)
    if result.decisions is not None:
        decisions = result.decisions
        files[PRIORITIES_NAME] = lambda: records_csv(decisions)
    written: dict[str, dict[str, Any]] = {}
    with staged_folder(folder, last=RESULTS_NAME) as staging:
        for name, text in files.items():  # one at a time: a replay's SWF can be large
            data = text().encode()
            atomic_write(staging / name, data)
            written[name] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
            del data
        document = {**results_document(result), "files": written, **(extra or {})}
        atomic_write(staging / RESULTS_NAME, to_json(document))
    return folder
