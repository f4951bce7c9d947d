"""Every job of a run is drawn, with its full size, in every view (Hypothesis).

The Gantt chart (PNG, HTML and the animation all draw :func:`sitesim.views.gantt.window_rects`)
on random traces rich in jobs of zero runtime, which end at the instant they start:

- on processors, each job that ran gets exactly its size in processors, inside the machine,
  and no processor is drawn under two jobs at once;
- on a platform of nodes (random platforms, maintenance windows and requeues), each job that
  ran is drawn on as many nodes, and as many cores, as its placement held.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sitesim.engine.site import Site
from sitesim.schedulers import REGISTRY, create
from sitesim.views.gantt import window_rects
from sitesim.views.run_view import RunView, clip_window
from tests.conftest import run_jobs
from tests.property.test_platform_properties import Submitter, platforms, requests

Jobs = list[tuple[float, int, float, float]]


@st.composite
def brief_workloads(draw: st.DrawFn, max_jobs: int = 30) -> tuple[int, Jobs]:
    """A machine size and jobs (submit, size, runtime, estimate), a third of zero runtime, with
    many ties, so that zero-runtime jobs end as others end and start."""
    procs = draw(st.integers(1, 16))
    jobs = []
    for _ in range(draw(st.integers(1, max_jobs))):
        submit = float(draw(st.sampled_from([0, 0, 10, 20]) | st.integers(0, 200)))
        size = draw(st.integers(1, procs))
        runtime = float(draw(st.sampled_from([0, 0, 10, 20]) | st.integers(0, 60)))
        estimate = float(draw(st.sampled_from([runtime, runtime + 10]) | st.integers(0, 80)))
        jobs.append((submit, size, runtime, estimate))
    return procs, jobs


def drawn(view: RunView) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The records that ran, and per record the rows and the rows × share drawn for it over
    the whole run."""
    rects = window_rects(view, clip_window(view, None))
    rows = rects.y1 - rects.y0
    n = len(view.records)
    return (
        np.flatnonzero(view.ran),
        np.bincount(rects.job, weights=rows, minlength=n),
        np.bincount(rects.job, weights=rows * rects.weight, minlength=n),
    )


@given(brief_workloads(), st.sampled_from(sorted(REGISTRY)))
def test_every_job_is_drawn_on_its_size_in_processors(
    workload: tuple[int, Jobs], name: str
) -> None:
    procs, jobs = workload
    view = RunView.from_result(run_jobs(jobs, procs, create(name)))
    ran, rows, _ = drawn(view)
    assert len(ran) == len(jobs)
    assert np.array_equal(rows[ran], view.records["size"][ran])
    rects = window_rects(view, clip_window(view, None))
    assert rects.y0.min() >= 0 and rects.y1.max() <= procs
    for p in range(procs):  # no processor under two jobs at once (half-open intervals)
        on = (rects.y0 <= p) & (rects.y1 > p) & (rects.t1 > rects.t0)
        t0, t1 = rects.t0[on], rects.t1[on]
        order = np.argsort(t0, kind="stable")
        assert np.all(t0[order][1:] >= t1[order][:-1]), f"processor {p} drawn twice"


@settings(deadline=None)
@given(st.data(), st.sampled_from(sorted(set(REGISTRY) - {"FIRSTPRICE", "PRIO"})))
def test_every_job_is_drawn_on_its_nodes_and_cores(data: st.DataObject, name: str) -> None:
    platform = data.draw(platforms(downtime=data.draw(st.booleans())))
    asked = data.draw(requests(platform))
    brief = data.draw(st.lists(st.booleans(), min_size=len(asked), max_size=len(asked)))
    asked = [(s, c, 0.0 if b else r, e, a) for (s, c, r, e, a), b in zip(asked, brief, strict=True)]
    site = Site(platform, create(name))
    if platform.downtime:
        from sitesim.platform.downtime import Downtime

        names = {p.name: p.nodes for p in platform.partitions}
        downtime = Downtime.from_dict(platform.downtime, names, platform.nodes, "test", None)
        site.machine.add_outages(downtime.outages(2000.0, 1), requeue=True)
    site.add_user(Submitter(asked))
    result = site.run()
    assert result.placement is not None
    view = RunView.from_result(result)
    ran, rows, share = drawn(view)
    table = result.placement.table
    assert np.array_equal(rows[ran], table["nodes"][ran])
    assert view.cores is not None
    rects = window_rects(view, clip_window(view, None))
    cores = np.zeros(len(view.records))
    for job, y0, y1, weight in zip(rects.job, rects.y0, rects.y1, rects.weight, strict=True):
        cores[job] += weight * platform.cores[y0:y1].sum()
    assert np.allclose(cores[ran], view.cores[ran])
    assert np.all(share[ran] > 0)
