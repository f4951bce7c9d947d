"""``sitesim report`` of a sweep folder: the operator's comparison as one self-contained HTML
file (plain tables, and matplotlib figures inside the file as PNG; no Bokeh).

The page holds, for the runs that completed:

1. each combination's means over the seeds, with the half-widths of their 95 % intervals;
2. paired differences: for each factor with two levels or more, each level against a baseline
   level (the factor's first, or one named), paired by seed and the other factors' levels, with
   95 % intervals by Student's t (:func:`~sitesim.sweeps.replications.paired_differences`);
3. per account (SLURM runs with accounts): share against usage, jobs an hour, mean wait;
4. per partition (runs on a platform): jobs, wait, and core, GPU and memory utilization;
5. the SLURM settings as each combination's runs used them, those that differ first;

and says, one line each, which planned runs are missing and why.
"""

from __future__ import annotations

import base64
import html
import itertools
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sitesim import __version__
from sitesim.errors import SitesimError
from sitesim.sweeps.replications import paired_differences, summarize_runs
from sitesim.views.html import CSS
from sitesim.views.sweep_view import SweepRun, SweepView

#: The metrics compared (a summary field and its title); those no run has are left out.
METRICS = (
    ("utilization", "utilization"), ("wait_mean_min", "mean wait (min)"),
    ("slowdown_mean", "mean slowdown"), ("bsld_mean", "mean bounded slowdown"),
    ("throughput_per_h", "throughput (jobs/h)"), ("jobs_per_session", "jobs per session"),
    ("gpu_utilization", "GPU utilization"), ("memory_utilization", "memory utilization"),
)  # fmt: skip
#: The columns of the per-account table, from each run's per-account rows.
ACCOUNT_METRICS = (
    ("share", "share"), ("usage", "usage (core-h share)"), ("jobs_per_hour", "jobs/h"),
    ("wait_mean_min", "mean wait (min)"), ("jobs", "jobs"),
)  # fmt: skip
ACCOUNT_TEXT = (
    "Per combination, each account's mean over the seeds (n: the runs in which it had jobs in "
    "the measurement window) ± the half-width of its 95 % interval. Share: its normalized "
    "shares in the association tree (the share of the machine its shares promise it); usage: "
    "the share of the window's core-hours its jobs used; jobs an hour; mean wait."
)
#: The columns of the per-partition table, from each run's per-partition rows.
PARTITION_METRICS = (
    ("jobs", "jobs"), ("wait_mean_min", "mean wait (min)"), ("core_utilization", "core util."),
    ("gpu_utilization", "GPU util."), ("memory_utilization", "memory util."),
)  # fmt: skip

PARTITION_TEXT = (
    "Per combination, each partition's mean over the seeds ± the half-width of its 95 % "
    "interval: jobs of the measurement window, their mean wait, and the cores, GPUs and "
    "memory its jobs held over the partition's own and the window (- where it has none: no "
    "GPUs, or memory not placed)."
)

_MORE_CSS = (
    "tr.d td{background:#fff3c4}p.m{color:#a00000;margin:2px 0}table.t th{background:#f3f3f3}"
    "table.t td{white-space:nowrap}span.w{white-space:normal;display:inline-block;"
    "max-width:360px}"
)


def baselines(view: SweepView, given: Sequence[str]) -> dict[str, str]:
    """Each factor's baseline level: the first of its levels, or the one ``--baseline
    factor=level`` names.

    Raises:
        SitesimError: one line: not ``factor=level``, a factor the sweep has not, or a level
            the factor has not (naming those it has).
    """
    chosen = {name: levels[0] for name, levels in view.factors.items() if levels}
    for text in given:
        name, sep, level = text.partition("=")
        name, level = name.strip(), level.strip()
        if not sep or not name or not level:
            raise SitesimError(f"--baseline {text}: give factor=level (e.g. bf_resolution=60)")
        if name not in view.factors:
            known = ", ".join(view.factors) or "none"
            raise SitesimError(f"--baseline {text}: {name} is not a factor of the sweep in "
                               f"{view.folder} (its factors: {known})")  # fmt: skip
        if level not in view.factors[name]:
            raise SitesimError(f"--baseline {text}: {level} is not a level of {name} (its "
                               f"levels: {', '.join(view.factors[name])})")  # fmt: skip
        chosen[name] = level
    return chosen


