"""The synthetic workload of experiment 5: hyperexponential service times, λ from the offered
load, classes and sizes, site-level runs, configuration, sweeps and the command line."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

import sitesim
from sitesim.cli.main import main
from sitesim.errors import ConfigError
from sitesim.models.synthetic import (
    CONFIGURATIONS,
    MINUTE,
    SyntheticUser,
    SyntheticWorkload,
)
from sitesim.models.workpool import EstimateModel
from sitesim.output import to_json
from sitesim.runs.config import RunConfig, SiteConfig
from sitesim.workload.distributions import Hyperexponential2

SPEC_TABLE = {  # experiments.md §5: (mean service minutes, share) of classes 1, 2, 3
    1: ((50, 0.7), (100, 0.2), (200, 0.1)),
    2: ((100, 0.7), (100, 0.2), (100, 0.1)),
    3: ((200, 0.7), (100, 0.2), (50, 0.1)),
    4: ((50, 0.33), (100, 0.33), (200, 0.33)),
    5: ((50, 0.9), (100, 0.09), (200, 0.01)),
}
SMALL = {"model": "synthetic", "users": 10, "days": 20, "warmup_days": 2}


# -- the hyperexponential distribution ----------------------------------------------------------
def test_hyperexponential_has_balanced_means():
    h = Hyperexponential2(50, 4)
    p1 = (1 + math.sqrt(15 / 17)) / 2
    assert h.p1 == pytest.approx(p1, rel=1e-15)
    assert h.p1 / h.rate1 == pytest.approx(25) and (1 - h.p1) / h.rate2 == pytest.approx(25)
    assert (h.mean, h.cv, h.variance) == (50.0, 4.0, pytest.approx(200.0**2))
    assert repr(h) == "Hyperexponential2(mean=50.0, cv=4.0)"
    exponential = Hyperexponential2(2, 1)
    assert exponential.p1 == 0.5 and exponential.rate1 == exponential.rate2 == 0.5
    assert exponential.cdf([0, 2]) == pytest.approx([0, 1 - math.exp(-1)])


@pytest.mark.parametrize("cv", [4.0, 2.5, 1.8])
def test_hyperexponential_draws_have_the_requested_mean_and_cv(cv):
    """n = 4·10⁶ draws. The standard error of the sample mean is c/√n of the mean (0.2 % at
    c = 4); that of the sample CV about ½ √((κ − 1)/n) of it, κ the kurtosis (198, 80 and 43
    for c = 4, 2.5, 1.8: 0.35 %, 0.22 %, 0.16 %). The tolerances, 1 % on the mean and 2 % on
    the CV, are at least 5 standard errors; the seed is fixed, so the test is deterministic."""
    h = Hyperexponential2(3000.0, cv)
    x = h.sample(np.random.default_rng(20240601), 4_000_000)
    assert x.mean() == pytest.approx(3000.0, rel=0.01)
    assert x.std() / x.mean() == pytest.approx(cv, rel=0.02)
    assert stats.kstest(x[:200_000], h.cdf).statistic < 0.005  # the shape, not only two moments
    assert (x >= 0).all() and np.isfinite(x).all()


def test_hyperexponential_uses_one_uniform_per_draw():
    h = Hyperexponential2(10.0, 2.5)
    rng = np.random.default_rng(5)
    split = np.concatenate([h.sample(rng, 7), h.sample(rng, 13)])
    assert np.array_equal(split, h.sample(np.random.default_rng(5), 20))
    edges = h.from_uniform(np.array([0.0, h.p1, np.nextafter(h.p1, 0), np.nextafter(1, 0)]))
    assert edges[0] == edges[1] == 0.0 and np.isfinite(edges).all()


@pytest.mark.parametrize(
    ("mean", "cv", "message"),
    [
        (50, 0.5, "hyperexponential CV must be >= 1"),
        (0, 2, "hyperexponential mean must be > 0, got 0.0"),
        (-1, 2, "hyperexponential mean must be > 0, got -1.0"),
        (float("nan"), 2, "hyperexponential mean must be finite"),
        (50, float("inf"), "hyperexponential CV must be finite"),
        ("50", 2, "hyperexponential mean must be a number, got '50'"),
        (50, True, "hyperexponential CV must be a number, got True"),
    ],
)
def test_hyperexponential_rejects_bad_parameters(mean, cv, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        Hyperexponential2(mean, cv)


# -- the workload ----------------------------------------------------------------------------
def test_the_configurations_are_the_specified_ones():
    assert CONFIGURATIONS == SPEC_TABLE
    for number, rows in SPEC_TABLE.items():
        classes = SyntheticWorkload(number).classes
        assert [(c.low, c.high) for c in classes] == [(1, 16), (17, 32), (33, 64)]
        assert [c.service.cv for c in classes] == [4.0, 2.5, 1.8]
        assert [c.service.mean for c in classes] == [mean * MINUTE for mean, _ in rows]
        assert sum(c.share for c in classes) == pytest.approx(1.0)
    assert [c.share for c in SyntheticWorkload(4).classes] == pytest.approx([1 / 3] * 3)


def test_arrival_rate_offers_the_load():
    # configuration 1: E[size · service] = 0.7·8.5·50 + 0.2·24.5·100 + 0.1·48.5·200 = 1757.5
    workload = SyntheticWorkload(1, 0.5)
    assert workload.mean_work == pytest.approx(1757.5 * MINUTE)
    assert workload.arrival_rate(128) == pytest.approx(0.5 * 128 / (1757.5 * MINUTE))
    assert SyntheticWorkload(1, 0.9).arrival_rate(256) == pytest.approx(
        4 * workload.arrival_rate(128) * 0.9
    )


def generated(config: int, load: float, days: float, users: int = 10, seed: int = 3):
    """The jobs ``users`` synthetic users submit in ``days`` days: submit times, users, sizes,
    runtimes and estimates, concatenated over the users."""
    workload, horizon = SyntheticWorkload(config, load), days * 86_400
    columns: list[list[np.ndarray]] = [[], [], [], [], []]
    for uid in range(1, users + 1):
        user = SyntheticUser(uid, workload, 128, seed, users=users)
        n = int(2 * user.rate * horizon) + 100  # enough to pass the horizon
        gaps, sizes, runtimes, estimates = user.draw(n)
        submit = np.cumsum(gaps)
        assert submit[-1] >= horizon
        keep = submit < horizon
        for column, values in zip(
            columns, (submit, np.full(n, uid), sizes, runtimes, estimates), strict=True
        ):
            column.append(values[keep])
    return [np.concatenate(column) for column in columns]


@pytest.mark.parametrize(("config", "load"), [(1, 0.5), (3, 0.9), (4, 0.7), (5, 0.1)])
def test_generated_workload_offers_the_target_load_in_its_classes(config, load):
    """Over a horizon of about two million jobs the offered load Σ size · runtime / (procs ·
    horizon) is within 2 % of the target: its relative standard error is √((1 + c_w²) / N),
    c_w the CV of a job's work (size · runtime; 1 + c_w² is 9 to 24 here), so at most 0.35 %."""
    days = 2e6 / (SyntheticWorkload(config, load).arrival_rate(128) * 86_400)
    submit, users, sizes, runtimes, estimates = generated(config, load, days)
    assert (np.diff(np.sort(submit)) >= 0).all() and (submit == np.rint(submit)).all()
    offered = float(np.sum(sizes * runtimes)) / (128 * days * 86_400)
    assert offered == pytest.approx(load, rel=0.02)
    assert np.array_equal(estimates, np.maximum(runtimes, 1))
    assert set(np.unique(users)) == set(range(1, 11))
    assert np.bincount(users)[1:] / len(users) == pytest.approx([0.1] * 10, abs=0.005)
    for c in SyntheticWorkload(config, load).classes:
        mine = (sizes >= c.low) & (sizes <= c.high)
        n = int(mine.sum())
        assert n / len(sizes) == pytest.approx(c.share, abs=0.005)
        counts = np.bincount(sizes[mine] - c.low, minlength=c.high - c.low + 1)
        assert len(counts) == c.high - c.low + 1 and counts.min() > 0  # every size, no other
        assert stats.chisquare(counts).pvalue > 1e-4  # uniform within the class
        # the class's mean runtime within 5 standard errors (c·mean/√n)
        error = 5 * c.service.cv * c.service.mean / math.sqrt(n)
        assert abs(runtimes[mine].mean() - c.service.mean) < error
    assert sizes.min() >= 1 and sizes.max() <= 64


