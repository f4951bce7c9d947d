"""sitesim.gym without gymnasium: sessions as a scheduler sees them, the observation, the
schedulers a trained linear policy becomes, and the cross-entropy method."""

from __future__ import annotations

import math

import numpy as np
import pytest

import sitesim
from sitesim.cli.main import main
from sitesim.engine.job import Job, JobState
from sitesim.engine.machine import ProcessorResources
from sitesim.errors import ConfigError, SchedulerError
from sitesim.gym.learn import cross_entropy, episode_return
from sitesim.gym.observation import (
    JOB_FEATURES,
    MACHINE_FEATURES,
    SCHEDGYM_CAP,
    Observer,
    count_scale,
    time_scale,
)
from sitesim.gym.policies import ARRIVAL_ORDER, LinearPick, LinearPriority, weights_text
from sitesim.gym.sessions import Sessions
from sitesim.platform import Platform
from sitesim.runs.simulate import run_site, users_of
from sitesim.workload.activity import SESSION_THRESHOLD, session_structure
from sitesim.workload.profile import read_profile

SMALL = sitesim.SiteConfig(users=6, days=4, warmup_days=1, procs=32, seed=2)
TWO_NODES = Platform.from_dict(
    {
        "nodes": [{"type": "n", "count": 2, "cores": 16}],
        "partitions": [{"name": "all", "nodes": ["n"], "allocation": "shared"}],
    }
)


def same_records(a: sitesim.SiteResult, b: sitesim.SiteResult) -> bool:
    return len(a.records) == len(b.records) and all(
        np.array_equal(a.records[name], b.records[name], equal_nan=True)
        for name in a.records.dtype.names
    )


class _Machine:
    procs = 128
    platform = None


def _observer(k: int = 4, **options: object) -> Observer:
    observer = Observer(k, **options)  # type: ignore[arg-type]
    observer.on_site(_Machine())
    return observer


# -- sessions as a scheduler sees them ---------------------------------------------------------
def test_sessions_follow_the_definitions_of_trace_analysis():
    # one user: (submit, end) of each job, in submit order
    times = [(0, 50), (10, 60), (100, 200), (250, 300), (300 + SESSION_THRESHOLD + 1, 2000),
             (2100, 2200), (2150, 2300)]  # fmt: skip
    jobs = [Job(1, 1.0, 1.0, user=7, id=i + 1, submit=s) for i, (s, _) in enumerate(times)]
    events = sorted([(s, 1, j) for j, (s, _) in zip(jobs, times, strict=True)]
                    + [(e, 0, j) for j, (_, e) in zip(jobs, times, strict=True)],
                    key=lambda x: (x[0], x[1]))  # fmt: skip
    sessions, seen = Sessions(), {}
    for at, kind, job in events:
        if kind:
            seen[job.id] = sessions.submit(job, at)
        else:
            sessions.ended(job, at)
    submit = np.array([s for s, _ in times], float)
    end = np.array([e for _, e in times], float)
    _, session, batch = session_structure(
        np.full(len(times), 7), submit, end, "last", SESSION_THRESHOLD
    )
    starts = [seen[j.id][0] for j in jobs]
    batches = [seen[j.id][1] for j in jobs]
    # the same partition into sessions and batches as the offline definitions
    assert np.array_equal(np.unique(starts, return_inverse=True)[1], session)
    assert np.array_equal(np.unique(batches, return_inverse=True)[1], batch)
    assert starts == [0, 0, 0, 0, 300 + SESSION_THRESHOLD + 1] + [300 + SESSION_THRESHOLD + 1] * 2
    # the last batch (jobs 6 and 7, 7 submitted before 6 ended): both counted, none open
    assert sessions.table()[batches[-1]].tolist() == [2.0, 0.0]


