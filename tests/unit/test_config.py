"""Run configurations: validation, changes, and the round trip through results.json."""

from __future__ import annotations

import json

import pytest

from sitesim.errors import ConfigError
from sitesim.output import to_json
from sitesim.runs.config import ReplayConfig, RunConfig, SiteConfig


def test_defaults_are_the_specified_ones():
    site = SiteConfig()
    assert (site.users, site.procs, site.days, site.warmup_days) == (50, 128, 182.0, 7.0)
    assert (site.model, site.profile, site.estimates, site.seed) == (
        "complete",
        "default",
        "exact",
        1,
    )
    replay = ReplayConfig(trace="t.swf")
    assert (replay.procs, replay.estimates, replay.warmup_days) == (None, "trace", 0.0)


def test_scheduler_names_and_parameters_are_resolved():
    config = SiteConfig(scheduler="creasy")
    assert config.scheduler == "CREASY" and config.scheduler_params == {"alpha": 6000.0}
    assert config.label == "CREASY alpha=6000"
    assert SiteConfig(scheduler="CREASY", scheduler_params={"alpha": 3000}).label == (
        "CREASY alpha=3000"
    )


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"users": 0}, "users must be a whole number >= 1, got 0"),
        ({"users": 2.5}, "users must be a whole number >= 1, got 2.5"),
        ({"users": True}, "users must be a whole number >= 1, got True"),
        ({"procs": "many"}, "procs must be a whole number >= 1, got 'many'"),
        ({"days": 0}, "days must be in (0, inf), got 0.0"),
        ({"days": float("nan")}, "days must be in (0, inf), got nan"),
        ({"days": 7, "warmup_days": 7}, "warmup_days must be in [0, 7) (shorter than the run)"),
        ({"seed": -1}, "seed must be a whole number >= 0, got -1"),
        ({"model": "lazy"}, "model must be 'complete', 'static' or 'synthetic', got 'lazy'"),
        ({"estimates": "guess"}, "estimate model must be exact, factor or ratio"),
        ({"pcont_a": 1.5}, "pcont_a must be in (0, 1], got 1.5"),
        ({"day_share": -0.1}, "day_share must be in [0, 1], got -0.1"),
        ({"shift_max_min": 800}, "shift_max_min must be in [0, 720], got 800.0"),
        ({"scheduler": "NOPE"}, "unknown scheduler 'NOPE'; choose one of FCFS"),
        ({"scheduler_params": {"alpha": 1}}, "scheduler EASY does not take 'alpha'"),
        ({"scheduler": "CREASY", "scheduler_params": {"alpha": -1}}, "alpha must be >= 0"),
        ({"scheduler_params": {"priority": "size"}}, "priority cannot be set in a configuration"),
        ({"profile_sha256": "abc"}, "profile_sha256 must be 64 lowercase hex digits"),
        ({"strict": "yes"}, "strict must be true or false, got 'yes'"),
    ],
)
def test_every_setting_is_checked_with_its_allowed_range(settings, message):
    with pytest.raises(ConfigError) as err:
        SiteConfig(**settings)
    assert message in str(err.value)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"load": 0.5, "scale": 0.5}, "give either load or scale, not both"),
        ({"load": -1}, "load must be in (0, 4], got -1.0"),
        ({"estimates": "ratio"}, "estimates of a replay must be 'trace' or 'exact'"),
        ({"procs": 0}, "procs must be a whole number >= 1, got 0"),
    ],
)
def test_replay_settings_are_checked(settings, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ReplayConfig(trace="t.swf", **settings)


def test_replace_routes_scheduler_parameters():
    config = SiteConfig(scheduler="CREASY").replace(alpha=1500, users=10)
    assert config.scheduler_params == {"alpha": 1500.0} and config.users == 10
    assert config.replace(scheduler="EASY").scheduler_params == {}  # EASY takes no alpha
    with pytest.raises(ConfigError, match="EASY does not take 'alpha'"):
        SiteConfig().replace(alpha=3)
    with pytest.raises(ConfigError, match="unknown setting 'userz' of a site run"):
        SiteConfig().replace(userz=3)


@pytest.mark.parametrize(
    "config",
    [
        SiteConfig(users=7, scheduler="CREASY", scheduler_params={"alpha": 3000}, seed=9),
        SiteConfig(model="static", estimates="factor:2", correlated=True, profile="p.json"),
        ReplayConfig(trace="t.swf.gz", load=0.9, estimates="exact", procs=64, strict=True),
    ],
)
def test_a_configuration_round_trips_through_json(config):
    data = json.loads(to_json(config.to_dict()))
    assert data["mode"] == config.mode
    assert RunConfig.from_dict(data) == config


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"mode": "open"}, "mode must be 'site' or 'replay', got 'open'"),
        ({"mode": "replay"}, "a replay run needs trace"),
        ({"mode": "replay", "trace": "t.swf", "users": 3}, "unknown setting users for a replay"),
        ({"mode": "site", "days": -1}, "days must be in (0, inf)"),
        ([1, 2], "expected a table of settings"),
    ],
)
def test_from_dict_names_the_problem(data, message):
    with pytest.raises(ConfigError) as err:
        RunConfig.from_dict(data, where="run.json")
    assert str(err.value).startswith("run.json: ") and message in str(err.value)