def sweep_report_html(view: SweepView, baseline: Mapping[str, str] | None = None) -> str:
    """The report of a sweep as HTML text; ``baseline``: each factor's baseline level (default:
    its first, :func:`baselines`)."""
    chosen = baselines(view, []) | dict(baseline or {})
    parts = [_header(view)]
    if view.runs:
        parts += [
            _combinations(view),
            _differences(view, chosen),
            _per(view, "account", ACCOUNT_METRICS, ACCOUNT_TEXT),
            _per(view, "partition", PARTITION_METRICS, PARTITION_TEXT),
            _settings(view),
        ]
    else:
        parts.append("<p>No run of the sweep is complete: nothing to compare yet.</p>")
    title = f"sitesim sweep report: {view.folder}"
    return (
        f"<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8><title>{html.escape(title)}"
        f"</title><style>{CSS}{_MORE_CSS}</style></head><body>{''.join(parts)}</body></html>\n"
    )


# -- the parts ---------------------------------------------------------------------------------
def _header(view: SweepView) -> str:
    seeds = sorted({run.seed for run in view.runs})
    factors = "; ".join(f"{html.escape(name)}: {html.escape(', '.join(levels))}"
                        for name, levels in view.factors.items())  # fmt: skip
    lines = [
        f"<h1>Sweep {html.escape(str(view.folder))}</h1>",
        f"<p>{len(view.runs):,} of {view.planned:,} planned runs complete; factors: "
        f"{factors or '(none)'}; seeds of the complete runs: "
        f"{html.escape(', '.join(map(str, seeds))) or '-'}. sitesim {__version__}.</p>",
    ]
    if view.missing:
        lines.append(f"<h2>Missing runs ({len(view.missing):,})</h2><p>Left out of every "
                     "table below:</p>")  # fmt: skip
        lines += [f"<p class=m>{html.escape(name)}: {html.escape(why)}</p>"
                  for name, why in view.missing]  # fmt: skip
    return "".join(lines)


def _combinations(view: SweepView) -> str:
    return (
        "<h2>Per combination</h2><p>The mean over the seeds ± the half-width of its 95 % "
        "confidence interval (Student's t); n: the runs (seeds). A factor that does not apply "
        "to a run's scheduler shows -.</p>"
        + _means(_rows(view.runs), list(view.factors), _present(view.runs))
    )


def _differences(view: SweepView, chosen: Mapping[str, str]) -> str:
    compared = [name for name, levels in view.factors.items() if len(levels) > 1]
    out = [
        "<h2>Paired differences</h2><p>Each level of a factor against its baseline level, "
        "seed by seed (the same users under both) and with the other factors at the same "
        "levels (a factor that does not apply to a run's scheduler matches every level): the "
        "mean of the differences ± the half-width of its 95 % confidence interval (Student's "
        "t, n − 1 degrees of freedom); n: the seeds paired. <b>Bold</b>: the interval "
        "excludes 0. Choose the baselines with --baseline factor=level.</p>"
    ]
    if not compared:
        return out[0] + "<p>(no factor has two levels)</p>"
    metrics = _present(view.runs)
    keys = [key for key, _ in metrics]
    for name in compared:
        others = [other for other in view.factors if other != name]
        rows = _rows(view.runs, expand=others, levels=view.factors)
        found = [row for row in paired_differences(rows, list(view.factors), name,
                                                    chosen[name], keys)
                 if row[name] is not None]  # (not a run the factor does not apply to)  # fmt: skip
        order = {level: k for k, level in enumerate(view.factors[name])}
        found.sort(key=lambda row: order.get(row[name], len(order)))
        out.append(f"<h3>{html.escape(name)}: each level − {html.escape(chosen[name])}</h3>")
        if not found:
            out.append(f"<p>(no complete run at the baseline level {html.escape(chosen[name])}"
                       " beside one at another level)</p>")  # fmt: skip
            continue
        head = [*others, name, "n", *(f"Δ {title}" for _, title in metrics)]
        body = [[*(_text(row[other]) for other in others), _text(row[name]), _int(row["n"]),
                 *(_pm(row[f"{key}_diff"], row[f"{key}_diff_ci95"], signed=True)
                   for key in keys)] for row in found]  # fmt: skip
        out.append(_table(head, body))
        out.append(_figure(found, name, others, metrics))
    return "".join(out)