# -- the observation ---------------------------------------------------------------------------
def test_an_observation_shows_the_first_k_jobs_and_the_machine():
    observer = _observer(k=3)
    queue = [
        Job(64, 10.0, 3600.0, user=1, id=1, submit=0.0),
        Job(8, 10.0, 60.0, user=1, id=2, submit=30.0),  # the same batch as job 1
    ]
    for job in queue:
        observer.submit(job, job.submit)
    running = [(600.0 + 120.0, 9, 32), (120.0 + 7200.0, 8, 16)]  # (end, id, cores)
    resources = ProcessorResources.of(120.0, 16, running)
    obs = observer.observe(120.0, queue, resources, ())
    width = len(JOB_FEATURES)
    rows = obs[: 3 * width].reshape(3, width)
    row = dict(zip(JOB_FEATURES, rows[1].tolist(), strict=True))
    assert row["present"] == 1.0 and row["size"] == pytest.approx(8 / 128)
    assert row["fits"] == 1.0 and rows[0, JOB_FEATURES.index("fits")] == 0.0  # 64 > 16 free
    assert row["estimate"] == pytest.approx(float(time_scale(np.array(60.0))))
    assert row["wait"] == pytest.approx(float(time_scale(np.array(90.0))))
    assert row["session_time"] == pytest.approx(float(time_scale(np.array(120.0))))
    assert row["batch_jobs"] == pytest.approx(float(count_scale(np.array(2.0))))
    assert row["batch_open"] == pytest.approx(float(count_scale(np.array(2.0))))
    assert not rows[2].any()  # an empty row
    machine = dict(zip(MACHINE_FEATURES, obs[3 * width :].tolist(), strict=True))
    assert machine["free_cores"] == pytest.approx(16 / 128)
    assert machine["released_15m"] == pytest.approx(32 / 128)  # the job ending in 10 min
    assert machine["released_1h"] == pytest.approx(32 / 128)
    assert machine["released_4h"] == pytest.approx(48 / 128)  # and the one in 2 h
    assert machine["day_cos"] == pytest.approx(math.cos(2 * math.pi * 120 / 86_400), abs=1e-6)
    low, high = observer.bounds()
    assert np.all(low <= obs) and np.all(obs <= high) and obs.dtype == np.float32
    assert len(observer.names) == len(obs) and observer.names[width] == "job1.present"


def test_the_schedgym_layout_is_schedgyms():
    observer = _observer(k=3, layout="schedgym", max_runtime=7200.0, max_user=10)
    job = Job(32, 10.0, 3600.0, user=5, id=1, submit=0.0)
    observer.submit(job, 0.0)
    obs = observer.observe(6 * 3600.0, [job], ProcessorResources.of(6 * 3600.0, 64, []), ())
    rows = obs.reshape(3, 8)
    # wait / 12 h, estimate / max runtime, size / procs, memory 1, user / max user, group 1,
    # executable 1, can schedule now (1 - 1e-5)
    assert rows[0].tolist() == pytest.approx([0.5, 0.5, 0.25, 1, 0.5, 1, 1, SCHEDGYM_CAP])
    assert rows[1].tolist() == [0, 1, 1, 1, 1, 1, 1, 0] == rows[2].tolist()


@pytest.mark.parametrize("k", [0, -1, 1.5, True])
def test_k_must_be_a_whole_number_of_jobs(k):
    with pytest.raises(ConfigError, match=r"k .* must be an integer >= 1"):
        Observer(k)


# -- the schedulers a trained policy becomes ---------------------------------------------------
def test_the_linear_priority_of_the_wait_alone_is_easy():
    easy = sitesim.run(SMALL.replace(scheduler="EASY"))
    linear = run_site(SMALL, scheduler=LinearPriority())
    assert len(easy.records) > 50 and same_records(easy, linear)


