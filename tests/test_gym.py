"""The gymnasium environment: gymnasium's own checks, a random agent, returns that are the
summary's metrics, the same schedules as the ordinary schedulers, vector environments,
platforms, open replays, and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium", reason="needs the rl extra (gymnasium)")

from gymnasium.utils.env_checker import check_env  # noqa: E402

import sitesim  # noqa: E402
from sitesim.errors import ConfigError  # noqa: E402
from sitesim.gym.env import ActionError, SiteEnv  # noqa: E402
from sitesim.gym.episodes import OpenReplay  # noqa: E402
from sitesim.gym.observation import JOB_FEATURES  # noqa: E402
from sitesim.gym.policies import LinearPick, LinearPriority  # noqa: E402
from sitesim.gym.rewards import REWARDS  # noqa: E402
from sitesim.results.report import write_outputs  # noqa: E402
from sitesim.runs.simulate import run_site  # noqa: E402
from sitesim.views.run_view import read_run  # noqa: E402

TINY = sitesim.SiteConfig(users=4, days=3, warmup_days=1, procs=16)
SMALL = sitesim.SiteConfig(users=6, days=4, warmup_days=1, procs=32)
WEIGHTS = np.array([0.0, -0.5, 0.0, -0.8, 0.3, 0.6, -0.1, 0.2, 0.05])


def same_records(a: sitesim.SiteResult, b: sitesim.SiteResult) -> bool:
    return len(a.records) == len(b.records) and all(
        np.array_equal(a.records[name], b.records[name], equal_nan=True)
        for name in a.records.dtype.names
    )


def play(env: SiteEnv, seed: int, agent) -> tuple[float, int, dict]:  # type: ignore[no-untyped-def, type-arg]
    """Run one episode: its return, steps and last info."""
    obs, info = env.reset(seed=seed)
    total, steps = 0.0, 0
    while True:
        obs, reward, terminated, truncated, info = env.step(agent(obs, info))
        total += float(reward)
        steps += 1
        assert not truncated
        if terminated:
            return total, steps, info


@pytest.mark.parametrize(
    "options",
    [{}, {"actions": "next"}, {"actions": "next", "backfill": True}, {"actions": "priority"},
     {"layout": "schedgym", "actions": "next", "k": 128}, {"reward": "throughput"}],
    ids=["start", "next", "next+backfill", "priority", "schedgym", "throughput"],
)  # fmt: skip
def test_gymnasiums_checker_passes(options):
    check_env(SiteEnv(TINY, **options), skip_render_check=True)


def test_an_episode_with_no_decision_is_skipped_for_the_next_seed():
    # seed 24 of TINY ends before any decision (every job starts with no choice to make): a
    # random seed may draw it, so reset plays the next seed's episode and says so
    env = SiteEnv(TINY)
    _, info = env.reset(seed=24)
    assert info["skipped_seeds"] == [24] and env.episode_seed == 25
    _, info = env.reset(seed=25)
    assert "skipped_seeds" not in info and env.episode_seed == 25
    skipped, played = SiteEnv(TINY), SiteEnv(TINY)
    first = lambda obs, info: int(np.flatnonzero(info["action_mask"])[0])  # noqa: E731
    play(skipped, 24, first)
    play(played, 25, first)
    assert skipped.result is not None and played.result is not None
    assert same_records(skipped.result, played.result)


def test_a_source_with_no_decision_in_ten_seeds_is_refused():
    env = SiteEnv(sitesim.SiteConfig(users=1, days=0.01, warmup_days=0, procs=16))
    with pytest.raises(ConfigError, match="seeds 1 to 10 all ended before their first decision"):
        env.reset(seed=1)


def test_a_random_agent_plays_an_episode_whose_result_is_an_ordinary_run(tmp_path):
    env = SiteEnv(SMALL, k=8)
    env.action_space.seed(3)  # (unseeded, one episode in many took 100 steps or fewer)
    total, steps, info = play(env, 3, lambda obs, info: env.action_space.sample())
    result = info["result"]
    assert result is env.result and steps > 100
    assert total == pytest.approx(-result.summary.bsld_mean, rel=1e-12)
    assert abs(info["correction"]) < 1e-9  # every job's value was paid as it ended
    frame = sitesim.to_pandas(result)
    assert len(frame) == result.summary.jobs_total and frame["state"].eq("completed").all()
    write_outputs(tmp_path / "run", result)  # the run folder (the report reads it)
    assert len(read_run(tmp_path / "run").records) == len(result.records)


@pytest.mark.parametrize("reward", sorted(REWARDS))
def test_an_episodes_return_is_its_summary_metric(reward):
    config = SMALL.replace(utility=True) if reward == "utility" else SMALL
    env = SiteEnv(config, k=8, reward=reward)
    total, _, info = play(env, 5, lambda obs, info: env.action_space.sample())
    field, sign = REWARDS[reward]
    value = sign * getattr(info["result"].summary, field)
    assert total == pytest.approx(value, rel=1e-12, abs=1e-12)
    assert abs(info["correction"]) <= 1e-9 * max(1.0, abs(value))  # paid as it accrued


def test_an_open_replays_throughput_is_paid_at_the_end():
    env = SiteEnv(OpenReplay(SMALL), k=8, reward="throughput")
    total, _, info = play(env, 2, lambda obs, info: env.action_space.sample())
    assert total == pytest.approx(info["result"].summary.throughput_per_h, rel=1e-12)
    assert info["correction"] == pytest.approx(total)  # (its window ends with the trace)


def test_the_priority_action_drives_the_same_easy_as_linear_priority():
    env = SiteEnv(SMALL, actions="priority")
    total, steps, info = play(env, 4, lambda obs, info: WEIGHTS)
    ordinary = run_site(SMALL.replace(seed=4), scheduler=LinearPriority(WEIGHTS))
    assert steps > 50 and same_records(info["result"], ordinary)
    assert total == pytest.approx(-ordinary.summary.bsld_mean, rel=1e-12)


def test_the_start_action_drives_the_same_schedule_as_linear_pick():
    policy = LinearPick([*WEIGHTS, -0.2], k=8)
    env = SiteEnv(SMALL, k=8)
    _, _, info = play(env, 4, lambda obs, info: policy.decide(obs, info["action_mask"]))
    ordinary = run_site(SMALL.replace(seed=4), scheduler=LinearPick([*WEIGHTS, -0.2], k=8))
    assert same_records(info["result"], ordinary)


def test_a_seed_gives_the_same_episode_and_reset_draws_the_next():
    env = SiteEnv(TINY, k=4)
    first = env.reset(seed=11)[0]
    env.step(env.action_space.sample())
    assert np.array_equal(env.reset(seed=11)[0], first) and env.episode_seed == 11
    env.reset()
    drawn = env.episode_seed
    assert drawn is not None and drawn != 11
    again = SiteEnv(TINY, k=4)
    again.reset(seed=11)
    again.reset()
    assert again.episode_seed == drawn  # (from the environment's own generator)


def test_vector_environments_run_with_masks():
    envs = gymnasium.vector.SyncVectorEnv([lambda: SiteEnv(TINY, k=4) for _ in range(2)])
    obs, infos = envs.reset(seed=[1, 2])
    assert obs.shape == (2, 4 * len(JOB_FEATURES) + 9)
    done = 0
    for _ in range(400):
        masks = infos["action_mask"]
        actions = [int(np.flatnonzero(mask)[0]) for mask in masks]
        _, _, terminated, _, infos = envs.step(np.array(actions))
        done += int(terminated.sum())
        if "action_mask" not in infos:  # (both reset together: the next step's infos)
            break
    assert done >= 1
    envs.close()


def _tiny_env() -> SiteEnv:
    return SiteEnv(TINY, k=4)


def test_asynchronous_vector_environments_and_gymnasium_make():
    """Each environment in its own process (AsyncVectorEnv); and by the registered id."""
    envs = gymnasium.vector.AsyncVectorEnv([_tiny_env, _tiny_env])
    try:
        obs, infos = envs.reset(seed=[1, 2])
        single, _ = _tiny_env().reset(seed=2)
        assert np.array_equal(obs[1], single)  # (the seed of each)
        ended = 0
        for _ in range(300):
            actions = [int(np.flatnonzero(mask)[0]) for mask in infos["action_mask"]]
            _, _, terminated, _, infos = envs.step(np.array(actions))
            ended += int(terminated.sum())
        assert ended >= 2
    finally:
        envs.close()
    made = gymnasium.make("sitesim.gym.env:sitesim/Site-v0", source=TINY, k=4)
    assert isinstance(made.unwrapped, SiteEnv)
    assert np.array_equal(made.reset(seed=2)[0], single)


def test_a_platform_with_gpus():
    from sitesim.platform import Platform

    gpus = Platform.from_dict(
        {
            "nodes": [{"type": "g", "count": 2, "cores": 16, "gpus": 4}],
            "partitions": [{"name": "all", "nodes": ["g"], "allocation": "shared"}],
        }
    )
    profile_users = SMALL

    def episode(seed: int, scheduler: sitesim.schedulers.Scheduler):  # type: ignore[no-untyped-def]
        from sitesim.runs.build import PreparedRun
        from sitesim.runs.simulate import users_of
        from sitesim.workload.profile import read_profile

        site = sitesim.Site(gpus, scheduler, seed=seed)
        profile, _ = read_profile(profile_users.profile)
        for user in users_of(profile_users.replace(seed=seed), profile):
            site.add_user(user)
        return PreparedRun(site, 4 * 86_400.0, 86_400.0, (0.0, 4 * 86_400.0), lambda r: r)

    env = SiteEnv(episode, k=8)
    free_gpus = env.feature_names.index("machine.free_gpus")
    obs, _ = env.reset(seed=1)
    assert obs[free_gpus] == 1.0  # nothing asks for GPUs: they all stay free
    total, _, info = play(env, 1, lambda obs, info: env.action_space.sample())
    assert info["result"].placement is not None
    assert total == pytest.approx(-info["result"].summary.bsld_mean, rel=1e-12)


def test_open_replay_episodes_replay_the_trace_a_site_level_run_made():
    source = OpenReplay(SMALL)
    env = SiteEnv(source, k=8)
    _, _, info = play(env, 3, lambda obs, info: env.action_space.sample())
    trace = source.trace(3)
    replayed = info["result"]
    assert len(replayed.records) == len(trace)
    assert np.array_equal(replayed.records["submit"], trace.column("submit").astype(float))
    assert math.isnan(replayed.summary.jobs_per_session)  # a replay's jobs have no sessions


# -- bad input -----------------------------------------------------------------------------
def test_an_action_out_of_range_is_refused():
    env = SiteEnv(TINY, k=4)
    env.reset(seed=1)
    for action in (5, -1, 2.5, "1", [1, 2]):
        with pytest.raises(ActionError, match=r"out of range: the actions are 0\.\.3 start"):
            env.step(action)


def test_a_masked_action_is_refused_and_says_why():
    env = SiteEnv(TINY, k=4)
    _, info = env.reset(seed=1)
    masked = np.flatnonzero(info["action_mask"] == 0)
    assert len(masked)
    with pytest.raises(ActionError, match=rf"action {masked[0]} is not allowed now \("):
        env.step(int(masked[0]))
    env.step(int(np.flatnonzero(info["action_mask"])[0]))  # (the episode goes on)


def test_a_priority_action_must_be_weights_in_the_box():
    env = SiteEnv(TINY, actions="priority")
    env.reset(seed=1)
    for action in (np.full(9, 2.0), np.zeros(4), 3):
        with pytest.raises(ActionError, match="9 weights in \\[-1, 1\\]"):
            env.step(action)


def test_k_of_zero_and_other_bad_settings_are_refused():
    with pytest.raises(ConfigError, match=r"k \(the waiting jobs an observation shows\) must be"):
        SiteEnv(TINY, k=0)
    with pytest.raises(ConfigError, match="actions must be one of start, next, priority"):
        SiteEnv(TINY, actions="pick")
    with pytest.raises(ConfigError, match="reward must be one of"):
        SiteEnv(TINY, reward="speed")
    replay = sitesim.ReplayConfig(trace="a.swf")
    with pytest.raises(ConfigError, match="jobs_per_session: a trace replay's jobs belong"):
        SiteEnv(replay, reward="jobs_per_session")
    with pytest.raises(ConfigError, match="episodes come from a SiteConfig"):
        SiteEnv(42)  # type: ignore[arg-type]


def test_a_step_without_an_episode_under_way_is_refused():
    env = SiteEnv(TINY, k=4)
    with pytest.raises(ActionError, match=r"call reset\(\) first"):
        env.step(0)
    play(env, 1, lambda obs, info: env.action_space.sample())
    with pytest.raises(ActionError, match=r"call reset\(\) first"):
        env.step(0)
