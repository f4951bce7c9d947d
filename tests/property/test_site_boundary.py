"""The site boundary under random custom users: impossible jobs are counted, never fatal."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from sitesim.engine.job import MIN_ESTIMATE, Job, JobState
from sitesim.engine.site import AFTER_HORIZON, Site
from sitesim.schedulers import REGISTRY, create

Spec = tuple[float, int, float, float]  # gap before the submission, size, runtime, estimate
HORIZON = 500.0


class Scripted:
    """Submits the given jobs after the given gaps, waiting for some, ignoring the horizon."""

    def __init__(self, specs: list[Spec], wait: bool) -> None:
        self.specs, self.wait = specs, wait

    def run(self, site):  # type: ignore[no-untyped-def]
        for gap, size, runtime, estimate in self.specs:
            yield site.env.timeout(gap)
            job = Job(size, runtime, estimate)
            site.submit(job)
            if self.wait:
                yield site.completion(job)


specs = st.lists(
    st.tuples(
        st.sampled_from([0.0, 1.0, 50.0, 200.0]),
        st.integers(-1, 10),
        st.sampled_from([0.0, 5.0, 60.0, -1.0, math.nan, math.inf]),
        st.sampled_from([0.0, 0.5, 1.0, 30.0, 90.0, math.inf, math.nan]),
    ),
    max_size=12,
)


def valid(spec: Spec, procs: int) -> bool:
    _, size, runtime, estimate = spec
    return 1 <= size <= procs and 0 <= runtime < math.inf and MIN_ESTIMATE <= estimate < math.inf


@given(st.lists(specs, min_size=1, max_size=4), st.booleans(), st.sampled_from(sorted(REGISTRY)))
def test_custom_users_never_break_a_run(users, wait, name):
    procs = 8
    site = Site(procs, create(name))
    for user in users:
        site.add_user(Scripted(user, wait))
    result = site.run(until=HORIZON)
    rec = result.records
    ended = (rec["state"] == JobState.COMPLETED) | (rec["state"] == JobState.KILLED)
    assert ended.all() and (rec["submit"] < HORIZON).all()
    assert (rec["size"] >= 1).all() and (rec["size"] <= procs).all()
    assert AFTER_HORIZON not in result.rejected  # users are stopped at the horizon
    assert result.summary.jobs_skipped == sum(result.rejected.values())
    if not wait:  # submission times are known: every job before the horizon is accounted for
        before = [
            spec for user in users for k, spec in enumerate(user)
            if sum(gap for gap, *_ in user[: k + 1]) < HORIZON
        ]  # fmt: skip
        assert len(rec) == sum(valid(spec, procs) for spec in before)
        assert result.summary.jobs_skipped == sum(not valid(spec, procs) for spec in before)