def test_on_a_platform_too():
    profile, _ = read_profile(SMALL.profile)
    results = []
    for scheduler in (sitesim.schedulers.EASY(), LinearPriority()):
        site = sitesim.Site(TWO_NODES, scheduler)
        for user in users_of(SMALL, profile):
            site.add_user(user)
        results.append(site.run(until=SMALL.days * 86_400.0))
    easy, linear = results
    assert easy.placement is not None and len(easy.records) > 50
    assert same_records(easy, linear)


def test_a_trained_policy_runs_by_its_import_path(tmp_path, capsys):
    weights = weights_text(np.linspace(-0.5, 0.5, len(JOB_FEATURES)))
    path = "sitesim.gym.policies:LinearPriority"
    result = sitesim.simulate(6, path, weights=weights, procs=32, days=4, warmup_days=1)
    assert result.config is not None and result.config.scheduler_params == {"weights": weights}
    assert same_records(result, sitesim.run(result.config))  # the configuration reruns it
    args = ["run", "--users", "6", "--days", "4", "--warmup", "1", "--procs", "32", "-s", path]
    assert main([*args, "--param", f"weights={weights}", "--out", str(tmp_path / "r")]) == 0
    assert "LINEAR" in capsys.readouterr().out


def test_linear_pick_starts_the_best_scored_job_that_fits():
    weights = np.zeros(len(JOB_FEATURES) + 1)
    weights[JOB_FEATURES.index("size")] = -1.0  # the narrowest first
    weights[-1] = -10.0  # never wait
    result = run_site(SMALL, scheduler=LinearPick(weights, k=8))
    assert (result.records["state"] == JobState.COMPLETED).sum() > 50
    assert result.label.startswith("LINEAR-PICK weights=")


def test_a_policy_that_chooses_a_masked_action_is_stopped():
    class Bad(LinearPick):
        def decide(self, obs: np.ndarray, mask: np.ndarray) -> int:
            return int(np.flatnonzero(mask == 0)[0]) if (mask == 0).any() else 99

    with pytest.raises(SchedulerError, match=r"chose action \d+, which is not allowed"):
        run_site(SMALL, scheduler=Bad())


@pytest.mark.parametrize(
    ("weights", "problem"),
    [("1,2", "must be 9 finite numbers"), ("a,b", "separated by commas"),
     ([0.0] * 8 + [math.nan], "must be 9 finite numbers")],
)  # fmt: skip
def test_bad_weights_are_refused(weights, problem):
    with pytest.raises(ConfigError, match=problem):
        LinearPriority(weights)


def test_weights_round_trip_as_text():
    weights = np.array([0.1, -1 / 3, 2e-17, 0, 1, -1, 0.5, 0.25, 7.0])
    assert np.array_equal(LinearPriority(weights_text(weights)).weights, weights)
    assert LinearPriority().weights.tolist() == list(ARRIVAL_ORDER)


# -- the cross-entropy method ------------------------------------------------------------------
def test_the_cross_entropy_method_finds_the_optimum_of_a_smooth_score():
    target = np.array([0.3, -0.6, 0.9])

    def score(candidates: list[np.ndarray], iteration: int) -> list[float]:
        return [-float(np.sum((c - target) ** 2)) for c in candidates]

    found = cross_entropy(score, [0, 0, 0], iterations=25, population=30, elite=6, seed=3)
    assert np.allclose(found.weights, target, atol=0.05)
    again = cross_entropy(score, [0, 0, 0], iterations=25, population=30, elite=6, seed=3)
    assert np.array_equal(found.weights, again.weights)  # seeded
    assert found.history[-1]["mean_score"] > found.history[0]["mean_score"]


def test_an_episode_return_is_the_summary_metric():
    weights = ARRIVAL_ORDER
    easy = sitesim.run(SMALL.replace(scheduler="EASY"))
    assert episode_return(weights, SMALL, SMALL.seed, "bsld") == -easy.summary.bsld_mean
    assert episode_return(weights, SMALL, SMALL.seed, "throughput") == (
        easy.summary.throughput_per_h
    )