def test_draws_do_not_depend_on_how_they_are_split():
    workload = SyntheticWorkload(2, 0.6)
    whole = SyntheticUser(4, workload, 128, 9, users=10).draw(300)
    user = SyntheticUser(4, workload, 128, 9, users=10)
    first, second = user.draw(100), user.draw(200)
    for a, b, c in zip(whole, first, second, strict=True):
        assert np.array_equal(a, np.concatenate([b, c]))
    # at another load only the gaps change: the k-th job has the same shape
    other = SyntheticUser(4, SyntheticWorkload(2, 0.3), 128, 9, users=10).draw(300)
    assert all(np.array_equal(a, b) for a, b in zip(whole[1:], other[1:], strict=True))
    assert other[0].sum() == pytest.approx(2 * whole[0].sum(), rel=1e-3)


def test_estimates_exact_or_a_factor():
    workload = SyntheticWorkload(1, 0.5)
    factor = SyntheticUser(1, workload, 128, 1, estimates=EstimateModel("factor", 2.0))
    _, _, runtimes, estimates = factor.draw(1000)
    assert np.array_equal(estimates, np.maximum(np.rint(2 * runtimes), 1))
    with pytest.raises(ConfigError, match="estimates are exact or factor:F"):
        SyntheticUser(1, workload, 128, 1, estimates=EstimateModel("ratio"))
    with pytest.raises(ConfigError, match="needs at least 64 processors"):
        SyntheticUser(1, workload, 32, 1)


