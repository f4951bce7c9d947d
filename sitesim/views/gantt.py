"""Gantt charts of a run: jobs as rectangles on nodes (or processors) over time.

Rows are the platform's nodes, or the processors of a run without a platform. A run on
processors records how many each job held, not which: the chart numbers them for the drawing
(:func:`processor_rows`: each starting job takes the lowest block of free processors that holds
it, else the lowest free ones), which any schedule on identical processors allows.

Two ways to draw, chosen by how many rectangles the time window shows:

- up to ``max_patches`` (5,000 by default): one patch per rectangle (a job on several ranges
  of nodes has several), edges visible;
- beyond: the rectangles are rasterised (:func:`rasterize`) into an image whose every pixel
  holds the exact share of its area that jobs covered and the area-weighted mean of their
  colours, so density stays true at any size (a pixel half covered by one user's jobs is half
  that user's colour) and the cost is linear in the jobs, whatever the window.

Colours by user, account, partition, scheduler decision (started by Slurm's main or backfill
scheduler) or state (completed, killed at its estimate, failed with a node, requeued).
Maintenance windows are shaded grey and node failures red.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np

from sitesim.engine.job import JobState
from sitesim.errors import SitesimError
from sitesim.views.run_view import BACKFILL, MAIN, RunView, clip_window

DAY = 86_400.0
ColorBy = Literal["user", "account", "partition", "decision", "state"]
COLOR_BY: tuple[ColorBy, ...] = get_args(ColorBy)
#: Past this many rectangles in the window, the chart is rasterised.
MAX_PATCHES = 5_000
#: Colours of categories, then cycled: Okabe and Ito's eight, safe for colour-blind readers,
#: then twelve of Trubetskoy's "20 distinct colours" that differ from them and from each
#: other (tab20's pairs of one hue, dark and light, looked alike: every two of these differ by
#: a CIELAB distance of at least 24; tested).
PALETTE = (
    "#e69f00", "#56b4e9", "#009e73", "#f0e442", "#0072b2", "#d55e00", "#cc79a7", "#000000",
    "#911eb4", "#800000", "#808000", "#000075", "#469990", "#9a6324", "#bfef45", "#f032e6",
    "#a9a9a9", "#fabed4", "#dcbeff", "#aaffc3",
)  # fmt: skip
#: Shades of downtime: maintenance, failure.
OUTAGE_COLORS = ("#404040", "#d55e00")


@dataclass(frozen=True)
class Rects:
    """Rectangles of the chart: record ``job[k]`` from ``t0[k]`` to ``t1[k]`` (seconds) on rows
    ``y0[k]`` to ``y1[k]`` (nodes or processors; ``y1`` excluded), covering a share
    ``weight[k]`` of those rows' cores (below 1 for a job sharing its nodes)."""

    job: np.ndarray
    t0: np.ndarray
    t1: np.ndarray
    y0: np.ndarray
    y1: np.ndarray
    weight: np.ndarray

    def __len__(self) -> int:
        return len(self.job)

    def take(self, keep: np.ndarray) -> Rects:
        return Rects(*(getattr(self, f)[keep] for f in ("job", "t0", "t1", "y0", "y1", "weight")))


def job_rects(view: RunView) -> Rects:
    """Every rectangle of the run's jobs that ran."""
    rec = view.records
    ran = np.flatnonzero(view.ran)
    start, end = rec["start"], rec["end"]
    if view.spans is not None and view.platform is not None:
        spans = view.spans
        keep = view.ran[spans.job]
        job, first, last = spans.job[keep], spans.first[keep], spans.last[keep]
        assert view.cores is not None
        # the cores a job held, spread over its nodes in proportion to theirs (on nodes of
        # one size: evenly; a job alone on its nodes: all of them)
        below = np.concatenate([[0], np.cumsum(view.platform.cores, dtype=np.float64)])
        held = np.bincount(job, weights=below[last] - below[first], minlength=len(rec))
        share = view.cores[job] / np.maximum(held[job], 1.0)
        return Rects(job, start[job], end[job], first, last, np.minimum(share, 1.0))
    job, y0, y1 = processor_rows(start[ran], end[ran], rec["size"][ran], view.procs)
    job = ran[job]
    return Rects(job, start[job], end[job], y0, y1, np.ones(len(job)))


