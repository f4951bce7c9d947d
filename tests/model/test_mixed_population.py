"""A population that mixes built-in users (in sessions) with users of one's own (no sessions)."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from sitesim.engine.job import Job
from sitesim.engine.site import Site
from sitesim.models.users import UserModel
from sitesim.runs.simulate import simulate
from sitesim.workload.profile import WorkloadProfile


class SmallUser:
    """Submits a 4-processor job of 10 minutes every hour, waiting for each: no sessions."""

    def __init__(self, uid: int) -> None:
        self.uid = uid

    def run(self, site: Site) -> Generator[Any, Any, None]:
        while True:
            job = Job(4, 600.0, 900.0, user=self.uid)
            site.submit(job)
            yield site.completion(job)
            yield site.env.timeout(3600.0)


def population(uid: int, profile: WorkloadProfile, procs: int, seed: int) -> Any:
    if uid % 3:
        return SmallUser(uid)
    return UserModel().user(uid, profile, procs, seed)


def test_sessions_are_counted_by_hand_in_a_mixed_population() -> None:
    result = simulate(12, "EASY", model=population, procs=64, days=28, seed=1)
    rec = result.records
    t0, t1 = result.summary.window_start_d * 86_400, result.summary.window_end_d * 86_400
    window = rec[(rec["submit"] >= t0) & (rec["submit"] <= t1)]
    sessions: dict[int, set[int]] = {}
    for user, session in zip(window["user"].tolist(), window["session"].tolist(), strict=True):
        found = sessions.setdefault(user, set())
        if session >= 0:
            found.add(session)
    table = result.per_user
    assert {int(u): int(n) for u, n in zip(table["user"], table["sessions"], strict=True)} == {
        user: len(found) for user, found in sessions.items()
    }
    assert all(table["sessions"][table["user"] % 3 != 0] == 0)  # the small users: none
    in_sessions = int((window["session"] >= 0).sum())
    total = sum(len(found) for found in sessions.values())
    assert result.summary.sessions == total
    assert result.summary.jobs_per_session == pytest.approx(in_sessions / total)
    assert result.summary.sessions_per_user == pytest.approx(total / 4)  # users 3, 6, 9, 12


def test_one_built_in_user_is_the_same_user_as_in_a_population() -> None:
    """UserModel.user is a user factory: a population built from it runs as the model does."""
    model = UserModel(kind="static")
    by_factory = simulate(5, "EASY", model=model.user, procs=64, days=14, seed=3)
    by_model = simulate(5, "EASY", model=model, procs=64, days=14, seed=3)
    assert by_factory.records.tobytes() == by_model.records.tobytes()
