"""The figures of ``sitesim analyze`` (PNG, written atomically; see
:mod:`sitesim.figures`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from sitesim.figures import grid, log_scale, save
from sitesim.workload.activity import Activity
from sitesim.workload.analysis import RESPONSE_BINS, SLOWDOWN_BINS

COMBINED = "combined"


def _label(name: str) -> str:
    """A trace's short name: file name without the cleaning suffix and extension."""
    return Path(name).name.split("-cln")[0].removesuffix(".gz").removesuffix(".swf")


def analysis_figures(
    activities: Sequence[Activity], result: dict[str, Any], out: Path
) -> list[Path]:
    """The figures of ``sitesim analyze``: one PNG per item of users.md §6."""
    traces = result["traces"]
    series = [(_label(name), data) for name, data in traces.items()]
    if len(traces) > 1:
        series.append((COMBINED, result["combined"]))
    threshold_min = result["settings"]["session_threshold_min"]
    return [
        _think_cdf(activities, threshold_min, out / "think_cdf.png"),
        _think_by_bins(series, out / "think_by_bins.png"),
        _rs_table(result["combined"], out / "rs_table.png"),
        _continue_probability(series, out / "continue_probability.png"),
        _expectations(series, out / "expectations.png"),
        _weekly(traces, out / "weekly_scatter.png"),
    ]


def _think_cdf(activities: Sequence[Activity], threshold_min: float, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(7, 4.5))
    grid = np.linspace(0, 1, 1001)
    for activity in activities:
        think = activity.think[np.isfinite(activity.think)] / 60.0
        if len(think):
            ax.plot(np.quantile(think, grid), grid, label=_label(activity.name), lw=1.2)
        else:
            ax.plot([], [], label=f"{_label(activity.name)}: no think time (no user submits twice)")
    ax.axvline(threshold_min, color="k", ls="--", lw=1)
    ax.axvline(0, color="grey", lw=0.8)
    ax.text(threshold_min * 1.1, 0.05, f"session threshold\n{threshold_min:g} min", fontsize=8)
    ax.set_xscale("symlog", linthresh=1.0)
    ax.set_xlabel("think time after a job (minutes; negative: next job submitted before it ended)")
    ax.set_ylabel("CDF")
    ax.set_title("Think times")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return save(fig, path)


def _think_by_bins(series: list[tuple[str, dict[str, Any]]], path: Path) -> Path:
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for name, data in series:
        style = {"lw": 2.5, "color": "k"} if name == COMBINED else {"lw": 1.2}
        left.plot(RESPONSE_BINS, [b["median_think_min"] for b in data["response_bins"]],
                  marker="o", label=name, **style)  # fmt: skip
        right.plot(SLOWDOWN_BINS, [b["median_think_min"] for b in data["slowdown_bins"]],
                   marker="o", label=name, **style)  # fmt: skip
    left.set_title("by response: R1 <5, R2 5-15, R3 15-45, R4 45-135, R5 >135 min", fontsize=9)
    right.set_title("by slowdown: S1 <1.41, S2 <2, S3 <4, S4 <16, S5 >16", fontsize=9)
    left.set_ylabel("median positive think time after the job (min)")
    for ax in (left, right):
        log_scale(ax, "y")
        ax.grid(alpha=0.3)
    right.legend(fontsize=8)
    return save(fig, path)


def _rs_table(combined: dict[str, Any], path: Path) -> Path:
    table = np.array(combined["rs_median_think_min"], dtype=np.float64)
    fig, ax = plt.subplots(figsize=(6, 5))
    image = ax.imshow(np.log10(np.where(table > 0, table, np.nan)), cmap="viridis", origin="lower")
    for i in range(table.shape[0]):
        for j in range(table.shape[1]):
            if np.isfinite(table[i, j]):
                ax.text(j, i, f"{table[i, j]:.0f}", ha="center", va="center", color="w", fontsize=9)
    ax.set_xticks(range(5), SLOWDOWN_BINS)
    ax.set_yticks(range(5), RESPONSE_BINS)
    ax.set_xlabel("slowdown bin")
    ax.set_ylabel("response bin")
    ax.set_title("Median think time (min) by response and slowdown")
    fig.colorbar(image, ax=ax, label="log10 minutes")
    return save(fig, path)


def _curve(
    ax: Any, rows: list[dict[str, Any]], fit: dict[str, float], name: str, **style: Any
) -> None:
    r = np.array([b["median_response_min"] for b in rows], dtype=np.float64)
    p = np.array([b["continue_probability"] for b in rows], dtype=np.float64)
    points = ax.plot(r, p, "o", label=name, **style)
    if np.isfinite(fit["a"]):
        x = np.geomspace(max(np.nanmin(r), 0.05), np.nanmax(r) * 1.2, 200)
        label = f"  fit a={fit['a']:.2f} b={fit['b']:.3f}"
        color, width = points[0].get_color(), style.get("lw", 1.0)
        ax.plot(x, fit["a"] / (fit["b"] * x + 1), "-", color=color, lw=width, label=label)


def _continue_probability(series: list[tuple[str, dict[str, Any]]], path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, data in series:
        style = {"color": "k", "lw": 2.5} if name == COMBINED else {"lw": 1.0}
        _curve(ax, data["response_bins"], data["continue_fit"], name, **style)
    log_scale(ax, "x")
    ax.set_xlabel("median response time of the bin (min)")
    ax.set_ylabel("P(next think time within the session threshold)")
    ax.set_title("Probability to continue the session: p = a / (b r + 1)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    return save(fig, path)


def _expectations(series: list[tuple[str, dict[str, Any]]], path: Path) -> Path:
    fig, axes = grid(len(series))
    for ax, (name, data) in zip(axes, series, strict=True):
        exp = data["expectations"]
        _curve(ax, exp["W"], exp["W_fit"], "W: waited <= 5 min", color="tab:blue")
        _curve(ax, exp["E"], exp["E_fit"], "E: ran <= 5 min", color="tab:red")
        log_scale(ax, "x")
        ax.set_ylim(0, 1)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("median response (min)")
        ax.set_ylabel("continue probability")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    return save(fig, path)


def _weekly(traces: dict[str, Any], path: Path) -> Path:
    fig, axes = grid(len(traces))
    for ax, (name, data) in zip(axes, traces.items(), strict=True):
        week = data["weekly"]
        ax.scatter(week["jobs"], week["mean_node_seconds"], s=8, alpha=0.6)
        log_scale(ax, "y")
        ax.set_title(f"{_label(name)} (Spearman rho = {week['spearman_rho']:.2f})", fontsize=9)
        ax.set_xlabel("jobs submitted in the week")
        ax.set_ylabel("mean node-seconds per job")
        ax.grid(alpha=0.3)
    return save(fig, path)
