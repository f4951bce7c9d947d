"""Exact event logs of one simulated user on a tiny site, with scripted draws."""

from __future__ import annotations

import math
from collections.abc import Iterable

from sitesim.engine.site import Site, SiteResult, User
from sitesim.models.cycles import ActivityCycle
from sitesim.models.users import CompleteUser, StaticUser, UserModel
from sitesim.schedulers import FCFS
from sitesim.workload.profile import default_profile


class Script:
    """Returns the given values in turn (then repeats the last one)."""

    def __init__(self, values: Iterable[object]) -> None:
        self.values = list(values)
        self.calls = 0

    def __call__(self, *args: object) -> object:
        value = self.values[min(self.calls, len(self.values) - 1)]
        self.calls += 1
        return value


class ScriptedWorkpool:
    def __init__(self, shapes):  # type: ignore[no-untyped-def]
        self.next_shape = Script(shapes)
        self.ask = None


class ScriptedSubmittal:
    def __init__(self, widths, gaps, thinks):  # type: ignore[no-untyped-def]
        self.width, self.gap, self.think = Script(widths), Script(gaps), Script(thinks)


class ScriptedDynamics:
    def __init__(self, decisions, breaks):  # type: ignore[no-untyped-def]
        self.decisions = Script(decisions)
        self.break_length = Script(breaks)
        self.responses: list[float] = []

    def continues(self, response: float) -> bool:
        self.responses.append(response)
        return bool(self.decisions())


def scripted(kind, shapes, widths, gaps, thinks, starts="after_break", **complete):  # type: ignore[no-untyped-def]
    cls = CompleteUser if kind == "complete" else StaticUser
    user = cls(7, default_profile(), 8, 1, UserModel(kind=kind, session_starts=starts))
    user.workpool = ScriptedWorkpool(shapes)  # type: ignore[assignment]
    user.submittal = ScriptedSubmittal(widths, gaps, thinks)  # type: ignore[assignment]
    if kind == "complete":
        user.dynamics = ScriptedDynamics(complete["decisions"], complete["breaks"])  # type: ignore[assignment]
        user.cycle = complete.get("cycle", ActivityCycle(True, True, -7.5 * 3600))  # type: ignore[assignment]
    return user


def log(site):  # type: ignore[no-untyped-def]
    """(id, submit, start, end, session, batch, preceding, think) of every job."""
    return [
        (j.id, j.submit, j.start, j.end, j.session, j.batch, j.preceding,
         None if math.isnan(j.think) else j.think)
        for j in site.jobs
    ]  # fmt: skip


def run_alone(user: User, until: float) -> tuple[Site, SiteResult]:
    """Run ``user`` alone on 8 processors under FCFS, until the horizon ``until``."""
    site = Site(8, FCFS())
    site.add_user(user)
    return site, site.run(until=until)


def two_then_one(shapes: list[tuple[int, int, int]], think: float, until: float) -> Site:
    """A static user's batch of two jobs submitted 5 s apart, then, ``think`` seconds after it
    ended, a batch of one; alone on the site until ``until``."""
    user = scripted("static", shapes=shapes, widths=[2, 1], gaps=[5], thinks=[think])
    return run_alone(user, until)[0]


def test_a_batch_waits_for_its_last_submitted_job():
    # 8 processors. Batch 1: job 1 (8 procs, 100 s) at 0, job 2 (4 procs, 10 s) at 5: job 2
    # waits for job 1 and ends at 110, after the first-submitted job. The next batch starts
    # after job 2's end plus the 60 s think: at 170, depending on job 2.
    site = two_then_one([(8, 100, 100), (4, 10, 10), (2, 50, 50)], think=60, until=171)
    assert log(site) == [
        (1, 0, 0, 100, 0, 0, -1, None),
        (2, 5, 100, 110, 0, 0, -1, None),
        (3, 170, 170, 220, 0, 1, 2, 60),
    ]


def test_a_batch_does_not_wait_for_its_earlier_jobs():
    # job 1 runs 100 s, job 2 (submitted 5 s later) only 10 s: the batch ends at 15
    site = two_then_one([(4, 100, 100), (4, 10, 10), (1, 1, 1)], think=20, until=36)
    assert [(j.id, j.submit, j.end) for j in site.jobs] == [(1, 0, 100), (2, 5, 15), (3, 35, 36)]
    assert site.jobs[2].preceding == 2 and site.jobs[2].think == 20


