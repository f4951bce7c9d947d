"""The machine and its users over time, as an animated GIF: one column per run (the same users
under two schedulers), the Gantt chart above, the users' lanes below, revealed as the clock
advances, with what is waiting, running and in session at each moment.

The charts are drawn once; each frame moves a curtain over what has not happened yet and
writes the counts, in NumPy and Pillow, so a frame costs a few milliseconds. Pillow writes the
GIF (no ffmpeg needed).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np

from sitesim.output import atomic_write
from sitesim.views import gantt, lanes
from sitesim.views.run_view import DAY, RunView

#: Point sizes of the GIF's text (at its ``dpi``, 80 by default: 13 pt is 14 pixels).
GIF_STYLE: Any = {
    "font.size": 13,
    "axes.titlesize": 14,
    "xtick.labelsize": 11,
    "ytick.labelsize": 11,
}


def animate(
    views: list[RunView],
    path: str | Path,
    *,
    window: tuple[float, float] | None = None,
    step_h: float = 3.0,
    fps: int = 8,
    users: int = 20,
    dpi: int = 80,
) -> Path:
    """Write the GIF of ``views`` side by side to ``path`` (atomically): a frame every
    ``step_h`` simulated hours over ``window`` (seconds; default the first run's span).

    The charts are drawn once; each frame is that picture with a curtain over the future and
    the clock's line, composed in NumPy, and its counts written with Pillow in a band of their
    own above each run's charts (they cover nothing).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from PIL import Image, ImageDraw, ImageFont

    low, high = window or views[0].span
    chosen = lanes.pick_users(views[0], None, users)
    with matplotlib.rc_context(GIF_STYLE):
        fig, axes = plt.subplots(
            2, len(views), figsize=(7.5 * len(views), 9.0), squeeze=False, sharex=True,
            gridspec_kw={"height_ratios": [1, 1.2]}, layout="constrained", dpi=dpi,
        )  # fmt: skip
        for col, view in enumerate(views):
            top, bottom = axes[0, col], axes[1, col]
            gantt.draw_gantt(top, view, "user", (low, high), legend=False)
            top.set_title(view.label)
            top.set_xlabel("")
            lanes.draw_lanes(bottom, view, chosen, (low, high))
        fig.canvas.draw()
    rgba = fig.canvas.buffer_rgba()  # type: ignore[attr-defined]  # (the Agg canvas)
    charts = np.asarray(rgba)[..., :3].astype(np.float32)
    size = max(12, round(GIF_STYLE["font.size"] * dpi / 72))  # pixels
    band = 2 * size + 12  # two lines of counts above the charts
    base = np.concatenate([np.full((band, *charts.shape[1:]), 255.0, np.float32), charts])
    height = charts.shape[0]
    boxes = []  # per axes: pixel columns of low and high, rows of its top and bottom
    for ax in axes.flat:
        (x0, _), (x1, _) = ax.transData.transform([(low / DAY, 0), (high / DAY, 0)])
        box = ax.get_window_extent()
        boxes.append((x0, x1, band + int(height - box.y1), band + int(height - box.y0)))
    plt.close(fig)
    levels = [_levels(view) for view in views]
    font = ImageFont.load_default(size=size)
    frames = []
    for now in np.arange(low, high + 1, step_h * 3600.0):
        frame = base.copy()
        share = (now - low) / (high - low)
        for x0, x1, top_row, bottom_row in boxes:
            x = round(x0 + share * (x1 - x0))
            region = frame[top_row:bottom_row, x : int(x1)]
            region += (255.0 - region) * 0.88  # the future, behind a curtain
            frame[top_row:bottom_row, x : x + 1] = 0.0
        image = Image.fromarray(frame.astype(np.uint8))
        draw = ImageDraw.Draw(image)
        day = now / DAY
        for col, level in enumerate(levels):
            waiting, running, active = (float(np.interp(now, *level[k])) for k in range(3))
            x0 = boxes[col][0]  # (the top row's axes come first)
            draw.text((x0, 4), f"day {day:.2f} ({_weekday(day)} {24 * (day % 1):02.0f}:00)",
                      fill=(0, 0, 0), font=font)  # fmt: skip
            draw.text((x0, 8 + size), f"waiting {waiting:.0f}   running {running:.0f}   "
                      f"in session {active:.0f}", fill=(0, 0, 0), font=font)  # fmt: skip
        frames.append(image)
    both = np.concatenate([base, base + (255.0 - base) * 0.88]).astype(np.uint8)
    palette = Image.fromarray(both).quantize(colors=255)  # (the charts, bare and curtained)
    paletted = [frame.quantize(palette=palette, dither=Image.Dither.NONE) for frame in frames]
    buffer = io.BytesIO()
    paletted[0].save(buffer, format="GIF", save_all=True, append_images=paletted[1:],
                     duration=int(1000 / fps), loop=0, optimize=False)  # fmt: skip
    atomic_write(path, buffer.getvalue())
    return Path(path)


def _levels(view: RunView) -> list[tuple[np.ndarray, np.ndarray]]:
    """Jobs waiting, jobs running and sessions active, as step functions (times, levels)."""
    rec = view.records
    started = np.where(np.isfinite(rec["start"]), rec["start"], np.inf)
    ended = np.where(np.isfinite(rec["end"]), rec["end"], np.inf)
    s = lanes.sessions(view)
    return [_steps(rec["submit"], started), _steps(started, ended), _steps(s.first, s.last)]


def _steps(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    times = np.concatenate([start, end])
    change = np.concatenate([np.ones(len(start)), -np.ones(len(end))])
    order = np.argsort(times, kind="stable")
    times, level = times[order], np.cumsum(change[order])
    finite = np.isfinite(times)
    if not finite.any():
        return np.array([0.0]), np.array([0.0])
    # (interp of a step function: 0 before the first change, then each level held until the
    # next change)
    times, level = times[finite], level[finite]
    return np.repeat(times, 2), np.concatenate([[0.0], np.repeat(level, 2)[:-1]])


def _weekday(day: float) -> str:
    return ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")[int(day) % 7]