# -- site-level runs and configurations --------------------------------------------------------
def test_a_site_level_run_is_reproducible_and_the_same_under_every_scheduler():
    config = SiteConfig(**SMALL, synthetic_config=2, load=0.6, seed=4)
    first, again = sitesim.run(config), sitesim.run(config)
    assert first.records.tobytes() == again.records.tobytes()
    assert first.summary == again.summary and first.config == again.config == config.replace(
        profile_sha256=first.config.profile_sha256
    )
    records = first.records
    assert len(records) > 500 and not first.rejected
    assert set(np.unique(records["user"])) == set(range(1, 11))
    assert (records["preceding"] == -1).all() and (records["size"] <= 64).all()
    assert (records["submit"] < 20 * 86_400).all()
    fcfs = sitesim.run(config.replace(scheduler="FCFS")).records
    for column in ("user", "submit", "size", "runtime", "estimate"):
        assert np.array_equal(fcfs[column], records[column])  # common random numbers
    assert not np.array_equal(fcfs["start"], records["start"])


def test_simulate_takes_the_synthetic_model_by_name():
    result = sitesim.simulate(10, "EASY", model="synthetic", days=5, warmup_days=1)
    assert result.config is not None and result.config.model == "synthetic"
    assert (result.config.synthetic_config, result.config.load) == (1, 0.5)
    assert result.summary.jobs > 0 and math.isnan(result.summary.jobs_per_session)


def test_a_synthetic_configuration_round_trips_through_json():
    config = SiteConfig(**SMALL, synthetic_config=5, load=0.9, estimates="factor:2")
    data = json.loads(to_json(config.to_dict()))
    assert (data["model"], data["synthetic_config"], data["load"]) == ("synthetic", 5, 0.9)
    assert RunConfig.from_dict(data) == config
    assert SiteConfig.model_settings(config.user_model())["load"] == 0.9


