"""Views of a run: the records read back, the Gantt chart's rows and raster, the sessions of
the user lanes, and the figures (from a run in memory and from its folder alike)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from sitesim.engine.records import JOB_DTYPE, read_records_csv, records_csv
from sitesim.errors import SitesimError
from sitesim.results.report import write_outputs
from sitesim.runs.config import SiteConfig
from sitesim.runs.replay import replay
from sitesim.runs.runner import run
from sitesim.schedulers import create
from sitesim.views.gantt import (
    categories,
    coverage_image,
    draw_gantt,
    job_rects,
    processor_rows,
    rasterize,
    window_rects,
)
from sitesim.views.lanes import lanes_figure, pick_users, sessions
from sitesim.views.run_view import (
    BACKFILL,
    DAY,
    MAIN,
    RunView,
    clip_window,
    parse_window,
    read_run,
)
from tests.conftest import run_jobs, trace_path

PLATFORM = """\
name = "tiny"
[[nodes]]
type = "cpu"
count = 12
cores = 8
[[nodes]]
type = "fat"
count = 4
cores = 16
[[partitions]]
name = "batch"
nodes = ["cpu"]
[[partitions]]
name = "shared"
nodes = ["fat"]
allocation = "shared"
[downtime]
[[downtime.maintenance]]
start = "1-08:00:00"
duration = "6:00:00"
every = "2-00:00:00"
nodes = ["0-5"]
[downtime.failures]
mtbf = "5-00:00:00"
mttr = "3:00:00"
"""


@pytest.fixture(scope="module")
def demo() -> RunView:
    return RunView.from_result(
        run(SiteConfig(users=8, scheduler="EASY", days=7, warmup_days=0, seed=3))
    )


@pytest.fixture(scope="module")
def slurm_run(tmp_path_factory):  # type: ignore[no-untyped-def]
    folder = tmp_path_factory.mktemp("slurm")
    (folder / "tiny.toml").write_text(PLATFORM)
    config = SiteConfig(users=8, scheduler="SLURM", days=7, warmup_days=0, seed=2,
                        platform=str(folder / "tiny.toml"))  # fmt: skip
    result = run(config)
    write_outputs(folder / "run", result, users=True)
    return result, folder / "run"


def test_records_csv_reads_back_exactly(demo):
    rec = demo.records
    again = read_records_csv(records_csv(rec))
    assert again.dtype == rec.dtype
    for name in rec.dtype.names:
        assert np.array_equal(again[name], rec[name], equal_nan=True), name


def test_a_run_folder_reads_back_as_the_run_in_memory(slurm_run):
    result, folder = slurm_run
    memory, disk = RunView.from_result(result), read_run(folder)
    assert disk.label == memory.label and disk.procs == memory.procs
    for name in ("partition", "cores", "requeues", "started_by"):
        assert np.array_equal(getattr(disk, name), getattr(memory, name)), name
    for name in ("job", "first", "last"):
        assert np.array_equal(getattr(disk.spans, name), getattr(memory.spans, name))
    assert disk.accounts == memory.accounts and disk.accounts
    assert set(np.unique(disk.started_by[disk.ran]).tolist()) <= {MAIN, BACKFILL}
    outages = disk.outages()
    assert len(outages) and set(np.unique(outages.kind).tolist()) == {0, 1}


def test_processor_rows_never_give_a_processor_twice():
    rng = np.random.default_rng(5)
    procs, n = 16, 400
    # a feasible schedule: jobs placed greedily on a busy-count timeline
    size = rng.integers(1, procs + 1, n)
    start = np.cumsum(rng.exponential(30, n))
    end = start + rng.exponential(200, n)
    busy = 0
    keep = []
    for k in range(n):
        running = [j for j in keep if end[j] > start[k]]
        busy = sum(size[j] for j in running)
        if busy + size[k] <= procs:
            keep.append(k)
    keep = np.array(keep)
    job, first, last = processor_rows(start[keep], end[keep], size[keep], procs)
    assert np.array_equal(np.bincount(job, weights=last - first, minlength=len(keep)),
                          size[keep])  # fmt: skip
    assert first.min() >= 0 and last.max() <= procs
    t0, t1 = start[keep][job], end[keep][job]
    for p in range(procs):
        on = np.flatnonzero((first <= p) & (last > p))
        order = on[np.argsort(t0[on])]
        assert np.all(t0[order][1:] >= t1[order][:-1]), f"processor {p} held twice"


def test_processor_rows_keep_a_job_in_one_block_when_one_is_free():
    # 4 processors: A holds 0-1 till 10, B holds 2 till 20; C (2) starts at 10: block 0-1
    job, first, last = processor_rows(
        np.array([0.0, 0.0, 10.0]), np.array([10.0, 20.0, 30.0]), np.array([2, 1, 2]), 4
    )
    assert list(zip(job.tolist(), first.tolist(), last.tolist(), strict=True)) == [
        (0, 0, 2), (1, 2, 3), (2, 0, 2)
    ]  # fmt: skip


def test_processor_rows_give_back_the_processors_of_a_zero_runtime_job_at_once():
    # 2 processors: Z (2) starts and ends at 0, then A (2) runs from 0 to 10 on the same ones
    job, first, last = processor_rows(
        np.array([0.0, 0.0]), np.array([0.0, 10.0]), np.array([2, 2]), 2
    )
    assert list(zip(job.tolist(), first.tolist(), last.tolist(), strict=True)) == [
        (0, 0, 2), (1, 0, 2)
    ]  # fmt: skip


def test_the_gantt_draws_zero_runtime_jobs_at_the_ends_of_the_window():
    import matplotlib.pyplot as plt

    jobs = [(0.0, 1, 0.0), (0.0, 2, 100.0), (100.0, 2, 0.0)]  # the first and last instants
    view = RunView.from_result(run_jobs(jobs, 2, create("FCFS")))
    fig, ax = plt.subplots()
    assert draw_gantt(ax, view) == "patches"
    assert len(ax.collections[0].get_paths()) == 3
    plt.close(fig)
    assert len(window_rects(view, (0.0, 50.0))) == 2  # (the job at 100 lies outside)


@pytest.mark.traces
@pytest.mark.parametrize(
    "name",
    [
        "LLNL-Atlas-2006-2.1-cln.swf.gz",  # 2,607 jobs of zero runtime
        "SDSC-SP2-1998-4.2-cln.swf.gz",
        "Sandia-Ross-2001-1.1-cln.swf.gz",
        "LLNL-Thunder-2007-1.1-cln.swf.gz",
    ],
)
def test_every_job_of_a_real_trace_is_drawn_with_its_full_size(name):
    view = RunView.from_result(replay(trace_path(name), "EASY"))
    rects = window_rects(view, clip_window(view, None))
    drawn = np.bincount(rects.job, weights=rects.y1 - rects.y0, minlength=len(view.records))
    assert view.ran.all()
    assert int((drawn == view.records["size"]).sum()) == len(view.records)


def test_the_raster_integrates_each_rectangle_exactly():
    rng = np.random.default_rng(1)
    n = 300
    x0 = rng.uniform(-2, 10, n)
    x1 = x0 + rng.exponential(2, n)
    y0 = rng.uniform(0, 7, n)
    y1 = np.minimum(y0 + rng.exponential(1, n), 8)
    values = rng.uniform(0, 1, (n, 2))
    image = rasterize(x0, x1, y0, y1, values, (0.0, 8.0, 0.0, 8.0), (16, 32))
    # brute force: every pixel's overlap with every rectangle
    xs, ys = np.linspace(0, 8, 33), np.linspace(0, 8, 17)
    ox = np.clip(np.minimum(x1[:, None], xs[None, 1:]) - np.maximum(x0[:, None], xs[None, :-1]),
                 0, None) / 0.25  # fmt: skip
    oy = np.clip(np.minimum(y1[:, None], ys[None, 1:]) - np.maximum(y0[:, None], ys[None, :-1]),
                 0, None) / 0.5  # fmt: skip
    expected = np.einsum("ki,kj,kc->jic", ox, oy, values)
    assert np.allclose(image, expected, atol=1e-9)


def test_the_density_image_holds_the_utilization(demo):
    rects = job_rects(demo)
    low, high = demo.span
    _, names = categories(demo, "user")
    colors = np.tile([[0.2, 0.4, 0.6]], (len(rects), 1))
    image = coverage_image(rects, colors, (low, high, 0.0, float(demo.procs)), (64, 400))
    ran = demo.records[demo.ran]
    used = float((ran["size"] * (ran["end"] - ran["start"])).sum())
    assert image[..., 3].mean() == pytest.approx(used / (demo.procs * (high - low)), rel=1e-9)
    covered = image[..., 3] > 0.01
    assert np.allclose(image[..., :3][covered], [0.2, 0.4, 0.6])
    assert len(names) == len(np.unique(demo.records["user"]))


def test_the_gantt_draws_patches_then_density(demo):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    assert draw_gantt(ax, demo) == "patches"
    assert draw_gantt(ax, demo, max_patches=10) == "raster"
    plt.close(fig)


def test_colourings_the_run_has_no_data_for_are_refused(demo):
    for how in ("account", "partition", "decision"):
        with pytest.raises(SitesimError, match=f"colour by {how}"):
            categories(demo, how)  # type: ignore[arg-type]


def test_sessions_mark_the_ends_after_a_slow_response():
    rec = np.zeros(4, dtype=JOB_DTYPE)
    rec["id"] = [1, 2, 3, 4]
    rec["user"] = [1, 1, 1, 2]
    rec["session"] = [0, 0, 1, 0]
    rec["batch"] = [0, 1, 2, 0]
    rec["submit"] = [0.0, 100.0, 5000.0, 0.0]
    rec["end"] = [50.0, 3700.0, 8540.0, 70.0]
    rec["response"] = rec["end"] - rec["submit"]  # 60 min, 59 min, 70 s
    view = RunView("t", 4, rec, {}, {"pcont_a": 0.8, "pcont_b": 0.05})
    s = sessions(view)
    assert s.user.tolist() == [1, 1, 2]
    assert s.first.tolist() == [0.0, 5000.0, 0.0] and s.last.tolist() == [3700.0, 8540.0, 70.0]
    assert s.jobs.tolist() == [2, 1, 1]
    # b r = 0.05 x 60 min = 3: p_cont a quarter of a; 59 min is not slow
    assert s.slow.tolist() == [True, False, False]
    assert not s.outside.any()  # (no seed: the windows are not known)


def test_a_session_whose_last_job_ended_outside_the_window_is_not_slow():
    """The window rule ends such a session without a decision: it is marked as ended by the
    window, whatever the response. User 1's window is drawn again from the run's seed."""
    from sitesim.models.cycles import ActivityCycle
    from sitesim.models.streams import stream

    cycle = ActivityCycle.draw(stream(4, 1, "cycle"))
    opens = cycle.next_open(0.0)
    inside, outside = opens + 2 * 3600, cycle.next_open(opens + 1) - 3600
    assert cycle.in_window(inside) and not cycle.in_window(outside)
    rec = np.zeros(2, dtype=JOB_DTYPE)
    rec["id"] = [1, 2]
    rec["user"] = [1, 1]
    rec["session"] = [0, 1]
    rec["batch"] = [0, 1]
    rec["submit"] = [inside - 7200, outside - 7200]
    rec["end"] = [inside, outside]
    rec["response"] = rec["end"] - rec["submit"]  # 2 hours each: slow
    view = RunView("t", 4, rec, {}, {"model": "complete", "seed": 4, "pcont_b": 0.05})
    s = sessions(view)
    assert s.outside.tolist() == [False, True]
    assert s.slow.tolist() == [True, False]


def test_think_bars_end_at_a_batch_first_submission():
    """A batch of three jobs submitted over two days after a 10-minute think: one green bar of
    10 minutes, not bars from the waited-for job's end to each later submission."""
    import matplotlib.pyplot as plt

    from sitesim.views.lanes import COLORS, draw_lanes

    rec = np.zeros(4, dtype=JOB_DTYPE)
    rec["id"] = [1, 2, 3, 4]
    rec["user"] = 1
    rec["session"] = 0
    rec["batch"] = [0, 1, 1, 1]
    rec["submit"] = [0.0, 700.0, DAY, 2 * DAY]
    rec["start"] = rec["submit"]
    rec["end"] = rec["submit"] + 100.0
    rec["think"] = [np.nan, 600.0, DAY - 100, 2 * DAY - 100]  # from job 1's end
    view = RunView("t", 4, rec, {}, {})
    fig, ax = plt.subplots()
    draw_lanes(ax, view, [1])
    think = [c for c in ax.collections
             if tuple(c.get_facecolor()[0][:3]) == _rgb(COLORS["think"])]  # fmt: skip
    (bars,) = think
    (bar,) = bars.get_paths()
    xs = bar.vertices[:, 0]
    assert xs.min() == pytest.approx(100 / DAY) and xs.max() == pytest.approx(700 / DAY)
    plt.close(fig)