def test_think_then_break():
    # complete user, always in its window: after batch 1 it continues (think 60), after
    # batch 2 it leaves (break 3600): batch 3 starts a new session without a dependency
    user = scripted(
        "complete", shapes=[(1, 30, 30)], widths=[1], gaps=[0], thinks=[60],
        decisions=[True, False, True], breaks=[3600],
        cycle=ActivityCycle(True, True, -7.5 * 3600),  # Monday 00:00-10:00
    )  # fmt: skip
    site, _ = run_alone(user, until=3781)
    assert log(site) == [
        (1, 0, 0, 30, 0, 0, -1, None),
        (2, 90, 90, 120, 0, 1, 1, 60),
        (3, 3720, 3720, 3750, 1, 2, -1, None),
    ]
    assert user.dynamics.responses == [30, 30, 30]


def test_first_job_at_window_open_and_sleep_outside_the_window():
    # a day, weekday worker without shift: works Monday 07:30-17:30. At time 0 (Monday 00:00)
    # it sleeps until 07:30. A job that responds at 17:40 finds the window closed: the user
    # sleeps until Tuesday 07:30 and starts a new session there.
    open_monday = 7.5 * 3600
    long = 10 * 3600 + 600  # ends 17:40
    user = scripted(
        "complete", shapes=[(1, long, long), (1, 60, 60)], widths=[1], gaps=[0], thinks=[60],
        decisions=[True], breaks=[3600], cycle=ActivityCycle(True, True, 0.0),
    )  # fmt: skip
    site, _ = run_alone(user, until=86400 + open_monday + 1)
    jobs = site.jobs
    assert jobs[0].submit == open_monday
    # after the think (17:41) the window is closed: next submission at Tuesday's opening
    assert jobs[1].submit == 86400 + open_monday
    assert (jobs[1].session, jobs[1].preceding) == (1, -1)


def test_users_stop_at_the_horizon_and_the_machine_drains():
    user = scripted("static", shapes=[(1, 500, 500)], widths=[1], gaps=[0], thinks=[10])
    site, result = run_alone(user, until=1000)
    assert [j.submit for j in site.jobs] == [0, 510]  # no submission at 1020 > horizon
    assert result.records["end"].max() == 1010  # the last job still completes


def test_a_completion_outside_the_window_ends_the_session_without_a_trial():
    # The window rule (Shmueli's thesis §5.3.2.3): a day, weekday worker without shift works
    # Monday 07:30-17:30. Job 1 ends at 17:40, outside the window: no continue trial, no think
    # and no break are drawn; the user sleeps to Tuesday's opening and starts a new session
    # there. (Before the rule, the trial said "leave", a 16-hour break was drawn, and the
    # morning start moved to 09:40.)
    open_monday = 7.5 * 3600
    long = 10 * 3600 + 600  # ends 17:40
    user = scripted(
        "complete", shapes=[(1, long, long), (1, 60, 60)], widths=[1], gaps=[0], thinks=[60],
        decisions=[False], breaks=[16 * 3600], cycle=ActivityCycle(True, True, 0.0),
    )  # fmt: skip
    site, _ = run_alone(user, until=86400 + open_monday + 1)
    assert log(site) == [
        (1, open_monday, open_monday, open_monday + long, 0, 0, -1, None),
        (2, 86400 + open_monday, 86400 + open_monday, 86400 + open_monday + 60, 1, 1, -1, None),
    ]
    assert user.dynamics.responses == []  # no trial
    assert user.submittal.think.calls == 0 and user.dynamics.break_length.calls == 0


