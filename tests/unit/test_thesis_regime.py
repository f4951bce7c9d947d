"""The thesis regime: its profile transforms, the shipped profile, and the session-start options
(scheduled and clocked, sensitivity options that are not the thesis' model)."""

from __future__ import annotations

import itertools
import json
from importlib import resources

import numpy as np
import pytest

from sitesim import simulate
from sitesim.errors import ConfigError
from sitesim.models.cycles import ActivityCycle
from sitesim.models.dynamics import SessionDynamics
from sitesim.models.streams import stream
from sitesim.models.users import UserModel
from sitesim.schedulers import REGISTRY
from sitesim.workload.distributions import Discrete, Quantiles
from sitesim.workload.profile import default_profile, read_profile
from sitesim.workload.thesis_regime import (
    FITTED,
    ThesisRegime,
    below,
    capped,
    equal_thirds,
    long_scale_for,
)


def test_equal_thirds_puts_a_third_of_the_jobs_in_each_class():
    runtimes = default_profile().runtimes
    table = equal_thirds(runtimes, 1.0)
    assert table.cdf([60.0, 600.0]) == pytest.approx([1 / 3, 2 / 3], abs=0.002)
    # inside a class the base shape is kept: the class medians are the base's class medians
    low, high = runtimes.cdf([60.0, 600.0])
    assert table.quantile(1 / 6) == pytest.approx(runtimes.quantile(low / 2), rel=0.02)
    assert table.quantile(5 / 6) == pytest.approx(runtimes.quantile((1 + high) / 2), rel=0.02)
    # long_scale compresses the long class towards 10 minutes, and only it
    half = equal_thirds(runtimes, 0.5)
    assert half.quantile(5 / 6) == pytest.approx(600 + (table.quantile(5 / 6) - 600) / 2, rel=1e-6)
    assert half.quantile(0.5) == pytest.approx(table.quantile(0.5))


def test_long_scale_gives_the_mean_work_asked_for():
    base = default_profile()
    scale = long_scale_for(base, 128, 5760.0)
    assert 0 < scale < 1
    mean_size = base.sizes.restricted(128).mean
    assert mean_size * equal_thirds(base.runtimes, scale).mean == pytest.approx(5760.0, rel=1e-9)
    with pytest.raises(ConfigError, match="long_scale outside"):
        long_scale_for(base, 128, 10.0)  # shorter than the two short classes allow


def test_width_cap_and_gap_truncation():
    widths = capped(Discrete([1, 2, 5], [0.5, 0.3, 0.2]), 2)
    assert widths.values.tolist() == [1, 2] and widths.probabilities.tolist() == [0.5, 0.5]
    gaps = below(Quantiles([0.0, 0.5, 1.0], [0.0, 60.0, 600.0]), 60.0)
    assert gaps.x.max() == 60.0 and gaps.quantile(0.5) == pytest.approx(30.0)


def test_bad_parameters_name_their_range():
    with pytest.raises(ConfigError, match=r"long_scale must be in \(0, 1\]"):
        ThesisRegime(0.0, 1, 60.0, 1.0)
    with pytest.raises(ConfigError, match="max_width must be >= 1"):
        ThesisRegime(0.5, 0, 60.0, 1.0)


def test_the_shipped_thesis_profile_is_the_frozen_calibration():
    """sitesim/data/thesis_profile.json is FITTED["after_break"] applied to the default
    profile (scripts/build_thesis_profile.sh rebuilds it)."""
    shipped = json.loads(
        resources.files("sitesim").joinpath("data/thesis_profile.json").read_text()
    )
    derived = json.loads(json.dumps(FITTED["after_break"].apply(default_profile()).to_dict()))
    assert shipped == derived
    profile, _ = read_profile("thesis")
    assert profile.batch_widths.values.max() == FITTED["after_break"].max_width


