"""A narrated tiny site: the users' events told in order, the run itself unchanged."""

from __future__ import annotations

import numpy as np

from sitesim.engine.site import Site
from sitesim.models.users import UserModel
from sitesim.schedulers import EASY
from sitesim.views.narrate import Narrator, clock
from sitesim.workload.profile import default_profile


def four_users(narrate: bool) -> tuple[Site, Narrator | None]:
    site = Site(16, EASY())
    narrator = Narrator(site, say=None) if narrate else None
    for uid in range(1, 5):
        user = UserModel().user(uid, default_profile(), 16, seed=3)
        site.add_user(narrator.user(user) if narrator is not None else user)
    return site, narrator


def test_a_narrated_site_runs_as_a_plain_one_and_tells_every_kind_of_event():
    plain, _ = four_users(False)
    told, narrator = four_users(True)
    assert narrator is not None
    for hour in range(8, 48, 4):  # paused every four hours, as a lecturer would
        told.advance(hour * 3600)
        assert narrator.status().startswith(clock(hour * 3600))
    a, b = plain.run(until=2 * 86400.0).records, told.run(until=2 * 86400.0).records
    for name in ("id", "user", "submit", "start", "end", "session", "batch"):
        assert np.array_equal(a[name], b[name], equal_nan=True), name
    text = "\n".join(narrator.lines)
    for kind in ("submits job", "waits for job", "ended, response", "continues the session",
                 "leaves the session", "thinks", "takes a break", "window closed"):  # fmt: skip
        assert kind in text, kind
    assert narrator.lines[0].startswith("d0 Mon 07:47:02  user 3: submits job 1 (16 processors")
    submitted = sum("submits job" in line for line in narrator.lines)
    assert submitted == len(a)  # every job, once


def test_clock():
    assert clock(0) == "d0 Mon 00:00:00" and clock(6 * 86400 + 3661) == "d6 Sun 01:01:01"
