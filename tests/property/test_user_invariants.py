"""Invariants of site-level runs on random seeds and sizes (Hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sitesim.engine.job import JobState
from sitesim.models.users import UserModel
from sitesim.results.report import result_header, result_swf
from sitesim.runs.simulate import simulate
from sitesim.schedulers import create
from sitesim.workload.swf import format_swf

#: Site-level runs cost more than the scheduler properties: a quarter of the budget.
FEWER = settings(max_examples=max(8, settings().max_examples // 4), deadline=None)

sites = st.fixed_dictionaries(
    {
        "users": st.integers(1, 12),
        "kind": st.sampled_from(["static", "complete"]),
        "procs": st.sampled_from([16, 64, 128]),
        "seed": st.integers(0, 2**31),
        "days": st.sampled_from([3.0, 10.0]),
    }
)


def run(site, scheduler="EASY"):  # type: ignore[no-untyped-def]
    return simulate(
        site["users"], create(scheduler), model=UserModel(kind=site["kind"]), procs=site["procs"],
        days=site["days"], seed=site["seed"], warmup_days=0,
    )  # fmt: skip


@FEWER
@given(sites, st.sampled_from(["FCFS", "EASY", "CONSERVATIVE", "CREASY"]))
def test_no_job_is_submitted_before_the_job_it_depends_on_ended(site, scheduler):
    rec = run(site, scheduler).records
    has = rec["preceding"] > 0
    preceding_end = rec["end"][rec["preceding"][has] - 1]  # ids are 1-based positions
    assert int((rec["submit"][has] < preceding_end).sum()) == 0  # no dependency violation
    assert np.array_equal(rec["think"][has], rec["submit"][has] - preceding_end)
    ended = (rec["state"] == JobState.COMPLETED) | (rec["state"] == JobState.KILLED)
    assert ended.all()  # every job ends (the machine drains after the horizon)
    assert (rec["submit"] < site["days"] * 86400).all()


@FEWER
@given(sites)
def test_same_seed_gives_byte_identical_swf(site):
    a, b = run(site), run(site)
    text_a = format_swf(result_swf(a), result_header(a))
    assert text_a == format_swf(result_swf(b), result_header(b))


def shapes_by_user(records):  # type: ignore[no-untyped-def]
    out: dict[int, list[tuple[int, float, float]]] = {}
    for user, size, runtime, estimate, killed in zip(
        records["user"].tolist(), records["size"].tolist(), records["runtime"].tolist(),
        records["estimate"].tolist(), records["killed"].tolist(), strict=True,
    ):  # fmt: skip
        out.setdefault(user, []).append((size, runtime, estimate, killed))
    return out


@FEWER
@given(sites)
def test_a_user_submits_the_same_job_shapes_under_every_scheduler(site):
    easy = shapes_by_user(run(site, "EASY").records)
    fcfs = shapes_by_user(run(site, "FCFS").records)
    assert easy.keys() == fcfs.keys() or not easy or not fcfs
    for user in easy.keys() & fcfs.keys():
        common = min(len(easy[user]), len(fcfs[user]))
        assert easy[user][:common] == fcfs[user][:common]  # how many differs, not which