def window_rects(view: RunView, window: tuple[float, float]) -> Rects:
    """The rectangles of ``view``'s jobs in ``window`` (seconds, both ends given): those that
    ran during it, and those of zero runtime at an instant of it, its ends included."""
    rects = job_rects(view)
    low, high = window
    instant = rects.t1 <= rects.t0
    during = (rects.t1 > low) & (rects.t0 < high)
    return rects.take(np.where(instant, (rects.t0 >= low) & (rects.t0 <= high), during))


def processor_rows(
    start: np.ndarray, end: np.ndarray, size: np.ndarray, procs: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Number the processors of jobs that ran on ``procs`` identical ones, for the drawing.

    Jobs end before others start at the same instant (intervals are half-open); a job that
    ends as it starts (zero runtime) takes its processors and gives them back at once, before
    the jobs that start then and run on. Each starting job takes the lowest block of free
    processors that holds it, else the lowest free processors (several blocks). Returns
    ``(job, first, last)``: job index (into the inputs) and block ``[first, last)``, one row per
    block.
    """
    n = len(start)
    brief = end <= start
    # events at one instant: ends (0), jobs of zero runtime (1), starts of the others (2)
    times = np.concatenate([end[~brief], start])
    kind = np.concatenate([np.zeros(int(n - brief.sum()), np.int8), 2 - brief])
    event_job = np.concatenate([np.flatnonzero(~brief), np.arange(n)])
    order = np.lexsort((kind, times))
    sizes = size.tolist()
    lows, highs = [0], [procs]  # free blocks [low, high), ascending

    def release(blocks: list[tuple[int, int]]) -> None:
        for low, high in blocks:
            b = bisect.bisect_left(lows, low)
            if b > 0 and highs[b - 1] == low:  # joins the block before
                b -= 1
                highs[b] = high
            else:
                lows.insert(b, low)
                highs.insert(b, high)
            if b + 1 < len(lows) and lows[b + 1] == highs[b]:  # and the one after
                highs[b] = highs[b + 1]
                del lows[b + 1], highs[b + 1]

    held: dict[int, list[tuple[int, int]]] = {}
    out_job: list[int] = []
    out_low: list[int] = []
    out_high: list[int] = []
    for k, what in zip(event_job[order].tolist(), kind[order].tolist(), strict=True):
        if what == 0:  # an end
            release(held.pop(k, []))
            continue
        need = sizes[k]
        blocks = []
        for b in range(len(lows)):
            if highs[b] - lows[b] >= need:
                blocks.append((lows[b], lows[b] + need))
                if highs[b] - lows[b] == need:
                    del lows[b], highs[b]
                else:
                    lows[b] += need
                break
        else:  # no block holds it: the lowest free processors
            while need > 0 and lows:
                take = min(need, highs[0] - lows[0])
                blocks.append((lows[0], lows[0] + take))
                need -= take
                if take == highs[0] - lows[0]:
                    del lows[0], highs[0]
                else:
                    lows[0] += take
        for low, high in blocks:
            out_job.append(k)
            out_low.append(low)
            out_high.append(high)
        if what == 1:  # zero runtime: given back at once
            release(blocks)
        else:
            held[k] = blocks
    return (np.array(out_job, np.int64), np.array(out_low, np.int64),
            np.array(out_high, np.int64))  # fmt: skip


def categories(view: RunView, color_by: ColorBy) -> tuple[np.ndarray, list[str]]:
    """Per record, the index of its category, and the categories' names.

    Raises:
        SitesimError: a colouring the run has no data for (partitions without a platform,
            decisions under a scheduler that records none, accounts outside SLURM).
    """
    rec = view.records
    if color_by == "user":
        users, code = np.unique(rec["user"], return_inverse=True)
        return code, [f"user {u}" for u in users.tolist()]
    if color_by == "account":
        if not view.accounts:
            raise SitesimError("colour by account: this run has no accounts (SLURM runs have)")
        names = sorted(set(view.accounts.values()))
        index = {name: k for k, name in enumerate(names)}
        code = np.array([index.get(view.accounts.get(u, ""), 0) for u in rec["user"].tolist()])
        return code, names
    if color_by == "partition":
        if view.partition is None or view.platform is None:
            raise SitesimError("colour by partition: this run has no platform of partitions")
        names = [p.name for p in view.platform.partitions]
        return np.maximum(view.partition, 0), names
    if color_by == "decision":
        if view.started_by is None:
            raise SitesimError(
                "colour by decision: this run's scheduler records no decisions (SLURM does)"
            )
        code = np.select([view.started_by == MAIN, view.started_by == BACKFILL], [0, 1], 2)
        return code, ["main", "backfill", "not recorded"]
    if color_by == "state":
        state = rec["state"]
        requeued = np.zeros(len(rec), bool) if view.requeues is None else view.requeues > 0
        code = np.select(
            [state == JobState.KILLED, state == JobState.FAILED, requeued], [1, 2, 3], 0
        )
        return code, ["completed", "killed at its estimate", "failed (node)", "requeued"]
    raise SitesimError(f"colour by {color_by!r}: one of {', '.join(COLOR_BY)}")


def rgb(colors: tuple[str, ...] | list[str]) -> np.ndarray:
    """Hex colours as an (n, 3) float array in [0, 1]."""
    return np.array([[int(c[i : i + 2], 16) / 255 for i in (1, 3, 5)] for c in colors])


def palette(count: int) -> list[str]:
    """``count`` colours (the palette cycled)."""
    return [PALETTE[k % len(PALETTE)] for k in range(count)]


# -- rasterising ---------------------------------------------------------------------------------
#: Rectangles splatted at a time (bounds the temporary arrays).
_CHUNK = 250_000


def rasterize(
    x0: np.ndarray,
    x1: np.ndarray,
    y0: np.ndarray,
    y1: np.ndarray,
    values: np.ndarray,
    extent: tuple[float, float, float, float],
    shape: tuple[int, int],
) -> np.ndarray:
    """Integrate rectangles over a pixel grid, exactly.

    Pixel (i, j) of the ``(rows, cols)`` grid spans ``extent = (left, right, bottom, top)``
    divided evenly, row 0 at the bottom. For each channel c, the result holds Σ over the
    rectangles of ``values[k, c]`` × the share of the pixel's area that rectangle k covers.
    Each rectangle adds its corners to a difference grid with bilinear weights, and two
    cumulative sums integrate it, so the cost is linear in the rectangles plus the pixels.

    Args:
        x0, x1, y0, y1: the rectangles (x0 <= x1, y0 <= y1), in the extent's units.
        values: (rectangles, channels) weights.
        extent: what the grid spans.
        shape: (rows, cols).

    Returns:
        (rows, cols, channels) float64.
    """
    rows, cols = shape
    left, right, bottom, top = extent
    channels = values.shape[1]
    grid = np.zeros((channels, (rows + 2) * (cols + 2)))
    for lo in range(0, len(x0), _CHUNK):
        part = slice(lo, lo + _CHUNK)
        u0 = np.clip((x0[part] - left) * (cols / (right - left)), 0, cols)
        u1 = np.clip((x1[part] - left) * (cols / (right - left)), 0, cols)
        v0 = np.clip((y0[part] - bottom) * (rows / (top - bottom)), 0, rows)
        v1 = np.clip((y1[part] - bottom) * (rows / (top - bottom)), 0, rows)
        keep = (u1 > u0) & (v1 > v0)
        u0, u1, v0, v1, val = u0[keep], u1[keep], v0[keep], v1[keep], values[part][keep]
        index, weight = [], []
        for u, su in ((u0, 1.0), (u1, -1.0)):
            ku = np.floor(u).astype(np.int64)
            fu = u - ku
            for v, sv in ((v0, 1.0), (v1, -1.0)):
                kv = np.floor(v).astype(np.int64)
                fv = v - kv
                for du, wu in ((0, 1 - fu), (1, fu)):
                    for dv, wv in ((0, 1 - fv), (1, fv)):
                        index.append((kv + dv) * (cols + 2) + ku + du)
                        weight.append(su * sv * wu * wv)
        flat = np.concatenate(index)
        w = np.concatenate(weight)
        for c in range(channels):
            grid[c] += np.bincount(
                flat, weights=w * np.tile(val[:, c], 16), minlength=grid.shape[1]
            )
    image = grid.reshape(channels, rows + 2, cols + 2).cumsum(axis=1).cumsum(axis=2)
    return np.moveaxis(image[:, :rows, :cols], 0, -1)


def coverage_image(
    rects: Rects,
    colors: np.ndarray,
    extent: tuple[float, float, float, float],
    shape: tuple[int, int],
) -> np.ndarray:
    """An RGBA image (rows, cols, 4) of rectangles: each pixel the area-weighted mean colour of
    what covers it, opaque in proportion to the share of its area covered (up to 1)."""
    values = np.column_stack([colors * rects.weight[:, None], rects.weight])
    image = rasterize(rects.t0, rects.t1, rects.y0, rects.y1, values, extent, shape)
    covered = image[..., 3]
    rgb = image[..., :3] / np.where(covered > 1e-12, covered, 1.0)[..., None]
    return np.concatenate([np.clip(rgb, 0, 1), np.clip(covered, 0, 1)[..., None]], axis=-1)


def density_image(
    rects: Rects,
    colors: np.ndarray,
    extent: tuple[float, float, float, float],
    shape: tuple[int, int],
) -> np.ndarray:
    """:func:`coverage_image` of rectangles timed in seconds over an extent in days."""
    days = Rects(rects.job, rects.t0 / DAY, rects.t1 / DAY, rects.y0, rects.y1, rects.weight)
    return coverage_image(days, colors, extent, shape)


# -- drawing ---------------------------------------------------------------------------------------
def draw_gantt(
    ax: Any,
    view: RunView,
    color_by: ColorBy = "user",
    window: tuple[float, float] | None = None,
    *,
    max_patches: int = MAX_PATCHES,
    pixels: tuple[int, int] = (600, 1600),
    legend: bool = True,
) -> str:
    """Draw the Gantt chart of ``view`` on ``ax`` (time in days); returns how: ``patches`` or
    ``raster``.

    Args:
        ax: a matplotlib axes.
        view: the run.
        color_by: one of :data:`COLOR_BY`.
        window: (start, end) seconds (NaN: open); default the whole run.
        max_patches: past this many rectangles in the window, rasterise.
        pixels: the raster's (rows, cols).
        legend: add a legend when there are at most 20 categories.

    Raises:
        SitesimError: a window outside the run, a colouring the run has no data for.
    """
    from matplotlib.collections import PolyCollection
    from matplotlib.patches import Patch

    low, high = clip_window(view, window)
    code, names = categories(view, color_by)
    colors = rgb(palette(len(names)))
    rects = window_rects(view, (low, high))
    rows = view.nodes
    extent = (low / DAY, high / DAY, 0.0, float(rows))
    how = "patches" if len(rects) <= max_patches else "raster"
    if how == "patches":
        verts = quads(rects.t0 / DAY, rects.t1 / DAY, rects.y0, rects.y1)
        face = np.column_stack([colors[code[rects.job]], 0.35 + 0.6 * rects.weight])
        ax.add_collection(
            PolyCollection(list(verts), facecolors=face, edgecolors="white", linewidths=0.3)
        )
    else:
        image = density_image(rects, colors[code[rects.job]], extent, pixels)
        ax.imshow(image, extent=extent, origin="lower", aspect="auto", interpolation="nearest")
    _draw_outages(ax, view, (low, high), extent, pixels, max_patches)
    ax.set_xlim(extent[0], extent[1])
    ax.set_ylim(0, rows)
    ax.set_xlabel("day")
    ax.set_ylabel("node" if view.platform is not None else "processor")
    if legend and len(names) <= len(PALETTE):
        used = np.unique(code[rects.job]) if len(rects) else np.zeros(0, int)
        handles = [Patch(color=PALETTE[k], label=names[k]) for k in used.tolist()]
        if handles:
            ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0),
                      frameon=False)  # fmt: skip
    return how


def quads(t0: np.ndarray, t1: np.ndarray, y0: np.ndarray, y1: np.ndarray) -> np.ndarray:
    """Rectangles as the (n, 4, 2) vertices a PolyCollection takes."""
    return np.stack([np.column_stack(corner) for corner in
                     ((t0, y0), (t1, y0), (t1, y1), (t0, y1))], axis=1)  # fmt: skip


def _draw_outages(
    ax: Any,
    view: RunView,
    window: tuple[float, float],
    extent: tuple[float, float, float, float],
    pixels: tuple[int, int],
    max_patches: int,
) -> None:
    """Maintenance windows grey, failures red, half transparent."""
    outages = view.outages()
    if outages is None or not len(outages):
        return
    from matplotlib.collections import PolyCollection

    keep = (outages.up > window[0]) & (outages.down < window[1])
    node, down, up, kind = (outages.node[keep], outages.down[keep] / DAY, outages.up[keep] / DAY,
                            outages.kind[keep])  # fmt: skip
    if len(node) <= max_patches:
        verts = quads(down, up, node, node + 1)
        face = np.column_stack([rgb(OUTAGE_COLORS)[kind], np.full(len(node), 0.45)])
        ax.add_collection(PolyCollection(list(verts), facecolors=face, edgecolors="none"))
        return
    rects = Rects(node, down, up, node.astype(np.float64), node + 1.0, np.ones(len(node)))
    image = coverage_image(rects, rgb(OUTAGE_COLORS)[kind], extent, pixels)
    image[..., 3] *= 0.45
    ax.imshow(image, extent=extent, origin="lower", aspect="auto", interpolation="nearest")


def gantt_figure(
    view: RunView,
    color_by: ColorBy = "user",
    window: tuple[float, float] | None = None,
    *,
    path: str | Path | None = None,
    size: tuple[float, float] = (14.0, 6.0),
    max_patches: int = MAX_PATCHES,
) -> Any:
    """A figure holding the Gantt chart of ``view``, saved to ``path`` when given (atomically;
    PNG, SVG or PDF by its extension); returns the figure (closed when saved)."""
    import matplotlib.pyplot as plt

    from sitesim.figures import save

    fig, ax = plt.subplots(figsize=size, layout="constrained")
    dpi = 110
    pixels = (int(size[1] * dpi * 0.85), int(size[0] * dpi * 0.85))
    how = draw_gantt(ax, view, color_by, window, max_patches=max_patches, pixels=pixels)
    count = int(view.ran.sum())
    ax.set_title(
        f"{view.label}: {count:,} jobs on {view.nodes:,} "
        f"{'nodes' if view.platform is not None else 'processors'}, by {color_by}"
        + (" (density: each pixel the share of its area in use)" if how == "raster" else ""),
        fontsize=10,
    )
    if path is not None:
        save(fig, Path(path))
    return fig
