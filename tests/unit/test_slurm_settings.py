"""Where the SLURM scheduler's settings come from (issue 32): a setting given explicitly wins
over the ``conf`` file even when it equals Slurm's default, and the file wins over the
defaults, whichever way the settings arrive (Python, a run configuration and its JSON, a sweep
file); and the bounds of the priority weights."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sitesim.errors import ConfigError
from sitesim.runs.config import ReplayConfig, RunConfig
from sitesim.schedulers import SLURM, create
from sitesim.slurm.multifactor import WEIGHT_MAX, Multifactor, SlurmSettings
from sitesim.sweeps.sweep import SweepPlan

DATA = Path(__file__).parents[1] / "data" / "slurm"
#: bf_window=2880 (minutes) and PriorityWeightFairshare=10000.
CONF = str(DATA / "slurm.conf")
#: Both at Slurm's defaults: an "off" arm against the file's values.
GIVEN = {"bf_window": 1440, "PriorityWeightFairshare": 0}
DEFAULTS = (1440 * 60.0, 0)
OF_THE_FILE = (2880 * 60.0, 10_000)

pytestmark = pytest.mark.filterwarnings("ignore::sitesim.schedulers.slurm.SlurmConfigWarning")


def in_force(scheduler: object) -> tuple[float, int]:
    assert isinstance(scheduler, SLURM)
    return scheduler.settings.bf_window, scheduler.settings.PriorityWeightFairshare


def test_the_file_wins_over_slurms_defaults() -> None:
    assert in_force(create("SLURM", conf=CONF)) == OF_THE_FILE


def test_a_setting_given_in_python_wins_over_the_file_and_survives_params() -> None:
    slurm = create("SLURM", conf=CONF, **GIVEN)
    assert in_force(slurm) == DEFAULTS
    assert slurm.params() == {"conf": CONF, "PriorityWeightFairshare": 0, "bf_window": 1440}
    assert in_force(create("SLURM", **slurm.params())) == DEFAULTS


@pytest.mark.parametrize("given", [GIVEN, {"bf_window": "1440", "PriorityWeightFairshare": "0"}])
def test_a_run_configuration_and_its_json_keep_a_setting_equal_to_the_default(
    given: dict[str, object],
) -> None:
    config = ReplayConfig(
        trace="t.swf", scheduler="SLURM", scheduler_params={"conf": CONF, **given}
    )
    assert in_force(config.make_scheduler()) == DEFAULTS
    stored = json.loads(json.dumps(config.to_dict()))  # (what results.json holds)
    assert stored["scheduler_params"]["bf_window"] == 1440
    assert in_force(RunConfig.from_dict(stored).make_scheduler()) == DEFAULTS


def test_a_sweep_of_a_setting_keeps_its_default_level(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(
        '[base]\nmode = "replay"\ntrace = "t.swf"\nscheduler = "SLURM"\n'
        f"scheduler_params = {{ conf = {json.dumps(CONF)} }}\n\n"
        "[factors]\nbf_window = [1440, 2880]\nPriorityWeightFairshare = [0, 10000]\n"
    )
    runs = SweepPlan.load(sweep).runs()
    seen = set()
    for run in runs:
        levels = (run.factors["bf_window"] * 60.0, run.factors["PriorityWeightFairshare"])
        assert in_force(run.config.make_scheduler()) == levels
        again = RunConfig.from_dict(json.loads(json.dumps(run.config.to_dict())))
        assert in_force(again.make_scheduler()) == levels  # (as a worker process builds it)
        seen.add(levels)
    assert DEFAULTS in seen and OF_THE_FILE in seen


# -- the weights: 32-bit unsigned, as Slurm's --------------------------------------------------
@pytest.mark.parametrize(
    "key",
    ["PriorityWeightAge", "PriorityWeightFairshare", "PriorityWeightJobSize",
     "PriorityWeightPartition", "PriorityWeightQOS"],
)  # fmt: skip
def test_a_weight_beyond_32_bits_is_refused_naming_the_bound(key: str) -> None:
    assert SlurmSettings.build({key: WEIGHT_MAX}).changed() == {key: WEIGHT_MAX}
    with pytest.raises(ConfigError) as err:
        SlurmSettings.build({key: "99999999999999999999999"})
    message = str(err.value)
    assert message.startswith(f"SLURM: {key}: ")
    assert "4294967295" in message and "32-bit unsigned" in message


def test_a_tres_weight_beyond_32_bits_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"PriorityWeightTRES: .*4294967295"):
        SlurmSettings.build({"PriorityWeightTRES": "CPU=1,GRES/gpu=4294967296"})


def test_the_priority_is_capped_at_32_bits_as_slurms() -> None:
    weights = {f"PriorityWeight{k}": WEIGHT_MAX for k in ("Age", "Fairshare", "JobSize")}
    mf = Multifactor(SlurmSettings.build(weights), nodes=4, cores=64)
    static = mf.static_part(*mf.static_factors(4, 64, 0, 0, 3600, 0, "normal"))
    assert mf.priority(static, 30 * 86_400.0, 1.0) == WEIGHT_MAX
    assert mf.priority(0.0, 0.0, 0.5) == WEIGHT_MAX // 2


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"time_zero": "noon"}, r"time_zero: must be a Unix time in seconds"),
        ({"time_zero": float("nan")}, r"time_zero: must be a finite Unix time"),
        ({"batch_sched_delay": -2}, r"batch_sched_delay: must be a number of seconds >= 0"),
    ],
)
def test_a_bad_clock_or_batch_delay_is_refused_in_one_line(given: dict, said: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(ConfigError, match=said):
        SLURM(**given)


def test_batch_sched_delay_is_read_from_scheduler_parameters(tmp_path: Path) -> None:
    conf = tmp_path / "slurm.conf"
    conf.write_text(
        "SchedulerType=sched/backfill\nSchedulerParameters=bf_interval=30,batch_sched_delay=5\n"
        "NodeName=n1 CPUs=4\nPartitionName=batch Nodes=n1 Default=YES\n"
    )
    assert SLURM(conf=str(conf)).settings.batch_sched_delay == 5.0
    assert SLURM().settings.batch_sched_delay == 3.0  # (Slurm's default)
