"""The utility-based schedulers on random workloads with utility functions (Hypothesis)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sitesim.engine.job import JobState
from sitesim.engine.site import Site
from sitesim.models.trace_user import TraceUser, TraceWorkload
from sitesim.models.utility import LeeSnavely
from sitesim.schedulers import EASY, ECON, GA, PRIO, FirstPrice, PriorityFIFO
from sitesim.schedulers.base import Scheduler
from tests.property.test_invariants import max_busy

Valued = tuple[int, TraceWorkload]


@st.composite
def valued_workloads(draw: st.DrawFn, max_jobs: int = 25) -> Valued:
    """A machine and jobs with Lee & Snavely utility functions and priorities."""
    procs = draw(st.integers(2, 16))
    n = draw(st.integers(1, max_jobs))
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    submit = np.sort(rng.choice([0.0, 5.0, 30.0, 200.0], n) + rng.integers(0, 400, n))
    size = rng.integers(1, procs + 1, n)
    runtime = rng.integers(0, 300, n).astype(float)
    estimate = runtime * rng.choice([1.0, 2.0, 1.2], n) + 1
    maker = LeeSnavely(levels=3)
    priority = rng.integers(3, size=n)
    utility = tuple(
        maker.function(rng, int(p), int(s), float(e), float(rng.integers(0, 600)))
        for p, s, e in zip(priority, size, estimate, strict=True)
    )
    work = TraceWorkload.from_jobs(submit, size, runtime, estimate)
    return procs, replace(work, utility=utility, priority=-priority)


def run(workload: Valued, policy: Scheduler, cancel: bool = False) -> np.ndarray:
    procs, work = workload
    site = Site(procs, policy, cancel_expired=cancel)
    site.add_user(TraceUser(work))
    return site.run().records


def fast_ga(seed: int = 1) -> GA:
    return GA(generations=8, seed=seed)


SCHEDULERS = {
    "PRIORITY": PriorityFIFO, "FIRSTPRICE": FirstPrice, "PRIO": PRIO,
    "PRIO demand": lambda: PRIO(levels="demand"), "GA": fast_ga,
    "GA easy": lambda: GA(generations=4, fitness="easy"),
    "ECON const": ECON, "ECON prop": lambda: ECON("prop"), "ECON inv": lambda: ECON("inv"),
}  # fmt: skip


@settings(max_examples=40)
@given(valued_workloads(), st.sampled_from(sorted(SCHEDULERS)), st.booleans())
def test_the_engine_invariants_hold_for_every_utility_scheduler(workload, name, cancel):
    rec = run(workload, SCHEDULERS[name](), cancel)
    done = rec[rec["state"] != JobState.CANCELLED]
    assert max_busy(done) <= workload[0]  # no over-allocation
    assert (done["start"] >= done["submit"]).all()
    ended = (rec["state"] == JobState.COMPLETED) | (rec["state"] == JobState.KILLED)
    cancelled = rec["state"] == JobState.CANCELLED
    assert (ended | cancelled).all()  # every job ends or is recorded as cancelled
    assert cancel or not cancelled.any()
    assert (rec["utility"][cancelled] == 0).all()
    assert ((rec["utility"] >= 0) & (rec["utility"] <= rec["start_value"] + 1e-9)).all()


@settings(max_examples=40)
@given(valued_workloads())
def test_priority_fifo_with_one_level_is_exactly_easy(workload):
    procs, work = workload
    flat = (procs, replace(work, priority=np.zeros(len(work), dtype=np.int64)))
    a, b = run(flat, PriorityFIFO()), run(flat, EASY())
    assert np.array_equal(a["start"], b["start"])


@settings(max_examples=25)
@given(valued_workloads(), st.integers(0, 1000))
def test_ga_with_the_same_seed_gives_the_same_schedule(workload, seed):
    a, b = run(workload, fast_ga(seed)), run(workload, fast_ga(seed))
    assert np.array_equal(a["start"], b["start"])


@settings(max_examples=25)
@given(valued_workloads())
def test_a_cancelled_job_could_earn_nothing_more(workload):
    rec = run(workload, EASY(), cancel=True)
    cancelled = rec[rec["state"] == JobState.CANCELLED]
    # cancelled at a pass after its last useful start: it would have ended at or past its
    # deadline, where its function is worth 0 (up to the rounding of submit + deadline - estimate)
    _, work = workload
    deadline = {
        int(row): u.deadline for row, u in zip(work.rows.tolist(), work.utility, strict=True) if u
    }
    for job in cancelled:
        ends = job["end"] + job["estimate"]
        assert ends >= job["submit"] + deadline[int(job["trace_row"])] - 1e-9
