"""``sitesim report``: one run as one self-contained HTML file.

The page holds the summary, the Gantt chart (zoom with the mouse wheel or a box, a job's
details on hover), the timelines (utilization of each resource, jobs waiting, sessions active;
zoomed with the Gantt), the users' lanes, the per-user and per-partition tables and the run's
configuration. Everything, Bokeh's JavaScript included, is inside the file: it opens without
network access, and can be mailed.

Bokeh (the ``report`` extra) draws the interactive parts: it renders on a canvas and ships
columns as binary arrays, so the 90,000 rectangles of a two-year replay stay a few MB and
open in a second; above :data:`MAX_QUADS` rectangles in the window the Gantt is the
rasterised density image of :mod:`sitesim.views.gantt`, without per-job hover.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from sitesim import __version__
from sitesim.errors import SitesimError
from sitesim.output import atomic_write
from sitesim.results.timeline import mean_level
from sitesim.views import gantt, lanes
from sitesim.views.run_view import DAY, RunView, clip_window

#: Past this many rectangles in the window, the report's Gantt is a density image.
MAX_QUADS = 150_000
#: At most this many points per timeline.
TIMELINE_POINTS = 4_000
#: Rows of the per-user table (the users with the most processor-time).
USER_ROWS = 300
#: Summary fields shown, with their titles.
SUMMARY = (
    ("jobs", "jobs"), ("utilization", "utilization"), ("throughput_per_h", "throughput (jobs/h)"),
    ("wait_mean_min", "mean wait (min)"), ("response_mean_min", "mean response (min)"),
    ("slowdown_mean", "mean slowdown"), ("bsld_mean", "mean bounded slowdown"),
    ("wait_max_min", "longest wait (min)"), ("makespan_d", "makespan (days)"),
    ("active_users", "active users"), ("sessions", "sessions"),
    ("jobs_per_session", "jobs per session"), ("batches_per_session", "batches per session"),
    ("jobs_killed", "jobs killed at their estimate"),
)  # fmt: skip


def bokeh_modules() -> Any:
    """Bokeh, or one line saying how to install it."""
    try:
        import bokeh
    except ImportError:
        raise SitesimError(
            "the HTML report needs Bokeh: pip install 'sitesim[report]' (the PNG figures, "
            "--gantt and --lanes, need only matplotlib)"
        ) from None
    return bokeh


def write_report(
    view: RunView,
    path: str | Path,
    *,
    color_by: gantt.ColorBy = "user",
    window: tuple[float, float] | None = None,
    others: list[RunView] | None = None,
    users: list[int] | None = None,
) -> Path:
    """Write the HTML report of ``view`` to ``path`` (atomically); ``others`` are runs of the
    same users drawn beside it in the lanes."""
    text = report_html(view, color_by=color_by, window=window, others=others, users=users)
    atomic_write(path, text)
    return Path(path)


def report_html(
    view: RunView,
    *,
    color_by: gantt.ColorBy = "user",
    window: tuple[float, float] | None = None,
    others: list[RunView] | None = None,
    users: list[int] | None = None,
) -> str:
    """The report as HTML text."""
    bokeh_modules()
    from bokeh.embed import file_html
    from bokeh.layouts import column
    from bokeh.models import Div
    from bokeh.resources import INLINE

    low, high = clip_window(view, window)
    chart = _gantt_plot(view, color_by, (low, high))
    timelines = _timeline_plots(view, (low, high), chart.x_range)
    chosen = lanes.pick_users(view, users)
    how = "as named" if users else "those who used the most processor-time"
    parts = [
        Div(text=_header(view), width=1200),
        chart,
        Div(text=_legend(view, color_by, (low, high)), width=1200),
        *timelines,
        Div(text=_lanes_section(view, others or [], chosen, how, (low, high)), width=1200),
        Div(text=_tables(view), width=1200),
    ]
    title = f"sitesim report: {view.label}" + (f" ({view.source})" if view.source else "")
    return str(file_html(column(*parts), INLINE, title))


# -- the Gantt ---------------------------------------------------------------------------------
def _gantt_plot(view: RunView, color_by: gantt.ColorBy, window: tuple[float, float]) -> Any:
    from bokeh.models import ColumnDataSource, HoverTool, LinearColorMapper
    from bokeh.plotting import figure

    low, high = window
    code, names = gantt.categories(view, color_by)
    rects = gantt.window_rects(view, window)
    rows = view.nodes
    what = "node" if view.platform is not None else "processor"
    fig = figure(
        width=1200, height=460, x_range=(low / DAY, high / DAY), y_range=(0, rows),
        tools="xwheel_zoom,xpan,box_zoom,reset,save", active_scroll="xwheel_zoom",
        x_axis_label="day", y_axis_label=what, name="gantt", output_backend="canvas",
    )  # fmt: skip
    if len(rects) <= MAX_QUADS:
        rec = view.records[rects.job]
        source = ColumnDataSource(
            {
                "left": (rects.t0 / DAY).astype(np.float32),
                "right": (rects.t1 / DAY).astype(np.float32),
                "bottom": rects.y0.astype(np.float32),
                "top": (rects.y0 + (rects.y1 - rects.y0) * np.where(
                    rects.weight < 1, np.maximum(rects.weight, 0.15), 1.0)).astype(np.float32),
                "code": (code[rects.job] % len(gantt.PALETTE)).astype(np.int8),
                "id": rec["id"].astype(np.int32),
                "user": rec["user"].astype(np.int32),
                "size": rec["size"].astype(np.int32),
                "wait": (rec["wait"] / 60).astype(np.float32),
                "runtime": (rec["runtime"] / 3600).astype(np.float32),
            }
        )  # fmt: skip
        mapper = LinearColorMapper(palette=list(gantt.PALETTE), low=-0.5,
                                   high=len(gantt.PALETTE) - 0.5)  # fmt: skip
        quads = fig.quad(
            left="left", right="right", bottom="bottom", top="top", source=source,
            fill_color={"field": "code", "transform": mapper}, line_color="white",
            line_width=0.3 if len(rects) < 5000 else 0, fill_alpha=0.9,
        )  # fmt: skip
        fig.add_tools(
            HoverTool(
                renderers=[quads],
                tooltips=[("job", "@id"), ("user", "@user"), ("size", "@size"),
                          ("start (day)", "@left{0.000}"), ("wait (min)", "@wait{0.0}"),
                          ("ran (h)", "@runtime{0.00}")],
            )
        )  # fmt: skip
        fig.title.text = f"{_jobs_drawn(rects)}, by {color_by}; hover for a job"
    else:
        shape = (700, 1600)
        extent = (low / DAY, high / DAY, 0.0, float(rows))
        colors = gantt.rgb(gantt.palette(len(names)))[code[rects.job]]
        image = gantt.density_image(rects, colors, extent, shape)
        rgba = np.ascontiguousarray(np.round(np.clip(image, 0, 1) * 255), dtype=np.uint8)
        fig.image_rgba(image=[rgba.view(np.uint32).reshape(shape)], x=extent[0], y=0,
                       dw=extent[1] - extent[0], dh=rows)  # fmt: skip
        fig.title.text = (
            f"{_jobs_drawn(rects)} drawn as density (each pixel the share of its area in "
            f"use, by {color_by}): give --window for each job"
        )
    _outage_quads(fig, view, window)
    fig.xgrid.visible = fig.ygrid.visible = False
    return fig


def _jobs_drawn(rects: gantt.Rects) -> str:
    """How many jobs the chart shows, and in how many rectangles when more (a job on
    processors that are not contiguous is drawn as one rectangle per block)."""
    jobs = len(np.unique(rects.job))
    if len(rects) == jobs:
        return f"{jobs:,} jobs"
    return f"{jobs:,} jobs in {len(rects):,} rectangles (one per block of contiguous rows)"


def _legend(view: RunView, color_by: gantt.ColorBy, window: tuple[float, float]) -> str:
    """The Gantt's colours: a swatch per category shown, or how they repeat past the palette."""
    code, names = gantt.categories(view, color_by)
    rects = gantt.window_rects(view, window)
    used = np.unique(code[rects.job]).tolist() if len(rects) else []
    colors = gantt.palette(len(names))
    swatches = "".join(
        f'<span style="white-space:nowrap;margin-right:12px"><span style="display:inline-block;'
        f'width:12px;height:12px;background:{colors[k]};vertical-align:middle;'
        f'margin-right:4px"></span>{html.escape(names[k])}</span>'
        for k in used
    )  # fmt: skip
    note = (
        f" ({len(names)} {color_by}s share {len(gantt.PALETTE)} colours: a colour repeats every "
        f"{len(gantt.PALETTE)}; hover a job for its {color_by})"
        if len(names) > len(gantt.PALETTE)
        else ""
    )
    return f'<p style="font-size:12px">Colours, by {html.escape(color_by)}{note}: {swatches}</p>'


