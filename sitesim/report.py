"""Plain-text tables of results, and the files a run writes (SWF, results.json, jobs CSV)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sitesim.job import JobState
from sitesim.output import atomic_write, to_json
from sitesim.records import records_csv
from sitesim.site import SiteResult
from sitesim.swf import COLUMN, SWFTrace, format_swf

#: Files written into an output folder.
SWF_NAME, RESULTS_NAME, JOBS_NAME = "simulated.swf", "results.json", "jobs.csv"


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


def replay_row(result: SiteResult) -> list[Any]:
    """One row of :data:`REPLAY_COLUMNS`."""
    s = result.summary
    return [
        scheduler_label(result),
        s["jobs"],
        s["utilization"],
        s["throughput_per_hour"],
        s["wait"]["mean"] / 60,
        s["response"]["mean"] / 60,
        s["slowdown"]["mean"],
        s["bounded_slowdown"]["mean"],
        s["max_wait"] / 3600,
        s["makespan"] / 86400,
    ]


RUN_COLUMNS = (
    "Users", "Utilization", "Throughput(jobs/h)", "Jobs/Session", "Avg.Response(min)",
    "Avg.Slowdown", "Scheduler",
)  # fmt: skip


def scheduler_label(result: SiteResult) -> str:
    """The scheduler's name with its parameters, e.g. ``CREASY alpha=6000``."""
    params = result.config.get("scheduler_params") or {}
    return result.config["scheduler"] + "".join(f" {k}={v:g}" for k, v in params.items())


def run_row(result: SiteResult) -> list[Any]:
    """One row of :data:`RUN_COLUMNS` (spec README §5)."""
    s = result.summary
    users = s.get("users", {})
    return [
        result.config["users"],
        s["utilization"],
        s["throughput_per_hour"],
        users.get("jobs_per_session", float("nan")),
        s["response"]["mean"] / 60,
        s["slowdown"]["mean"],
        scheduler_label(result),
    ]


def users_csv(result: SiteResult) -> str:
    """The per-user table of a site-level run as CSV."""
    rows = result.summary.get("users", {}).get("per_user", [])
    header = ["user", "jobs", "sessions", "batches", "mean_response", "mean_slowdown"]
    lines = [",".join(header)]
    lines.extend(",".join(str(row[k]) for k in header) for row in rows)
    return "\n".join(lines) + "\n"


def results_document(result: SiteResult) -> dict[str, Any]:
    """What results.json holds: configuration (with seed and version), summary, counters."""
    return {
        "config": result.config,
        "summary": result.summary,
        "scheduler_stats": result.scheduler_stats,
    }


#: SWF status codes written for simulated jobs.
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
        [state == JobState.KILLED, state == JobState.CANCELLED],
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
    return data


def result_header(result: SiteResult, source: SWFTrace | None = None) -> list[str]:
    """SWF header lines naming the generator, machine, user model, scheduler and seed."""
    config = result.config
    params = config.get("scheduler_params") or {}
    scheduler = config["scheduler"] + (
        " (" + ", ".join(f"{k}={v}" for k, v in params.items()) + ")" if params else ""
    )
    lines = [
        "; Version: 2.2",
        f"; Computer: sitesim {config['sitesim_version']} simulated machine",
        f"; Note: generated by sitesim ({config.get('mode', 'simulation')})",
        f"; Note: scheduler {scheduler}",
        f"; Note: user model {_user_model(config)}",
        f"; Note: seed {config.get('seed')}",
        f"; MaxJobs: {len(result.records)}",
        f"; MaxRecords: {len(result.records)}",
        f"; MaxNodes: {config['procs']}",
        f"; MaxProcs: {config['procs']}",
    ]
    if source is not None:
        lines.append(f"; Note: source header of {source.name} follows, each line marked '> '")
        lines.extend("; > " + line.lstrip(";").strip() for line in source.header)
    return lines


def _user_model(config: dict[str, Any]) -> str:
    if config.get("mode") == "open replay":
        return (
            f"open trace replay of {config.get('trace')} "
            f"(scale factor {config.get('scale_factor'):.6g}, estimates {config.get('estimates')})"
        )
    model = config.get("user_model", {})
    settings = ", ".join(f"{k}={v}" for k, v in model.items() if k != "kind")
    return (
        f"{config.get('users')} {model.get('kind')} users for {config.get('days'):g} days, "
        f"{config.get('profile')}; {settings}"
    )


def write_outputs(out: str | Path, result: SiteResult, source: SWFTrace | None = None) -> Path:
    """Write the simulated SWF, results.json and the per-job CSV into folder ``out``."""
    folder = Path(out)
    swf = format_swf(result_swf(result, source), result_header(result, source))
    atomic_write(folder / SWF_NAME, swf)
    atomic_write(folder / RESULTS_NAME, to_json(results_document(result)))
    atomic_write(folder / JOBS_NAME, records_csv(result.records))
    return folder