def _rgb(color: str) -> tuple[float, float, float]:
    from matplotlib.colors import to_rgb

    return to_rgb(color)


def test_windows_and_users(demo):
    assert parse_window("2:3") == (2 * DAY, 3 * DAY)
    assert np.isnan(parse_window("2:")[1])
    for bad in ("3", "3:2", "a:b"):
        with pytest.raises(SitesimError, match="--window"):
            parse_window(bad)
    with pytest.raises(SitesimError, match="lies outside the run"):
        clip_window(demo, (30 * DAY, 40 * DAY))
    assert len(pick_users(demo, sample=3)) == 3
    with pytest.raises(SitesimError, match="user 999 has no jobs"):
        pick_users(demo, [999])


def test_lanes_draw_two_runs_of_the_same_users(demo, tmp_path):
    other = RunView.from_result(
        run(SiteConfig(users=8, scheduler="FCFS", days=7, warmup_days=0, seed=3))
    )
    path = tmp_path / "lanes.png"
    fig = lanes_figure([demo, other], sample=5, path=path)
    assert path.stat().st_size > 10_000
    assert [ax.get_title(loc="left") for ax in fig.axes] == ["EASY: 5 users", "FCFS: 5 users"]


def test_a_replay_shows_its_sessions_as_not_applicable(demo):
    from sitesim.views.html import _header, _user_table

    replayed = RunView.from_result(run_jobs([(0.0, 1, 60.0), (30.0, 2, 60.0)], 2, create("EASY")))
    assert not replayed.has_sessions and demo.has_sessions
    header = _header(replayed)
    for title in ("sessions", "jobs per session"):
        assert f"<tr><td>{title}</td><td>-</td></tr>" in header  # not 0 or 0.000
    head, row = _user_table(replayed).split("</tr>")[:2]
    cells = dict(zip(re.findall(r"<th>(.*?)</th>", head), re.findall(r"<td>(.*?)</td>", row),
                     strict=True))  # fmt: skip
    assert cells["sessions"] == cells["ended after a slow response"] == "-"
    assert "<tr><td>sessions</td><td>-</td></tr>" not in _header(demo)


