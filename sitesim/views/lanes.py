"""The feedback loop per user: one swimlane a user, over time.

In each lane: the user's sessions (a pale band, from the session's first submission to the end
of its last job), think times (green: from the end of the job a batch waited for to the first
submission of the next batch; the later submissions of a batch are not thinking), each job's
wait (orange) and run (blue), a tick at each batch's first submission, and a mark where a
session ended: a red cross when it ended after a slow response, a dark-blue triangle when its
last job ended outside the user's window (the window rule ended it: no decision was drawn), a
grey bar otherwise.

*After a slow response* means that the last job of the session's last batch (the one the user
waited for) ended inside the user's window (so the user decided) and responded in r minutes
with p_cont(r) = a / (b r + 1) at most a quarter of a, i.e. b r >= 3 (an hour with the default
b = 0.05): the response cut the odds that the user would go on to a quarter or less. Whether
that session would have gone on with a fast response is one random draw the records do not
keep; the mark says the response made ending likely, not that it alone decided (decisions.md,
"Views").
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sitesim.errors import SitesimError
from sitesim.views.gantt import quads
from sitesim.views.run_view import DAY, RunView, clip_window

#: Lanes drawn when no users are named.
SAMPLE = 20
COLORS = {"session": "#dddddd", "think": "#009e73", "wait": "#e69f00", "run": "#0072b2",
          "slow end": "#d55e00", "window end": "#1a2a6c", "end": "#7f7f7f",
          "batch": "#333333"}  # fmt: skip
#: p_cont of a slow response is at most this share of a (b r >= 1 / SLOW - 1).
SLOW = 0.25


@dataclass(frozen=True)
class Sessions:
    """One row per session of a run (jobs of no session left out): its user, first
    submission, last end (seconds), jobs, and the response of the job its last batch waited
    for (seconds); ``outside`` where that job ended outside the user's window (the window rule
    ended the session; False when the run's windows are not known); ``slow`` where it ended
    inside and p_cont of its response is at most :data:`SLOW` of a."""

    user: np.ndarray
    first: np.ndarray
    last: np.ndarray
    jobs: np.ndarray
    response: np.ndarray
    slow: np.ndarray
    outside: np.ndarray


def sessions(view: RunView) -> Sessions:
    """The sessions of ``view``'s jobs that ended (vectorized over the records)."""
    rec = view.records
    rec = rec[(rec["session"] >= 0) & np.isfinite(rec["end"])]
    order = np.lexsort((rec["id"], rec["submit"], rec["batch"], rec["session"], rec["user"]))
    rec = rec[order]
    key = np.column_stack([rec["user"], rec["session"]])
    new = np.ones(len(rec), bool)
    new[1:] = np.any(key[1:] != key[:-1], axis=1)
    starts = np.flatnonzero(new)
    if not len(rec):
        empty = np.zeros(0)
        return Sessions(empty.astype(np.int64), empty, empty, empty.astype(np.int64), empty,
                        empty.astype(bool), empty.astype(bool))  # fmt: skip
    ends = np.append(starts[1:], len(rec)) - 1  # the last-submitted job of the last batch
    first = np.minimum.reduceat(rec["submit"], starts)
    last = np.maximum.reduceat(rec["end"], starts)
    response = rec["response"][ends]
    user = rec["user"][starts]
    waited_end = rec["end"][ends]
    outside = np.zeros(len(starts), bool)
    ids = np.unique(user)
    cycles = view.cycles(ids)
    if cycles is not None:
        of = dict(zip(ids.tolist(), cycles, strict=True))
        outside = np.array([not of[u].in_window(t)
                            for u, t in zip(user.tolist(), waited_end.tolist(), strict=True)],
                           bool)  # fmt: skip
    b = view.pcont[1]
    slow = ~outside & (b * response / 60.0 >= 1.0 / SLOW - 1.0)  # p_cont(r) <= SLOW * a
    return Sessions(user, first, last, np.diff(np.append(starts, len(rec))), response, slow,
                    outside)  # fmt: skip


def pick_users(view: RunView, users: list[int] | None = None, sample: int = SAMPLE) -> list[int]:
    """The users to draw: ``users`` when given (each must have jobs), else the ``sample`` who
    used the most processor-time (those who shape everyone's waits), by id.

    Raises:
        SitesimError: a named user without jobs.
    """
    rec = view.records
    present = np.unique(rec["user"])
    if users:
        missing = sorted(set(users) - set(present.tolist()))
        if missing:
            raise SitesimError(
                f"user {missing[0]} has no jobs in {view.source or 'this run'} "
                f"(users {present.min()} to {present.max()})"
            )
        return sorted(users)
    work = np.nan_to_num(rec["size"] * rec["runtime"])
    index = np.searchsorted(present, rec["user"])
    total = np.bincount(index, weights=work, minlength=len(present))
    top = np.argsort(-total, kind="stable")[:sample]
    return sorted(present[top].tolist())