def _outage_quads(fig: Any, view: RunView, window: tuple[float, float]) -> None:
    outages = view.outages()
    if outages is None or not len(outages):
        return
    keep = (outages.up > window[0]) & (outages.down < window[1])
    node, kind = outages.node[keep], outages.kind[keep]
    colors = np.array(gantt.OUTAGE_COLORS)[kind].tolist()
    fig.quad(left=outages.down[keep] / DAY, right=outages.up[keep] / DAY, bottom=node,
             top=node + 1, fill_color=colors, fill_alpha=0.45, line_color=None)  # fmt: skip


# -- timelines ---------------------------------------------------------------------------------
def timelines(view: RunView, window: tuple[float, float]) -> dict[str, np.ndarray]:
    """Series over the window (means over each bin of at least an hour): ``day`` (bin starts),
    ``waiting`` jobs, ``sessions`` active, and a ``utilization`` of each resource
    (``utilization`` of processors or cores; on a platform, ``partition <name>`` and ``gpus``)."""
    low, high = window
    step = max(3600.0, (high - low) / TIMELINE_POINTS)
    edges = np.arange(low, high + step / 2, step)
    if len(edges) < 2:
        edges = np.array([low, high])
    rec = view.records
    ran = view.ran
    out: dict[str, np.ndarray] = {"day": edges[:-1] / DAY}
    started = np.where(np.isfinite(rec["start"]), rec["start"], high)
    out["waiting"] = mean_level(rec["submit"], started, np.ones(len(rec)), edges)
    s = lanes.sessions(view)
    out["sessions"] = mean_level(s.first, s.last, np.ones(len(s.first)), edges)
    held = rec["size"] if view.cores is None else view.cores
    busy = mean_level(rec["start"][ran], rec["end"][ran], held[ran].astype(np.float64), edges)
    out["utilization"] = busy / max(view.procs, 1)
    platform = view.platform
    if platform is not None and view.partition is not None and len(platform.partitions) > 1:
        assert view.cores is not None
        for k, part in enumerate(platform.partitions):
            mine = ran & (view.partition == k)
            total = float(platform.cores[list(part.nodes)].sum())
            level = mean_level(rec["start"][mine], rec["end"][mine],
                               view.cores[mine].astype(np.float64), edges)  # fmt: skip
            out[f"partition {part.name}"] = level / total if total else level
    return out


