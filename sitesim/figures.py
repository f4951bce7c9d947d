"""Figures (matplotlib's headless Agg backend), written atomically in the format their file's
name asks for, and the helpers the experiments' figures share (grids, lines and bars with
confidence intervals). Each experiment draws its own figures from the rows it produced.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib
from cycler import cycler

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from sitesim.errors import SitesimError
from sitesim.output import atomic_write

#: The formats a figure is written in, by the extension of its file's name.
FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}
#: What each format would otherwise stamp with the time it was written (so that the same figure
#: gives the same bytes).
_NO_DATE: dict[str, dict[str, Any]] = {"svg": {"Date": None}, "pdf": {"CreationDate": None}}


#: Okabe and Ito's colours, safe for colour-blind readers, in the order lines take them (the
#: yellow, faint on white, last).
OKABE_ITO = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000",
             "#f0e442")  # fmt: skip
#: A slide's 16:9 (inches).
SLIDE = (13.33, 7.5)
#: Fonts and lines readable on a slide, with the colour-blind-safe palette (for
#: ``matplotlib.rc_context``).
SLIDE_STYLE: Any = {
    "font.size": 14, "axes.titlesize": 15, "axes.labelsize": 14, "xtick.labelsize": 12,
    "ytick.labelsize": 12, "legend.fontsize": 12, "figure.titlesize": 17,
    "lines.linewidth": 2.0, "lines.markersize": 6, "errorbar.capsize": 4,
    "axes.prop_cycle": cycler(color=OKABE_ITO),
}  # fmt: skip


def slide(rows: int = 1, cols: int = 1, **kwargs: Any) -> tuple[Any, list[Any]]:
    """A 16:9 figure of ``rows`` × ``cols`` axes drawn in :data:`SLIDE_STYLE` (call it, and
    draw, inside ``with matplotlib.rc_context(SLIDE_STYLE):``); the axes as a flat list."""
    fig, axes = plt.subplots(rows, cols, figsize=SLIDE, squeeze=False, layout="constrained",
                             **kwargs)  # fmt: skip
    return fig, list(axes.flat)


def legend_below(fig: Any, ax: Any, ncols: int = 4) -> None:
    """One legend for the figure, below the axes (it covers no data), from ``ax``'s lines."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside lower center", ncols=ncols, frameon=False)


def figure_format(path: Path, option: str = "") -> str:
    """The format of a figure written to ``path``, from the extension of its name.

    Args:
        path: the figure's file.
        option: the command-line option that named it, for the message (``--gantt``).

    Raises:
        SitesimError: another extension, naming the allowed ones.
    """
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        what = f"{option} {path}" if option else str(path)
        raise SitesimError(
            f"{what}: a figure is written as {', '.join(list(FORMATS)[:-1])} or "
            f"{list(FORMATS)[-1]} (by the name's extension); "
            f"{f'not {path.suffix}' if path.suffix else 'this name has none'}"
        )
    return fmt


def figure_bytes(fig: Any, path: Path) -> bytes:
    """A figure as the bytes of file ``path`` (PNG, SVG or PDF by its extension); closes it.

    Raises:
        SitesimError: an extension of no format (:func:`figure_format`).
    """
    fmt = figure_format(path)
    buffer = io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": "sitesim"}):  # (else SVG ids are random)
        fig.savefig(buffer, format=fmt, dpi=110, bbox_inches="tight", metadata=_NO_DATE.get(fmt))
    plt.close(fig)
    return buffer.getvalue()


def save(fig: Any, path: Path) -> Path:
    """Save a figure atomically (PNG, SVG or PDF by the extension of ``path``) and close it."""
    atomic_write(path, figure_bytes(fig, path))
    return path


def log_scale(ax: Any, axis: str) -> None:
    """A log scale on ``axis`` ("x" or "y") where there is positive data to show; matplotlib
    refuses to draw a log axis without."""
    high = ax.dataLim.x1 if axis == "x" else ax.dataLim.y1
    if np.isfinite(high) and high > 0:
        (ax.set_xscale if axis == "x" else ax.set_yscale)("log")


def grid(
    panels: int, width: float = 4.2, height: float = 3.6, cols: int = 3
) -> tuple[Any, list[Any]]:
    """A figure with ``panels`` axes in rows of at most ``cols``; spare axes hidden."""
    cols = min(panels, cols)
    rows = (panels + cols - 1) // cols
    fig, axes = plt.subplots(
        rows, cols, figsize=(width * cols, height * rows), squeeze=False, layout="constrained"
    )
    flat = list(axes.flat)
    for ax in flat[panels:]:
        ax.set_visible(False)
    return fig, flat[:panels]


def lines_with_ci(
    ax: Any,
    rows: Sequence[dict[str, Any]],
    x: str,
    y: str,
    by: str,
    *,
    label: str = "{}",
    dodge: float = 0.0,
    **style: Any,
) -> None:
    """One line per level of ``by``: mean ``y`` against ``x``, with its 95 % interval as error
    bars when the rows have ``<y>_ci95`` (summary rows of replications). ``dodge``: the
    levels' points are moved apart by this much along x (in x's units), so that intervals at
    one x do not hide each other."""
    levels = list(dict.fromkeys(row[by] for row in rows))
    for k, level in enumerate(levels):
        mine = sorted((row for row in rows if row[by] == level), key=lambda row: row[x])
        shift = dodge * (k - (len(levels) - 1) / 2)
        xs = [row[x] + shift for row in mine]
        ys = [row[y] for row in mine]
        ci = [row.get(f"{y}_ci95", np.nan) for row in mine]
        drawn = {"marker": "o", "ms": 4, "capsize": 3, **style}  # (the defaults, or style's)
        ax.errorbar(xs, ys, yerr=None if all(np.isnan(ci)) else ci, label=label.format(level),
                    **drawn)  # fmt: skip


def bars_with_ci(
    ax: Any, rows: Sequence[dict[str, Any]], x: str, y: str, by: str, *, scale: float = 1.0
) -> None:
    """Grouped bars: per level of ``x`` (groups, in order), one bar per level of ``by``, of
    ``y`` (× ``scale``) with its 95 % interval (``<y>_ci95``) as error bars."""
    groups = list(dict.fromkeys(row[x] for row in rows))
    levels = list(dict.fromkeys(row[by] for row in rows))
    width = 0.8 / len(levels)
    for k, level in enumerate(levels):
        found = {row[x]: row for row in rows if row[by] == level}
        at = [g for g, group in enumerate(groups) if group in found]
        ys = [scale * found[groups[g]][y] for g in at]
        ci = [scale * found[groups[g]].get(f"{y}_ci95", np.nan) for g in at]
        ax.bar(np.array(at) + (k - (len(levels) - 1) / 2) * width, ys, width, label=str(level),
               yerr=None if all(np.isnan(ci)) else ci, capsize=2)  # fmt: skip
    ax.set_xticks(range(len(groups)), [str(g) for g in groups], rotation=30, ha="right",
                  fontsize=8)  # fmt: skip
