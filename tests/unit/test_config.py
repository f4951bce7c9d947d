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


# -- one schema for files, tables, objects and keywords ------------------------------------------
TINY = {
    "name": "tiny",
    "nodes": [{"type": "n", "count": 4, "cores": 8}],
    "partitions": [{"name": "all", "nodes": "n"}],
}


def test_a_platform_object_or_its_tables_is_a_setting(tmp_path):
    import sitesim
    from sitesim.platform.description import Platform

    platform = Platform.from_dict(TINY)
    result = sitesim.simulate(4, days=2, warmup_days=0, platform=platform)
    assert result.config is not None and result.config.platform == platform
    assert result.config.procs == 32 and result.config.platform_sha256 is None
    stored = json.loads(to_json(result.config.to_dict()))
    assert stored["platform"] == platform.to_dict()  # (results.json holds the tables)
    again = RunConfig.from_dict(stored)
    assert again == result.config
    assert sitesim.run(again).summary == result.summary
    assert SiteConfig(platform=TINY).platform == platform  # (the tables, as a mapping)
    file = tmp_path / "tiny.toml"
    file.write_text(
        'name = "tiny"\n[[nodes]]\ntype = "n"\ncount = 4\ncores = 8\n'
        '[[partitions]]\nname = "all"\nnodes = "n"\n'
    )
    from_file = sitesim.simulate(4, days=2, warmup_days=0, platform=file)  # (a Path)
    assert from_file.summary == result.summary


@pytest.mark.parametrize(
    ("platform", "message"),
    [
        ({**TINY, "nodes": [{"type": "n", "count": 0, "cores": 8}]}, "platform: nodes[0].count"),
        (3, "platform must be a platform file, the name of a shipped one (curie), a Platform"),
    ],
)
def test_a_bad_platform_setting_is_named(platform, message):
    with pytest.raises(ConfigError) as err:
        SiteConfig(platform=platform)
    assert str(err.value).startswith(message)
    with pytest.raises(ConfigError) as err:
        RunConfig.from_dict({"mode": "site", "platform": platform}, where="results.json")
    assert str(err.value).startswith(f"results.json: {message}")


def test_the_keyword_settings_are_every_field():
    import inspect

    from sitesim.runs.config import ReplaySettings, SiteSettings
    from sitesim.runs.replay import replay
    from sitesim.runs.simulate import simulate

    for function, settings, kind in (
        (simulate, SiteSettings, SiteConfig),
        (replay, ReplaySettings, ReplayConfig),
    ):
        named = set(inspect.signature(function).parameters) - {"settings", "progress"}
        assert not named & set(settings.__annotations__)
        keywords = named | set(settings.__annotations__)
        own = {"model", "trace", "scheduler"}  # (given as objects too; trace_sha256 is read)
        assert keywords - own == set(kind.settings()) - own - {"trace_sha256"}


def test_replay_takes_every_setting(tmp_path):
    import sitesim

    trace = tmp_path / "t.swf"
    trace.write_text(
        "; MaxProcs: 32\n"
        "1 0 0 100 8 -1 -1 8 600 -1 1 1 -1 -1 -1 -1 -1 -1\n"
        "2 10 0 100 32 -1 -1 32 600 -1 1 1 -1 -1 -1 -1 -1 -1\n"
    )
    result = sitesim.replay(trace, "CREASY", platform=TINY, seed=4, scheduler_params={"alpha": 9})
    assert result.config is not None
    assert (result.config.seed, result.config.scheduler_params) == (4, {"alpha": 9.0})
    assert result.config.procs == 32 and result.config.platform_name == "tiny"
    with pytest.raises(ConfigError, match="alpha: given in scheduler_params and as a keyword"):
        sitesim.replay(trace, "CREASY", alpha=3, scheduler_params={"alpha": 9})


def test_accounts_as_a_mapping_or_blocks():
    from sitesim.schedulers import create
    from sitesim.slurm.associations import AssociationError

    named = create("SLURM", accounts={"physics": 2, "chemistry": [7, 8], "bio": {"shares": 3}})
    assert dict(named.associations.accounts) == {
        "physics": ("root", 1.0), "chemistry": ("root", 1.0), "bio": ("root", 3.0)
    }  # fmt: skip
    assert dict(named.associations.users) == {
        1: ("physics", 1.0), 2: ("physics", 1.0), 7: ("chemistry", 1.0), 8: ("chemistry", 1.0)
    }  # fmt: skip
    blocks = create("SLURM", accounts="2x3")
    counted = create("SLURM", accounts={"a1": 3, "a2": 3})
    assert counted.associations == blocks.associations
    config = SiteConfig(scheduler="SLURM", scheduler_params={"accounts": {"x": 2, "y": 1}})
    assert config.scheduler_params["accounts"] == {"x": 2, "y": 1}
    assert RunConfig.from_dict(json.loads(to_json(config.to_dict()))) == config
    with pytest.raises(AssociationError, match="accounts: x: a number of users must be >= 1"):
        create("SLURM", accounts={"x": 0})
    with pytest.raises(AssociationError, match="accounts: x: a number of users, a list"):
        create("SLURM", accounts={"x": "many"})