def _timeline_plots(view: RunView, window: tuple[float, float], x_range: Any) -> list[Any]:
    from bokeh.models import ColumnDataSource, HoverTool
    from bokeh.plotting import figure

    series = timelines(view, window)
    source = ColumnDataSource({k.replace(" ", "_"): v.astype(np.float32)
                               for k, v in series.items()})  # fmt: skip
    plots = []
    panels = [("utilization", [k for k in series if k == "utilization" or k.startswith("part")]),
              ("jobs waiting", ["waiting"]), ("sessions active", ["sessions"])]  # fmt: skip
    for title, keys in panels:
        if title == "sessions active" and not series["sessions"].any():
            continue
        fig = figure(width=1200, height=170, x_range=x_range, title=title,
                     tools="xwheel_zoom,xpan,reset", x_axis_label="day")  # fmt: skip
        for k, key in enumerate(keys):
            fig.step("day", key.replace(" ", "_"), source=source, mode="after",
                     color=gantt.PALETTE[k % len(gantt.PALETTE)], legend_label=key)  # fmt: skip
        fig.legend.location = "top_left"
        fig.legend.label_text_font_size = "8pt"
        fig.add_tools(HoverTool(tooltips=[("day", "@day{0.00}"),
                                          *((k, f"@{{{k.replace(' ', '_')}}}{{0.000}}")
                                            for k in keys)], mode="vline"))  # fmt: skip
        plots.append(fig)
    return plots