def _session_starts(records: np.ndarray) -> list[tuple[float, float]]:
    """(first submit, last end) of each session, in order."""
    out = []
    for session in np.unique(records["session"]):
        jobs = records[records["session"] == session]
        out.append((float(jobs["submit"].min()), float(jobs["end"].max())))
    return out


@pytest.mark.parametrize("starts", ["after_break", "scheduled"])
def test_the_next_session_starts_a_break_after_the_end_or_the_start(starts):
    """One user who always leaves (p_cont tiny), one job a batch: each session is one job, and
    the next starts a break (the user's own break draws, in order) after the session's end
    (after_break) or its start (scheduled, at once if the session ended later), moved to the
    next window opening when that time is outside the user's window; a session whose job ends
    outside the window draws no break (the window rule) and the next starts at the opening."""
    model = UserModel(pcont_a=1e-12, max_batch_width=1, session_starts=starts)
    result = simulate(users=1, model=model, scheduler="FCFS", days=14, warmup_days=0, seed=3)
    sessions = _session_starts(result.records)
    assert len(sessions) > 10
    profile = default_profile()
    breaks = SessionDynamics(profile, 3, 1).break_length
    cycle = ActivityCycle.draw(stream(3, 1, "cycle"))
    for (start, end), (following, _) in itertools.pairwise(sessions):
        if not cycle.in_window(end):  # the window rule: no trial, no break
            assert following == cycle.next_open(end)
            continue
        due = end + breaks() if starts == "after_break" else max(start + breaks(), end)
        assert following == (due if cycle.in_window(due) else cycle.next_open(due))


def test_session_starts_is_refused_when_unknown_and_kept_out_of_old_configurations():
    from sitesim.runs.config import SiteConfig

    with pytest.raises(ConfigError, match="session_starts must be one of"):
        SiteConfig(session_starts="never")
    assert "session_starts" not in SiteConfig().to_dict()  # old results.json still match
    assert SiteConfig(session_starts="scheduled").to_dict()["session_starts"] == "scheduled"


def _clocked_starts(seed: int, user: int, horizon: float, scale: float) -> list[float]:
    """The session starts of a clocked user, from its own cycle and break draws alone."""
    cycle = ActivityCycle.draw(stream(seed, user, "cycle"))
    breaks = SessionDynamics(default_profile(), seed, user).break_length
    t, starts = 0.0, []
    while True:
        if not cycle.in_window(t):
            t = cycle.next_open(t)
        if t >= horizon:
            return starts
        starts.append(t)
        t += max(1.0, round(breaks() * scale))


@pytest.mark.parametrize("scheduler", sorted(REGISTRY))
def test_clocked_session_starts_are_the_same_under_every_scheduler(scheduler):
    """Clocked starts depend on the user's window and break draws, never on how its jobs are
    served: each scheduler's run starts exactly the sessions the draws give (GA, slow, on a
    shorter run)."""
    days, users = (3, 2) if scheduler == "GA" else (7, 4)
    model = UserModel(session_starts="clocked", start_gap_scale=1.5)
    result = simulate(users, scheduler, model=model, procs=32, days=days, warmup_days=0, seed=5)
    rec = result.records
    started = 0
    for user in range(1, users + 1):
        mine = rec[rec["user"] == user]
        sessions = np.unique(mine["session"])
        firsts = [float(mine["submit"][mine["session"] == s].min()) for s in sessions]
        assert firsts == _clocked_starts(5, user, days * 86400.0, 1.5), user
        started += len(firsts)
    assert started > 5


def test_start_gap_scale_needs_clocked_starts():
    from sitesim.runs.config import SiteConfig

    with pytest.raises(ConfigError, match="needs session starts 'clocked'"):
        UserModel(start_gap_scale=2.0)
    with pytest.raises(ConfigError, match="start_gap_scale applies to session_starts"):
        SiteConfig(start_gap_scale=2.0)
    config = SiteConfig(session_starts="clocked", start_gap_scale=2.0)
    assert config.user_model().start_gap_scale == 2.0
    assert "start_gap_scale" not in SiteConfig().to_dict()