def test_a_completion_inside_the_window_draws_the_trial_and_its_break():
    # The other side of the rule: job 1 ends at 17:29:59, one second before the window
    # closes. The trial is drawn (leave), then a 3-hour break, which ends at 20:29:59,
    # outside the window: the user sleeps to Tuesday's opening. And a job ending exactly at
    # 17:30 (the window is [07:30, 17:30)) is outside: no trial.
    open_monday, close_monday = 7.5 * 3600, 17.5 * 3600
    inside = close_monday - 1 - open_monday
    user = scripted(
        "complete", shapes=[(1, inside, inside), (1, 60, 60)], widths=[1], gaps=[0],
        thinks=[60], decisions=[False], breaks=[3 * 3600],
        cycle=ActivityCycle(True, True, 0.0),
    )  # fmt: skip
    site, _ = run_alone(user, until=86400 + open_monday + 1)
    assert [(j.submit, j.end, j.session) for j in site.jobs] == [
        (open_monday, close_monday - 1, 0),
        (86400 + open_monday, 86400 + open_monday + 60, 1),
    ]
    assert user.dynamics.responses == [inside]
    assert user.dynamics.break_length.calls == 1 and user.submittal.think.calls == 0

    at_close = close_monday - open_monday
    user = scripted(
        "complete", shapes=[(1, at_close, at_close), (1, 60, 60)], widths=[1], gaps=[0],
        thinks=[60], decisions=[True], breaks=[3600], cycle=ActivityCycle(True, True, 0.0),
    )  # fmt: skip
    site, _ = run_alone(user, until=86400 + open_monday + 1)
    assert [j.submit for j in site.jobs] == [open_monday, 86400 + open_monday]
    assert user.dynamics.responses == [] and user.submittal.think.calls == 0


def test_a_think_that_ends_outside_the_window_sleeps_to_the_next_opening():
    # Inside the window the user continues (think 20 min from 17:20): the next submission
    # would be at 17:40, outside: it waits for Tuesday's opening, in a new session.
    open_monday = 7.5 * 3600
    runtime = 9 * 3600 + 50 * 60  # ends 17:20
    user = scripted(
        "complete", shapes=[(1, runtime, runtime), (1, 60, 60)], widths=[1], gaps=[0],
        thinks=[1200], decisions=[True], breaks=[3600], cycle=ActivityCycle(True, True, 0.0),
    )  # fmt: skip
    site, _ = run_alone(user, until=86400 + open_monday + 1)
    assert [(j.submit, j.session, j.preceding) for j in site.jobs] == [
        (open_monday, 0, -1),
        (86400 + open_monday, 1, -1),
    ]
    assert user.dynamics.responses == [runtime] and user.submittal.think.calls == 1


def test_clocked_session_starts():
    # session_starts = "clocked" (a sensitivity option, not the thesis' model). A day, weekday
    # worker without shift (Monday-Friday 07:30-17:30). Session 0 starts at Monday's opening
    # (07:30) with a 2-hour job. The clock's first gap (a break, 1 h) starts session 1 at
    # 08:30 while session 0 is still waiting: it does not wait for it. Session 1 continues
    # once (think 60 s) and then leaves; session 0 continues once when its job ends at 09:30,
    # then leaves. The next gap (9.5 h) falls at 18:00, outside the window: that start is
    # dropped and the clock restarts at Tuesday's opening (session 2). Session 2's job ends at
    # 17:29 Tuesday and the user continues, but after the 2-minute think the window is
    # closed: the session ends without submitting. Wednesday 07:30 starts session 3 (the
    # third gap, 40,000 s, falls outside Tuesday's window).
    day, opens = 86400, 7.5 * 3600
    user = scripted(
        "complete",
        shapes=[(1, 7200, 7200), (1, 600, 600), (1, 600, 600), (1, 600, 600),
                (1, 35940, 35940), (1, 60, 60)],
        widths=[1], gaps=[0], thinks=[60, 60, 120], starts="clocked",
        decisions=[True, False, True, False, True], breaks=[3600, 34200, 40000],
        cycle=ActivityCycle(True, True, 0.0),
    )  # fmt: skip
    site, _ = run_alone(user, until=2 * day + opens + 1)
    assert log(site) == [
        (1, opens, opens, opens + 7200, 0, 0, -1, None),
        (2, opens + 3600, opens + 3600, opens + 4200, 1, 1, -1, None),
        (3, opens + 4260, opens + 4260, opens + 4860, 1, 2, 2, 60),
        (4, opens + 7260, opens + 7260, opens + 7860, 0, 3, 1, 60),
        (5, day + opens, day + opens, day + opens + 35940, 2, 4, -1, None),
        (6, 2 * day + opens, 2 * day + opens, 2 * day + opens + 60, 3, 5, -1, None),
    ]
    assert user.dynamics.responses[:5] == [600, 600, 7200, 600, 35940]