def _per(view: SweepView, table: str, metrics: Sequence[tuple[str, str]], text: str) -> str:
    """The means over the seeds of each row of the runs' ``per_<table>`` tables (per account,
    per partition), per combination; nothing when no run has the table."""
    rows = _table_rows(view.runs, table, metrics)
    if not rows:
        return ""
    return f"<h2>Per {table}</h2><p>{text}</p>" + _means(rows, [*view.factors, table], metrics)


def _settings(view: SweepView) -> str:
    first: dict[str, SweepRun] = {}  # (each combination's first run: every seed runs alike)
    for run in view.runs:
        first.setdefault(_combination(run), run)
    if not any(run.settings for run in first.values()):
        return ""
    names = list(first)
    keys = list(dict.fromkeys(key for run in first.values() for key in (run.settings or {})))

    def shown(run: SweepRun, key: str) -> str:
        if run.settings is None:
            return "-"
        value = run.settings.get(key)
        return (
            "-" if value is None else html.escape(json.dumps(value) if value == "" else str(value))
        )

    values = {key: [shown(run, key) for run in first.values()] for key in keys}
    differ = [key for key in keys if len(set(values[key])) > 1]
    same = [key for key in keys if key not in differ]
    body = [[html.escape(key), *values[key]] for key in [*differ, *same]]
    labels = ["scheduler", *(f"<span class=w>{html.escape(run.label)}</span>"
                             for run in first.values())]  # fmt: skip
    note = (
        "" if all(run.settings_whole for run in first.values() if run.settings is not None)
        else " Some runs were written by a sitesim that stored only the settings that differ "
        "from Slurm's defaults: only those are shown for them."
    )  # fmt: skip
    table = _table(["setting", *names], [labels, *body], marked=len(differ), offset=1,
                   scroll=False)  # fmt: skip
    return (
        "<h2>SLURM settings as the runs used them</h2><p>Every setting of the SLURM scheduler "
        "after slurm.conf, the parameters given and Slurm's defaults, in Slurm's units (and, "
        "with a slurm.conf, each partition's keys); - where a combination's scheduler is not "
        f"SLURM. {_count(len(differ), 'setting differs', 'settings differ')} between the "
        f"combinations (highlighted, first); {_count(len(same), 'is', 'are')} the same.{note}"
        "</p>" + table
    )


# -- helpers -----------------------------------------------------------------------------------
def _combination(run: SweepRun) -> str:
    return ", ".join(f"{name}={level}" for name, level in run.levels.items()) or "(one)"


def _means(rows: list[dict[str, Any]], by: list[str], metrics: Sequence[tuple[str, str]]) -> str:
    """A table of each group's (each combination of ``by``'s values) n and mean ± half-width
    of every metric, over its rows (the seeds), by :func:`summarize_runs`."""
    found = summarize_runs(rows, by, [key for key, _ in metrics])
    head = [*by, "n", *(title for _, title in metrics)]
    body = [[*(_text(row[name]) for name in by), _int(row["n"]),
             *(_pm(row[key], row[f"{key}_ci95"]) for key, _ in metrics)]
            for row in found]  # fmt: skip
    return _table(head, body)


def _table_rows(
    runs: Sequence[SweepRun], table: str, metrics: Sequence[tuple[str, str]]
) -> list[dict[str, Any]]:
    """One row per row of each run's ``per_<table>`` table: the run's levels and seed, the
    row's name (its account or partition) and metrics."""
    return [
        {**run.levels, table: row.get(table), "seed": run.seed,
         **{key: _number(row.get(key)) for key, _ in metrics}}
        for run in runs for row in getattr(run, f"per_{table}")
    ]  # fmt: skip


def _present(runs: Sequence[SweepRun]) -> list[tuple[str, str]]:
    """The metrics some run has a finite value of."""
    return [(key, title) for key, title in METRICS
            if any(math.isfinite(_number(run.summary.get(key))) for run in runs)]  # fmt: skip