def test_the_gantt_palette_has_twenty_colours_that_differ():
    """Every two colours differ by a CIELAB distance (CIE76) of at least 20; the first eight
    are Okabe and Ito's colour-blind-safe set. (tab20 pairs a dark and a light shade of one
    hue: #aec7e8 and #c5b0d5 are 16.6 apart.)"""
    from itertools import combinations

    from sitesim.views.gantt import PALETTE, rgb

    def lab(c: np.ndarray) -> np.ndarray:
        c = np.where(c > 0.04045, ((c + 0.055) / 1.055) ** 2.4, c / 12.92)
        m = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722],
                      [0.0193, 0.1192, 0.9505]])  # fmt: skip
        x, y, z = m @ c / np.array([0.95047, 1.0, 1.08883])

        def f(t: float) -> float:
            return float(np.cbrt(t)) if t > 0.008856 else 7.787 * t + 16 / 116

        return np.array([116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))])

    colours = [lab(c) for c in rgb(PALETTE)]
    assert len(PALETTE) == len(set(PALETTE)) == 20
    closest = min(np.linalg.norm(a - b) for a, b in combinations(colours, 2))
    assert closest >= 20, closest
    assert PALETTE[:8] == ("#e69f00", "#56b4e9", "#009e73", "#f0e442", "#0072b2", "#d55e00",
                           "#cc79a7", "#000000")  # fmt: skip


def test_the_html_gantt_counts_jobs_and_has_a_colour_legend(demo):
    """The title counts jobs (and says how many rectangles, when a job is drawn as several);
    a legend names each colour in view."""
    pytest.importorskip("bokeh", reason="needs bokeh (the report extra)")
    from sitesim.views import gantt
    from sitesim.views.html import _jobs_drawn, _legend, report_html

    rects = gantt.window_rects(demo, (0.0, 7 * DAY))
    jobs = len(np.unique(rects.job))
    text = report_html(demo)
    assert f"{jobs:,} jobs" in text and "Colours, by user" in text
    legend = _legend(demo, "user", (0.0, 7 * DAY))
    users = np.unique(demo.records["user"][rects.job]).tolist()
    assert [f"user {u}" for u in users] == re.findall(r"</span>(user \d+)</span>", legend)
    assert legend.count("background:") == len(users) and "background:#e69f00" in legend
    two = gantt.Rects(*(np.array(v) for v in ([1, 1, 2], [0, 0, 0], [1, 1, 1], [0, 4, 2],
                                               [2, 6, 4], [1, 1, 1])))  # fmt: skip
    assert _jobs_drawn(two) == "2 jobs in 3 rectangles (one per block of contiguous rows)"