def draw_lanes(
    ax: Any, view: RunView, users: list[int], window: tuple[float, float] | None = None
) -> None:
    """Draw one lane per user of ``users`` (bottom to top, in order) on ``ax``."""
    from matplotlib.collections import PolyCollection

    low, high = clip_window(view, window)
    lane = {u: k for k, u in enumerate(users)}
    rec = view.records
    mine = np.isin(rec["user"], users)
    rec = rec[mine & (rec["submit"] < high) & ~(rec["end"] < low)]
    row = np.array([lane[u] for u in rec["user"].tolist()], np.float64)
    started = np.isfinite(rec["start"])
    ended = np.isfinite(rec["end"])

    def bars(t0: np.ndarray, t1: np.ndarray, y: np.ndarray, half: float, color: str) -> None:
        if not len(t0):
            return
        verts = quads(t0 / DAY, t1 / DAY, y - half, y + half)
        ax.add_collection(PolyCollection(list(verts), facecolors=color, edgecolors="none"))

    s = sessions(view)
    keep = np.isin(s.user, users) & (s.first < high) & (s.last > low)
    srow = np.array([lane[u] for u in s.user[keep].tolist()], np.float64)
    bars(s.first[keep], s.last[keep], srow, 0.45, COLORS["session"])
    batch_first = np.ones(len(rec), bool)
    if len(rec):
        order = np.lexsort((rec["submit"], rec["batch"], rec["user"]))
        key = np.column_stack([rec["user"][order], rec["batch"][order]])
        batch_first[order[1:]] = np.any(key[1:] != key[:-1], axis=1)
    batch_first &= rec["batch"] >= 0
    # thinking ends at a batch's first submission (the later ones follow their gaps)
    think = batch_first & np.isfinite(rec["think"]) & (rec["think"] > 0)
    bars(rec["submit"][think] - rec["think"][think], rec["submit"][think], row[think], 0.12,
         COLORS["think"])  # fmt: skip
    waiting_end = np.where(started, rec["start"], high)
    bars(rec["submit"], waiting_end, row + 0.18, 0.14, COLORS["wait"])
    run = started & ended
    bars(rec["start"][run], rec["end"][run], row[run] - 0.18, 0.14, COLORS["run"])
    ax.scatter(rec["submit"][batch_first] / DAY, row[batch_first] + 0.4, marker="|", s=30,
               color=COLORS["batch"], linewidths=0.8)  # fmt: skip
    slow, closed = keep & s.slow, keep & s.outside
    other = keep & ~s.slow & ~s.outside
    for sel, marker, color in ((slow, "x", COLORS["slow end"]), (closed, "v", COLORS["window end"]),
                               (other, "|", COLORS["end"])):  # fmt: skip
        ends = np.array([lane[u] for u in s.user[sel].tolist()], np.float64)
        ax.scatter(s.last[sel] / DAY, ends, marker=marker, s=36, color=color, zorder=3,
                   linewidths=1.2)  # fmt: skip
    ax.set_xlim(low / DAY, high / DAY)
    ax.set_ylim(-0.6, len(users) - 0.4)
    ax.set_yticks(range(len(users)), [f"user {u}" for u in users], fontsize="small")
    ax.set_xlabel("day")


def lanes_figure(
    views: list[RunView],
    users: list[int] | None = None,
    window: tuple[float, float] | None = None,
    *,
    sample: int = SAMPLE,
    path: str | Path | None = None,
) -> Any:
    """One panel of lanes per run (the same users in each, chosen in the first), one above
    the other on a shared time axis; saved to ``path`` when given (atomically; PNG, SVG or PDF
    by its extension)."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from sitesim.figures import save

    chosen = pick_users(views[0], users, sample)
    height = 0.8 + 0.26 * len(chosen)
    fig, axes = plt.subplots(len(views), 1, figsize=(14, height * len(views) + 0.6),
                             sharex=True, squeeze=False, layout="constrained")  # fmt: skip
    for ax, view in zip(axes[:, 0], views, strict=True):
        draw_lanes(ax, view, chosen, window)
        ax.set_title(f"{view.label}: {len(chosen)} users", fontsize=10, loc="left")
    handles: list[Any] = [
        Patch(color=COLORS[k], label=k) for k in ("session", "think", "wait", "run")
    ]
    handles += [
        Line2D([], [], color=COLORS["batch"], marker="|", ls="", label="batch submitted"),
        Line2D([], [], color=COLORS["slow end"], marker="x", ls="",
               label="session ended after a slow response (1 h or more)"),
        Line2D([], [], color=COLORS["window end"], marker="v", ls="",
               label="session ended: window closed"),
        Line2D([], [], color=COLORS["end"], marker="|", ls="", label="session ended"),
    ]  # fmt: skip
    axes[0, 0].legend(handles=handles, fontsize=7, ncol=7, loc="lower left",
                      bbox_to_anchor=(0.0, 1.06), frameon=False)  # fmt: skip
    if path is not None:
        save(fig, Path(path))
    return fig