def _rows(
    runs: Sequence[SweepRun],
    expand: Sequence[str] = (),
    levels: Mapping[str, list[str]] | None = None,
) -> list[dict[str, Any]]:
    """One row per run: its levels, seed and metrics; a factor of ``expand`` that does not apply
    to a run is given each of its ``levels`` in turn (a row each), so that the run pairs with
    the runs at any of them."""
    out: list[dict[str, Any]] = []
    for run in runs:
        row = {**run.levels, "seed": run.seed,
               **{key: _number(run.summary.get(key)) for key, _ in METRICS}}  # fmt: skip
        known = levels or {}
        absent = [name for name in expand if name not in run.levels and known.get(name)]
        out.extend({**row, **dict(zip(absent, chosen, strict=True))}
                   for chosen in itertools.product(*(known[name] for name in absent)))  # fmt: skip
    return out


def _figure(
    found: list[dict[str, Any]], name: str, others: list[str], metrics: list[tuple[str, str]]
) -> str:
    """The differences of one factor with their intervals, one panel a metric, as a PNG."""
    from sitesim.figures import figure_bytes, grid

    labels = [", ".join([f"{name}={row[name]}", *(f"{o}={row[o]}" for o in others
                                                  if row[o] is not None)])
              for row in found]  # fmt: skip
    fig, axes = grid(len(metrics), width=3.6, height=0.5 + 0.32 * len(found), cols=4)
    for ax, (key, title) in zip(axes, metrics, strict=True):
        means = [row[f"{key}_diff"] for row in found]
        halves = [row[f"{key}_diff_ci95"] for row in found]
        ys = list(range(len(found)))
        ax.errorbar(means, ys, xerr=[h if math.isfinite(h) else 0.0 for h in halves], fmt="o",
                    ms=4, capsize=3, color="#0072b2")  # fmt: skip
        ax.axvline(0.0, color="#999999", lw=0.8)
        ax.set_yticks(ys, labels if ax is axes[0] else [""] * len(ys), fontsize=8)
        ax.invert_yaxis()
        ax.set_title(f"Δ {title}", fontsize=9)
        ax.tick_params(axis="x", labelsize=8)
    data = base64.b64encode(figure_bytes(fig, Path("differences.png"))).decode()
    return (f'<p><img alt="paired differences of {html.escape(name)}" style="max-width:1200px" '
            f'src="data:image/png;base64,{data}"></p>')  # fmt: skip


def _count(n: int, one: str, many: str) -> str:
    """``1 setting differs``, ``3 settings differ``."""
    return f"{n:,} {one if n == 1 else many}"


def _table(
    head: Sequence[str],
    body: Sequence[Sequence[str]],
    *,
    marked: int = 0,
    offset: int = 0,
    scroll: bool = True,
) -> str:
    """A table of cells already HTML (in a box that scrolls past a screen's height, unless not
    ``scroll``); the ``marked`` rows after the first ``offset`` are highlighted."""
    top = "".join(f"<th>{html.escape(str(h))}</th>" for h in head)
    lines = []
    for k, row in enumerate(body):
        mark = " class=d" if offset <= k < offset + marked else ""
        lines.append(f"<tr{mark}>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>")
    table = f"<table class=t><tr>{top}</tr>{''.join(lines)}</table>"
    return f"<div class=s>{table}</div>" if scroll else table


def _number(value: Any) -> float:
    """A metric as a float: NaN for none (results.json writes NaN as null)."""
    try:
        return math.nan if value is None else float(value)
    except (TypeError, ValueError):
        return math.nan


def _pm(mean: Any, half: Any, *, signed: bool = False) -> str:
    """``mean ± half``; bold when ``signed`` (a difference) and the interval excludes 0."""
    mean, half = _number(mean), _number(half)
    if not math.isfinite(mean):
        return "-"
    digits = 3 if max(abs(mean), abs(half) if math.isfinite(half) else 0.0) < 10 else 1
    text = f"{mean:{'+' if signed else ''},.{digits}f}"
    if math.isfinite(half):
        text += f" ± {half:,.{digits}f}"
        if signed and abs(mean) > half:
            text = f"<b>{text}</b>"
    return text


def _int(value: Any) -> str:
    return f"{int(value):,}"


def _text(value: Any) -> str:
    return "-" if value is None else html.escape(str(value))