# -- the static parts --------------------------------------------------------------------------
def _header(view: RunView) -> str:
    s = dict(view.summary)
    if not view.has_sessions:  # (an open replay: not applicable)
        s.update(sessions=None, jobs_per_session=None, batches_per_session=None)
    where = view.platform.describe() if view.platform is not None else f"{view.procs:,} processors"
    rows = "".join(f"<tr><td>{html.escape(title)}</td><td>{_fmt(s.get(key))}</td></tr>"
                   for key, title in SUMMARY if key in s)  # fmt: skip
    stats = "".join(
        f"<tr><td>{html.escape(k.replace('_', ' '))}</td><td>{_fmt(v)}</td></tr>"
        for k, v in view.platform_stats.items()
    )
    return (
        f"<style>{CSS}</style><h1>{html.escape(view.label)} on {html.escape(where)}</h1>"
        f"<p>{html.escape(view.source or 'a run in memory')}; sitesim {__version__}. "
        "Zoom with the mouse wheel (time) or a box; hover a job (or a timeline) for its "
        "details.</p>"
        f"<h2>Summary</h2><table class=t>{rows}{stats}</table><h2>Gantt chart</h2>"
    )


def _lanes_section(
    view: RunView, others: list[RunView], users: list[int], how: str, window: tuple[float, float]
) -> str:
    fig = lanes.lanes_figure([view, *others], users, window)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    data = base64.b64encode(buffer.getvalue()).decode()
    return (
        f"<h2>Users</h2><p>{len(users)} users ({how})"
        "; a red cross: a session ended after a slow response.</p>"
        f'<img alt="user lanes" style="max-width:1200px" src="data:image/png;base64,{data}">'
    )


def _tables(view: RunView) -> str:
    parts = ["<h2>Per user</h2>", _user_table(view)]
    if view.per_partition:
        parts += ["<h2>Per partition</h2>", _rows_table(view.per_partition)]
    if view.per_account:
        parts += ["<h2>Per account</h2>", _rows_table(view.per_account)]
    config = json.dumps(view.config, indent=2) if view.config else "(a custom run)"
    parts.append(f"<h2>Configuration</h2><pre>{html.escape(config)}</pre>")
    return "".join(parts)


def _user_table(view: RunView) -> str:
    rec = view.records
    users, index = np.unique(rec["user"], return_inverse=True)
    jobs = np.bincount(index, minlength=len(users))
    started = np.isfinite(rec["start"])
    wait = np.bincount(index[started], rec["wait"][started], len(users))
    waited = np.bincount(index[started], minlength=len(users))
    ended = np.isfinite(rec["response"])
    response = np.bincount(index[ended], rec["response"][ended], len(users))
    responded = np.bincount(index[ended], minlength=len(users))
    core_h = np.bincount(index, np.nan_to_num(rec["size"] * rec["runtime"]) / 3600, len(users))
    s = lanes.sessions(view)
    where = np.searchsorted(users, s.user)
    sessions = np.bincount(where, minlength=len(users))
    slow = np.bincount(where, s.slow.astype(np.float64), len(users))
    order = np.argsort(-core_h, kind="stable")[:USER_ROWS]
    has = view.has_sessions  # (else not applicable: "-")
    rows = [{"user": int(users[k]), "jobs": int(jobs[k]),
             "sessions": int(sessions[k]) if has else None,
             "ended after a slow response": int(slow[k]) if has else None,
             "mean wait (min)": wait[k] / waited[k] / 60 if waited[k] else math.nan,
             "mean response (min)": response[k] / responded[k] / 60 if responded[k] else math.nan,
             "processor-hours": core_h[k]} for k in order.tolist()]  # fmt: skip
    note = (f"<p>The {USER_ROWS} of {len(users):,} users with the most processor-hours.</p>"
            if len(users) > USER_ROWS else "")  # fmt: skip
    return note + _rows_table(rows)


def _rows_table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "<p>(none)</p>"
    head = "".join(f"<th>{html.escape(str(k).replace('_', ' '))}</th>" for k in rows[0])
    body = "".join("<tr>" + "".join(f"<td>{_fmt(v)}</td>" for v in row.values()) + "</tr>"
                   for row in rows)  # fmt: skip
    return f"<div class=s><table class=t><tr>{head}</tr>{body}</table></div>"


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if not math.isfinite(value):
            return "-"
        return f"{value:,.3f}" if abs(value) < 10 else f"{value:,.1f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return html.escape(str(value))


#: The report's style sheet (the sweep report's too).
CSS = (
    "body{font-family:sans-serif;margin:1em 2em}h1{font-size:1.3em}h2{font-size:1.1em;"
    "margin-top:1.4em}table.t{border-collapse:collapse;font-size:0.85em}table.t td,"
    "table.t th{border-bottom:1px solid #ddd;padding:2px 8px;text-align:right}"
    "table.t td:first-child{text-align:left}div.s{max-height:420px;overflow:auto;"
    "display:inline-block}pre{font-size:0.8em;background:#f6f6f6;padding:8px}"
)