def test_other_runs_store_the_synthetic_settings_only_when_set():
    plain = SiteConfig().to_dict()
    assert "synthetic_config" not in plain and "load" not in plain
    assert RunConfig.from_dict(plain) == SiteConfig()
    odd = SiteConfig(model="static", load=0.8)
    assert odd.to_dict()["load"] == 0.8 and RunConfig.from_dict(odd.to_dict()) == odd


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"synthetic_config": 0}, "synthetic_config must be one of 1, 2, 3, 4, 5, got 0"),
        ({"synthetic_config": 6}, "synthetic_config must be one of 1, 2, 3, 4, 5, got 6"),
        ({"synthetic_config": True}, "synthetic_config must be one of 1, 2, 3, 4, 5, got True"),
        ({"load": 0}, "load must be in (0, 1.5], got 0.0"),
        ({"load": 1.6}, "load must be in (0, 1.5], got 1.6"),
        ({"load": "high"}, "load must be a number, got 'high'"),
        ({"procs": 32}, "procs must be >= 64 with the synthetic model"),
        ({"estimates": "ratio"}, "the synthetic model does not take estimates = ratio"),
        ({"correlated": True}, "the synthetic model does not take correlated = true"),
        ({"runtime_scale": 2}, "the synthetic model does not take a runtime_scale other than 1"),
        ({"max_batch_width": 3}, "the synthetic model does not take a max_batch_width"),
        ({"utility": True}, "the synthetic model does not take utility = true"),
    ],
)
def test_synthetic_settings_are_checked(settings, message):
    with pytest.raises(ConfigError) as err:
        SiteConfig(**{**SMALL, **settings})
    assert message in str(err.value)


def test_a_sweep_varies_load_and_configuration():
    base = SiteConfig(**{**SMALL, "days": 10})
    result = sitesim.sweep(
        base, {"synthetic_config": [1, 5], "load": [0.2, 0.8]}, executor="serial"
    )
    assert not result.failed
    assert [(r["synthetic_config"], r["load"]) for r in result.runs] == [
        (1, 0.2), (1, 0.8), (5, 0.2), (5, 0.8),
    ]  # fmt: skip
    assert [(r["synthetic_config"], r["load"], r["n"]) for r in result.summary] == [
        (1, 0.2, 1), (1, 0.8, 1), (5, 0.2, 1), (5, 0.8, 1),
    ]  # fmt: skip
    for low, high in (result.runs[0:2], result.runs[2:4]):
        assert low["offered_load"] < high["offered_load"]  # the measured one, in the summary


# -- the command line --------------------------------------------------------------------------
def test_run_synthetic_from_the_command_line(tmp_path, capsys):
    out = tmp_path / "out"
    args = ["run", "--model", "synthetic", "--synthetic-config", "2", "--load", "0.6"]
    assert main([*args, "--days", "10", "--warmup", "1", "-s", "FCFS,EASY", "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:2] == ["Users", "Utilization"]
    assert [line.split()[0] for line in lines[1:3]] == ["10", "10"]  # 10 users by default
    stored = json.loads((out / "users-0010-EASY" / "results.json").read_text())["config"]
    assert (stored["model"], stored["synthetic_config"], stored["load"]) == (
        "synthetic",
        2,
        0.6,
    )
    assert main(["rerun", str(out / "users-0010-EASY" / "results.json")]) == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--load", "0.5"], "--synthetic-config and --load apply to --model synthetic only"),
        (["--model", "synthetic", "--load", "2"], "load must be in (0, 1.5], got 2.0"),
        (["--model", "synthetic", "--procs", "32"], "procs must be >= 64"),
    ],
)
def test_bad_synthetic_options_give_one_clear_line(args, message, capsys):
    assert main(["run", *args, "--days", "1", "--warmup", "0"]) == 2
    assert message in capsys.readouterr().err
